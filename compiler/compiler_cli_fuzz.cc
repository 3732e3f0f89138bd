// libFuzzer target for the command-line front end: the input is split into arguments at
// newlines and run through RunCompilerCli with --emit=plan (parsing, validation and
// lowering; no NVRTC). Any crash is a finding; so is an exit code other than 0 or 2, or a
// rejection that is not exactly one line.
//
// With clang:  bazel build --config=... //compiler:compiler_cli_fuzz (see BUILD) and run
//   bazel-bin/compiler/compiler_cli_fuzz -max_total_time=60
// With gcc the same entry point runs in compiler_cli_fuzz_test over a mutated corpus.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "compiler/compiler_cli.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> args = absl::StrSplit(text, '\n', absl::SkipEmpty());
  if (args.size() > 32) return 0;
  bool emit = false;
  for (std::string& arg : args) {
    if (arg.rfind("--emit", 0) == 0) {
      arg = "--emit=plan";  // Keep NVRTC out of the loop.
      emit = true;
    }
  }
  if (!emit) args.push_back("--emit=plan");
  std::ostringstream out, err;
  int code = tiletune::RunCompilerCli(args, out, err);
  if (code != 0 && code != 2) std::abort();
  if (code == 2) {
    std::string message = err.str();
    if (message.rfind("compiler: ", 0) != 0) std::abort();
    if (message.find('\n') != message.size() - 1) std::abort();
  }
  return 0;
}

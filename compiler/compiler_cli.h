// The `//compiler` command line: any registered tile operator's problem + hints + target
// -> plan, CUDA source or PTX.
//
//   bazel run //compiler -- --op=copy --dtype=f16 --shape=8192,8192 --tile=128,128
//       --target=sm_90a --prefer_instruction=tma --eviction_policy=evict_first --emit=plan
//   bazel run //compiler -- --op=im2col --dtype=f16 --shape=64,56,56,64 --kernel=3 --stride=1
//       --dilation=1 --pad=1 --tile=128,64 --target=sm_90a --emit=plan
//
// The common flags are read here; each operator names and reads its own (its
// definition's flags()), with the parser every tool shares (compiler/base/command_line.h):
// --name=value or --name value. Bad flags or values print one line naming the value and
// what is accepted, and return exit code 2.
#ifndef COMPILER_COMPILER_CLI_H_
#define COMPILER_COMPILER_CLI_H_

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/hints.h"
#include "compiler/lower/lowered_kernel.h"
#include "compiler/ops/registry.h"

namespace tiletune {

// Parses the arguments against the common flags and every operator's of `ops` (a bare
// boolean --name means "true"); {"help": "true"} or {"version": "true"} when asked for.
// InvalidArgument for anything else, naming the argument.
absl::StatusOr<std::map<std::string, std::string>> ParseFlags(const std::vector<std::string>& args,
                                                              const TileOpRegistry& ops);

// --coalesced_width, --disable_tma, --eviction_policy, --prefer_instruction, --loop_layout,
// --annotations.
absl::StatusOr<Hints> HintsFromFlags(const std::map<std::string, std::string>& flags);

// --tile, --threads, --stages, --through_shared, --ctas_per_sm.
absl::StatusOr<LaunchParams> LaunchFromFlags(const std::map<std::string, std::string>& flags);

// Runs the command over the built-in operators; returns the process exit code (0 ok, 2
// bad input, 1 other failure).
int RunCompilerCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace tiletune

#endif  // COMPILER_COMPILER_CLI_H_

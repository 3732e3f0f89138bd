// libFuzzer target for the problem-spec parser (`copy:f16:src=64x64[0:8,0:8]`), the text
// every `--problems` list and `--problem` flag goes through. The input is one spec.
//
// Never a crash; a rejection is one line that names the problem; an accepted spec is a
// valid op whose database problem reads back as an op of the same cache key. A
// tt_fuzz_binary: .ci/fuzz.sh runs it with libFuzzer in CI from fuzz_corpus/;
// spec_fuzz_test replays the corpus and mutations of it in every `bazel test`.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/ops/registry.h"

namespace {

void Check(bool condition) {
  if (!condition) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;  // Specs are short; the parser's cost is linear.
  const std::string spec(reinterpret_cast<const char*>(data), size);
  const tiletune::TileOpRegistry& ops = tiletune::BuiltinTileOps();
  absl::StatusOr<std::unique_ptr<tiletune::TileOp>> op = ops.ParseSpec(spec);
  if (!op.ok()) {
    const std::string message(op.status().message());
    Check(absl::StartsWith(message, "problem '"));
    Check(message.find('\n') == std::string::npos || spec.find('\n') != std::string::npos);
    Check(message.size() < 2000);
    return 0;
  }
  absl::StatusOr<const tiletune::TileOpDefinition*> definition = ops.For(**op);
  Check(definition.ok());
  Check((*definition)->Validate(**op).ok());
  Check(!(*definition)->Describe(**op).empty());
  absl::StatusOr<tiletune::tuning::Problem> problem = (*definition)->ToProblem(**op);
  Check(problem.ok());
  absl::StatusOr<std::unique_ptr<tiletune::TileOp>> back = ops.FromProblem(*problem);
  Check(back.ok());
  std::string key, back_key;
  (*definition)->AppendKey(**op, key);
  (*definition)->AppendKey(**back, back_key);
  Check(key == back_key);
  return 0;
}

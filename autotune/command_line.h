// autotune's flags live in absl flags (read with absl::GetFlag where they are used); this
// parses a command line with tiletune's one parser (compiler/base/command_line.h) and stores
// each given value in the absl flag of that name, which must exist for every spec.
//
//   const std::vector<FlagSpec> specs = {{"samples", FlagType::kInt, "N: samples", 0, 1, 1000}};
//   absl::StatusOr<CommandLine> line = ParseAutotuneFlags(args, specs);
//   if (!line.ok()) { fprintf(stderr, "autotune: %s\n", ...); return 2; }
//   if (line->help()) { puts(usage); return 0; }
#ifndef AUTOTUNE_COMMAND_LINE_H_
#define AUTOTUNE_COMMAND_LINE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/base/command_line.h"

namespace tiletune {
namespace autotune {

// ParseCommandLine(args, specs, max_positional), then each given flag's value stored in its
// absl flag. InvalidArgument as ParseCommandLine's, or naming a value the absl flag refuses.
absl::StatusOr<CommandLine> ParseAutotuneFlags(const std::vector<std::string>& args,
                                               absl::Span<const FlagSpec> specs,
                                               int max_positional = 0);

}  // namespace autotune
}  // namespace tiletune

#endif  // AUTOTUNE_COMMAND_LINE_H_

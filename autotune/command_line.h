// A strict command-line front for absl flags: every usage error is one line and exit code
// 2 (absl's own parser exits 1 on a bad flag and accepts stray arguments), numbers are
// range-checked, a flag given twice is an error, --help is the caller's usage text with
// internal flags left out, and long values are cut when echoed.
//
//   const std::vector<FlagSpec> specs = {{"samples", "N: samples per variant", 1, 1000}};
//   absl::StatusOr<ParsedCommandLine> parsed = ParseCommandLineFlags(args, specs);
//   if (!parsed.ok()) { fprintf(stderr, "tool: %s\n", ...); return 2; }
//   if (parsed->help) { puts(usage); return 0; }
#ifndef AUTOTUNE_COMMAND_LINE_H_
#define AUTOTUNE_COMMAND_LINE_H_

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "compiler/base/abbreviate.h"

namespace tiletune {
namespace autotune {

// One flag the command accepts: an absl flag of that name must exist.
struct FlagSpec {
  std::string name;
  // One line for --help; empty for internal flags (accepted, never listed).
  std::string help;
  // Accepted range of an integer flag (inclusive).
  int64_t min = std::numeric_limits<int64_t>::min();
  int64_t max = std::numeric_limits<int64_t>::max();
};

struct ParsedCommandLine {
  // --help, -h or --helpfull was given (nothing else was parsed).
  bool help = false;
};

// Parses `args` (argv without the program name) as --name=VALUE, --name VALUE is not
// accepted; a bool flag also as --name and --noname. InvalidArgument, naming the
// argument (cut to 80 characters), for an unknown flag, a stray argument, a value the
// flag's type or range refuses, or a flag given twice.
absl::StatusOr<ParsedCommandLine> ParseCommandLineFlags(const std::vector<std::string>& args,
                                                        absl::Span<const FlagSpec> specs);

// "  --name  help" lines for the flags with help text, aligned.
std::string FlagHelp(absl::Span<const FlagSpec> specs);

}  // namespace autotune
}  // namespace tiletune

#endif  // AUTOTUNE_COMMAND_LINE_H_

#include "autotune/command_line.h"

#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/base/abbreviate.h"
#include "compiler/base/status_macros.h"

namespace tiletune {
namespace autotune {

absl::StatusOr<CommandLine> ParseAutotuneFlags(const std::vector<std::string>& args,
                                               absl::Span<const FlagSpec> specs,
                                               int max_positional) {
  TT_ASSIGN_OR_RETURN(CommandLine line, ParseCommandLine(args, specs, max_positional));
  for (const auto& [name, value] : line.values()) {
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr) {
      return absl::InternalError(absl::StrCat("--", name, " has no flag behind it"));
    }
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      return absl::InvalidArgumentError(absl::StrCat("--", name, "=", Abbreviate(value), ": ",
                                                     Abbreviate(error, 120), "; see --help"));
    }
  }
  return line;
}

}  // namespace autotune
}  // namespace tiletune

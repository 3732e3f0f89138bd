#include "compiler/cuda/compilation_provider.h"

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace tiletune {

absl::Status CompilationProvider::CheckArch(absl::string_view arch) const {
  return ParseArchName(arch).status();
}

absl::StatusOr<ArchName> ParseArchName(absl::string_view arch) {
  auto invalid = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid architecture '", arch,
        "': expected sm_<major><minor> with an optional 'a' or 'f' suffix, e.g. sm_80, sm_90a"));
  };
  if (!absl::StartsWith(arch, "sm_")) return invalid();
  absl::string_view rest = arch.substr(3);
  ArchName name;
  if (!rest.empty() && (rest.back() == 'a' || rest.back() == 'f')) {
    name.suffix = std::string(1, rest.back());
    rest.remove_suffix(1);
  }
  if (rest.size() < 2 || rest.size() > 3) return invalid();
  for (char c : rest) {
    if (!absl::ascii_isdigit(c)) return invalid();
  }
  if (!absl::SimpleAtoi(rest, &name.number)) return invalid();
  return name;
}

}  // namespace tiletune

#include "compiler/ops/op_util.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "compiler/base/abbreviate.h"

namespace tiletune {

absl::StatusOr<std::vector<int64_t>> ParseIntList(absl::string_view what, absl::string_view text,
                                                  int64_t min_value, int64_t max_value,
                                                  int max_count) {
  std::vector<int64_t> values;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    int64_t value = 0;
    if (!absl::SimpleAtoi(part, &value) || value < min_value || value > max_value) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, "=", Abbreviate(text), ": '", Abbreviate(part, 24), "' is not an integer from ",
          min_value, " to ", max_value,
          "; give a comma-separated list such as 8192,8192"));
    }
    values.push_back(value);
  }
  if (values.empty() || static_cast<int>(values.size()) > max_count) {
    return absl::InvalidArgumentError(absl::StrCat(what, "=", Abbreviate(text), ": give 1 to ",
                                                   max_count,
                                                   " comma-separated integers"));
  }
  return values;
}

absl::StatusOr<std::pair<int64_t, int64_t>> ParseAxisPair(absl::string_view what,
                                                         absl::string_view text,
                                                         int64_t min_value, int64_t max_value,
                                                         char separator) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, separator);
  if (parts.empty() || parts.size() > 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, "=", text, ": give one value for both axes or two, h then w (e.g. 3",
        std::string(1, separator), "1)"));
  }
  std::vector<int64_t> values;
  for (absl::string_view part : parts) {
    int64_t value = 0;
    if (!absl::SimpleAtoi(part, &value) || value < min_value || value > max_value) {
      return absl::InvalidArgumentError(absl::StrCat(what, "=", text, ": '", part,
                                                     "' is not an integer from ", min_value,
                                                     " to ", max_value));
    }
    values.push_back(value);
  }
  return std::make_pair(values.front(), values.back());
}

absl::Status CheckPathNames(const tuning::Lowering& lowering, const std::string& op,
                            const std::map<std::string, std::vector<std::string>>& paths) {
  auto it = paths.find(lowering.path());
  if (it == paths.end()) {
    std::vector<std::string> names;
    for (const auto& [name, forms] : paths) names.push_back(absl::StrCat("\"", name, "\""));
    return absl::InvalidArgumentError(absl::StrCat("lowering.path is \"", lowering.path(),
                                                   "\"; accepted for ", op, ": ",
                                                   absl::StrJoin(names, ", ")));
  }
  if (lowering.form().empty()) return absl::OkStatus();
  for (const std::string& form : it->second) {
    if (form == lowering.form()) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "lowering.form is \"", lowering.form(), "\"; ", op, "'s path ", lowering.path(),
      it->second.empty() ? " has no forms"
                         : absl::StrCat(" has forms ", absl::StrJoin(it->second, ", "))));
}

void AppendKeyInts(std::string& key, const std::vector<int64_t>& values) {
  const int64_t n = static_cast<int64_t>(values.size());
  key.append(reinterpret_cast<const char*>(&n), sizeof(n));
  key.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(int64_t));
}

}  // namespace tiletune

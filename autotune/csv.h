// One CSV field as the reports write it: as it is, or quoted (inner quotes doubled) where it
// holds a comma, quote or line break.
#ifndef AUTOTUNE_CSV_H_
#define AUTOTUNE_CSV_H_

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace tiletune {
namespace autotune {

inline std::string CsvField(const std::string& field) {
  if (field.find_first_of(",\"\n\r") == std::string::npos) return field;
  return absl::StrCat("\"", absl::StrReplaceAll(field, {{"\"", "\"\""}}), "\"");
}

}  // namespace autotune
}  // namespace tiletune

#endif  // AUTOTUNE_CSV_H_

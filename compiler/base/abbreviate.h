// Cuts long user input before it is echoed in a message: a 125 KB --shape should cost one
// line, not 125 KB of log.
//
//   return absl::InvalidArgumentError(absl::StrCat("--shape=", Abbreviate(text), ": ..."));
#ifndef COMPILER_BASE_ABBREVIATE_H_
#define COMPILER_BASE_ABBREVIATE_H_

#include <cstddef>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace tiletune {

// `text` when it is at most `max_chars` long, else its start, "...", and how long it was.
inline std::string Abbreviate(absl::string_view text, size_t max_chars = 80) {
  if (text.size() <= max_chars) return std::string(text);
  return absl::StrCat(text.substr(0, max_chars), "... (", text.size(), " characters)");
}

}  // namespace tiletune

#endif  // COMPILER_BASE_ABBREVIATE_H_

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

// `text` for a terminal or a log: control characters (escape sequences, NUL, a BOM's
// bytes are kept as text) shown as \xNN instead of sent, then cut as Abbreviate does.
inline std::string Printable(absl::string_view text, size_t max_chars = 200) {
  std::string out;
  for (char c : text.substr(0, max_chars)) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    } else {
      out.push_back(c);
    }
  }
  if (text.size() > max_chars) absl::StrAppend(&out, "... (", text.size(), " characters)");
  return out;
}

}  // namespace tiletune

#endif  // COMPILER_BASE_ABBREVIATE_H_

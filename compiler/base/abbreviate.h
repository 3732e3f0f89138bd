// Cuts long user input before it is echoed in a message: a 125 KB --shape should cost one
// line, not 125 KB of log.
//
//   return absl::InvalidArgumentError(absl::StrCat("--shape=", Abbreviate(text), ": ..."));
#ifndef COMPILER_BASE_ABBREVIATE_H_
#define COMPILER_BASE_ABBREVIATE_H_

#include <cstddef>
#include <optional>
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

// A message for a terminal or a log, however much of the user's or a database's text it
// echoes: control characters other than newline and tab shown as \xNN, every run of more
// than `max_run` characters without a space or a newline cut as Printable does, and every
// line cut at `max_line` characters. A 4 MB flag value or a 2 MB device name costs a line.
inline std::string BoundedMessage(absl::string_view message, size_t max_run = 1024,
                                  size_t max_line = 1500) {
  std::string out;
  size_t line_start = 0;
  size_t i = 0;
  while (i < message.size()) {
    const char c = message[i];
    if (c == '\n' || c == ' ' || c == '\t') {
      out.push_back(c);
      if (c == '\n') line_start = out.size();
      ++i;
      continue;
    }
    size_t end = i;
    while (end < message.size() && message[end] != '\n' && message[end] != ' ' &&
           message[end] != '\t') {
      ++end;
    }
    const absl::string_view run = message.substr(i, end - i);
    out += run.size() > max_run ? Printable(run, 80) : Printable(run, run.size());
    if (out.size() - line_start > max_line) {
      out.resize(line_start + max_line);
      out += "... (line cut)";
      while (end < message.size() && message[end] != '\n') ++end;
    }
    i = end;
  }
  return out;
}

// What in `text` cannot be part of a spec, name or path typed by a person, named so that a
// message says what it is rather than cutting at it or showing a look-alike: "a NUL byte
// at character 7", "a UTF-8 byte-order mark at character 1", "control character \x1b at
// character 3"; nullopt when there is none.
inline std::optional<std::string> OddCharacter(absl::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char u = static_cast<unsigned char>(text[i]);
    if (u == 0) return absl::StrCat("a NUL byte at character ", i + 1);
    if (text.substr(i, 3) == "\xef\xbb\xbf") {
      return absl::StrCat("a UTF-8 byte-order mark (EF BB BF) at character ", i + 1);
    }
    if (u < 0x20 || u == 0x7f) {
      return absl::StrCat("control character ", Printable(text.substr(i, 1)), " at character ",
                          i + 1);
    }
  }
  return std::nullopt;
}

}  // namespace tiletune

#endif  // COMPILER_BASE_ABBREVIATE_H_

#include "kernels/miss_recorder.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tiletune {
namespace {

// Whether the suite text holds `spec` as a line's problem (before any comment).
bool Holds(const std::string& text, absl::string_view spec) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = line.substr(0, line.find('#'));
    if (absl::StripAsciiWhitespace(line) == spec) return true;
  }
  return false;
}

}  // namespace

void MissRecorder::Record(absl::string_view spec, absl::string_view comment) {
  absl::MutexLock lock(&mutex_);
  if (!seen_.insert(std::string(spec)).second) return;
  auto warn = [&](const char* what) {
    if (warned_) return;
    warned_ = true;
    std::fprintf(stderr, "tiletune: warning: cannot record misses in %s (%s: %s); launches go on\n",
                 path_.c_str(), what, std::strerror(errno));
  };
  const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0666);
  if (fd < 0) return warn("open");
  if (::flock(fd, LOCK_EX) != 0) {
    warn("flock");
    ::close(fd);
    return;
  }
  std::string text;
  char buffer[1 << 16];
  ssize_t n = 0;
  while ((n = ::pread(fd, buffer, sizeof(buffer), static_cast<off_t>(text.size()))) > 0) {
    text.append(buffer, static_cast<size_t>(n));
  }
  if (!Holds(text, spec)) {
    // One write: a comment cut short, control characters out, so a line is a line.
    std::string safe(comment.substr(0, 300));
    for (char& c : safe) {
      if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    }
    std::string line = absl::StrCat(spec, "   # ", safe, "\n");
    if (!text.empty() && text.back() != '\n') line = "\n" + line;
    if (::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) warn("write");
  }
  ::flock(fd, LOCK_UN);
  ::close(fd);
}

}  // namespace tiletune

#include "compiler/tuning_db/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace tiletune {
namespace tuning {
namespace {

absl::Status ErrnoStatus(int error, absl::string_view what, absl::string_view path) {
  std::string message = absl::StrCat(path, ": ", what, ": ", std::strerror(error));
  switch (error) {
    case ENOENT:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    case ENOSPC:
    case EDQUOT:
      return absl::ResourceExhaustedError(message);
    default:
      return absl::InternalError(message);
  }
}

// Closes `fd` on every path out of a scope unless released.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  // Closes now and reports close's errno (0 on success).
  int Close() {
    int result = ::close(fd_) == 0 ? 0 : errno;
    fd_ = -1;
    return result;
  }

 private:
  int fd_;
};

std::pair<std::string, std::string> SplitFolder(absl::string_view path) {
  size_t slash = path.rfind('/');
  if (slash == absl::string_view::npos) return {".", std::string(path)};
  if (slash == 0) return {"/", std::string(path.substr(1))};
  return {std::string(path.substr(0, slash)), std::string(path.substr(slash + 1))};
}

}  // namespace

absl::StatusOr<std::string> ReadFileToString(absl::string_view path, int64_t max_bytes) {
  const std::string p(path);
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int error = errno;
    if (error == ENOENT) return absl::NotFoundError(absl::StrCat(path, ": no such file"));
    return ErrnoStatus(error, "cannot open", path);
  }
  FdCloser closer(fd);
  struct stat info;
  if (::fstat(fd, &info) != 0) return ErrnoStatus(errno, "cannot stat", path);
  if (S_ISDIR(info.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a folder, not a file"));
  }
  auto too_large = [&](int64_t size, bool at_least) {
    return absl::ResourceExhaustedError(absl::StrCat(path, ": ", at_least ? "more than " : "",
                                                     size, " bytes; the limit is ", max_bytes,
                                                     " bytes"));
  };
  if (max_bytes >= 0 && S_ISREG(info.st_mode) && info.st_size > max_bytes) {
    return too_large(info.st_size, false);
  }
  std::string contents;
  if (S_ISREG(info.st_mode) && info.st_size > 0) contents.reserve(info.st_size);
  char buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "read failed", path);
    }
    if (n == 0) break;
    contents.append(buffer, static_cast<size_t>(n));
    if (max_bytes >= 0 && static_cast<int64_t>(contents.size()) > max_bytes) {
      return too_large(max_bytes, true);
    }
  }
  return contents;
}

absl::Status WriteFileAtomically(absl::string_view path, absl::string_view contents) {
  if (path.empty() || path.back() == '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("'", path, "' is not a file path (it names no file)"));
  }
  static std::atomic<uint64_t> counter{0};
  auto [folder, name] = SplitFolder(path);
  std::string temp;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    temp = absl::StrCat(folder, "/.", name, ".tmp-", ::getpid(), "-", counter++);
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && (errno != EEXIST || attempt >= 100)) {
      const int error = errno;
      return ErrnoStatus(error, absl::StrCat("cannot create temporary file ", temp), path);
    }
  }
  FdCloser closer(fd);
  auto fail = [&](int error, absl::string_view what) {
    ::unlink(temp.c_str());
    return ErrnoStatus(error, what, path);
  };
  const char* data = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd, data, left);
    if (n < 0) {
      const int error = errno;
      if (error == EINTR) continue;
      return fail(error, absl::StrCat("write to ", temp, " failed"));
    }
    data += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int error = errno;
    return fail(error, absl::StrCat("fsync of ", temp, " failed"));
  }
  if (int error = closer.Close(); error != 0) {
    return fail(error, absl::StrCat("close of ", temp, " failed"));
  }
  if (::rename(temp.c_str(), std::string(path).c_str()) != 0) {
    const int error = errno;
    return fail(error, absl::StrCat("rename from ", temp, " failed"));
  }
  // Make the rename itself durable. Failing to sync the folder loses nothing already
  // visible, so it is not an error.
  int dir_fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
  return absl::OkStatus();
}

}  // namespace tuning
}  // namespace tiletune

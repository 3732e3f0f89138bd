#include "compiler/tuning_db/atomic_file.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "compiler/base/status_macros.h"

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

namespace {

// Where a write to `path` lands: the path itself, or the file a chain of symlinks there
// points at (written through, so the links stay links). ELOOP-like error for a loop or a
// chain longer than 40, like the kernel's own limit.
absl::StatusOr<std::string> WriteTarget(const std::string& path) {
  std::string current = path;
  for (int depth = 0; depth < 40; ++depth) {
    struct stat info;
    if (::lstat(current.c_str(), &info) != 0 || !S_ISLNK(info.st_mode)) return current;
    std::string target(PATH_MAX + 1, '\0');
    const ssize_t n = ::readlink(current.c_str(), target.data(), target.size());
    if (n <= 0 || static_cast<size_t>(n) >= target.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": symbolic link ", current, " cannot be read or is too long"));
    }
    target.resize(static_cast<size_t>(n));
    current = target[0] == '/' ? target : absl::StrCat(SplitFolder(current).first, "/", target);
  }
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": symbolic links loop or chain more than 40 deep"));
}

// This host's name, in temporary names: a process id means nothing on another host
// sharing the folder.
std::string HostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "host";
  std::string host(name);
  for (char& c : host) {
    if (c == '-' || c == '/' || c == '.') c = '_';
  }
  return host;
}

// Removes `.<name>.tmp-<host>-<pid>-<n>` files in `folder` written on this host by a
// process that is gone: what a killed or size-limited write left behind.
void RemoveStaleTemporaries(const std::string& folder, const std::string& name) {
  DIR* dir = ::opendir(folder.c_str());
  if (dir == nullptr) return;
  const std::string prefix = absl::StrCat(".", name, ".tmp-", HostName(), "-");
  while (const struct dirent* entry = ::readdir(dir)) {
    const absl::string_view file = entry->d_name;
    if (!absl::StartsWith(file, prefix)) continue;
    const absl::string_view rest = file.substr(prefix.size());
    int64_t pid = 0;
    if (!absl::SimpleAtoi(rest.substr(0, rest.find('-')), &pid) || pid <= 0) continue;
    if (pid == ::getpid()) continue;  // Ours: another thread may be writing it.
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      ::unlink(absl::StrCat(folder, "/", file).c_str());
    }
  }
  ::closedir(dir);
}

// One staged file: its target and the temporary holding its new contents.
struct Staged {
  std::string path;    // as the caller named it, for messages
  std::string target;  // where it lands (through a symlink)
  std::string temp;
};

// Writes `contents` to a new temporary next to `staged.target`, with the mode of the file
// it replaces, flushed to disk.
absl::Status Stage(absl::string_view contents, Staged& staged) {
  static std::atomic<uint64_t> counter{0};
  auto [folder, name] = SplitFolder(staged.target);
  RemoveStaleTemporaries(folder, name);
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    staged.temp =
        absl::StrCat(folder, "/.", name, ".tmp-", HostName(), "-", ::getpid(), "-", counter++);
    fd = ::open(staged.temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && (errno != EEXIST || attempt >= 100)) {
      const int error = errno;
      staged.temp.clear();
      return ErrnoStatus(error, "cannot create a temporary file beside it", staged.path);
    }
  }
  FdCloser closer(fd);
  struct stat old;
  if (::stat(staged.target.c_str(), &old) == 0) ::fchmod(fd, old.st_mode & 07777);
  const char* data = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd, data, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, absl::StrCat("write to ", staged.temp, " failed"), staged.path);
    }
    data += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    return ErrnoStatus(errno, absl::StrCat("fsync of ", staged.temp, " failed"), staged.path);
  }
  if (int error = closer.Close(); error != 0) {
    return ErrnoStatus(error, absl::StrCat("close of ", staged.temp, " failed"), staged.path);
  }
  return absl::OkStatus();
}

void SyncFolder(const std::string& folder) {
  // Makes a rename durable. Failing to sync the folder loses nothing already visible, so
  // it is not an error.
  int dir_fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

}  // namespace

absl::Status WriteFilesAtomically(const std::vector<FileWrite>& files) {
  std::vector<Staged> staged(files.size());
  auto discard = [&](const absl::Status& status) {
    for (const Staged& s : staged) {
      if (!s.temp.empty()) ::unlink(s.temp.c_str());
    }
    return status;
  };
  // Every target is checked, then every temporary written, before anything is replaced.
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string& path = files[i].path;
    if (path.empty() || path.back() == '/') {
      return absl::InvalidArgumentError(
          absl::StrCat("'", path, "' is not a file path (it names no file)"));
    }
    staged[i].path = path;
    TT_ASSIGN_OR_RETURN(staged[i].target, WriteTarget(path));
    struct stat info;
    if (::stat(staged[i].target.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, ": is a folder; nothing was written"));
    }
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (absl::Status status = Stage(files[i].contents, staged[i]); !status.ok()) {
      return discard(absl::Status(status.code(), absl::StrCat(status.message(),
                                                               "; nothing was written")));
    }
  }
  for (size_t i = 0; i < staged.size(); ++i) {
    if (::rename(staged[i].temp.c_str(), staged[i].target.c_str()) != 0) {
      const int error = errno;
      absl::Status status = ErrnoStatus(
          error, absl::StrCat("rename from ", staged[i].temp, " failed",
                              i == 0 ? "; nothing was written" : "; the files before it were"),
          staged[i].path);
      return discard(status);
    }
    staged[i].temp.clear();
    SyncFolder(SplitFolder(staged[i].target).first);
  }
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(absl::string_view path, absl::string_view contents) {
  return WriteFilesAtomically({FileWrite{std::string(path), std::string(contents)}});
}

}  // namespace tuning
}  // namespace tiletune

#include "compiler/tuning_db/atomic_file.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <random>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "compiler/base/sha256.h"
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
  // Opened without blocking, so a FIFO no one writes to cannot hang the open; reads then
  // block again (a pipe with a writer, as from <(...), is read to its end), and a FIFO
  // with no writer reads as nothing at once.
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd >= 0) {
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  }
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
    if (n == 0) {
      if (contents.empty() && S_ISFIFO(info.st_mode)) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": a FIFO with no writer; nothing to read"));
      }
      break;
    }
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

// 16 random hex digits: temporary names unique across processes, PID namespaces and hosts.
std::string RandomToken() {
  static std::atomic<uint64_t> counter{0};
  std::random_device device;
  const uint64_t bits = (uint64_t{device()} << 32 | device()) ^ (counter++ * 0x9e3779b97f4a7c15u);
  return absl::StrFormat("%016x", bits);
}

// Opens `path` for a flock without following a last symbolic link or blocking on a FIFO.
int OpenForLock(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 && errno == EACCES) fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  return fd;
}

// Removes the temporaries of `target` (SiblingPath(target, ".tmp-...")) that no writer
// holds: a writer keeps an exclusive flock on its temporary from creating it until it is
// renamed, and the kernel drops the lock when the writer dies, so an unlocked temporary is
// what a killed write left, whoever the writer was (another host, another PID namespace).
void RemoveStaleTemporaries(const std::string& target) {
  const std::string prefix_path = SiblingPath(target, ".tmp-");
  auto [folder, prefix] = SplitFolder(prefix_path);
  DIR* dir = ::opendir(folder.c_str());
  if (dir == nullptr) return;
  while (const struct dirent* entry = ::readdir(dir)) {
    const absl::string_view file = entry->d_name;
    if (!absl::StartsWith(file, prefix) || file.size() != prefix.size() + 16) continue;
    const std::string path = absl::StrCat(folder, "/", file);
    const int fd = OpenForLock(path);
    if (fd < 0) continue;
    struct stat held, named;
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0 && ::fstat(fd, &held) == 0 && S_ISREG(held.st_mode) &&
        ::lstat(path.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino) {
      ::unlink(path.c_str());
    }
    ::close(fd);
  }
  ::closedir(dir);
}

// One file of a write: its target and how it is written.
struct Staged {
  std::string path;    // as the caller named it, for messages
  std::string target;  // where it lands (through a symlink)
  OutputKind kind = OutputKind::kNew;
  std::string temp;    // the locked temporary holding its new contents (kNew, kRegular)
  int temp_fd = -1;    // open, and locked, until the temporary is renamed or removed
};

// Creates a new temporary beside `staged.target` and takes its lock. A temporary that a
// stale-temporary sweep removed between its creation and the lock is given up for another.
absl::Status CreateLockedTemporary(Staged& staged) {
  for (int attempt = 0;; ++attempt) {
    staged.temp = SiblingPath(staged.target, absl::StrCat(".tmp-", RandomToken()));
    const int fd = ::open(staged.temp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
      const int error = errno;
      if (error == EEXIST && attempt < 100) continue;
      staged.temp.clear();
      return ErrnoStatus(error, "cannot create a temporary file beside it", staged.path);
    }
    struct stat held, named;
    if (::flock(fd, LOCK_EX) == 0 && ::fstat(fd, &held) == 0 &&
        ::lstat(staged.temp.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino) {
      staged.temp_fd = fd;
      return absl::OkStatus();
    }
    ::close(fd);
    if (attempt >= 100) {
      staged.temp.clear();
      return absl::InternalError(
          absl::StrCat(staged.path, ": cannot hold a temporary file beside it"));
    }
  }
}

absl::Status WriteAll(int fd, absl::string_view contents, const std::string& where,
                      const std::string& path) {
  const char* data = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd, data, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, absl::StrCat("write to ", where, " failed"), path);
    }
    data += n;
    left -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

// Writes `contents` to a new locked temporary next to `staged.target`, with the mode of
// the file it replaces, flushed to disk. The temporary stays open (and locked).
absl::Status Stage(absl::string_view contents, Staged& staged) {
  RemoveStaleTemporaries(staged.target);
  TT_RETURN_IF_ERROR(CreateLockedTemporary(staged));
  struct stat old;
  if (::stat(staged.target.c_str(), &old) == 0) ::fchmod(staged.temp_fd, old.st_mode & 07777);
  TT_RETURN_IF_ERROR(WriteAll(staged.temp_fd, contents, staged.temp, staged.path));
  if (::fsync(staged.temp_fd) != 0) {
    return ErrnoStatus(errno, absl::StrCat("fsync of ", staged.temp, " failed"), staged.path);
  }
  return absl::OkStatus();
}

// Writes `contents` through to a character device or a pipe, as it is.
absl::Status WriteThrough(absl::string_view contents, const Staged& staged) {
  // O_NONBLOCK: a pipe with no reader is an error (ENXIO), not a hang.
  int fd = ::open(staged.path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    if (error == ENXIO) {
      return absl::FailedPreconditionError(
          absl::StrCat(staged.path, ": a pipe with no reader; nothing was written"));
    }
    return ErrnoStatus(error, "cannot open for writing", staged.path);
  }
  FdCloser closer(fd);
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  TT_RETURN_IF_ERROR(WriteAll(fd, contents, staged.path, staged.path));
  if (int error = closer.Close(); error != 0) {
    return ErrnoStatus(error, "close failed", staged.path);
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

// Closes a temporary's descriptor (releasing its lock); removes the file too unless it
// was renamed.
void Release(Staged& staged, bool remove) {
  if (remove && !staged.temp.empty()) ::unlink(staged.temp.c_str());
  if (staged.temp_fd >= 0) ::close(staged.temp_fd);
  staged.temp_fd = -1;
  staged.temp.clear();
}

}  // namespace

absl::StatusOr<OutputKind> ClassifyOutput(absl::string_view path) {
  const std::string p(path);
  struct stat info;
  if (::stat(p.c_str(), &info) != 0) {
    const int error = errno;
    if (error == ENOENT) {
      // Nothing there, or a dangling link: written through to the link's target. A loop is
      // an error.
      TT_RETURN_IF_ERROR(WriteTarget(p).status());
      return OutputKind::kNew;
    }
    if (error == ELOOP) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": symbolic links loop or chain more than 40 deep"));
    }
    return ErrnoStatus(error, "cannot stat", path);
  }
  if (S_ISREG(info.st_mode)) return OutputKind::kRegular;
  if (S_ISDIR(info.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(path, ": is a folder; nothing was written"));
  }
  if (S_ISCHR(info.st_mode)) {
    // /dev/mem, /dev/kmem and /dev/port take any bytes: a database there would corrupt
    // memory, so they are refused like a block device.
    const unsigned major_number = major(info.st_rdev), minor_number = minor(info.st_rdev);
    if (major_number == 1 && (minor_number == 1 || minor_number == 2 || minor_number == 4)) {
      return absl::FailedPreconditionError(absl::StrCat(
          path, ": is a memory device; tiletune writes regular files, character devices such "
                "as /dev/null, and pipes; nothing was written"));
    }
    return OutputKind::kStream;
  }
  if (S_ISFIFO(info.st_mode)) return OutputKind::kStream;
  return absl::FailedPreconditionError(absl::StrCat(
      path, ": is a ", S_ISBLK(info.st_mode) ? "block device" : "socket",
      "; tiletune writes regular files, character devices such as /dev/null, and pipes; "
      "nothing was written"));
}

std::string SiblingPath(absl::string_view path, absl::string_view suffix) {
  auto [folder, name] = SplitFolder(path);
  const std::string prefix = path.find('/') == absl::string_view::npos ? ""
                             : folder == "/"                          ? "/"
                                                                      : folder + "/";
  constexpr size_t kNameMax = 255;
  // "." + name + suffix fits: the plain name.
  if (1 + name.size() + suffix.size() <= kNameMax) return absl::StrCat(prefix, ".", name, suffix);
  // Otherwise "." + cut name + "~" + 16 hex digits + suffix, cut to fit (suffixes are short).
  const std::string hash = Sha256Hex(name).substr(0, 16);
  const size_t room = kNameMax > 1 + 1 + hash.size() + suffix.size()
                          ? kNameMax - (1 + 1 + hash.size() + suffix.size())
                          : 0;
  return absl::StrCat(prefix, ".", name.substr(0, room), "~", hash, suffix);
}

absl::Status WriteFilesAtomically(const std::vector<FileWrite>& files) {
  std::vector<Staged> staged(files.size());
  auto discard = [&](const absl::Status& status) {
    for (Staged& s : staged) Release(s, /*remove=*/true);
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
    TT_ASSIGN_OR_RETURN(staged[i].kind, ClassifyOutput(path));
    TT_ASSIGN_OR_RETURN(staged[i].target, WriteTarget(path));
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (staged[i].kind == OutputKind::kStream) continue;
    if (absl::Status status = Stage(files[i].contents, staged[i]); !status.ok()) {
      return discard(absl::Status(status.code(), absl::StrCat(status.message(),
                                                               "; nothing was written")));
    }
  }
  for (size_t i = 0; i < staged.size(); ++i) {
    const char* const before = i == 0 ? "; nothing was written" : "; the files before it were";
    if (staged[i].kind == OutputKind::kStream) {
      if (absl::Status status = WriteThrough(files[i].contents, staged[i]); !status.ok()) {
        return discard(absl::Status(status.code(), absl::StrCat(status.message(), before)));
      }
      continue;
    }
    if (::rename(staged[i].temp.c_str(), staged[i].target.c_str()) != 0) {
      const int error = errno;
      return discard(ErrnoStatus(
          error, absl::StrCat("rename from ", staged[i].temp, " failed", before), staged[i].path));
    }
    staged[i].temp.clear();
    Release(staged[i], /*remove=*/false);
    SyncFolder(SplitFolder(staged[i].target).first);
  }
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(absl::string_view path, absl::string_view contents) {
  return WriteFilesAtomically({FileWrite{std::string(path), std::string(contents)}});
}

}  // namespace tuning
}  // namespace tiletune

#include "compiler/tuning_db/file_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "compiler/tuning_db/atomic_file.h"

namespace tiletune {
namespace tuning {
namespace {

absl::Status LockError(int error, absl::string_view what, absl::string_view lock_path) {
  std::string message = absl::StrCat(lock_path, ": ", what, ": ", std::strerror(error));
  switch (error) {
    case ENOENT:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::PermissionDeniedError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::StatusOr<int> OpenLockFile(const std::string& lock_path) {
  const int fd = ::open(lock_path.c_str(), O_CREAT | O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) return LockError(errno, "cannot open or create the lock file", lock_path);
  return fd;
}

}  // namespace

std::string WriteLockPath(absl::string_view path) { return SiblingPath(path, ".lock"); }
std::string RunLockPath(absl::string_view path) { return SiblingPath(path, ".run.lock"); }

absl::StatusOr<std::unique_ptr<FileLock>> FileLock::Acquire(const std::string& lock_path) {
  absl::StatusOr<int> fd = OpenLockFile(lock_path);
  if (!fd.ok()) return fd.status();
  while (::flock(*fd, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    const int error = errno;
    ::close(*fd);
    return LockError(error, "cannot take an exclusive lock (flock)", lock_path);
  }
  return std::unique_ptr<FileLock>(new FileLock(*fd));
}

absl::StatusOr<std::unique_ptr<FileLock>> FileLock::TryAcquire(const std::string& lock_path) {
  absl::StatusOr<int> fd = OpenLockFile(lock_path);
  if (!fd.ok()) return fd.status();
  while (::flock(*fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    const int error = errno;
    ::close(*fd);
    if (error == EWOULDBLOCK) return std::unique_ptr<FileLock>();
    return LockError(error, "cannot take an exclusive lock (flock)", lock_path);
  }
  return std::unique_ptr<FileLock>(new FileLock(*fd));
}

void FileLock::Describe(absl::string_view holder) {
  if (::ftruncate(fd_, 0) != 0) return;
  const std::string line = absl::StrCat(holder.substr(0, 200), "\n");
  (void)!::pwrite(fd_, line.data(), line.size(), 0);
}

FileLock::~FileLock() { ::close(fd_); }

std::string HolderOf(const std::string& lock_path) {
  const int fd = ::open(lock_path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return "";
  char buffer[201] = {};
  const ssize_t n = ::pread(fd, buffer, 200, 0);
  ::close(fd);
  std::string holder;
  for (ssize_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(buffer[i]);
    if (c == '\n') break;
    if (c >= 0x20 && c != 0x7f) holder.push_back(static_cast<char>(c));
  }
  return holder;
}

}  // namespace tuning
}  // namespace tiletune

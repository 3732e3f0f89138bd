#include "compiler/tuning_db/append.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "compiler/base/status_macros.h"
#include "compiler/tuning_db/tuning_db.h"
#include "compiler/tuning_db/tuning_db.pb.h"

namespace tiletune {
namespace tuning {
namespace {

// "<folder>/.<name>.lock" beside `path` as given (a symbolic link is not followed).
std::string LockPathFor(absl::string_view path) {
  const size_t slash = path.rfind('/');
  if (slash == absl::string_view::npos) return absl::StrCat(".", path, ".lock");
  return absl::StrCat(path.substr(0, slash + 1), ".", path.substr(slash + 1), ".lock");
}

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

// An exclusive flock on a lock file, held until destruction (or the process's death).
//
// flock locks belong to an open file description, and every open() makes a new one, so
// two holders in one process (two threads, each with its own ExclusiveFileLock) exclude
// each other exactly as two processes do. (fcntl/POSIX record locks would not: they
// belong to the process, and a second thread would be granted the lock at once.)
class ExclusiveFileLock {
 public:
  // Opens (creating if missing) `lock_path` and blocks until the lock is held.
  static absl::StatusOr<std::unique_ptr<ExclusiveFileLock>> Acquire(const std::string& lock_path) {
    const int fd = ::open(lock_path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0666);
    if (fd < 0) return LockError(errno, "cannot open or create the lock file", lock_path);
    while (::flock(fd, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      ::close(fd);
      return LockError(error, "cannot take an exclusive lock (flock)", lock_path);
    }
    return std::unique_ptr<ExclusiveFileLock>(new ExclusiveFileLock(fd));
  }

  // Closing the last descriptor of the open file description releases the lock.
  ~ExclusiveFileLock() { ::close(fd_); }
  ExclusiveFileLock(const ExclusiveFileLock&) = delete;
  ExclusiveFileLock& operator=(const ExclusiveFileLock&) = delete;

 private:
  explicit ExclusiveFileLock(int fd) : fd_(fd) {}
  int fd_;
};

// Adds each of `records` to `database`, replacing in place a record with the same
// RecordKey() (so a later duplicate within `records` wins too).
void Merge(const std::vector<TuningRecord>& records, TuningDatabase& database) {
  absl::flat_hash_map<std::string, int> index;
  for (int i = 0; i < database.records_size(); ++i) {
    index.emplace(RecordKey(database.records(i)), i);
  }
  for (const TuningRecord& record : records) {
    auto [it, added] = index.emplace(RecordKey(record), database.records_size());
    if (added) {
      *database.add_records() = record;
    } else {
      *database.mutable_records(it->second) = record;
    }
  }
}

// The database now at `path`: empty (current schema) when there is no file; an error
// naming `path` and the reader's message for a file that does not read as a database.
absl::StatusOr<TuningDatabase> ReadExisting(absl::string_view path,
                                            const RecordValidator& semantics) {
  ReadOptions options;
  options.semantics = semantics;
  absl::StatusOr<TuningDatabase> existing = ReadTuningDatabase(path, options);
  if (absl::IsNotFound(existing.status())) {
    TuningDatabase database;
    database.set_schema_version(kCurrentSchemaVersion);
    return database;
  }
  if (!existing.ok()) {
    return absl::Status(
        existing.status().code(),
        absl::StrCat("cannot append to ", path,
                     ": the file there does not read as a tuning database, so it was left as "
                     "it is (move it aside or repair it, then append again): ",
                     existing.status().message()));
  }
  return existing;
}

}  // namespace

absl::StatusOr<int> AppendTuningRecords(absl::string_view path,
                                        const std::vector<TuningRecord>& records,
                                        const RecordValidator& semantics) {
  if (path.empty() || path.back() == '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot append to '", path, "': not a file path (it names no file)"));
  }
  // Checked before taking the lock, so that bad input names itself, not the merged file.
  TuningDatabase appended;
  appended.set_schema_version(kCurrentSchemaVersion);
  Merge(records, appended);
  TT_RETURN_IF_ERROR(ValidateTuningDatabase(
      appended, absl::StrCat("records to append to ", path), semantics));

  TT_ASSIGN_OR_RETURN(std::unique_ptr<ExclusiveFileLock> lock,
                      ExclusiveFileLock::Acquire(LockPathFor(path)));
  TT_ASSIGN_OR_RETURN(TuningDatabase database, ReadExisting(path, semantics));
  Merge(records, database);
  TT_RETURN_IF_ERROR(WriteTuningDatabase(database, path, semantics));
  return database.records_size();
}

}  // namespace tuning
}  // namespace tiletune

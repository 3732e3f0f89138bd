// Exclusive advisory locks that writers of one file take to serialize with each other.
//
// Two locks belong to a database file `<folder>/<name>`, each a sibling lock file that is
// created when first needed and never deleted (deleting a lock file races with its next
// taker):
//   - the write lock, SiblingPath(path, ".lock"): held for the few milliseconds of a
//     read-merge-write (AppendTuningRecords, `autotune merge`, a tuning run's writes);
//   - the run lock, SiblingPath(path, ".run.lock"): held for a whole tuning run, so a
//     second tuning of the same output waits for the first instead of tuning beside it.
// The kernel drops a lock when its holder dies, so a lock is never stale. Locks live
// beside the path as given: a symbolic link's lock sits beside the link.
//
//   TT_ASSIGN_OR_RETURN(std::unique_ptr<FileLock> lock, FileLock::Acquire(WriteLockPath(db)));
//   ... read db, merge, WriteTuningDatabase(db) ...
//   // released when `lock` goes
#ifndef COMPILER_TUNING_DB_FILE_LOCK_H_
#define COMPILER_TUNING_DB_FILE_LOCK_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tiletune {
namespace tuning {

// The lock files of the database at `path` (see the top).
std::string WriteLockPath(absl::string_view path);
std::string RunLockPath(absl::string_view path);

// An exclusive flock on a lock file, held until destruction (or the process's death).
//
// flock locks belong to an open file description, and every Acquire opens a new one, so
// two holders in one process (two threads) exclude each other exactly as two processes
// do. Thread-safe to create; an object is owned by one thread.
class FileLock {
 public:
  // Opens (creating if missing) `lock_path` and blocks until the lock is held. Errors name
  // the lock file and the system's reason.
  static absl::StatusOr<std::unique_ptr<FileLock>> Acquire(const std::string& lock_path);
  // As Acquire, but returns null at once when another holder has the lock.
  static absl::StatusOr<std::unique_ptr<FileLock>> TryAcquire(const std::string& lock_path);

  // Writes `holder` (one line: who holds the lock and since when) into the lock file, for
  // HolderOf in a process that waits. Best effort.
  void Describe(absl::string_view holder);

  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_;
};

// What the holder of `lock_path` wrote with Describe (at most 200 bytes, control
// characters dropped); empty when nothing was written or the file cannot be read.
std::string HolderOf(const std::string& lock_path);

}  // namespace tuning
}  // namespace tiletune

#endif  // COMPILER_TUNING_DB_FILE_LOCK_H_

// Appending records to a tuning database file that several processes may write at once.
//
// AppendTuningRecords reads the file, adds or replaces records and writes it back, all
// under an exclusive lock, so that concurrent appenders (processes or threads) each keep
// every other's records, and a reader (who takes no lock) sees the old file or the new,
// never a partial one.
//
//   TT_ASSIGN_OR_RETURN(int count, AppendTuningRecords("out/h200.pb", {record}));
//   std::printf("out/h200.pb now holds %d records\n", count);
#ifndef COMPILER_TUNING_DB_APPEND_H_
#define COMPILER_TUNING_DB_APPEND_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/tuning_db/tuning_db.h"
#include "compiler/tuning_db/tuning_db.pb.h"

namespace tiletune {
namespace tuning {

// Adds `records` to the database at `path` (format from FormatForPath) and returns the
// number of records the file holds afterwards.
//
// Locking: the write lock of `path` (file_lock.h: an exclusive flock on the sibling file
// WriteLockPath(path), created if missing and never deleted) is held from before the read
// until after the write; the kernel releases it if the process dies. Writers that take it
// (appenders, tuning runs, `autotune merge`) are serialized; a plain WriteTuningDatabase
// of the same path is not. Threads of one process are serialized too. The lock sits
// beside `path` as given: when `path` is a symbolic link, the lock is next to the link,
// not its target (the file is still written through the link), so every appender must
// name the file by the same path. A character device or pipe at `path` (/dev/null) is
// written through with `records` alone, unlocked.
//
// Contents: a missing file is created (its folder must exist). An existing file is read
// with `semantics`; one that does not read as a valid database (corrupt, truncated, a
// newer schema, too large, unreadable) is left untouched and the error names `path` and
// the reader's message. Each of `records` replaces the stored record with the same
// RecordKey() in place (the appended one is taken as the newer measurement, whatever its
// provenance says) or is added at the end; within `records`, a later duplicate wins. The
// result is validated with `semantics` and written through WriteTuningDatabase (atomic
// rename, version-1 files upgraded to the current schema); on any error the file is as
// it was. Errors about the lock name the lock file and the system's reason.
absl::StatusOr<int> AppendTuningRecords(absl::string_view path,
                                        const std::vector<TuningRecord>& records,
                                        const RecordValidator& semantics = {});

}  // namespace tuning
}  // namespace tiletune

#endif  // COMPILER_TUNING_DB_APPEND_H_

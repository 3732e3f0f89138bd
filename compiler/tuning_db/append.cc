#include "compiler/tuning_db/append.h"

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
#include "compiler/tuning_db/atomic_file.h"
#include "compiler/tuning_db/file_lock.h"
#include "compiler/tuning_db/tuning_db.h"
#include "compiler/tuning_db/tuning_db.pb.h"

namespace tiletune {
namespace tuning {
namespace {

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

  // A device or a pipe (/dev/null) holds no database to merge with, and takes no lock.
  TT_ASSIGN_OR_RETURN(OutputKind kind, ClassifyOutput(path));
  if (kind == OutputKind::kStream) {
    TT_RETURN_IF_ERROR(WriteTuningDatabase(appended, path, semantics));
    return appended.records_size();
  }
  TT_ASSIGN_OR_RETURN(std::unique_ptr<FileLock> lock, FileLock::Acquire(WriteLockPath(path)));
  TT_ASSIGN_OR_RETURN(TuningDatabase database, ReadExisting(path, semantics));
  Merge(records, database);
  TT_RETURN_IF_ERROR(WriteTuningDatabase(database, path, semantics));
  return database.records_size();
}

}  // namespace tuning
}  // namespace tiletune

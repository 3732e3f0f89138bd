// Reading, writing and validating tuning databases (autotune/tuning_db.proto).
//
// A database file is text format when its name ends in `.textproto` or `.txtpb`, binary
// protobuf otherwise. Every read checks, and names the file and the fault when rejecting
// it: that it parses (text errors carry the line and column), that its schema_version is
// one this build knows (older versions are upgraded in memory, newer ones rejected),
// that it holds no fields this schema does not define, that its integrity trailer
// (`record_count`) is present and right, that every record has its required fields with
// accepted values, and that no two records share a RecordKey(). Writes validate first,
// then replace the file atomically.
//
//   TT_ASSIGN_OR_RETURN(TuningDatabase db, ReadTuningDatabase("h200.txtpb"));
//   for (const TuningRecord& record : db.records()) {
//     std::printf("%s -> %s\n", RecordKey(record).c_str(),
//                 DescribeVariant(record.winner()).c_str());
//   }
//   TT_RETURN_IF_ERROR(WriteTuningDatabase(db, "h200.pb"));
//
// All functions are pure or touch only the named file; all are thread-safe.
#ifndef AUTOTUNE_TUNING_DB_H_
#define AUTOTUNE_TUNING_DB_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "autotune/tuning_db.pb.h"
#include "google/protobuf/message.h"

namespace tiletune {
namespace autotune {

// The schema version this build reads natively and writes.
inline constexpr int kCurrentSchemaVersion = 1;

enum class DatabaseFormat { kText, kBinary };

// kText for paths ending in ".textproto" or ".txtpb", kBinary for any other path.
DatabaseFormat FormatForPath(absl::string_view path);

// Reads, upgrades and validates the database at `path` (format from FormatForPath).
// NotFound naming the path when the file does not exist; InvalidArgument naming the path
// and the fault for any file that is not a valid database of a supported version;
// FailedPrecondition for a schema_version newer than kCurrentSchemaVersion.
absl::StatusOr<TuningDatabase> ReadTuningDatabase(absl::string_view path);

// ReadTuningDatabase without the file: `origin` names the bytes in error messages.
absl::StatusOr<TuningDatabase> ParseTuningDatabase(absl::string_view bytes, DatabaseFormat format,
                                                   absl::string_view origin);

// The bytes WriteTuningDatabase would write: `database` validated, stamped with
// kCurrentSchemaVersion (it must be 0, meaning new, or already current) and its
// record_count trailer, then serialized deterministically (map entries sorted; equal
// databases give equal bytes).
absl::StatusOr<std::string> SerializeTuningDatabase(const TuningDatabase& database,
                                                    DatabaseFormat format);

// Serializes `database` in the format FormatForPath(path) chooses and replaces `path`
// atomically (autotune/atomic_file.h). Errors name the path.
absl::Status WriteTuningDatabase(const TuningDatabase& database, absl::string_view path);

// Checks a database held in memory: schema_version == kCurrentSchemaVersion, required
// fields and accepted values in every record, no duplicate keys, no unknown fields, and
// every string valid UTF-8 (so that it reads back from either format). `origin` prefixes the
// message. Does not look at record_count (a file-level check). InvalidArgument listing
// the first problems found.
absl::Status ValidateTuningDatabase(const TuningDatabase& database, absl::string_view origin);

// One upgrade step of the schema: turns a database of `from_version` into one of
// from_version + 1 in place.
struct SchemaUpgrade {
  int from_version = 0;
  absl::Status (*apply)(TuningDatabase* database) = nullptr;
};

// Upgrades `database` in place to kCurrentSchemaVersion through the steps built into
// this version (tuning_db.cc, kSchemaUpgrades; none yet: version 1 is the first).
// FailedPrecondition for a newer version ("upgrade tiletune"), InvalidArgument for a
// missing (0) or negative one. A database already current is left as it is.
absl::Status UpgradeTuningDatabase(TuningDatabase* database);

// The mechanism behind UpgradeTuningDatabase, with the steps and the target version
// given: applies the step for each version from database->schema_version() up to
// `target_version`, setting schema_version after each step.
absl::Status UpgradeTuningDatabaseWith(TuningDatabase* database,
                                       absl::Span<const SchemaUpgrade> steps, int target_version);

// The identity a record is stored under: device name and compute capability (not the
// board's uuid or driver) plus the whole problem, with empty strides and offsets read as
// their defaults (dense row-major, zeros; an im2col's destination is its [block_m, block_k]
// column matrix, so its default strides are [block_k, 1]). Deterministic and unambiguous:
// two records have the same key exactly when they describe the same device model and
// problem.
//   "NVIDIA H200" sm_9.0 | copy f16 shape=[4096,4096] src_strides=[4096,1] ...
std::string RecordKey(const TuningRecord& record);
std::string DeviceKey(const DeviceIdentity& device);
std::string ProblemKey(const Problem& problem);

// A total order on variants (negative, zero, positive as a < b, a == b, a > b): by
// lowering (path, tile, threads, stages, vector bytes, through shared, CTAs per SM),
// then hints, then source hash. Zero exactly when every field is equal. Used to break
// ties deterministically.
int CompareVariants(const Variant& a, const Variant& b);

// A one-line human-readable description of a variant: "tma tile=[64,128] threads=128
// stages=2 vec=16B smem evict_first".
std::string DescribeVariant(const Variant& variant);

// The deterministic binary serialization of any message (map entries sorted): equal
// messages give equal bytes within one build.
std::string SerializeDeterministically(const google::protobuf::Message& message);

// The proto enum value's name: "OK", "FAILED_VERIFICATION", ...
std::string CandidateStatusName(CandidateResult::Status status);

}  // namespace autotune
}  // namespace tiletune

#endif  // AUTOTUNE_TUNING_DB_H_

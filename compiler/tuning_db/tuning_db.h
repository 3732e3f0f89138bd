// Reading, writing, validating and keying tuning databases (tuning_db.proto).
//
// A database file is text format when its name ends in `.textproto` or `.txtpb`, binary
// protobuf otherwise. Every read checks, and names the file and the fault when rejecting
// it: its size (at most kMaxDatabaseBytes, checked before reading), that it parses (text
// errors carry the line and column; nesting is bounded), that its schema_version is one
// this build knows (version 1 is upgraded in memory, newer ones rejected), that it holds no
// fields its schema does not define, that its integrity trailer (`record_count` and
// `records_sha256`) is present and right, that every record has its required fields with
// accepted values, and that no two records share a RecordKey(). What the schema cannot say
// (that a problem is a valid problem of its operator, in canonical form, and that a
// variant names one of that operator's paths) is checked by a RecordValidator, which the
// tile-operator registry supplies (compiler/ops/registry.h). Writes validate first, then
// replace the file atomically.
//
//   TT_ASSIGN_OR_RETURN(TuningDatabase db, ReadTuningDatabase("h200.txtpb"));
//   for (const TuningRecord& record : db.records()) {
//     std::printf("%s -> %s\n", RecordKey(record).c_str(),
//                 DescribeVariant(record.winner()).c_str());
//   }
//   TT_RETURN_IF_ERROR(WriteTuningDatabase(db, "h200.pb"));
//
// All functions are pure or touch only the named file; all are thread-safe.
#ifndef COMPILER_TUNING_DB_TUNING_DB_H_
#define COMPILER_TUNING_DB_TUNING_DB_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/tuning_db/tuning_db.pb.h"
#include "compiler/tuning_db/tuning_db_v1.pb.h"
#include "google/protobuf/message.h"

namespace tiletune {
namespace tuning {

// The schema version this build writes. Version 1 files are read through an upgrade.
// Version 3 added the col2im operator; versions 2 and 3 share one layout.
inline constexpr int kCurrentSchemaVersion = 3;

// Largest database file a reader accepts (checked before reading it).
inline constexpr int64_t kMaxDatabaseBytes = int64_t{512} << 20;

// Most entries of any list in a problem or a lowering (dimensions, strides, tile).
inline constexpr int kMaxListLength = 8;

enum class DatabaseFormat { kText, kBinary };

// kText for paths ending in ".textproto" or ".txtpb", kBinary for any other path.
DatabaseFormat FormatForPath(absl::string_view path);

// Checks what the schema cannot about one record (see the top). An error says what is
// wrong; the caller prefixes the file and the record.
using RecordValidator = std::function<absl::Status(const TuningRecord& record)>;

struct ReadOptions {
  // Semantic checks of each record; none when empty.
  RecordValidator semantics;
  // Receives a line for each thing worth knowing about an accepted file (e.g. that it was
  // upgraded from schema 1 and had no checksum). May be null.
  std::vector<std::string>* notes = nullptr;
};

// Reads, upgrades and validates the database at `path` (format from FormatForPath).
// NotFound naming the path when the file does not exist; InvalidArgument naming the path
// and the fault for any file that is not a valid database of a supported version;
// FailedPrecondition for a schema_version newer than kCurrentSchemaVersion.
absl::StatusOr<TuningDatabase> ReadTuningDatabase(absl::string_view path,
                                                  const ReadOptions& options = {});

// ReadTuningDatabase without the file: `origin` names the bytes in error messages.
absl::StatusOr<TuningDatabase> ParseTuningDatabase(absl::string_view bytes, DatabaseFormat format,
                                                   absl::string_view origin,
                                                   const ReadOptions& options = {});

// The bytes WriteTuningDatabase would write: `database` validated, stamped with
// kCurrentSchemaVersion (it must be 0, meaning new, or already current) and its trailer,
// then serialized deterministically (map entries sorted; equal databases give equal
// bytes).
absl::StatusOr<std::string> SerializeTuningDatabase(const TuningDatabase& database,
                                                    DatabaseFormat format,
                                                    const RecordValidator& semantics = {});

// Serializes `database` in the format FormatForPath(path) chooses and replaces `path`
// atomically (atomic_file.h). Errors name the path.
absl::Status WriteTuningDatabase(const TuningDatabase& database, absl::string_view path,
                                 const RecordValidator& semantics = {});

// Checks a database held in memory: schema_version == kCurrentSchemaVersion, required
// fields and accepted values in every record, `semantics` (when given) on every record
// the schema accepts, no duplicate keys, no unknown fields, and every string valid UTF-8
// (so that it reads back from either format). `origin` prefixes the message. Does not
// look at the trailer (a file-level check). InvalidArgument listing the first problems
// found.
absl::Status ValidateTuningDatabase(const TuningDatabase& database, absl::string_view origin,
                                    const RecordValidator& semantics = {});

// A schema-1 database (its trailer already checked) as the current schema: problems
// become the operator's message with strides and offsets written out (dense row-major
// and zeros where version 1 left them empty), every other message carries over field by
// field, and the trailer is recomputed. InvalidArgument for an op schema 1 did not know.
absl::StatusOr<TuningDatabase> UpgradeFromV1(const v1::TuningDatabase& database);

// The name of the problem's operator ("copy", "im2col"), "" when none is set.
std::string OperatorName(const Problem& problem);

// The operator's message of `problem` (CopyProblem, Im2colProblem, ...); null when none
// is set.
const google::protobuf::Message* OperatorMessage(const Problem& problem);

// The identity a record is stored under: device name and compute capability (not the
// board's uuid or driver) plus the whole problem: the operator, the dtype and every field
// of the operator's message in field order. Deterministic and unambiguous: two records
// have the same key exactly when they describe the same device model and problem (both
// in canonical form).
//   "NVIDIA H200" sm_9.0 | "copy" "f16" shape=[4096,4096] src_strides=[4096,1] ...
std::string RecordKey(const TuningRecord& record);
std::string DeviceKey(const DeviceIdentity& device);
std::string ProblemKey(const Problem& problem);

// The SHA-256 (hex) that belongs in `database`'s records_sha256.
std::string RecordsSha256(const TuningDatabase& database);

// A total order on variants (negative, zero, positive as a < b, a == b, a > b): by
// lowering (path, form, tile, threads, stages, vector bytes, through shared, CTAs per SM),
// then hints, then source hash. Zero exactly when every field is equal. Used to break
// ties deterministically.
int CompareVariants(const Variant& a, const Variant& b);

// A one-line human-readable description of a variant: "tma tile=[64,128] threads=128
// stages=2 vec=16B smem evict_first"; the form follows the path ("simt_im2col staged").
std::string DescribeVariant(const Variant& variant);

// Parses text-format `bytes` into `message` (nesting bounded, nothing printed).
// InvalidArgument "ORIGIN: not a text-format TYPE: line L, column C: ..." at the first error.
absl::Status ParseTextMessage(absl::string_view bytes, absl::string_view origin,
                              google::protobuf::Message* message);

// The deterministic binary serialization of any message (map entries sorted): equal
// messages give equal bytes within one build.
std::string SerializeDeterministically(const google::protobuf::Message& message);

// The proto enum value's name: "OK", "FAILED_VERIFICATION", ...
std::string CandidateStatusName(CandidateResult::Status status);

}  // namespace tuning
}  // namespace tiletune

#endif  // COMPILER_TUNING_DB_TUNING_DB_H_

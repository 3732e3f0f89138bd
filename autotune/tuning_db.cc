#include "autotune/tuning_db.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "autotune/atomic_file.h"
#include "autotune/tuning_db.pb.h"
#include "compiler/base/status_macros.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/message.h"
#include "google/protobuf/stubs/common.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/unknown_field_set.h"

namespace tiletune {
namespace autotune {
namespace {

namespace pb = ::google::protobuf;

// The schema upgrade steps, one per version N -> N + 1. Version 1 is the first schema, so
// there are none yet. When version 2 comes: write
//   absl::Status UpgradeV1ToV2(TuningDatabase* database) { ... }
// return {{1, &UpgradeV1ToV2}} here, bump kCurrentSchemaVersion and describe the change
// at the top of tuning_db.proto.
absl::Span<const SchemaUpgrade> BuiltInUpgrades() { return {}; }

constexpr absl::string_view kOps[] = {"copy", "im2col"};
constexpr absl::string_view kCopyPaths[] = {"tma", "bulk_1d", "cp_async", "sync_simt"};
constexpr absl::string_view kIm2colPaths[] = {"tma_im2col", "simt_im2col"};
constexpr absl::string_view kEvictionPolicies[] = {"", "evict_normal", "evict_first", "evict_last"};
constexpr absl::string_view kPreferInstructions[] = {"", "tma", "cp_async", "sync"};

template <size_t N>
bool OneOf(absl::string_view value, const absl::string_view (&accepted)[N]) {
  for (absl::string_view a : accepted) {
    if (value == a) return true;
  }
  return false;
}

template <size_t N>
std::string AcceptedList(const absl::string_view (&accepted)[N]) {
  std::vector<std::string> quoted;
  for (absl::string_view a : accepted) quoted.push_back(absl::StrCat("\"", a, "\""));
  return absl::StrJoin(quoted, ", ");
}

std::string Quote(absl::string_view text) { return absl::StrCat("\"", absl::CEscape(text), "\""); }

std::string FormatInts(absl::Span<const int64_t> values) {
  return absl::StrCat("[", absl::StrJoin(values, ","), "]");
}

// Dense row-major strides of `shape`, in wrapping arithmetic (a key, not an address).
std::vector<int64_t> DenseStrides(absl::Span<const int64_t> shape) {
  std::vector<int64_t> strides(shape.size());
  uint64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = static_cast<int64_t>(stride);
    stride *= static_cast<uint64_t>(shape[i]);
  }
  return strides;
}

std::string FormatStrides(const pb::RepeatedField<int64_t>& strides,
                          absl::Span<const int64_t> shape) {
  if (strides.empty()) return FormatInts(DenseStrides(shape));
  return FormatInts(strides);
}

std::string FormatOffset(const pb::RepeatedField<int64_t>& offset, size_t rank) {
  if (offset.empty()) return FormatInts(std::vector<int64_t>(rank, 0));
  return FormatInts(offset);
}

// --- Validation ----------------------------------------------------------------------

constexpr int kMaxReportedProblems = 8;

// Collects the problems of one database; each names the record it is in.
class Validator {
 public:
  void Add(std::string problem) {
    ++count_;
    if (problems_.size() < kMaxReportedProblems) {
      problems_.push_back(context_.empty() ? std::move(problem)
                                           : absl::StrCat(context_, ": ", problem));
    }
  }
  void SetContext(std::string context) { context_ = std::move(context); }

  absl::Status ToStatus(absl::string_view origin) const {
    if (count_ == 0) return absl::OkStatus();
    std::string message =
        absl::StrCat(origin, ": invalid tuning database: ", absl::StrJoin(problems_, "; "));
    if (count_ > static_cast<int>(problems_.size())) {
      absl::StrAppend(&message, "; and ", count_ - problems_.size(), " more problems");
    }
    return absl::InvalidArgumentError(message);
  }

 private:
  std::string context_;
  std::vector<std::string> problems_;
  int count_ = 0;
};

bool PositiveFinite(double value) { return std::isfinite(value) && value > 0; }
bool NonNegativeFinite(double value) { return std::isfinite(value) && value >= 0; }

void ValidateDevice(const DeviceIdentity& device, Validator* v) {
  if (device.name().empty()) v->Add("device.name is empty (e.g. \"NVIDIA H200\")");
  if (device.cc_major() <= 0) {
    v->Add(absl::StrCat("device.cc_major is ", device.cc_major(),
                        "; a compute capability major version (>= 1) is required"));
  }
  if (device.cc_minor() < 0) v->Add(absl::StrCat("device.cc_minor is ", device.cc_minor()));
  if (device.sm_count() < 0) v->Add(absl::StrCat("device.sm_count is ", device.sm_count()));
  if (device.l2_bytes() < 0) v->Add(absl::StrCat("device.l2_bytes is ", device.l2_bytes()));
  if (device.memory_bytes() < 0) {
    v->Add(absl::StrCat("device.memory_bytes is ", device.memory_bytes()));
  }
}

void ValidateInts(absl::string_view name, const pb::RepeatedField<int64_t>& values, int64_t minimum,
                  Validator* v) {
  for (int i = 0; i < values.size(); ++i) {
    if (values[i] < minimum) {
      v->Add(absl::StrCat(name, "[", i, "] is ", values[i], "; it must be >= ", minimum));
      return;
    }
  }
}

void ValidateProblem(const Problem& problem, Validator* v) {
  if (!OneOf(problem.op(), kOps)) {
    v->Add(absl::StrCat("problem.op is ", Quote(problem.op()), "; accepted: ", AcceptedList(kOps)));
  }
  if (problem.dtype().empty()) v->Add("problem.dtype is empty (e.g. \"f16\")");
  const bool im2col = problem.op() == "im2col";
  if (problem.shape().empty() && !im2col) v->Add("problem.shape is empty");
  ValidateInts("problem.shape", problem.shape(), 1, v);
  ValidateInts("problem.src_strides", problem.src_strides(), 0, v);
  ValidateInts("problem.dst_strides", problem.dst_strides(), 0, v);
  ValidateInts("problem.src_offset", problem.src_offset(), 0, v);
  ValidateInts("problem.dst_offset", problem.dst_offset(), 0, v);
  const int rank = problem.shape_size();
  auto check_rank = [&](absl::string_view name, int size) {
    if (size != 0 && size != rank) {
      v->Add(absl::StrCat(name, " has ", size, " entries but problem.shape has ", rank,
                          " (leave it empty for the default)"));
    }
  };
  check_rank("problem.src_strides", problem.src_strides_size());
  check_rank("problem.dst_strides", problem.dst_strides_size());
  check_rank("problem.src_offset", problem.src_offset_size());
  check_rank("problem.dst_offset", problem.dst_offset_size());
  if (im2col) {
    if (!problem.has_im2col()) {
      v->Add("problem.im2col is missing; an im2col problem needs its geometry");
      return;
    }
    const Im2colGeometry& g = problem.im2col();
    const std::pair<absl::string_view, int64_t> positive[] = {{"n", g.n()},
                                                              {"h", g.h()},
                                                              {"w", g.w()},
                                                              {"c", g.c()},
                                                              {"kh", g.kh()},
                                                              {"kw", g.kw()},
                                                              {"sh", g.sh()},
                                                              {"sw", g.sw()},
                                                              {"dh", g.dh()},
                                                              {"dw", g.dw()},
                                                              {"block_m", g.block_m()},
                                                              {"block_k", g.block_k()}};
    for (const auto& [name, value] : positive) {
      if (value <= 0)
        v->Add(absl::StrCat("problem.im2col.", name, " is ", value, "; it must be >= 1"));
    }
    if (g.ph() < 0) v->Add(absl::StrCat("problem.im2col.ph is ", g.ph(), "; it must be >= 0"));
    if (g.pw() < 0) v->Add(absl::StrCat("problem.im2col.pw is ", g.pw(), "; it must be >= 0"));
  } else if (problem.has_im2col()) {
    v->Add(absl::StrCat("problem.im2col is set but problem.op is ", Quote(problem.op())));
  }
}

// `require_path`: a winner must name its lowering path; a candidate that failed before
// lowering may not have one.
void ValidateVariant(absl::string_view name, const Variant& variant, absl::string_view op,
                     bool require_path, Validator* v) {
  const Hints& hints = variant.hints();
  if (hints.coalesced_width() < 0) {
    v->Add(absl::StrCat(name, ".hints.coalesced_width is ", hints.coalesced_width(),
                        "; it must be >= 0 (0 = unset)"));
  }
  if (!OneOf(hints.eviction_policy(), kEvictionPolicies)) {
    v->Add(absl::StrCat(name, ".hints.eviction_policy is ", Quote(hints.eviction_policy()),
                        "; accepted: ", AcceptedList(kEvictionPolicies)));
  }
  if (!OneOf(hints.prefer_instruction(), kPreferInstructions)) {
    v->Add(absl::StrCat(name, ".hints.prefer_instruction is ", Quote(hints.prefer_instruction()),
                        "; accepted: ", AcceptedList(kPreferInstructions)));
  }
  const Lowering& lowering = variant.lowering();
  const std::string& path = lowering.path();
  if (path.empty()) {
    if (require_path) {
      v->Add(absl::StrCat(name, ".lowering.path is empty; accepted: ",
                          op == "im2col" ? AcceptedList(kIm2colPaths) : AcceptedList(kCopyPaths)));
    }
  } else if (op == "im2col" ? !OneOf(path, kIm2colPaths) : !OneOf(path, kCopyPaths)) {
    v->Add(absl::StrCat(name, ".lowering.path is ", Quote(path), "; accepted for op ", Quote(op),
                        ": ",
                        op == "im2col" ? AcceptedList(kIm2colPaths) : AcceptedList(kCopyPaths)));
  }
  ValidateInts(absl::StrCat(name, ".lowering.tile"), lowering.tile(), 1, v);
  const std::pair<absl::string_view, int32_t> non_negative[] = {
      {"threads", lowering.threads()},
      {"stages", lowering.stages()},
      {"vector_bytes", lowering.vector_bytes()},
      {"ctas_per_sm", lowering.ctas_per_sm()}};
  for (const auto& [field, value] : non_negative) {
    if (value < 0) v->Add(absl::StrCat(name, ".lowering.", field, " is ", value));
  }
}

void ValidateStatistics(absl::string_view name, const Statistics& s, Validator* v) {
  if (!PositiveFinite(s.median_us())) {
    v->Add(
        absl::StrCat(name, ".median_us is ", s.median_us(), "; a measured time > 0 is required"));
  }
  if (s.sample_count() <= 0) {
    v->Add(absl::StrCat(name, ".sample_count is ", s.sample_count(), "; it must be >= 1"));
  }
  const std::pair<absl::string_view, double> non_negative[] = {
      {"min_us", s.min_us()},
      {"spread", s.spread()},
      {"gbps", s.gbps()},
      {"fraction_of_ceiling", s.fraction_of_ceiling()},
      {"ceiling_gbps", s.ceiling_gbps()}};
  for (const auto& [field, value] : non_negative) {
    if (!NonNegativeFinite(value)) {
      v->Add(absl::StrCat(name, ".", field, " is ", value, "; it must be finite and >= 0"));
    }
  }
  if (s.min_us() > s.median_us()) {
    v->Add(
        absl::StrCat(name, ".min_us (", s.min_us(), ") exceeds median_us (", s.median_us(), ")"));
  }
}

void ValidateRecord(const TuningRecord& record, Validator* v) {
  if (!record.has_device()) {
    v->Add("device is missing");
  } else {
    ValidateDevice(record.device(), v);
  }
  if (!record.has_problem()) {
    v->Add("problem is missing");
  } else {
    ValidateProblem(record.problem(), v);
  }
  const std::string& op = record.problem().op();
  if (!record.has_winner()) {
    v->Add("winner is missing");
  } else {
    ValidateVariant("winner", record.winner(), op, /*require_path=*/true, v);
  }
  if (!record.has_winner_statistics()) {
    v->Add("winner_statistics is missing");
  } else {
    ValidateStatistics("winner_statistics", record.winner_statistics(), v);
  }
  for (int i = 0; i < record.candidates_size(); ++i) {
    const CandidateResult& candidate = record.candidates(i);
    const std::string name = absl::StrCat("candidates[", i, "]");
    if (candidate.status() == CandidateResult::STATUS_UNSPECIFIED ||
        !CandidateResult::Status_IsValid(candidate.status())) {
      v->Add(absl::StrCat(name, ".status is ", static_cast<int>(candidate.status()),
                          "; accepted: OK, FAILED_VERIFICATION, COMPILE_ERROR, "
                          "LAUNCH_FAULT, PRUNED, REJECTED_CACHE_ARTEFACT"));
    }
    ValidateVariant(name, candidate.variant(), op, /*require_path=*/false, v);
    if (candidate.status() == CandidateResult::OK || candidate.has_statistics()) {
      ValidateStatistics(absl::StrCat(name, ".statistics"), candidate.statistics(), v);
    }
  }
}

// True for well-formed UTF-8 (RFC 3629: no overlong forms, surrogates or code points
// above U+10FFFF), which protobuf requires of proto3 strings in the binary format.
bool IsValidUtf8(absl::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    size_t length;
    uint32_t code;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      length = 2;
      code = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      length = 3;
      code = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      length = 4;
      code = c & 0x07;
    } else {
      return false;
    }
    if (i + length > text.size()) return false;
    for (size_t k = 1; k < length; ++k) {
      const unsigned char next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xc0) != 0x80) return false;
      code = (code << 6) | (next & 0x3f);
    }
    constexpr uint32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < kMinimum[length] || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
      return false;
    }
    i += length;
  }
  return true;
}

// What FindFieldProblems found, each named by its place ("records[0].device.name").
struct FieldProblems {
  std::vector<std::string> unknown_fields;
  std::vector<std::string> invalid_utf8;
};

// Walks `message` and every message inside it (map entries included).
void FindFieldProblems(const pb::Message& message, const std::string& where, FieldProblems* found) {
  const pb::Reflection* reflection = message.GetReflection();
  const pb::UnknownFieldSet& unknown = reflection->GetUnknownFields(message);
  for (int i = 0; i < unknown.field_count(); ++i) {
    found->unknown_fields.push_back(absl::StrCat("field number ", unknown.field(i).number(), " in ",
                                                 where.empty() ? "TuningDatabase" : where));
  }
  std::vector<const pb::FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  const std::string prefix = where.empty() ? "" : absl::StrCat(where, ".");
  for (const pb::FieldDescriptor* field : fields) {
    const int size = field->is_repeated() ? reflection->FieldSize(message, field) : 1;
    for (int i = 0; i < size; ++i) {
      std::string place = field->is_repeated() ? absl::StrCat(prefix, field->name(), "[", i, "]")
                                               : absl::StrCat(prefix, field->name());
      if (field->is_map()) {
        // Map entries have no stable position: name them by their key.
        const pb::Message& entry = reflection->GetRepeatedMessage(message, field, i);
        const pb::FieldDescriptor* key = entry.GetDescriptor()->map_key();
        std::string scratch;
        if (key->cpp_type() == pb::FieldDescriptor::CPPTYPE_STRING) {
          place = absl::StrCat(
              prefix, field->name(), "[",
              Quote(entry.GetReflection()->GetStringReference(entry, key, &scratch)), "]");
        }
      }
      if (field->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
        FindFieldProblems(field->is_repeated() ? reflection->GetRepeatedMessage(message, field, i)
                                               : reflection->GetMessage(message, field),
                          place, found);
      } else if (field->type() == pb::FieldDescriptor::TYPE_STRING) {
        std::string scratch;
        const std::string& value =
            field->is_repeated()
                ? reflection->GetRepeatedStringReference(message, field, i, &scratch)
                : reflection->GetStringReference(message, field, &scratch);
        if (!IsValidUtf8(value)) found->invalid_utf8.push_back(place);
      }
    }
  }
}

// --- Parsing -------------------------------------------------------------------------

// Keeps the first error of a text-format parse.
class FirstErrorCollector : public pb::io::ErrorCollector {
 public:
  void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
    if (!has_error_) {
      has_error_ = true;
      // The parser counts from 0; editors count from 1.
      error_ = absl::StrCat("line ", line + 1, ", column ", column + 1, ": ", message);
    }
  }
  void AddWarning(int, pb::io::ColumnNumber, const std::string&) override {}
  bool has_error() const { return has_error_; }
  const std::string& error() const { return error_; }

 private:
  bool has_error_ = false;
  std::string error_;
};

bool LooksLikeText(absl::string_view bytes) {
  absl::string_view head = bytes.substr(0, 256);
  if (head.empty()) return false;
  for (char c : head) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 && c != '\n' && c != '\r' && c != '\t') return false;
  }
  return true;
}

// OK for a version this build can read or upgrade from (1 to `newest`).
absl::Status CheckVersion(int version, int newest) {
  if (version > newest) {
    return absl::FailedPreconditionError(
        absl::StrCat("schema_version ", version, " is newer than this tiletune supports (", newest,
                     "); read it with a newer tiletune build"));
  }
  if (version <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("schema_version is ", version,
                                                   "; accepted versions are 1 to ", newest,
                                                   " (is this a tiletune tuning database?)"));
  }
  return absl::OkStatus();
}

absl::Status WithOrigin(absl::string_view origin, const absl::Status& status) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(origin, ": ", status.message()));
}

absl::Status ParseText(absl::string_view bytes, absl::string_view origin,
                       TuningDatabase* database) {
  FirstErrorCollector errors;
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  pb::io::ArrayInputStream input(bytes.data(), static_cast<int>(bytes.size()));
  if (parser.Parse(&input, database)) {
    return absl::OkStatus();
  }
  // A newer schema may have fields this build does not know; say so rather than
  // pointing at the first unknown field.
  TuningDatabase lenient;
  pb::TextFormat::Parser lenient_parser;
  FirstErrorCollector ignored;
  lenient_parser.RecordErrorsTo(&ignored);
  lenient_parser.AllowUnknownField(true);
  pb::io::ArrayInputStream again(bytes.data(), static_cast<int>(bytes.size()));
  if (lenient_parser.Parse(&again, &lenient) && lenient.schema_version() > kCurrentSchemaVersion) {
    return WithOrigin(origin, CheckVersion(lenient.schema_version(), kCurrentSchemaVersion));
  }
  return absl::InvalidArgumentError(
      absl::StrCat(origin, ": not a text-format TuningDatabase: ",
                   errors.has_error() ? errors.error() : "the parser rejected it"));
}

absl::Status ParseBinary(absl::string_view bytes, absl::string_view origin,
                         TuningDatabase* database) {
  if (database->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::OkStatus();
  }
  std::string message =
      absl::StrCat(origin,
                   ": not a binary TuningDatabase: the protobuf wire format does not parse "
                   "(a truncated or corrupt file)");
  if (LooksLikeText(bytes)) {
    absl::StrAppend(&message,
                    "; it looks like text format: text databases must be named "
                    "*.textproto or *.txtpb");
  }
  return absl::InvalidArgumentError(message);
}

}  // namespace

DatabaseFormat FormatForPath(absl::string_view path) {
  return absl::EndsWith(path, ".textproto") || absl::EndsWith(path, ".txtpb")
             ? DatabaseFormat::kText
             : DatabaseFormat::kBinary;
}

absl::StatusOr<TuningDatabase> ParseTuningDatabase(absl::string_view bytes, DatabaseFormat format,
                                                   absl::string_view origin) {
  if (bytes.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(origin,
                                                   ": empty file; a tuning database holds at least "
                                                   "schema_version and record_count"));
  }
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": ", bytes.size(), " bytes; protobuf reads databases below 2 GiB"));
  }
  TuningDatabase database;
  {
    // Protobuf logs invalid UTF-8 in strings to stderr; the error below says it instead.
    pb::LogSilencer silence;
    TT_RETURN_IF_ERROR(format == DatabaseFormat::kText ? ParseText(bytes, origin, &database)
                                                       : ParseBinary(bytes, origin, &database));
  }
  TT_RETURN_IF_ERROR(
      WithOrigin(origin, CheckVersion(database.schema_version(), kCurrentSchemaVersion)));
  FieldProblems field_problems;
  FindFieldProblems(database, "", &field_problems);
  const std::vector<std::string>& unknown = field_problems.unknown_fields;
  if (!unknown.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        origin, ": holds fields schema version ", database.schema_version(), " does not define (",
        absl::StrJoin(unknown.begin(), unknown.begin() + std::min<size_t>(unknown.size(), 4), ", "),
        unknown.size() > 4 ? ", ..." : "", "): a corrupt file or not a tuning database"));
  }
  if (!database.has_record_count()) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin,
                     ": record_count is missing: the file is truncated, or was written by "
                     "hand (then add `record_count: ",
                     database.records_size(), "` at its end)"));
  }
  if (database.record_count() != static_cast<uint64_t>(database.records_size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        origin, ": record_count says ", database.record_count(), " records but the file holds ",
        database.records_size(), ": the file is truncated or was edited"));
  }
  TT_RETURN_IF_ERROR(WithOrigin(origin, UpgradeTuningDatabase(&database)));
  TT_RETURN_IF_ERROR(ValidateTuningDatabase(database, origin));
  return database;
}

absl::StatusOr<TuningDatabase> ReadTuningDatabase(absl::string_view path) {
  TT_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path));
  return ParseTuningDatabase(bytes, FormatForPath(path), path);
}

absl::StatusOr<std::string> SerializeTuningDatabase(const TuningDatabase& database,
                                                    DatabaseFormat format) {
  if (database.schema_version() != 0 && database.schema_version() != kCurrentSchemaVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot write a database of schema_version ", database.schema_version(),
                     "; this build writes version ", kCurrentSchemaVersion,
                     " (upgrade it with UpgradeTuningDatabase first)"));
  }
  TuningDatabase stamped = database;
  stamped.set_schema_version(kCurrentSchemaVersion);
  stamped.set_record_count(stamped.records_size());
  TT_RETURN_IF_ERROR(ValidateTuningDatabase(stamped, "refusing to write"));
  std::string bytes;
  if (format == DatabaseFormat::kText) {
    pb::TextFormat::Printer printer;
    if (!printer.PrintToString(stamped, &bytes)) {
      return absl::InternalError("text-format printing of the tuning database failed");
    }
    return absl::StrCat(
        "# proto-file: autotune/tuning_db.proto\n"
        "# proto-message: tiletune.autotune.TuningDatabase\n",
        bytes);
  }
  return SerializeDeterministically(stamped);
}

std::string SerializeDeterministically(const pb::Message& message) {
  std::string bytes;
  {
    pb::io::StringOutputStream output(&bytes);
    pb::io::CodedOutputStream coded(&output);
    coded.SetSerializationDeterministic(true);
    // Fails only for messages over 2 GiB, which no reader accepts either.
    message.SerializeToCodedStream(&coded);
  }
  return bytes;
}

absl::Status WriteTuningDatabase(const TuningDatabase& database, absl::string_view path) {
  absl::StatusOr<std::string> bytes = SerializeTuningDatabase(database, FormatForPath(path));
  if (!bytes.ok()) return WithOrigin(path, bytes.status());
  return WriteFileAtomically(path, *bytes);
}

absl::Status ValidateTuningDatabase(const TuningDatabase& database, absl::string_view origin) {
  if (database.schema_version() != kCurrentSchemaVersion) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": schema_version is ",
                                                   database.schema_version(), "; expected ",
                                                   kCurrentSchemaVersion, " (upgrade it first)"));
  }
  Validator validator;
  FieldProblems field_problems;
  FindFieldProblems(database, "", &field_problems);
  for (const std::string& place : field_problems.unknown_fields) {
    validator.Add(absl::StrCat("unknown ", place));
  }
  for (const std::string& place : field_problems.invalid_utf8) {
    validator.Add(absl::StrCat(place, " is not valid UTF-8"));
  }
  absl::flat_hash_map<std::string, int> first_index;
  for (int i = 0; i < database.records_size(); ++i) {
    const TuningRecord& record = database.records(i);
    std::string key = RecordKey(record);
    validator.SetContext(absl::StrCat("record ", i, " (", key, ")"));
    ValidateRecord(record, &validator);
    auto [it, inserted] = first_index.emplace(key, i);
    if (!inserted) {
      validator.Add(absl::StrCat("duplicate of record ", it->second,
                                 ": one database holds one record per key (merge "
                                 "databases with `autotune merge`)"));
    }
  }
  return validator.ToStatus(origin);
}

absl::Status UpgradeTuningDatabaseWith(TuningDatabase* database,
                                       absl::Span<const SchemaUpgrade> steps, int target_version) {
  TT_RETURN_IF_ERROR(CheckVersion(database->schema_version(), target_version));
  while (database->schema_version() < target_version) {
    const int from = database->schema_version();
    const SchemaUpgrade* step = nullptr;
    for (const SchemaUpgrade& candidate : steps) {
      if (candidate.from_version == from && candidate.apply != nullptr) step = &candidate;
    }
    if (step == nullptr) {
      return absl::InternalError(
          absl::StrCat("no upgrade step from schema_version ", from, " to ", from + 1));
    }
    absl::Status status = step->apply(database);
    if (!status.ok()) {
      return absl::Status(status.code(), absl::StrCat("upgrading schema_version ", from, " to ",
                                                      from + 1, ": ", status.message()));
    }
    database->set_schema_version(from + 1);
  }
  return absl::OkStatus();
}

absl::Status UpgradeTuningDatabase(TuningDatabase* database) {
  return UpgradeTuningDatabaseWith(database, BuiltInUpgrades(), kCurrentSchemaVersion);
}

std::string DeviceKey(const DeviceIdentity& device) {
  return absl::StrCat(Quote(device.name()), " sm_", device.cc_major(), ".", device.cc_minor());
}

std::string ProblemKey(const Problem& problem) {
  const size_t rank = problem.shape_size();
  // The destination of an im2col is the [block_m, block_k] column matrix, not an image.
  std::vector<int64_t> dst_shape(problem.shape().begin(), problem.shape().end());
  if (problem.has_im2col()) dst_shape = {problem.im2col().block_m(), problem.im2col().block_k()};
  std::string key = absl::StrCat(
      Quote(problem.op()), " ", Quote(problem.dtype()), " shape=", FormatInts(problem.shape()),
      " src_strides=", FormatStrides(problem.src_strides(), problem.shape()),
      " src_offset=", FormatOffset(problem.src_offset(), rank),
      " dst_strides=", FormatStrides(problem.dst_strides(), dst_shape),
      " dst_offset=", FormatOffset(problem.dst_offset(), dst_shape.size()));
  if (problem.has_im2col()) {
    const Im2colGeometry& g = problem.im2col();
    absl::StrAppend(&key, " im2col=[n=", g.n(), ",h=", g.h(), ",w=", g.w(), ",c=", g.c(),
                    ",kh=", g.kh(), ",kw=", g.kw(), ",sh=", g.sh(), ",sw=", g.sw(), ",dh=", g.dh(),
                    ",dw=", g.dw(), ",ph=", g.ph(), ",pw=", g.pw(), ",block_m=", g.block_m(),
                    ",block_k=", g.block_k(), "]");
  }
  return key;
}

std::string RecordKey(const TuningRecord& record) {
  return absl::StrCat(DeviceKey(record.device()), " | ", ProblemKey(record.problem()));
}

namespace {

template <typename T>
int Compare(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

int CompareInts(const pb::RepeatedField<int64_t>& a, const pb::RepeatedField<int64_t>& b) {
  for (int i = 0; i < a.size() && i < b.size(); ++i) {
    if (int c = Compare(a[i], b[i]); c != 0) return c;
  }
  return Compare(a.size(), b.size());
}

int CompareAnnotations(const pb::Map<std::string, std::string>& a,
                       const pb::Map<std::string, std::string>& b) {
  std::map<std::string, std::string> sorted_a(a.begin(), a.end());
  std::map<std::string, std::string> sorted_b(b.begin(), b.end());
  return Compare(sorted_a, sorted_b);
}

}  // namespace

int CompareVariants(const Variant& a, const Variant& b) {
  const Lowering& la = a.lowering();
  const Lowering& lb = b.lowering();
  const Hints& ha = a.hints();
  const Hints& hb = b.hints();
  int c = 0;
  if ((c = Compare(la.path(), lb.path())) != 0) return c;
  if ((c = CompareInts(la.tile(), lb.tile())) != 0) return c;
  if ((c = Compare(la.threads(), lb.threads())) != 0) return c;
  if ((c = Compare(la.stages(), lb.stages())) != 0) return c;
  if ((c = Compare(la.vector_bytes(), lb.vector_bytes())) != 0) return c;
  if ((c = Compare(la.through_shared(), lb.through_shared())) != 0) return c;
  if ((c = Compare(la.ctas_per_sm(), lb.ctas_per_sm())) != 0) return c;
  if ((c = Compare(ha.coalesced_width(), hb.coalesced_width())) != 0) return c;
  if ((c = Compare(ha.disable_tma(), hb.disable_tma())) != 0) return c;
  if ((c = Compare(ha.eviction_policy(), hb.eviction_policy())) != 0) return c;
  if ((c = Compare(ha.prefer_instruction(), hb.prefer_instruction())) != 0) return c;
  if ((c = Compare(ha.loop_layout(), hb.loop_layout())) != 0) return c;
  if ((c = CompareAnnotations(ha.annotations(), hb.annotations())) != 0) return c;
  return Compare(a.source_sha256(), b.source_sha256());
}

std::string DescribeVariant(const Variant& variant) {
  const Lowering& l = variant.lowering();
  const Hints& h = variant.hints();
  std::vector<std::string> parts;
  parts.push_back(l.path().empty() ? "(no lowering)" : l.path());
  if (!l.tile().empty()) parts.push_back(absl::StrCat("tile=", FormatInts(l.tile())));
  if (l.threads() != 0) parts.push_back(absl::StrCat("threads=", l.threads()));
  if (l.stages() != 0) parts.push_back(absl::StrCat("stages=", l.stages()));
  if (l.vector_bytes() != 0) parts.push_back(absl::StrCat("vec=", l.vector_bytes(), "B"));
  if (l.through_shared()) parts.push_back("smem");
  if (l.ctas_per_sm() != 0) parts.push_back(absl::StrCat("ctas/sm=", l.ctas_per_sm()));
  if (h.coalesced_width() != 0)
    parts.push_back(absl::StrCat("coalesced_width=", h.coalesced_width()));
  if (h.disable_tma()) parts.push_back("disable_tma");
  if (!h.eviction_policy().empty()) parts.push_back(h.eviction_policy());
  if (!h.prefer_instruction().empty()) {
    parts.push_back(absl::StrCat("prefer=", h.prefer_instruction()));
  }
  if (!h.loop_layout().empty()) parts.push_back(absl::StrCat("layout=", h.loop_layout()));
  std::map<std::string, std::string> annotations(h.annotations().begin(), h.annotations().end());
  for (const auto& [name, value] : annotations) {
    parts.push_back(absl::StrCat(name, "=", value));
  }
  if (!variant.source_sha256().empty()) {
    parts.push_back(absl::StrCat("src=", variant.source_sha256().substr(0, 12)));
  }
  return absl::StrJoin(parts, " ");
}

std::string CandidateStatusName(CandidateResult::Status status) {
  if (!CandidateResult::Status_IsValid(status)) {
    return absl::StrCat("STATUS_", static_cast<int>(status));
  }
  return CandidateResult::Status_Name(status);
}

}  // namespace autotune
}  // namespace tiletune

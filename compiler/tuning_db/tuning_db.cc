#include "compiler/tuning_db/tuning_db.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "compiler/base/sha256.h"
#include "compiler/base/status_macros.h"
#include "compiler/tuning_db/atomic_file.h"
#include "compiler/tuning_db/tuning_db.pb.h"
#include "compiler/tuning_db/tuning_db_v1.pb.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/message.h"
#include "google/protobuf/reflection.h"
#include "google/protobuf/stubs/common.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/unknown_field_set.h"

namespace tiletune {
namespace tuning {
namespace {

namespace pb = ::google::protobuf;

// Deepest nesting of messages a text file may have; the schema needs 5.
constexpr int kMaxNesting = 32;

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

const pb::OneofDescriptor& OperatorOneof() {
  return *Problem::descriptor()->FindOneofByName("operator");
}

// "copy { ... }, im2col { ... }": the operators the schema defines.
std::string OperatorList() {
  std::vector<std::string> names;
  const pb::OneofDescriptor& oneof = OperatorOneof();
  for (int i = 0; i < oneof.field_count(); ++i) {
    names.push_back(absl::StrCat(oneof.field(i)->name(), " { ... }"));
  }
  return absl::StrJoin(names, ", ");
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
  int count() const { return count_; }

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

// Physical bounds: values no GPU and no measurement of one can produce, so a record holding
// one was edited or corrupted. They are loose on purpose (a GPU of 2040 stays inside).
constexpr int kMaxCcMajor = 30;
constexpr int kMaxCcMinor = 9;
constexpr int kMaxSmCount = 4096;
constexpr int64_t kMaxL2Bytes = int64_t{1} << 34;       // 16 GiB
constexpr int64_t kMaxMemoryBytes = int64_t{1} << 46;   // 64 TiB
constexpr double kMaxMicroseconds = 1e9;                 // 1000 s for one launch
constexpr double kMaxGbps = 1e6;                         // 1 PB/s
constexpr double kMaxFractionOfCeiling = 100;            // 100x memcpy of the same bytes
constexpr double kMaxSpeedup = 1e5;

bool PositiveFinite(double value) { return std::isfinite(value) && value > 0; }
bool NonNegativeFinite(double value) { return std::isfinite(value) && value >= 0; }

void ValidateDevice(const DeviceIdentity& device, Validator* v) {
  if (device.name().empty()) v->Add("device.name is empty (e.g. \"NVIDIA H200\")");
  if (device.cc_major() <= 0) {
    v->Add(absl::StrCat("device.cc_major is ", device.cc_major(),
                        "; a compute capability major version (>= 1) is required"));
  }
  if (device.cc_major() > kMaxCcMajor) {
    v->Add(absl::StrCat("device.cc_major is ", device.cc_major(), "; no GPU has it (at most ",
                        kMaxCcMajor, " is accepted)"));
  }
  if (device.cc_minor() < 0 || device.cc_minor() > kMaxCcMinor) {
    v->Add(absl::StrCat("device.cc_minor is ", device.cc_minor(), "; accepted are 0 to ",
                        kMaxCcMinor));
  }
  if (device.sm_count() < 0 || device.sm_count() > kMaxSmCount) {
    v->Add(absl::StrCat("device.sm_count is ", device.sm_count(), "; accepted are 0 (unknown) to ",
                        kMaxSmCount));
  }
  if (device.l2_bytes() < 0 || device.l2_bytes() > kMaxL2Bytes) {
    v->Add(absl::StrCat("device.l2_bytes is ", device.l2_bytes(), "; accepted are 0 (unknown) to ",
                        kMaxL2Bytes));
  }
  if (device.memory_bytes() < 0 || device.memory_bytes() > kMaxMemoryBytes) {
    v->Add(absl::StrCat("device.memory_bytes is ", device.memory_bytes(),
                        "; accepted are 0 (unknown) to ", kMaxMemoryBytes));
  }
}

void ValidateInts(absl::string_view name, const pb::RepeatedField<int64_t>& values, int64_t minimum,
                  Validator* v) {
  if (values.size() > kMaxListLength) {
    v->Add(absl::StrCat(name, " has ", values.size(), " entries; at most ", kMaxListLength,
                        " are accepted"));
    return;
  }
  for (int i = 0; i < values.size(); ++i) {
    if (values[i] < minimum) {
      v->Add(absl::StrCat(name, "[", i, "] is ", values[i], "; it must be >= ", minimum));
      return;
    }
  }
}

// Every integer of an operator's message is a size, stride, offset or count: none is
// negative, and no list is longer than kMaxListLength. The operator's own rules (extents
// >= 1, pads below the kernel, ...) are the RecordValidator's.
void ValidateOperatorNumbers(const pb::Message& message, const std::string& where, Validator* v) {
  const pb::Reflection* reflection = message.GetReflection();
  std::vector<const pb::FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const pb::FieldDescriptor* field : fields) {
    const std::string name = absl::StrCat(where, ".", field->name());
    if (field->cpp_type() != pb::FieldDescriptor::CPPTYPE_INT64) continue;
    if (field->is_repeated()) {
      const auto values = reflection->GetRepeatedFieldRef<int64_t>(message, field);
      if (values.size() > kMaxListLength) {
        v->Add(absl::StrCat(name, " has ", values.size(), " entries; at most ", kMaxListLength,
                            " are accepted"));
        continue;
      }
      pb::RepeatedField<int64_t> copy(values.begin(), values.end());
      ValidateInts(name, copy, 0, v);
    } else if (int64_t value = reflection->GetInt64(message, field); value < 0) {
      v->Add(absl::StrCat(name, " is ", value, "; it must be >= 0"));
    }
  }
}

void ValidateProblem(const Problem& problem, Validator* v) {
  if (problem.dtype().empty()) v->Add("problem.dtype is empty (e.g. \"f16\")");
  const pb::Message* op = OperatorMessage(problem);
  if (op == nullptr) {
    v->Add(absl::StrCat("problem has no operator; give one of ", OperatorList()));
    return;
  }
  ValidateOperatorNumbers(*op, absl::StrCat("problem.", OperatorName(problem)), v);
}

// `require_path`: a winner must name its lowering path; a candidate that failed before
// lowering may not have one. Which paths an operator has is the RecordValidator's check.
void ValidateVariant(absl::string_view name, const Variant& variant, bool require_path,
                     Validator* v) {
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
  if (lowering.path().empty() && require_path) {
    v->Add(absl::StrCat(name, ".lowering.path is empty; the winner must name its path"));
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
  const int32_t vector = lowering.vector_bytes();
  if (vector > 16 || (vector & (vector - 1)) != 0) {
    v->Add(absl::StrCat(name, ".lowering.vector_bytes is ", vector,
                        "; accepted are 0 (none recorded), 1, 2, 4, 8 and 16"));
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
  const std::tuple<absl::string_view, double, double> bounded[] = {
      {"median_us", s.median_us(), kMaxMicroseconds},
      {"gbps", s.gbps(), kMaxGbps},
      {"ceiling_gbps", s.ceiling_gbps(), kMaxGbps},
      {"fraction_of_ceiling", s.fraction_of_ceiling(), kMaxFractionOfCeiling}};
  for (const auto& [field, value, most] : bounded) {
    if (std::isfinite(value) && value > most) {
      v->Add(absl::StrCat(name, ".", field, " is ", value, "; no measurement gives more than ",
                          most));
    }
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
  if (!record.has_winner()) {
    v->Add("winner is missing");
  } else {
    ValidateVariant("winner", record.winner(), /*require_path=*/true, v);
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
    ValidateVariant(name, candidate.variant(), /*require_path=*/false, v);
    if (candidate.status() == CandidateResult::OK || candidate.has_statistics()) {
      ValidateStatistics(absl::StrCat(name, ".statistics"), candidate.statistics(), v);
    }
  }
  for (int i = 0; i < record.baselines_size(); ++i) {
    const Baseline& baseline = record.baselines(i);
    const std::string name = absl::StrCat("baselines[", i, "]");
    if (baseline.name().empty()) v->Add(absl::StrCat(name, ".name is empty"));
    if (baseline.unavailable().empty() != baseline.has_statistics()) {
      v->Add(absl::StrCat(name, " (", baseline.name(),
                          ") must have statistics or say why it is unavailable, not both"));
    }
    if (baseline.has_statistics()) {
      ValidateStatistics(absl::StrCat(name, ".statistics"), baseline.statistics(), v);
    }
    if (!NonNegativeFinite(baseline.speedup()) || baseline.speedup() > kMaxSpeedup) {
      v->Add(absl::StrCat(name, ".speedup is ", baseline.speedup(),
                          "; it must be finite, >= 0 and at most ", kMaxSpeedup));
    }
  }
  const std::pair<absl::string_view, double> non_negative[] = {
      {"vs_baseline", record.vs_baseline()},
      {"size_matched_ceiling_gbps", record.size_matched_ceiling_gbps()},
      {"fraction_of_size_matched_ceiling", record.fraction_of_size_matched_ceiling()}};
  for (const auto& [field, value] : non_negative) {
    if (!NonNegativeFinite(value)) {
      v->Add(absl::StrCat(field, " is ", value, "; it must be finite and >= 0"));
    }
  }
  const std::tuple<absl::string_view, double, double> bounded[] = {
      {"vs_baseline", record.vs_baseline(), kMaxSpeedup},
      {"size_matched_ceiling_gbps", record.size_matched_ceiling_gbps(), kMaxGbps},
      {"fraction_of_size_matched_ceiling", record.fraction_of_size_matched_ceiling(),
       kMaxFractionOfCeiling}};
  for (const auto& [field, value, most] : bounded) {
    if (std::isfinite(value) && value > most) {
      v->Add(absl::StrCat(field, " is ", value, "; no measurement gives more than ", most));
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

// OK for a version this build can read (1 to `newest`).
absl::Status CheckVersion(int64_t version, int newest) {
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

// An integer as the text format writes it: decimal, 0x hexadecimal or 0 octal, signed.
absl::StatusOr<int64_t> ParseTextInteger(absl::string_view token) {
  const bool negative = absl::ConsumePrefix(&token, "-");
  int base = 10;
  if (absl::ConsumePrefix(&token, "0x") || absl::ConsumePrefix(&token, "0X")) {
    base = 16;
  } else if (token.size() > 1 && token[0] == '0') {
    base = 8;
    token.remove_prefix(1);
  }
  uint64_t value = 0;
  bool ok = !token.empty();
  for (char c : token) {
    int digit = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                : std::isxdigit(static_cast<unsigned char>(c))
                    ? std::tolower(static_cast<unsigned char>(c)) - 'a' + 10
                    : base;
    if (digit >= base || value > (uint64_t{1} << 62) / static_cast<uint64_t>(base)) {
      ok = false;
      break;
    }
    value = value * static_cast<uint64_t>(base) + static_cast<uint64_t>(digit);
  }
  if (!ok) return absl::InvalidArgumentError("schema_version is not an integer");
  return negative ? -static_cast<int64_t>(value) : static_cast<int64_t>(value);
}

// The top-level `schema_version` of a text database, read by a scanner of its own rather
// than the protobuf parser, so that a file of any version (or none) is classified in one
// linear pass bounded in depth: it skips comments and strings, follows the nesting of
// `{ }` and `< >` through the whole file, and rejects nesting deeper than kMaxNesting
// anywhere. 0 when the file names no version.
absl::StatusOr<int64_t> TextSchemaVersion(absl::string_view text) {
  int depth = 0;
  std::optional<int64_t> version;
  size_t i = 0;
  auto skip_space = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  while (i < text.size()) {
    const char c = text[i];
    if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '"' || c == '\'') {
      for (++i; i < text.size() && text[i] != c && text[i] != '\n'; ++i) {
        if (text[i] == '\\') ++i;
      }
      ++i;
    } else if (c == '{' || c == '<') {
      if (++depth > kMaxNesting) {
        return absl::InvalidArgumentError(absl::StrCat(
            "messages nest deeper than ", kMaxNesting, " levels; a tuning database nests 5"));
      }
      ++i;
    } else if (c == '}' || c == '>') {
      --depth;
      ++i;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = i;
      while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) ||
                                 text[i] == '_')) {
        ++i;
      }
      if (depth != 0 || version.has_value() ||
          text.substr(start, i - start) != "schema_version") {
        continue;
      }
      skip_space();
      if (i < text.size() && text[i] == ':') ++i;
      skip_space();
      size_t number = i;
      if (i < text.size() && text[i] == '-') ++i;
      while (i < text.size() && std::isalnum(static_cast<unsigned char>(text[i]))) ++i;
      absl::StatusOr<int64_t> value = ParseTextInteger(text.substr(number, i - number));
      if (!value.ok()) return value.status();
      version = *value;
    } else {
      ++i;
    }
  }
  return version.value_or(0);
}

// The schema_version of a binary database (the first field of every version).
absl::StatusOr<int64_t> BinarySchemaVersion(absl::string_view bytes, absl::string_view origin) {
  DatabaseHeader header;
  pb::io::CodedInputStream input(reinterpret_cast<const uint8_t*>(bytes.data()),
                                 static_cast<int>(bytes.size()));
  input.SetRecursionLimit(kMaxNesting);
  if (!header.ParseFromCodedStream(&input)) {
    std::string message = absl::StrCat(
        origin,
        ": not a binary TuningDatabase: the protobuf wire format does not parse (a truncated or "
        "corrupt file)");
    if (LooksLikeText(bytes)) {
      absl::StrAppend(&message,
                      "; it looks like text format: text databases must be named "
                      "*.textproto or *.txtpb");
    }
    return absl::InvalidArgumentError(message);
  }
  return header.schema_version();
}


absl::Status ParseBinary(absl::string_view bytes, absl::string_view origin,
                         pb::Message* database) {
  pb::io::CodedInputStream input(reinterpret_cast<const uint8_t*>(bytes.data()),
                                 static_cast<int>(bytes.size()));
  input.SetRecursionLimit(kMaxNesting);
  if (database->ParseFromCodedStream(&input) && input.ConsumedEntireMessage()) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      origin,
      ": not a binary TuningDatabase: the protobuf wire format does not parse (a truncated or "
      "corrupt file)"));
}

// Parses `bytes` into `database` and checks what every version shares: no unknown
// fields, and a record_count trailer that matches.
template <typename Database>
absl::Status ParseChecked(absl::string_view bytes, DatabaseFormat format, absl::string_view origin,
                          Database* database) {
  {
    // Protobuf logs invalid UTF-8 in strings to stderr; validation says it instead.
    pb::LogSilencer silence;
    TT_RETURN_IF_ERROR(format == DatabaseFormat::kText ? ParseTextMessage(bytes, origin, database)
                                                       : ParseBinary(bytes, origin, database));
  }
  FieldProblems field_problems;
  FindFieldProblems(*database, "", &field_problems);
  const std::vector<std::string>& unknown = field_problems.unknown_fields;
  if (!unknown.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        origin, ": holds fields schema version ", database->schema_version(), " does not define (",
        absl::StrJoin(unknown.begin(), unknown.begin() + std::min<size_t>(unknown.size(), 4), ", "),
        unknown.size() > 4 ? ", ..." : "", "): a corrupt file or not a tuning database"));
  }
  if (!database->has_record_count()) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin,
                     ": record_count is missing: the file is truncated, or was written by "
                     "hand (then add `record_count: ",
                     database->records_size(), "` at its end)"));
  }
  if (database->record_count() != static_cast<uint64_t>(database->records_size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        origin, ": record_count says ", database->record_count(), " records but the file holds ",
        database->records_size(), ": the file is truncated or was edited"));
  }
  return absl::OkStatus();
}

absl::Status CheckChecksum(const TuningDatabase& database, absl::string_view origin) {
  const std::string expected = RecordsSha256(database);
  if (database.records_sha256().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        origin,
        ": records_sha256 is missing: the file is truncated, or was written by hand (then add "
        "`records_sha256: \"",
        expected, "\"` at its end)"));
  }
  if (database.records_sha256() != expected) {
    return absl::InvalidArgumentError(absl::StrCat(
        origin, ": records_sha256 does not match the records: the file is corrupt or was "
                "edited (if you edited it on purpose, set records_sha256: \"",
        expected, "\")"));
  }
  return absl::OkStatus();
}

// --- Schema 1 ------------------------------------------------------------------------

// Converts between messages whose fields are the same in both schemas.
template <typename To, typename From>
absl::StatusOr<To> Carry(const From& from) {
  To to;
  if (!to.ParseFromString(SerializeDeterministically(from))) {
    return absl::InvalidArgumentError(absl::StrCat("its ", From::descriptor()->name(),
                                                   " does not convert to schema ",
                                                   kCurrentSchemaVersion));
  }
  return to;
}

// Dense row-major strides of `shape`, in wrapping arithmetic as schema 1's keys read them
// (absurd shapes are then rejected by the operator's validation, not mangled here).
std::vector<int64_t> DenseStrides(absl::Span<const int64_t> shape) {
  std::vector<int64_t> strides(shape.size());
  uint64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = static_cast<int64_t>(stride);
    stride *= static_cast<uint64_t>(shape[i]);
  }
  return strides;
}

template <typename Repeated>
void Fill(pb::RepeatedField<int64_t>* out, const Repeated& given,
          const std::vector<int64_t>& fallback) {
  if (given.empty()) {
    out->Add(fallback.begin(), fallback.end());
  } else {
    out->Add(given.begin(), given.end());
  }
}

absl::StatusOr<Problem> UpgradeProblem(const v1::Problem& old) {
  Problem problem;
  problem.set_dtype(old.dtype());
  const std::vector<int64_t> shape(old.shape().begin(), old.shape().end());
  if (old.op() == "copy") {
    CopyProblem* copy = problem.mutable_copy();
    copy->mutable_shape()->Add(shape.begin(), shape.end());
    const std::vector<int64_t> zeros(shape.size(), 0);
    // Without strides a side's buffer is dense and just large enough for its region,
    // offsets included.
    auto dense = [&](const auto& offsets) {
      std::vector<int64_t> extent = shape;
      if (offsets.size() == static_cast<int>(shape.size())) {
        for (size_t d = 0; d < shape.size(); ++d) {
          extent[d] = static_cast<int64_t>(static_cast<uint64_t>(extent[d]) +
                                           static_cast<uint64_t>(offsets[d]));
        }
      }
      return DenseStrides(extent);
    };
    Fill(copy->mutable_src_strides(), old.src_strides(), dense(old.src_offset()));
    Fill(copy->mutable_src_offset(), old.src_offset(), zeros);
    Fill(copy->mutable_dst_strides(), old.dst_strides(), dense(old.dst_offset()));
    Fill(copy->mutable_dst_offset(), old.dst_offset(), zeros);
    return problem;
  }
  if (old.op() == "im2col") {
    const v1::Im2colGeometry& g = old.im2col();
    Im2colProblem* im2col = problem.mutable_im2col();
    im2col->set_n(g.n());
    im2col->set_h(g.h());
    im2col->set_w(g.w());
    im2col->set_c(g.c());
    im2col->set_kh(g.kh());
    im2col->set_kw(g.kw());
    im2col->set_sh(g.sh());
    im2col->set_sw(g.sw());
    im2col->set_dh(g.dh());
    im2col->set_dw(g.dw());
    im2col->set_ph(g.ph());
    im2col->set_pw(g.pw());
    // Schema 1 kept the image's strides as src_strides; block_m x block_k was always the
    // whole column matrix, which is what an im2col problem is now.
    Fill(im2col->mutable_img_strides(), old.src_strides(),
         DenseStrides({g.n(), g.h(), g.w(), g.c()}));
    return problem;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("problem.op is ", Quote(old.op()), "; schema 1 knew \"copy\" and \"im2col\""));
}

absl::Status UpgradeRecord(const v1::TuningRecord& from, TuningRecord* to) {
  if (from.has_device()) {
    TT_ASSIGN_OR_RETURN(*to->mutable_device(), Carry<DeviceIdentity>(from.device()));
  }
  if (from.has_problem()) {
    TT_ASSIGN_OR_RETURN(*to->mutable_problem(), UpgradeProblem(from.problem()));
  }
  if (from.has_winner()) {
    TT_ASSIGN_OR_RETURN(*to->mutable_winner(), Carry<Variant>(from.winner()));
  }
  if (from.has_winner_statistics()) {
    TT_ASSIGN_OR_RETURN(*to->mutable_winner_statistics(),
                        Carry<Statistics>(from.winner_statistics()));
  }
  for (const v1::CandidateResult& candidate : from.candidates()) {
    TT_ASSIGN_OR_RETURN(*to->add_candidates(), Carry<CandidateResult>(candidate));
  }
  if (from.has_provenance()) {
    TT_ASSIGN_OR_RETURN(*to->mutable_provenance(), Carry<Provenance>(from.provenance()));
  }
  return absl::OkStatus();
}

}  // namespace

DatabaseFormat FormatForPath(absl::string_view path) {
  return absl::EndsWith(path, ".textproto") || absl::EndsWith(path, ".txtpb")
             ? DatabaseFormat::kText
             : DatabaseFormat::kBinary;
}

absl::StatusOr<TuningDatabase> UpgradeFromV1(const v1::TuningDatabase& old) {
  TuningDatabase database;
  database.set_schema_version(kCurrentSchemaVersion);
  for (int i = 0; i < old.records_size(); ++i) {
    const v1::TuningRecord& from = old.records(i);
    TuningRecord* to = database.add_records();
    absl::Status upgraded = UpgradeRecord(from, to);
    if (!upgraded.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("schema-1 record ", i, ": ", upgraded.message()));
    }
  }
  database.set_record_count(database.records_size());
  database.set_records_sha256(RecordsSha256(database));
  return database;
}

absl::StatusOr<TuningDatabase> ParseTuningDatabase(absl::string_view bytes, DatabaseFormat format,
                                                   absl::string_view origin,
                                                   const ReadOptions& options) {
  if (bytes.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(origin,
                                                   ": empty file; a tuning database holds at least "
                                                   "schema_version and its trailer"));
  }
  if (bytes.size() > static_cast<size_t>(kMaxDatabaseBytes)) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": ", bytes.size(),
                                                   " bytes; databases are read up to ",
                                                   kMaxDatabaseBytes, " bytes"));
  }
  if (format == DatabaseFormat::kText && !LooksLikeText(bytes)) {
    return absl::InvalidArgumentError(absl::StrCat(
        origin, ": not a text-format TuningDatabase: it holds binary data (control bytes in "
        "its first 256); a binary database is named anything but *.textproto or *.txtpb, "
        "e.g. *.pb"));
  }
  absl::StatusOr<int64_t> version = format == DatabaseFormat::kText
                                        ? TextSchemaVersion(bytes)
                                        : BinarySchemaVersion(bytes, origin);
  if (!version.ok()) {
    return format == DatabaseFormat::kText
               ? absl::InvalidArgumentError(absl::StrCat(
                     origin, ": not a text-format TuningDatabase: ", version.status().message()))
               : version.status();
  }
  TT_RETURN_IF_ERROR(WithOrigin(origin, CheckVersion(*version, kCurrentSchemaVersion)));
  TuningDatabase database;
  if (*version == 1) {
    v1::TuningDatabase old;
    TT_RETURN_IF_ERROR(ParseChecked(bytes, format, origin, &old));
    absl::StatusOr<TuningDatabase> upgraded = UpgradeFromV1(old);
    TT_RETURN_IF_ERROR(WithOrigin(origin, upgraded.status()));
    database = *std::move(upgraded);
    if (options.notes != nullptr) {
      options.notes->push_back(absl::StrCat(
          origin, ": schema 1, upgraded to ", kCurrentSchemaVersion,
          " in memory; it has no records_sha256 (schema 1 had no checksum), so corruption "
          "that keeps it parseable cannot be detected: rewrite it to add one"));
    }
  } else {
    TT_RETURN_IF_ERROR(ParseChecked(bytes, format, origin, &database));
    // Versions from 2 on share one layout and differ only by added fields (a new
    // operator's problem message, say), so an older one reads as it is.
    database.set_schema_version(kCurrentSchemaVersion);
  }
  TT_RETURN_IF_ERROR(ValidateTuningDatabase(database, origin, options.semantics));
  // After validation, so that a value the schema refuses is named as such; any other
  // change to the records since they were written fails here.
  if (*version != 1) TT_RETURN_IF_ERROR(CheckChecksum(database, origin));
  return database;
}

absl::StatusOr<TuningDatabase> ReadTuningDatabase(absl::string_view path,
                                                  const ReadOptions& options) {
  absl::StatusOr<std::string> bytes = ReadFileToString(path, kMaxDatabaseBytes);
  if (absl::IsResourceExhausted(bytes.status())) {
    return absl::InvalidArgumentError(
        absl::StrCat(bytes.status().message(), ": too large for a tuning database"));
  }
  TT_RETURN_IF_ERROR(bytes.status());
  return ParseTuningDatabase(*bytes, FormatForPath(path), path, options);
}

std::string RecordsSha256(const TuningDatabase& database) {
  TuningDatabase records_only;
  *records_only.mutable_records() = database.records();
  return Sha256Hex(SerializeDeterministically(records_only));
}

absl::StatusOr<std::string> SerializeTuningDatabase(const TuningDatabase& database,
                                                    DatabaseFormat format,
                                                    const RecordValidator& semantics) {
  if (database.schema_version() != 0 && database.schema_version() != kCurrentSchemaVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot write a database of schema_version ", database.schema_version(),
                     "; this build writes version ", kCurrentSchemaVersion));
  }
  TuningDatabase stamped = database;
  stamped.set_schema_version(kCurrentSchemaVersion);
  stamped.set_record_count(stamped.records_size());
  stamped.set_records_sha256(RecordsSha256(stamped));
  TT_RETURN_IF_ERROR(ValidateTuningDatabase(stamped, "refusing to write", semantics));
  std::string bytes;
  if (format == DatabaseFormat::kText) {
    pb::TextFormat::Printer printer;
    if (!printer.PrintToString(stamped, &bytes)) {
      return absl::InternalError("text-format printing of the tuning database failed");
    }
    return absl::StrCat(
        "# proto-file: compiler/tuning_db/tuning_db.proto\n"
        "# proto-message: tiletune.tuning.TuningDatabase\n",
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

absl::Status WriteTuningDatabase(const TuningDatabase& database, absl::string_view path,
                                 const RecordValidator& semantics) {
  absl::StatusOr<std::string> bytes =
      SerializeTuningDatabase(database, FormatForPath(path), semantics);
  if (!bytes.ok()) return WithOrigin(path, bytes.status());
  return WriteFileAtomically(path, *bytes);
}

absl::Status ValidateTuningDatabase(const TuningDatabase& database, absl::string_view origin,
                                    const RecordValidator& semantics) {
  if (database.schema_version() != kCurrentSchemaVersion) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": schema_version is ",
                                                   database.schema_version(), "; expected ",
                                                   kCurrentSchemaVersion));
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
    const int before = validator.count();
    ValidateRecord(record, &validator);
    if (semantics && validator.count() == before) {
      if (absl::Status status = semantics(record); !status.ok()) {
        validator.Add(std::string(status.message()));
      }
    }
    auto [it, inserted] = first_index.emplace(key, i);
    if (!inserted) {
      validator.Add(absl::StrCat("duplicate of record ", it->second,
                                 ": one database holds one record per key (merge "
                                 "databases with `autotune merge`)"));
    }
  }
  return validator.ToStatus(origin);
}

std::string OperatorName(const Problem& problem) {
  const pb::FieldDescriptor* field =
      problem.GetReflection()->GetOneofFieldDescriptor(problem, &OperatorOneof());
  return field == nullptr ? "" : field->name();
}

const pb::Message* OperatorMessage(const Problem& problem) {
  const pb::FieldDescriptor* field =
      problem.GetReflection()->GetOneofFieldDescriptor(problem, &OperatorOneof());
  return field == nullptr ? nullptr : &problem.GetReflection()->GetMessage(problem, field);
}

std::string DeviceKey(const DeviceIdentity& device) {
  return absl::StrCat(Quote(device.name()), " sm_", device.cc_major(), ".", device.cc_minor());
}

std::string ProblemKey(const Problem& problem) {
  const pb::Message* op = OperatorMessage(problem);
  if (op == nullptr) return absl::StrCat("(no operator) ", Quote(problem.dtype()));
  std::string key = absl::StrCat(Quote(OperatorName(problem)), " ", Quote(problem.dtype()));
  // Every scalar field in declaration order, set or not, so that keys never depend on
  // which fields a writer left at their default; every non-empty list. (Canonical form
  // writes a list out in full or, for an optional one such as a copy's dst_shape, not at
  // all; leaving empty lists out keeps the keys of problems from before a list was added.)
  // An enum field (a choice such as im2col's col_order) appears by its value's number when
  // it is not 0: its value 0 is the behaviour from before the field existed, so those
  // problems keep their keys too.
  const pb::Descriptor* descriptor = op->GetDescriptor();
  const pb::Reflection* reflection = op->GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const pb::FieldDescriptor* field = descriptor->field(i);
    if (field->is_repeated() && reflection->FieldSize(*op, field) == 0) continue;
    if (field->cpp_type() == pb::FieldDescriptor::CPPTYPE_ENUM && !field->is_repeated()) {
      const int value = reflection->GetEnumValue(*op, field);
      if (value != 0) absl::StrAppend(&key, " ", field->name(), "=", value);
      continue;
    }
    absl::StrAppend(&key, " ", field->name(), "=");
    if (field->cpp_type() != pb::FieldDescriptor::CPPTYPE_INT64) {
      absl::StrAppend(&key, "?");  // Operators' problems hold integers and enums only.
    } else if (field->is_repeated()) {
      const auto values = reflection->GetRepeatedFieldRef<int64_t>(*op, field);
      absl::StrAppend(&key, FormatInts(std::vector<int64_t>(values.begin(), values.end())));
    } else {
      absl::StrAppend(&key, reflection->GetInt64(*op, field));
    }
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
  if ((c = Compare(la.form(), lb.form())) != 0) return c;
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
  if (!l.form().empty()) parts.push_back(l.form());
  if (!l.tile().empty()) {
    parts.push_back(absl::StrCat("tile=", FormatInts(std::vector<int64_t>(l.tile().begin(),
                                                                          l.tile().end()))));
  }
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

absl::Status ParseTextMessage(absl::string_view bytes, absl::string_view origin,
                              google::protobuf::Message* message) {
  FirstErrorCollector errors;
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.SetRecursionLimit(kMaxNesting);
  pb::io::ArrayInputStream input(bytes.data(), static_cast<int>(bytes.size()));
  if (parser.Parse(&input, message)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(origin, ": not a text-format ", message->GetDescriptor()->name(), ": ",
                   errors.has_error() ? errors.error() : "the parser rejected it"));
}

}  // namespace tuning
}  // namespace tiletune

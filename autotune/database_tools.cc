#include "autotune/database_tools.h"

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "compiler/base/abbreviate.h"
#include "compiler/base/command_line.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/tuning_db/atomic_file.h"
#include "compiler/tuning_db/tuning_db.h"
#include "google/protobuf/util/json_util.h"

namespace tiletune {
namespace autotune {
namespace {

// "copy:f16:8192,8192 on NVIDIA H200 sm_9.0", the spec where the grammar has one.
std::string Where(const tuning::TuningRecord& record, const TileOpRegistry& ops) {
  std::string problem = ops.DescribeProblem(record.problem());
  if (absl::StatusOr<std::unique_ptr<TileOp>> op = ops.FromProblem(record.problem()); op.ok()) {
    if (absl::StatusOr<std::string> spec = ops.FormatSpec(**op); spec.ok()) problem = *spec;
  }
  return absl::StrCat(problem, " on ", Printable(record.device().name()), " sm_",
                      record.device().cc_major(), ".", record.device().cc_minor());
}

std::string Provenance(const tuning::TuningRecord& r) {
  return absl::StrCat(Printable(r.provenance().tool_version()), ", host ",
                      Printable(r.provenance().host()), ", driver ",
                      Printable(r.device().driver_version()), ", CUDA ", r.device().cuda_version(),
                      ", NVRTC ", Printable(r.device().nvrtc_version()));
}

absl::StatusOr<tuning::TuningDatabase> Read(const std::string& path, const TileOpRegistry& ops) {
  tuning::ReadOptions read;
  read.semantics = ops.RecordValidator();
  return tuning::ReadTuningDatabase(UserPath(path), read);
}

}  // namespace

std::vector<RecordDiff> DiffDatabases(const tuning::TuningDatabase& before,
                                      const tuning::TuningDatabase& after,
                                      const TileOpRegistry& ops) {
  std::map<std::string, std::pair<const tuning::TuningRecord*, const tuning::TuningRecord*>> keys;
  for (const tuning::TuningRecord& r : before.records()) keys[tuning::RecordKey(r)].first = &r;
  for (const tuning::TuningRecord& r : after.records()) keys[tuning::RecordKey(r)].second = &r;
  std::vector<RecordDiff> diffs;
  for (const auto& [key, pair] : keys) {
    const auto [a, b] = pair;
    RecordDiff diff;
    diff.key = key;
    if (a == nullptr || b == nullptr) {
      const tuning::TuningRecord& r = a != nullptr ? *a : *b;
      diff.kind = a == nullptr ? RecordDiff::Kind::kAdded : RecordDiff::Kind::kRemoved;
      diff.line = absl::StrFormat("%s %s: %s, %.3f us", a == nullptr ? "added" : "removed",
                                  Where(r, ops), tuning::DescribeVariant(r.winner()),
                                  r.winner_statistics().median_us());
      diffs.push_back(std::move(diff));
      continue;
    }
    const double ta = a->winner_statistics().median_us(), tb = b->winner_statistics().median_us();
    const bool same_winner = tuning::CompareVariants(a->winner(), b->winner()) == 0;
    const bool same_time = tuning::SerializeDeterministically(a->winner_statistics()) ==
                           tuning::SerializeDeterministically(b->winner_statistics());
    const bool same_provenance = Provenance(*a) == Provenance(*b);
    if (same_winner && same_time && same_provenance &&
        tuning::SerializeDeterministically(*a) == tuning::SerializeDeterministically(*b)) {
      continue;
    }
    if (!same_winner) {
      diff.kind = RecordDiff::Kind::kWinner;
      diff.line = absl::StrFormat("winner %s: %s (%.3f us) -> %s (%.3f us), %.3fx", Where(*a, ops),
                                  tuning::DescribeVariant(a->winner()), ta,
                                  tuning::DescribeVariant(b->winner()), tb, tb > 0 ? ta / tb : 0);
    } else if (!same_time) {
      diff.kind = RecordDiff::Kind::kTime;
      diff.line = absl::StrFormat("time %s: %s, %.3f us -> %.3f us, %.3fx", Where(*a, ops),
                                  tuning::DescribeVariant(a->winner()), ta, tb, tb > 0 ? ta / tb : 0);
    } else {
      diff.kind = RecordDiff::Kind::kProvenance;
      diff.line = absl::StrCat("provenance ", Where(*a, ops), ": ",
                               same_provenance ? "other candidates or baselines"
                                               : absl::StrCat(Provenance(*a), " -> ", Provenance(*b)));
    }
    if (!same_provenance && diff.kind != RecordDiff::Kind::kProvenance) {
      absl::StrAppend(&diff.line, " [", Provenance(*a), " -> ", Provenance(*b), "]");
    }
    diffs.push_back(std::move(diff));
  }
  return diffs;
}

std::string ExportCsv(const tuning::TuningDatabase& database, const TileOpRegistry& ops) {
  auto cell = [](absl::string_view text) {
    // RFC 4180: quoted, quotes doubled; a leading = + - @ could start a spreadsheet
    // formula, so such a cell is prefixed with a quote mark.
    std::string value(text);
    if (!value.empty() && std::string("=+-@").find(value[0]) != std::string::npos) {
      value = "'" + value;
    }
    return absl::StrCat(
        "\"", absl::StrReplaceAll(value, {{"\"", "\"\""}, {"\n", " "}, {"\r", " "}}), "\"");
  };
  std::string csv =
      "device,cc,problem,winner,path,form,median_us,gbps,of_memcpy,of_dram,baseline,"
      "vs_baseline,samples,tool_version,host,unix_time_s\n";
  for (const tuning::TuningRecord& r : database.records()) {
    std::string problem = ops.DescribeProblem(r.problem());
    if (absl::StatusOr<std::unique_ptr<TileOp>> op = ops.FromProblem(r.problem()); op.ok()) {
      if (absl::StatusOr<std::string> spec = ops.FormatSpec(**op); spec.ok()) problem = *spec;
    }
    std::string baseline;
    for (const tuning::Baseline& b : r.baselines()) {
      if (b.name() != "cudaMemcpy" || baseline.empty()) baseline = b.name();
    }
    const tuning::Statistics& s = r.winner_statistics();
    absl::StrAppend(
        &csv, cell(r.device().name()), ",", r.device().cc_major(), ".", r.device().cc_minor(), ",",
        cell(problem), ",", cell(tuning::DescribeVariant(r.winner())), ",",
        cell(r.winner().lowering().path()), ",", cell(r.winner().lowering().form()), ",",
        absl::StrFormat("%.4f,%.2f,%.4f,%.4f", s.median_us(), s.gbps(),
                        r.fraction_of_size_matched_ceiling(), s.fraction_of_ceiling()),
        ",", cell(baseline), ",", absl::StrFormat("%.4f", r.vs_baseline()), ",", s.sample_count(),
        ",", cell(r.provenance().tool_version()), ",", cell(r.provenance().host()), ",",
        r.provenance().unix_time_s(), "\n");
  }
  return csv;
}

absl::StatusOr<std::string> ExportJson(const tuning::TuningDatabase& database) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  const google::protobuf::util::Status status =
      google::protobuf::util::MessageToJsonString(database, &json, options);
  if (!status.ok()) {
    return absl::InternalError(absl::StrCat("JSON printer: ", status.ToString()));
  }
  return json;
}

int RunDiffCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err) {
  absl::StatusOr<CommandLine> line = ParseCommandLine(args, {}, 2);
  if (line.ok() && line->help()) {
    std::fprintf(out,
                 "usage: autotune diff BEFORE AFTER\n\nWhat changed between two tuning "
                 "databases, one line per record key: added, removed,\nthe winner (with the "
                 "speed ratio before/after time: above 1 the new one is faster),\nits time "
                 "alone, or its provenance (tiletune version, host, driver, CUDA, NVRTC).\n\n"
                 "flags:\n%s\nenvironment:\n%s\nexit codes: 0 the same records; 1 they "
                 "differ; 2 usage error; 3 a database does not read\n",
                 FlagHelp({}).c_str(), EnvironmentHelp().c_str());
    return 0;
  }
  if (line.ok() && line->version()) {
    std::fprintf(out, "%s\n", VersionLine("autotune diff").c_str());
    return 0;
  }
  if (line.ok() && line->positional().size() != 2) {
    line = absl::InvalidArgumentError("give two databases: autotune diff BEFORE AFTER");
  }
  if (!line.ok()) {
    std::fprintf(err, "autotune diff: %s\n", BoundedMessage(line.status().message()).c_str());
    return 2;
  }
  const TileOpRegistry& ops = BuiltinTileOps();
  std::vector<tuning::TuningDatabase> databases;
  for (const std::string& path : line->positional()) {
    absl::StatusOr<tuning::TuningDatabase> database = Read(path, ops);
    if (!database.ok()) {
      std::fprintf(err, "autotune diff: %s\n", BoundedMessage(database.status().message()).c_str());
      return 3;
    }
    databases.push_back(*std::move(database));
  }
  const std::vector<RecordDiff> diffs = DiffDatabases(databases[0], databases[1], ops);
  std::map<RecordDiff::Kind, int> counts;
  for (const RecordDiff& diff : diffs) {
    std::fprintf(out, "%s\n", diff.line.c_str());
    ++counts[diff.kind];
  }
  std::fprintf(out,
               "autotune diff: %d records -> %d records: %d added, %d removed, %d new winners, "
               "%d new times, %d other changes\n",
               databases[0].records_size(), databases[1].records_size(),
               counts[RecordDiff::Kind::kAdded], counts[RecordDiff::Kind::kRemoved],
               counts[RecordDiff::Kind::kWinner], counts[RecordDiff::Kind::kTime],
               counts[RecordDiff::Kind::kProvenance]);
  return diffs.empty() ? 0 : 1;
}

int RunExportCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err) {
  const std::vector<FlagSpec> flags = {
      {"format", FlagType::kString, "csv|json: CSV rows, or the whole database as JSON (default csv)"},
      {"output", FlagType::kString, "PATH: write there (atomically) instead of to stdout", 'o'},
  };
  absl::StatusOr<CommandLine> line = ParseCommandLine(args, flags, 1);
  if (line.ok() && line->help()) {
    std::fprintf(out,
                 "usage: autotune export DATABASE [--format=csv|json] [-o OUTPUT]\n\nflags:\n%s\n"
                 "environment:\n%s\nexit codes: 0 written; 1 the output could not be written; 2 "
                 "usage error; 3 the database does not read\n",
                 FlagHelp(flags).c_str(), EnvironmentHelp().c_str());
    return 0;
  }
  if (line.ok() && line->version()) {
    std::fprintf(out, "%s\n", VersionLine("autotune export").c_str());
    return 0;
  }
  const std::string format = line.ok() ? line->String("format", "csv") : "";
  if (line.ok() && line->positional().size() != 1) {
    line = absl::InvalidArgumentError("give one database: autotune export DATABASE");
  } else if (line.ok() && format != "csv" && format != "json") {
    line = absl::InvalidArgumentError(
        absl::StrCat("--format=", Printable(format), ": accepted are csv and json"));
  }
  if (!line.ok()) {
    std::fprintf(err, "autotune export: %s\n", BoundedMessage(line.status().message()).c_str());
    return 2;
  }
  const TileOpRegistry& ops = BuiltinTileOps();
  absl::StatusOr<tuning::TuningDatabase> database = Read(line->positional()[0], ops);
  if (!database.ok()) {
    std::fprintf(err, "autotune export: %s\n", BoundedMessage(database.status().message()).c_str());
    return 3;
  }
  absl::StatusOr<std::string> text =
      format == "csv" ? absl::StatusOr<std::string>(ExportCsv(*database, ops)) : ExportJson(*database);
  absl::Status written = text.status();
  if (written.ok() && line->Has("output")) {
    written = tuning::WriteFileAtomically(UserPath(line->String("output")), *text);
  } else if (written.ok() && (std::fwrite(text->data(), 1, text->size(), out) != text->size() ||
                              std::fflush(out) != 0)) {
    written = absl::DataLossError("writing to stdout failed");
  }
  if (!written.ok()) {
    std::fprintf(err, "autotune export: %s\n", BoundedMessage(written.message()).c_str());
    return 1;
  }
  return 0;
}

}  // namespace autotune
}  // namespace tiletune

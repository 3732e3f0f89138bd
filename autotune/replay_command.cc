#include "autotune/replay_command.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "autotune/csv.h"
#include "compiler/backend/tuned_resolver.h"
#include "compiler/base/abbreviate.h"
#include "compiler/base/command_line.h"
#include "compiler/base/status_macros.h"
#include "compiler/lower/lowered_kernel.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/ops/candidates.h"
#include "compiler/target/target.h"
#include "compiler/tuning_db/atomic_file.h"
#include "compiler/tuning_db/tuning_db.h"
#include "kernels/library.h"
#include "kernels/shipped_databases.h"

namespace tiletune {
namespace autotune {
namespace {

constexpr char kUsage[] =
    "usage: autotune replay CORPUS... [--cost_model=FILE] [--model_margin=P] [--database=PATH] "
    "[--choices=N] [--leave_out] [--choices_csv=PATH] [-o PREFIX]";

// What one record measured: each kernel's median (the fastest where a kernel repeats), by
// source hash and by variant (the hash left out); the status of each kernel that was tried
// and did not measure; the winner's median, which the ratios are over.
struct Measured {
  std::map<std::string, double> by_sha;
  std::map<std::string, double> by_variant;
  std::map<std::string, std::string> failed_by_sha;
  double winner_us = 0;
};

std::string VariantKey(tuning::Variant variant) {
  variant.clear_source_sha256();
  return tuning::DescribeVariant(variant);
}

void KeepMin(std::map<std::string, double>& map, const std::string& key, double us) {
  if (key.empty()) return;
  auto [it, added] = map.emplace(key, us);
  if (!added && us < it->second) it->second = us;
}

Measured MeasuredOf(const tuning::TuningRecord& record) {
  Measured measured;
  auto add = [&](const tuning::Variant& variant, const tuning::Statistics& statistics) {
    const double us = statistics.median_us();
    if (!(us > 0) || !std::isfinite(us)) return;
    KeepMin(measured.by_sha, variant.source_sha256(), us);
    KeepMin(measured.by_variant, VariantKey(variant), us);
  };
  add(record.winner(), record.winner_statistics());
  measured.winner_us = record.winner_statistics().median_us();
  for (const tuning::CandidateResult& candidate : record.candidates()) {
    if (candidate.status() == tuning::CandidateResult::OK && candidate.has_statistics()) {
      add(candidate.variant(), candidate.statistics());
    } else if (candidate.status() != tuning::CandidateResult::PRUNED &&
               !candidate.variant().source_sha256().empty()) {
      measured.failed_by_sha[candidate.variant().source_sha256()] =
          tuning::CandidateResult::Status_Name(candidate.status());
    }
  }
  return measured;
}

// One kernel the library would launch, and what the record measured of it.
struct Pick {
  ResolutionLevel level = ResolutionLevel::kHeuristic;
  bool chosen_by_model = false;
  std::string kernel;  // "simt_im2col/row tile 32x128, 128 threads, 16 B"
  std::optional<double> us;
  bool by_variant = false;  // found by its variant, not its source hash
  std::string failed;       // the status of a kernel the tuning tried and could not time
  std::string error;        // why there is no kernel
  std::string detail;       // the library's account of it (Explanation::detail)
  // The kernel as lowered for the problem (for --choices_csv).
  int vector_bytes = 0;
  int threads = 0;
  int64_t tiles = 0;
  int64_t shared_bytes = 0;
};

Pick Find(const Measured& measured, const TileOpDefinition& definition, const TileOp& op,
          const Target& target, const Explanation& explained) {
  Pick pick;
  pick.level = explained.level;
  pick.chosen_by_model = explained.chosen_by_model;
  pick.kernel = explained.variant;
  pick.detail = explained.detail;
  absl::StatusOr<CandidateSet> built =
      BuildCandidates(definition, op, target, {Trial{explained.hints, explained.launch}});
  if (!built.ok() || built->candidates.empty()) {
    pick.error = built.ok() ? "it did not build" : std::string(built.status().message());
    return pick;
  }
  const Candidate& c = built->candidates.front();
  const LoweredTileKernel& l = *c.lowered;
  pick.kernel =
      absl::StrCat(LaunchSummary(l.path_name, l.form_name, l.launch), ", ", l.vector_bytes, " B");
  pick.vector_bytes = l.vector_bytes;
  pick.threads = l.launch.threads;
  pick.tiles = l.num_tiles;
  pick.shared_bytes = l.shared_bytes;
  if (auto it = measured.by_sha.find(c.source_sha256); it != measured.by_sha.end()) {
    pick.us = it->second;
  } else if (auto failed = measured.failed_by_sha.find(c.source_sha256);
             failed != measured.failed_by_sha.end()) {
    pick.failed = failed->second;
  } else if (auto it = measured.by_variant.find(VariantKey(c.variant));
             it != measured.by_variant.end()) {
    pick.us = it->second;
    pick.by_variant = true;
  }
  return pick;
}

std::string PickCell(const Pick& p) {
  if (!p.error.empty()) return absl::StrCat("none: ", p.error);
  return absl::StrCat(p.kernel, " (", ResolutionLevelName(p.level),
                      p.chosen_by_model ? ", by the model" : "", ")");
}

struct Row {
  std::string op;  // the operator ("col2im")
  std::string problem;
  double winner_us = 0;
  bool exact = false;  // the library holds the problem: no selection is exercised
  Pick nearest, model;
  // The library's choices (and the nearest record's pick): how many, how many measured,
  // the fastest measured.
  int choices = 0;
  int choices_measured = 0;
  std::optional<double> best_choice_us;
  std::string best_choice;  // the fastest choice's kernel and level (PickCell)
  // Every choice, the nearest record's pick first (for --choices_csv), and the cost model's
  // view of the nearby records (Library::Estimates), by their details.
  std::vector<Pick> picks;
  std::map<std::string, TunedResolver::NearbyEstimate> estimates;
};

// The libraries replay asks: the default selection and the cost model's.
struct Libraries {
  std::unique_ptr<Library> nearest;
  std::unique_ptr<Library> by_model;
};

// With `held` (--leave_out), the library reads those databases, held in memory, in place of
// the built-in ones or --database.
absl::StatusOr<Libraries> MakeLibraries(const CommandLine& line,
                                        const std::vector<ShippedDatabase>* held = nullptr) {
  auto make = [&](bool by_model) {
    LibraryOptions options;
    options.user_directory = "";
    options.record_misses_from_environment = false;
    options.tune_on_miss_ms = 0;
    options.cost_model = by_model;
    if (held != nullptr) {
      options.shipped = *held;
    } else if (line.Has("database")) {
      options.databases = {UserPath(line.String("database"))};
      options.builtin = false;
    }
    if (line.Has("cost_model")) options.cost_model_file = UserPath(line.String("cost_model"));
    options.cost_model_margin = static_cast<double>(line.Int("model_margin", 0)) / 100;
    return Library::Create(std::move(options));
  };
  Libraries libraries;
  absl::StatusOr<std::unique_ptr<Library>> nearest = make(false);
  if (!nearest.ok()) return nearest.status();
  if (!(*nearest)->database_status().ok()) return (*nearest)->database_status();
  absl::StatusOr<std::unique_ptr<Library>> by_model = make(true);
  if (!by_model.ok()) return by_model.status();
  return Libraries{*std::move(nearest), *std::move(by_model)};
}

// The row of one record; nullopt, with why in `skipped`, for a record replay cannot use.
std::optional<Row> ReplayRecord(const tuning::TuningRecord& record, const Libraries& libraries,
                                int choices, std::string* skipped) {
  const TileOpRegistry& ops = BuiltinTileOps();
  absl::StatusOr<const TileOpDefinition*> definition = ops.For(record.problem());
  absl::StatusOr<std::unique_ptr<TileOp>> op =
      definition.ok() ? (*definition)->FromProblem(record.problem())
                      : absl::StatusOr<std::unique_ptr<TileOp>>(definition.status());
  absl::StatusOr<Target> target = TargetOf(record.device());
  if (!op.ok() || !target.ok()) {
    *skipped = std::string(op.ok() ? target.status().message() : op.status().message());
    return std::nullopt;
  }
  Row row;
  row.op = (*definition)->name();
  row.problem = (*definition)->Describe(**op);
  const Measured measured = MeasuredOf(record);
  row.winner_us = measured.winner_us;
  if (!(row.winner_us > 0)) {
    *skipped = absl::StrCat(row.problem, ": its winner has no time");
    return std::nullopt;
  }
  auto pick = [&](const Library& library) {
    absl::StatusOr<Explanation> explained = library.Explain(**op, record.device());
    if (!explained.ok()) {
      Pick none;
      none.error = std::string(explained.status().message());
      return none;
    }
    return Find(measured, **definition, **op, *target, *explained);
  };
  row.nearest = pick(*libraries.nearest);
  row.model = pick(*libraries.by_model);
  row.exact = row.nearest.level == ResolutionLevel::kExact;
  std::vector<Pick> picks = {row.nearest};
  absl::StatusOr<std::vector<Explanation>> alternatives =
      libraries.nearest->Alternatives(**op, record.device(), choices);
  if (alternatives.ok()) {
    for (const Explanation& alternative : *alternatives) {
      picks.push_back(Find(measured, **definition, **op, *target, alternative));
    }
  }
  if (absl::StatusOr<std::vector<TunedResolver::NearbyEstimate>> nearby =
          libraries.nearest->Estimates(**op, record.device());
      nearby.ok()) {
    for (const TunedResolver::NearbyEstimate& e : *nearby) row.estimates.emplace(e.variant, e);
  }
  row.picks = picks;
  std::set<std::string> seen;
  for (const Pick& p : picks) {
    if (!p.error.empty() || !seen.insert(p.kernel).second) continue;
    ++row.choices;
    if (!p.us.has_value()) continue;
    ++row.choices_measured;
    if (!row.best_choice_us.has_value() || *p.us < *row.best_choice_us) {
      row.best_choice_us = p.us;
      row.best_choice = absl::StrCat(p.by_variant ? "~" : "", PickCell(p));
    }
  }
  return row;
}

// Geomean and worst of measured over the winner's time, over the rows `get` gives a time.
struct Summary {
  int measured = 0;
  double geomean = 0;
  double worst = 0;
  std::string worst_problem;
};
template <typename Get>
Summary Summarize(const std::vector<const Row*>& rows, Get get) {
  Summary s;
  double log_sum = 0;
  for (const Row* row : rows) {
    const std::optional<double> us = get(*row);
    if (!us.has_value()) continue;
    const double ratio = *us / row->winner_us;
    ++s.measured;
    log_sum += std::log(ratio);
    if (s.measured == 1 || ratio > s.worst) {
      s.worst = ratio;
      s.worst_problem = row->problem;
    }
  }
  if (s.measured > 0) s.geomean = std::exp(log_sum / s.measured);
  return s;
}

std::string Cell(const std::string& text) {
  return absl::StrReplaceAll(text, {{"|", "/"}, {"\n", " "}});
}

std::string RatioCell(const Pick& p, double winner_us) {
  if (p.us.has_value()) return absl::StrFormat("%s%.3f", p.by_variant ? "~" : "", *p.us / winner_us);
  return p.failed.empty() ? "not measured" : p.failed;
}

// Per operator, the selections' geomeans over its problems (those each measured).
std::string PerOperator(const std::vector<const Row*>& selected) {
  std::map<std::string, std::vector<const Row*>> of;
  for (const Row* row : selected) of[row->op].push_back(row);
  std::string md =
      "| operator | problems | nearest record | cost model (where it chose) | fastest choice |\n"
      "| --- | ---: | ---: | ---: | ---: |\n";
  auto geomean = [](const std::vector<const Row*>& rows, auto get) {
    const Summary s = Summarize(rows, get);
    return s.measured > 0 ? absl::StrFormat("%.3f (%d)", s.geomean, s.measured) : std::string("-");
  };
  for (const auto& [op, rows] : of) {
    std::vector<const Row*> by_model;
    for (const Row* row : rows) {
      if (row->model.chosen_by_model) by_model.push_back(row);
    }
    absl::StrAppend(&md, "| `", op, "` | ", rows.size(), " | ",
                    geomean(rows, [](const Row& r) { return r.nearest.us; }), " | ",
                    geomean(by_model, [](const Row& r) { return r.model.us; }), " | ",
                    geomean(rows, [](const Row& r) { return r.best_choice_us; }), " |\n");
  }
  return md;
}

std::string Markdown(const std::vector<Row>& rows, const std::string& header) {
  std::vector<const Row*> selected, exact;
  for (const Row& row : rows) (row.exact ? exact : selected).push_back(&row);
  std::vector<const Row*> by_model, both;
  for (const Row* row : selected) {
    if (row->model.chosen_by_model) by_model.push_back(row);
    if (row->model.chosen_by_model && row->nearest.us.has_value() && row->model.us.has_value()) {
      both.push_back(row);
    }
  }
  std::string md = absl::StrCat(
      "# autotune replay: the library's selections, timed by the corpus\n\n", header,
      " Each kernel's time is over the tuning's winner's; ~ marks a kernel found by its variant "
      "rather than its source (the corpus was measured with other code); a kernel the tuning "
      "did not time is left out of its selection's figures. ",
      exact.size(), " problem(s) the library holds exactly (no selection is made) are listed "
      "last and left out.\n\n"
      "| selection | problems | measured | geomean | worst |\n| --- | ---: | ---: | ---: | --- |\n");
  auto line = [&](const std::string& name, const std::vector<const Row*>& of, const Summary& s) {
    absl::StrAppend(&md, "| ", name, " | ", of.size(), " | ", s.measured, " | ",
                    s.measured > 0 ? absl::StrFormat("%.3f", s.geomean) : "-", " | ",
                    s.measured > 0 ? absl::StrFormat("%.3f (%s)", s.worst, Cell(s.worst_problem))
                                   : "-",
                    " |\n");
  };
  line("nearest record (the default)", selected,
       Summarize(selected, [](const Row& r) { return r.nearest.us; }));
  line("cost model (where it chose)", by_model,
       Summarize(by_model, [](const Row& r) { return r.model.us; }));
  line("the fastest of the library's choices", selected,
       Summarize(selected, [](const Row& r) { return r.best_choice_us; }));
  absl::StrAppend(
      &md, "\nOn the ", both.size(),
      " problem(s) where the model chose and both selections were measured: nearest record ",
      both.empty() ? "-" : absl::StrFormat("%.3f", Summarize(both, [](const Row& r) {
                                                     return r.nearest.us;
                                                   }).geomean),
      ", cost model ",
      both.empty() ? "-" : absl::StrFormat("%.3f", Summarize(both, [](const Row& r) {
                                                     return r.model.us;
                                                   }).geomean),
      ".\n\nPer operator (geomean, and in brackets the problems measured):\n\n", PerOperator(selected),
      "\n| problem | winner us | nearest record (level) | ratio | cost model (level) | ratio | "
      "choices measured | fastest choice |\n"
      "| --- | ---: | --- | ---: | --- | ---: | ---: | --- |\n");
  std::vector<const Row*> ordered = selected;
  ordered.insert(ordered.end(), exact.begin(), exact.end());
  for (const Row* row : ordered) {
    absl::StrAppend(&md, "| ", Cell(row->problem), " | ", absl::StrFormat("%.2f", row->winner_us),
                    " | ", Cell(PickCell(row->nearest)), " | ",
                    RatioCell(row->nearest, row->winner_us), " | ", Cell(PickCell(row->model)),
                    " | ", RatioCell(row->model, row->winner_us), " | ", row->choices_measured,
                    " of ", row->choices, " | ",
                    row->best_choice_us.has_value()
                        ? absl::StrFormat("%.3f: %s", *row->best_choice_us / row->winner_us,
                                          Cell(row->best_choice))
                        : "not measured",
                    " |\n");
  }
  return md;
}

// One line per choice of each problem the library does not hold exactly: its order (0: the
// nearest record's pick, then Library::Alternatives's order), level, kernel, what the corpus
// measured of it (empty: not measured) and the winner's time, and the cost model's view of
// the record it came from (distance and prediction; empty for the heuristic).
std::string ChoicesCsv(const std::vector<Row>& rows) {
  std::string csv =
      "problem,op,order,level,kernel,us,winner_us,by_variant,vector_bytes,threads,tiles,"
      "shared_bytes,distance,predicted_us\n";
  for (const Row& row : rows) {
    if (row.exact) continue;
    for (size_t i = 0; i < row.picks.size(); ++i) {
      const Pick& p = row.picks[i];
      if (!p.error.empty()) continue;
      // A pick's detail holds its record's account (the estimate's key) within its own.
      auto estimate = row.estimates.begin();
      while (estimate != row.estimates.end() &&
             p.detail.find(estimate->first) == std::string::npos) {
        ++estimate;
      }
      absl::StrAppend(
          &csv, CsvField(row.problem), ",", row.op, ",", i, ",", ResolutionLevelName(p.level), ",",
          CsvField(p.kernel), ",", p.us.has_value() ? absl::StrFormat("%.4f", *p.us) : "", ",",
          absl::StrFormat("%.4f", row.winner_us), ",", p.by_variant ? 1 : 0, ",", p.vector_bytes,
          ",", p.threads, ",", p.tiles, ",", p.shared_bytes, ",",
          estimate != row.estimates.end() ? absl::StrFormat("%.3f", estimate->second.distance)
                                          : "",
          ",",
          estimate != row.estimates.end() && estimate->second.predicted_us.has_value()
              ? absl::StrFormat("%.4f", *estimate->second.predicted_us)
              : "",
          "\n");
    }
  }
  return csv;
}

absl::StatusOr<std::vector<tuning::TuningDatabase>> ReadCorpora(
    const std::vector<std::string>& paths) {
  std::vector<tuning::TuningDatabase> corpora;
  for (const std::string& path : paths) {
    tuning::ReadOptions read;
    read.semantics = BuiltinTileOps().RecordValidator();
    absl::StatusOr<tuning::TuningDatabase> corpus = tuning::ReadTuningDatabase(UserPath(path), read);
    if (!corpus.ok()) return corpus.status();
    corpora.push_back(*std::move(corpus));
  }
  return corpora;
}

// --leave_out: the databases the library reads (--database, else the built-in ones), each
// with the keys of its records and its text (what a library of it reads, where no record is
// left out), so that a problem can be replayed without its own record.
struct HeldDatabase {
  std::string origin;
  tuning::TuningDatabase database;
  std::set<std::string> keys;
  std::string text;
};

absl::StatusOr<std::vector<HeldDatabase>> HoldDatabases(const CommandLine& line) {
  tuning::ReadOptions read;
  read.semantics = BuiltinTileOps().RecordValidator();
  std::vector<HeldDatabase> held;
  auto hold = [&](std::string origin, absl::StatusOr<tuning::TuningDatabase> database)
      -> absl::Status {
    if (!database.ok()) return database.status();
    HeldDatabase h{std::move(origin), *std::move(database), {}, ""};
    for (const tuning::TuningRecord& record : h.database.records()) {
      h.keys.insert(tuning::RecordKey(record));
    }
    TT_ASSIGN_OR_RETURN(h.text,
                        tuning::SerializeTuningDatabase(h.database, tuning::DatabaseFormat::kText));
    held.push_back(std::move(h));
    return absl::OkStatus();
  };
  if (line.Has("database")) {
    const std::string path = UserPath(line.String("database"));
    TT_RETURN_IF_ERROR(hold(path, tuning::ReadTuningDatabase(path, read)));
  } else {
    for (const ShippedDatabase& shipped : ShippedDatabases()) {
      TT_RETURN_IF_ERROR(hold(shipped.origin, tuning::ParseTuningDatabase(
                                                  shipped.text, tuning::DatabaseFormat::kText,
                                                  shipped.origin, read)));
    }
  }
  return held;
}

// The held databases less every record of `key`; nullopt where none holds one (the
// libraries of the whole databases answer then).
absl::StatusOr<std::optional<std::vector<ShippedDatabase>>> Without(
    const std::vector<HeldDatabase>& held, const std::string& key) {
  bool any = false;
  for (const HeldDatabase& h : held) any = any || h.keys.count(key) > 0;
  if (!any) return std::optional<std::vector<ShippedDatabase>>();
  std::vector<ShippedDatabase> less;
  for (const HeldDatabase& h : held) {
    if (h.keys.count(key) == 0) {
      less.push_back(ShippedDatabase{h.origin, h.text});
      continue;
    }
    tuning::TuningDatabase copy = h.database;
    copy.clear_records();
    for (const tuning::TuningRecord& record : h.database.records()) {
      if (tuning::RecordKey(record) != key) *copy.add_records() = record;
    }
    TT_ASSIGN_OR_RETURN(std::string text,
                        tuning::SerializeTuningDatabase(copy, tuning::DatabaseFormat::kText));
    less.push_back(ShippedDatabase{h.origin, std::move(text)});
  }
  return std::optional<std::vector<ShippedDatabase>>(std::move(less));
}

std::string GpuName(const tuning::DeviceIdentity& device) {
  return absl::StrCat(Printable(device.name(), 80), " (sm_", device.cc_major(), ".",
                      device.cc_minor(), ", ", device.sm_count(), " SMs)");
}

}  // namespace

int RunReplayCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err) {
  const std::vector<FlagSpec> flags = {
      {"cost_model", FlagType::kString,
       "FILE: the model the cost-model selection uses (autotune fit -o), before the built-in one"},
      {"database", FlagType::kString,
       "PATH: the database the library reads, alone (default: the built-in databases and "
       "$TILETUNE_DB; never the user folder)"},
      {"choices", FlagType::kInt,
       "N: the library's choices weighed per problem, 1 to 64 (default 9: the nearby "
       "records' variants a model weighs and the heuristic's)",
       0, 1, 64},
      {"model_margin", FlagType::kInt,
       "P: the cost model replaces the nearest record's variant only with a kernel it "
       "predicts P percent faster, 0 to 1000 (default 0: the fastest predicted)",
       0, 0, 1000},
      {"output", FlagType::kString, "PREFIX: also write the report to PREFIX.md", 'o'},
      {"choices_csv", FlagType::kString,
       "PATH: also write every choice of every problem, with what the corpus measured of it, "
       "as CSV (data for fitting a selection)"},
      {"leave_out", FlagType::kBool,
       "replay each problem without its own record in the databases (a tuning's corpus "
       "replayed against the database it went into: each problem's transfer from the others, "
       "a validation set that is not the held-out suites)"},
  };
  absl::StatusOr<CommandLine> line = ParseCommandLine(args, flags, 1 << 16);
  if (line.ok() && line->help()) {
    std::fprintf(out,
                 "%s\n  What the library would launch for each problem of the corpus (a tuning "
                 "with every\n  candidate kept: autotune --cost_model=none "
                 "--library_alternatives=9), by the\n  nearest record and by the cost model, "
                 "and what that kernel measured there; no GPU.\n\nflags:\n%s\nenvironment:\n%s\n"
                 "exit codes: 0 replayed; 1 the report could not be written; 2 usage error; 3 a "
                 "corpus, the database or the model does not read, or no record replays\n",
                 kUsage, FlagHelp(flags).c_str(), EnvironmentHelp().c_str());
    return 0;
  }
  if (line.ok() && line->version()) {
    std::fprintf(out, "%s\n", VersionLine("autotune replay").c_str());
    return 0;
  }
  if (line.ok() && line->positional().empty()) {
    line = absl::InvalidArgumentError(absl::StrCat("give at least one corpus; ", kUsage));
  }
  // --leave_out holds the databases it leaves records out of; the variables would add
  // databases it does not hold, or drop those it does.
  for (const char* name : {"TILETUNE_DB", "TILETUNE_BUILTIN_DB"}) {
    if (const char* env = std::getenv(name);
        line.ok() && line->Bool("leave_out", false) && env != nullptr && *env) {
      line = absl::InvalidArgumentError(absl::StrCat(
          name, "='", Printable(env, 40),
          "' is set: --leave_out leaves each problem's record out of the built-in databases "
          "or --database, held in memory; unset it (name a database with --database)"));
    }
  }
  // Replay sets both selections itself; the variables would change one silently.
  for (const char* name : {"TILETUNE_COST_MODEL", "TILETUNE_COST_MODEL_FILE"}) {
    if (const char* env = std::getenv(name); line.ok() && env != nullptr && *env) {
      line = absl::InvalidArgumentError(absl::StrCat(
          name, "='", Printable(env, 40),
          "' is set: replay compares the nearest record's selection with the cost model's "
          "itself (--cost_model names a model file); unset it"));
    }
  }
  if (!line.ok()) {
    std::fprintf(err, "autotune replay: %s\n", BoundedMessage(line.status().message()).c_str());
    return 2;
  }
  absl::StatusOr<std::vector<tuning::TuningDatabase>> corpora = ReadCorpora(line->positional());
  if (!corpora.ok()) {
    std::fprintf(err, "autotune replay: %s\n", BoundedMessage(corpora.status().message()).c_str());
    return 3;
  }
  absl::StatusOr<Libraries> libraries = MakeLibraries(*line);
  if (!libraries.ok()) {
    std::fprintf(err, "autotune replay: %s\n", BoundedMessage(libraries.status().message()).c_str());
    return 3;
  }
  const bool leave_out = line->Bool("leave_out", false);
  absl::StatusOr<std::vector<HeldDatabase>> held =
      leave_out ? HoldDatabases(*line) : std::vector<HeldDatabase>();
  if (!held.ok()) {
    std::fprintf(err, "autotune replay: %s\n", BoundedMessage(held.status().message()).c_str());
    return 3;
  }
  std::vector<Row> rows;
  std::set<std::string> gpus;
  int winners_only = 0, left_out = 0;
  for (const tuning::TuningDatabase& corpus : *corpora) {
    for (const tuning::TuningRecord& record : corpus.records()) {
      if (record.candidates_size() == 0) ++winners_only;
      // Without the problem's own record: libraries of the databases less it (which they
      // read from `less`).
      std::vector<ShippedDatabase> less;
      std::optional<Libraries> own;
      if (leave_out) {
        absl::StatusOr<std::optional<std::vector<ShippedDatabase>>> without =
            Without(*held, tuning::RecordKey(record));
        absl::StatusOr<Libraries> made = absl::InternalError("unset");
        if (without.ok() && without->has_value()) {
          less = **std::move(without);
          made = MakeLibraries(*line, &less);
        }
        if (!without.ok() || (without->has_value() && !made.ok())) {
          const absl::Status& failed = without.ok() ? made.status() : without.status();
          std::fprintf(err, "autotune replay: %s\n", BoundedMessage(failed.message()).c_str());
          return 3;
        }
        if (made.ok()) own = *std::move(made);
      }
      std::string skipped;
      std::optional<Row> row =
          ReplayRecord(record, own.has_value() ? *own : *libraries,
                       static_cast<int>(line->Int("choices", 9)), &skipped);
      if (!row.has_value()) {
        std::fprintf(err, "autotune replay: a record left out: %s\n", BoundedMessage(skipped).c_str());
        continue;
      }
      gpus.insert(GpuName(record.device()));
      rows.push_back(*std::move(row));
      if (own.has_value()) ++left_out;
    }
  }
  if (winners_only > 0) {
    std::fprintf(err,
                 "autotune replay: %d record(s) hold only their winner: not a corpus (a "
                 "--winners_only database?); a selection there is timed only where it is the "
                 "winner\n",
                 winners_only);
  }
  if (rows.empty()) {
    std::fprintf(err, "autotune replay: no record of the corpora could be replayed\n");
    return 3;
  }
  std::vector<std::string> paths;
  for (const std::string& path : line->positional()) paths.push_back(Printable(path, 400));
  const std::string header = absl::StrCat(
      rows.size(), " problem(s) of ", absl::StrJoin(paths, ", "), ", measured on ",
      absl::StrJoin(gpus, " and "), ". The library's databases: ",
      (*libraries).nearest->database_origin(), "; the cost model: ",
      line->Has("cost_model") ? Printable(line->String("cost_model"), 400)
                              : std::string("the built-in one of the GPU, where one is"),
      line->Int("model_margin", 0) > 0
          ? absl::StrCat(", taking a kernel over the nearest record's only when it predicts it ",
                         line->Int("model_margin", 0), "% faster")
          : "",
      leave_out ? absl::StrCat(". Each problem is replayed without its own record (--leave_out): ",
                               left_out, " of the ", rows.size(),
                               " had one in the databases and were replayed without it")
                : "",
      ".");
  if (line->Has("choices_csv")) {
    const std::string path = UserPath(line->String("choices_csv"));
    if (absl::Status written = tuning::WriteFileAtomically(path, ChoicesCsv(rows)); !written.ok()) {
      std::fprintf(err, "autotune replay: %s\n", BoundedMessage(written.message()).c_str());
      return 1;
    }
  }
  const std::string md = Markdown(rows, header);
  std::fputs(md.c_str(), out);
  if (line->Has("output")) {
    const std::string path = UserPath(line->String("output")) + ".md";
    if (absl::Status written = tuning::WriteFileAtomically(path, md); !written.ok()) {
      std::fprintf(err, "autotune replay: %s\n", BoundedMessage(written.message()).c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace autotune
}  // namespace tiletune

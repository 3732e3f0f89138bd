#include "autotune/replay_command.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
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
#include "compiler/ops/candidates.h"
#include "compiler/target/target.h"
#include "compiler/tuning_db/atomic_file.h"
#include "compiler/tuning_db/tuning_db.h"
#include "kernels/library.h"

namespace tiletune {
namespace autotune {
namespace {

constexpr char kUsage[] =
    "usage: autotune replay CORPUS... [--cost_model=FILE] [--database=PATH] [--choices=N] "
    "[-o PREFIX]";

// The kernels one record measured: time by source hash and by variant (the hash left out).
struct Measured {
  std::map<std::string, double> by_sha;
  std::map<std::string, double> by_variant;
  double fastest_us = 0;
};

std::string VariantKey(tuning::Variant variant) {
  variant.clear_source_sha256();
  return tuning::DescribeVariant(variant);
}

Measured MeasuredOf(const tuning::TuningRecord& record) {
  Measured measured;
  auto add = [&](const tuning::Variant& variant, const tuning::Statistics& statistics) {
    const double us = statistics.median_us();
    if (!(us > 0) || !std::isfinite(us)) return;
    for (auto* map : {&measured.by_sha, &measured.by_variant}) {
      const std::string key = map == &measured.by_sha ? variant.source_sha256() : VariantKey(variant);
      if (key.empty()) continue;
      auto [it, added] = map->emplace(key, us);
      if (!added) it->second = std::min(it->second, us);
    }
    if (measured.fastest_us == 0 || us < measured.fastest_us) measured.fastest_us = us;
  };
  add(record.winner(), record.winner_statistics());
  for (const tuning::CandidateResult& candidate : record.candidates()) {
    if (candidate.status() == tuning::CandidateResult::OK && candidate.has_statistics()) {
      add(candidate.variant(), candidate.statistics());
    }
  }
  return measured;
}

// One kernel the library would launch, and what it measured in the record.
struct Pick {
  std::string level;       // "nearest", "heuristic", ...
  std::string kernel;      // "simt_im2col/row tile 32x128, 128 threads, 16 B"
  std::optional<double> us;
  std::string error;       // why there is no pick
};

Pick Find(const Measured& measured, const TileOpDefinition& definition, const TileOp& op,
          const Target& target, const Explanation& explained) {
  Pick pick;
  pick.level = ResolutionLevelName(explained.level);
  absl::StatusOr<CandidateSet> built =
      BuildCandidates(definition, op, target, {Trial{explained.hints, explained.launch}});
  if (!built.ok() || built->candidates.empty()) {
    pick.error = built.ok() ? "it did not build" : std::string(built.status().message());
    pick.kernel = explained.variant;
    return pick;
  }
  const Candidate& c = built->candidates.front();
  const LoweredTileKernel& l = *c.lowered;
  pick.kernel = absl::StrCat(l.path_name, l.form_name.empty() ? "" : "/", l.form_name, " tile ",
                             absl::StrJoin(l.launch.tile, "x"), ", ", l.launch.threads, " threads",
                             l.launch.stages > 1 ? absl::StrCat(", ", l.launch.stages, " stages") : "",
                             ", ", l.vector_bytes, " B");
  if (auto it = measured.by_sha.find(c.source_sha256); it != measured.by_sha.end()) {
    pick.us = it->second;
  } else if (auto it = measured.by_variant.find(VariantKey(c.variant));
             it != measured.by_variant.end()) {
    pick.us = it->second;
  }
  return pick;
}

struct Row {
  std::string problem;
  double fastest_us = 0;
  Pick nearest, model;
  // The library's choices: how many, how many measured, the fastest measured.
  int choices = 0;
  int choices_measured = 0;
  std::optional<double> best_choice_us;
};

// Geomean and worst of measured over fastest, over the rows `pick` measured.
struct Summary {
  int measured = 0;
  double geomean = 0;
  double worst = 0;
  std::string worst_problem;
};
template <typename Get>
Summary Summarize(const std::vector<Row>& rows, Get get) {
  Summary s;
  double log_sum = 0;
  for (const Row& row : rows) {
    const std::optional<double> us = get(row);
    if (!us.has_value()) continue;
    const double ratio = *us / row.fastest_us;
    ++s.measured;
    log_sum += std::log(ratio);
    if (ratio > s.worst) {
      s.worst = ratio;
      s.worst_problem = row.problem;
    }
  }
  if (s.measured > 0) s.geomean = std::exp(log_sum / s.measured);
  return s;
}

std::string Cell(const std::string& text) {
  return absl::StrReplaceAll(text, {{"|", "\\|"}, {"\n", " "}});
}

std::string Ratio(const std::optional<double>& us, double fastest_us) {
  return us.has_value() ? absl::StrFormat("%.3f", *us / fastest_us) : "not measured";
}

std::string Markdown(const std::vector<Row>& rows, const std::string& corpora,
                     const std::string& databases, const std::string& model) {
  std::string md = absl::StrCat(
      "# autotune replay: the library's selections, timed by the corpus\n\n", rows.size(),
      " problem(s) of ", corpora, "; the library's databases: ", databases,
      "; the model: ", model,
      ". Each selection's kernel over the fastest the tuning measured (a kernel it did not "
      "measure is left out of its row's figures).\n\n"
      "| selection | measured | geomean | worst |\n| --- | ---: | ---: | --- |\n");
  auto line = [&](const std::string& name, const Summary& s) {
    absl::StrAppend(&md, "| ", name, " | ", s.measured, " of ", rows.size(), " | ",
                    s.measured > 0 ? absl::StrFormat("%.3f", s.geomean) : "-", " | ",
                    s.measured > 0 ? absl::StrFormat("%.3f (%s)", s.worst, Cell(s.worst_problem))
                                   : "-",
                    " |\n");
  };
  line("nearest record (the default)", Summarize(rows, [](const Row& r) { return r.nearest.us; }));
  line("cost model", Summarize(rows, [](const Row& r) { return r.model.us; }));
  line("the fastest of the library's choices",
       Summarize(rows, [](const Row& r) { return r.best_choice_us; }));
  // Where both selections were measured, side by side.
  std::vector<Row> both;
  for (const Row& row : rows) {
    if (row.nearest.us.has_value() && row.model.us.has_value()) both.push_back(row);
  }
  const Summary nearest = Summarize(both, [](const Row& r) { return r.nearest.us; });
  const Summary by_model = Summarize(both, [](const Row& r) { return r.model.us; });
  absl::StrAppend(&md, "\nOn the ", both.size(),
                  " problem(s) where both selections were measured: nearest record ",
                  both.empty() ? "-" : absl::StrFormat("%.3f", nearest.geomean), ", cost model ",
                  both.empty() ? "-" : absl::StrFormat("%.3f", by_model.geomean), ".\n\n");
  absl::StrAppend(&md,
                  "| problem | fastest us | nearest record (level) | ratio | cost model (level) | "
                  "ratio | choices measured | fastest choice |\n"
                  "| --- | ---: | --- | ---: | --- | ---: | ---: | ---: |\n");
  for (const Row& row : rows) {
    auto pick = [](const Pick& p) {
      return p.error.empty() ? absl::StrCat(p.kernel, " (", p.level, ")")
                             : absl::StrCat("none: ", p.error);
    };
    absl::StrAppend(&md, "| ", Cell(row.problem), " | ", absl::StrFormat("%.2f", row.fastest_us),
                    " | ", Cell(pick(row.nearest)), " | ", Ratio(row.nearest.us, row.fastest_us),
                    " | ", Cell(pick(row.model)), " | ", Ratio(row.model.us, row.fastest_us), " | ",
                    row.choices_measured, " of ", row.choices, " | ",
                    Ratio(row.best_choice_us, row.fastest_us), " |\n");
  }
  return md;
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
      {"output", FlagType::kString, "PREFIX: also write the report to PREFIX.md", 'o'},
  };
  absl::StatusOr<CommandLine> line = ParseCommandLine(args, flags, 1 << 16);
  if (line.ok() && line->help()) {
    std::fprintf(out,
                 "%s\n  What the library would launch for each problem of the corpus (a tuning "
                 "with every\n  candidate kept, e.g. autotune --cost_model=none "
                 "--library_alternatives=9), by the\n  nearest record and by the cost model, "
                 "and what that kernel measured there; no GPU.\n\nflags:\n%s\nenvironment:\n%s\n"
                 "exit codes: 0 replayed; 1 the report could not be written; 2 usage error; 3 a "
                 "corpus, the database or the model does not read\n",
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
  if (const char* env = std::getenv("TILETUNE_COST_MODEL"); line.ok() && env != nullptr && *env) {
    line = absl::InvalidArgumentError(absl::StrCat(
        "TILETUNE_COST_MODEL='", Printable(env, 40),
        "' is set: replay compares the nearest record's selection with the cost model's "
        "itself; unset it"));
  }
  if (!line.ok()) {
    std::fprintf(err, "autotune replay: %s\n", BoundedMessage(line.status().message()).c_str());
    return 2;
  }
  const TileOpRegistry& ops = BuiltinTileOps();
  std::vector<tuning::TuningDatabase> corpora;
  for (const std::string& path : line->positional()) {
    tuning::ReadOptions read;
    read.semantics = ops.RecordValidator();
    absl::StatusOr<tuning::TuningDatabase> corpus = tuning::ReadTuningDatabase(UserPath(path), read);
    if (!corpus.ok()) {
      std::fprintf(err, "autotune replay: %s\n", BoundedMessage(corpus.status().message()).c_str());
      return 3;
    }
    corpora.push_back(*std::move(corpus));
  }
  // The two libraries: the default selection and the cost model's.
  auto make = [&](bool by_model) {
    LibraryOptions options;
    options.user_directory = "";
    options.record_misses_from_environment = false;
    options.tune_on_miss_ms = 0;
    options.cost_model = by_model;
    if (line->Has("database")) {
      options.databases = {UserPath(line->String("database"))};
      options.builtin = false;
    }
    if (line->Has("cost_model")) options.cost_model_file = UserPath(line->String("cost_model"));
    return Library::Create(std::move(options));
  };
  absl::StatusOr<std::unique_ptr<Library>> nearest = make(false);
  absl::StatusOr<std::unique_ptr<Library>> by_model =
      nearest.ok() ? make(true) : absl::StatusOr<std::unique_ptr<Library>>(nearest.status());
  absl::Status loaded = by_model.ok() ? (*nearest)->database_status() : by_model.status();
  if (!loaded.ok()) {
    std::fprintf(err, "autotune replay: %s\n", BoundedMessage(loaded.message()).c_str());
    return 3;
  }
  const int choices = static_cast<int>(line->Int("choices", 9));
  std::vector<Row> rows;
  for (const tuning::TuningDatabase& corpus : corpora) {
    for (const tuning::TuningRecord& record : corpus.records()) {
      absl::StatusOr<const TileOpDefinition*> definition = ops.For(record.problem());
      absl::StatusOr<std::unique_ptr<TileOp>> op =
          definition.ok() ? (*definition)->FromProblem(record.problem())
                          : absl::StatusOr<std::unique_ptr<TileOp>>(definition.status());
      absl::StatusOr<Target> target = Target::Parse(
          Target::ArchNameForDevice(record.device().cc_major(), record.device().cc_minor()));
      if (!op.ok() || !target.ok()) {
        std::fprintf(err, "autotune replay: a record left out: %s\n",
                     BoundedMessage(op.ok() ? target.status().message() : op.status().message())
                         .c_str());
        continue;
      }
      Row row;
      row.problem = (*definition)->Describe(**op);
      const Measured measured = MeasuredOf(record);
      row.fastest_us = measured.fastest_us;
      if (!(row.fastest_us > 0)) continue;
      auto pick = [&](const Library& library) {
        absl::StatusOr<Explanation> explained = library.Explain(**op, record.device());
        if (!explained.ok()) {
          Pick none;
          none.error = std::string(explained.status().message());
          return none;
        }
        return Find(measured, **definition, **op, *target, *explained);
      };
      row.nearest = pick(**nearest);
      row.model = pick(**by_model);
      absl::StatusOr<std::vector<Explanation>> alternatives =
          (*nearest)->Alternatives(**op, record.device(), choices);
      if (alternatives.ok()) {
        for (const Explanation& alternative : *alternatives) {
          const Pick p = Find(measured, **definition, **op, *target, alternative);
          ++row.choices;
          if (!p.us.has_value()) continue;
          ++row.choices_measured;
          if (!row.best_choice_us.has_value() || *p.us < *row.best_choice_us) row.best_choice_us = p.us;
        }
      }
      rows.push_back(std::move(row));
    }
  }
  std::vector<std::string> paths;
  for (const std::string& path : line->positional()) paths.push_back(Printable(path, 400));
  const std::string md = Markdown(
      rows, absl::StrJoin(paths, ", "), (*nearest)->database_origin(),
      line->Has("cost_model") ? Printable(line->String("cost_model"), 400) : "the built-in one");
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

#include "autotune/fit_command.h"

#include <cstdio>
#include <map>
#include <memory>
#include <set>
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
#include "compiler/base/status_macros.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/ops/candidates.h"
#include "compiler/target/target.h"
#include "compiler/tuning_db/atomic_file.h"
#include "compiler/tuning_db/tuning_db.h"
#include "google/protobuf/text_format.h"
#include "kernels/builtin_cost_models.h"

namespace tiletune {
namespace autotune {
namespace {

constexpr char kUsage[] = "usage: autotune fit CORPUS... [-o MODEL.txtpb] [--terms=TERMS.csv]";

std::string GpuName(const tuning::DeviceIdentity& device) {
  return absl::StrCat(Printable(device.name(), 80), " (sm_", device.cc_major(), ".",
                      device.cc_minor(), ")");
}

}  // namespace

absl::StatusOr<FitCorpus> CorpusSamples(const std::vector<tuning::TuningDatabase>& databases,
                                        const TileOpRegistry& ops) {
  FitCorpus corpus;
  std::set<std::string> gpus;
  for (const tuning::TuningDatabase& database : databases) {
    for (const tuning::TuningRecord& record : database.records()) {
      gpus.insert(GpuName(record.device()));
      if (gpus.size() > 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the corpus holds records of ", absl::StrJoin(gpus, " and "),
            "; a model is fitted to one GPU model at a time"));
      }
      corpus.device = record.device();
      absl::StatusOr<const TileOpDefinition*> definition = ops.For(record.problem());
      if (!definition.ok()) return definition.status();
      absl::StatusOr<std::unique_ptr<TileOp>> op = (*definition)->FromProblem(record.problem());
      if (!op.ok()) return op.status();
      absl::StatusOr<Target> target = Target::Parse(
          Target::ArchNameForDevice(record.device().cc_major(), record.device().cc_minor()));
      if (!target.ok()) return target.status();
      const DeviceConstants gpu =
          DeviceConstantsFor(*target, record.device().sm_count() > 0 ? record.device().sm_count()
                                                                      : 132);
      const std::string problem = ProblemKey(record.problem());
      auto add = [&](const tuning::Variant& variant, const tuning::Statistics& statistics) {
        absl::StatusOr<std::shared_ptr<const LoweredTileKernel>> lowered =
            LowerVariant(**definition, **op, variant, *target, "candidate");
        if (!lowered.ok() || !(statistics.median_us() > 0)) {
          ++corpus.left_out;
          return;
        }
        CostSample sample;
        sample.problem = problem;
        sample.op = (*definition)->name();
        sample.terms = TermsOf(**lowered, gpu);
        sample.median_us = statistics.median_us();
        corpus.samples.push_back(sample);
        corpus.kernels.push_back(absl::StrCat((*lowered)->path_name, "/", (*lowered)->form_name));
        corpus.variants.push_back(tuning::DescribeVariant(variant));
      };
      add(record.winner(), record.winner_statistics());
      for (const tuning::CandidateResult& candidate : record.candidates()) {
        if (candidate.status() == tuning::CandidateResult::OK) {
          add(candidate.variant(), candidate.statistics());
        }
      }
    }
  }
  return corpus;
}

absl::StatusOr<CostModel> ReadCostModelFile(const std::string& path) {
  TT_ASSIGN_OR_RETURN(GpuCostModel model, CostModelFromFile(path));
  return std::move(model.model);
}

int RunFitCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err) {
  const std::vector<FlagSpec> flags = {
      {"output", FlagType::kString, "PATH: write the fitted model there (text format)", 'o'},
      {"terms", FlagType::kString,
       "PATH: also write every kernel's problem, operator, variant, time and terms as CSV"},
      {"trees", FlagType::kInt,
       "N: add N boosted regression trees of 4 levels over the terms, the kernel's "
       "path/form and how its loads spread, which then give the estimate (default 0: the "
       "terms' sum alone)",
       0, 0, 2000},
      {"rank", FlagType::kBool,
       "with --trees: fit the trees to order each problem's kernels (added to the terms' "
       "estimate, on what differs within a problem, the slow tail capped) rather than to time "
       "them; the estimates then order a problem's kernels, their scale being the terms'"},
  };
  absl::StatusOr<CommandLine> line = ParseCommandLine(args, flags, 1 << 20);
  if (line.ok() && line->help()) {
    std::fprintf(out,
                 "%s\n  Fits the cost model to the kernels the corpus (tunings' own output, "
                 "every measured\n  candidate kept) measured, and reports its "
                 "leave-one-problem-out error per operator.\n\nflags:\n%s\nenvironment:\n%s\n"
                 "exit codes: 0 fitted; 1 the model could not be written; 2 usage error; 3 a "
                 "corpus does not read, or holds too little to fit\n",
                 kUsage, FlagHelp(flags).c_str(), EnvironmentHelp().c_str());
    return 0;
  }
  if (line.ok() && line->version()) {
    std::fprintf(out, "%s\n", VersionLine("autotune fit").c_str());
    return 0;
  }
  if (line.ok() && line->positional().empty()) {
    line = absl::InvalidArgumentError(absl::StrCat("give at least one corpus; ", kUsage));
  }
  if (line.ok() && line->Bool("rank", false) && line->Int("trees", 0) == 0) {
    line = absl::InvalidArgumentError(
        "--rank fits trees: give --trees=N (N >= 1) with it; the terms alone have nothing to rank");
  }
  if (!line.ok()) {
    std::fprintf(err, "autotune fit: %s\n", BoundedMessage(line.status().message()).c_str());
    return 2;
  }
  const TileOpRegistry& ops = BuiltinTileOps();
  std::vector<tuning::TuningDatabase> databases;
  for (const std::string& path : line->positional()) {
    tuning::ReadOptions read;
    read.semantics = ops.RecordValidator();
    absl::StatusOr<tuning::TuningDatabase> database =
        tuning::ReadTuningDatabase(UserPath(path), read);
    if (!database.ok()) {
      std::fprintf(err, "autotune fit: %s\n", BoundedMessage(database.status().message()).c_str());
      return 3;
    }
    databases.push_back(*std::move(database));
  }
  absl::StatusOr<FitCorpus> corpus = CorpusSamples(databases, ops);
  FitOptions options;
  options.trees = static_cast<int>(line->Int("trees", 0));
  options.rank = line->Bool("rank", false);
  absl::StatusOr<CostModel> model = corpus.ok() ? CostModel::Fit(corpus->samples, options)
                                                 : absl::StatusOr<CostModel>(corpus.status());
  absl::StatusOr<std::vector<LeaveOneOutError>> errors =
      model.ok() ? LeaveOneProblemOut(corpus->samples, options)
                 : absl::StatusOr<std::vector<LeaveOneOutError>>(model.status());
  if (!errors.ok()) {
    std::fprintf(err, "autotune fit: %s\n", BoundedMessage(errors.status().message()).c_str());
    return 3;
  }
  // A tuner with this model measures each operator's k for 1% regret.
  std::map<std::string, int> top_k;
  for (const LeaveOneOutError& e : *errors) {
    if (e.k_for_one_percent > 0) top_k[e.op] = e.k_for_one_percent;
  }
  model->set_top_k(top_k);
  std::set<std::string> problems;
  for (const CostSample& s : corpus->samples) problems.insert(s.problem);
  std::fprintf(out, "autotune fit: %zu kernels of %zu problems on %s", corpus->samples.size(),
               problems.size(), GpuName(corpus->device).c_str());
  if (corpus->left_out > 0) {
    std::fprintf(out, "; %d left out (their lowering changed since they were timed)",
                 corpus->left_out);
  }
  std::fprintf(out, "\nmodel: floor %g us, bytes in flight per SM stop limiting at %g B\n",
               model->floor_us(), model->knot_bytes());
  for (size_t i = 0; i < CostTermNames().size(); ++i) {
    std::fprintf(out, "  %-14s %+.4f\n", CostTermNames()[i].c_str(), model->coefficients()[i]);
  }
  if (model->tree_count() > 0) {
    std::fprintf(out,
                 "  then %d regression trees over those terms, the kernel's path/form and how "
                 "its loads spread%s\n",
                 model->tree_count(),
                 model->trees_from_terms()
                     ? ", fitted to order each problem's kernels, scale the terms' estimate"
                     : " give the estimate");
  }
  std::fprintf(out,
               "leave one problem out (fitted without it, then its kernels estimated):\n"
               "  %-9s %8s %8s %16s %22s %13s %24s\n",
               "operator", "problems", "kernels", "median |ln err|", "first choice: regret",
               "best of five", "top k for <= 1% regret");
  for (const LeaveOneOutError& e : *errors) {
    std::fprintf(out, "  %-9s %8d %8d %16.3f %10s %11s %13s %24s\n", e.op.c_str(), e.problems,
                 e.samples, e.median_abs_log_error,
                 absl::StrFormat("%.1f%%", 100 * e.mean_top1_regret).c_str(),
                 absl::StrFormat("(worst %.0f%%)", 100 * e.worst_top1_regret).c_str(),
                 absl::StrFormat("%.1f%%", 100 * e.mean_top5_regret).c_str(),
                 e.k_for_one_percent > 0
                     ? absl::StrFormat("%d (worst %.0f%%)", e.k_for_one_percent,
                                       100 * e.worst_regret_at_k).c_str()
                     : "none");
  }
  if (line->Has("terms")) {
    std::string csv =
        "problem,op,kernel,variant,median_us,bytes,vector_bytes,tma,cp_async,waves,"
        "inflight_per_sm,tiles_per_sm,read_bytes,written_bytes,threads,accesses_per_thread,"
        "shared_per_cta,stages,load_scatter,gather_reads\n";
    auto quoted = [](const std::string& field) {
      return absl::StrCat("\"", absl::StrReplaceAll(field, {{"\"", "\"\""}}), "\"");
    };
    for (size_t i = 0; i < corpus->samples.size(); ++i) {
      const CostSample& s = corpus->samples[i];
      const KernelTerms& t = s.terms;
      absl::StrAppend(&csv, quoted(s.problem), ",", s.op, ",", corpus->kernels[i], ",",
                      quoted(corpus->variants[i]), ",", s.median_us, ",", t.bytes, ",",
                      t.vector_bytes, ",", t.tma ? 1 : 0, ",", t.cp_async ? 1 : 0, ",",
                      t.waves, ",", t.inflight_per_sm, ",", t.tiles_per_sm, ",", t.read_bytes,
                      ",", t.written_bytes, ",", t.threads, ",", t.accesses_per_thread, ",",
                      t.shared_per_cta, ",", t.stages, ",", t.load_scatter, ",", t.gather_reads,
                      "\n");
    }
    const std::string path = UserPath(line->String("terms"));
    if (absl::Status written = tuning::WriteFileAtomically(path, csv); !written.ok()) {
      std::fprintf(err, "autotune fit: %s\n", BoundedMessage(written.message()).c_str());
      return 1;
    }
  }
  if (line->Has("output")) {
    std::string text;
    google::protobuf::TextFormat::PrintToString(model->ToProto(corpus->device), &text);
    const std::string path = UserPath(line->String("output"));
    if (absl::Status written = tuning::WriteFileAtomically(path, text); !written.ok()) {
      std::fprintf(err, "autotune fit: %s\n", BoundedMessage(written.message()).c_str());
      return 1;
    }
    std::fprintf(out, "autotune fit: wrote %s\n", Printable(path).c_str());
  }
  return 0;
}

}  // namespace autotune
}  // namespace tiletune

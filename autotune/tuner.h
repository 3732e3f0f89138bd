// Tuning one problem of any tile operator on one device: the search strategy over the
// evaluator (evaluator.h), which compiles, verifies and measures on a TuningDevice (the
// GPU, or a simulated one in CPU tests), and the choice of the winner (winner.h).
//
//   Tuner::Options options;
//   options.ceiling_gbps = *device.MeasureCeiling();
//   Tuner tuner(device, compiler, options);
//   TT_ASSIGN_OR_RETURN(TuningTask task, MakeTask(BuiltinTileOps(), op, target));
//   TT_ASSIGN_OR_RETURN(TuningRecord record, tuner.Tune(task, &faulted, &stats));
//
// Strategy. First phase: every hint set of the operator's search space at one
// representative launch per path family. Second phase: every launch candidate for the
// best hint set of each of the three best paths, and of each other form of those paths;
// when it builds nothing, stats say why and the record lists the reason as a PRUNED
// candidate. With a cost model, each phase measures only the model's model_top_k best
// estimated candidates and the operator's heuristic choice (stats->model_skipped counts
// the rest). Then the five fastest (and the library's choice) are measured again in
// interleaved rounds and the winner is chosen among them only: the fastest, and among
// those within noise of it (winner.h) the library's choice, else the one using fewer
// resources; results above the ceiling are cache artefacts. Regret: a second set of
// interleaved rounds over the same leaders, judged apart from the samples that chose the
// winner. Baselines: the winner and the device's baselines (cudaMemcpy of the same bytes,
// the operator's library call) in fresh interleaved rounds, recorded with the winner's
// speedup over each, vs_baseline and the size-matched ceiling; a baseline that cannot be
// measured is recorded with why. A variant that faults the device makes Tune return
// Aborted with the variant added to `faulted` (see evaluator.h); the caller retries in a
// new process.
#ifndef AUTOTUNE_TUNER_H_
#define AUTOTUNE_TUNER_H_

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "autotune/evaluator.h"
#include "autotune/tuning_device.h"
#include "autotune/tuning_task.h"
#include "compiler/backend/cost_model/cost_model.h"
#include "compiler/cuda/compilation_provider.h"
#include "compiler/ops/tile_op_definition.h"
#include "compiler/tuning_db/tuning_db.pb.h"

namespace tiletune {
namespace autotune {

// What the library would launch for a problem, and how it resolved ("exact", "nearest",
// "heuristic").
struct LibraryChoice {
  Trial trial;
  std::string level;
};

class Tuner {
 public:
  struct Options {
    // Samples per candidate in the first pass.
    int samples = 5;
    // Candidates re-measured at the end, and interleaved rounds over them.
    int top_k = 5;
    int rounds = 8;
    // Paths whose best hint set the second phase varies the launch of.
    int leader_paths = 3;
    // Threads compiling at once; 0 means one per hardware thread.
    int compile_threads = 0;
    // Measured bandwidth ceiling (TuningDevice::MeasureCeiling); 0 disables the
    // cache-artefact check.
    double ceiling_gbps = 0;
    // Receive one-line progress updates, and the hash of each candidate about to run
    // ("" once it has finished), as Evaluator::Options does.
    std::function<void(const std::string&)> progress;
    std::function<void(const std::string&)> before_launch;
    // With a cost model (compiler/backend/cost_model), each phase measures only the
    // model's model_top_k best estimated candidates (0: the k its fit found for the
    // operator, CostModel::TopKFor), and the library's and the operator's heuristic choices
    // whatever their estimates; `gpu` describes the device to the model. Null: every
    // candidate is measured.
    const CostModel* cost_model = nullptr;
    int model_top_k = 0;
    DeviceConstants gpu;
    // What the library would launch for a task's problem; nullopt (or no function) when
    // nothing is known. Measured whatever the model thinks of it, and a finalist.
    std::function<std::optional<LibraryChoice>(const TuningTask&)> library_choice;
    // The other kernels the library chooses among for a task's problem (the nearby
    // records' variants, the heuristic's; Library::Alternatives): those the search space
    // lacks join the first phase and are measured whatever a cost model thinks of them
    // (the others are its candidates), so that a tuning with no cost model holds what any
    // selection among them would launch (`autotune replay`). Empty (or no function): none.
    std::function<std::vector<LibraryChoice>(const TuningTask&)> library_alternatives;
  };

  // `device` and `compiler` must outlive the tuner.
  Tuner(TuningDevice& device, CompilationProvider& compiler, Options options)
      : device_(device), compiler_(compiler), options_(std::move(options)) {}

  // The record of `task` (device left unset: the caller knows who it is). `faulted` as
  // described at the top; `stats` is filled in.
  absl::StatusOr<tuning::TuningRecord> Tune(const TuningTask& task,
                                            std::map<std::string, std::string>* faulted,
                                            TuneStats* stats);

 private:

  // Interleaved rounds over `top`: each one's samples, by index.
  absl::StatusOr<std::map<int, std::vector<double>>> Interleaved(Evaluator& evaluator,
                                                                 const std::vector<int>& top);
  // Source hashes of the candidates measured whatever a cost model estimates: the
  // library's choice and the heuristic's ("" where there is none).
  struct Anchors {
    std::string library;
    std::string heuristic;
    // Options::library_alternatives that the search space lacked.
    std::set<std::string> alternatives;
    // Whether a candidate of source hash `sha` is one of them.
    bool Has(const std::string& sha) const {
      return !sha.empty() && (sha == library || sha == heuristic || alternatives.count(sha) > 0);
    }
  };
  // The best hint set of each of the `leader_paths` best paths measured so far, then of
  // each other form of those paths, the anchors left out.
  std::vector<Hints> LeaderHints(const std::vector<Run>& runs, const Anchors& anchors) const;
  // The candidates a phase measures: all of them, or with a cost model its top k and the
  // anchors (stats->model_skipped counts the rest).
  std::vector<Candidate> ModelTopK(const TuningTask& task, std::vector<Candidate> candidates,
                                   const Anchors& anchors, TuneStats* stats) const;
  // Both search phases: every hint set at one launch per path family (and the anchors),
  // then every launch for the leading hint sets. Examples of pruned variants go to
  // `pruned`; the anchors' hashes to `anchors`.
  absl::Status Search(const TuningTask& task, Evaluator& evaluator, TuneStats* stats,
                      std::vector<std::string>* pruned, Anchors* anchors);
  // The winner among the top candidates and the library's choice, re-measured in
  // interleaved rounds, and its regret against them in fresh rounds (stats->regret,
  // stats->library_over_winner).
  absl::StatusOr<Selection> Select(const TuningTask& task, Evaluator& evaluator,
                                   const Anchors& anchors, TuneStats* stats);
  // The device's baselines and the winner (evaluator.runs()[winner]) in interleaved
  // rounds, stored in `record` as described at the top.
  absl::Status MeasureBaselines(const TuningTask& task, Evaluator& evaluator, int winner,
                                tuning::TuningRecord* record);

  TuningDevice& device_;
  CompilationProvider& compiler_;
  Options options_;
};

}  // namespace autotune
}  // namespace tiletune

#endif  // AUTOTUNE_TUNER_H_

// The tuner's evaluator: compiles candidates in parallel, verifies each bit-exact on the
// device, and measures the ones that verify. The search strategy (tuner.h) decides what
// to evaluate; the evaluator only runs it and remembers the results.
//
//   Evaluator evaluator(device, compiler, options, &faulted, &stats);
//   TT_RETURN_IF_ERROR(evaluator.Evaluate(std::move(candidates), "hints"));
//   for (const Run& run : evaluator.runs()) ... run.measurement ...
//
// A candidate that faults the device ends the device's use for this process: Evaluate
// adds it to `faulted` and returns Aborted; a new process given the same `faulted` records
// it as LAUNCH_FAULT without running it. Candidates are verified before any is measured,
// so a fault costs the next attempt only verification.
#ifndef AUTOTUNE_EVALUATOR_H_
#define AUTOTUNE_EVALUATOR_H_

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "autotune/tuning_device.h"
#include "autotune/winner.h"
#include "compiler/cuda/compilation_provider.h"
#include "compiler/ops/candidates.h"

namespace tiletune {
namespace autotune {

struct TuneStats {
  int enumerated = 0;
  int pruned = 0;
  int duplicates = 0;
  int compiled = 0;
  int compile_errors = 0;
  int verified = 0;
  int failed_verification = 0;
  int faults = 0;
  int measured = 0;
  double compile_seconds = 0;
  double gpu_seconds = 0;
  // After the winner is chosen, the top candidates are measured once more in fresh
  // interleaved rounds: the winner's median over the best of them, minus one.
  double regret = 0;
  // Why the second search phase built no candidates; empty when it did.
  std::string second_phase_error;
  // Candidates a cost model ranked below the ones measured, and were not measured.
  int model_skipped = 0;
  // How the library resolved the problem ("" when the tuner was not told), and its
  // choice's median over the winner's in the regret rounds (0 when it did not run).
  std::string library_level;
  double library_over_winner = 0;
};

// One evaluated candidate.
struct Run {
  const Candidate* candidate = nullptr;
  // Loaded and verified; null otherwise.
  std::unique_ptr<LoadedCandidate> kernel;
  Measurement measurement;
};

class Evaluator {
 public:
  struct Options {
    // Samples per candidate.
    int samples = 5;
    // Bytes one run moves, for the GB/s of progress lines; 0 for none.
    int64_t bytes_moved = 0;
    // Threads compiling at once; 0 means one per hardware thread.
    int compile_threads = 0;
    // Receives one-line progress updates.
    std::function<void(const std::string&)> progress;
    // Told a candidate's source hash just before it runs on the device, and "" once it
    // has finished, so a supervisor can name a variant that hangs.
    std::function<void(const std::string&)> before_launch;
  };

  // `device`, `compiler`, `faulted` and `stats` must outlive the evaluator. `faulted` maps
  // source hashes of variants that faulted in an earlier process to the fault.
  Evaluator(TuningDevice& device, CompilationProvider& compiler, Options options,
            std::map<std::string, std::string>* faulted, TuneStats* stats);

  // Evaluates every candidate not seen before (by source hash). Aborted on a new fault.
  absl::Status Evaluate(std::vector<Candidate> candidates, const std::string& phase);

  // One more sample of runs()[index] (which must have verified).
  absl::StatusOr<double> Sample(int index);

  const std::vector<Run>& runs() const { return runs_; }

 private:
  std::vector<absl::StatusOr<Cubin>> CompileAll(const std::vector<Candidate>& candidates);
  // Loads and verifies one candidate into a Run.
  absl::StatusOr<Run> Check(const Candidate& candidate, const absl::StatusOr<Cubin>& cubin);
  absl::Status Fault(const Candidate& candidate, const absl::Status& status);
  absl::Status MeasureRuns(size_t first, const std::string& phase);
  void Progress(const std::string& line) const;

  TuningDevice& device_;
  CompilationProvider& compiler_;
  Options options_;
  std::map<std::string, std::string>* faulted_;
  TuneStats* stats_;
  // Candidates live here (stable addresses) while runs point at them.
  std::vector<std::unique_ptr<Candidate>> candidates_;
  std::set<std::string> seen_;
  std::vector<Run> runs_;
  double best_gbps_ = 0;
};

}  // namespace autotune
}  // namespace tiletune

#endif  // AUTOTUNE_EVALUATOR_H_

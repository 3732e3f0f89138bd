// Tuning one problem (a TuningTask: copy or im2col) on one GPU: search, compile in
// parallel, verify bit-exact, measure, re-measure the leaders interleaved, and produce a
// TuningRecord.
//
//   Tuner::Options options;
//   options.ceiling_gbps = *MeasureDramCeiling(context);
//   Tuner tuner(context, compiler, options);
//   TT_ASSIGN_OR_RETURN(TuningTask task, CopyTask(op, target));
//   TT_ASSIGN_OR_RETURN(TuningRecord record, tuner.Tune(task, &faulted, &stats));
//
// Search: every hint combination at one representative launch per path family, then
// every launch candidate for the best hint set of each of the three best paths (the
// task's builder prunes and deduplicates both). Verification: fresh random input, the
// output and its guard zones poisoned with a random byte, one launch, a byte-exact
// device-side compare against the CPU reference. Measurement: warm-up, then
// batches of launches timed with events, rotating over buffer sets larger than 2.5x the
// L2 so nothing is timed from cache; the top five are re-measured in interleaved rounds
// before the winner is chosen (autotune/winner.h), and results above the measured DRAM
// ceiling are rejected as cache artefacts. A variant that faults the GPU poisons the
// process's CUDA context for good: Tune adds it to `faulted` and returns Aborted, and the
// caller starts a new process whose Tune records it as LAUNCH_FAULT without running it
// (autotune_main.cc does this per problem).
#ifndef AUTOTUNE_TUNER_H_
#define AUTOTUNE_TUNER_H_

#include <functional>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "autotune/tuning_db.pb.h"
#include "compiler/cuda/compilation_provider.h"
#include "autotune/tuning_task.h"
#include "kernels/runtime/runtime.h"

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
};

// cuMemcpyDtoDAsync of the largest of 1 GiB and an eighth of device memory that fits,
// median of five, in GB/s counting bytes read plus written.
absl::StatusOr<double> MeasureDramCeiling(const Context& context);

// The DeviceIdentity of `context`'s GPU, with driver, CUDA and NVRTC versions.
DeviceIdentity IdentifyDevice(const Context& context, const std::string& nvrtc_version);

class Tuner {
 public:
  struct Options {
    // Samples per candidate in the first pass.
    int samples = 5;
    // Candidates re-measured at the end, and interleaved rounds over them.
    int top_k = 5;
    int rounds = 8;
    // Threads compiling at once; 0 means one per hardware thread.
    int compile_threads = 0;
    // Measured DRAM ceiling (MeasureDramCeiling); 0 disables the cache-artefact check.
    double ceiling_gbps = 0;
    // Receives one-line progress updates.
    std::function<void(const std::string&)> progress;
    // Told the source hash of each candidate just before it runs, and "" once it has
    // finished, so a supervisor can name a variant that hangs the GPU (autotune_main.cc
    // kills and records it).
    std::function<void(const std::string&)> before_launch;
  };

  Tuner(Context& context, CompilationProvider& compiler, Options options)
      : context_(context), compiler_(compiler), options_(std::move(options)) {}

  // `faulted` maps source hashes of variants that faulted in an earlier call to the
  // fault; they are recorded, not run. On a new fault returns Aborted and adds the
  // variant to `faulted`.
  absl::StatusOr<TuningRecord> Tune(const TuningTask& task,
                                    std::map<std::string, std::string>* faulted, TuneStats* stats);

 private:
  Context& context_;
  CompilationProvider& compiler_;
  Options options_;
};

}  // namespace autotune
}  // namespace tiletune

#endif  // AUTOTUNE_TUNER_H_

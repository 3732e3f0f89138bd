// Tuning on a miss (kernels/library.h, LibraryOptions::tune_on_miss_ms), in two halves so
// that the first call of a problem with no exact record waits for no measurement:
//
//   // First call: the resolver's choice is compiled and launched as without tuning;
//   // meanwhile the variants worth measuring are listed and compiled in the background.
//   // The listing runs later on a worker: it captures copies, not references.
//   MissTuner::AlternativesMaker make = [resolver = &resolver, identity,
//                                        listed = std::shared_ptr<TileOp>(op.Clone())] {
//     return resolver->Alternatives(identity, *listed, 6, 4);
//   };
//   auto tuner = std::make_unique<MissTuner>(definition, op, std::move(make),
//                                            std::move(resolution), compiler, work);
//   ...
//   // A later call, once tuner->ready(): load, verify and time them; launch the winner.
//   if (tuner->ready() && tuner->Claim()) {
//     TT_ASSIGN_OR_RETURN(MissTuning tuned, tuner->Finish(context, 100, check));
//     ... tuned.kernel launches from now on; tuned.record goes into the user's database ...
//   }
//
// In the background, as jobs on a WorkQueue (kernels/measure.h) that bounds the threads
// however many misses come at once: the random input and its CPU reference are made; the
// alternatives are listed (the nearest records' variants, the heuristic, the cost model's
// first picks of the search space: lowering a whole search space takes a while), the
// kernel that runs meanwhile among them; and every one compiles (into the compile cache).
// Finish then loads each kernel and verifies it bit-exact on that input (output poisoned,
// guards checked) before any is timed; one that fails is dropped and named in `detail`. Compiling,
// verification and timing are the measurement harness's (kernels/measure.h:
// StartedCompiles, MeasureBench), which the autotuner uses too; this is the caller that
// holds the candidates, the budget and the record. Timing runs interleaved rounds (the
// candidates in a rotating order), each candidate launched in a batch on a rotation of
// buffer sets larger than three times the L2, timed with events; at least three rounds,
// then rounds until `budget_ms` of timing has passed (at most 25), or until the fastest
// candidate's every sample beats every sample of each other one. The winner has the
// lowest median per launch.
#ifndef KERNELS_TUNE_ON_MISS_H_
#define KERNELS_TUNE_ON_MISS_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/backend/tuned_resolver.h"
#include "compiler/cuda/compilation_provider.h"
#include "compiler/ir/tile_op.h"
#include "compiler/ops/tile_op_definition.h"
#include "compiler/tuning_db/tuning_db.pb.h"
#include "kernels/device_check.h"
#include "kernels/measure.h"
#include "kernels/runtime/runtime.h"
#include "kernels/tile_kernel.h"

namespace tiletune {

struct MissTuning {
  // The winner, loaded on the context.
  std::unique_ptr<TileKernel> kernel;
  Resolution resolution;
  // The winner as a database record (device identity left for the caller; problem,
  // variant, statistics, the other measured candidates, provenance).
  tuning::TuningRecord record;
  int compiled = 0;
  int verified = 0;
  int rounds = 0;
  // Milliseconds: from the start until the last compile was in (in the background); the
  // finishing call's uploading (input and reference), loading and verifying; its timing.
  double compile_ms = 0, verify_ms = 0, timing_ms = 0;
  // One line: what was measured and why the winner won ("3 of 4 candidates verified, 5
  // rounds: nearest ... 12.1 us over heuristic 14.0 us; ...").
  std::string detail;
};

class MissTuner {
 public:
  // Lists the variants to measure (each a distinct kernel).
  using AlternativesMaker = std::function<absl::StatusOr<std::vector<Resolution>>()>;
  // Posts to `work` the making of the op's random input and reference, and the listing of
  // the alternatives by `make` (with `incumbent`, the kernel that runs meanwhile, first
  // where it does not list it), which then posts a compile of each with `compiler`.
  // `definition`, `compiler` and what `make` uses must outlive `work`; the jobs outlive
  // this harmlessly.
  MissTuner(const TileOpDefinition& definition, const TileOp& op, AlternativesMaker make,
            Resolution incumbent, CompilationProvider& compiler, WorkQueue& work);
  MissTuner(const MissTuner&) = delete;
  MissTuner& operator=(const MissTuner&) = delete;
  ~MissTuner();

  // Whether the background work is done and nobody has claimed the finishing: Finish
  // then waits for nothing.
  bool ready() const;
  // Once ready: why the alternatives could not be listed, OK when they were (Finish then
  // returns this error too, having done nothing).
  absl::Status listing_status() const;
  // True for exactly one caller: the one that finishes.
  bool Claim() { return !claimed_.exchange(true); }
  bool claimed() const { return claimed_.load(); }

  // Waits for the background work, then loads, verifies and times the candidates on
  // `context`. FailedPrecondition when none compiles, loads and verifies (each one's
  // error in the message); a launch fault is Aborted. `check` is the device's compare
  // kernel (made here when null, with the compiler).
  absl::StatusOr<MissTuning> Finish(const Context& context, double budget_ms, DeviceCheck* check);
  // After Finish: whether the candidate whose kernel is `source` ran and gave a wrong
  // result (not merely failed to compile, load or be measured).
  bool GaveWrongResult(const std::string& source) const;

 private:
  struct Candidate;
  struct Reference;
  struct Listing;
  const TileOpDefinition& definition_;
  std::unique_ptr<TileOp> op_;
  CompilationProvider& compiler_;
  std::shared_ptr<Listing> listing_;
  std::shared_ptr<Reference> reference_;
  bool finished_ = false;
  std::atomic<bool> claimed_{false};
};

}  // namespace tiletune

#endif  // KERNELS_TUNE_ON_MISS_H_

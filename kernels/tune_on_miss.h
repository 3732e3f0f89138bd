// Tuning on a miss (kernels/library.h, LibraryOptions::tune_on_miss_ms): the first launch
// of a problem with no exact record measures a few variants of it on the device, the
// nearest records' and the heuristic (TunedResolver::Alternatives), and keeps the fastest.
//
//   TT_ASSIGN_OR_RETURN(std::vector<Resolution> alternatives,
//                       resolver.Alternatives(identity, op, 6));
//   TT_ASSIGN_OR_RETURN(MissTuning tuned, TuneOnMiss(context, definition, op,
//                                                    std::move(alternatives), compiler, 100));
//   ... tuned.kernel launches; tuned.record goes into the user's database ...
//
// Every candidate is compiled in parallel (while the random input and the CPU reference
// are made), loaded and verified bit-exact on one draw of random input before any is
// timed; one that fails is dropped and named in `detail`. With `pending`, a candidate
// still compiling 1.5x `budget_ms` after the start (or twice as long as the first
// compile took, if longer) is left out, so one slow compile (a deeply unrolled variant
// takes seconds in NVRTC) does not hold the first call; its compile goes on in the
// background and lands in the compile cache.
// Compiling, verification and timing are the measurement harness's (kernels/measure.h:
// StartedCompiles, MeasureBench), which the autotuner uses too; this is the caller that
// picks the candidates, the budget and the record. Timing runs interleaved
// rounds (the candidates in a rotating order), each candidate launched in a batch on a
// rotation of buffer sets larger than three times the L2, timed with events; at least
// three rounds, then rounds until `budget_ms` of timing has passed (at most 25), or until
// the fastest candidate's every sample beats every sample of each other one. The winner
// has the lowest median per launch.
#ifndef KERNELS_TUNE_ON_MISS_H_
#define KERNELS_TUNE_ON_MISS_H_

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
  // Wall-clock milliseconds of the phases: compiling, with the random input and CPU
  // reference made meanwhile (until both are done); loading and verifying; timing.
  double compile_ms = 0, verify_ms = 0, timing_ms = 0;
  // One line: what was measured and why the winner won ("3 of 4 candidates verified, 5
  // rounds: nearest ... 12.1 us over heuristic 14.0 us; ...").
  std::string detail;
};

// FailedPrecondition when no candidate compiles, loads and verifies (each one's error in
// the message); a launch fault is Aborted. `check` is the device's compare kernel (made
// here when null); `pending` adopts compiles left out (without it every compile is
// waited for). `compiler` must outlive `pending`.
absl::StatusOr<MissTuning> TuneOnMiss(const Context& context, const TileOpDefinition& definition,
                                      const TileOp& op, std::vector<Resolution> alternatives,
                                      CompilationProvider& compiler, double budget_ms,
                                      DeviceCheck* check = nullptr,
                                      PendingCompiles* pending = nullptr);

}  // namespace tiletune

#endif  // KERNELS_TUNE_ON_MISS_H_

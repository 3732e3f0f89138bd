// The one measurement harness, below tuning on a miss (kernels/tune_on_miss.h) and the
// autotuner (its evaluator's device and `autotune evaluate`): the operand buffers a
// problem is measured on, parallel compiles (in the background on a WorkQueue, or all at
// once), bit-exact verification, and timing over rotated buffers in interleaved rounds.
//
//   std::mt19937_64 rng(std::random_device{}());
//   TT_ASSIGN_OR_RETURN(std::unique_ptr<MeasureBench> bench,
//                       MeasureBench::Create(context, definition, op, rng));
//   Launcher a = bench->LauncherFor(kernel_a);
//   TT_RETURN_IF_ERROR(bench->Verify(a, "variant a", check));
//   TT_ASSIGN_OR_RETURN(MeasureBench::Rounds rounds, bench->Interleave({a, b}, {}, stream));
//   double us = tuning::Median(rounds.samples_us[0]);
//
// Buffers: sets of (input, output), each with kGuardBytes of guard on both sides, enough
// of them to span three L2s (at most 64, within a quarter of device memory; fewer where
// allocation fails), so that a launch rarely finds its operands in the L2 from the one
// before. Set 0 holds the verification input (fresh random data); the others copies of it.
//
// Verification: one launch on set 0 with the output poisoned; every output byte, guards
// included, must equal the operator's CPU reference and the input must be unchanged.
// Compared on the device when given a DeviceCheck, else on the host; a difference is
// named on the host (the first wrong byte, as the operator describes its element).
//
// Timing: a batch is `count` launches on one stream, each on the next set, between two
// events; its time over `count` is one sample. Interleave times several launchers in
// rounds, one batch of each per round in an order rotated every round, after a warm-up
// over every set and a calibration that sizes the batch.
#ifndef KERNELS_MEASURE_H_
#define KERNELS_MEASURE_H_

#include <cstddef>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/cuda/artifacts.h"
#include "compiler/cuda/compilation_provider.h"
#include "compiler/ir/tile_op.h"
#include "compiler/ops/tile_op_definition.h"
#include "cuda.h"
#include "kernels/device_check.h"
#include "kernels/runtime/runtime.h"
#include "kernels/tile_kernel.h"
#include "kernels/verify.h"

namespace tiletune {

// Compiles every source for `arch`, `threads` at once (0: one per hardware thread); the
// results in the sources' order.
std::vector<absl::StatusOr<Cubin>> CompileAll(CompilationProvider& compiler,
                                              const std::vector<CudaSource>& sources,
                                              const std::string& arch, int threads);

// A fixed set of worker threads running posted jobs in the order posted: background work
// (compiles, references) that a burst of requests cannot multiply into a thread each.
// The destructor drops the jobs not started and joins the workers (whose running jobs
// finish first): what the jobs use must outlive the queue.
class WorkQueue {
 public:
  // `threads` workers, 0 for one per hardware thread.
  explicit WorkQueue(int threads = 0);
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;
  ~WorkQueue();
  void Post(std::function<void()> job);
  int threads() const { return static_cast<int>(workers_.size()); }

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

// Compiles posted to a WorkQueue, one job per source, so the caller can do other work
// (launch something else) meanwhile, then wait for them. The compiler must outlive the
// queue; the results outlive this only in the jobs' shared state.
class StartedCompiles {
 public:
  StartedCompiles(WorkQueue& work, CompilationProvider& compiler, std::vector<CudaSource> sources,
                  const CompileOptions& options);
  StartedCompiles(const StartedCompiles&) = delete;
  StartedCompiles& operator=(const StartedCompiles&) = delete;

  // Every result, in the sources' order, once all are in.
  std::vector<absl::StatusOr<Cubin>> Wait();
  // Whether every result is in (Wait then returns at once).
  bool AllIn() const;
  // Milliseconds from the start at which each result was in; 0 for one not in.
  std::vector<double> in_ms() const;

 private:
  struct Shared;
  std::shared_ptr<Shared> shared_;
};

// One run of what is measured, on operands at `input` and `output` (past their guards).
using Launcher = std::function<absl::Status(CUdeviceptr input, CUdeviceptr output, CUstream stream)>;

class MeasureBench {
 public:
  // Makes the images (fresh random input from `rng`, the reference output), the buffer
  // sets and the op's example item table (TileOpDefinition::ExampleItems).
  // (`op` is copied; `definition` and `context` must outlive the bench.)
  static absl::StatusOr<std::unique_ptr<MeasureBench>> Create(const Context& context,
                                                              const TileOpDefinition& definition,
                                                              const TileOp& op,
                                                              std::mt19937_64& rng);
  // The same with the images made already (MakeVerificationImages: the reference of a
  // large problem takes a while on the CPU, which a caller may spend elsewhere).
  static absl::StatusOr<std::unique_ptr<MeasureBench>> Create(const Context& context,
                                                              const TileOpDefinition& definition,
                                                              const TileOp& op,
                                                              VerificationImages images);
  MeasureBench(const MeasureBench&) = delete;
  MeasureBench& operator=(const MeasureBench&) = delete;

  // `kernel` (of this op's key) launched at the op's region offsets with its example items.
  Launcher LauncherFor(TileKernel& kernel) const;

  // OK when one run of `launch` on set 0 matches the reference and leaves its input alone;
  // DataLoss naming `name`, the first wrong byte and how many follow; a launch fault is
  // Aborted (the context is unusable after it). `check` may be null (compare on the host).
  absl::Status Verify(const Launcher& launch, const std::string& name, DeviceCheck* check);

  // Microseconds per launch of `count` launches of `launch` on `stream`, rotating over the
  // sets.
  absl::StatusOr<double> Batch(const Launcher& launch, int count, CUstream stream);

  struct RoundOptions {
    // Each batch lasts about this long (as the fastest launcher's calibration run says),
    // at most max_batch launches.
    double batch_us = 100;
    int max_batch = 64;
    // At least min_rounds; then more, up to max_rounds, while budget_ms of timing has not
    // passed and (with until_separated) no launcher's every sample beats every sample of
    // each other one.
    int min_rounds = 3;
    int max_rounds = 3;
    double budget_ms = 0;
    bool until_separated = false;
  };
  struct Rounds {
    // Per launcher, one sample (microseconds per launch) per round.
    std::vector<std::vector<double>> samples_us;
    int batch = 1;
    int rounds = 0;
    double timing_ms = 0;  // the rounds' wall-clock time, warm-up and calibration excluded
  };
  absl::StatusOr<Rounds> Interleave(const std::vector<Launcher>& launchers,
                                    const RoundOptions& options, CUstream stream);

  const DeviceItems& items() const { return items_; }
  // The byte the output is filled with before a verification run.
  uint8_t poison() const { return images_.poison; }
  const OperandSizes& sizes() const { return sizes_; }
  size_t set_count() const { return in_.size(); }
  // Set `s`'s input and output, past their guards.
  std::pair<CUdeviceptr, CUdeviceptr> Set(size_t s) const;
  // Set `s`'s buffers whole, guards included.
  DeviceBuffer& input_buffer(size_t s) { return in_[s]; }
  DeviceBuffer& output_buffer(size_t s) { return out_[s]; }

 private:
  MeasureBench(const Context& context, const TileOpDefinition& definition, const TileOp& op)
      : context_(context), definition_(definition), op_(op.Clone()) {}

  const Context& context_;
  const TileOpDefinition& definition_;
  std::unique_ptr<TileOp> op_;
  OperandSizes sizes_;
  RegionOffsets offsets_;
  VerificationImages images_;
  DeviceItems items_;
  // Device copies of the expected output and the input, for DeviceCheck comparisons; made
  // by the first Verify given one.
  DeviceBuffer expected_, pristine_;
  std::vector<DeviceBuffer> in_, out_;
  // Set 0's input may have been written by a kernel that failed verification.
  bool input_dirty_ = false;
  size_t next_ = 0;
  std::unique_ptr<Event> start_, stop_;
};

}  // namespace tiletune

#endif  // KERNELS_MEASURE_H_

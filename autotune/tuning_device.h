// The device the tuner measures on, behind an interface: the real GPU
// (cuda_tuning_device.h) or a simulated one for CPU tests (simulated_device.h). The
// evaluator (evaluator.h) only talks to this.
//
//   TT_ASSIGN_OR_RETURN(auto device, CudaTuningDevice::Create(context, compiler));
//   TT_RETURN_IF_ERROR(device->Prepare(task));
//   TT_ASSIGN_OR_RETURN(auto kernel, device->Load(candidate, cubin));
//   TT_RETURN_IF_ERROR(device->Verify(*kernel));
//   TT_ASSIGN_OR_RETURN(std::vector<double> us, device->Measure(*kernel, 5));
//   for (int i = 0; i < device->Baselines().size(); ++i) device->SampleBaseline(i);
//
// One thread uses a device at a time.
#ifndef AUTOTUNE_TUNING_DEVICE_H_
#define AUTOTUNE_TUNING_DEVICE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "autotune/tuning_task.h"
#include "compiler/cuda/artifacts.h"
#include "compiler/ops/candidates.h"
#include "compiler/tuning_db/tuning_db.pb.h"

namespace tiletune {
namespace autotune {

// A candidate loaded on a device, ready to run; valid while its device lives.
class LoadedCandidate {
 public:
  virtual ~LoadedCandidate() = default;
};

// A call the user would make instead of a tuned kernel (tuning_db.proto's Baseline):
// its name, and why it cannot be measured here ("" when it can).
struct BaselineInfo {
  std::string name;
  std::string unavailable;
};

class TuningDevice {
 public:
  virtual ~TuningDevice() = default;

  // Who the device is, as databases record it (name and compute capability at least).
  virtual tuning::DeviceIdentity Identity() const = 0;
  // The architecture to compile candidates for ("sm_90a").
  virtual std::string ArchName() const = 0;
  // The device's memory-bandwidth ceiling in GB/s (bytes read plus written): a device copy
  // of a large buffer.
  virtual absl::StatusOr<double> MeasureCeiling() = 0;
  // Sets up `task` (which must outlive every later call): buffers rotated over more than
  // the device's caches, fresh random input, the expected output from the operator's CPU
  // reference.
  virtual absl::Status Prepare(const TuningTask& task) = 0;
  // Loads a compiled candidate of the prepared task.
  virtual absl::StatusOr<std::unique_ptr<LoadedCandidate>> Load(const Candidate& candidate,
                                                                const Cubin& cubin) = 0;
  // One run over a poisoned output (guard zones included), compared byte for byte with the
  // expected: OK; DataLoss naming the wrong bytes; Aborted when the run faulted the device,
  // which is unusable from then on.
  virtual absl::Status Verify(LoadedCandidate& kernel) = 0;
  // `samples` timings in microseconds per run, each over a batch of runs rotating through
  // the buffers, after a warm-up. Aborted on a fault.
  virtual absl::StatusOr<std::vector<double>> Measure(LoadedCandidate& kernel, int samples) = 0;
  // The prepared task's baselines: "cudaMemcpy" of half the bytes one run moves first,
  // then the operator's library equivalent where there is one ("cudnnIm2Col" for
  // im2col), each with why it cannot be measured when it cannot.
  virtual std::vector<BaselineInfo> Baselines() = 0;
  // One sample of Baselines()[index] (which must be available), in microseconds per run,
  // timed like Measure over the same rotated buffers.
  virtual absl::StatusOr<double> SampleBaseline(int index) = 0;
};

}  // namespace autotune
}  // namespace tiletune

#endif  // AUTOTUNE_TUNING_DEVICE_H_

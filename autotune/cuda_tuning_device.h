// The real GPU as a TuningDevice: a CUDA context, candidates loaded as TileKernels,
// verification and timing by the measurement harness (kernels/measure.h: a byte-exact
// compare on the device, events over buffers rotated through three times the L2), and the
// baselines (cudaMemcpy of the same bytes; cudnnIm2Col for im2col, cuDNN loaded at run
// time) on the same buffers.
//
//   TT_ASSIGN_OR_RETURN(auto context, Context::Create(0));
//   TT_ASSIGN_OR_RETURN(auto device, CudaTuningDevice::Create(*context, compiler));
#ifndef AUTOTUNE_CUDA_TUNING_DEVICE_H_
#define AUTOTUNE_CUDA_TUNING_DEVICE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "autotune/tuning_device.h"
#include "compiler/cuda/compilation_provider.h"
#include "kernels/device_check.h"
#include "kernels/runtime/runtime.h"

namespace tiletune {
namespace autotune {

// The DeviceIdentity of `context`'s GPU, with driver, CUDA and NVRTC versions.
tuning::DeviceIdentity IdentifyDevice(const Context& context, const std::string& nvrtc_version);

// cuMemcpyDtoDAsync of the largest of 1 GiB and an eighth of device memory that fits,
// median of five, in GB/s counting bytes read plus written.
absl::StatusOr<double> MeasureDramCeiling(const Context& context);

class CudaTuningDevice : public TuningDevice {
 public:
  // `context` and `compiler` (which builds the device-side compare) must outlive it.
  static absl::StatusOr<std::unique_ptr<CudaTuningDevice>> Create(Context& context,
                                                                  CompilationProvider& compiler);
  ~CudaTuningDevice() override;

  tuning::DeviceIdentity Identity() const override;
  std::string ArchName() const override;
  absl::StatusOr<double> MeasureCeiling() override;
  absl::Status Prepare(const TuningTask& task) override;
  absl::StatusOr<std::unique_ptr<LoadedCandidate>> Load(const Candidate& candidate,
                                                        const Cubin& cubin) override;
  absl::Status Verify(LoadedCandidate& kernel) override;
  absl::StatusOr<std::vector<double>> Measure(LoadedCandidate& kernel, int samples) override;
  std::vector<BaselineInfo> Baselines() override;
  absl::StatusOr<double> SampleBaseline(int index) override;

 private:
  class Workspace;
  CudaTuningDevice(Context& context, std::string nvrtc_version, std::unique_ptr<DeviceCheck> check);

  Context& context_;
  std::string nvrtc_version_;
  std::unique_ptr<DeviceCheck> check_;
  std::unique_ptr<Workspace> workspace_;
};

}  // namespace autotune
}  // namespace tiletune

#endif  // AUTOTUNE_CUDA_TUNING_DEVICE_H_

#include "autotune/cuda_tuning_device.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "autotune/cudnn_im2col.h"
#include "compiler/base/status_macros.h"
#include "compiler/ops/im2col/im2col_op.h"
#include "kernels/runtime/driver_api.h"
#include "kernels/measure.h"
#include "kernels/tile_kernel.h"
#include "kernels/verify.h"

namespace tiletune {
namespace autotune {
namespace {

class CudaCandidate : public LoadedCandidate {
 public:
  explicit CudaCandidate(std::unique_ptr<TileKernel> kernel) : kernel_(std::move(kernel)) {}
  TileKernel& kernel() { return *kernel_; }

 private:
  std::unique_ptr<TileKernel> kernel_;
};

}  // namespace

// One task's measurement harness (kernels/measure.h: rotated buffer sets, the reference,
// verification, timing) and its baselines on the same buffers.
class CudaTuningDevice::Workspace {
 public:
  static absl::StatusOr<std::unique_ptr<Workspace>> Create(const Context& context,
                                                           const TuningTask& task) {
    auto ws = std::unique_ptr<Workspace>(new Workspace(context));
    std::mt19937_64 rng(std::random_device{}());
    TT_ASSIGN_OR_RETURN(ws->bench_, MeasureBench::Create(context, *task.definition, *task.op, rng));
    TT_RETURN_IF_ERROR(ws->SetUpBaselines(task));
    return ws;
  }

  absl::Status Verify(TileKernel& kernel, DeviceCheck& check) {
    return bench_->Verify(bench_->LauncherFor(kernel), kernel.lowered().kernel_name, &check);
  }

  // Microseconds per launch: `samples` rounds of one batch of about 300 us.
  absl::StatusOr<std::vector<double>> Measure(TileKernel& kernel, int samples) {
    return Time(bench_->LauncherFor(kernel), samples);
  }

  const std::vector<BaselineInfo>& baselines() const { return baselines_; }

  // One sample of baselines()[index], timed as Measure times a kernel.
  absl::StatusOr<double> SampleBaseline(int index) {
    if (index < 0 || index >= static_cast<int>(baselines_.size()) ||
        !baselines_[index].unavailable.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("baseline ", index, " cannot be measured"));
    }
    Launcher run;
    if (index == 0) {
      const DriverApi& cu = context_.api();
      // Its own rotation over the sets: its buffers need not be the operands'.
      run = [this, &cu, s = size_t{0}](CUdeviceptr, CUdeviceptr, CUstream stream) mutable {
        const auto [src, dst] = MemcpyBuffers(s++ % bench_->set_count());
        return ToStatus(cu.cuMemcpyDtoDAsync(dst, src, memcpy_bytes_, stream), "cuMemcpyDtoDAsync");
      };
    } else {
      run = [this](CUdeviceptr input, CUdeviceptr output, CUstream) {
        return cudnn_->Run(input, output);
      };
    }
    TT_ASSIGN_OR_RETURN(std::vector<double> us, Time(run, 1));
    return us[0];
  }

 private:
  explicit Workspace(const Context& context) : context_(context) {}

  // `samples` timings of `launch` in microseconds per run, each over a batch long enough
  // (about 300 us) that host latency does not enter, after a warm-up over every set.
  absl::StatusOr<std::vector<double>> Time(const Launcher& launch, int samples) {
    MeasureBench::RoundOptions options;
    options.batch_us = 300;
    options.max_batch = 256;
    options.min_rounds = options.max_rounds = samples;
    TT_ASSIGN_OR_RETURN(MeasureBench::Rounds rounds, bench_->Interleave({launch}, options, nullptr));
    return rounds.samples_us[0];
  }

  // The baselines of `task` on these buffers: cudaMemcpy always (it may need a buffer of
  // its own), cudnnIm2Col for im2col when cuDNN loads.
  absl::Status SetUpBaselines(const TuningTask& task) {
    const size_t in_span = bench_->sizes().input_bytes, out_span = bench_->sizes().output_bytes;
    memcpy_bytes_ = static_cast<size_t>(task.sizes.bytes_moved / 2);
    baselines_.push_back({"cudaMemcpy", ""});
    if (memcpy_bytes_ == 0) baselines_.back().unavailable = "the problem moves no bytes";
    if (memcpy_bytes_ > 0 && memcpy_bytes_ > std::min(in_span, out_span) &&
        bench_->set_count() < 2) {
      // One set only, and one side too small: copy from the larger side into a spare. No
      // memory for it loses the baseline, not the task.
      absl::StatusOr<DeviceBuffer> spare = DeviceBuffer::Allocate(context_, memcpy_bytes_);
      if (spare.ok()) {
        spare_ = *std::move(spare);
      } else {
        baselines_.back().unavailable =
            absl::StrCat("no memory for its destination: ", spare.status().message());
      }
    }
    if (task.op->op_name() == Im2colOp::Name()) {
      const auto& op = static_cast<const Im2colOp&>(*task.op);
      absl::StatusOr<std::unique_ptr<CudnnIm2col>> cudnn =
          CudnnIm2col::Create(op.dtype(), op.geometry);
      baselines_.push_back({"cudnnIm2Col", ""});
      if (cudnn.ok()) {
        cudnn_ = *std::move(cudnn);
      } else {
        baselines_.back().unavailable = std::string(cudnn.status().message());
      }
    }
    return absl::OkStatus();
  }

  // Source and destination of the memcpy baseline in rotation set `s`: the set's input to
  // its output when both hold the bytes; else the larger side of set s to that of the
  // next set (or to the spare buffer when there is one set).
  std::pair<CUdeviceptr, CUdeviceptr> MemcpyBuffers(size_t s) const {
    const size_t in_span = bench_->sizes().input_bytes, out_span = bench_->sizes().output_bytes;
    if (memcpy_bytes_ <= std::min(in_span, out_span)) return bench_->Set(s);
    auto side = [&](size_t set) {
      return in_span >= out_span ? bench_->Set(set).first : bench_->Set(set).second;
    };
    if (spare_.ptr() != 0) return {side(s), spare_.ptr()};
    return {side(s), side((s + 1) % bench_->set_count())};
  }

  const Context& context_;
  std::unique_ptr<MeasureBench> bench_;
  std::vector<BaselineInfo> baselines_;
  size_t memcpy_bytes_ = 0;
  DeviceBuffer spare_;
  std::unique_ptr<CudnnIm2col> cudnn_;
};

tuning::DeviceIdentity IdentifyDevice(const Context& context, const std::string& nvrtc_version) {
  const DeviceInfo& info = context.info();
  tuning::DeviceIdentity device;
  device.set_name(info.name);
  device.set_cc_major(info.cc_major);
  device.set_cc_minor(info.cc_minor);
  device.set_sm_count(info.sm_count);
  device.set_l2_bytes(info.l2_bytes);
  device.set_memory_bytes(info.memory_bytes);
  // HBM parts have wide buses; GDDR parts 384 bits or fewer.
  device.set_memory_bandwidth_class(info.memory_bus_bits >= 2048 ? "hbm" : "gddr");
  device.set_cuda_version(info.driver_version);
  device.set_nvrtc_version(nvrtc_version);
  device.set_uuid(info.uuid);
  return device;
}

absl::StatusOr<double> MeasureDramCeiling(const Context& context) {
  const size_t bytes = std::min<size_t>(size_t{1} << 30, context.info().memory_bytes / 8);
  TT_ASSIGN_OR_RETURN(DeviceBuffer a, DeviceBuffer::Allocate(context, bytes));
  TT_ASSIGN_OR_RETURN(DeviceBuffer b, DeviceBuffer::Allocate(context, bytes));
  TT_RETURN_IF_ERROR(a.Fill(0x3c));
  TT_ASSIGN_OR_RETURN(auto start, Event::Create(context));
  TT_ASSIGN_OR_RETURN(auto stop, Event::Create(context));
  const DriverApi& cu = context.api();
  std::vector<double> ms;
  for (int i = 0; i < 6; ++i) {
    TT_RETURN_IF_ERROR(start->Record(nullptr));
    TT_RETURN_IF_ERROR(ToStatus(cu.cuMemcpyDtoDAsync(b.ptr(), a.ptr(), bytes, nullptr),
                                "cuMemcpyDtoDAsync"));
    TT_RETURN_IF_ERROR(stop->Record(nullptr));
    TT_RETURN_IF_ERROR(stop->Synchronize());
    TT_ASSIGN_OR_RETURN(float elapsed, stop->ElapsedSince(*start));
    if (i > 0) ms.push_back(elapsed);  // The first is a warm-up.
  }
  std::sort(ms.begin(), ms.end());
  return 2.0 * bytes / (ms[ms.size() / 2] * 1e6);
}

CudaTuningDevice::CudaTuningDevice(Context& context, std::string nvrtc_version,
                                   std::unique_ptr<DeviceCheck> check)
    : context_(context), nvrtc_version_(std::move(nvrtc_version)), check_(std::move(check)) {}

CudaTuningDevice::~CudaTuningDevice() = default;

absl::StatusOr<std::unique_ptr<CudaTuningDevice>> CudaTuningDevice::Create(
    Context& context, CompilationProvider& compiler) {
  TT_ASSIGN_OR_RETURN(std::unique_ptr<DeviceCheck> check, DeviceCheck::Create(context, compiler));
  return std::unique_ptr<CudaTuningDevice>(
      new CudaTuningDevice(context, compiler.CompilerName(), std::move(check)));
}

tuning::DeviceIdentity CudaTuningDevice::Identity() const {
  return IdentifyDevice(context_, nvrtc_version_);
}

std::string CudaTuningDevice::ArchName() const { return context_.info().ArchName(); }

absl::StatusOr<double> CudaTuningDevice::MeasureCeiling() { return MeasureDramCeiling(context_); }

absl::Status CudaTuningDevice::Prepare(const TuningTask& task) {
  workspace_.reset();
  TT_ASSIGN_OR_RETURN(workspace_, Workspace::Create(context_, task));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<LoadedCandidate>> CudaTuningDevice::Load(const Candidate& candidate,
                                                                        const Cubin& cubin) {
  TT_ASSIGN_OR_RETURN(std::unique_ptr<TileKernel> kernel,
                      TileKernel::CreateFromCubin(context_, candidate.lowered,
                                                  candidate.source.text, cubin));
  return std::unique_ptr<LoadedCandidate>(new CudaCandidate(std::move(kernel)));
}

absl::Status CudaTuningDevice::Verify(LoadedCandidate& kernel) {
  if (workspace_ == nullptr) return absl::FailedPreconditionError("no task prepared");
  return workspace_->Verify(static_cast<CudaCandidate&>(kernel).kernel(), *check_);
}

absl::StatusOr<std::vector<double>> CudaTuningDevice::Measure(LoadedCandidate& kernel,
                                                              int samples) {
  if (workspace_ == nullptr) return absl::FailedPreconditionError("no task prepared");
  return workspace_->Measure(static_cast<CudaCandidate&>(kernel).kernel(), samples);
}

std::vector<BaselineInfo> CudaTuningDevice::Baselines() {
  if (workspace_ == nullptr) return {};
  return workspace_->baselines();
}

absl::StatusOr<double> CudaTuningDevice::SampleBaseline(int index) {
  if (workspace_ == nullptr) return absl::FailedPreconditionError("no task prepared");
  return workspace_->SampleBaseline(index);
}

}  // namespace autotune
}  // namespace tiletune

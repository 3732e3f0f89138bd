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
#include "kernels/tile_kernel.h"
#include "kernels/verify.h"

namespace tiletune {
namespace autotune {
namespace {

constexpr size_t kGuard = kGuardBytes;

class CudaCandidate : public LoadedCandidate {
 public:
  explicit CudaCandidate(std::unique_ptr<TileKernel> kernel) : kernel_(std::move(kernel)) {}
  TileKernel& kernel() { return *kernel_; }

 private:
  std::unique_ptr<TileKernel> kernel_;
};

}  // namespace

// Device buffers for one task: rotation sets larger than the L2, and the expected image
// of the first set's output (guards included).
class CudaTuningDevice::Workspace {
 public:
  static absl::StatusOr<std::unique_ptr<Workspace>> Create(const Context& context,
                                                           const TuningTask& task) {
    auto ws = std::unique_ptr<Workspace>(new Workspace(context));
    ws->in_span_ = task.sizes.input_bytes;
    ws->out_span_ = task.sizes.output_bytes;
    const size_t per_set = ws->in_span_ + ws->out_span_ + 4 * kGuard;
    const size_t wanted = static_cast<size_t>(2.5 * context.info().l2_bytes);
    size_t sets = std::clamp<size_t>((wanted + per_set - 1) / per_set, 1, 64);
    sets = std::max<size_t>(1, std::min<size_t>(sets, context.info().memory_bytes / 4 / per_set));
    std::mt19937_64 rng(std::random_device{}());
    TT_ASSIGN_OR_RETURN(VerificationImages images,
                        MakeVerificationImages(*task.definition, *task.op, rng));
    const HostBytes& input = images.input;
    const HostBytes& expected = images.expected;
    ws->poison_ = images.poison;
    TT_ASSIGN_OR_RETURN(ws->items_, UploadExampleItems(context, *task.definition, *task.op));
    TT_ASSIGN_OR_RETURN(ws->expected_, DeviceBuffer::Allocate(context, expected.size()));
    TT_RETURN_IF_ERROR(ws->expected_.CopyFromHost(expected.data(), expected.size()));
    for (size_t s = 0; s < sets; ++s) {
      TT_ASSIGN_OR_RETURN(DeviceBuffer in, DeviceBuffer::Allocate(context, input.size()));
      TT_ASSIGN_OR_RETURN(DeviceBuffer out, DeviceBuffer::Allocate(context, expected.size()));
      // The first set from the host, the others from it on the device.
      TT_RETURN_IF_ERROR(s == 0 ? in.CopyFromHost(input.data(), input.size())
                                : in.CopyFrom(ws->in_.front()));
      ws->in_.push_back(std::move(in));
      ws->out_.push_back(std::move(out));
    }
    TT_RETURN_IF_ERROR(ws->SetUpBaselines(task));
    return ws;
  }

  // Launches once on set 0 over a poisoned output and compares every byte.
  absl::Status Verify(TileKernel& kernel, DeviceCheck& check) {
    TT_RETURN_IF_ERROR(out_[0].Fill(poison_));
    TT_RETURN_IF_ERROR(context_.Synchronize());
    TT_RETURN_IF_ERROR(
        kernel.Launch(in_[0].ptr() + kGuard, out_[0].ptr() + kGuard, nullptr, items_.get()));
    TT_RETURN_IF_ERROR(context_.Synchronize());
    TT_ASSIGN_OR_RETURN(Mismatch m, check.Compare(out_[0].ptr(), expected_.ptr(),
                                                  out_span_ + 2 * kGuard, nullptr));
    if (m.count == 0) return absl::OkStatus();
    const std::string where = m.first < kGuard ? "in the guard zone before the output"
                              : m.first >= kGuard + out_span_
                                  ? "in the guard zone after the output"
                                  : absl::StrCat("at output byte ", m.first - kGuard);
    return absl::DataLossError(absl::StrCat(m.count, " wrong byte(s), the first ", where));
  }

  // Microseconds per launch: `samples` batches rotating over the sets, after a warm-up.
  absl::StatusOr<std::vector<double>> Measure(TileKernel& kernel, Event& start, Event& stop,
                                              int samples) {
    return Time(
        [&](size_t s) {
          return kernel.Launch(in_[s].ptr() + kGuard, out_[s].ptr() + kGuard, nullptr,
                               items_.get());
        },
        start, stop, samples);
  }

  const std::vector<BaselineInfo>& baselines() const { return baselines_; }

  // One sample of baselines()[index], timed as Measure times a kernel.
  absl::StatusOr<double> SampleBaseline(int index, Event& start, Event& stop) {
    if (index < 0 || index >= static_cast<int>(baselines_.size()) ||
        !baselines_[index].unavailable.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("baseline ", index, " cannot be measured"));
    }
    std::function<absl::Status(size_t)> run;
    if (index == 0) {
      const DriverApi& cu = context_.api();
      run = [&](size_t s) {
        const auto [src, dst] = MemcpyBuffers(s);
        return ToStatus(cu.cuMemcpyDtoDAsync(dst, src, memcpy_bytes_, nullptr), "cuMemcpyDtoDAsync");
      };
    } else {
      run = [&](size_t s) { return cudnn_->Run(in_[s].ptr() + kGuard, out_[s].ptr() + kGuard); };
    }
    TT_ASSIGN_OR_RETURN(std::vector<double> us, Time(run, start, stop, 1));
    return us[0];
  }

 private:
  explicit Workspace(const Context& context) : context_(context) {}

  // `samples` timings in microseconds per run of `launch(set)`, each over a batch long
  // enough (about 300 us) that host latency does not enter, rotating over the sets, after
  // a warm-up over every set.
  absl::StatusOr<std::vector<double>> Time(const std::function<absl::Status(size_t)>& launch,
                                           Event& start, Event& stop, int samples) {
    TT_RETURN_IF_ERROR(start.Record(nullptr));
    for (size_t i = 0; i < in_.size(); ++i) TT_RETURN_IF_ERROR(launch(i));
    TT_RETURN_IF_ERROR(stop.Record(nullptr));
    TT_RETURN_IF_ERROR(stop.Synchronize());
    TT_ASSIGN_OR_RETURN(float warm_ms, stop.ElapsedSince(start));
    const double per_launch_us = 1e3 * warm_ms / in_.size();
    const int batch = static_cast<int>(
        std::clamp(std::ceil(300.0 / std::max(per_launch_us, 0.5)), 1.0, 256.0));
    std::vector<double> out;
    for (int s = 0; s < samples; ++s) {
      TT_RETURN_IF_ERROR(start.Record(nullptr));
      for (int b = 0; b < batch; ++b) TT_RETURN_IF_ERROR(launch(next_++ % in_.size()));
      TT_RETURN_IF_ERROR(stop.Record(nullptr));
      TT_RETURN_IF_ERROR(stop.Synchronize());
      TT_ASSIGN_OR_RETURN(float ms, stop.ElapsedSince(start));
      out.push_back(1e3 * ms / batch);
    }
    return out;
  }

  // The baselines of `task` on these buffers: cudaMemcpy always (it may need a buffer of
  // its own), cudnnIm2Col for im2col when cuDNN loads.
  absl::Status SetUpBaselines(const TuningTask& task) {
    memcpy_bytes_ = static_cast<size_t>(task.sizes.bytes_moved / 2);
    baselines_.push_back({"cudaMemcpy", ""});
    if (memcpy_bytes_ == 0) baselines_.back().unavailable = "the problem moves no bytes";
    if (memcpy_bytes_ > 0 && memcpy_bytes_ > std::min(in_span_, out_span_) && in_.size() < 2) {
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
    if (memcpy_bytes_ <= std::min(in_span_, out_span_)) {
      return {in_[s].ptr() + kGuard, out_[s].ptr() + kGuard};
    }
    const std::vector<DeviceBuffer>& side = in_span_ >= out_span_ ? in_ : out_;
    if (spare_.ptr() != 0) return {side[s].ptr() + kGuard, spare_.ptr()};
    return {side[s].ptr() + kGuard, side[(s + 1) % side.size()].ptr() + kGuard};
  }

  const Context& context_;
  size_t in_span_ = 0, out_span_ = 0;
  uint8_t poison_ = 0;
  // The op's example item table (items listed at run time), for every launch.
  DeviceItems items_;
  size_t next_ = 0;
  DeviceBuffer expected_;
  std::vector<DeviceBuffer> in_, out_;
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
                                   std::unique_ptr<DeviceCheck> check,
                                   std::unique_ptr<Event> start, std::unique_ptr<Event> stop)
    : context_(context),
      nvrtc_version_(std::move(nvrtc_version)),
      check_(std::move(check)),
      start_(std::move(start)),
      stop_(std::move(stop)) {}

CudaTuningDevice::~CudaTuningDevice() = default;

absl::StatusOr<std::unique_ptr<CudaTuningDevice>> CudaTuningDevice::Create(
    Context& context, CompilationProvider& compiler) {
  TT_ASSIGN_OR_RETURN(std::unique_ptr<DeviceCheck> check, DeviceCheck::Create(context, compiler));
  TT_ASSIGN_OR_RETURN(auto start, Event::Create(context));
  TT_ASSIGN_OR_RETURN(auto stop, Event::Create(context));
  return std::unique_ptr<CudaTuningDevice>(new CudaTuningDevice(
      context, compiler.CompilerName(), std::move(check), std::move(start), std::move(stop)));
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
  return workspace_->Measure(static_cast<CudaCandidate&>(kernel).kernel(), *start_, *stop_,
                             samples);
}

std::vector<BaselineInfo> CudaTuningDevice::Baselines() {
  if (workspace_ == nullptr) return {};
  return workspace_->baselines();
}

absl::StatusOr<double> CudaTuningDevice::SampleBaseline(int index) {
  if (workspace_ == nullptr) return absl::FailedPreconditionError("no task prepared");
  return workspace_->SampleBaseline(index, *start_, *stop_);
}

}  // namespace autotune
}  // namespace tiletune

#include "autotune/cuda_tuning_device.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/base/status_macros.h"
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
    const std::vector<uint8_t>& input = images.input;
    const std::vector<uint8_t>& expected = images.expected;
    ws->poison_ = images.poison;
    TT_ASSIGN_OR_RETURN(ws->expected_, DeviceBuffer::Allocate(context, expected.size()));
    TT_RETURN_IF_ERROR(ws->expected_.CopyFromHost(expected.data(), expected.size()));
    for (size_t s = 0; s < sets; ++s) {
      TT_ASSIGN_OR_RETURN(DeviceBuffer in, DeviceBuffer::Allocate(context, input.size()));
      TT_ASSIGN_OR_RETURN(DeviceBuffer out, DeviceBuffer::Allocate(context, expected.size()));
      TT_RETURN_IF_ERROR(in.CopyFromHost(input.data(), input.size()));
      ws->in_.push_back(std::move(in));
      ws->out_.push_back(std::move(out));
    }
    return ws;
  }

  // Launches once on set 0 over a poisoned output and compares every byte.
  absl::Status Verify(TileKernel& kernel, DeviceCheck& check) {
    TT_RETURN_IF_ERROR(out_[0].Fill(poison_));
    TT_RETURN_IF_ERROR(context_.Synchronize());
    TT_RETURN_IF_ERROR(kernel.Launch(in_[0].ptr() + kGuard, out_[0].ptr() + kGuard, nullptr));
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
    auto launch = [&](size_t i) {
      const size_t s = i % in_.size();
      return kernel.Launch(in_[s].ptr() + kGuard, out_[s].ptr() + kGuard, nullptr);
    };
    // Warm-up over every set, which also times one rotation.
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
      for (int b = 0; b < batch; ++b) TT_RETURN_IF_ERROR(launch(next_++));
      TT_RETURN_IF_ERROR(stop.Record(nullptr));
      TT_RETURN_IF_ERROR(stop.Synchronize());
      TT_ASSIGN_OR_RETURN(float ms, stop.ElapsedSince(start));
      out.push_back(1e3 * ms / batch);
    }
    return out;
  }

 private:
  explicit Workspace(const Context& context) : context_(context) {}
  const Context& context_;
  size_t in_span_ = 0, out_span_ = 0;
  uint8_t poison_ = 0;
  size_t next_ = 0;
  DeviceBuffer expected_;
  std::vector<DeviceBuffer> in_, out_;
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

}  // namespace autotune
}  // namespace tiletune

#include "autotune/simulated_device.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "compiler/base/sha256.h"
#include "compiler/cuda/kernel_digest.h"
#include "compiler/base/status_macros.h"
#include "compiler/target/target.h"

namespace tiletune {
namespace autotune {
namespace {

class SimulatedCandidate : public LoadedCandidate {
 public:
  explicit SimulatedCandidate(const Candidate& candidate) : candidate_(candidate) {}
  const Candidate& candidate() const { return candidate_; }
  int samples_taken = 0;

 private:
  const Candidate& candidate_;
};

// Selects about `rate` of all candidates by their source hash, independently per `salt`.
std::function<bool(const Candidate&)> ByRate(double rate, uint64_t seed, const std::string& salt) {
  if (rate <= 0) return nullptr;
  return [rate, seed, salt](const Candidate& c) {
    return UnitHash(absl::StrCat(salt, c.source_sha256), seed) < rate;
  };
}

}  // namespace

double UnitHash(absl::string_view text, uint64_t seed) {
  const std::string digest = Sha256Hex(absl::StrCat(seed, ":", text));
  uint64_t value = 0;
  for (int i = 0; i < 13; ++i) {
    value = value * 16 + std::stoi(digest.substr(i, 1), nullptr, 16);
  }
  return static_cast<double>(value) / static_cast<double>(uint64_t{1} << 52);
}

double ModelTimeUs(const Candidate& candidate, const TuningTask& task, double ceiling_gbps) {
  const double vector = std::min(16, std::max(1, candidate.lowered->vector_bytes));
  const double efficiency =
      0.45 + 0.45 * vector / 16 + 0.08 * UnitHash(candidate.source_sha256, 0);
  return 2.0 + static_cast<double>(task.sizes.bytes_moved) / (1e3 * ceiling_gbps * efficiency);
}

absl::StatusOr<SimulatedDeviceOptions> ParseSimulation(absl::string_view spec) {
  SimulatedDeviceOptions options;
  double fault = 0, hang = 0, wrong = 0;
  for (absl::string_view item : absl::StrSplit(spec, ',', absl::SkipEmpty())) {
    std::vector<absl::string_view> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat("--simulate: '", item, "': ", why,
                                                     "; accepted: seed=N, noise=F, name=TEXT, "
                                                     "fault=F, hang=F, wrong=F (F in [0, 1])"));
    };
    if (kv.size() != 2) return bad("not key=value");
    if (kv[0] == "name") {
      options.name = std::string(kv[1]);
      continue;
    }
    if (kv[0] == "seed") {
      if (!absl::SimpleAtoi(kv[1], &options.seed)) return bad("not a non-negative integer");
      continue;
    }
    double value = 0;
    if (!absl::SimpleAtod(kv[1], &value) || value < 0 || value > 1) return bad("not in [0, 1]");
    if (kv[0] == "noise") {
      options.noise = value;
    } else if (kv[0] == "fault") {
      fault = value;
    } else if (kv[0] == "hang") {
      hang = value;
    } else if (kv[0] == "wrong") {
      wrong = value;
    } else {
      return bad("unknown key");
    }
  }
  options.faults = ByRate(fault, options.seed, "fault");
  options.hangs = ByRate(hang, options.seed, "hang");
  options.wrong = ByRate(wrong, options.seed, "wrong");
  return options;
}

SimulatedDevice::SimulatedDevice(SimulatedDeviceOptions options) : options_(std::move(options)) {}

tuning::DeviceIdentity SimulatedDevice::Identity() const {
  tuning::DeviceIdentity device;
  device.set_name(options_.name);
  device.set_cc_major(options_.cc_major);
  device.set_cc_minor(options_.cc_minor);
  device.set_sm_count(options_.sm_count);
  device.set_memory_bandwidth_class("simulated");
  device.set_nvrtc_version("simulated");
  return device;
}

std::string SimulatedDevice::ArchName() const {
  return Target::ArchNameForDevice(options_.cc_major, options_.cc_minor);
}

absl::StatusOr<double> SimulatedDevice::MeasureCeiling() { return options_.ceiling_gbps; }

absl::Status SimulatedDevice::Prepare(const TuningTask& task) {
  if (faulted_) return absl::AbortedError("the simulated device faulted earlier");
  task_ = &task;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<LoadedCandidate>> SimulatedDevice::Load(const Candidate& candidate,
                                                                       const Cubin& cubin) {
  if (faulted_) return absl::AbortedError("the simulated device faulted earlier");
  if (cubin.bytes != absl::StrCat("simulated:", candidate.source_sha256)) {
    return absl::InvalidArgumentError("not a cubin of this candidate (simulated)");
  }
  return std::unique_ptr<LoadedCandidate>(new SimulatedCandidate(candidate));
}

absl::Status SimulatedDevice::Verify(LoadedCandidate& kernel) {
  if (faulted_) return absl::AbortedError("the simulated device faulted earlier");
  ++verifies_;
  const Candidate& c = static_cast<SimulatedCandidate&>(kernel).candidate();
  if (options_.hangs && options_.hangs(c)) {
    // A kernel that never finishes: only the supervisor's kill ends it.
    while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  if (options_.faults && options_.faults(c)) {
    faulted_ = true;
    return absl::AbortedError("simulated fault: CUDA_ERROR_ILLEGAL_ADDRESS");
  }
  if (options_.wrong && options_.wrong(c)) {
    return absl::DataLossError("17 wrong byte(s), the first at output byte 4096 (simulated)");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<double>> SimulatedDevice::Measure(LoadedCandidate& kernel,
                                                             int samples) {
  if (faulted_) return absl::AbortedError("the simulated device faulted earlier");
  if (task_ == nullptr) return absl::FailedPreconditionError("no task prepared");
  ++measures_;
  auto& loaded = static_cast<SimulatedCandidate&>(kernel);
  const Candidate& c = loaded.candidate();
  const double time = options_.time_us ? options_.time_us(c, *task_)
                                       : ModelTimeUs(c, *task_, options_.ceiling_gbps);
  std::vector<double> out;
  for (int s = 0; s < samples; ++s) {
    const double u =
        2 * UnitHash(absl::StrCat(c.source_sha256, "#", loaded.samples_taken++), options_.seed) - 1;
    out.push_back(time * (1 + options_.noise * u));
  }
  return out;
}

std::vector<BaselineInfo> SimulatedDevice::Baselines() {
  if (task_ == nullptr) return {};
  std::vector<BaselineInfo> baselines = {{"cudaMemcpy", ""}};
  if (task_->op->op_name() == "im2col") {
    baselines.push_back({"cudnnIm2Col", options_.library_baseline_unavailable});
  }
  return baselines;
}

absl::StatusOr<double> SimulatedDevice::SampleBaseline(int index) {
  if (faulted_) return absl::AbortedError("the simulated device faulted earlier");
  const std::vector<BaselineInfo> baselines = Baselines();
  if (index < 0 || index >= static_cast<int>(baselines.size()) ||
      !baselines[index].unavailable.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("baseline ", index, " cannot be measured"));
  }
  const double efficiency = index == 0 ? options_.memcpy_efficiency : options_.library_efficiency;
  const double time =
      2.0 + static_cast<double>(task_->sizes.bytes_moved) / (1e3 * options_.ceiling_gbps * efficiency);
  const double u = 2 * UnitHash(absl::StrCat("baseline", index, "#", baseline_samples_++),
                                options_.seed) - 1;
  return time * (1 + options_.noise * u);
}

absl::StatusOr<Ptx> SimulatedCompilationProvider::CompileToPtx(const CudaSource& source,
                                                                const CompileOptions& options) {
  return Ptx{absl::StrCat("// simulated PTX of ", source.name), options.arch, ""};
}

absl::StatusOr<Cubin> SimulatedCompilationProvider::CompileToCubin(const CudaSource& source,
                                                                    const CompileOptions& options) {
  return Cubin{absl::StrCat("simulated:", KernelDigest(source.text)), options.arch, ""};
}

}  // namespace autotune
}  // namespace tiletune

// A simulated GPU for CPU tests of the tuner, the supervisor and sharded runs: candidates
// take deterministic times, and chosen ones fault the device, hang, or compute wrong
// output, so every path of the tuner runs without a GPU.
//
//   SimulatedDeviceOptions options;
//   options.faults = [](const Candidate& c) { return c.lowered->path_name == "cp_async"; };
//   SimulatedDevice device(options);
//   SimulatedCompilationProvider compiler;   // "compiles" instantly
//   Tuner tuner(device, compiler, {});
//
// `autotune --simulate=SPEC` runs the real binary on one (ParseSimulation).
#ifndef AUTOTUNE_SIMULATED_DEVICE_H_
#define AUTOTUNE_SIMULATED_DEVICE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "autotune/tuning_device.h"
#include "compiler/cuda/compilation_provider.h"

namespace tiletune {
namespace autotune {

// A deterministic number in [0, 1) for `text` and `seed`.
double UnitHash(absl::string_view text, uint64_t seed);

// The default time model: a launch overhead of 2 us plus the bytes moved at the ceiling
// times an efficiency that grows with the vector width (45% to 90%) and varies by up to 8%
// with the candidate's source hash.
double ModelTimeUs(const Candidate& candidate, const TuningTask& task, double ceiling_gbps);

struct SimulatedDeviceOptions {
  // The identity the device reports.
  std::string name = "Simulated GPU";
  int cc_major = 9;
  int cc_minor = 0;
  int sm_count = 132;
  // What MeasureCeiling reports, GB/s.
  double ceiling_gbps = 4000;
  // Microseconds one run of a candidate takes; empty means ModelTimeUs.
  std::function<double(const Candidate&, const TuningTask&)> time_us;
  // Each sample is the time scaled by 1 + noise * u, u in [-1, 1) drawn from `seed`, the
  // candidate and the sample's number.
  double noise = 0;
  uint64_t seed = 1;
  // Candidates whose Verify faults the device (Aborted, and every later call too), hangs
  // (never returns), or finds wrong bytes. Empty means none.
  std::function<bool(const Candidate&)> faults;
  std::function<bool(const Candidate&)> hangs;
  std::function<bool(const Candidate&)> wrong;
  // Baselines: cudaMemcpy, and for im2col cudnnIm2Col, take the model's 2 us plus the
  // bytes moved at the ceiling times these efficiencies. Non-empty: why the library
  // baseline (cudnnIm2Col) is unavailable.
  double memcpy_efficiency = 0.92;
  double library_efficiency = 0.40;
  std::string library_baseline_unavailable;
};

// Options from a spec "key=value,...": seed, noise, name, fault, hang and wrong (the
// fraction of candidates, chosen by their source hash, that fault, hang or are wrong).
// InvalidArgument naming a bad key or value.
absl::StatusOr<SimulatedDeviceOptions> ParseSimulation(absl::string_view spec);

class SimulatedDevice : public TuningDevice {
 public:
  explicit SimulatedDevice(SimulatedDeviceOptions options);

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

  // Verify and Measure calls so far, for tests.
  int verifies() const { return verifies_; }
  int measures() const { return measures_; }

 private:
  SimulatedDeviceOptions options_;
  const TuningTask* task_ = nullptr;
  bool faulted_ = false;
  int verifies_ = 0;
  int measures_ = 0;
  int baseline_samples_ = 0;
};

// A compilation provider that compiles nothing: the "cubin" of a source is its hash, which
// the simulated device checks on Load. Thread-safe.
class SimulatedCompilationProvider : public CompilationProvider {
 public:
  std::string Name() const override { return "simulated"; }
  absl::StatusOr<Ptx> CompileToPtx(const CudaSource& source,
                                   const CompileOptions& options) override;
  absl::StatusOr<Cubin> CompileToCubin(const CudaSource& source,
                                       const CompileOptions& options) override;
};

}  // namespace autotune
}  // namespace tiletune

#endif  // AUTOTUNE_SIMULATED_DEVICE_H_

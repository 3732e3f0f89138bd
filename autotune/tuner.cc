#include "autotune/tuner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "autotune/tuning_db.h"
#include "autotune/winner.h"
#include "compiler/backend/tuning_conversion.h"
#include "compiler/base/status_macros.h"
#include "kernels/device_check.h"
#include "kernels/runtime/driver_api.h"

namespace tiletune {
namespace autotune {
namespace {

constexpr size_t kGuard = 4096;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

std::vector<absl::StatusOr<Cubin>> CompileAll(CompilationProvider& compiler,
                                              const std::vector<Candidate>& candidates,
                                              const std::string& arch, int threads) {
  std::vector<absl::StatusOr<Cubin>> out(candidates.size(), absl::UnknownError("not compiled"));
  std::atomic<size_t> next{0};
  CompileOptions options;
  options.arch = arch;
  std::vector<std::thread> pool;
  int n = std::max(1, threads);
  for (int t = 0; t < n; ++t) {
    pool.emplace_back([&] {
      for (size_t i = next++; i < candidates.size(); i = next++) {
        out[i] = compiler.CompileToCubin(candidates[i].source, options);
      }
    });
  }
  for (auto& thread : pool) thread.join();
  return out;
}

// Device buffers for one problem: rotation sets larger than the L2, and the expected
// image of the first set's destination (guards included).
class Workspace {
 public:
  static absl::StatusOr<std::unique_ptr<Workspace>> Create(const Context& context,
                                                           const TuningTask& task) {
    auto ws = std::unique_ptr<Workspace>(new Workspace(context));
    ws->src_span_ = task.input_bytes;
    ws->dst_span_ = task.output_bytes;
    size_t per_set = ws->src_span_ + ws->dst_span_ + 4 * kGuard;
    size_t wanted = static_cast<size_t>(2.5 * context.info().l2_bytes);
    size_t sets = std::clamp<size_t>((wanted + per_set - 1) / per_set, 1, 64);
    sets = std::max<size_t>(1, std::min<size_t>(sets, context.info().memory_bytes / 4 / per_set));
    std::mt19937_64 rng(std::random_device{}());
    std::vector<uint8_t> src(ws->src_span_ + 2 * kGuard);
    for (size_t i = 0; i < src.size(); i += 8) {
      uint64_t word = rng();
      std::memcpy(src.data() + i, &word, std::min<size_t>(8, src.size() - i));
    }
    ws->poison_ = static_cast<uint8_t>(rng());
    std::vector<uint8_t> expected(ws->dst_span_ + 2 * kGuard, ws->poison_);
    TT_RETURN_IF_ERROR(task.reference(src.data() + kGuard, expected.data() + kGuard));
    TT_ASSIGN_OR_RETURN(ws->expected_, DeviceBuffer::Allocate(context, expected.size()));
    TT_RETURN_IF_ERROR(ws->expected_.CopyFromHost(expected.data(), expected.size()));
    for (size_t s = 0; s < sets; ++s) {
      TT_ASSIGN_OR_RETURN(DeviceBuffer s_buf, DeviceBuffer::Allocate(context, src.size()));
      TT_ASSIGN_OR_RETURN(DeviceBuffer d_buf, DeviceBuffer::Allocate(context, expected.size()));
      TT_RETURN_IF_ERROR(s_buf.CopyFromHost(src.data(), src.size()));
      ws->src_.push_back(std::move(s_buf));
      ws->dst_.push_back(std::move(d_buf));
    }
    return ws;
  }

  size_t sets() const { return src_.size(); }

  // Launches once on set 0 over a poisoned destination and compares every byte.
  absl::Status Verify(Launcher& kernel, DeviceCheck& check) {
    TT_RETURN_IF_ERROR(dst_[0].Fill(poison_));
    TT_RETURN_IF_ERROR(context_.Synchronize());
    TT_RETURN_IF_ERROR(kernel.Launch(src_[0].ptr() + kGuard, dst_[0].ptr() + kGuard, nullptr));
    TT_RETURN_IF_ERROR(context_.Synchronize());
    TT_ASSIGN_OR_RETURN(Mismatch m, check.Compare(dst_[0].ptr(), expected_.ptr(),
                                                  dst_span_ + 2 * kGuard, nullptr));
    if (m.count == 0) return absl::OkStatus();
    std::string where = m.first < kGuard ? "in the guard zone before dst"
                        : m.first >= kGuard + dst_span_
                            ? "in the guard zone after dst"
                            : absl::StrCat("at dst byte ", m.first - kGuard);
    return absl::DataLossError(absl::StrCat(m.count, " wrong byte(s), the first ", where));
  }

  // Microseconds per launch: `samples` batches rotating over the sets, after a warm-up.
  absl::StatusOr<std::vector<double>> Measure(Launcher& kernel, Event& start, Event& stop,
                                              int samples) {
    auto launch = [&](size_t i) {
      size_t s = i % src_.size();
      return kernel.Launch(src_[s].ptr() + kGuard, dst_[s].ptr() + kGuard, nullptr);
    };
    // Warm-up over every set, which also times one rotation.
    TT_RETURN_IF_ERROR(start.Record(nullptr));
    for (size_t i = 0; i < src_.size(); ++i) TT_RETURN_IF_ERROR(launch(i));
    TT_RETURN_IF_ERROR(stop.Record(nullptr));
    TT_RETURN_IF_ERROR(stop.Synchronize());
    TT_ASSIGN_OR_RETURN(float warm_ms, stop.ElapsedSince(start));
    double per_launch_us = 1e3 * warm_ms / src_.size();
    int batch = static_cast<int>(std::clamp(std::ceil(300.0 / std::max(per_launch_us, 0.5)),
                                            1.0, 256.0));
    std::vector<double> out;
    size_t next = 0;
    for (int s = 0; s < samples; ++s) {
      TT_RETURN_IF_ERROR(start.Record(nullptr));
      for (int b = 0; b < batch; ++b) TT_RETURN_IF_ERROR(launch(next++));
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
  size_t src_span_ = 0, dst_span_ = 0;
  uint8_t poison_ = 0;
  DeviceBuffer expected_;
  std::vector<DeviceBuffer> src_, dst_;
};

struct Run {
  const Candidate* candidate;
  std::unique_ptr<Launcher> kernel;
  Measurement measurement;
};

}  // namespace

absl::StatusOr<double> MeasureDramCeiling(const Context& context) {
  size_t bytes = std::min<size_t>(size_t{1} << 30, context.info().memory_bytes / 8);
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

DeviceIdentity IdentifyDevice(const Context& context, const std::string& nvrtc_version) {
  const DeviceInfo& info = context.info();
  DeviceIdentity device;
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

absl::StatusOr<TuningRecord> Tuner::Tune(const TuningTask& task,
                                         std::map<std::string, std::string>* faulted,
                                         TuneStats* stats) {
  TT_ASSIGN_OR_RETURN(Target target, Target::Parse(context_.info().ArchName()));
  int64_t bytes_moved = task.bytes_moved;
  int threads = options_.compile_threads > 0
                    ? options_.compile_threads
                    : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto progress = [&](const std::string& line) {
    if (options_.progress) options_.progress(line);
  };

  TT_ASSIGN_OR_RETURN(std::unique_ptr<Workspace> workspace, Workspace::Create(context_, task));
  TT_ASSIGN_OR_RETURN(std::unique_ptr<DeviceCheck> check, DeviceCheck::Create(context_, compiler_));
  TT_ASSIGN_OR_RETURN(auto start, Event::Create(context_));
  TT_ASSIGN_OR_RETURN(auto stop, Event::Create(context_));

  // Candidates live in `batches` (stable addresses) while runs point at them.
  std::vector<std::unique_ptr<std::vector<Candidate>>> batches;
  SearchStats search;
  std::vector<Run> runs;
  std::set<std::string> seen;
  double best_gbps = 0;

  // Compiles, verifies and measures every new candidate of `space`.
  auto evaluate = [&](std::vector<Candidate> built, const std::string& phase) -> absl::Status {
    auto fresh = std::make_unique<std::vector<Candidate>>();
    for (Candidate& c : built) {
      if (seen.insert(c.source_sha256).second) fresh->push_back(std::move(c));
      else ++search.duplicates;
    }
    batches.push_back(std::move(fresh));
    std::vector<Candidate>& candidates = *batches.back();
    auto compile_start = Clock::now();
    progress(absl::StrCat(phase, ": compiling ", candidates.size(), " variants on ", threads,
                          " threads"));
    std::vector<absl::StatusOr<Cubin>> cubins =
        CompileAll(compiler_, candidates, target.ArchName(), threads);
    stats->compile_seconds += Seconds(compile_start);
    auto gpu_start = Clock::now();
    auto fault = [&](const Candidate& c, const absl::Status& status) {
      (*faulted)[c.source_sha256] = std::string(status.message());
      ++stats->faults;
      return absl::AbortedError(absl::StrCat("variant ", DescribeVariant(c.variant),
                                             " faulted the GPU: ", status.message()));
    };
    // Verify every candidate before measuring any, so that a fault (which ends this
    // process's use of the GPU) costs the next attempt only verification.
    size_t first_new_run = runs.size();
    for (size_t i = 0; i < candidates.size(); ++i) {
      const Candidate& c = candidates[i];
      Run run{&c, nullptr, Measurement{c.variant, {}, CandidateResult::OK, ""}};
      auto known_fault = faulted->find(c.source_sha256);
      absl::StatusOr<std::unique_ptr<Launcher>> kernel = absl::UnknownError("not loaded");
      if (known_fault != faulted->end()) {
        run.measurement.status = CandidateResult::LAUNCH_FAULT;
        run.measurement.detail = known_fault->second;
      } else if (!cubins[i].ok()) {
        ++stats->compile_errors;
        run.measurement.status = CandidateResult::COMPILE_ERROR;
        run.measurement.detail = std::string(cubins[i].status().message().substr(0, 2000));
      } else if (kernel = c.load(context_, *cubins[i]); !kernel.ok()) {
        ++stats->compile_errors;
        run.measurement.status = CandidateResult::COMPILE_ERROR;
        run.measurement.detail = absl::StrCat("loading: ", kernel.status().message());
      } else {
        ++stats->compiled;
        if (options_.before_launch) options_.before_launch(c.source_sha256);
        absl::Status verified = workspace->Verify(**kernel, *check);
        if (options_.before_launch) options_.before_launch("");
        if (absl::IsAborted(verified)) return fault(c, verified);
        if (verified.ok()) {
          ++stats->verified;
          run.kernel = *std::move(kernel);
        } else {
          ++stats->failed_verification;
          run.measurement.status = CandidateResult::FAILED_VERIFICATION;
          run.measurement.detail = std::string(verified.message());
        }
      }
      runs.push_back(std::move(run));
      if (i % 32 == 31 || i + 1 == candidates.size()) {
        progress(absl::StrFormat("%s: %d/%d verified", phase, i + 1, candidates.size()));
      }
    }
    for (size_t r = first_new_run; r < runs.size(); ++r) {
      Run& run = runs[r];
      if (run.kernel == nullptr) continue;
      if (options_.before_launch) options_.before_launch(run.candidate->source_sha256);
      auto samples = workspace->Measure(*run.kernel, *start, *stop, options_.samples);
      if (options_.before_launch) options_.before_launch("");
      if (!samples.ok()) {
        if (absl::IsAborted(samples.status())) return fault(*run.candidate, samples.status());
        return samples.status();
      }
      ++stats->measured;
      run.measurement.samples_us = *samples;
      std::vector<double> sorted = *samples;
      std::sort(sorted.begin(), sorted.end());
      best_gbps = std::max(best_gbps, bytes_moved / (sorted[sorted.size() / 2] * 1e3));
      size_t done = r - first_new_run + 1;
      if (done % 16 == 0 || r + 1 == runs.size()) {
        progress(absl::StrFormat("%s: %d/%d measured, best %.0f GB/s", phase, done,
                                 runs.size() - first_new_run, best_gbps));
      }
    }
    stats->gpu_seconds += Seconds(gpu_start);
    return absl::OkStatus();
  };

  // Phase 1: every hint combination at one launch per path family.
  TT_ASSIGN_OR_RETURN(std::vector<Candidate> first_phase,
                      task.build(task.all_hints, task.representative_launches, &search));
  TT_RETURN_IF_ERROR(evaluate(std::move(first_phase), "hints"));

  // Phase 2: every launch candidate for the best hint set of each of the three best paths.
  std::map<std::string, std::pair<double, const Candidate*>> best_per_path;
  for (const Run& run : runs) {
    if (run.measurement.samples_us.empty()) continue;
    std::vector<double> s = run.measurement.samples_us;
    std::sort(s.begin(), s.end());
    double median = s[s.size() / 2];
    std::string path = LoweringPathName(run.candidate->path);
    auto it = best_per_path.find(path);
    if (it == best_per_path.end() || median < it->second.first) {
      best_per_path[path] = {median, run.candidate};
    }
  }
  std::vector<std::pair<double, const Candidate*>> leaders;
  for (auto& [path, entry] : best_per_path) leaders.push_back(entry);
  std::sort(leaders.begin(), leaders.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<CopyHints> leader_hints;
  for (size_t i = 0; i < leaders.size() && i < 3; ++i) {
    leader_hints.push_back(leaders[i].second->hints);
  }
  if (!leader_hints.empty()) {
    absl::StatusOr<std::vector<Candidate>> second_phase =
        task.build(leader_hints, task.all_launches, &search);
    if (second_phase.ok()) TT_RETURN_IF_ERROR(evaluate(*std::move(second_phase), "launch"));
  }
  stats->enumerated = search.enumerated;
  stats->pruned = search.pruned;
  stats->duplicates = search.duplicates;

  // Selection, then the leaders re-measured in interleaved rounds.
  std::vector<Measurement> measurements;
  for (const Run& run : runs) measurements.push_back(run.measurement);
  WinnerOptions winner_options;
  winner_options.bytes_moved = bytes_moved;
  winner_options.ceiling_gbps = options_.ceiling_gbps;
  TT_ASSIGN_OR_RETURN(Selection first, SelectWinner(measurements, winner_options));
  std::vector<int> top = TopCandidates(first.results, options_.top_k);
  progress(absl::StrCat("re-measuring the top ", top.size(), " interleaved"));
  std::map<int, std::vector<double>> fresh;
  auto gpu_start = Clock::now();
  for (int index : InterleavedOrder(top, options_.rounds)) {
    TT_ASSIGN_OR_RETURN(std::vector<double> sample,
                        workspace->Measure(*runs[index].kernel, *start, *stop, 1));
    fresh[index].push_back(sample[0]);
  }
  stats->gpu_seconds += Seconds(gpu_start);
  for (auto& [index, samples] : fresh) measurements[index].samples_us = samples;
  // The winner comes from the re-measured leaders only: the others' first-pass samples
  // are not comparable with samples taken later, and a tie-break among every candidate
  // could otherwise pick one that was never re-measured.
  TT_ASSIGN_OR_RETURN(Selection final_selection, SelectWinner(measurements, winner_options));
  std::vector<Measurement> finalists;
  for (int index : top) finalists.push_back(measurements[index]);
  TT_ASSIGN_OR_RETURN(Selection among_top, SelectWinner(finalists, winner_options));
  if (among_top.winner < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("no variant of ", task.description, " verified and measured"));
  }
  final_selection.winner = top[among_top.winner];
  final_selection.tied.clear();
  for (int tied : among_top.tied) final_selection.tied.push_back(top[tied]);
  // Regret: fresh interleaved rounds over the same leaders, judged independently of the
  // samples that chose the winner.
  std::map<int, std::vector<double>> regret_samples;
  for (int index : InterleavedOrder(top, options_.rounds)) {
    TT_ASSIGN_OR_RETURN(std::vector<double> sample,
                        workspace->Measure(*runs[index].kernel, *start, *stop, 1));
    regret_samples[index].push_back(sample[0]);
  }
  double best_median = 0, winner_median = 0;
  for (auto& [index, samples] : regret_samples) {
    std::sort(samples.begin(), samples.end());
    double median = samples[samples.size() / 2];
    if (best_median == 0 || median < best_median) best_median = median;
    if (index == final_selection.winner) winner_median = median;
  }
  if (best_median <= 0 || winner_median <= 0) {
    return absl::InternalError(absl::StrCat("the winner of ", task.description,
                                            " was not re-measured for its regret"));
  }
  stats->regret = winner_median / best_median - 1;

  TuningRecord record;
  *record.mutable_problem() = task.problem;
  TT_RETURN_IF_ERROR(FillRecord(final_selection, &record));
  for (const std::string& example : search.pruned_examples) {
    CandidateResult* pruned = record.add_candidates();
    pruned->set_status(CandidateResult::PRUNED);
    pruned->set_detail(example);
  }
  return record;
}

}  // namespace autotune
}  // namespace tiletune

#include "autotune/evaluator.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/base/status_macros.h"
#include "compiler/tuning_db/tuning_db.h"
#include "kernels/measure.h"

namespace tiletune {
namespace autotune {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

}  // namespace

Evaluator::Evaluator(TuningDevice& device, CompilationProvider& compiler, Options options,
                     std::map<std::string, std::string>* faulted, TuneStats* stats)
    : device_(device),
      compiler_(compiler),
      options_(std::move(options)),
      faulted_(faulted),
      stats_(stats) {}

void Evaluator::Progress(const std::string& line) const {
  if (options_.progress) options_.progress(line);
}

std::vector<absl::StatusOr<Cubin>> Evaluator::CompileAll(const std::vector<Candidate>& candidates) {
  std::vector<CudaSource> sources;
  for (const Candidate& candidate : candidates) sources.push_back(candidate.source);
  return tiletune::CompileAll(compiler_, sources, device_.ArchName(), options_.compile_threads);
}

absl::Status Evaluator::Fault(const Candidate& candidate, const absl::Status& status) {
  (*faulted_)[candidate.source_sha256] = std::string(status.message());
  ++stats_->faults;
  return absl::AbortedError(absl::StrCat("variant ", tuning::DescribeVariant(candidate.variant),
                                         " faulted the GPU: ", status.message()));
}

absl::StatusOr<Run> Evaluator::Check(const Candidate& candidate,
                                     const absl::StatusOr<Cubin>& cubin) {
  Run run;
  run.candidate = &candidate;
  run.measurement = Measurement{candidate.variant, {}, tuning::CandidateResult::OK, ""};
  auto known_fault = faulted_->find(candidate.source_sha256);
  if (known_fault != faulted_->end()) {
    run.measurement.status = tuning::CandidateResult::LAUNCH_FAULT;
    run.measurement.detail = known_fault->second;
    return run;
  }
  if (!cubin.ok()) {
    ++stats_->compile_errors;
    run.measurement.status = tuning::CandidateResult::COMPILE_ERROR;
    run.measurement.detail = std::string(cubin.status().message().substr(0, 2000));
    return run;
  }
  absl::StatusOr<std::unique_ptr<LoadedCandidate>> kernel = device_.Load(candidate, *cubin);
  if (!kernel.ok()) {
    if (absl::IsAborted(kernel.status())) return Fault(candidate, kernel.status());
    ++stats_->compile_errors;
    run.measurement.status = tuning::CandidateResult::COMPILE_ERROR;
    run.measurement.detail = absl::StrCat("loading: ", kernel.status().message());
    return run;
  }
  ++stats_->compiled;
  if (options_.before_launch) options_.before_launch(candidate.source_sha256);
  absl::Status verified = device_.Verify(**kernel);
  if (options_.before_launch) options_.before_launch("");
  if (absl::IsAborted(verified)) return Fault(candidate, verified);
  if (!verified.ok()) {
    ++stats_->failed_verification;
    run.measurement.status = tuning::CandidateResult::FAILED_VERIFICATION;
    run.measurement.detail = std::string(verified.message());
    return run;
  }
  ++stats_->verified;
  run.kernel = *std::move(kernel);
  return run;
}

absl::Status Evaluator::Evaluate(std::vector<Candidate> candidates, const std::string& phase) {
  const size_t first_new = candidates_.size();
  for (Candidate& c : candidates) {
    if (!seen_.insert(c.source_sha256).second) {
      ++stats_->duplicates;
      continue;
    }
    candidates_.push_back(std::make_unique<Candidate>(std::move(c)));
  }
  std::vector<Candidate> fresh;
  for (size_t i = first_new; i < candidates_.size(); ++i) fresh.push_back(*candidates_[i]);
  auto compile_start = Clock::now();
  Progress(absl::StrCat(phase, ": compiling ", fresh.size(), " variants"));
  std::vector<absl::StatusOr<Cubin>> cubins = CompileAll(fresh);
  stats_->compile_seconds += Seconds(compile_start);
  auto gpu_start = Clock::now();
  const size_t first_run = runs_.size();
  for (size_t i = 0; i < fresh.size(); ++i) {
    TT_ASSIGN_OR_RETURN(Run run, Check(*candidates_[first_new + i], cubins[i]));
    runs_.push_back(std::move(run));
    if (i % 32 == 31 || i + 1 == fresh.size()) {
      Progress(absl::StrFormat("%s: %d/%d verified", phase, i + 1, fresh.size()));
    }
  }
  absl::Status measured = MeasureRuns(first_run, phase);
  stats_->gpu_seconds += Seconds(gpu_start);
  return measured;
}

absl::Status Evaluator::MeasureRuns(size_t first, const std::string& phase) {
  for (size_t r = first; r < runs_.size(); ++r) {
    Run& run = runs_[r];
    if (run.kernel == nullptr) continue;
    if (options_.before_launch) options_.before_launch(run.candidate->source_sha256);
    absl::StatusOr<std::vector<double>> samples = device_.Measure(*run.kernel, options_.samples);
    if (options_.before_launch) options_.before_launch("");
    if (!samples.ok()) {
      if (absl::IsAborted(samples.status())) return Fault(*run.candidate, samples.status());
      return samples.status();
    }
    ++stats_->measured;
    run.measurement.samples_us = *samples;
    if (options_.bytes_moved > 0) {
      best_gbps_ = std::max(best_gbps_, options_.bytes_moved / (Median(*samples) * 1e3));
    }
    const size_t done = r - first + 1;
    if (done % 16 == 0 || r + 1 == runs_.size()) {
      Progress(absl::StrFormat("%s: %d/%d measured, best %.0f GB/s", phase, done,
                               runs_.size() - first, best_gbps_));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<double> Evaluator::Sample(int index) {
  Run& run = runs_[index];
  if (run.kernel == nullptr) {
    return absl::FailedPreconditionError("the candidate did not verify; it cannot be sampled");
  }
  if (options_.before_launch) options_.before_launch(run.candidate->source_sha256);
  absl::StatusOr<std::vector<double>> sample = device_.Measure(*run.kernel, 1);
  if (options_.before_launch) options_.before_launch("");
  if (!sample.ok()) {
    if (absl::IsAborted(sample.status())) return Fault(*run.candidate, sample.status());
    return sample.status();
  }
  return (*sample)[0];
}

}  // namespace autotune
}  // namespace tiletune

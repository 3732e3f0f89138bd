#include "kernels/tune_on_miss.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/cuda/kernel_digest.h"
#include "compiler/base/status_macros.h"
#include "compiler/ops/candidates.h"
#include "compiler/tuning_db/measurement.h"
#include "kernels/device_check.h"
#include "kernels/measure.h"
#include "kernels/verify.h"

namespace tiletune {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMinRounds = 3;
constexpr int kMaxRounds = 25;
// A timed batch lasts about this long, so host launch gaps and event resolution do not
// dominate a kernel of a few microseconds.
constexpr double kBatchUs = 100;
constexpr int kMaxBatch = 64;

// "nearest simt_col2im/direct tile 1x32 256t"; the cost model's picks of the search space
// are "searched" rather than their level's name.
template <typename C>
std::string Label(const C& m) {
  const bool searched = absl::StartsWith(m.resolution.detail, "searched: ");
  return absl::StrCat(searched ? "searched" : ResolutionLevelName(m.resolution.level), " ",
                      m.lowered->path_name,
                      m.lowered->form_name.empty() ? "" : absl::StrCat("/", m.lowered->form_name),
                      " tile ", absl::StrJoin(m.lowered->launch.tile, "x"), " ",
                      m.lowered->launch.threads, "t");
}

}  // namespace

struct MissTuner::Candidate {
  Resolution resolution;
  std::shared_ptr<const LoweredTileKernel> lowered;
  std::string source;
  std::unique_ptr<TileKernel> kernel;
  // Why it was dropped; empty while it is in the running.
  std::string error;
  tuning::CandidateResult::Status status = tuning::CandidateResult::OK;
  std::vector<double> samples_us;
  // When its compile was in, from the start.
  double compile_ms = 0;
  // It ran and its output or input was wrong.
  bool wrong = false;
};

// The random input and its CPU reference, made by a job of their own.
struct MissTuner::Reference {
  std::mutex mutex;
  std::condition_variable made;
  bool done = false;
  absl::StatusOr<VerificationImages> images = absl::UnknownError("not made");
};

// The alternatives and their compiles, made by a job of their own.
struct MissTuner::Listing {
  std::mutex mutex;
  std::condition_variable listed;
  bool done = false;
  absl::Status status;
  std::vector<Candidate> all;
  std::unique_ptr<StartedCompiles> compiles;
};

MissTuner::MissTuner(const TileOpDefinition& definition, const TileOp& op, AlternativesMaker make,
                     Resolution incumbent, CompilationProvider& compiler, WorkQueue& work)
    : definition_(definition),
      op_(op.Clone()),
      compiler_(compiler),
      listing_(std::make_shared<Listing>()),
      reference_(std::make_shared<Reference>()) {
  // The reference first: a large problem's takes longer than a compile.
  work.Post([reference = reference_, &definition, op = std::shared_ptr<TileOp>(op.Clone())] {
    std::mt19937_64 rng(std::random_device{}());
    absl::StatusOr<VerificationImages> images = MakeVerificationImages(definition, *op, rng);
    std::lock_guard<std::mutex> lock(reference->mutex);
    reference->images = std::move(images);
    reference->done = true;
    reference->made.notify_all();
  });
  auto owned_incumbent = std::make_shared<Resolution>(std::move(incumbent));
  work.Post([listing = listing_, make = std::move(make), incumbent = std::move(owned_incumbent),
             &compiler, &work] {
    absl::StatusOr<std::vector<Resolution>> alternatives = make();
    std::vector<Candidate> all;
    if (alternatives.ok()) {
      // What runs meanwhile is measured too, so the winner is never slower.
      const bool listed = std::any_of(
          alternatives->begin(), alternatives->end(), [&](const Resolution& alternative) {
            return alternative.built.source.text == incumbent->built.source.text;
          });
      if (!listed) alternatives->insert(alternatives->begin(), std::move(*incumbent));
      all.resize(alternatives->size());
      for (size_t i = 0; i < alternatives->size(); ++i) {
        Candidate& c = all[i];
        c.resolution = std::move((*alternatives)[i]);
        // Alternatives lists only variants that lowered; their kernels come with them.
        c.lowered = c.resolution.built.lowered;
        c.source = c.resolution.built.source.text;
      }
    }
    std::lock_guard<std::mutex> lock(listing->mutex);
    listing->status = alternatives.status();
    if (listing->status.ok() && all.empty()) {
      listing->status = absl::InvalidArgumentError("no variants to tune on a miss");
    }
    if (listing->status.ok()) {
      std::vector<CudaSource> sources;
      for (const Candidate& c : all) sources.push_back({c.lowered->kernel_name, c.source});
      CompileOptions options;
      options.arch = all.front().lowered->target.ArchName();
      listing->compiles =
          std::make_unique<StartedCompiles>(work, compiler, std::move(sources), options);
      listing->all = std::move(all);
    }
    listing->done = true;
    listing->listed.notify_all();
  });
}

MissTuner::~MissTuner() = default;

bool MissTuner::ready() const {
  if (claimed_.load()) return false;  // Finished, or being finished.
  {
    std::lock_guard<std::mutex> lock(reference_->mutex);
    if (!reference_->done) return false;
  }
  std::lock_guard<std::mutex> lock(listing_->mutex);
  // A listing that failed is ready too: Finish says why.
  return listing_->done && (listing_->compiles == nullptr || listing_->compiles->AllIn());
}

absl::Status MissTuner::listing_status() const {
  std::lock_guard<std::mutex> lock(listing_->mutex);
  return listing_->done ? listing_->status : absl::UnavailableError("still listing");
}

bool MissTuner::GaveWrongResult(const std::string& source) const {
  for (const Candidate& c : listing_->all) {
    if (c.source == source && c.wrong) return true;
  }
  return false;
}

absl::StatusOr<MissTuning> MissTuner::Finish(const Context& context, double budget_ms,
                                             DeviceCheck* check) {
  if (finished_) return absl::InternalError("this tuning on a miss was finished already");
  finished_ = true;
  {
    std::unique_lock<std::mutex> lock(listing_->mutex);
    listing_->listed.wait(lock, [&] { return listing_->done; });
  }
  TT_RETURN_IF_ERROR(listing_->status);
  std::vector<Candidate>& all = listing_->all;
  StartedCompiles& compiles = *listing_->compiles;
  // However it ends, the candidates' modules are unloaded (the winner is moved out first).
  struct Unload {
    std::vector<Candidate>& all;
    ~Unload() {
      for (Candidate& m : all) m.kernel.reset();
    }
  } unload{all};
  const Clock::time_point started = Clock::now();
  auto ms_since = [](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  };
  MissTuning out;
  std::vector<absl::StatusOr<Cubin>> cubins = compiles.Wait();
  const std::vector<double> in_ms = compiles.in_ms();
  {
    std::unique_lock<std::mutex> lock(reference_->mutex);
    reference_->made.wait(lock, [&] { return reference_->done; });
  }
  for (size_t i = 0; i < all.size(); ++i) {
    all[i].compile_ms = in_ms[i];
    out.compile_ms = std::max(out.compile_ms, in_ms[i]);
  }
  TT_RETURN_IF_ERROR(reference_->images.status());
  TT_ASSIGN_OR_RETURN(std::unique_ptr<MeasureBench> made,
                      MeasureBench::Create(context, definition_, *op_,
                                           *std::move(reference_->images)));
  std::unique_ptr<DeviceCheck> own_check;
  if (check == nullptr) {
    TT_ASSIGN_OR_RETURN(own_check, DeviceCheck::Create(context, compiler_));
    check = own_check.get();
  }
  for (size_t i = 0; i < all.size(); ++i) {
    Candidate& m = all[i];
    absl::StatusOr<std::unique_ptr<TileKernel>> kernel =
        cubins[i].ok() ? TileKernel::CreateFromCubin(context, m.lowered, m.source, *cubins[i])
                       : absl::StatusOr<std::unique_ptr<TileKernel>>(cubins[i].status());
    if (!kernel.ok()) {
      m.error = std::string(kernel.status().message());
      m.status = tuning::CandidateResult::COMPILE_ERROR;
      continue;
    }
    m.kernel = *std::move(kernel);
    ++out.compiled;
  }

  // Verify every candidate on one draw, comparing on the device; a candidate that differs
  // is checked again on the host, which names the first wrong element.
  MeasureBench& bench = *made;
  std::vector<Candidate*> running;
  for (Candidate& m : all) {
    if (m.kernel == nullptr) continue;
    absl::Status verified = bench.Verify(bench.LauncherFor(*m.kernel), Label(m), check);
    if (absl::IsAborted(verified)) return verified;  // A fault: the context is gone.
    if (!verified.ok()) {
      m.error = std::string(verified.message());
      m.status = tuning::CandidateResult::FAILED_VERIFICATION;
      m.wrong = absl::IsDataLoss(verified);
      m.kernel.reset();
      continue;
    }
    running.push_back(&m);
  }
  out.verified = static_cast<int>(running.size());
  out.verify_ms = ms_since(started);
  if (running.empty()) {
    std::vector<std::string> errors;
    for (const Candidate& m : all) errors.push_back(absl::StrCat(Label(m), ": ", m.error));
    return absl::FailedPreconditionError(absl::StrCat(
        "no variant compiled and verified: ", absl::StrJoin(errors, "; ")));
  }

  // Interleaved rounds over the rotated buffers, until the budget is spent or the fastest
  // stands apart.
  TT_ASSIGN_OR_RETURN(std::unique_ptr<Stream> stream, Stream::Create(context));
  std::vector<Launcher> launchers;
  for (Candidate* m : running) launchers.push_back(bench.LauncherFor(*m->kernel));
  MeasureBench::RoundOptions round_options;
  round_options.batch_us = kBatchUs;
  round_options.max_batch = kMaxBatch;
  round_options.min_rounds = kMinRounds;
  round_options.max_rounds = kMaxRounds;
  round_options.budget_ms = budget_ms;
  round_options.until_separated = true;
  TT_ASSIGN_OR_RETURN(MeasureBench::Rounds rounds,
                      bench.Interleave(launchers, round_options, stream->get()));
  for (size_t i = 0; i < running.size(); ++i) running[i]->samples_us = rounds.samples_us[i];
  out.rounds = rounds.rounds;
  out.timing_ms = rounds.timing_ms;
  const int batch = rounds.batch;
  const OperandSizes sizes = bench.sizes();

  size_t best = 0;
  for (size_t i = 1; i < running.size(); ++i) {
    if (tuning::Median(running[i]->samples_us) < tuning::Median(running[best]->samples_us)) {
      best = i;
    }
  }
  Candidate& winner = *running[best];
  std::vector<std::string> lines;
  for (const Candidate& m : all) {
    lines.push_back(m.samples_us.empty()
                        ? absl::StrCat(Label(m), " dropped (", m.error.substr(0, 160), ")")
                        : absl::StrFormat("%s %.2f us (compiled at %.0f ms)", Label(m),
                                          tuning::Median(m.samples_us), m.compile_ms));
  }
  out.detail = absl::StrFormat(
      "tuned on a miss: %d of %zu variant(s) verified, %d round(s) of %d launch(es) "
      "(compiled in the background in %.0f ms; uploading, loading and verification %.0f ms, "
      "timing %.0f ms): %s won; %s",
      out.verified, all.size(), out.rounds, batch, out.compile_ms, out.verify_ms,
      out.timing_ms, Label(winner), absl::StrJoin(lines, "; "));

  tuning::TuningRecord& record = out.record;
  TT_ASSIGN_OR_RETURN(*record.mutable_problem(), definition_.ToProblem(*op_));
  *record.mutable_winner() =
      VariantOf(winner.resolution.request.op->hints, *winner.lowered, KernelDigest(winner.source));
  TT_ASSIGN_OR_RETURN(*record.mutable_winner_statistics(),
                      tuning::StatisticsOf(winner.samples_us, sizes.bytes_moved));
  for (const Candidate& m : all) {
    if (&m == &winner) continue;
    tuning::CandidateResult* c = record.add_candidates();
    *c->mutable_variant() =
        VariantOf(m.resolution.request.op->hints, *m.lowered, KernelDigest(m.source));
    c->set_status(m.status);
    if (!m.samples_us.empty()) {
      TT_ASSIGN_OR_RETURN(*c->mutable_statistics(),
                          tuning::StatisticsOf(m.samples_us, sizes.bytes_moved));
    } else {
      c->set_detail(m.error.substr(0, 1000));
    }
  }
  *record.mutable_provenance() = tuning::ProvenanceHere(
      absl::StrFormat("library tune on miss, budget %.0f ms", budget_ms));
  out.resolution = std::move(winner.resolution);
  out.kernel = std::move(winner.kernel);
  return out;
}

}  // namespace tiletune

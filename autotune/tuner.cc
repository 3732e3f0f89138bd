#include "autotune/tuner.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "autotune/winner.h"
#include "compiler/base/status_macros.h"
#include "compiler/ops/candidates.h"
#include "compiler/tuning_db/measurement.h"

namespace tiletune {
namespace autotune {
namespace {

using Clock = std::chrono::steady_clock;

void Count(const CandidateSet& set, TuneStats* stats, std::vector<std::string>* pruned) {
  stats->enumerated += set.enumerated;
  stats->pruned += set.pruned;
  stats->duplicates += set.duplicates;
  for (const std::string& example : set.pruned_examples) {
    if (pruned->size() < 20) pruned->push_back(example);
  }
}

}  // namespace

std::vector<Hints> Tuner::LeaderHints(const std::vector<Run>& runs,
                                      const Anchors& anchors) const {
  // The fastest run of each form of each path.
  using Best = std::pair<double, const Candidate*>;
  std::map<std::string, std::map<std::string, Best>> best;
  for (const Run& run : runs) {
    if (run.measurement.samples_us.empty()) continue;
    // The anchors ran at their own launches, the other hint sets at one representative
    // launch per path: they would lead on their launch alone.
    if (anchors.Has(run.candidate->source_sha256)) continue;
    const Best entry = {Median(run.measurement.samples_us), run.candidate};
    const LoweredTileKernel& lowered = *run.candidate->lowered;
    auto [it, added] = best[lowered.path_name].emplace(lowered.form_name, entry);
    if (!added && entry.first < it->second.first) it->second = entry;
  }
  // Each path's forms, fastest first; the paths by their fastest form.
  std::vector<std::vector<Best>> paths;
  for (auto& [path, forms] : best) {
    std::vector<Best>& sorted = paths.emplace_back();
    for (auto& [form, entry] : forms) sorted.push_back(entry);
    std::sort(sorted.begin(), sorted.end(),
              [](const Best& a, const Best& b) { return a.first < b.first; });
  }
  std::sort(paths.begin(), paths.end(),
            [](const auto& a, const auto& b) { return a.front().first < b.front().first; });
  // The best hint set of each form of the leading paths: one form fastest in the first
  // phase (at its own launches) does not keep another form of its path from the sweep.
  std::vector<Hints> hints;
  for (size_t i = 0; i < paths.size() && static_cast<int>(i) < options_.leader_paths; ++i) {
    for (const Best& entry : paths[i]) hints.push_back(entry.second->hints);
  }
  return hints;
}

absl::StatusOr<std::map<int, std::vector<double>>> Tuner::Interleaved(
    Evaluator& evaluator, const std::vector<int>& top) {
  std::map<int, std::vector<double>> samples;
  for (int index : InterleavedOrder(top, options_.rounds)) {
    TT_ASSIGN_OR_RETURN(double sample, evaluator.Sample(index));
    samples[index].push_back(sample);
  }
  return samples;
}

std::vector<Candidate> Tuner::ModelTopK(const TuningTask& task, std::vector<Candidate> candidates,
                                        const Anchors& anchors, TuneStats* stats) const {
  if (options_.cost_model == nullptr) return candidates;
  int k = options_.model_top_k;
  if (k <= 0) k = options_.cost_model->TopKFor(task.definition->name());
  // The model gave no k for this operator (it was never in its corpus): measure all.
  if (k <= 0 || static_cast<int>(candidates.size()) <= k) return candidates;
  std::vector<std::pair<double, size_t>> ranked;
  for (size_t i = 0; i < candidates.size(); ++i) {
    ranked.emplace_back(
        options_.cost_model->EstimateUs(TermsOf(*candidates[i].lowered, options_.gpu)), i);
  }
  std::stable_sort(ranked.begin(), ranked.end());
  std::vector<Candidate> kept;
  for (size_t r = 0; r < ranked.size(); ++r) {
    Candidate& c = candidates[ranked[r].second];
    if (static_cast<int>(r) < k || anchors.Has(c.source_sha256)) kept.push_back(std::move(c));
  }
  stats->model_skipped += static_cast<int>(candidates.size() - kept.size());
  if (options_.progress) {
    options_.progress(absl::StrCat("cost model: measuring ", kept.size(), " of ",
                                   candidates.size(), " candidates"));
  }
  return kept;
}

absl::Status Tuner::Search(const TuningTask& task, Evaluator& evaluator, TuneStats* stats,
                           std::vector<std::string>* pruned, Anchors* anchors) {
  TT_ASSIGN_OR_RETURN(CandidateSet first, BuildCandidates(*task.definition, *task.op,
                                                          task.target, task.space.first));
  Count(first, stats, pruned);
  // The anchors join the first phase where the search space lacks them: the library's
  // choice always, so a tuning never ends slower than what the library would launch; with
  // a cost model the heuristic's too, whatever the model thinks of either.
  std::vector<std::pair<Trial, std::string*>> extra;
  if (options_.library_choice) {
    if (std::optional<LibraryChoice> choice = options_.library_choice(task)) {
      stats->library_level = choice->level;
      extra.emplace_back(choice->trial, &anchors->library);
    }
  }
  if (options_.cost_model != nullptr) {
    extra.emplace_back(task.definition->Heuristic(*task.op, task.target), &anchors->heuristic);
  }
  // Adds `trial`'s kernel where the search space lacks it; its source hash, or "" where it
  // does not build; whether it was added.
  auto join = [&](const Trial& trial, std::string* sha) {
    absl::StatusOr<CandidateSet> built =
        BuildCandidates(*task.definition, *task.op, task.target, {trial});
    if (!built.ok() || built->candidates.empty()) return false;
    *sha = built->candidates[0].source_sha256;
    const bool present = std::any_of(first.candidates.begin(), first.candidates.end(),
                                     [&](const Candidate& c) { return c.source_sha256 == *sha; });
    if (!present) first.candidates.push_back(std::move(built->candidates[0]));
    return !present;
  };
  for (auto& [trial, sha] : extra) join(trial, sha);
  // The library's alternatives: one the search space holds is one of its candidates (and
  // may lead its path); the others ran at their own launches and are anchors.
  if (options_.library_alternatives) {
    for (const LibraryChoice& alternative : options_.library_alternatives(task)) {
      std::string sha;
      if (join(alternative.trial, &sha)) anchors->alternatives.insert(sha);
    }
  }
  TT_RETURN_IF_ERROR(
      evaluator.Evaluate(ModelTopK(task, std::move(first.candidates), *anchors, stats), "hints"));

  std::vector<Trial> second;
  for (const Hints& hints : LeaderHints(evaluator.runs(), *anchors)) {
    for (const LaunchParams& launch : task.space.launches) second.push_back({hints, launch});
  }
  absl::StatusOr<CandidateSet> launches =
      BuildCandidates(*task.definition, *task.op, task.target, second);
  if (!launches.ok()) {
    stats->second_phase_error = std::string(launches.status().message());
    if (options_.progress) {
      options_.progress(absl::StrCat("launch: no candidates (", stats->second_phase_error, ")"));
    }
    return absl::OkStatus();
  }
  Count(*launches, stats, pruned);
  return evaluator.Evaluate(ModelTopK(task, std::move(launches->candidates), *anchors, stats),
                            "launch");
}

absl::StatusOr<Selection> Tuner::Select(const TuningTask& task, Evaluator& evaluator,
                                        const Anchors& anchors, TuneStats* stats) {
  std::vector<Measurement> measurements;
  for (const Run& run : evaluator.runs()) measurements.push_back(run.measurement);
  WinnerOptions winner_options;
  winner_options.bytes_moved = task.sizes.bytes_moved;
  winner_options.ceiling_gbps = options_.ceiling_gbps;
  TT_ASSIGN_OR_RETURN(Selection initial, SelectWinner(measurements, winner_options));
  std::vector<int> top = TopCandidates(initial.results, options_.top_k);
  // The library's choice is a finalist wherever it verified and ran: the winner is then
  // never slower than it in the rounds that choose.
  int library = -1;
  for (size_t i = 0; i < evaluator.runs().size() && !anchors.library.empty(); ++i) {
    const Run& run = evaluator.runs()[i];
    if (run.candidate->source_sha256 == anchors.library) {
      if (initial.results[i].status() == tuning::CandidateResult::OK) library = static_cast<int>(i);
      break;
    }
  }
  if (!top.empty() && library >= 0 && std::find(top.begin(), top.end(), library) == top.end()) {
    top.push_back(library);
  }
  const absl::Status none = absl::FailedPreconditionError(
      absl::StrCat("no variant of ", task.description, " verified and measured"));
  if (top.empty()) return none;
  if (options_.progress) {
    options_.progress(absl::StrCat("re-measuring the top ", top.size(), " interleaved"));
  }
  const auto gpu_start = Clock::now();
  TT_ASSIGN_OR_RETURN(auto rounds, Interleaved(evaluator, top));
  for (auto& [index, samples] : rounds) measurements[index].samples_us = samples;
  // The winner comes from the re-measured leaders only: the others' first-pass samples
  // are not comparable with samples taken later.
  TT_ASSIGN_OR_RETURN(Selection selection, SelectWinner(measurements, winner_options));
  std::vector<Measurement> finalists;
  for (int index : top) finalists.push_back(measurements[index]);
  TT_ASSIGN_OR_RETURN(Selection among_top, SelectWinner(finalists, winner_options));
  if (among_top.winner < 0) return none;
  selection.winner = top[among_top.winner];
  selection.tied.clear();
  for (int tied : among_top.tied) selection.tied.push_back(top[tied]);
  // Within noise of the fastest, the library's choice wins the tie: what the library
  // launches stays, and a tuning never records a kernel that rounds unable to tell them
  // apart found no faster than it.
  if (auto it = std::find(selection.tied.begin(), selection.tied.end(), library);
      library >= 0 && it != selection.tied.end()) {
    std::rotate(selection.tied.begin(), it, it + 1);
    selection.winner = library;
  }

  // Regret: fresh rounds over the same leaders, judged apart from the samples above.
  TT_ASSIGN_OR_RETURN(auto regret_rounds, Interleaved(evaluator, top));
  stats->gpu_seconds += std::chrono::duration<double>(Clock::now() - gpu_start).count();
  double best_median = 0, winner_median = 0, library_median = 0;
  for (auto& [index, samples] : regret_rounds) {
    const double median = Median(samples);
    if (best_median == 0 || median < best_median) best_median = median;
    if (index == selection.winner) winner_median = median;
    if (index == library) library_median = median;
  }
  if (best_median <= 0 || winner_median <= 0) {
    return absl::InternalError(absl::StrCat("the winner of ", task.description,
                                            " was not re-measured for its regret"));
  }
  stats->regret = winner_median / best_median - 1;
  if (library_median > 0) stats->library_over_winner = library_median / winner_median;
  return selection;
}

absl::Status Tuner::MeasureBaselines(const TuningTask& task, Evaluator& evaluator, int winner,
                                     tuning::TuningRecord* record) {
  const std::vector<BaselineInfo> baselines = device_.Baselines();
  // Ids in the rounds: 0 the winner, i + 1 baseline i.
  std::vector<int> ids = {0};
  std::vector<std::string> failed(baselines.size());
  for (size_t i = 0; i < baselines.size(); ++i) {
    if (baselines[i].unavailable.empty()) ids.push_back(static_cast<int>(i) + 1);
  }
  std::map<int, std::vector<double>> samples;
  if (ids.size() > 1) {
    if (options_.progress) {
      options_.progress(absl::StrCat("measuring ", ids.size() - 1,
                                     " baseline(s) interleaved with the winner"));
    }
    for (int id : InterleavedOrder(ids, options_.rounds)) {
      if (id > 0 && !failed[id - 1].empty()) continue;
      absl::StatusOr<double> sample =
          id == 0 ? evaluator.Sample(winner) : device_.SampleBaseline(id - 1);
      if (!sample.ok()) {
        // The winner was measured before: its failure now is the device's, and fatal. A
        // baseline's failure only loses that baseline.
        if (id == 0) return sample.status();
        if (absl::IsAborted(sample.status())) {
          // The baseline faulted the device: the winner must not be blamed for the fault
          // its next sample would find.
          return absl::AbortedError(absl::StrCat("the baseline ", baselines[id - 1].name,
                                                 " faulted the device: ",
                                                 sample.status().message()));
        }
        failed[id - 1] = absl::StrCat("its measurement failed: ", sample.status().message());
        continue;
      }
      samples[id].push_back(*sample);
    }
  }
  const double winner_median = samples.count(0) ? Median(samples[0]) : 0;
  double memcpy_speedup = 0, memcpy_gbps = 0, library_speedup = 0;
  for (size_t i = 0; i < baselines.size(); ++i) {
    tuning::Baseline* baseline = record->add_baselines();
    baseline->set_name(baselines[i].name);
    const std::vector<double>& mine = samples[static_cast<int>(i) + 1];
    std::string unavailable = !baselines[i].unavailable.empty() ? baselines[i].unavailable
                                                                 : failed[i];
    if (unavailable.empty() && (mine.empty() || winner_median <= 0)) {
      unavailable = "no sample was taken";
    }
    if (!unavailable.empty()) {
      baseline->set_unavailable(unavailable);
      continue;
    }
    absl::StatusOr<tuning::Statistics> statistics =
        tuning::StatisticsOf(mine, task.sizes.bytes_moved, options_.ceiling_gbps);
    if (!statistics.ok()) {
      // A bad timing (zero, not finite) loses this baseline, never the record.
      baseline->set_unavailable(absl::StrCat("its timings were unusable: ",
                                             statistics.status().message()));
      continue;
    }
    *baseline->mutable_statistics() = *std::move(statistics);
    baseline->set_speedup(Median(mine) / winner_median);
    if (baselines[i].name == "cudaMemcpy") {
      memcpy_speedup = baseline->speedup();
      memcpy_gbps = baseline->statistics().gbps();
    } else if (library_speedup == 0) {
      library_speedup = baseline->speedup();
    }
  }
  record->set_vs_baseline(library_speedup > 0 ? library_speedup : memcpy_speedup);
  record->set_size_matched_ceiling_gbps(memcpy_gbps);
  record->set_fraction_of_size_matched_ceiling(memcpy_speedup);
  return absl::OkStatus();
}

absl::StatusOr<tuning::TuningRecord> Tuner::Tune(const TuningTask& task,
                                                 std::map<std::string, std::string>* faulted,
                                                 TuneStats* stats) {
  if (task.target.ArchName() != device_.ArchName()) {
    return absl::InvalidArgumentError(absl::StrCat("the task for ", task.description, " targets ",
                                                   task.target.ArchName(), " but the device is ",
                                                   device_.ArchName()));
  }
  TT_RETURN_IF_ERROR(device_.Prepare(task));
  Evaluator::Options evaluator_options;
  evaluator_options.samples = options_.samples;
  evaluator_options.bytes_moved = task.sizes.bytes_moved;
  evaluator_options.compile_threads = options_.compile_threads;
  evaluator_options.progress = options_.progress;
  evaluator_options.before_launch = options_.before_launch;
  Evaluator evaluator(device_, compiler_, evaluator_options, faulted, stats);
  std::vector<std::string> pruned;
  Anchors anchors;
  TT_RETURN_IF_ERROR(Search(task, evaluator, stats, &pruned, &anchors));
  TT_ASSIGN_OR_RETURN(Selection selection, Select(task, evaluator, anchors, stats));

  tuning::TuningRecord record;
  *record.mutable_problem() = task.problem;
  TT_RETURN_IF_ERROR(FillRecord(selection, &record));
  TT_RETURN_IF_ERROR(MeasureBaselines(task, evaluator, selection.winner, &record));
  if (!stats->second_phase_error.empty()) {
    tuning::CandidateResult* failed = record.add_candidates();
    failed->set_status(tuning::CandidateResult::PRUNED);
    failed->set_detail(absl::StrCat("second phase built no candidates: ",
                                    stats->second_phase_error));
  }
  for (const std::string& example : pruned) {
    tuning::CandidateResult* entry = record.add_candidates();
    entry->set_status(tuning::CandidateResult::PRUNED);
    entry->set_detail(example);
  }
  return record;
}

}  // namespace autotune
}  // namespace tiletune

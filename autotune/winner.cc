#include "autotune/winner.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "compiler/tuning_db/tuning_db.h"
#include "compiler/tuning_db/tuning_db.pb.h"
#include "compiler/base/status_macros.h"

namespace tiletune {
namespace autotune {
namespace {

int64_t Resources(const tuning::Variant& variant) {
  return int64_t{std::max(variant.lowering().threads(), 1)} *
         std::max(variant.lowering().stages(), 1);
}

// Fastest first: by median, then by variant. Only for results that have statistics.
bool Faster(const tuning::CandidateResult& a, const tuning::CandidateResult& b) {
  if (a.statistics().median_us() != b.statistics().median_us()) {
    return a.statistics().median_us() < b.statistics().median_us();
  }
  return tuning::CompareVariants(a.variant(), b.variant()) < 0;
}

std::vector<int> OkIndicesFastestFirst(absl::Span<const tuning::CandidateResult> results) {
  std::vector<int> ok;
  for (int i = 0; i < static_cast<int>(results.size()); ++i) {
    if (results[i].status() == tuning::CandidateResult::OK) ok.push_back(i);
  }
  std::sort(ok.begin(), ok.end(), [&](int a, int b) { return Faster(results[a], results[b]); });
  return ok;
}

}  // namespace

bool WithinNoise(const tuning::Statistics& a, const tuning::Statistics& b, double min_noise_band) {
  const double band = std::max({a.spread(), b.spread(), min_noise_band});
  const double smaller = std::min(a.median_us(), b.median_us());
  return std::fabs(a.median_us() - b.median_us()) < band * smaller;
}

int CompareByResources(const tuning::Variant& a, const tuning::Variant& b) {
  const int64_t ra = Resources(a), rb = Resources(b);
  if (ra != rb) return ra < rb ? -1 : 1;
  return tuning::CompareVariants(a, b);
}

absl::StatusOr<Selection> SelectWinner(absl::Span<const Measurement> measurements,
                                       const WinnerOptions& options) {
  if (options.bytes_moved < 0 || !(options.ceiling_gbps >= 0) ||
      !(options.ceiling_tolerance >= 0) || !(options.min_noise_band >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "winner options must be >= 0: bytes_moved=", options.bytes_moved,
        " ceiling_gbps=", options.ceiling_gbps, " ceiling_tolerance=", options.ceiling_tolerance,
        " min_noise_band=", options.min_noise_band));
  }
  const bool check_ceiling = options.bytes_moved > 0 && options.ceiling_gbps > 0;
  const double limit_gbps = options.ceiling_gbps * (1 + options.ceiling_tolerance);
  Selection selection;
  for (size_t i = 0; i < measurements.size(); ++i) {
    const Measurement& m = measurements[i];
    tuning::CandidateResult result;
    *result.mutable_variant() = m.variant;
    result.set_status(m.status);
    result.set_detail(m.detail);
    if (m.status == tuning::CandidateResult::OK && m.samples_us.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("candidate ", i, " (",
                                                     tuning::DescribeVariant(m.variant),
                                                     ") has status OK but no timing samples"));
    }
    if (!m.samples_us.empty()) {
      absl::StatusOr<tuning::Statistics> statistics =
          tuning::StatisticsOf(m.samples_us, options.bytes_moved, options.ceiling_gbps);
      if (!statistics.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("candidate ", i, " (",
                                                       tuning::DescribeVariant(m.variant), "): ",
                                                       statistics.status().message()));
      }
      tuning::Statistics* s = result.mutable_statistics();
      *s = *std::move(statistics);
      if (check_ceiling && m.status == tuning::CandidateResult::OK && s->gbps() > limit_gbps) {
        result.set_status(tuning::CandidateResult::REJECTED_CACHE_ARTEFACT);
        result.set_detail(absl::StrFormat(
            "%.1f GB/s is %.1f%% above the measured DRAM ceiling of %.1f GB/s (tolerance "
            "%.1f%%): the data likely stayed in cache; use a larger problem or flush L2 "
            "between runs",
            s->gbps(), 100 * (s->gbps() / options.ceiling_gbps - 1), options.ceiling_gbps,
            100 * options.ceiling_tolerance));
      }
    }
    selection.results.push_back(std::move(result));
  }
  const std::vector<int> ok = OkIndicesFastestFirst(selection.results);
  if (ok.empty()) return selection;
  const tuning::Statistics& fastest = selection.results[ok.front()].statistics();
  for (int i : ok) {
    if (WithinNoise(selection.results[i].statistics(), fastest, options.min_noise_band)) {
      selection.tied.push_back(i);
    }
  }
  std::sort(selection.tied.begin(), selection.tied.end(), [&](int a, int b) {
    return CompareByResources(selection.results[a].variant(), selection.results[b].variant()) < 0;
  });
  selection.winner = selection.tied.front();
  return selection;
}

std::vector<int> TopCandidates(absl::Span<const tuning::CandidateResult> results, int k) {
  std::vector<int> ok = OkIndicesFastestFirst(results);
  if (k < 0) k = 0;
  if (ok.size() > static_cast<size_t>(k)) ok.resize(k);
  return ok;
}

std::vector<int> InterleavedOrder(absl::Span<const int> candidates, int rounds) {
  std::vector<int> order;
  const size_t n = candidates.size();
  for (int round = 0; round < rounds && n > 0; ++round) {
    for (size_t j = 0; j < n; ++j) order.push_back(candidates[(round + j) % n]);
  }
  return order;
}

absl::Status FillRecord(const Selection& selection, tuning::TuningRecord* record) {
  if (selection.winner < 0 || selection.winner >= static_cast<int>(selection.results.size())) {
    std::map<std::string, int> counts;
    for (const tuning::CandidateResult& result : selection.results) {
      ++counts[tuning::CandidateStatusName(result.status())];
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "no winner among ", selection.results.size(), " candidates (",
        counts.empty() ? "none measured" : absl::StrJoin(counts, ", ", absl::PairFormatter(" ")),
        ")"));
  }
  const tuning::CandidateResult& winner = selection.results[selection.winner];
  *record->mutable_winner() = winner.variant();
  *record->mutable_winner_statistics() = winner.statistics();
  record->clear_candidates();
  for (int i = 0; i < static_cast<int>(selection.results.size()); ++i) {
    if (i != selection.winner) *record->add_candidates() = selection.results[i];
  }
  return absl::OkStatus();
}

}  // namespace autotune
}  // namespace tiletune

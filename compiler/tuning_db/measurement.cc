#include "compiler/tuning_db/measurement.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tiletune {
namespace tuning {
namespace {

// The q-quantile of sorted `values` (non-empty), interpolating between closest ranks.
double Quantile(const std::vector<double>& sorted, double q) {
  const double position = q * (sorted.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (position - below);
}

}  // namespace

absl::StatusOr<SampleSummary> SummarizeSamples(absl::Span<const double> samples_us) {
  if (samples_us.empty()) return absl::InvalidArgumentError("no timing samples");
  for (size_t i = 0; i < samples_us.size(); ++i) {
    if (!std::isfinite(samples_us[i]) || samples_us[i] <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("timing sample ", i, " is ", samples_us[i],
                                                     " us; samples must be finite and > 0"));
    }
  }
  std::vector<double> sorted(samples_us.begin(), samples_us.end());
  std::sort(sorted.begin(), sorted.end());
  SampleSummary summary;
  summary.sample_count = static_cast<int>(sorted.size());
  summary.min_us = sorted.front();
  summary.median_us = Quantile(sorted, 0.5);
  summary.p10_us = Quantile(sorted, 0.1);
  summary.p90_us = Quantile(sorted, 0.9);
  summary.spread = (summary.p90_us - summary.p10_us) / summary.median_us;
  return summary;
}

double Median(absl::Span<const double> samples_us) {
  if (samples_us.empty()) return std::nan("");
  std::vector<double> sorted(samples_us.begin(), samples_us.end());
  std::sort(sorted.begin(), sorted.end());
  return Quantile(sorted, 0.5);
}

absl::StatusOr<Statistics> StatisticsOf(absl::Span<const double> samples_us, int64_t bytes_moved,
                                        double ceiling_gbps) {
  absl::StatusOr<SampleSummary> summary = SummarizeSamples(samples_us);
  if (!summary.ok()) return summary.status();
  Statistics s;
  s.set_median_us(summary->median_us);
  s.set_min_us(summary->min_us);
  s.set_spread(summary->spread);
  s.set_sample_count(summary->sample_count);
  if (bytes_moved > 0) {
    // bytes / (us * 1e-6) / 1e9 = bytes / (us * 1e3)
    s.set_gbps(static_cast<double>(bytes_moved) / (summary->median_us * 1e3));
  }
  if (ceiling_gbps > 0) {
    s.set_ceiling_gbps(ceiling_gbps);
    s.set_fraction_of_ceiling(s.gbps() / ceiling_gbps);
  }
  return s;
}

Provenance ProvenanceHere(absl::string_view command_line) {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  Provenance provenance;
  provenance.set_tool_version(kToolVersion);
  provenance.set_host(host);
  provenance.set_unix_time_s(static_cast<int64_t>(std::time(nullptr)));
  provenance.set_command_line(std::string(command_line));
  return provenance;
}

}  // namespace tuning
}  // namespace tiletune

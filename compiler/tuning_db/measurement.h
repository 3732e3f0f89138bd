// What every writer of records fills the same way: the statistics of a candidate's timing
// samples and the provenance of a measurement made here. The tuner (autotune/) and tuning
// on a miss (kernels/tune_on_miss.h) both use these, so their records read alike.
//
//   TT_ASSIGN_OR_RETURN(Statistics s, StatisticsOf(samples_us, bytes_moved, ceiling_gbps));
//   *record.mutable_provenance() = ProvenanceHere("autotune --suite=...");
#ifndef COMPILER_TUNING_DB_MEASUREMENT_H_
#define COMPILER_TUNING_DB_MEASUREMENT_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "compiler/base/version.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "compiler/tuning_db/tuning_db.pb.h"

namespace tiletune {
namespace tuning {

// The version string records carry (compiler/base/version.h).
inline constexpr const char* kToolVersion = kVersionTag;

// The summary of one candidate's samples. Percentiles interpolate linearly between the
// closest ranks, so p10/p90 ignore a single outlier only from about 11 samples on.
struct SampleSummary {
  double median_us = 0;
  double min_us = 0;
  double p10_us = 0;
  double p90_us = 0;
  double spread = 0;  // (p90 - p10) / median
  int sample_count = 0;
};

// InvalidArgument for no samples or a sample that is not finite and > 0.
absl::StatusOr<SampleSummary> SummarizeSamples(absl::Span<const double> samples_us);

// The median (interpolated for an even count) the summaries report; NaN for no samples.
double Median(absl::Span<const double> samples_us);

// The database's statistics of `samples_us`: median, min, spread and count; GB/s when
// `bytes_moved` > 0; the ceiling and the fraction of it when `ceiling_gbps` > 0. Errors
// as SummarizeSamples.
absl::StatusOr<Statistics> StatisticsOf(absl::Span<const double> samples_us, int64_t bytes_moved,
                                        double ceiling_gbps = 0);

// A measurement made in this process now: kToolVersion, this host, the time, and
// `command_line` (what was run, or how the record came about).
Provenance ProvenanceHere(absl::string_view command_line);

}  // namespace tuning
}  // namespace tiletune

#endif  // COMPILER_TUNING_DB_MEASUREMENT_H_

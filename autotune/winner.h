// Choosing the winning variant from timing samples.
//
// Every candidate's samples (microseconds per run) are summarised by their median, minimum
// and p10/p90 spread. Candidates whose implied bandwidth beats the measured DRAM ceiling
// by more than a tolerance are rejected as cache artefacts. Among the rest, every
// candidate whose median is within the noise band of the fastest one is a tie, and ties
// go to the variant that uses fewer resources (threads x stages), then to the smaller
// variant in CompareVariants order, so the same samples always pick the same winner
// whatever order the candidates come in.
//
//   std::vector<Measurement> measured = ...;  // one per candidate
//   WinnerOptions options;
//   options.bytes_moved = 2 * tensor_bytes;    // read + write
//   options.ceiling_gbps = 3968;               // from the bandwidth probe
//   TT_ASSIGN_OR_RETURN(Selection selection, SelectWinner(measured, options));
//   for (int i : TopCandidates(selection.results, 4)) ...  // re-measure, interleaved
//   TT_RETURN_IF_ERROR(FillRecord(selection, &record));
//
// Pure functions: no I/O, no clocks, thread-safe.
#ifndef AUTOTUNE_WINNER_H_
#define AUTOTUNE_WINNER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/tuning_db/measurement.h"
#include "compiler/tuning_db/tuning_db.pb.h"

namespace tiletune {
namespace autotune {

// Sample statistics as records carry them (compiler/tuning_db/measurement.h).
using tuning::Median;
using tuning::SampleSummary;
using tuning::SummarizeSamples;

// What the search knows about one candidate.
struct Measurement {
  tuning::Variant variant;
  // Microseconds per run. Required (non-empty) when status is OK; optional otherwise.
  std::vector<double> samples_us;
  // OK when it compiled, verified and ran; otherwise why it is out of the running.
  tuning::CandidateResult::Status status = tuning::CandidateResult::OK;
  std::string detail;  // the error, for a status other than OK
};

struct WinnerOptions {
  // Bytes read plus written by one run; 0 = unknown (no GB/s, no cache-artefact check).
  int64_t bytes_moved = 0;
  // Measured DRAM bandwidth ceiling, 1e9 bytes/s; 0 = not measured (no artefact check).
  double ceiling_gbps = 0;
  // A candidate above ceiling_gbps * (1 + ceiling_tolerance) is a cache artefact.
  double ceiling_tolerance = 0.05;
  // The smallest relative noise band: medians closer than this fraction always tie.
  double min_noise_band = 0.01;
};

struct Selection {
  // One per measurement, in input order: variant, statistics (when it has samples),
  // status (OK, the given status, or REJECTED_CACHE_ARTEFACT) and detail.
  std::vector<tuning::CandidateResult> results;
  // Index into `results` of the winner; -1 when no candidate is OK.
  int winner = -1;
  // Indices of the OK candidates within noise of the fastest, best first (winner first).
  std::vector<int> tied;
};

// Summarises every measurement and picks the winner as described at the top.
// InvalidArgument naming the candidate for bad samples or an OK candidate without
// samples, and for negative options.
absl::StatusOr<Selection> SelectWinner(absl::Span<const Measurement> measurements,
                                       const WinnerOptions& options = {});

// True when the medians of `a` and `b` differ by less than the larger of their spreads
// and `min_noise_band`, relative to the smaller median.
bool WithinNoise(const tuning::Statistics& a, const tuning::Statistics& b, double min_noise_band);

// The tie-break order: fewer threads x stages first (an unset 0 counts as 1), then
// CompareVariants. Negative, zero or positive as a < b, a == b, a > b.
int CompareByResources(const tuning::Variant& a, const tuning::Variant& b);

// Indices of the `k` fastest OK results (by median, then CompareVariants), fastest first;
// fewer when fewer are OK. The set to re-measure, interleaved, before the final pick.
std::vector<int> TopCandidates(absl::Span<const tuning::CandidateResult> results, int k);

// A measurement schedule that interleaves `candidates` for `rounds` rounds, rotating the
// start by one each round so no candidate always runs first (after the same neighbour,
// on a cold clock): {a, b, c} x 2 -> a b c b c a.
std::vector<int> InterleavedOrder(absl::Span<const int> candidates, int rounds);

// Stores the selection in `record`: winner, winner_statistics, and every other result as
// a candidate (replacing the record's candidates). FailedPrecondition, with the count of
// each status, when there is no winner.
absl::Status FillRecord(const Selection& selection, tuning::TuningRecord* record);

}  // namespace autotune
}  // namespace tiletune

#endif  // AUTOTUNE_WINNER_H_

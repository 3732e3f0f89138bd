// `autotune evaluate`: what users get for problems nobody tuned. For each problem it asks
// the library (kernels/library.h, with the database under evaluation or the built-in one,
// optionally tuning on a miss) what it launches, and measures that against the winner of
// a tuning of this problem alone, in one harness: both run through the library, each
// checked bit-exact once against the CPU reference, then timed in interleaved rounds
// (the order alternating), each side a batch of launches on a rotation of buffer pairs
// larger than three times the L2, timed with events so host latency does not enter.
//
//   TT_ASSIGN_OR_RETURN(std::vector<EvaluationRow> rows,
//                       Evaluate(ops, problems, {.database = "", .tuned_database = "t.pb"}));
//   std::fputs(EvaluationMarkdown(rows, "H200").c_str(), stdout);
#ifndef AUTOTUNE_EVALUATE_H_
#define AUTOTUNE_EVALUATE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "autotune/suite.h"
#include "compiler/ops/registry.h"

namespace tiletune {
namespace autotune {

struct EvaluationOptions {
  // The database under evaluation, alone; empty means the library's built-in ones (and
  // $TILETUNE_DB). The user database folder is never read.
  std::string database;
  // Per-problem tuning of every problem (as `autotune` writes it); its records are the
  // reference.
  std::string tuned_database;
  // Tune on a miss in the evaluated library (LibraryOptions::tune_on_miss_ms); 0 is off.
  int tune_on_miss_ms = 0;
  // Where the evaluated library appends what it tunes on misses (emptied first, so every
  // problem is a miss); needed when tune_on_miss_ms > 0.
  std::string tune_on_miss_database;
  int device = 0;
  // Timed rounds per problem.
  int rounds = 15;
  // One line per finished problem.
  std::function<void(const std::string&)> progress;
  // Where set, receives the GPU it ran on: "NVIDIA H200 (sm_9.0, 132 SMs)", for reports.
  std::string* gpu = nullptr;
};

struct EvaluationRow {
  std::string problem;
  // What the evaluated library launches: level (exact, nearest, heuristic; "+miss" when
  // tuned on the miss), variant and why.
  std::string level;
  std::string variant;
  std::string reason;
  double first_call_ms = 0;
  // With tuning on a miss: the host time of the later call that measured the candidates,
  // and how long after the first call's start the tuned kernel was in place (the calls in
  // between ran the first call's kernel).
  double tuning_call_ms = 0;
  double tuned_after_ms = 0;
  double library_us = 0;
  // The per-problem tuning's winner.
  std::string tuned_variant;
  double tuned_us = 0;
  // library_us / tuned_us.
  double ratio = 0;
  // Why the problem was not measured; empty when it was.
  std::string error;
};

absl::StatusOr<std::vector<EvaluationRow>> Evaluate(const TileOpRegistry& ops,
                                                    const std::vector<SuiteProblem>& problems,
                                                    const EvaluationOptions& options);

struct EvaluationSummary {
  int measured = 0;
  int failed = 0;
  double geomean = 0;
  double worst = 0;
  std::string worst_problem;
  // The lowest ratio, and how many rows fall below kTunerLosesBelow: the per-problem tuning
  // slower than the library's choice (it measured that choice, so only by noise).
  double lowest = 0;
  std::string lowest_problem;
  int tuner_lost = 0;
  static constexpr double kTunerLosesBelow = 0.98;
  // Mean and largest first-call host time, milliseconds.
  double mean_first_call_ms = 0;
  double max_first_call_ms = 0;
  // Over the rows tuned on a miss.
  int tuned_on_miss = 0;
  double mean_tuning_call_ms = 0;
  double max_tuning_call_ms = 0;
  double mean_tuned_after_ms = 0;
};
EvaluationSummary Summarize(const std::vector<EvaluationRow>& rows);

// A Markdown report: `title`, the summary, then one table row per problem.
std::string EvaluationMarkdown(const std::vector<EvaluationRow>& rows, const std::string& title);
// CSV with a header line; fields quoted where they hold a comma, quote or newline.
std::string EvaluationCsv(const std::vector<EvaluationRow>& rows);

}  // namespace autotune
}  // namespace tiletune

#endif  // AUTOTUNE_EVALUATE_H_

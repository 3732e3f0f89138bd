#include "autotune/evaluate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "autotune/csv.h"
#include "compiler/base/status_macros.h"
#include "compiler/lower/lowered_kernel.h"
#include "compiler/tuning_db/measurement.h"
#include "kernels/library.h"
#include "kernels/measure.h"
#include "kernels/runtime/runtime.h"
#include "kernels/verify.h"

namespace tiletune {
namespace autotune {
namespace {

// Each timed batch lasts about this long.
constexpr double kBatchUs = 200;
constexpr int kMaxBatch = 200;
// How long tuning on a miss may take to compile its candidates in the background.
constexpr std::chrono::minutes kTuningWait{10};

std::string DescribeLaunch(const LaunchInfo& info) {
  return LaunchSummary(info.path, info.form, info.launch);
}

// Launch or, with items (batch_copy), LaunchItems.
absl::Status LaunchOp(Library& library, const TileOp& op, CUdeviceptr input, CUdeviceptr output,
                      CUstream stream, const DeviceItems& items) {
  if (items.get() == nullptr) return library.Launch(op, input, output, stream);
  return library.LaunchItems(op, input, output, items.args.table, items.args.count, stream);
}

absl::Status EvaluateOne(const TileOpRegistry& ops, const TileOp& op, Library& evaluated,
                         Library& tuned, const Context& context, const Stream& stream,
                         int rounds, std::mt19937_64& rng, EvaluationRow& row) {
  TT_ASSIGN_OR_RETURN(const TileOpDefinition* definition, ops.For(op));
  const auto first_call = std::chrono::steady_clock::now();
  TT_ASSIGN_OR_RETURN(LaunchInfo info, evaluated.Inspect(op));
  row.first_call_ms = info.first_call_ms;

  // Both launched through their libraries, checked bit-exact on one draw, then timed in
  // interleaved rounds over the rotated buffers (kernels/measure.h).
  TT_ASSIGN_OR_RETURN(std::unique_ptr<MeasureBench> bench,
                      MeasureBench::Create(context, *definition, op, rng));
  std::vector<Launcher> sides;
  for (Library* library : {&evaluated, &tuned}) {
    sides.push_back([library, &op, &bench](CUdeviceptr input, CUdeviceptr output, CUstream s) {
      return LaunchOp(*library, op, input, output, s, bench->items());
    });
  }
  // Tuning on a miss measures at the first launch after its background compiles are in:
  // launch as a program would until it has.
  while (info.tuning_pending) {
    if (std::chrono::steady_clock::now() - first_call > kTuningWait) {
      return absl::DeadlineExceededError(
          "tuning on a miss was still compiling its candidates after 10 minutes");
    }
    const auto [input, output] = bench->Set(0);
    TT_RETURN_IF_ERROR(sides[0](input, output, stream.get()));
    TT_RETURN_IF_ERROR(stream.Synchronize());
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    TT_ASSIGN_OR_RETURN(info, evaluated.Inspect(op));
  }
  if (info.tuned_on_miss) {
    row.tuning_call_ms = info.tuning_ms;
    row.tuned_after_ms = std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - first_call).count();
  }
  // The per-problem tuning's kernel only now, so that it cannot have filled the compile
  // cache for the first call.
  TT_ASSIGN_OR_RETURN(LaunchInfo reference, tuned.Inspect(op));
  if (reference.level != ResolutionLevel::kExact) {
    return absl::NotFoundError(absl::StrCat("the per-problem database has no record of it (",
                                            reference.resolution_detail, ")"));
  }
  row.tuned_variant = DescribeLaunch(reference);
  row.level = absl::StrCat(ResolutionLevelName(info.level), info.tuned_on_miss ? "+miss" : "");
  row.variant = DescribeLaunch(info);
  row.reason = info.resolution_detail;

  TT_RETURN_IF_ERROR(bench->Verify(sides[0], "the library's kernel", nullptr));
  TT_RETURN_IF_ERROR(bench->Verify(sides[1], "the tuned kernel", nullptr));
  MeasureBench::RoundOptions options;
  options.batch_us = kBatchUs;
  options.max_batch = kMaxBatch;
  options.min_rounds = options.max_rounds = rounds;
  TT_ASSIGN_OR_RETURN(MeasureBench::Rounds timed, bench->Interleave(sides, options, stream.get()));
  row.library_us = tuning::Median(timed.samples_us[0]);
  row.tuned_us = tuning::Median(timed.samples_us[1]);
  row.ratio = row.tuned_us > 0 ? row.library_us / row.tuned_us : 0;
  return absl::OkStatus();
}

std::string MarkdownCell(const std::string& text) {
  return absl::StrReplaceAll(text, {{"|", "\\|"}, {"\n", " "}});
}

}  // namespace

absl::StatusOr<std::vector<EvaluationRow>> Evaluate(const TileOpRegistry& ops,
                                                    const std::vector<SuiteProblem>& problems,
                                                    const EvaluationOptions& options) {
  TT_ASSIGN_OR_RETURN(std::unique_ptr<Context> context, Context::Create(options.device));
  TT_RETURN_IF_ERROR(context->Activate());
  if (options.gpu != nullptr) {
    const DeviceInfo& info = context->info();
    *options.gpu = absl::StrCat(info.name, " (sm_", info.cc_major, ".", info.cc_minor, ", ",
                                info.sm_count, " SMs)");
  }
  // The database under evaluation alone (else the built-in ones and $TILETUNE_DB); never
  // this user's folder, so that an evaluation says what every user gets.
  LibraryOptions evaluated_options;
  if (!options.database.empty()) {
    evaluated_options.databases = {options.database};
    evaluated_options.builtin = false;
  }
  evaluated_options.user_directory = "";
  evaluated_options.ops = &ops;
  evaluated_options.tune_on_miss_ms = options.tune_on_miss_ms;
  if (options.tune_on_miss_ms > 0) {
    if (options.tune_on_miss_database.empty()) {
      return absl::InvalidArgumentError("tuning on a miss needs a database to append to");
    }
    std::remove(options.tune_on_miss_database.c_str());
    evaluated_options.tune_on_miss_database = options.tune_on_miss_database;
  }
  TT_ASSIGN_OR_RETURN(std::unique_ptr<Library> evaluated, Library::Create(evaluated_options));
  if (!evaluated->database_status().ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the database under evaluation does not load: ", evaluated->database_status().message()));
  }
  LibraryOptions tuned_options;
  tuned_options.databases = {options.tuned_database};
  tuned_options.builtin = false;
  tuned_options.user_directory = "";
  tuned_options.ops = &ops;
  tuned_options.tune_on_miss_ms = 0;
  TT_ASSIGN_OR_RETURN(std::unique_ptr<Library> tuned, Library::Create(tuned_options));
  if (!tuned->database_status().ok()) {
    return absl::FailedPreconditionError(absl::StrCat("the per-problem tuning does not load: ",
                                                      tuned->database_status().message()));
  }
  TT_ASSIGN_OR_RETURN(std::unique_ptr<Stream> stream, Stream::Create(*context));
  std::mt19937_64 rng(std::random_device{}());
  std::vector<EvaluationRow> rows;
  for (const SuiteProblem& problem : problems) {
    EvaluationRow row;
    row.problem = DescribeProblem(ops, *problem);
    absl::Status status = EvaluateOne(ops, *problem, *evaluated, *tuned, *context, *stream,
                                      std::max(1, options.rounds), rng, row);
    if (absl::IsAborted(status)) return status;  // A fault: the context is gone.
    if (!status.ok()) row.error = std::string(status.message());
    if (options.progress) {
      options.progress(row.error.empty()
                           ? absl::StrFormat("%s: %s %.2f us / tuned %.2f us = %.3f", row.problem,
                                             row.level, row.library_us, row.tuned_us, row.ratio)
                           : absl::StrCat(row.problem, ": not measured: ", row.error));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

EvaluationSummary Summarize(const std::vector<EvaluationRow>& rows) {
  EvaluationSummary s;
  double log_sum = 0;
  for (const EvaluationRow& row : rows) {
    if (!row.error.empty() || row.ratio <= 0) {
      ++s.failed;
      continue;
    }
    ++s.measured;
    log_sum += std::log(row.ratio);
    if (row.ratio > s.worst) {
      s.worst = row.ratio;
      s.worst_problem = row.problem;
    }
    if (s.measured == 1 || row.ratio < s.lowest) {
      s.lowest = row.ratio;
      s.lowest_problem = row.problem;
    }
    if (row.ratio < EvaluationSummary::kTunerLosesBelow) ++s.tuner_lost;
    s.mean_first_call_ms += row.first_call_ms;
    s.max_first_call_ms = std::max(s.max_first_call_ms, row.first_call_ms);
    if (row.tuning_call_ms > 0) {
      ++s.tuned_on_miss;
      s.mean_tuning_call_ms += row.tuning_call_ms;
      s.max_tuning_call_ms = std::max(s.max_tuning_call_ms, row.tuning_call_ms);
      s.mean_tuned_after_ms += row.tuned_after_ms;
    }
  }
  if (s.measured > 0) {
    s.geomean = std::exp(log_sum / s.measured);
    s.mean_first_call_ms /= s.measured;
  }
  if (s.tuned_on_miss > 0) {
    s.mean_tuning_call_ms /= s.tuned_on_miss;
    s.mean_tuned_after_ms /= s.tuned_on_miss;
  }
  return s;
}

std::string EvaluationMarkdown(const std::vector<EvaluationRow>& rows, const std::string& title) {
  const EvaluationSummary s = Summarize(rows);
  std::string md = absl::StrCat("# ", title, "\n\n");
  absl::StrAppendFormat(&md,
                        "%d problem(s) measured, %d not. Library time over the per-problem "
                        "tuning's: geomean **%.3f**, worst **%.3f** (%s). First call: mean "
                        "%.1f ms, largest %.1f ms.\n\n",
                        s.measured, s.failed, s.geomean, s.worst, MarkdownCell(s.worst_problem),
                        s.mean_first_call_ms, s.max_first_call_ms);
  if (s.measured > 0) {
    absl::StrAppendFormat(&md, "Lowest ratio %.3f (%s); below %.2f, where the per-problem "
                          "tuning lost to the library's choice: %d row(s).\n\n",
                          s.lowest, MarkdownCell(s.lowest_problem),
                          EvaluationSummary::kTunerLosesBelow, s.tuner_lost);
  }
  const bool tuning = s.tuned_on_miss > 0;
  if (tuning) {
    absl::StrAppendFormat(
        &md,
        "Tuning on a miss (%d problem(s)): the call that measured the candidates, mean %.1f "
        "ms, largest %.1f ms; the tuned kernel in place %.1f ms after the first call on "
        "average (the calls before it ran the first call's kernel).\n\n",
        s.tuned_on_miss, s.mean_tuning_call_ms, s.max_tuning_call_ms, s.mean_tuned_after_ms);
  }
  md += "| problem | level | library launches | us | tuned winner | us | ratio | first call ms |";
  md += tuning ? " tuning call ms |\n" : "\n";
  md += "| --- | --- | --- | ---: | --- | ---: | ---: | ---: |";
  md += tuning ? " ---: |\n" : "\n";
  for (const EvaluationRow& r : rows) {
    if (!r.error.empty()) {
      absl::StrAppend(&md, "| ", MarkdownCell(r.problem), " | not measured: ",
                      MarkdownCell(r.error), " | | | | | | |", tuning ? " |\n" : "\n");
      continue;
    }
    absl::StrAppendFormat(&md, "| %s | %s | %s | %.2f | %s | %.2f | %.3f | %.1f |",
                          MarkdownCell(r.problem), r.level, MarkdownCell(r.variant), r.library_us,
                          MarkdownCell(r.tuned_variant), r.tuned_us, r.ratio, r.first_call_ms);
    md += tuning ? absl::StrFormat(" %.1f |\n", r.tuning_call_ms) : "\n";
  }
  md += "\nWhy each level was chosen:\n\n";
  for (const EvaluationRow& r : rows) {
    if (r.error.empty()) absl::StrAppend(&md, "- ", MarkdownCell(r.problem), ": ", MarkdownCell(r.reason), "\n");
  }
  return md;
}

std::string EvaluationCsv(const std::vector<EvaluationRow>& rows) {
  std::string csv =
      "problem,level,library_variant,library_us,tuned_variant,tuned_us,ratio,first_call_ms,"
      "tuning_call_ms,tuned_after_ms,reason,error\n";
  for (const EvaluationRow& r : rows) {
    absl::StrAppend(&csv, CsvField(r.problem), ",", CsvField(r.level), ",", CsvField(r.variant),
                    ",", absl::StrFormat("%.3f", r.library_us), ",", CsvField(r.tuned_variant),
                    ",", absl::StrFormat("%.3f", r.tuned_us), ",",
                    absl::StrFormat("%.4f", r.ratio), ",",
                    absl::StrFormat("%.1f,%.1f,%.1f", r.first_call_ms, r.tuning_call_ms,
                                    r.tuned_after_ms),
                    ",", CsvField(r.reason), ",",
                    CsvField(r.error), "\n");
  }
  return csv;
}

}  // namespace autotune
}  // namespace tiletune

// CPU tests of the evaluation's summary and reports (the measurement itself needs a GPU:
// `autotune evaluate` on the device, bench/device_session.sh PARTS=evaluate).
#include "autotune/evaluate.h"

#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace autotune {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

EvaluationRow Row(const std::string& problem, double library_us, double tuned_us,
                  double first_call_ms) {
  EvaluationRow row;
  row.problem = problem;
  row.level = "nearest";
  row.variant = "sync_simt tile 4096, 256 threads";
  row.reason = "nearest: record X";
  row.library_us = library_us;
  row.tuned_us = tuned_us;
  row.ratio = library_us / tuned_us;
  row.tuned_variant = "cp_async tile 32x256, 128 threads, 2 stages";
  row.first_call_ms = first_call_ms;
  return row;
}

TEST(EvaluateTest, SummaryIsTheGeomeanWorstAndLowestOfMeasuredRows) {
  std::vector<EvaluationRow> rows = {Row("a", 10, 10, 100), Row("b", 40, 10, 300),
                                     Row("c", 5, 10, 200)};
  EvaluationRow failed;
  failed.problem = "d";
  failed.error = "the per-problem database has no record of it";
  rows.push_back(failed);
  const EvaluationSummary s = Summarize(rows);
  EXPECT_EQ(s.measured, 3);
  EXPECT_EQ(s.failed, 1);
  EXPECT_NEAR(s.geomean, std::cbrt(1.0 * 4.0 * 0.5), 1e-12);
  EXPECT_DOUBLE_EQ(s.worst, 4.0);
  EXPECT_EQ(s.worst_problem, "b");
  EXPECT_DOUBLE_EQ(s.lowest, 0.5);
  EXPECT_EQ(s.lowest_problem, "c");
  EXPECT_EQ(s.tuner_lost, 1);
  EXPECT_DOUBLE_EQ(s.mean_first_call_ms, 200);
  EXPECT_DOUBLE_EQ(s.max_first_call_ms, 300);
  EXPECT_EQ(Summarize({}).measured, 0);
}

TEST(EvaluateTest, MarkdownHasTheSummaryEveryRowAndWhy) {
  std::vector<EvaluationRow> rows = {Row("copy f16 [8, 8]", 12, 10, 3.5)};
  EvaluationRow failed;
  failed.problem = "im2col | odd";
  failed.error = "not in the tuning";
  rows.push_back(failed);
  const std::string md = EvaluationMarkdown(rows, "title");
  EXPECT_THAT(md, HasSubstr("# title"));
  EXPECT_THAT(md, HasSubstr("geomean **1.200**, worst **1.200** (copy f16 [8, 8])"));
  EXPECT_THAT(md, HasSubstr("Lowest ratio 1.200 (copy f16 [8, 8]); below 0.98, where the "
                            "per-problem tuning lost to the library's choice: 0 row(s)."));
  EXPECT_THAT(md, HasSubstr("| copy f16 [8, 8] | nearest | sync_simt tile 4096, 256 threads | "
                            "12.00 | cp_async tile 32x256, 128 threads, 2 stages | 10.00 | "
                            "1.200 | 3.5 |"));
  EXPECT_THAT(md, HasSubstr("| im2col \\| odd | not measured: not in the tuning |"));
  EXPECT_THAT(md, HasSubstr("- copy f16 [8, 8]: nearest: record X"));
}

TEST(EvaluateTest, RowsTunedOnAMissGetTheirMeasuringCallSummedAndAColumn) {
  std::vector<EvaluationRow> rows = {Row("a", 10, 10, 80), Row("b", 11, 10, 60),
                                     Row("c", 9, 10, 70)};
  rows[0].tuning_call_ms = 30;
  rows[0].tuned_after_ms = 400;
  rows[1].tuning_call_ms = 50;
  rows[1].tuned_after_ms = 200;
  const EvaluationSummary s = Summarize(rows);
  EXPECT_EQ(s.tuned_on_miss, 2);
  EXPECT_DOUBLE_EQ(s.mean_tuning_call_ms, 40);
  EXPECT_DOUBLE_EQ(s.max_tuning_call_ms, 50);
  EXPECT_DOUBLE_EQ(s.mean_tuned_after_ms, 300);
  const std::string md = EvaluationMarkdown(rows, "title");
  EXPECT_THAT(md, HasSubstr("Tuning on a miss (2 problem(s)): the call that measured the "
                            "candidates, mean 40.0 ms, largest 50.0 ms; the tuned kernel in "
                            "place 300.0 ms after the first call on average"));
  EXPECT_THAT(md, HasSubstr("| first call ms | tuning call ms |"));
  EXPECT_THAT(md, HasSubstr("| 1.000 | 80.0 | 30.0 |"));
  EXPECT_THAT(md, HasSubstr("| 0.900 | 70.0 | 0.0 |"));
  // Without tuning, no such column.
  EXPECT_THAT(EvaluationMarkdown({Row("a", 10, 10, 80)}, "t"),
              Not(HasSubstr("tuning call ms")));
}

TEST(EvaluateTest, CsvQuotesFieldsThatNeedIt) {
  EvaluationRow row = Row("copy f16 [8, 8]", 12, 10, 3.5);
  row.reason = "say \"why\"";
  const std::string csv = EvaluationCsv({row});
  EXPECT_THAT(csv, HasSubstr("problem,level,library_variant,library_us,tuned_variant,tuned_us,"
                             "ratio,first_call_ms,tuning_call_ms,tuned_after_ms,reason,error\n"));
  EXPECT_THAT(csv, HasSubstr("\"copy f16 [8, 8]\",nearest,\"sync_simt tile 4096, 256 threads\","
                             "12.000,\"cp_async tile 32x256, 128 threads, 2 stages\",10.000,"
                             "1.2000,3.5,0.0,0.0,\"say \"\"why\"\"\",\n"));
}

}  // namespace
}  // namespace autotune
}  // namespace tiletune

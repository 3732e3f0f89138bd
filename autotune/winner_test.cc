#include "autotune/winner.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/tuning_db/tuning_db.h"
#include "compiler/tuning_db/tuning_db.pb.h"
#include "compiler/tuning_db/tuning_db_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace autotune {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

std::string Msg(const absl::Status& status) { return std::string(status.message()); }

// `count` samples around `center_us` with uniform relative noise of +-`noise`, from a
// fixed seed: the same every run.
std::vector<double> Noisy(double center_us, double noise, int count, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> jitter(-noise, noise);
  std::vector<double> samples;
  for (int i = 0; i < count; ++i) samples.push_back(center_us * (1 + jitter(generator)));
  return samples;
}

Measurement Measured(const std::string& path, std::vector<double> samples, int threads = 128,
                     int stages = 1) {
  Measurement m;
  m.variant = tuning::TestVariant(path, threads, stages);
  m.samples_us = std::move(samples);
  return m;
}

Measurement Failed(const std::string& path, tuning::CandidateResult::Status status) {
  Measurement m;
  m.variant = tuning::TestVariant(path);
  m.status = status;
  m.detail = "it broke";
  return m;
}

Selection Select(const std::vector<Measurement>& measurements, WinnerOptions options = {}) {
  absl::StatusOr<Selection> selection = SelectWinner(measurements, options);
  EXPECT_TRUE(selection.ok()) << selection.status();
  return selection.value_or(Selection{});
}

std::string WinnerPath(const Selection& selection) {
  if (selection.winner < 0) return "(none)";
  return selection.results[selection.winner].variant().lowering().path();
}

TEST(SummarizeSamplesTest, MedianMinAndInterpolatedPercentiles) {
  absl::StatusOr<SampleSummary> s = SummarizeSamples({10, 3, 5, 1, 9, 2, 8, 4, 7, 6});
  ASSERT_TRUE(s.ok());
  EXPECT_DOUBLE_EQ(s->median_us, 5.5);
  EXPECT_DOUBLE_EQ(s->min_us, 1);
  EXPECT_DOUBLE_EQ(s->p10_us, 1.9);
  EXPECT_DOUBLE_EQ(s->p90_us, 9.1);
  EXPECT_DOUBLE_EQ(s->spread, (9.1 - 1.9) / 5.5);
  EXPECT_EQ(s->sample_count, 10);

  s = SummarizeSamples({4, 2, 3});
  EXPECT_DOUBLE_EQ(s->median_us, 3);
  s = SummarizeSamples({7});
  EXPECT_DOUBLE_EQ(s->median_us, 7);
  EXPECT_DOUBLE_EQ(s->spread, 0);
}

TEST(SummarizeSamplesTest, OneOutlierAmongManyMovesNeitherMedianNorSpread) {
  std::vector<double> samples(21, 10.0);
  samples[7] = 9.9;
  samples[3] = 10.1;
  samples[12] = 5000;  // a preempted run
  absl::StatusOr<SampleSummary> s = SummarizeSamples(samples);
  ASSERT_TRUE(s.ok());
  EXPECT_DOUBLE_EQ(s->median_us, 10);
  EXPECT_LT(s->spread, 0.02);
}

TEST(SummarizeSamplesTest, RejectsBadSamples) {
  EXPECT_EQ(Msg(SummarizeSamples({}).status()), "no timing samples");
  EXPECT_THAT(Msg(SummarizeSamples({1, -2}).status()), HasSubstr("sample 1 is -2 us"));
  EXPECT_THAT(Msg(SummarizeSamples({0}).status()), HasSubstr("sample 0 is 0 us"));
  EXPECT_FALSE(SummarizeSamples({1, NAN}).ok());
  EXPECT_FALSE(SummarizeSamples({INFINITY}).ok());
}

TEST(WithinNoiseTest, UsesLargerSpreadOrTheFloor) {
  tuning::Statistics a, b;
  a.set_median_us(10);
  b.set_median_us(10.05);  // 0.5% apart
  EXPECT_TRUE(WithinNoise(a, b, 0.01));
  EXPECT_FALSE(WithinNoise(a, b, 0.001));
  b.set_median_us(10.5);  // 5% apart
  EXPECT_FALSE(WithinNoise(a, b, 0.01));
  a.set_spread(0.06);  // but a is noisy
  EXPECT_TRUE(WithinNoise(a, b, 0.01));
  EXPECT_TRUE(WithinNoise(b, a, 0.01));
  a.set_spread(0.04);
  EXPECT_FALSE(WithinNoise(a, b, 0.01));
}

TEST(SelectWinnerTest, ClearlyFasterCandidateWinsDespiteNoise) {
  Selection s = Select({Measured("sync_simt", Noisy(12, 0.01, 50, 1)),
                        Measured("tma", Noisy(10, 0.01, 50, 2), 1024, 4),
                        Measured("cp_async", Noisy(11, 0.01, 50, 3))});
  EXPECT_EQ(WinnerPath(s), "tma");  // more resources, but 10% faster than anything else
  EXPECT_THAT(s.tied, ElementsAre(1));
  EXPECT_THAT(s.results[1].statistics().median_us(), DoubleNear(10, 0.1));
  EXPECT_EQ(s.results[1].statistics().sample_count(), 50);
}

TEST(SelectWinnerTest, NoisyNearTieGoesToFewerResources) {
  // tma is 0.3% faster in truth but the samples are +-3% noisy: a tie, and bulk_1d uses
  // 128 x 1 resources against tma's 128 x 4.
  Selection s = Select({Measured("tma", Noisy(10.0, 0.03, 40, 7), 128, 4),
                        Measured("bulk_1d", Noisy(10.03, 0.03, 40, 8), 128, 1),
                        Measured("sync_simt", Noisy(20, 0.03, 40, 9), 32, 1)});
  EXPECT_EQ(WinnerPath(s), "bulk_1d");
  EXPECT_THAT(s.tied, ElementsAre(1, 0));
}

TEST(SelectWinnerTest, ExactTieIsBrokenByVariantOrderWhateverTheInputOrder) {
  std::vector<Measurement> measurements = {
      Measured("tma", {5, 5, 5}), Measured("cp_async", {5, 5, 5}), Measured("bulk_1d", {5, 5, 5})};
  std::sort(measurements.begin(), measurements.end(), [](const auto& a, const auto& b) {
    return a.variant.lowering().path() < b.variant.lowering().path();
  });
  int permutations = 0;
  do {
    EXPECT_EQ(WinnerPath(Select(measurements)), "bulk_1d");
    ++permutations;
  } while (std::next_permutation(measurements.begin(), measurements.end(),
                                 [](const auto& a, const auto& b) {
                                   return a.variant.lowering().path() < b.variant.lowering().path();
                                 }));
  EXPECT_EQ(permutations, 6);
}

TEST(SelectWinnerTest, OutlierDoesNotCostTheFasterCandidate) {
  std::vector<double> fast = Noisy(10, 0.005, 25, 4);
  fast[3] = 900;  // one run hit a context switch
  Selection s = Select(
      {Measured("sync_simt", Noisy(11, 0.005, 25, 5), 32, 1), Measured("tma", fast, 256, 2)});
  EXPECT_EQ(WinnerPath(s), "tma");
  EXPECT_THAT(s.tied, ElementsAre(1));
}

TEST(SelectWinnerTest, FasterThanDramIsRejectedAsCacheArtefact) {
  WinnerOptions options;
  options.bytes_moved = 1'000'000'000;                            // 1 GB per run
  options.ceiling_gbps = 4000;                                    // so 250 us is the floor
  Selection s = Select({Measured("tma", {200, 201, 199}),         // 5000 GB/s: impossible
                        Measured("bulk_1d", {245, 246, 244}),     // 4082 GB/s: within 5%
                        Measured("sync_simt", {400, 401, 399})},  // 2500 GB/s
                       options);
  EXPECT_EQ(s.results[0].status(), tuning::CandidateResult::REJECTED_CACHE_ARTEFACT);
  EXPECT_THAT(s.results[0].detail(),
              HasSubstr("5000.0 GB/s is 25.0% above the measured DRAM ceiling of 4000.0 GB/s"));
  EXPECT_EQ(s.results[1].status(), tuning::CandidateResult::OK);
  EXPECT_EQ(WinnerPath(s), "bulk_1d");
  const tuning::Statistics& winner = s.results[1].statistics();
  EXPECT_NEAR(winner.gbps(), 1e9 / 245e3, 1e-9);
  EXPECT_NEAR(winner.fraction_of_ceiling(), winner.gbps() / 4000, 1e-12);
  EXPECT_EQ(winner.ceiling_gbps(), 4000);
  EXPECT_NEAR(s.results[2].statistics().gbps(), 2500, 1e-9);

  options.ceiling_tolerance = 0.3;  // a looser tolerance keeps tma
  EXPECT_EQ(WinnerPath(Select({Measured("tma", {200}), Measured("bulk_1d", {245})}, options)),
            "tma");
  options.ceiling_gbps = 0;  // no ceiling measured: no check
  EXPECT_EQ(WinnerPath(Select({Measured("tma", {200}), Measured("bulk_1d", {245})}, options)),
            "tma");
}

TEST(SelectWinnerTest, FailedCandidatesKeepTheirStatusAndCannotWin) {
  Selection s =
      Select({Failed("tma", tuning::CandidateResult::COMPILE_ERROR), Measured("sync_simt", {30, 31}),
              Failed("cp_async", tuning::CandidateResult::FAILED_VERIFICATION)});
  EXPECT_EQ(WinnerPath(s), "sync_simt");
  EXPECT_EQ(s.results[0].status(), tuning::CandidateResult::COMPILE_ERROR);
  EXPECT_EQ(s.results[0].detail(), "it broke");
  EXPECT_FALSE(s.results[0].has_statistics());
  // A candidate measured before it failed keeps its timings but does not win.
  Measurement measured_then_failed = Failed("tma", tuning::CandidateResult::FAILED_VERIFICATION);
  measured_then_failed.samples_us = {1, 1, 1};
  s = Select({measured_then_failed, Measured("sync_simt", {30})});
  EXPECT_EQ(WinnerPath(s), "sync_simt");
  EXPECT_DOUBLE_EQ(s.results[0].statistics().median_us(), 1);
}

TEST(SelectWinnerTest, NoOkCandidateMeansNoWinner) {
  Selection s = Select(
      {Failed("tma", tuning::CandidateResult::LAUNCH_FAULT), Failed("tma", tuning::CandidateResult::PRUNED)});
  EXPECT_EQ(s.winner, -1);
  EXPECT_TRUE(s.tied.empty());
  EXPECT_EQ(Select({}).winner, -1);
}

TEST(SelectWinnerTest, RejectsBadInputNamingTheCandidate) {
  absl::StatusOr<Selection> s = SelectWinner({Measured("tma", {})});
  EXPECT_TRUE(absl::IsInvalidArgument(s.status()));
  EXPECT_THAT(Msg(s.status()), HasSubstr("candidate 0 (tma tile=[64,128]"));
  EXPECT_THAT(Msg(s.status()), HasSubstr("has status OK but no timing samples"));
  s = SelectWinner({Measured("tma", {1}), Measured("bulk_1d", {2, -1})});
  EXPECT_THAT(Msg(s.status()), HasSubstr("candidate 1 (bulk_1d"));
  EXPECT_THAT(Msg(s.status()), HasSubstr("sample 1 is -1 us"));
  WinnerOptions options;
  options.ceiling_tolerance = -0.1;
  EXPECT_TRUE(absl::IsInvalidArgument(SelectWinner({}, options).status()));
}

TEST(CompareByResourcesTest, ThreadsTimesStagesThenVariantOrder) {
  EXPECT_LT(CompareByResources(tuning::TestVariant("tma", 64, 2), tuning::TestVariant("bulk_1d", 256, 1)), 0);
  EXPECT_GT(CompareByResources(tuning::TestVariant("tma", 128, 1), tuning::TestVariant("tma", 64, 1)), 0);
  // Equal products: variant order (bulk_1d < tma).
  EXPECT_LT(CompareByResources(tuning::TestVariant("bulk_1d", 128, 2), tuning::TestVariant("tma", 256, 1)), 0);
  // Unset stages count as one.
  EXPECT_LT(CompareByResources(tuning::TestVariant("tma", 128, 0), tuning::TestVariant("tma", 128, 2)), 0);
  EXPECT_EQ(CompareByResources(tuning::TestVariant("tma"), tuning::TestVariant("tma")), 0);
}

TEST(TopCandidatesTest, FastestOkResultsFirst) {
  WinnerOptions options;
  options.bytes_moved = 1'000'000;
  options.ceiling_gbps = 1;  // 1000 us floor; "fast" below is an artefact
  Selection s = Select(
      {Measured("a", {3000}), Failed("b", tuning::CandidateResult::COMPILE_ERROR), Measured("c", {1500}),
       Measured("fast", {10}), Measured("d", {2000}), Measured("e", {1500})},
      options);
  EXPECT_EQ(s.results[3].status(), tuning::CandidateResult::REJECTED_CACHE_ARTEFACT);
  // c and e tie at 1500: variant order (TestVariant("c") < TestVariant("e")).
  EXPECT_THAT(TopCandidates(s.results, 3), ElementsAre(2, 5, 4));
  EXPECT_THAT(TopCandidates(s.results, 10), ElementsAre(2, 5, 4, 0));
  EXPECT_TRUE(TopCandidates(s.results, 0).empty());
}

TEST(InterleavedOrderTest, RotatesTheStartEveryRound) {
  EXPECT_THAT(InterleavedOrder({4, 7, 9}, 3), ElementsAre(4, 7, 9, 7, 9, 4, 9, 4, 7));
  EXPECT_THAT(InterleavedOrder({4, 7}, 1), ElementsAre(4, 7));
  EXPECT_TRUE(InterleavedOrder({}, 5).empty());
  EXPECT_TRUE(InterleavedOrder({1, 2}, 0).empty());
  // Over n rounds each candidate runs once in each position.
  std::vector<int> order = InterleavedOrder({0, 1, 2, 3}, 4);
  for (int position = 0; position < 4; ++position) {
    std::vector<int> at;
    for (int round = 0; round < 4; ++round) at.push_back(order[round * 4 + position]);
    EXPECT_THAT(at, UnorderedElementsAre(0, 1, 2, 3));
  }
}

TEST(FillRecordTest, WinnerAndOtherCandidatesGoIntoTheRecord) {
  Selection s = Select({Measured("sync_simt", {30}), Measured("tma", {10}),
                        Failed("cp_async", tuning::CandidateResult::COMPILE_ERROR)});
  tuning::TuningRecord record = tuning::TestRecord("NVIDIA H200", {64, 64}, 99);
  ASSERT_TRUE(FillRecord(s, &record).ok());
  EXPECT_EQ(record.winner().lowering().path(), "tma");
  EXPECT_DOUBLE_EQ(record.winner_statistics().median_us(), 10);
  ASSERT_EQ(record.candidates_size(), 2);
  EXPECT_EQ(record.candidates(0).variant().lowering().path(), "sync_simt");
  EXPECT_EQ(record.candidates(1).status(), tuning::CandidateResult::COMPILE_ERROR);
  tuning::TuningDatabase database;
  database.set_schema_version(tuning::kCurrentSchemaVersion);
  *database.add_records() = record;
  EXPECT_TRUE(tuning::ValidateTuningDatabase(database, "filled").ok());
}

TEST(FillRecordTest, NoWinnerIsAnErrorCountingStatuses) {
  Selection s = Select({Failed("tma", tuning::CandidateResult::COMPILE_ERROR),
                        Failed("tma", tuning::CandidateResult::COMPILE_ERROR),
                        Failed("sync_simt", tuning::CandidateResult::FAILED_VERIFICATION)});
  tuning::TuningRecord record;
  absl::Status status = FillRecord(s, &record);
  EXPECT_TRUE(absl::IsFailedPrecondition(status));
  EXPECT_EQ(Msg(status), "no winner among 3 candidates (COMPILE_ERROR 2, FAILED_VERIFICATION 1)");
}

}  // namespace
}  // namespace autotune
}  // namespace tiletune

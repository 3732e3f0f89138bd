#include "compiler/tuning_db/measurement.h"

#include <cmath>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace tuning {
namespace {

using ::testing::HasSubstr;

TEST(MeasurementTest, StatisticsCarryTheSummaryBandwidthAndCeiling) {
  // Median 5.5 (interpolated), min 1, p10 1.9, p90 9.1: spread (9.1 - 1.9) / 5.5.
  const std::vector<double> samples = {10, 3, 5, 1, 9, 2, 8, 4, 7, 6};
  absl::StatusOr<Statistics> s = StatisticsOf(samples, 11000, 4000);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_DOUBLE_EQ(s->median_us(), 5.5);
  EXPECT_DOUBLE_EQ(s->min_us(), 1);
  EXPECT_NEAR(s->spread(), (9.1 - 1.9) / 5.5, 1e-12);
  EXPECT_EQ(s->sample_count(), 10);
  EXPECT_DOUBLE_EQ(s->gbps(), 2);  // 11000 bytes in 5.5 us
  EXPECT_DOUBLE_EQ(s->ceiling_gbps(), 4000);
  EXPECT_DOUBLE_EQ(s->fraction_of_ceiling(), 2.0 / 4000);
  // Without bytes or a ceiling those fields stay unset.
  absl::StatusOr<Statistics> bare = StatisticsOf(samples, 0);
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->gbps(), 0);
  EXPECT_EQ(bare->ceiling_gbps(), 0);
  EXPECT_THAT(std::string(StatisticsOf({}, 10).status().message()), HasSubstr("no timing samples"));
  EXPECT_TRUE(std::isnan(Median({})));
  EXPECT_DOUBLE_EQ(Median({4, 1, 3, 2}), 2.5);
}

TEST(MeasurementTest, ProvenanceNamesTheToolHostTimeAndCommand) {
  const Provenance p = ProvenanceHere("autotune --suite=s.txt");
  EXPECT_EQ(p.tool_version(), kToolVersion);
  EXPECT_FALSE(p.host().empty());
  EXPECT_GT(p.unix_time_s(), 1700000000);
  EXPECT_EQ(p.command_line(), "autotune --suite=s.txt");
}

}  // namespace
}  // namespace tuning
}  // namespace tiletune

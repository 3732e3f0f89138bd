#include "autotune/shard.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace autotune {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Msg(const absl::Status& status) { return std::string(status.message()); }

EnvironmentLookup Env(std::map<std::string, std::string> variables) {
  return [variables](const std::string& name) -> std::optional<std::string> {
    auto it = variables.find(name);
    if (it == variables.end()) return std::nullopt;
    return it->second;
  };
}

// The shard of `variables`, which must be valid.
Shard ShardOf(std::map<std::string, std::string> variables,
              std::optional<int> job_count = std::nullopt) {
  absl::StatusOr<Shard> shard = ShardFromEnvironment(Env(std::move(variables)), job_count);
  EXPECT_TRUE(shard.ok()) << shard.status();
  return shard.value_or(Shard{-1, -1, "error"});
}

// The error message for `variables`, which must be invalid.
std::string ErrorOf(std::map<std::string, std::string> variables,
                    std::optional<int> job_count = std::nullopt) {
  absl::StatusOr<Shard> shard = ShardFromEnvironment(Env(std::move(variables)), job_count);
  EXPECT_TRUE(absl::IsInvalidArgument(shard.status())) << shard.status();
  return Msg(shard.status());
}

TEST(ParseShardTest, AcceptsZeroBasedIndexBelowCount) {
  for (const auto& [spec, index, count] : std::vector<std::tuple<std::string, int, int>>{
           {"0/1", 0, 1}, {"3/4", 3, 4}, {"0/4", 0, 4}, {"17/1000", 17, 1000}}) {
    absl::StatusOr<Shard> shard = ParseShard(spec);
    ASSERT_TRUE(shard.ok()) << spec << ": " << shard.status();
    EXPECT_EQ(shard->index, index);
    EXPECT_EQ(shard->count, count);
    EXPECT_EQ(shard->source, "--shard");
    EXPECT_EQ(FormatShard(*shard), spec);
  }
}

TEST(ParseShardTest, RejectsMalformedSpecsNamingThem) {
  for (const std::string spec : {"", "3", "1/", "/4", "a/4", "1/b", "-1/4", "+1/4", " 1/4", "1/4 ",
                                 "1/4/5", "1.0/4", "1/99999999999"}) {
    absl::StatusOr<Shard> shard = ParseShard(spec);
    ASSERT_TRUE(absl::IsInvalidArgument(shard.status())) << spec;
    EXPECT_THAT(Msg(shard.status()), HasSubstr("--shard=\"" + spec + "\" is not of the form i/n"));
  }
}

TEST(ParseShardTest, RejectsIndexNotBelowCount) {
  EXPECT_EQ(Msg(ParseShard("4/4").status()),
            "--shard=\"4/4\": the index must be below the count; shards are 0-based, 0/4 to "
            "3/4");
  EXPECT_EQ(Msg(ParseShard("0/0").status()), "--shard=\"0/0\": the shard count must be >= 1");
}

TEST(ShardFromEnvironmentTest, NoBatchSystemIsOneShard) {
  Shard shard = ShardOf({{"HOME", "/root"}, {"TILETUNE_SHARD_COUNT", "8"}});
  EXPECT_EQ(shard.index, 0);
  EXPECT_EQ(shard.count, 1);
  EXPECT_EQ(shard.source, "default");
}

TEST(ShardFromEnvironmentTest, SlurmArrayFromZero) {
  Shard shard = ShardOf({{"SLURM_ARRAY_TASK_ID", "5"},
                         {"SLURM_ARRAY_TASK_COUNT", "8"},
                         {"SLURM_ARRAY_TASK_MIN", "0"},
                         {"SLURM_ARRAY_TASK_MAX", "7"}});
  EXPECT_EQ(FormatShard(shard), "5/8");
  EXPECT_EQ(shard.source, "Slurm array");
}

TEST(ShardFromEnvironmentTest, SlurmArrayStartingAtOne) {
  // sbatch --array=1-8: ids 1..8 are shards 0..7.
  EXPECT_EQ(FormatShard(ShardOf({{"SLURM_ARRAY_TASK_ID", "1"},
                                 {"SLURM_ARRAY_TASK_COUNT", "8"},
                                 {"SLURM_ARRAY_TASK_MIN", "1"}})),
            "0/8");
  EXPECT_EQ(FormatShard(ShardOf({{"SLURM_ARRAY_TASK_ID", "8"},
                                 {"SLURM_ARRAY_TASK_COUNT", "8"},
                                 {"SLURM_ARRAY_TASK_MIN", "1"}})),
            "7/8");
}

TEST(ShardFromEnvironmentTest, SlurmArrayWithStepAndWithoutCount) {
  // sbatch --array=10-40:10 gives ids 10, 20, 30, 40.
  std::map<std::string, std::string> env = {{"SLURM_ARRAY_TASK_ID", "30"},
                                            {"SLURM_ARRAY_TASK_MIN", "10"},
                                            {"SLURM_ARRAY_TASK_MAX", "40"},
                                            {"SLURM_ARRAY_TASK_STEP", "10"}};
  EXPECT_EQ(FormatShard(ShardOf(env)), "2/4");
  env["SLURM_ARRAY_TASK_ID"] = "25";
  EXPECT_EQ(ErrorOf(env),
            "SLURM_ARRAY_TASK_ID=25 is not SLURM_ARRAY_TASK_MIN=10 plus a multiple of "
            "SLURM_ARRAY_TASK_STEP=10");
}

TEST(ShardFromEnvironmentTest, SlurmErrorsNameTheVariables) {
  EXPECT_THAT(ErrorOf({{"SLURM_ARRAY_TASK_ID", "3"}}),
              HasSubstr("SLURM_ARRAY_TASK_ID=3 is set but SLURM_ARRAY_TASK_COUNT is not"));
  EXPECT_EQ(ErrorOf({{"SLURM_ARRAY_TASK_ID", "x3"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}),
            "SLURM_ARRAY_TASK_ID=\"x3\" is not a non-negative decimal integer");
  EXPECT_EQ(ErrorOf({{"SLURM_ARRAY_TASK_ID", "2"}, {"SLURM_ARRAY_TASK_COUNT", "-4"}}),
            "SLURM_ARRAY_TASK_COUNT=\"-4\" is not a non-negative decimal integer");
  EXPECT_EQ(ErrorOf({{"SLURM_ARRAY_TASK_ID", "2"}, {"SLURM_ARRAY_TASK_COUNT", "0"}}),
            "SLURM_ARRAY_TASK_COUNT=0 is not a shard count; it must be >= 1");
  EXPECT_EQ(ErrorOf({{"SLURM_ARRAY_TASK_ID", "0"},
                     {"SLURM_ARRAY_TASK_COUNT", "4"},
                     {"SLURM_ARRAY_TASK_MIN", "1"}}),
            "SLURM_ARRAY_TASK_ID=0 is below SLURM_ARRAY_TASK_MIN=1");
  // --array=1,3,7: ids are not contiguous, id 7 is not shard 6 of 3.
  EXPECT_THAT(ErrorOf({{"SLURM_ARRAY_TASK_ID", "7"},
                       {"SLURM_ARRAY_TASK_COUNT", "3"},
                       {"SLURM_ARRAY_TASK_MIN", "1"}}),
              HasSubstr("SLURM_ARRAY_TASK_ID=7 (minimum 1, step 1) gives shard 6, not below "
                        "SLURM_ARRAY_TASK_COUNT=3: use a contiguous array"));
  EXPECT_EQ(ErrorOf({{"SLURM_ARRAY_TASK_ID", "1"},
                     {"SLURM_ARRAY_TASK_COUNT", "4"},
                     {"SLURM_ARRAY_TASK_STEP", "0"}}),
            "SLURM_ARRAY_TASK_STEP=0 is not a step; it must be >= 1");
}

TEST(ShardFromEnvironmentTest, KubernetesIndexedJob) {
  Shard shard = ShardOf({{"JOB_COMPLETION_INDEX", "2"}, {"TILETUNE_SHARD_COUNT", "6"}});
  EXPECT_EQ(FormatShard(shard), "2/6");
  EXPECT_EQ(shard.source, "Kubernetes indexed job");
  // The caller's count wins over the variable.
  EXPECT_EQ(FormatShard(ShardOf({{"JOB_COMPLETION_INDEX", "2"}, {"TILETUNE_SHARD_COUNT", "6"}}, 3)),
            "2/3");
  EXPECT_EQ(FormatShard(ShardOf({{"JOB_COMPLETION_INDEX", "0"}}, 1)), "0/1");
}

TEST(ShardFromEnvironmentTest, KubernetesErrorsNameTheValues) {
  EXPECT_EQ(ErrorOf({{"JOB_COMPLETION_INDEX", "2"}}),
            "JOB_COMPLETION_INDEX=2 is set but the shard count is unknown: set "
            "TILETUNE_SHARD_COUNT to the Job's spec.completions, or pass --shard=2/N");
  EXPECT_EQ(ErrorOf({{"JOB_COMPLETION_INDEX", "6"}, {"TILETUNE_SHARD_COUNT", "6"}}),
            "JOB_COMPLETION_INDEX=6 is not below TILETUNE_SHARD_COUNT (6)");
  EXPECT_EQ(ErrorOf({{"JOB_COMPLETION_INDEX", "1"}}, 0),
            "the job's completion count is 0; a shard count must be >= 1");
  EXPECT_EQ(ErrorOf({{"JOB_COMPLETION_INDEX", "1"}, {"TILETUNE_SHARD_COUNT", "six"}}),
            "TILETUNE_SHARD_COUNT=\"six\" is not a non-negative decimal integer");
  EXPECT_EQ(ErrorOf({{"JOB_COMPLETION_INDEX", ""}}),
            "JOB_COMPLETION_INDEX=\"\" is not a non-negative decimal integer");
}

TEST(ShardFromEnvironmentTest, SlurmIsConsultedBeforeKubernetes) {
  EXPECT_EQ(FormatShard(ShardOf({{"SLURM_ARRAY_TASK_ID", "1"},
                                 {"SLURM_ARRAY_TASK_COUNT", "2"},
                                 {"JOB_COMPLETION_INDEX", "3"},
                                 {"TILETUNE_SHARD_COUNT", "4"}})),
            "1/2");
}

TEST(ResolveShardTest, FlagWinsOverEnvironment) {
  auto env = Env({{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_COUNT", "2"}});
  EXPECT_EQ(FormatShard(*ResolveShard("3/5", env)), "3/5");
  EXPECT_EQ(FormatShard(*ResolveShard("", env)), "1/2");
  EXPECT_FALSE(ResolveShard("5/5", env).ok());
}

TEST(ResolveShardTest, ReadsTheProcessEnvironment) {
  ASSERT_EQ(setenv("JOB_COMPLETION_INDEX", "4", 1), 0);
  ASSERT_EQ(setenv("TILETUNE_SHARD_COUNT", "9", 1), 0);
  absl::StatusOr<Shard> shard = ResolveShard("", ProcessEnvironment());
  unsetenv("JOB_COMPLETION_INDEX");
  unsetenv("TILETUNE_SHARD_COUNT");
  ASSERT_TRUE(shard.ok()) << shard.status();
  EXPECT_EQ(FormatShard(*shard), "4/9");
  EXPECT_FALSE(ProcessEnvironment()("JOB_COMPLETION_INDEX").has_value());
}

TEST(SelectShardTest, ItemKGoesToShardKModN) {
  const std::vector<std::string> items = {"a", "b", "c", "d", "e", "f", "g"};
  EXPECT_THAT(SelectShard(absl::MakeConstSpan(items), Shard{0, 3}), ElementsAre("a", "d", "g"));
  EXPECT_THAT(SelectShard(absl::MakeConstSpan(items), Shard{1, 3}), ElementsAre("b", "e"));
  EXPECT_THAT(SelectShard(absl::MakeConstSpan(items), Shard{2, 3}), ElementsAre("c", "f"));
  EXPECT_THAT(SelectShard(absl::MakeConstSpan(items), Shard{0, 1}),
              ElementsAre("a", "b", "c", "d", "e", "f", "g"));
  EXPECT_TRUE(SelectShard(absl::MakeConstSpan(items), Shard{9, 10}).empty());
  EXPECT_TRUE(ShardIndices(5, Shard{3, 3}).empty());  // invalid shard selects nothing
}

TEST(SelectShardTest, PartitionIsCompleteAndBalanced) {
  for (size_t items : {0, 1, 7, 64, 1001}) {
    for (int count : {1, 2, 3, 8, 13, 2000}) {
      std::set<size_t> seen;
      size_t smallest = items, largest = 0;
      for (int index = 0; index < count; ++index) {
        std::vector<size_t> mine = ShardIndices(items, Shard{index, count});
        smallest = std::min(smallest, mine.size());
        largest = std::max(largest, mine.size());
        for (size_t k : mine) {
          EXPECT_EQ(k % count, static_cast<size_t>(index));
          EXPECT_TRUE(seen.insert(k).second) << k << " in two shards";
        }
      }
      EXPECT_EQ(seen.size(), items) << items << " items, " << count << " shards";
      EXPECT_LE(largest - smallest, 1u);
    }
  }
}

}  // namespace
}  // namespace autotune
}  // namespace tiletune

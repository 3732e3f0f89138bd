#include "autotune/suite.h"

#include <algorithm>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace autotune {
namespace {

using ::testing::HasSubstr;

TEST(SuiteTest, ParsesProblemLists) {
  auto problems =
      ParseProblems("copy:f16:8192,8192; copy:u8:100;im2col:f16:2,17,19,8:k=3x2:s=2:d=1x2:p=1x0");
  ASSERT_TRUE(problems.ok()) << problems.status();
  ASSERT_EQ(problems->size(), 3u);
  EXPECT_EQ(DescribeProblem((*problems)[0]), "copy f16 [8192, 8192]");
  EXPECT_EQ(DescribeProblem((*problems)[1]), "copy u8 [100]");
  EXPECT_EQ(DescribeProblem((*problems)[2]), "im2col f16 N2 C8 17x19 k3x2 s2x2 d1x2 p1x0");
  int copies = 0, convs = 0;
  for (const SuiteProblem& p : DefaultSuite()) (p.copy ? copies : convs)++;
  EXPECT_EQ(copies, 4);
  EXPECT_EQ(convs, 4);
}

TEST(SuiteTest, TasksBuildCandidatesForBothOps) {
  Target target = *Target::Parse("sm_90a");
  auto problems = ParseProblems("copy:f16:512,512;im2col:f16:2,9,9,16:k=3:p=1");
  ASSERT_TRUE(problems.ok());
  for (const SuiteProblem& problem : *problems) {
    auto task = MakeTask(problem, target);
    ASSERT_TRUE(task.ok()) << task.status();
    SearchStats stats;
    auto candidates = task->build(task->all_hints, task->representative_launches, &stats);
    ASSERT_TRUE(candidates.ok()) << candidates.status();
    EXPECT_FALSE(candidates->empty());
    EXPECT_EQ(stats.enumerated, static_cast<int>(task->all_hints.size() *
                                                 task->representative_launches.size()));
    EXPECT_GT(task->bytes_moved, 0);
    // The reference writes the expected output.
    std::vector<uint8_t> in(task->input_bytes, 7), out(task->output_bytes, 0);
    ASSERT_TRUE(task->reference(in.data(), out.data()).ok());
    EXPECT_NE(std::count(out.begin(), out.end(), 7), 0);
  }
}

TEST(SuiteTest, RejectsBadSpecsClearly) {
  struct Case {
    const char* spec;
    const char* message;
  } cases[] = {{"copy:f16", "needs at least three"},
               {"gemm:f16:8", "op 'gemm' is not copy or im2col"},
               {"im2col:f16:1,8,8", "an im2col image is N,H,W,C"},
               {"im2col:f16:1,8,8,4:k=0", "option k"},
               {"im2col:f16:1,8,8,4:q=1", "unknown option 'q'"},
               {"im2col:f16:1,4,4,4:k=9", "problem 'im2col"},
               {"copy:f12:8", "unknown dtype 'f12'"},
               {"copy:f16:0", "extent '0'"},
               {"copy:f16:8,x", "extent 'x'"},
               {"copy:f16:1,1,1,1,1,1", "give 1 to 5 extents"},
               {"", "no problems given"}};
  for (const Case& c : cases) {
    auto problems = ParseProblems(c.spec);
    ASSERT_FALSE(problems.ok()) << c.spec;
    EXPECT_THAT(problems.status().message(), HasSubstr(c.message)) << c.spec;
  }
}

}  // namespace
}  // namespace autotune
}  // namespace tiletune

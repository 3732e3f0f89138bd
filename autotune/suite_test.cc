#include "autotune/suite.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace autotune {
namespace {

using ::testing::HasSubstr;

TEST(SuiteTest, ParsesProblemLists) {
  auto problems = ParseProblems("copy:f16:8192,8192; copy:u8:100");
  ASSERT_TRUE(problems.ok()) << problems.status();
  ASSERT_EQ(problems->size(), 2u);
  EXPECT_EQ(DescribeProblem((*problems)[0]), "copy f16 [8192, 8192]");
  EXPECT_EQ(DescribeProblem((*problems)[1]), "copy u8 [100]");
  EXPECT_EQ(DefaultCopySuite().size(), 4u);
}

TEST(SuiteTest, RejectsBadSpecsClearly) {
  struct Case {
    const char* spec;
    const char* message;
  } cases[] = {{"copy:f16", "needs three"},
               {"gemm:f16:8", "op 'gemm' is not copy"},
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

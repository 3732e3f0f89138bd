#include "autotune/command_line.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

ABSL_FLAG(int, test_samples, 5, "samples");
ABSL_FLAG(bool, test_report, true, "report");
ABSL_FLAG(std::string, test_output, "db.txtpb", "output");
ABSL_FLAG(int, test_internal, -1, "internal");

namespace tiletune {
namespace autotune {
namespace {

using ::testing::HasSubstr;

const std::vector<FlagSpec>& Specs() {
  static const std::vector<FlagSpec>* const specs = new std::vector<FlagSpec>{
      {"test_samples", FlagType::kInt, "N: samples", 0, 1, 1000},
      {"test_report", FlagType::kBool, "write a report"},
      {"test_output", FlagType::kString, "PATH: the database", 'o'},
      {"test_internal", FlagType::kInt, "", 0, -1, 1 << 20},
  };
  return *specs;
}

TEST(AutotuneCommandLineTest, StoresValuesInTheAbslFlags) {
  auto parsed = ParseAutotuneFlags(
      {"--test_samples", "9", "--notest_report", "-o", "a.pb", "--test_internal=3"}, Specs());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_FALSE(parsed->help());
  EXPECT_EQ(absl::GetFlag(FLAGS_test_samples), 9);
  EXPECT_FALSE(absl::GetFlag(FLAGS_test_report));
  EXPECT_EQ(absl::GetFlag(FLAGS_test_output), "a.pb");
  EXPECT_EQ(absl::GetFlag(FLAGS_test_internal), 3);
  ASSERT_TRUE(ParseAutotuneFlags({"--test_report"}, Specs()).ok());
  EXPECT_TRUE(absl::GetFlag(FLAGS_test_report));
}

TEST(AutotuneCommandLineTest, UsageErrorsAreTheSharedParsers) {
  auto parsed = ParseAutotuneFlags({"--test_samples=0"}, Specs());
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(std::string(parsed.status().message()),
              HasSubstr("--test_samples=0: accepted are integers 1 to 1000"));
  EXPECT_TRUE(ParseAutotuneFlags({"--foo", "--help"}, Specs())->help());
}

}  // namespace
}  // namespace autotune
}  // namespace tiletune

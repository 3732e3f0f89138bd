#include "autotune/command_line.h"

#include <cstdint>
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
      {"test_samples", "N: samples", 1, 1000},
      {"test_report", "write a report"},
      {"test_output", "PATH: the database"},
      {"test_internal", "", -1, 1 << 20},
  };
  return *specs;
}

std::string Error(const std::vector<std::string>& args) {
  auto parsed = ParseCommandLineFlags(args, Specs());
  EXPECT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(parsed.status().message());
}

TEST(CommandLineTest, ParsesValuesBoolsAndNegations) {
  auto parsed = ParseCommandLineFlags(
      {"--test_samples=9", "--notest_report", "--test_output=a.pb", "--test_internal=3"}, Specs());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_FALSE(parsed->help);
  EXPECT_EQ(absl::GetFlag(FLAGS_test_samples), 9);
  EXPECT_FALSE(absl::GetFlag(FLAGS_test_report));
  EXPECT_EQ(absl::GetFlag(FLAGS_test_output), "a.pb");
  ASSERT_TRUE(ParseCommandLineFlags({"--test_report"}, Specs()).ok());
  EXPECT_TRUE(absl::GetFlag(FLAGS_test_report));
}

// Issue 17: each of these used to be accepted or to exit 1.
TEST(CommandLineTest, EveryUsageErrorIsOneClearLine) {
  EXPECT_THAT(Error({"--foo"}), HasSubstr("unknown flag --foo; see --help"));
  EXPECT_THAT(Error({"--test_samples=0"}), HasSubstr("--test_samples=0: accepted are 1 to 1000"));
  EXPECT_THAT(Error({"--test_samples=-5"}), HasSubstr("accepted are 1 to 1000"));
  EXPECT_THAT(Error({"--test_samples=x"}), HasSubstr("--test_samples=x: "));
  EXPECT_THAT(Error({"--test_report=maybe"}), HasSubstr("--test_report=maybe: "));
  EXPECT_THAT(Error({"extra.txtpb"}), HasSubstr("unexpected argument 'extra.txtpb'"));
  EXPECT_THAT(Error({"--test_samples=3", "--test_samples=4"}),
              HasSubstr("flag --test_samples is given twice"));
  EXPECT_THAT(Error({"--test_output"}), HasSubstr("--test_output needs a value"));
  // A 125 KB value is cut when echoed.
  const std::string message = Error({"--test_samples=" + std::string(125000, '7')});
  EXPECT_LT(message.size(), 300u);
  EXPECT_THAT(message, HasSubstr("(125000 characters)"));
  for (const std::string& message : {Error({"--foo"}), Error({"x"})}) {
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(CommandLineTest, HelpWinsAndListsOnlyPublicFlags) {
  for (const char* help : {"--help", "-h", "--helpfull"}) {
    auto parsed = ParseCommandLineFlags({"--foo", help}, Specs());
    ASSERT_TRUE(parsed.ok());
    EXPECT_TRUE(parsed->help);
  }
  const std::string text = FlagHelp(Specs());
  EXPECT_THAT(text, HasSubstr("--test_samples  N: samples"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("test_internal")));
}

TEST(CommandLineTest, AbbreviateKeepsShortText) {
  EXPECT_EQ(Abbreviate("short"), "short");
  EXPECT_EQ(Abbreviate(std::string(100, 'a'), 10), "aaaaaaaaaa... (100 characters)");
}

}  // namespace
}  // namespace autotune
}  // namespace tiletune

#include "compiler/base/command_line.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

const std::vector<FlagSpec>& Specs() {
  static const std::vector<FlagSpec>* specs = new std::vector<FlagSpec>{
      {"output", FlagType::kString, "PATH: where to write", 'o'},
      {"samples", FlagType::kInt, "N: samples", 0, 1, 1000},
      {"report", FlagType::kBool, "write a report"},
      {"shard", FlagType::kString, "i/n: a slice"},
      {"problems", FlagType::kString, "SPECS", 0, 0, 0, /*allow_empty=*/true},
      {"worker", FlagType::kInt, ""},
  };
  return *specs;
}

std::string Error(const std::vector<std::string>& args, int positional = 0) {
  absl::StatusOr<CommandLine> line = ParseCommandLine(args, Specs(), positional);
  return line.ok() ? "ok" : std::string(line.status().message());
}

TEST(CommandLineTest, TakesEverySpelling) {
  absl::StatusOr<CommandLine> line = ParseCommandLine(
      {"--output", "a.txtpb", "--samples=7", "--noreport", "--shard", "1/2", "in1", "--",
       "--not-a-flag"},
      Specs(), 2);
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(line->String("output"), "a.txtpb");
  EXPECT_EQ(line->Int("samples", 5), 7);
  EXPECT_FALSE(line->Bool("report", true));
  EXPECT_EQ(line->String("shard"), "1/2");
  EXPECT_THAT(line->positional(), ElementsAre("in1", "--not-a-flag"));
  line = ParseCommandLine({"-o", "x", "--report", "in"}, Specs(), 1);
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_EQ(line->String("output"), "x");
  EXPECT_TRUE(line->Bool("report", false));  // A bare bool never takes the next argument.
  EXPECT_THAT(line->positional(), ElementsAre("in"));
  EXPECT_EQ(ParseCommandLine({"-o=y"}, Specs())->String("output"), "y");
  EXPECT_EQ(ParseCommandLine({"--report=false"}, Specs())->Bool("report", true), false);
  EXPECT_TRUE(ParseCommandLine({"--problems="}, Specs())->Has("problems"));
  EXPECT_EQ(ParseCommandLine({"--worker=3"}, Specs())->Int("worker", 0), 3);
}

TEST(CommandLineTest, HelpAndVersionWinOverEverythingElse) {
  EXPECT_TRUE(ParseCommandLine({"--bogus", "--help"}, Specs())->help());
  EXPECT_TRUE(ParseCommandLine({"-h"}, Specs())->help());
  EXPECT_TRUE(ParseCommandLine({"--bogus", "--version"}, Specs())->version());
  EXPECT_FALSE(ParseCommandLine({"--", "--help"}, Specs(), 1)->help());
  EXPECT_THAT(VersionLine("bake"), HasSubstr("bake (tiletune 0."));
}

TEST(CommandLineTest, UsageErrorsNameTheArgumentAndWhatIsAccepted) {
  EXPECT_THAT(Error({"--bogus=1"}), HasSubstr("unknown flag --bogus; accepted are --output, "));
  EXPECT_THAT(Error({"--worker_x"}), Not(HasSubstr("--worker,")));  // internal: not listed
  EXPECT_THAT(Error({"-x"}), HasSubstr("unknown option -x"));
  EXPECT_THAT(Error({"--samples=0"}), HasSubstr("--samples=0: accepted are integers 1 to 1000"));
  EXPECT_THAT(Error({"--samples=abc"}), HasSubstr("accepted are integers 1 to 1000"));
  EXPECT_THAT(Error({"--report=maybe"}), HasSubstr("accepted are true and false"));
  EXPECT_THAT(Error({"--shard="}), HasSubstr("--shard is empty"));
  EXPECT_THAT(Error({"--output"}), HasSubstr("--output needs a value"));
  EXPECT_THAT(Error({"--samples=2", "--samples", "3"}), HasSubstr("--samples is given twice"));
  EXPECT_THAT(Error({"stray"}), HasSubstr("unexpected argument 'stray': this command takes only flags"));
  EXPECT_THAT(Error({"a", "b"}, 1), HasSubstr("unexpected argument 'b': at most 1 accepted"));
  const std::string long_value(100000, 'x');
  EXPECT_LT(Error({"--samples=" + long_value}).size(), 300u);
  EXPECT_LT(Error({"--" + long_value}).size(), 400u);
}

TEST(CommandLineTest, HelpListsPublicFlagsOnly) {
  const std::string help = FlagHelp(Specs());
  EXPECT_THAT(help, HasSubstr("--output, -o"));
  EXPECT_THAT(help, HasSubstr("--version"));
  EXPECT_THAT(help, Not(HasSubstr("--worker")));
  EXPECT_THAT(EnvironmentHelp(), HasSubstr("TILETUNE_DB "));
}

// Relative paths are the user's: from where `bazel run` was started, when it was.
TEST(UserPathTest, RelativePathsAreTakenFromWhereBazelRunStarted) {
  unsetenv("BUILD_WORKING_DIRECTORY");
  EXPECT_EQ(UserPath("db.txtpb"), "db.txtpb");
  setenv("BUILD_WORKING_DIRECTORY", "/home/me/work", 1);
  EXPECT_EQ(UserPath("out/db.txtpb"), "/home/me/work/out/db.txtpb");
  EXPECT_EQ(UserPath("/tmp/db.txtpb"), "/tmp/db.txtpb");
  EXPECT_EQ(UserPath(""), "");
  setenv("BUILD_WORKING_DIRECTORY", "", 1);
  EXPECT_EQ(UserPath("db.txtpb"), "db.txtpb");
  unsetenv("BUILD_WORKING_DIRECTORY");
}

}  // namespace
}  // namespace tiletune

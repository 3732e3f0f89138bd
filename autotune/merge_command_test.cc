#include "autotune/merge_command.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "compiler/tuning_db/atomic_file.h"
#include "compiler/base/test_folder.h"
#include "compiler/tuning_db/tuning_db.h"
#include "compiler/tuning_db/tuning_db_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace autotune {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// Runs the command with stdout and stderr captured.
struct CommandRun {
  int code;
  std::string out;
  std::string err;
};

std::string Drain(std::FILE* file) {
  std::rewind(file);
  std::string text;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0) text.append(buffer, n);
  std::fclose(file);
  return text;
}

CommandRun RunMerge(const std::vector<std::string>& args) {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  int code = RunMergeCommand(args, out, err);
  return CommandRun{code, Drain(out), Drain(err)};
}

TEST(ParseMergeArgumentsTest, AcceptsTheDocumentedForms) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"a.pb", "b.txtpb", "-o", "out.pb"},
                                             {"-o", "out.pb", "a.pb", "b.txtpb"},
                                             {"a.pb", "--output", "out.pb", "b.txtpb"},
                                             {"a.pb", "b.txtpb", "--output=out.pb"},
                                             {"a.pb", "-o=out.pb", "b.txtpb"}}) {
    absl::StatusOr<MergeArguments> parsed = ParseMergeArguments(args);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_THAT(parsed->inputs, ElementsAre("a.pb", "b.txtpb"));
    EXPECT_EQ(parsed->output, "out.pb");
    EXPECT_FALSE(parsed->help);
  }
  EXPECT_TRUE(ParseMergeArguments({"--help"})->help);
  EXPECT_FALSE(ParseMergeArguments({"a", "-o", "b"})->report);
  EXPECT_TRUE(ParseMergeArguments({"a", "--report", "-o", "b"})->report);
}

TEST(ParseMergeArgumentsTest, RejectsBadArgumentsNamingThem) {
  auto message = [](std::vector<std::string> args) {
    absl::StatusOr<MergeArguments> parsed = ParseMergeArguments(args);
    EXPECT_TRUE(absl::IsInvalidArgument(parsed.status()));
    return std::string(parsed.status().message());
  };
  EXPECT_EQ(message({"a.pb"}), "no output given (-o OUTPUT)");
  EXPECT_EQ(message({"-o", "x.pb"}), "no input databases given");
  EXPECT_EQ(message({"a.pb", "-o"}),
            "--output needs a value: --output=VALUE or --output VALUE; see --help");
  EXPECT_EQ(message({"a.pb", "-o", "x", "--output=y"}), "--output is given twice; see --help");
  EXPECT_EQ(message({"a.pb", "--shard=1/2", "-o", "x"}),
            "unknown flag --shard; accepted are --output, --report, --winners_only, --replace, "
            "--help, --version; see --help");
  EXPECT_EQ(message({"a.pb", "--output=", "b"}),
            "--output is empty; give it a value or leave it out; see --help");
}

TEST(RunMergeCommandTest, MergesTextAndBinaryInputsAndPrintsConflicts) {
  const std::string folder = MakeTestFolder();
  tuning::TuningDatabase a = tuning::TestDatabase(2);
  tuning::TuningDatabase b = tuning::TestDatabase(3);  // shares keys with `a`, each winner slower
  for (tuning::TuningRecord& record : *b.mutable_records()) {
    record.mutable_winner_statistics()->set_median_us(record.winner_statistics().median_us() + 1);
    record.mutable_provenance()->set_host("other");
  }
  ASSERT_TRUE(tuning::WriteTuningDatabase(a, folder + "/a.txtpb").ok());
  ASSERT_TRUE(tuning::WriteTuningDatabase(b, folder + "/b.pb").ok());
  const std::string output = folder + "/merged.txtpb";
  CommandRun run = RunMerge({folder + "/a.txtpb", folder + "/b.pb", "-o", output});
  ASSERT_EQ(run.code, kMergeOk) << run.err;
  // Progress, one line per input as it is read.
  EXPECT_EQ(run.err, absl::StrCat("autotune merge: read 1 of 2: ", folder, "/a.txtpb (",
                                  a.records_size(), " records)\nautotune merge: read 2 of 2: ",
                                  folder, "/b.pb (", b.records_size(), " records)\n"));
  std::vector<std::string> lines = absl::StrSplit(run.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 4u) << run.out;  // 3 shared keys, then the summary
  for (int i = 0; i < 3; ++i) {
    EXPECT_THAT(lines[i], StartsWith("conflict: \"NVIDIA H200\" sm_9.0"));
    EXPECT_THAT(lines[i], HasSubstr(absl::StrCat(folder, "/a.txtpb, host testhost) over ")));
    EXPECT_THAT(lines[i], HasSubstr(absl::StrCat(folder, "/b.pb, host other)")));
  }
  EXPECT_EQ(lines[3], absl::StrCat("autotune merge: 7 records from 2 databases -> 4 records in ",
                                   output, " (3 conflicts)"));
  absl::StatusOr<tuning::TuningDatabase> merged = tuning::ReadTuningDatabase(output);
  ASSERT_TRUE(merged.ok()) << merged.status();
  ASSERT_EQ(merged->records_size(), 4);
  int from_b = 0;
  for (const tuning::TuningRecord& record : merged->records())
    from_b += record.provenance().host() == "other";
  EXPECT_EQ(from_b, 1);  // the one key only `b` has
}

TEST(RunMergeCommandTest, RelativePathsAreTakenFromTheBazelRunDirectory) {
  const std::string folder = MakeTestFolder();
  ASSERT_TRUE(tuning::WriteTuningDatabase(tuning::TestDatabase(1), folder + "/in.pb").ok());
  ASSERT_EQ(setenv("BUILD_WORKING_DIRECTORY", folder.c_str(), 1), 0);
  CommandRun run = RunMerge({"in.pb", "-o", "out.txtpb"});
  unsetenv("BUILD_WORKING_DIRECTORY");
  ASSERT_EQ(run.code, kMergeOk) << run.err;
  EXPECT_TRUE(tuning::ReadTuningDatabase(folder + "/out.txtpb").ok());
}

TEST(RunMergeCommandTest, ReportIsWrittenBesideTheOutputOnRequest) {
  const std::string folder = MakeTestFolder();
  ASSERT_TRUE(tuning::WriteTuningDatabase(tuning::TestDatabase(1), folder + "/in.pb").ok());
  CommandRun run = RunMerge({folder + "/in.pb", "-o", folder + "/plain.pb"});
  ASSERT_EQ(run.code, kMergeOk) << run.err;
  EXPECT_FALSE(tuning::ReadFileToString(folder + "/plain.report.md").ok());
  run = RunMerge({folder + "/in.pb", "-o", folder + "/out.pb", "--report"});
  ASSERT_EQ(run.code, kMergeOk) << run.err;
  absl::StatusOr<std::string> markdown = tuning::ReadFileToString(folder + "/out.report.md");
  ASSERT_TRUE(markdown.ok()) << markdown.status();
  EXPECT_THAT(*markdown, HasSubstr("](out.report.svg)"));
  EXPECT_TRUE(tuning::ReadFileToString(folder + "/out.report.svg").ok());
}

TEST(RunMergeCommandTest, WinnersOnlyDropsTheOtherCandidates) {
  const std::string folder = MakeTestFolder();
  tuning::TuningDatabase input = tuning::TestDatabase(3);
  tuning::CandidateResult* loser = input.mutable_records(0)->add_candidates();
  *loser->mutable_variant() = tuning::TestVariant("cp_async", 128, 2);
  loser->set_status(tuning::CandidateResult::COMPILE_ERROR);
  loser->set_detail("ptxas said no");
  ASSERT_TRUE(tuning::WriteTuningDatabase(input, folder + "/in.pb").ok());
  CommandRun run = RunMerge({folder + "/in.pb", "-o", folder + "/all.pb"});
  ASSERT_EQ(run.code, kMergeOk) << run.err;
  run = RunMerge({folder + "/in.pb", "--winners_only", "-o", folder + "/ship.pb"});
  ASSERT_EQ(run.code, kMergeOk) << run.err;
  absl::StatusOr<tuning::TuningDatabase> all = tuning::ReadTuningDatabase(folder + "/all.pb");
  absl::StatusOr<tuning::TuningDatabase> ship = tuning::ReadTuningDatabase(folder + "/ship.pb");
  ASSERT_TRUE(all.ok() && ship.ok());
  ASSERT_EQ(ship->records_size(), input.records_size());
  EXPECT_GT(all->records(0).candidates_size(), 0);
  for (const tuning::TuningRecord& record : ship->records()) {
    EXPECT_EQ(record.candidates_size(), 0);
    EXPECT_TRUE(record.has_winner_statistics());
  }
}

// --replace: the later input's record stands for its key, faster or not; without it the
// faster one does.
TEST(RunMergeCommandTest, ReplaceKeepsTheLaterInputsRecord) {
  const std::string folder = MakeTestFolder();
  tuning::TuningDatabase old_db = tuning::TestDatabase(2);
  tuning::TuningDatabase new_db = tuning::TestDatabase(1);
  new_db.mutable_records(0)->mutable_winner_statistics()->set_median_us(
      old_db.records(0).winner_statistics().median_us() * 2);
  new_db.mutable_records(0)->mutable_provenance()->set_host("re-tuned");
  ASSERT_EQ(tuning::RecordKey(new_db.records(0)), tuning::RecordKey(old_db.records(0)));
  ASSERT_TRUE(tuning::WriteTuningDatabase(old_db, folder + "/old.pb").ok());
  ASSERT_TRUE(tuning::WriteTuningDatabase(new_db, folder + "/new.pb").ok());
  auto host_of = [&](const std::string& path) {
    absl::StatusOr<tuning::TuningDatabase> merged = tuning::ReadTuningDatabase(path);
    EXPECT_TRUE(merged.ok()) << merged.status();
    EXPECT_EQ(merged->records_size(), old_db.records_size());  // new_db's keys are old_db's
    for (const tuning::TuningRecord& record : merged->records()) {
      if (tuning::RecordKey(record) == tuning::RecordKey(new_db.records(0))) {
        return record.provenance().host();
      }
    }
    return std::string("missing");
  };
  CommandRun run = RunMerge({folder + "/old.pb", folder + "/new.pb", "-o", folder + "/fast.pb"});
  ASSERT_EQ(run.code, kMergeOk) << run.err;
  EXPECT_NE(host_of(folder + "/fast.pb"), "re-tuned");
  run = RunMerge({folder + "/old.pb", folder + "/new.pb", "--replace", "-o", folder + "/re.pb"});
  ASSERT_EQ(run.code, kMergeOk) << run.err;
  EXPECT_EQ(host_of(folder + "/re.pb"), "re-tuned");
  EXPECT_THAT(run.out, HasSubstr(absl::StrCat("(", new_db.records_size(), " conflicts)")));
  // The order of the inputs decides: the earlier one's record now stands.
  run = RunMerge({folder + "/new.pb", folder + "/old.pb", "--replace", "-o", folder + "/back.pb"});
  ASSERT_EQ(run.code, kMergeOk) << run.err;
  EXPECT_NE(host_of(folder + "/back.pb"), "re-tuned");
}

// Issue 17: with out.report.svg a folder, the database used to be replaced before the
// failure was reported.
TEST(RunMergeCommandTest, AFailedReportLeavesTheOldDatabase) {
  const std::string folder = MakeTestFolder();
  ASSERT_TRUE(tuning::WriteTuningDatabase(tuning::TestDatabase(1), folder + "/in.pb").ok());
  ASSERT_TRUE(tuning::WriteFileAtomically(folder + "/out.pb", "old").ok());
  ASSERT_EQ(mkdir((folder + "/out.report.svg").c_str(), 0755), 0);
  CommandRun run = RunMerge({folder + "/in.pb", "-o", folder + "/out.pb", "--report"});
  EXPECT_EQ(run.code, kMergeFailed);
  EXPECT_THAT(run.err, HasSubstr("out.report.svg: is a folder; nothing was written"));
  EXPECT_EQ(*tuning::ReadFileToString(folder + "/out.pb"), "old");
  EXPECT_FALSE(tuning::ReadFileToString(folder + "/out.report.md").ok());
}

// Issue 17: `merge a b -o a` rewrote input a without a word.
TEST(RunMergeCommandTest, AnOutputThatIsAnInputIsSaid) {
  const std::string folder = MakeTestFolder();
  ASSERT_TRUE(tuning::WriteTuningDatabase(tuning::TestDatabase(1), folder + "/a.pb").ok());
  ASSERT_TRUE(tuning::WriteTuningDatabase(tuning::TestDatabase(2), folder + "/b.pb").ok());
  CommandRun run = RunMerge({folder + "/a.pb", folder + "/b.pb", "-o", folder + "/./a.pb"});
  ASSERT_EQ(run.code, kMergeOk) << run.err;
  EXPECT_THAT(run.err, HasSubstr("is also an input; it is replaced by the merge"));
  run = RunMerge({folder + "/a.pb", "-o", folder + "/c.pb"});
  EXPECT_THAT(run.err, Not(HasSubstr("is also an input")));
}

TEST(RunMergeCommandTest, BadArgumentsExitTwoWithOneLine) {
  CommandRun run = RunMerge({"a.pb"});
  EXPECT_EQ(run.code, kMergeBadArguments);
  EXPECT_EQ(run.err,
            "autotune merge: no output given (-o OUTPUT); usage: autotune merge INPUT... -o "
            "OUTPUT [--report] [--winners_only] [--replace]\n");
  EXPECT_EQ(run.out, "");
}

TEST(RunMergeCommandTest, UnreadableInputExitsOneNamingIt) {
  const std::string folder = MakeTestFolder();
  ASSERT_TRUE(tuning::WriteFileAtomically(folder + "/corrupt.pb", "\xff\xff\xff").ok());
  CommandRun run = RunMerge({folder + "/corrupt.pb", "-o", folder + "/out.pb"});
  EXPECT_EQ(run.code, kMergeFailed);
  EXPECT_THAT(run.err, StartsWith(absl::StrCat("autotune merge: ", folder, "/corrupt.pb: ")));
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1);
  EXPECT_FALSE(tuning::ReadFileToString(folder + "/out.pb").ok());
}

TEST(RunMergeCommandTest, HelpPrintsUsage) {
  CommandRun run = RunMerge({"--help"});
  EXPECT_EQ(run.code, kMergeOk);
  EXPECT_THAT(run.out, StartsWith("usage: autotune merge INPUT... -o OUTPUT [--report] "
                                   "[--winners_only] [--replace]\n"));
}

}  // namespace
}  // namespace autotune
}  // namespace tiletune

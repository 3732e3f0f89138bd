#include "autotune/database_tools.h"

#include <cstdio>
#include <string>
#include <vector>

#include "compiler/base/test_folder.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/tuning_db/tuning_db.h"
#include "compiler/tuning_db/tuning_db_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace autotune {
namespace {

using ::testing::HasSubstr;

TEST(DiffTest, NamesEachKindOfChange) {
  tuning::TuningDatabase before = tuning::TestDatabase(4);
  tuning::TuningDatabase after = before;
  after.mutable_records()->DeleteSubrange(3, 1);  // removed
  *after.add_records() = tuning::TestRecord("NVIDIA H200", {77, 77}, 3.0, "sync_simt");  // added
  after.mutable_records(0)->mutable_winner()->mutable_lowering()->set_threads(512);  // winner
  after.mutable_records(0)->mutable_winner_statistics()->set_median_us(
      before.records(0).winner_statistics().median_us() / 2);
  after.mutable_records(1)->mutable_winner_statistics()->set_median_us(99);  // time
  after.mutable_records(2)->mutable_provenance()->set_host("other\x1b[31mhost");  // provenance
  const std::vector<RecordDiff> diffs = DiffDatabases(before, after, BuiltinTileOps());
  ASSERT_EQ(diffs.size(), 5u);
  std::string all;
  for (const RecordDiff& diff : diffs) all += diff.line + "\n";
  EXPECT_THAT(all, HasSubstr("added copy:f16:77,77 on NVIDIA H200"));
  EXPECT_THAT(all, HasSubstr("removed "));
  EXPECT_THAT(all, HasSubstr("threads=512"));
  EXPECT_THAT(all, HasSubstr(", 2.000x"));
  EXPECT_THAT(all, HasSubstr("-> 99.000 us"));
  EXPECT_THAT(all, HasSubstr("host other\\x1b[31mhost"));  // escape sequences shown, not sent
  EXPECT_TRUE(DiffDatabases(before, before, BuiltinTileOps()).empty());
}

TEST(DiffTest, ExitCodesSayWhetherTheyDiffer) {
  const std::string folder = MakeTestFolder();
  tuning::TuningDatabase a = tuning::TestDatabase(2), b = tuning::TestDatabase(3);
  ASSERT_TRUE(tuning::WriteTuningDatabase(a, folder + "/a.txtpb").ok());
  ASSERT_TRUE(tuning::WriteTuningDatabase(a, folder + "/a.pb").ok());
  ASSERT_TRUE(tuning::WriteTuningDatabase(b, folder + "/b.txtpb").ok());
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  EXPECT_EQ(RunDiffCommand({folder + "/a.txtpb", folder + "/a.pb"}, out, err), 0);
  EXPECT_EQ(RunDiffCommand({folder + "/a.txtpb", folder + "/b.txtpb"}, out, err), 1);
  EXPECT_EQ(RunDiffCommand({folder + "/a.txtpb"}, out, err), 2);
  EXPECT_EQ(RunDiffCommand({folder + "/a.txtpb", folder + "/none.txtpb"}, out, err), 3);
  EXPECT_EQ(RunDiffCommand({"--help"}, out, err), 0);
  EXPECT_EQ(RunDiffCommand({"--version"}, out, err), 0);
  std::fclose(out);
  std::fclose(err);
}

TEST(ExportTest, CsvHasARowPerRecordAndJsonTheWholeDatabase) {
  tuning::TuningDatabase db = tuning::TestDatabase(3);
  db.mutable_records(0)->mutable_device()->set_name("=HYPERLINK(\"x\")");
  const std::string csv = ExportCsv(db, BuiltinTileOps());
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), db.records_size() + 1) << csv;
  EXPECT_THAT(csv, HasSubstr("device,cc,problem,winner,"));
  EXPECT_THAT(csv, HasSubstr("\"'=HYPERLINK(\"\"x\"\")\""));  // no formula, quotes doubled
  EXPECT_THAT(csv, HasSubstr("\"copy:f16:"));
  absl::StatusOr<std::string> json = ExportJson(db);
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_THAT(*json, HasSubstr("\"schema_version\": 3"));
  EXPECT_THAT(*json, HasSubstr("\"records\": ["));
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  EXPECT_EQ(RunExportCommand({"x.txtpb", "--format=xml"}, out, err), 2);
  EXPECT_EQ(RunExportCommand({"--help"}, out, err), 0);
  std::fclose(out);
  std::fclose(err);
}

}  // namespace
}  // namespace autotune
}  // namespace tiletune

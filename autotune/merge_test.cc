#include "autotune/merge.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/tuning_db/tuning_db.h"
#include "compiler/tuning_db/tuning_db.pb.h"
#include "compiler/tuning_db/tuning_db_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace autotune {
namespace {

using ::testing::HasSubstr;

tuning::TuningDatabase Database(std::vector<tuning::TuningRecord> records) {
  tuning::TuningDatabase database;
  database.set_schema_version(tuning::kCurrentSchemaVersion);
  for (tuning::TuningRecord& record : records) *database.add_records() = std::move(record);
  database.set_record_count(database.records_size());
  return database;
}

tuning::TuningRecord Record(const std::string& device, int64_t size, double median_us,
                    const std::string& path, const std::string& host) {
  tuning::TuningRecord record = tuning::TestRecord(device, {size, size}, median_us, path);
  record.mutable_provenance()->set_host(host);
  return record;
}

// Conflicts without the input indices, which name positions in the argument list.
std::vector<std::string> ConflictsWithoutInputs(const MergeReport& report) {
  std::vector<std::string> lines;
  for (MergeConflict conflict : report.conflicts) {
    conflict.kept_input = conflict.dropped_input = -1;
    lines.push_back(FormatMergeConflict(conflict));
  }
  return lines;
}

TEST(MergeTest, DisjointInputsAreUnitedAndSortedByKey) {
  tuning::TuningDatabase a = Database({Record("NVIDIA H200", 512, 5, "tma", "a")});
  tuning::TuningDatabase b = Database(
      {Record("NVIDIA A100", 512, 9, "cp_async", "b"), Record("NVIDIA H200", 256, 3, "tma", "b")});
  MergeReport report;
  absl::StatusOr<tuning::TuningDatabase> merged = MergeDatabases({a, b}, &report);
  ASSERT_TRUE(merged.ok()) << merged.status();
  ASSERT_EQ(merged->records_size(), 3);
  EXPECT_EQ(merged->schema_version(), tuning::kCurrentSchemaVersion);
  EXPECT_EQ(merged->record_count(), 3u);
  for (int i = 1; i < merged->records_size(); ++i) {
    EXPECT_LT(tuning::RecordKey(merged->records(i - 1)), tuning::RecordKey(merged->records(i)));
  }
  EXPECT_EQ(merged->records(0).device().name(), "NVIDIA A100");
  EXPECT_EQ(report.input_records, 3);
  EXPECT_EQ(report.output_records, 3);
  EXPECT_TRUE(report.conflicts.empty());
  EXPECT_TRUE(tuning::ValidateTuningDatabase(*merged, "merged").ok());
}

TEST(MergeTest, FasterWinnerIsKeptAndTheConflictReported) {
  tuning::TuningRecord slow = Record("NVIDIA H200", 512, 8.0, "sync_simt", "slow-host");
  tuning::TuningRecord fast = Record("NVIDIA H200", 512, 6.5, "tma", "fast-host");
  fast.mutable_device()->set_uuid("GPU-other-board");  // not part of the key
  MergeReport report;
  absl::StatusOr<tuning::TuningDatabase> merged =
      MergeDatabases({Database({slow}), Database({fast})}, &report);
  ASSERT_TRUE(merged.ok()) << merged.status();
  ASSERT_EQ(merged->records_size(), 1);
  EXPECT_EQ(merged->records(0).winner().lowering().path(), "tma");
  EXPECT_EQ(merged->records(0).provenance().host(), "fast-host");
  ASSERT_EQ(report.conflicts.size(), 1u);
  const MergeConflict& conflict = report.conflicts[0];
  EXPECT_EQ(conflict.key, tuning::RecordKey(fast));
  EXPECT_EQ(conflict.kept_median_us, 6.5);
  EXPECT_EQ(conflict.dropped_median_us, 8.0);
  EXPECT_EQ(conflict.kept_winner.lowering().path(), "tma");
  EXPECT_EQ(conflict.dropped_winner.lowering().path(), "sync_simt");
  EXPECT_EQ(conflict.kept_input, 1);
  EXPECT_EQ(conflict.dropped_input, 0);
  EXPECT_EQ(conflict.kept_host, "fast-host");
  EXPECT_EQ(conflict.dropped_host, "slow-host");
  EXPECT_EQ(FormatMergeConflict(conflict, {"slow.pb", "fast.txtpb"}),
            absl::StrCat(tuning::RecordKey(fast), ": kept ", tuning::DescribeVariant(fast.winner()),
                         " (6.500 us, fast.txtpb, host fast-host) over ",
                         tuning::DescribeVariant(slow.winner()), " (8.000 us, slow.pb, host slow-host)"));
  EXPECT_THAT(FormatMergeConflict(conflict), HasSubstr("(6.500 us, input 1, host fast-host)"));
}

TEST(MergeTest, EqualMediansAreDecidedByVariantOrderInEitherInputOrder) {
  tuning::TuningRecord a = Record("NVIDIA H200", 512, 5.0, "bulk_1d", "a");
  tuning::TuningRecord b = Record("NVIDIA H200", 512, 5.0, "tma", "b");
  ASSERT_LT(tuning::CompareVariants(a.winner(), b.winner()), 0);
  for (bool swap : {false, true}) {
    std::vector<tuning::TuningDatabase> inputs = {Database({a}), Database({b})};
    if (swap) std::swap(inputs[0], inputs[1]);
    absl::StatusOr<tuning::TuningDatabase> merged = MergeDatabases(inputs, nullptr);
    ASSERT_TRUE(merged.ok());
    EXPECT_EQ(merged->records(0).winner().lowering().path(), "bulk_1d") << swap;
  }
}

TEST(MergeTest, ThreeWayConflictKeepsFastestAndReportsEachLoser) {
  MergeReport report;
  absl::StatusOr<tuning::TuningDatabase> merged =
      MergeDatabases({Database({Record("NVIDIA H200", 64, 3, "sync_simt", "a")}),
                      Database({Record("NVIDIA H200", 64, 1, "tma", "b")}),
                      Database({Record("NVIDIA H200", 64, 2, "cp_async", "c")})},
                     &report);
  ASSERT_TRUE(merged.ok());
  EXPECT_EQ(merged->records(0).provenance().host(), "b");
  ASSERT_EQ(report.conflicts.size(), 2u);
  EXPECT_EQ(report.conflicts[0].kept_host, "b");
  EXPECT_EQ(report.conflicts[0].dropped_host, "c");
  EXPECT_EQ(report.conflicts[1].kept_host, "b");
  EXPECT_EQ(report.conflicts[1].dropped_host, "a");
}

TEST(MergeTest, OutputIsIndependentOfInputOrder) {
  // Overlapping keys, a median tie between different variants, an identical record in two
  // inputs and records equal but for their provenance.
  tuning::TuningRecord tie_a = Record("NVIDIA H200", 128, 4, "tma", "a");
  tuning::TuningRecord tie_b = Record("NVIDIA H200", 128, 4, "bulk_1d", "b");
  tuning::TuningRecord same = Record("NVIDIA H100", 128, 4, "tma", "x");
  tuning::TuningRecord same_other_host = same;
  same_other_host.mutable_provenance()->set_host("y");
  std::vector<tuning::TuningDatabase> inputs = {
      Database({Record("NVIDIA H200", 64, 3, "sync_simt", "a"), tie_a, same}),
      Database({Record("NVIDIA H200", 64, 2, "tma", "b"), tie_b}),
      Database({Record("NVIDIA H200", 32, 7, "tma", "c"), same}),
      Database({Record("NVIDIA H200", 64, 2.5, "cp_async", "d"), same_other_host}),
  };
  MergeReport first_report;
  absl::StatusOr<tuning::TuningDatabase> first = MergeDatabases(inputs, &first_report);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->records_size(), 4);
  EXPECT_EQ(first_report.conflicts.size(), 5u);
  const std::string expected_bytes = tuning::SerializeDeterministically(*first);
  const std::vector<std::string> expected_conflicts = ConflictsWithoutInputs(first_report);

  std::vector<int> order = {0, 1, 2, 3};
  int permutations = 0;
  do {
    std::vector<tuning::TuningDatabase> permuted;
    for (int i : order) permuted.push_back(inputs[i]);
    MergeReport report;
    absl::StatusOr<tuning::TuningDatabase> merged = MergeDatabases(permuted, &report);
    ASSERT_TRUE(merged.ok());
    EXPECT_EQ(tuning::SerializeDeterministically(*merged), expected_bytes);
    EXPECT_EQ(ConflictsWithoutInputs(report), expected_conflicts);
    ++permutations;
  } while (std::next_permutation(order.begin(), order.end()));
  EXPECT_EQ(permutations, 24);
}

TEST(MergeTest, InvalidInputIsRejectedNamingIt) {
  tuning::TuningDatabase bad = Database({Record("NVIDIA H200", 64, 3, "tma", "a")});
  bad.mutable_records(0)->clear_winner();
  absl::StatusOr<tuning::TuningDatabase> merged = MergeDatabases({tuning::TestDatabase(1), bad}, nullptr);
  EXPECT_TRUE(absl::IsInvalidArgument(merged.status()));
  EXPECT_THAT(std::string(merged.status().message()),
              HasSubstr("merge input 1: invalid tuning database"));
}

TEST(MergeTest, NoInputsGiveAnEmptyDatabase) {
  MergeReport report;
  report.input_records = 99;
  absl::StatusOr<tuning::TuningDatabase> merged = MergeDatabases({}, &report);
  ASSERT_TRUE(merged.ok());
  EXPECT_EQ(merged->records_size(), 0);
  EXPECT_TRUE(merged->has_record_count());
  EXPECT_EQ(report.input_records, 0);
}

}  // namespace
}  // namespace autotune
}  // namespace tiletune

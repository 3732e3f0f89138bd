#include "compiler/tuning_db/append.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/base/test_folder.h"
#include "compiler/tuning_db/atomic_file.h"
#include "compiler/tuning_db/tuning_db.h"
#include "compiler/tuning_db/tuning_db.pb.h"
#include "compiler/tuning_db/tuning_db_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace tuning {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Status messages as std::string, so that failing matchers print them as text.
std::string Msg(const absl::Status& status) { return std::string(status.message()); }

// Record `index` of writer `writer`: a copy problem of a shape no other pair shares,
// measured at `median_us` (10 + index when negative).
TuningRecord WriterRecord(int writer, int index, double median_us = -1) {
  return TestRecord("NVIDIA H200", {128 * (writer + 1), 64 * (index + 1)},
                    median_us < 0 ? 10.0 + index : median_us);
}

// The keys of the database at `path`, which must read as valid.
std::set<std::string> KeysIn(const std::string& path) {
  absl::StatusOr<TuningDatabase> database = ReadTuningDatabase(path);
  EXPECT_TRUE(database.ok()) << database.status();
  std::set<std::string> keys;
  if (!database.ok()) return keys;
  for (const TuningRecord& record : database->records()) keys.insert(RecordKey(record));
  EXPECT_EQ(keys.size(), database->records_size()) << "duplicate keys";
  return keys;
}

std::set<std::string> WriterKeys(int writers, int records_each) {
  std::set<std::string> keys;
  for (int w = 0; w < writers; ++w) {
    for (int i = 0; i < records_each; ++i) keys.insert(RecordKey(WriterRecord(w, i)));
  }
  return keys;
}

TEST(AppendTuningRecordsTest, CreatesAMissingFileAndItsLock) {
  const std::string folder = MakeTestFolder();
  const std::string path = folder + "/h200.txtpb";
  absl::StatusOr<int> count = AppendTuningRecords(path, {WriterRecord(0, 0), WriterRecord(0, 1)});
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(*count, 2);
  absl::StatusOr<std::string> bytes = ReadFileToString(path);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_THAT(*bytes, HasSubstr("schema_version: "));  // text, as the name says
  EXPECT_EQ(KeysIn(path), WriterKeys(1, 2));
  EXPECT_THAT(ListFolder(folder), ElementsAre(".h200.txtpb.lock", "h200.txtpb"));
}

TEST(AppendTuningRecordsTest, AddsToAnExistingFileKeepingItsRecords) {
  const std::string path = MakeTestFolder() + "/h200.pb";
  const TuningDatabase existing = TestDatabase(2);
  ASSERT_TRUE(WriteTuningDatabase(existing, path).ok());
  absl::StatusOr<int> count = AppendTuningRecords(path, {WriterRecord(5, 0)});
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(*count, existing.records_size() + 1);
  absl::StatusOr<TuningDatabase> read = ReadTuningDatabase(path);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->records_size(), existing.records_size() + 1);
  for (int i = 0; i < existing.records_size(); ++i) {
    EXPECT_EQ(RecordKey(read->records(i)), RecordKey(existing.records(i)));
  }
  EXPECT_EQ(RecordKey(read->records(existing.records_size())), RecordKey(WriterRecord(5, 0)));
}

TEST(AppendTuningRecordsTest, SameKeyReplacesTheRecordInPlace) {
  const std::string path = MakeTestFolder() + "/h200.pb";
  ASSERT_EQ(AppendTuningRecords(path, {WriterRecord(0, 0), WriterRecord(0, 1)}).value_or(-1), 2);
  const TuningRecord newer = WriterRecord(0, 0, 3.25);
  absl::StatusOr<int> count = AppendTuningRecords(path, {newer});
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(*count, 2);
  absl::StatusOr<TuningDatabase> read = ReadTuningDatabase(path);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->records_size(), 2);
  EXPECT_EQ(RecordKey(read->records(0)), RecordKey(newer));
  EXPECT_EQ(read->records(0).winner_statistics().median_us(), 3.25);
  EXPECT_EQ(read->records(1).winner_statistics().median_us(), 11.0);
}

TEST(AppendTuningRecordsTest, LaterDuplicateInOneCallWins) {
  const std::string path = MakeTestFolder() + "/h200.pb";
  const TuningRecord later = WriterRecord(0, 0, 4.5);
  ASSERT_EQ(AppendTuningRecords(path, {WriterRecord(0, 0), later}).value_or(-1), 1);
  absl::StatusOr<TuningDatabase> read = ReadTuningDatabase(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->records(0).winner_statistics().median_us(), 4.5);
}

TEST(AppendTuningRecordsTest, CorruptFileIsAnErrorAndKeepsItsBytes) {
  const std::string folder = MakeTestFolder();
  for (const std::string name : {"h200.pb", "h200.txtpb"}) {
    SCOPED_TRACE(name);
    const std::string path = folder + "/" + name;
    // A valid database cut short: the user's data, which an append must not replace.
    absl::StatusOr<std::string> valid =
        SerializeTuningDatabase(TestDatabase(3), FormatForPath(path));
    ASSERT_TRUE(valid.ok()) << valid.status();
    const std::string corrupt = valid->substr(0, valid->size() - 20);
    ASSERT_TRUE(WriteFileAtomically(path, corrupt).ok());
    const absl::Status reader = ReadTuningDatabase(path).status();
    ASSERT_FALSE(reader.ok());

    absl::StatusOr<int> count = AppendTuningRecords(path, {WriterRecord(0, 0)});
    ASSERT_FALSE(count.ok());
    EXPECT_EQ(count.status().code(), reader.code());
    EXPECT_THAT(Msg(count.status()), HasSubstr("cannot append to " + path));
    EXPECT_THAT(Msg(count.status()), HasSubstr("left as it is"));
    EXPECT_THAT(Msg(count.status()), HasSubstr(Msg(reader)));
    EXPECT_EQ(ReadFileToString(path).value_or(""), corrupt);
  }
}

TEST(AppendTuningRecordsTest, InvalidRecordIsRefusedAndNothingIsWritten) {
  const std::string folder = MakeTestFolder();
  TuningRecord bad = WriterRecord(0, 0);
  bad.mutable_device()->clear_name();
  absl::StatusOr<int> count = AppendTuningRecords(folder + "/h200.pb", {bad});
  ASSERT_FALSE(count.ok());
  EXPECT_EQ(count.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(count.status()), HasSubstr("records to append to " + folder + "/h200.pb"));
  EXPECT_TRUE(ListFolder(folder).empty());
}

TEST(AppendTuningRecordsTest, SemanticsRejectionLeavesTheFile) {
  const std::string path = MakeTestFolder() + "/h200.pb";
  ASSERT_EQ(AppendTuningRecords(path, {WriterRecord(0, 0)}).value_or(-1), 1);
  const std::string before = ReadFileToString(path).value_or("");
  RecordValidator no_wide_copies = [](const TuningRecord& record) {
    return record.problem().copy().shape(1) > 64
               ? absl::InvalidArgumentError("copies wider than 64 are not accepted")
               : absl::OkStatus();
  };
  absl::StatusOr<int> count = AppendTuningRecords(path, {WriterRecord(0, 1)}, no_wide_copies);
  ASSERT_FALSE(count.ok());
  EXPECT_THAT(Msg(count.status()), HasSubstr("copies wider than 64 are not accepted"));
  EXPECT_EQ(ReadFileToString(path).value_or(""), before);
}

TEST(AppendTuningRecordsTest, LockSitsBesideASymbolicLinkAsGiven) {
  const std::string folder = MakeTestFolder();
  ASSERT_EQ(::mkdir((folder + "/real").c_str(), 0777), 0);
  ASSERT_EQ(::symlink("real/h200.pb", (folder + "/link.pb").c_str()), 0);
  ASSERT_EQ(AppendTuningRecords(folder + "/link.pb", {WriterRecord(0, 0)}).value_or(-1), 1);
  EXPECT_THAT(ListFolder(folder), ElementsAre(".link.pb.lock", "link.pb", "real"));
  EXPECT_THAT(ListFolder(folder + "/real"), ElementsAre("h200.pb"));
  EXPECT_EQ(KeysIn(folder + "/real/h200.pb"), WriterKeys(1, 1));
}

TEST(AppendTuningRecordsTest, MissingFolderNamesTheLockFile) {
  const std::string path = MakeTestFolder() + "/absent/h200.pb";
  absl::StatusOr<int> count = AppendTuningRecords(path, {WriterRecord(0, 0)});
  ASSERT_FALSE(count.ok());
  EXPECT_THAT(Msg(count.status()), HasSubstr("/absent/.h200.pb.lock: "));
  EXPECT_THAT(Msg(count.status()), HasSubstr("No such file or directory"));
}

constexpr int kRecordsEach = 10;

// Appends writer `writer`'s records one call at a time; false (after printing why) on the
// first failure.
bool AppendOneAtATime(const std::string& path, int writer) {
  for (int i = 0; i < kRecordsEach; ++i) {
    absl::StatusOr<int> count = AppendTuningRecords(path, {WriterRecord(writer, i)});
    if (!count.ok()) {
      std::fprintf(stderr, "writer %d, record %d: %s\n", writer, i,
                   count.status().ToString().c_str());
      return false;
    }
  }
  return true;
}

// Forks before this test starts any thread (gtest's main starts none).
TEST(AppendTuningRecordsTest, ConcurrentProcessesKeepEveryRecord) {
  constexpr int kProcesses = 8;
  const std::string folder = MakeTestFolder();
  const std::string path = folder + "/h200.pb";
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0) << "fork failed";
    if (pid == 0) ::_exit(AppendOneAtATime(path, p) ? 0 : 1);
    children.push_back(pid);
  }
  for (const pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "child " << pid << " ended with wait status " << status;
  }
  EXPECT_EQ(KeysIn(path), WriterKeys(kProcesses, kRecordsEach));
  EXPECT_THAT(ListFolder(folder), ElementsAre(".h200.pb.lock", "h200.pb"));
}

TEST(AppendTuningRecordsTest, ConcurrentThreadsKeepEveryRecord) {
  constexpr int kThreads = 4;
  const std::string folder = MakeTestFolder();
  const std::string path = folder + "/h200.pb";
  std::vector<int> succeeded(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&path, &succeeded, t] { succeeded[t] = AppendOneAtATime(path, t); });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_THAT(succeeded, ElementsAre(1, 1, 1, 1));
  EXPECT_EQ(KeysIn(path), WriterKeys(kThreads, kRecordsEach));
  EXPECT_THAT(ListFolder(folder), ElementsAre(".h200.pb.lock", "h200.pb"));
}

}  // namespace
}  // namespace tuning
}  // namespace tiletune

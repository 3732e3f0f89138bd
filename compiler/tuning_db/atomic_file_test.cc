#include "compiler/tuning_db/atomic_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/base/test_folder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace tuning {
namespace {

// Status messages as std::string, so that failing matchers print them as text.
std::string Msg(const absl::Status& status) { return std::string(status.message()); }

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(AtomicFileTest, WritesAndReadsBackBinaryContents) {
  const std::string folder = MakeTestFolder();
  const std::string path = folder + "/data.bin";
  const std::string contents("a\0b\xff\n", 5);
  ASSERT_TRUE(WriteFileAtomically(path, contents).ok());
  absl::StatusOr<std::string> read = ReadFileToString(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, contents);
}

TEST(AtomicFileTest, ReplacesExistingFileAndLeavesNoTemporaryFiles) {
  const std::string folder = MakeTestFolder();
  const std::string path = folder + "/db.pb";
  ASSERT_TRUE(WriteFileAtomically(path, std::string(100000, 'x')).ok());
  ASSERT_TRUE(WriteFileAtomically(path, "short").ok());
  EXPECT_EQ(*ReadFileToString(path), "short");
  EXPECT_THAT(ListFolder(folder), ElementsAre("db.pb"));
}

TEST(AtomicFileTest, NewFileHonoursUmask) {
  const std::string folder = MakeTestFolder();
  const mode_t mask = umask(0);
  umask(mask);
  ASSERT_TRUE(WriteFileAtomically(folder + "/f", "x").ok());
  struct stat info;
  ASSERT_EQ(stat((folder + "/f").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0666 & ~mask);
}

TEST(AtomicFileTest, FailedRenameRemovesTemporaryFile) {
  const std::string folder = MakeTestFolder();
  // The destination is a non-empty folder: the rename fails after the data is written.
  const std::string target = folder + "/target";
  ASSERT_EQ(mkdir(target.c_str(), 0755), 0);
  ASSERT_TRUE(WriteFileAtomically(target + "/inside", "x").ok());
  absl::Status status = WriteFileAtomically(target, "contents");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(Msg(status), HasSubstr(target));
  EXPECT_THAT(Msg(status), HasSubstr("rename"));
  EXPECT_THAT(ListFolder(folder), ElementsAre("target"));
}

TEST(AtomicFileTest, MissingFolderIsAnErrorNamingThePath) {
  const std::string folder = MakeTestFolder();
  const std::string path = folder + "/no/such/db.pb";
  absl::Status status = WriteFileAtomically(path, "x");
  EXPECT_TRUE(absl::IsNotFound(status)) << status;
  EXPECT_THAT(Msg(status), HasSubstr(path));
  EXPECT_TRUE(ListFolder(folder).empty());
}

TEST(AtomicFileTest, PathNamingNoFileIsRejected) {
  EXPECT_TRUE(absl::IsInvalidArgument(WriteFileAtomically("", "x")));
  EXPECT_TRUE(absl::IsInvalidArgument(WriteFileAtomically(MakeTestFolder() + "/", "x")));
}

TEST(AtomicFileTest, ReadingMissingFileIsNotFoundNamingThePath) {
  const std::string path = MakeTestFolder() + "/missing.txtpb";
  absl::StatusOr<std::string> read = ReadFileToString(path);
  EXPECT_TRUE(absl::IsNotFound(read.status())) << read.status();
  EXPECT_THAT(Msg(read.status()), HasSubstr(path));
}

TEST(AtomicFileTest, ReadingAFolderIsAnError) {
  const std::string folder = MakeTestFolder();
  absl::StatusOr<std::string> read = ReadFileToString(folder);
  EXPECT_TRUE(absl::IsInvalidArgument(read.status())) << read.status();
  EXPECT_THAT(Msg(read.status()), HasSubstr("folder"));
}

TEST(AtomicFileTest, RelativePathWithoutFolderWritesInWorkingDirectory) {
  const std::string folder = MakeTestFolder();
  char previous[4096];
  ASSERT_NE(getcwd(previous, sizeof(previous)), nullptr);
  ASSERT_EQ(chdir(folder.c_str()), 0);
  absl::Status status = WriteFileAtomically("plain.txt", "hello");
  ASSERT_EQ(chdir(previous), 0);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(*ReadFileToString(folder + "/plain.txt"), "hello");
  EXPECT_THAT(ListFolder(folder), ElementsAre("plain.txt"));
}

}  // namespace
}  // namespace tuning
}  // namespace tiletune

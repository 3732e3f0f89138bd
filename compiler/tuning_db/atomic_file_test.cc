#include "compiler/tuning_db/atomic_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
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

TEST(AtomicFileTest, AFolderAtTheDestinationIsRefusedBeforeWriting) {
  const std::string folder = MakeTestFolder();
  const std::string target = folder + "/target";
  ASSERT_EQ(mkdir(target.c_str(), 0755), 0);
  ASSERT_TRUE(WriteFileAtomically(target + "/inside", "x").ok());
  absl::Status status = WriteFileAtomically(target, "contents");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(Msg(status), HasSubstr(target + ": is a folder; nothing was written"));
  EXPECT_THAT(ListFolder(folder), ElementsAre("target"));
}

std::string Contents(const std::string& path) {
  auto read = ReadFileToString(path);
  return read.ok() ? *read : "<" + std::string(read.status().message()) + ">";
}

// Issue 17: with out.report.svg a folder, `merge --report` replaced out.txtpb first.
TEST(AtomicFileTest, SeveralFilesAreAllWrittenOrNoneIs) {
  const std::string folder = MakeTestFolder();
  ASSERT_TRUE(WriteFileAtomically(folder + "/out.txtpb", "old db").ok());
  ASSERT_EQ(mkdir((folder + "/out.report.svg").c_str(), 0755), 0);
  absl::Status status = WriteFilesAtomically({{folder + "/out.txtpb", "new db"},
                                              {folder + "/out.report.md", "report"},
                                              {folder + "/out.report.svg", "<svg/>"}});
  EXPECT_THAT(Msg(status), HasSubstr("out.report.svg: is a folder; nothing was written"));
  EXPECT_EQ(Contents(folder + "/out.txtpb"), "old db");
  EXPECT_THAT(ListFolder(folder), ElementsAre("out.report.svg", "out.txtpb"));
  // A folder that cannot take the temporary: nothing replaced, no temporary left.
  status = WriteFilesAtomically({{folder + "/out.txtpb", "new db"},
                                 {folder + "/missing/out.report.md", "report"}});
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(Msg(status), HasSubstr("nothing was written"));
  EXPECT_EQ(Contents(folder + "/out.txtpb"), "old db");
  EXPECT_THAT(ListFolder(folder), ElementsAre("out.report.svg", "out.txtpb"));
  ASSERT_EQ(rmdir((folder + "/out.report.svg").c_str()), 0);
  ASSERT_TRUE(WriteFilesAtomically({{folder + "/out.txtpb", "new db"},
                                    {folder + "/out.report.svg", "<svg/>"}})
                  .ok());
  EXPECT_EQ(Contents(folder + "/out.txtpb"), "new db");
  EXPECT_EQ(Contents(folder + "/out.report.svg"), "<svg/>");
}

// Issue 17: a symlink at -o was replaced by a regular file, and the mode reset to 0644.
TEST(AtomicFileTest, SymlinksAreWrittenThroughAndModesKept) {
  const std::string folder = MakeTestFolder();
  ASSERT_EQ(mkdir((folder + "/real").c_str(), 0755), 0);
  ASSERT_TRUE(WriteFileAtomically(folder + "/real/db.txtpb", "old").ok());
  ASSERT_EQ(chmod((folder + "/real/db.txtpb").c_str(), 0600), 0);
  ASSERT_EQ(symlink("real/db.txtpb", (folder + "/link.txtpb").c_str()), 0);
  ASSERT_TRUE(WriteFileAtomically(folder + "/link.txtpb", "new").ok());
  struct stat link_info, file_info;
  ASSERT_EQ(lstat((folder + "/link.txtpb").c_str(), &link_info), 0);
  EXPECT_TRUE(S_ISLNK(link_info.st_mode));
  EXPECT_EQ(Contents(folder + "/real/db.txtpb"), "new");
  ASSERT_EQ(stat((folder + "/real/db.txtpb").c_str(), &file_info), 0);
  EXPECT_EQ(file_info.st_mode & 0777, 0600u);
  EXPECT_THAT(ListFolder(folder + "/real"), ElementsAre("db.txtpb"));
}

// Killed writes leave temporaries; a live writer's temporary (locked) is never removed,
// whichever host or PID namespace it runs in.
TEST(AtomicFileTest, UnlockedTemporariesAreRemovedAndLockedOnesKept) {
  const std::string folder = MakeTestFolder();
  const std::string dead = ".out.txtpb.tmp-00000000deadbeef";
  const std::string live = ".out.txtpb.tmp-0123456789abcdef";
  const std::string other = ".other.txtpb.tmp-00000000deadbeef";
  const std::string unrelated = ".out.txtpb.tmp-notatoken";
  for (const std::string& name : {dead, live, other, unrelated}) {
    ASSERT_TRUE(WriteFileAtomically(folder + "/" + name, "partial").ok());
  }
  // The live writer: another open file description holding the flock.
  const int fd = open((folder + "/" + live).c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(flock(fd, LOCK_EX), 0);
  ASSERT_TRUE(WriteFileAtomically(folder + "/out.txtpb", "db").ok());
  EXPECT_THAT(ListFolder(folder),
              ::testing::UnorderedElementsAre(other, live, unrelated, "out.txtpb"));
  close(fd);
  ASSERT_TRUE(WriteFileAtomically(folder + "/out.txtpb", "db2").ok());
  EXPECT_THAT(ListFolder(folder), ::testing::UnorderedElementsAre(other, unrelated, "out.txtpb"));
}

// Issue 34: as root, -o /dev/null replaced the device node with a regular file.
TEST(AtomicFileTest, CharacterDevicesAreWrittenThroughNeverReplaced) {
  EXPECT_EQ(*ClassifyOutput("/dev/null"), OutputKind::kStream);
  ASSERT_TRUE(WriteFileAtomically("/dev/null", "database bytes").ok());
  struct stat info;
  ASSERT_EQ(stat("/dev/null", &info), 0);
  EXPECT_TRUE(S_ISCHR(info.st_mode));
  absl::Status full = WriteFileAtomically("/dev/full", "database bytes");
  EXPECT_TRUE(absl::IsResourceExhausted(full)) << full;
  EXPECT_THAT(Msg(full), HasSubstr("/dev/full"));
  ASSERT_EQ(stat("/dev/full", &info), 0);
  EXPECT_TRUE(S_ISCHR(info.st_mode));
  // A symlink to a device is a device too.
  const std::string folder = MakeTestFolder();
  ASSERT_EQ(symlink("/dev/null", (folder + "/sink.txtpb").c_str()), 0);
  ASSERT_TRUE(WriteFileAtomically(folder + "/sink.txtpb", "x").ok());
  EXPECT_THAT(ListFolder(folder), ElementsAre("sink.txtpb"));
  // Several files, one of them a device: the device is written through, the rest replaced.
  ASSERT_TRUE(WriteFilesAtomically({{folder + "/db.txtpb", "db"}, {"/dev/null", "report"}}).ok());
  EXPECT_EQ(Contents(folder + "/db.txtpb"), "db");
}

TEST(AtomicFileTest, PipesAreWrittenThroughAndOneWithNoReaderIsAnError) {
  const std::string folder = MakeTestFolder();
  const std::string fifo = folder + "/out.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  absl::Status no_reader = WriteFileAtomically(fifo, "x");
  EXPECT_THAT(Msg(no_reader), HasSubstr("a pipe with no reader"));
  const int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  ASSERT_TRUE(WriteFileAtomically(fifo, "through").ok());
  char buffer[16] = {};
  EXPECT_EQ(read(reader, buffer, sizeof(buffer)), 7);
  EXPECT_STREQ(buffer, "through");
  close(reader);
  struct stat info;
  ASSERT_EQ(stat(fifo.c_str(), &info), 0);
  EXPECT_TRUE(S_ISFIFO(info.st_mode));
}

TEST(AtomicFileTest, SocketsAreRefusedNamingThem) {
  const std::string folder = MakeTestFolder();
  const std::string path = folder + "/out.sock";
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un address = {};
  address.sun_family = AF_UNIX;
  std::strcpy(address.sun_path, "out.sock");  // Relative: the test folder's path is long.
  char previous[4096];
  ASSERT_NE(getcwd(previous, sizeof(previous)), nullptr);
  ASSERT_EQ(chdir(folder.c_str()), 0);
  const int bound = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  ASSERT_EQ(chdir(previous), 0);
  ASSERT_EQ(bound, 0);
  absl::Status status = WriteFileAtomically(path, "x");
  EXPECT_THAT(Msg(status), HasSubstr(path + ": is a socket"));
  EXPECT_THAT(Msg(status), HasSubstr("nothing was written"));
  close(fd);
}

// Issue 34: a legal 250-character output name failed: its temporary's name was too long.
TEST(AtomicFileTest, LongestLegalNamesGetTemporariesAndLocksWithinNameMax) {
  const std::string folder = MakeTestFolder();
  const std::string name(255, 'n');
  ASSERT_TRUE(WriteFileAtomically(folder + "/" + name, "one").ok());
  ASSERT_TRUE(WriteFileAtomically(folder + "/" + name, "two").ok());
  EXPECT_EQ(Contents(folder + "/" + name), "two");
  EXPECT_THAT(ListFolder(folder), ElementsAre(name));
  const std::string a = SiblingPath(folder + "/" + std::string(250, 'a'), ".tmp-0123456789abcdef");
  const std::string b = SiblingPath(folder + "/" + std::string(251, 'a'), ".tmp-0123456789abcdef");
  EXPECT_NE(a, b);
  for (const std::string& sibling : {a, b}) {
    EXPECT_LE(sibling.size() - folder.size() - 1, 255u) << sibling;
    EXPECT_TRUE(absl::EndsWith(sibling, ".tmp-0123456789abcdef")) << sibling;
  }
  EXPECT_EQ(SiblingPath("db.txtpb", ".lock"), ".db.txtpb.lock");
  EXPECT_EQ(SiblingPath("/db.txtpb", ".lock"), "/.db.txtpb.lock");
  EXPECT_EQ(SiblingPath("a/b/db.txtpb", ".lock"), "a/b/.db.txtpb.lock");
}

TEST(AtomicFileTest, ASymlinkLoopIsAnErrorNotACrash) {
  const std::string folder = MakeTestFolder();
  ASSERT_EQ(symlink("b.txtpb", (folder + "/a.txtpb").c_str()), 0);
  ASSERT_EQ(symlink("a.txtpb", (folder + "/b.txtpb").c_str()), 0);
  absl::Status status = WriteFileAtomically(folder + "/a.txtpb", "db");
  EXPECT_THAT(Msg(status), HasSubstr("symbolic links loop or chain more than 40 deep"));
  EXPECT_THAT(ListFolder(folder), ElementsAre("a.txtpb", "b.txtpb"));
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

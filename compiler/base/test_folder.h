// Temporary folders for tests that write files.
//
//   const std::string folder = MakeTestFolder();
//   ... write folder + "/db.pb" ...
//   EXPECT_THAT(ListFolder(folder), ElementsAre("db.pb"));
#ifndef COMPILER_BASE_TEST_FOLDER_H_
#define COMPILER_BASE_TEST_FOLDER_H_

#include <set>
#include <string>

namespace tiletune {

// A new, empty folder under $TEST_TMPDIR (Bazel's per-test folder), else under /tmp.
// Fails the current test and returns "" if it cannot be made.
std::string MakeTestFolder();

// The names in `folder` (not "." or ".."), sorted; hidden files included.
std::set<std::string> ListFolder(const std::string& folder);

}  // namespace tiletune

#endif  // COMPILER_BASE_TEST_FOLDER_H_

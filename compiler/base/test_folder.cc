#include "compiler/base/test_folder.h"

#include <dirent.h>
#include <stdlib.h>

#include <cstdlib>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace tiletune {

std::string MakeTestFolder() {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string pattern = absl::StrCat(base != nullptr ? base : "/tmp", "/tiletune_XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    ADD_FAILURE() << "cannot make a folder like " << pattern;
    return "";
  }
  return pattern;
}

std::set<std::string> ListFolder(const std::string& folder) {
  std::set<std::string> names;
  DIR* dir = opendir(folder.c_str());
  if (dir == nullptr) {
    ADD_FAILURE() << "cannot list " << folder;
    return names;
  }
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.insert(name);
  }
  closedir(dir);
  return names;
}

}  // namespace tiletune

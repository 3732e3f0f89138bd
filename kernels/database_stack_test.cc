#include "kernels/database_stack.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/base/test_folder.h"
#include "compiler/base/version.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/tuning_db/tuning_db.h"
#include "compiler/tuning_db/tuning_db_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Origins(const DatabaseStack& stack) {
  std::vector<std::string> origins;
  for (const DatabaseLayer& layer : stack.layers) origins.push_back(layer.origin);
  return origins;
}

void Write(const std::string& path) {
  tuning::TuningDatabase db = tuning::TestDatabase(1);
  for (tuning::TuningRecord& record : *db.mutable_records()) {
    record.mutable_provenance()->set_tool_version(kVersionTag);
  }
  ASSERT_TRUE(tuning::WriteTuningDatabase(db, path).ok()) << path;
}

TEST(DatabaseStackTest, TheUserFolderIsReadByNameWithTunedOnMissLast) {
  const std::string folder = MakeTestFolder();
  for (const char* name : {"b.pb", "a.txtpb", "tuned_on_miss.txtpb", "c.textproto"}) {
    Write(absl::StrCat(folder, "/", name));
  }
  Write(folder + "/.hidden.txtpb");
  ASSERT_EQ(std::system(("echo notes > " + folder + "/README.md").c_str()), 0);
  const std::string listed = MakeTestFolder() + "/listed.txtpb";
  Write(listed);
  DatabaseStackOptions options;
  options.listed = {listed, folder + "/b.pb"};  // b.pb is read once, where listed
  options.user_directory = folder;
  options.tuned_on_miss_database = folder + "/tuned_on_miss.txtpb";
  options.builtin = {ShippedDatabases()[0]};
  options.print = false;
  const DatabaseStack stack = LoadDatabaseStack(options);
  EXPECT_TRUE(stack.status.ok()) << stack.status;
  EXPECT_THAT(Origins(stack),
              ElementsAre(listed, folder + "/b.pb", folder + "/a.txtpb", folder + "/c.textproto",
                          folder + "/tuned_on_miss.txtpb", "kernels/tuned/h200.txtpb (built in)"));
  EXPECT_TRUE(stack.messages.empty()) << stack.messages[0];
}

TEST(DatabaseStackTest, AMissingUserFolderIsNoErrorAndAMissingListedFileIs) {
  DatabaseStackOptions options;
  options.user_directory = MakeTestFolder() + "/absent";
  options.listed = {MakeTestFolder() + "/typo.txtpb"};
  options.print = false;
  const DatabaseStack stack = LoadDatabaseStack(options);
  EXPECT_THAT(std::string(stack.status.message()), HasSubstr("typo.txtpb"));
  ASSERT_EQ(stack.messages.size(), 1u);
  EXPECT_THAT(stack.messages[0], HasSubstr("the other databases still serve"));
  EXPECT_EQ(DescribeStack(stack), "no tuning database");
}

TEST(DatabaseStackTest, TheUserFolderFollowsTheEnvironment) {
  setenv("TILETUNE_DB_DIR", "/x/tiletune_db", 1);
  EXPECT_EQ(DefaultUserDirectory(), "/x/tiletune_db");
  unsetenv("TILETUNE_DB_DIR");
  setenv("XDG_DATA_HOME", "/x/data", 1);
  EXPECT_EQ(DefaultUserDirectory(), "/x/data/tiletune");
  unsetenv("XDG_DATA_HOME");
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(DefaultUserDirectory(), "/home/u/.local/share/tiletune");
}

}  // namespace
}  // namespace tiletune

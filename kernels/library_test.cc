// CPU tests of the library: database problems are reported, never fatal.
#include "kernels/library.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/ops/copy/copy_op.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/", name);
}

TEST(LibraryTest, MissingDatabaseIsReportedAndTheLibraryStillWorks) {
  LibraryOptions options;
  options.database_path = TempPath("does_not_exist.txtpb");
  options.cache_directory = TempPath("cache");
  auto library = Library::Create(options);
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_EQ((*library)->database_status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT((*library)->database_status().message(), HasSubstr("does_not_exist.txtpb"));
  EXPECT_EQ((*library)->database_records(), 0u);
}

TEST(LibraryTest, CorruptOrForeignDatabasesAreReported) {
  struct Case {
    const char* file;
    const char* contents;
    const char* expected;
  };
  for (const Case& c : {Case{"garbage.txtpb", "this is { not a database", "garbage.txtpb"},
                        Case{"future.txtpb", "schema_version: 99\nrecord_count: 0\n", "99"},
                        Case{"truncated.pb", "\x08\x01\x12", "truncated.pb"}}) {
    std::ofstream(TempPath(c.file), std::ios::binary) << c.contents;
    LibraryOptions options;
    options.database_path = TempPath(c.file);
    options.cache_directory = TempPath("cache");
    auto library = Library::Create(options);
    ASSERT_TRUE(library.ok()) << c.file << ": " << library.status();
    EXPECT_FALSE((*library)->database_status().ok()) << c.file;
    EXPECT_THAT((*library)->database_status().message(), HasSubstr(c.expected)) << c.file;
  }
}

TEST(LibraryTest, DatabaseComesFromTheEnvironment) {
  setenv("TILETUNE_DB", TempPath("from_env.txtpb").c_str(), 1);
  LibraryOptions options;
  options.cache_directory = TempPath("cache");
  auto library = Library::Create(options);
  unsetenv("TILETUNE_DB");
  ASSERT_TRUE(library.ok());
  EXPECT_THAT((*library)->database_status().message(), HasSubstr("from_env.txtpb"));
}

TEST(LibraryTest, LaunchWithoutADriverIsUnavailable) {
  setenv("TILETUNE_CUDA_DRIVER_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  LibraryOptions options;
  options.cache_directory = TempPath("cache");
  auto library = Library::Create(options);
  ASSERT_TRUE(library.ok());
  EXPECT_TRUE((*library)->database_status().ok());
  Buffer b = Buffer::RowMajor("b", DataType::kF32, Scope::kGlobal, {16});
  absl::Status status = (*library)->Launch(CopyOp{Region::Whole(b), Region::Whole(b)}, 0, 0, nullptr);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace tiletune

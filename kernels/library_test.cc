// CPU tests of the library: database problems are reported, never fatal.
#include "kernels/library.h"

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/backend/cuda/cuda_codegens.h"
#include "compiler/backend/tuned_resolver.h"
#include "compiler/base/sha256.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/ops/copy/copy_op.h"
#include "compiler/tuning_db/tuning_db.h"
#include "kernels/shipped_databases.h"
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

// With no database given, the built-in ones are used: the H200 database tuned on
// autotune/suites/h200_shipped.txt.
TEST(LibraryTest, BuiltInDatabaseIsLoadedWhenNoneIsGiven) {
  unsetenv("TILETUNE_DB");
  LibraryOptions options;
  options.cache_directory = TempPath("cache");
  auto library = Library::Create(options);
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_TRUE((*library)->database_status().ok()) << (*library)->database_status();
  EXPECT_EQ((*library)->database_origin(), "kernels/tuned/h200.txtpb (built in)");
  EXPECT_GE((*library)->database_records(), 90u);
  ASSERT_FALSE(ShippedDatabases().empty());
  EXPECT_EQ(ShippedDatabases()[0].origin, "kernels/tuned/h200.txtpb");
}

// A corrupt or foreign-version built-in database is reported and skipped; the others
// still load and the library works.
// A shipped record names the kernel it timed by its source's digest: the emitter must still
// write that kernel for the record's problem, hints and launch, or the record's timing
// describes a kernel no user gets (re-tune the record after changing what it emits).
TEST(LibraryTest, EveryShippedRecordStillEmitsTheKernelItTimed) {
  DeviceCodegenRegistry registry;
  ASSERT_TRUE(RegisterBuiltinCudaCodegens(registry, BuiltinTileOps()).ok());
  ASSERT_FALSE(ShippedDatabases().empty());
  for (const ShippedDatabase& shipped : ShippedDatabases()) {
    auto db = tuning::ParseTuningDatabase(shipped.text, tuning::DatabaseFormat::kText,
                                          shipped.origin, tuning::ReadOptions{});
    ASSERT_TRUE(db.ok()) << db.status();
    TunedResolver::Options options;
    options.registry = &registry;
    options.ops = &BuiltinTileOps();
    options.databases = {*db};
    auto resolver = TunedResolver::Create(std::move(options));
    ASSERT_TRUE(resolver.ok()) << resolver.status();
    int checked = 0;
    for (const tuning::TuningRecord& record : db->records()) {
      const std::string problem = BuiltinTileOps().DescribeProblem(record.problem());
      auto op = BuiltinTileOps().FromProblem(record.problem());
      ASSERT_TRUE(op.ok()) << problem << ": " << op.status();
      auto resolution = (*resolver)->Resolve(record.device(), **op);
      ASSERT_TRUE(resolution.ok()) << problem << ": " << resolution.status();
      EXPECT_EQ(resolution->level, ResolutionLevel::kExact) << problem << ": " << resolution->detail;
      EXPECT_EQ(Sha256Hex(resolution->built.source.text), record.winner().source_sha256())
          << shipped.origin << ": " << problem << " (" << resolution->detail << ")";
      ++checked;
    }
    EXPECT_EQ(checked, db->records_size());
    EXPECT_GT(checked, 100) << shipped.origin;
  }
}

TEST(LibraryTest, CorruptOrForeignBuiltInDatabasesAreReportedAndSkipped) {
  const std::vector<ShippedDatabase> shipped = {
      {"kernels/tuned/garbage.txtpb", "records { this is not a database"},
      {"kernels/tuned/future.txtpb", "schema_version: 99\nrecord_count: 0\n"},
      ShippedDatabases()[0]};
  LibraryOptions options;
  options.cache_directory = TempPath("cache");
  options.shipped = &shipped;
  auto library = Library::Create(options);
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_FALSE((*library)->database_status().ok());
  EXPECT_THAT((*library)->database_status().message(), HasSubstr("garbage.txtpb"));
  EXPECT_EQ((*library)->database_origin(), "kernels/tuned/h200.txtpb (built in)");
  EXPECT_GT((*library)->database_records(), 0u);

  const std::vector<ShippedDatabase> only_bad = {shipped[1]};
  options.shipped = &only_bad;
  auto bare = Library::Create(options);
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_THAT((*bare)->database_status().message(), HasSubstr("99"));
  EXPECT_EQ((*bare)->database_records(), 0u);
  EXPECT_EQ((*bare)->database_origin(), "");
}

TEST(LibraryTest, TuneOnMissBudgetFromTheEnvironmentIsChecked) {
  LibraryOptions options;
  options.cache_directory = TempPath("cache");
  setenv("TILETUNE_TUNE_ON_MISS", "fast", 1);
  auto bad = Library::Create(options);
  setenv("TILETUNE_TUNE_ON_MISS", "200", 1);
  auto good = Library::Create(options);
  setenv("TILETUNE_TUNE_ON_MISS", "on", 1);
  auto on = Library::Create(options);
  unsetenv("TILETUNE_TUNE_ON_MISS");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("TILETUNE_TUNE_ON_MISS='fast'"));
  EXPECT_TRUE(good.ok()) << good.status();
  EXPECT_TRUE(on.ok()) << on.status();
}

// Records tuned on earlier misses are read back at creation (when tuning on a miss is on)
// and answer before the built-in ones; a corrupt file of them is reported, not fatal.
TEST(LibraryTest, RecordsTunedOnMissesAreReadBack) {
  const std::string tuned = TempPath("tuned_on_miss.txtpb");
  // Two built-in records as if tuned here.
  tuning::TuningDatabase db;
  db.set_schema_version(tuning::kCurrentSchemaVersion);
  tuning::ReadOptions read;
  auto shipped = tuning::ParseTuningDatabase(ShippedDatabases()[0].text,
                                             tuning::DatabaseFormat::kText, "shipped", read);
  ASSERT_TRUE(shipped.ok()) << shipped.status();
  *db.add_records() = shipped->records(0);
  *db.add_records() = shipped->records(1);
  ASSERT_TRUE(tuning::WriteTuningDatabase(db, tuned).ok());
  LibraryOptions options;
  options.cache_directory = TempPath("cache");
  options.tune_on_miss_ms = 50;
  options.tune_on_miss_database = tuned;
  auto library = Library::Create(options);
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_EQ((*library)->database_records(), static_cast<size_t>(shipped->records_size()) + 2);
  options.tune_on_miss_ms = 0;
  auto off = Library::Create(options);
  ASSERT_TRUE(off.ok());
  EXPECT_EQ((*off)->database_records(), static_cast<size_t>(shipped->records_size()));
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

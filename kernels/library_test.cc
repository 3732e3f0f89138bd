// CPU tests of the library: databases stack as documented, their problems are reported and
// never fatal, misses are recorded.
#include "kernels/library.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/backend/cuda/cuda_codegens.h"
#include "compiler/backend/tuned_resolver.h"
#include "compiler/base/sha256.h"
#include "compiler/cuda/kernel_digest.h"
#include "compiler/base/version.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/ops/copy/copy_op.h"
#include "compiler/tuning_db/tuning_db.h"
#include "kernels/builtin_cost_models.h"
#include "kernels/database_stack.h"
#include "kernels/shipped_databases.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string TempPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/", name);
}

// Options that read nothing but what a test gives: no user folder.
LibraryOptions Isolated() {
  LibraryOptions options;
  options.cache_directory = TempPath("cache");
  options.user_directory = "";
  return options;
}

size_t BuiltInRecords() {
  auto db = tuning::ParseTuningDatabase(ShippedDatabases()[0].text, tuning::DatabaseFormat::kText,
                                        "shipped", tuning::ReadOptions{});
  return db.ok() ? static_cast<size_t>(db->records_size()) : 0;
}

TEST(LibraryTest, MissingDatabaseIsReportedAndTheOthersStillServe) {
  LibraryOptions options = Isolated();
  options.databases = {TempPath("does_not_exist.txtpb")};
  auto library = Library::Create(options);
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_EQ((*library)->database_status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT((*library)->database_status().message(), HasSubstr("does_not_exist.txtpb"));
  EXPECT_EQ((*library)->database_records(), BuiltInRecords());
  EXPECT_EQ((*library)->database_origin(), "kernels/tuned/h200.txtpb (built in)");
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
    LibraryOptions options = Isolated();
    options.databases = {TempPath(c.file)};
    auto library = Library::Create(options);
    ASSERT_TRUE(library.ok()) << c.file << ": " << library.status();
    EXPECT_FALSE((*library)->database_status().ok()) << c.file;
    EXPECT_THAT((*library)->database_status().message(), HasSubstr(c.expected)) << c.file;
    EXPECT_EQ((*library)->database_records(), BuiltInRecords()) << c.file;
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
// A shipped record names the kernel it timed by its code's digest (KernelDigest: comments
// and layout do not count): the emitter must still write that kernel for the record's
// problem, hints and launch, or the record's timing describes a kernel no user gets
// (re-tune the record after changing what it emits). `TILETUNE_UPDATE_GOLDENS=1 bazel run
// //kernels:library_test` rewrites a record's digest only where it is the raw-text digest
// of the very source emitted today (records written before digests left comments out):
// the same kernel, named the new way. Another board of the record's architecture (its name
// changed: an H100 for an H200 record) resolves the same problem to the same kernel, as the
// nearest record at distance 0.
TEST(LibraryTest, EveryShippedRecordStillEmitsTheKernelItTimed) {
  const char* workspace = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  const bool update = std::getenv("TILETUNE_UPDATE_GOLDENS") != nullptr && workspace != nullptr;
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
    int checked = 0, renamed = 0;
    tuning::TuningDatabase updated = *db;
    for (int i = 0; i < db->records_size(); ++i) {
      const tuning::TuningRecord& record = db->records(i);
      const std::string problem = BuiltinTileOps().DescribeProblem(record.problem());
      auto op = BuiltinTileOps().FromProblem(record.problem());
      ASSERT_TRUE(op.ok()) << problem << ": " << op.status();
      auto resolution = (*resolver)->Resolve(record.device(), **op);
      ASSERT_TRUE(resolution.ok()) << problem << ": " << resolution.status();
      EXPECT_EQ(resolution->level, ResolutionLevel::kExact) << problem << ": " << resolution->detail;
      tuning::DeviceIdentity other_board = record.device();
      other_board.set_name(absl::StrCat(record.device().name(), " (another board)"));
      auto elsewhere = (*resolver)->Resolve(other_board, **op);
      ASSERT_TRUE(elsewhere.ok()) << problem << ": " << elsewhere.status();
      EXPECT_EQ(elsewhere->level, ResolutionLevel::kNearest) << problem;
      EXPECT_EQ(elsewhere->built.source.text, resolution->built.source.text)
          << problem << ": " << elsewhere->detail;
      EXPECT_EQ(elsewhere->request.launch.tile, resolution->request.launch.tile) << problem;
      EXPECT_EQ(elsewhere->request.launch.threads, resolution->request.launch.threads) << problem;
      const std::string digest = KernelDigest(resolution->built.source.text);
      if (update && record.winner().source_sha256() == Sha256Hex(resolution->built.source.text)) {
        updated.mutable_records(i)->mutable_winner()->set_source_sha256(digest);
        ++renamed;
      } else {
        EXPECT_EQ(digest, record.winner().source_sha256())
            << shipped.origin << ": " << problem << " (" << resolution->detail << ")";
      }
      ++checked;
    }
    if (renamed > 0) {
      const absl::Status written =
          tuning::WriteTuningDatabase(updated, absl::StrCat(workspace, "/", shipped.origin));
      EXPECT_TRUE(written.ok()) << written;
      std::printf("%s: %d record digests renamed\n", shipped.origin.c_str(), renamed);
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
  options.shipped = shipped;
  auto library = Library::Create(options);
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_FALSE((*library)->database_status().ok());
  EXPECT_THAT((*library)->database_status().message(), HasSubstr("garbage.txtpb"));
  EXPECT_EQ((*library)->database_origin(), "kernels/tuned/h200.txtpb (built in)");
  EXPECT_GT((*library)->database_records(), 0u);

  const std::vector<ShippedDatabase> only_bad = {shipped[1]};
  options.shipped = only_bad;
  auto bare = Library::Create(options);
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_THAT((*bare)->database_status().message(), HasSubstr("99"));
  EXPECT_EQ((*bare)->database_records(), 0u);
  EXPECT_EQ((*bare)->database_origin(), "no tuning database");
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

// The first record of the built-in database, as a database above the built-in one would
// hold it again (made by this tiletune, at `seconds`).
tuning::TuningRecord Retuned(int seconds) {
  auto db = tuning::ParseTuningDatabase(ShippedDatabases()[0].text, tuning::DatabaseFormat::kText,
                                        "shipped", tuning::ReadOptions{});
  tuning::TuningRecord record = db->records(0);
  record.mutable_provenance()->set_tool_version(kVersionTag);
  record.mutable_provenance()->set_unix_time_s(seconds);
  return record;
}

std::string WriteRecords(const std::string& name, const std::vector<tuning::TuningRecord>& records) {
  tuning::TuningDatabase db;
  db.set_schema_version(tuning::kCurrentSchemaVersion);
  for (const tuning::TuningRecord& record : records) *db.add_records() = record;
  const std::string path = TempPath(name);
  EXPECT_TRUE(tuning::WriteTuningDatabase(db, path, BuiltinTileOps().RecordValidator()).ok());
  return path;
}

// What a record answers for: its problem on its device, through Explain.
absl::StatusOr<Explanation> ExplainRecord(const Library& library, const tuning::TuningRecord& record) {
  auto op = BuiltinTileOps().FromProblem(record.problem());
  if (!op.ok()) return op.status();
  return library.Explain(**op, record.device());
}

// A record whose kernel has changed since it was timed (written by an older tiletune) still
// answers, and counts as a miss: it is recorded for tuning again. Where a database below it
// holds a current record of the problem (here the built-in one), that one answers instead.
TEST(LibraryTest, ARecordOfAnotherKernelIsRecordedAsAMiss) {
  tuning::TuningRecord stale = Retuned(7);
  stale.mutable_winner()->set_source_sha256(std::string(64, '0'));
  const std::string path = WriteRecords("stale.txtpb", {stale});
  const std::string misses = TempPath("stale_misses.txt");
  std::remove(misses.c_str());
  LibraryOptions options = Isolated();
  options.databases = {path};
  options.record_misses = misses;
  // How a library of `options` explains the stale record's problem (exact either way).
  auto explain = [&]() -> Explanation {
    auto library = Library::Create(options);
    if (!library.ok()) {
      ADD_FAILURE() << library.status();
      return Explanation{};
    }
    auto explained = ExplainRecord(**library, stale);
    if (!explained.ok()) {
      ADD_FAILURE() << explained.status();
      return Explanation{};
    }
    EXPECT_EQ(explained->level, ResolutionLevel::kExact);
    return *explained;
  };
  const Explanation below = explain();
  EXPECT_THAT(below.detail, HasSubstr("timed a kernel that has changed since"));
  EXPECT_THAT(below.database, Not(HasSubstr("stale.txtpb")));
  EXPECT_FALSE(std::ifstream(misses).good());
  options.builtin = false;
  EXPECT_THAT(explain().detail, HasSubstr("the kernel has changed since this record timed it"));
  std::ifstream in(misses);
  std::string line;
  ASSERT_TRUE(static_cast<bool>(std::getline(in, line)));
  EXPECT_THAT(line, HasSubstr("# exact on "));
  // The shipped record it came from describes today's kernel: no miss.
  std::remove(misses.c_str());
  options.databases.clear();
  options.builtin = true;
  auto library = Library::Create(options);
  ASSERT_TRUE(library.ok()) << library.status();
  ASSERT_TRUE(ExplainRecord(**library, Retuned(7)).ok());
  EXPECT_FALSE(std::ifstream(misses).good());
}

// Issue 35: TILETUNE_DB replaced the built-in records. Databases stack now: listed first
// (in order), then the user folder, then the built-in ones; Explain names the file.
TEST(LibraryTest, DatabasesStackInTheirDocumentedOrder) {
  const std::string a = WriteRecords("stack_a.txtpb", {Retuned(96)});
  const std::string b = WriteRecords("stack_b.txtpb", {Retuned(160)});
  const std::string folder = TempPath("user_folder");
  ASSERT_EQ(std::system(("mkdir -p " + folder).c_str()), 0);
  WriteRecords("user_folder/mine.txtpb", {Retuned(224)});
  WriteRecords(std::string("user_folder/") + kTunedOnMissFile, {Retuned(288)});
  const tuning::TuningRecord record = Retuned(0);
  auto answered_by = [&](LibraryOptions options) -> std::string {
    auto library = Library::Create(options);
    EXPECT_TRUE(library.ok()) << library.status();
    auto explained = ExplainRecord(**library, record);
    EXPECT_TRUE(explained.ok()) << explained.status();
    EXPECT_EQ(explained->level, ResolutionLevel::kExact);
    return explained->database;
  };
  LibraryOptions options = Isolated();
  setenv("TILETUNE_DB", (a + ":" + b).c_str(), 1);
  options.user_directory = folder;
  EXPECT_EQ(answered_by(options), a);
  unsetenv("TILETUNE_DB");
  options.databases = {b, a};
  EXPECT_EQ(answered_by(options), b);
  options.databases.clear();
  EXPECT_EQ(answered_by(options), folder + "/mine.txtpb");
  std::remove((folder + "/mine.txtpb").c_str());
  EXPECT_EQ(answered_by(options), folder + "/" + kTunedOnMissFile);
  options.user_directory = "";
  EXPECT_EQ(answered_by(options), "kernels/tuned/h200.txtpb (built in)");
  // The built-in records go only when asked: every other problem keeps being served.
  auto library = Library::Create(options);
  EXPECT_EQ((*library)->database_records(), BuiltInRecords());
  options.databases = {a};
  library = Library::Create(options);
  EXPECT_EQ((*library)->database_records(), BuiltInRecords());  // a's record shadows one
  options.builtin = false;
  library = Library::Create(options);
  EXPECT_EQ((*library)->database_records(), 1u);
  options.builtin = true;
  setenv("TILETUNE_BUILTIN_DB", "0", 1);
  library = Library::Create(options);
  EXPECT_EQ((*library)->database_records(), 1u);
  setenv("TILETUNE_BUILTIN_DB", "maybe", 1);
  EXPECT_THAT(Library::Create(options).status().message(), HasSubstr("TILETUNE_BUILTIN_DB='maybe'"));
  unsetenv("TILETUNE_BUILTIN_DB");
}

// Records tuned on earlier misses are read back whether or not tuning on a miss is on.
TEST(LibraryTest, RecordsTunedOnMissesAreReadBackEvenWithTuningOff) {
  LibraryOptions options = Isolated();
  options.tune_on_miss_database = WriteRecords("tuned_elsewhere.txtpb", {Retuned(320)});
  for (int ms : {0, 50}) {
    options.tune_on_miss_ms = ms;
    auto library = Library::Create(options);
    ASSERT_TRUE(library.ok()) << library.status();
    auto explained = ExplainRecord(**library, Retuned(0));
    ASSERT_TRUE(explained.ok()) << explained.status();
    EXPECT_EQ(explained->database, options.tune_on_miss_database) << ms;
  }
}

// A corrupt or newer stacked database is reported and skipped; the rest serve.
TEST(LibraryTest, ABadStackedDatabaseIsSkippedAndTheRestServe) {
  std::ofstream(TempPath("stack_bad.txtpb")) << "schema_version: 99\nrecord_count: 0\n";
  LibraryOptions options = Isolated();
  options.databases = {TempPath("stack_bad.txtpb"), WriteRecords("stack_good.txtpb", {Retuned(96)})};
  auto library = Library::Create(options);
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_THAT((*library)->database_status().message(), HasSubstr("stack_bad.txtpb"));
  EXPECT_THAT(ExplainRecord(**library, Retuned(0))->database, HasSubstr("stack_good.txtpb"));
  EXPECT_THAT((*library)->database_origin(), HasSubstr("stack_good.txtpb, kernels/tuned/h200.txtpb (built in)"));
}

// Capture: each problem that resolved without an exact record is appended once, as a suite
// line autotune --suite reads, by any number of processes at once.
TEST(LibraryTest, MissesAreRecordedOnceAsSuiteLines) {
  const std::string misses = TempPath("misses.txt");
  std::remove(misses.c_str());
  const std::vector<std::string> specs = {"copy:f16:1000,1000", "copy:u8:src=301x4099[0:301,5:4000]:dst=301x3995",
                                          "im2col:f16:3,17,19,5:k=3x2:s=2:p=1", "col2im:f32:2,9,9,4:k=3"};
  std::vector<pid_t> children;
  for (int child = 0; child < 8; ++child) {
    const pid_t pid = fork();
    if (pid == 0) {
      LibraryOptions options = Isolated();
      setenv("TILETUNE_RECORD_MISSES", misses.c_str(), 1);
      auto library = Library::Create(options);
      tuning::DeviceIdentity h200;
      h200.set_name("NVIDIA H200");
      h200.set_cc_major(9);
      for (int round = 0; round < 3; ++round) {
        for (const std::string& spec : specs) {
          if (!library.ok() || !(*library)->Explain(**BuiltinTileOps().ParseSpec(spec), h200).ok()) _exit(1);
        }
      }
      // An exact record is no miss.
      auto db = tuning::ParseTuningDatabase(ShippedDatabases()[0].text, tuning::DatabaseFormat::kText,
                                            "shipped", tuning::ReadOptions{});
      if (!ExplainRecord(**library, db->records(0)).ok()) _exit(1);
      _exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::ifstream in(misses);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), specs.size()) << absl::StrJoin(lines, "\n");
  for (const std::string& spec : specs) {
    EXPECT_EQ(std::count_if(lines.begin(), lines.end(),
                            [&](const std::string& line) { return absl::StartsWith(line, spec + " "); }),
              1)
        << spec;
  }
  EXPECT_THAT(lines[0], HasSubstr("# nearest on NVIDIA H200: "));
  // An unwritable file costs a warning, never the call.
  LibraryOptions options = Isolated();
  options.record_misses = TempPath("no/such/folder/misses.txt");
  auto library = Library::Create(options);
  tuning::DeviceIdentity h200;
  h200.set_name("NVIDIA H200");
  h200.set_cc_major(9);
  EXPECT_TRUE((*library)->Explain(**BuiltinTileOps().ParseSpec(specs[0]), h200).ok());
}

// A library told not to read $TILETUNE_RECORD_MISSES (the autotuner's, asking what the
// library would launch) records nothing, whatever the environment says.
TEST(LibraryTest, MissRecordingFromTheEnvironmentCanBeTurnedOff) {
  const std::string misses = TempPath("misses_off.txt");
  std::remove(misses.c_str());
  setenv("TILETUNE_RECORD_MISSES", misses.c_str(), 1);
  LibraryOptions options = Isolated();
  options.record_misses_from_environment = false;
  auto library = Library::Create(options);
  ASSERT_TRUE(library.ok()) << library.status();
  tuning::DeviceIdentity h200;
  h200.set_name("NVIDIA H200");
  h200.set_cc_major(9);
  auto explained = (*library)->Explain(**BuiltinTileOps().ParseSpec("copy:f16:1000,1000"), h200);
  unsetenv("TILETUNE_RECORD_MISSES");
  ASSERT_TRUE(explained.ok()) << explained.status();
  EXPECT_NE(explained->level, ResolutionLevel::kExact);
  EXPECT_FALSE(std::ifstream(misses).good()) << misses << " was written";
}

// The kernels the library chooses among hold what it launches, each kernel once, at most
// as many as asked; a count below 1 is refused naming it.
TEST(LibraryTest, AlternativesHoldWhatTheLibraryLaunches) {
  auto library = Library::Create(Isolated());
  ASSERT_TRUE(library.ok()) << library.status();
  tuning::DeviceIdentity h200;
  h200.set_name("NVIDIA H200");
  h200.set_cc_major(9);
  h200.set_sm_count(132);
  for (const char* spec : {"col2im:f16:32,35,35,64:k=5:p=2", "copy:f16:6000,5000",
                           "im2col:f16:32,32,32,128:k=2:s=2:layout=nchw"}) {
    auto op = BuiltinTileOps().ParseSpec(spec);
    ASSERT_TRUE(op.ok()) << op.status();
    auto chosen = (*library)->Explain(**op, h200);
    ASSERT_TRUE(chosen.ok()) << chosen.status();
    auto alternatives = (*library)->Alternatives(**op, h200, 5);
    ASSERT_TRUE(alternatives.ok()) << alternatives.status();
    ASSERT_GE(alternatives->size(), 2u) << spec;
    EXPECT_LE(alternatives->size(), 5u) << spec;
    std::set<std::string> variants;
    for (const Explanation& alternative : *alternatives) {
      EXPECT_TRUE(variants.insert(alternative.variant).second) << spec << ": " << alternative.variant;
    }
    EXPECT_EQ(variants.count(chosen->variant), 1u) << spec << ": " << chosen->variant;
  }
  auto op = BuiltinTileOps().ParseSpec("copy:f16:6000,5000");
  ASSERT_TRUE(op.ok()) << op.status();
  auto none = (*library)->Alternatives(**op, h200, 0);
  EXPECT_TRUE(absl::IsInvalidArgument(none.status())) << none.status();
  EXPECT_THAT(std::string(none.status().message()), HasSubstr("asked for 0 alternatives"));
}

// Asked to (TILETUNE_COST_MODEL=1 or LibraryOptions::cost_model), a problem with no exact
// record runs the variant of its nearby records that the built-in model of the GPU
// predicts fastest, and says so; by default, the nearest record's. The model needs the
// GPU's SM count, and only the GPU it was fitted on has one.
TEST(LibraryTest, CostModelChoosesAmongNearbyRecordsOnlyWhenAsked) {
  auto op = BuiltinTileOps().ParseSpec("col2im:f16:32,35,35,64:k=5:p=2");
  ASSERT_TRUE(op.ok()) << op.status();
  tuning::DeviceIdentity h200;
  h200.set_name("NVIDIA H200");
  h200.set_cc_major(9);
  h200.set_sm_count(132);
  tuning::DeviceIdentity other = h200;
  other.set_name("NVIDIA H100 80GB HBM3");
  LibraryOptions options = Isolated();
  auto nearest = (*Library::Create(options))->Explain(**op, h200);
  ASSERT_TRUE(nearest.ok()) << nearest.status();
  EXPECT_EQ(nearest->level, ResolutionLevel::kNearest);
  EXPECT_THAT(nearest->detail, Not(HasSubstr("cost model")));
  EXPECT_FALSE(nearest->chosen_by_model);
  setenv("TILETUNE_COST_MODEL", "1", 1);
  auto library = Library::Create(options);
  unsetenv("TILETUNE_COST_MODEL");
  ASSERT_TRUE(library.ok()) << library.status();
  auto chosen = (*library)->Explain(**op, h200);
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  EXPECT_EQ(chosen->level, ResolutionLevel::kNearest);
  EXPECT_THAT(chosen->detail, HasSubstr("the cost model's fastest of the variants of the 8 nearest"));
  EXPECT_THAT(chosen->detail, HasSubstr("kernels/tuned/h200.model.txtpb"));
  EXPECT_TRUE(chosen->chosen_by_model);
  auto elsewhere = (*library)->Explain(**op, other);
  ASSERT_TRUE(elsewhere.ok()) << elsewhere.status();
  EXPECT_THAT(elsewhere->detail, Not(HasSubstr("cost model")));
  EXPECT_FALSE(elsewhere->chosen_by_model);
  h200.clear_sm_count();
  auto no_sms = (*library)->Explain(**op, h200);
  ASSERT_TRUE(no_sms.ok()) << no_sms.status();
  EXPECT_THAT(no_sms->detail, Not(HasSubstr("cost model")));
  setenv("TILETUNE_COST_MODEL", "yes", 1);
  EXPECT_THAT(Library::Create(options).status().message(),
              HasSubstr("TILETUNE_COST_MODEL='yes': accepted are 1"));
  unsetenv("TILETUNE_COST_MODEL");
}

// A cost model file (LibraryOptions::cost_model_file, or $TILETUNE_COST_MODEL_FILE) answers
// for its GPU before the built-in model. Selecting by a model with trees, the library
// weighs the operator's search space beside the nearby records' variants: this one's single
// tree prefers 2-byte vectors, which only the search space has, so a searched kernel runs
// and the detail says so. A file that does not read fails the library, naming it.
TEST(LibraryTest, ACostModelFileWithTreesChoosesFromTheSearchSpace) {
  auto op = BuiltinTileOps().ParseSpec("col2im:f16:32,35,35,64:k=5:p=2");
  ASSERT_TRUE(op.ok()) << op.status();
  auto builtin = BuiltinCostModels();
  ASSERT_TRUE(builtin.ok() && !builtin->empty());
  tuning::CostModel proto = builtin->front().model.ToProto(builtin->front().device);
  proto.set_tree_base(3);
  tuning::RegressionTree* tree = proto.add_trees();
  // Feature 1 is narrow_vector, log2(16 / vector bytes): 3 for 2-byte vectors.
  for (int f : {1, -1, -1}) tree->add_feature(f);
  for (double t : {2.5, 0.0, 0.0}) tree->add_threshold(t);
  for (int l : {1, -1, -1}) tree->add_left(l);
  for (int r : {2, -1, -1}) tree->add_right(r);
  for (double v : {0.0, 1.0, -1.0}) tree->add_value(v);
  const std::string path = TempPath("trees.model.txtpb");
  std::string text;
  ASSERT_TRUE(google::protobuf::TextFormat::PrintToString(proto, &text));
  std::ofstream(path) << text;
  LibraryOptions options = Isolated();
  options.cost_model = true;
  options.cost_model_file = path;
  auto library = Library::Create(options);
  ASSERT_TRUE(library.ok()) << library.status();
  auto chosen = (*library)->Explain(**op, builtin->front().device);
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  EXPECT_EQ(chosen->level, ResolutionLevel::kHeuristic);
  EXPECT_THAT(chosen->detail, HasSubstr("searched: "));
  EXPECT_THAT(chosen->detail, HasSubstr("vec=2B"));
  EXPECT_THAT(chosen->detail, HasSubstr("kernels of the operator's search space"));
  EXPECT_THAT(chosen->detail, HasSubstr(path));
  // The tree predicts e^2 us for 2-byte vectors and e^4 us for the others: a margin below
  // e^2 - 1 (6.39) lets the model's pick run; above it, the nearest record's variant stays
  // and says why.
  LibraryOptions plain = Isolated();
  auto nearest = (*Library::Create(plain))->Explain(**op, builtin->front().device);
  ASSERT_TRUE(nearest.ok()) << nearest.status();
  for (double margin : {6.0, 7.0}) {
    SCOPED_TRACE(absl::StrCat("margin ", margin));
    options.cost_model_margin = margin;
    auto with_margin = Library::Create(options);
    ASSERT_TRUE(with_margin.ok()) << with_margin.status();
    auto kept = (*with_margin)->Explain(**op, builtin->front().device);
    ASSERT_TRUE(kept.ok()) << kept.status();
    EXPECT_TRUE(kept->chosen_by_model);
    if (margin < 6.39) {
      EXPECT_EQ(kept->variant, chosen->variant);
      continue;
    }
    EXPECT_EQ(kept->variant, nearest->variant);
    EXPECT_EQ(kept->level, ResolutionLevel::kNearest);
    EXPECT_THAT(kept->detail, HasSubstr("; kept over the cost model's fastest of"));
    EXPECT_THAT(kept->detail, HasSubstr("not 700% faster"));
  }
  options.cost_model_margin = -1;
  EXPECT_THAT(std::string(Library::Create(options).status().message()),
              HasSubstr("a cost-model margin of -1 (the fraction faster"));
  options.cost_model_margin = 0;
  options.cost_model_file = TempPath("no_such.model.txtpb");
  EXPECT_THAT(std::string(Library::Create(options).status().message()),
              HasSubstr("no_such.model.txtpb"));
}

// With a cost model, the nearby records' variants tuning on a miss measures come fastest
// predicted first, each with its prediction.
TEST(LibraryTest, AlternativesComeFastestPredictedFirstWithACostModel) {
  DeviceCodegenRegistry registry;
  ASSERT_TRUE(RegisterBuiltinCudaCodegens(registry, BuiltinTileOps()).ok());
  TunedResolver::Options options;
  options.registry = &registry;
  options.ops = &BuiltinTileOps();
  for (const ShippedDatabase& shipped : ShippedDatabases()) {
    auto db = tuning::ParseTuningDatabase(shipped.text, tuning::DatabaseFormat::kText,
                                          shipped.origin, tuning::ReadOptions{});
    ASSERT_TRUE(db.ok()) << db.status();
    options.databases.push_back(*std::move(db));
  }
  auto models = BuiltinCostModels();
  ASSERT_TRUE(models.ok()) << models.status();
  ASSERT_FALSE(models->empty());
  options.cost_models = *models;
  options.select_by_model = true;
  auto resolver = TunedResolver::Create(std::move(options));
  ASSERT_TRUE(resolver.ok()) << resolver.status();
  tuning::DeviceIdentity h200 = (*models)[0].device;
  h200.set_sm_count(132);
  for (const char* spec : {"col2im:f16:32,35,35,64:k=5:p=2", "im2col:bf16:16,64,64,96:k=5:p=2",
                           "copy:f16:6000,5000"}) {
    auto op = BuiltinTileOps().ParseSpec(spec);
    ASSERT_TRUE(op.ok()) << op.status();
    auto alternatives = (*resolver)->Alternatives(h200, **op, 6);
    ASSERT_TRUE(alternatives.ok()) << alternatives.status();
    ASSERT_EQ(alternatives->size(), 6u) << spec;
    double last = 0;
    for (const Resolution& alternative : *alternatives) {
      if (alternative.level == ResolutionLevel::kHeuristic) continue;
      const std::string& detail = alternative.detail;
      const size_t at = detail.rfind(", predicted ");
      ASSERT_NE(at, std::string::npos) << spec << ": " << detail;
      const double predicted = std::atof(detail.c_str() + at + 12);
      EXPECT_GE(predicted, last) << spec << ": " << detail;
      last = predicted;
    }
  }
}

// Tuning on a miss also measures the cost model's first picks of the search space: after
// the nearby records' variants and the heuristic, up to `searched` more, distinct kernels,
// fastest estimate first; none on a GPU with no model.
TEST(LibraryTest, AlternativesAddTheCostModelsPicksOfTheSearchSpace) {
  DeviceCodegenRegistry registry;
  ASSERT_TRUE(RegisterBuiltinCudaCodegens(registry, BuiltinTileOps()).ok());
  TunedResolver::Options options;
  options.registry = &registry;
  options.ops = &BuiltinTileOps();
  for (const ShippedDatabase& shipped : ShippedDatabases()) {
    auto db = tuning::ParseTuningDatabase(shipped.text, tuning::DatabaseFormat::kText,
                                          shipped.origin, tuning::ReadOptions{});
    ASSERT_TRUE(db.ok()) << db.status();
    options.databases.push_back(*std::move(db));
  }
  auto models = BuiltinCostModels();
  ASSERT_TRUE(models.ok()) << models.status();
  ASSERT_FALSE(models->empty());
  options.cost_models = *models;
  auto resolver = TunedResolver::Create(std::move(options));
  ASSERT_TRUE(resolver.ok()) << resolver.status();
  tuning::DeviceIdentity h200 = (*models)[0].device;
  h200.set_sm_count(132);
  for (const char* spec : {"col2im:f16:32,35,35,64:k=5:p=2",
                           "im2col:bf16:32,224,224,3:k=14:s=14:layout=nchw",
                           "copy:u8:src=12000000x4[0:12000000,1:4]:dst=12000000x3"}) {
    auto op = BuiltinTileOps().ParseSpec(spec);
    ASSERT_TRUE(op.ok()) << op.status();
    auto nearby = (*resolver)->Alternatives(h200, **op, 6);
    auto both = (*resolver)->Alternatives(h200, **op, 6, 4);
    ASSERT_TRUE(nearby.ok() && both.ok()) << spec;
    ASSERT_EQ(both->size(), nearby->size() + 4) << spec;
    std::set<std::string> launches;  // the kernel and how it is launched
    double last = 0;
    for (size_t i = 0; i < both->size(); ++i) {
      const Resolution& alternative = (*both)[i];
      const LaunchParams& launch = alternative.built.lowered->launch;
      EXPECT_TRUE(launches
                      .insert(absl::StrCat(alternative.built.source.text, "|", launch.threads,
                                           "|", absl::StrJoin(launch.tile, ",")))
                      .second)
          << spec << " " << i;
      if (i < nearby->size()) {
        EXPECT_EQ(alternative.built.source.text, (*nearby)[i].built.source.text) << spec;
        continue;
      }
      const size_t at = alternative.detail.rfind(", estimate ");
      ASSERT_NE(at, std::string::npos) << spec << ": " << alternative.detail;
      EXPECT_THAT(alternative.detail, HasSubstr("the cost model's pick"));
      // Tuning on a miss names such a candidate "searched" by this prefix.
      EXPECT_TRUE(absl::StartsWith(alternative.detail, "searched: ")) << alternative.detail;
      const double estimate = std::atof(alternative.detail.c_str() + at + 11);
      EXPECT_GT(estimate, 0) << alternative.detail;
      EXPECT_GE(estimate, last) << spec << ": " << alternative.detail;
      last = estimate;
    }
    // A GPU with no model gets the nearby variants alone.
    tuning::DeviceIdentity other = h200;
    other.set_name("NVIDIA GH200 480GB");
    auto unmodelled = (*resolver)->Alternatives(other, **op, 6, 4);
    auto unmodelled_nearby = (*resolver)->Alternatives(other, **op, 6);
    ASSERT_TRUE(unmodelled.ok() && unmodelled_nearby.ok());
    EXPECT_EQ(unmodelled->size(), unmodelled_nearby->size()) << spec;
    for (const Resolution& alternative : *unmodelled) {
      EXPECT_THAT(alternative.detail, Not(HasSubstr("the cost model's pick"))) << spec;
    }
  }
}

// A database made by another tiletune is used, and says so once.
TEST(LibraryTest, RecordsOfAnotherVersionAreUsedAndNoted) {
  tuning::TuningRecord old = Retuned(96);
  old.mutable_provenance()->set_tool_version("tiletune 0.1");
  LibraryOptions options = Isolated();
  options.databases = {WriteRecords("old.txtpb", {old})};
  ::testing::internal::CaptureStderr();
  auto library = Library::Create(options);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr("old.txtpb: records made by another tiletune (1 by tiletune 0.1"));
  EXPECT_THAT(err, HasSubstr("they are still used"));
  EXPECT_THAT(ExplainRecord(**library, old)->database, HasSubstr("old.txtpb"));
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

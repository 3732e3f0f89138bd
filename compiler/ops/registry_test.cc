// The tile-operator registry: names, specs, database problems and the record checks it
// gives the tuning database's readers; and the candidate builder's variant records.
#include "compiler/ops/registry.h"

#include <cstdint>
#include <functional>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/ops/candidates.h"
#include "compiler/target/target.h"
#include "compiler/tuning_db/tuning_db.h"
#include "compiler/tuning_db/tuning_db_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Msg(const absl::Status& status) { return std::string(status.message()); }

TEST(TileOpRegistryTest, NamesAreUniqueAndListedWhenMissing) {
  TileOpRegistry ops;
  ASSERT_TRUE(RegisterBuiltinTileOps(ops).ok());
  EXPECT_EQ(ops.Names(), "copy, im2col, col2im, batch_copy");
  EXPECT_EQ(RegisterBuiltinTileOps(ops).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ((*ops.Find("col2im"))->name(), "col2im");
  auto missing = ops.Find("transpose");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("accepted are copy, im2col, col2im, batch_copy"));
  EXPECT_EQ(ops.All().size(), 4u);
}

TEST(TileOpRegistryTest, SpecsGoToTheirOperator) {
  const TileOpRegistry& ops = BuiltinTileOps();
  auto copy = ops.ParseSpec("copy:f16:8192,8192");
  ASSERT_TRUE(copy.ok()) << copy.status();
  EXPECT_EQ((*copy)->op_name(), "copy");
  auto im2col = ops.ParseSpec("im2col:f16:64,56,56,64:k=3:p=1");
  ASSERT_TRUE(im2col.ok()) << im2col.status();
  EXPECT_EQ((*ops.For(**im2col))->Describe(**im2col),
            "im2col f16 N64 C64 56x56 k3x3 s1x1 d1x1 p1x1");
  for (const char* bad : {"gemm:f16:4", "copy", "copy:f16:0", "im2col:f16:1,2,3"}) {
    auto status = ops.ParseSpec(bad).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(status.message(), AllOf(HasSubstr(bad), HasSubstr("expected copy:DTYPE:D0,D1,..."),
                                        HasSubstr(" or im2col:DTYPE:N,H,W,C")))
        << bad;
  }
}

// Problem -> spec -> problem keeps the key, over random problems of every operator: the
// misses a workload records (kernels/library.h) are tuned as exactly these problems.
TEST(TileOpRegistryTest, FormattedSpecsReadBackAsTheSameProblem) {
  const TileOpRegistry& ops = BuiltinTileOps();
  std::mt19937_64 random(20261203);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(random);
  };
  const char* dtypes[] = {"f32", "f16", "bf16", "u8", "i8", "f64", "i32"};
  std::vector<std::string> specs = {"copy:f16:8192,8192", "im2col:f16:32,224,224,3:k=7:s=2:p=3",
                                    "col2im:bf16:2,9,11,5:k=3x5:d=1x2:p=1x0"};
  for (int i = 0; i < 200; ++i) {
    const std::string dtype = dtypes[pick(0, 6)];
    if (i % 3 == 0) {
      const int rank = static_cast<int>(pick(1, 3));
      std::vector<std::string> src_shape, dst_shape, src_slices, dst_slices;
      for (int d = 0; d < rank; ++d) {
        const int64_t extent = pick(1, 40);
        const int64_t src_pad = pick(0, 1) ? pick(0, 9) : 0, dst_pad = pick(0, 1) ? pick(0, 9) : 0;
        const int64_t src_at = pick(0, src_pad), dst_at = pick(0, dst_pad);
        src_shape.push_back(std::to_string(extent + src_pad));
        dst_shape.push_back(std::to_string(extent + dst_pad));
        src_slices.push_back(absl::StrCat(src_at, ":", src_at + extent));
        dst_slices.push_back(absl::StrCat(dst_at, ":", dst_at + extent));
      }
      specs.push_back(absl::StrCat("copy:", dtype, ":src=", absl::StrJoin(src_shape, "x"), "[",
                                   absl::StrJoin(src_slices, ","), "]:dst=",
                                   absl::StrJoin(dst_shape, "x"), "[",
                                   absl::StrJoin(dst_slices, ","), "]"));
    } else {
      const int64_t k = pick(1, 5), kw = pick(1, 3), pad = pick(0, std::min(k, kw) - 1);
      specs.push_back(absl::StrCat(i % 3 == 1 ? "im2col:" : "col2im:",
                                   i % 3 == 2 && (dtype != "f16" && dtype != "bf16") ? "f32" : dtype,
                                   ":", pick(1, 4), ",", pick(k, 20), ",", pick(kw, 20), ",",
                                   pick(1, 9), ":k=", k, "x", kw, ":s=", pick(1, 3),
                                   ":p=", pad));
    }
  }
  for (const std::string& spec : specs) {
    absl::StatusOr<std::unique_ptr<TileOp>> op = ops.ParseSpec(spec);
    ASSERT_TRUE(op.ok()) << spec << ": " << op.status();
    absl::StatusOr<std::string> formatted = ops.FormatSpec(**op);
    ASSERT_TRUE(formatted.ok()) << spec << ": " << formatted.status();
    absl::StatusOr<std::unique_ptr<TileOp>> again = ops.ParseSpec(*formatted);
    ASSERT_TRUE(again.ok()) << *formatted << ": " << again.status();
    const TileOpDefinition& definition = **ops.For(**op);
    EXPECT_EQ(tuning::ProblemKey(*definition.ToProblem(**op)),
              tuning::ProblemKey(*definition.ToProblem(**again)))
        << spec << " -> " << *formatted;
  }
  EXPECT_EQ(*ops.FormatSpec(**ops.ParseSpec("copy:f16:8192,8192")), "copy:f16:8192,8192");
  EXPECT_EQ(*ops.FormatSpec(**ops.ParseSpec("im2col:f16:32,224,224,3:k=7:s=2:p=3")),
            "im2col:f16:32,224,224,3:k=7:s=2:p=3");
}

TEST(TileOpRegistryTest, RecordValidatorChecksWhatTheSchemaCannot) {
  const TileOpRegistry& ops = BuiltinTileOps();
  tuning::RecordValidator check = ops.RecordValidator();
  tuning::TuningDatabase database = tuning::TestDatabase(2);
  for (const tuning::TuningRecord& record : database.records()) {
    EXPECT_TRUE(check(record).ok()) << check(record);
  }
  // Not canonical: the strides left out.
  tuning::TuningRecord sparse = database.records(0);
  sparse.mutable_problem()->mutable_copy()->clear_src_strides();
  EXPECT_THAT(Msg(check(sparse)),
              AllOf(HasSubstr("not in canonical form"), HasSubstr("src_strides=[1024,1]")));
  // Not a valid problem of its operator.
  tuning::TuningRecord zero = database.records(0);
  zero.mutable_problem()->mutable_copy()->set_shape(0, 0);
  EXPECT_THAT(Msg(check(zero)), AllOf(HasSubstr("not a valid copy"), HasSubstr("extent 0")));
  // A path of another operator, on the winner or a candidate.
  tuning::TuningRecord im2col = database.records(2);
  im2col.mutable_winner()->mutable_lowering()->set_path("tma");
  EXPECT_THAT(Msg(check(im2col)),
              HasSubstr("winner.lowering.path is \"tma\"; accepted for im2col: \"simt_im2col\", "
                        "\"tma_im2col\""));
  tuning::TuningRecord candidate = database.records(0);
  candidate.mutable_candidates(0)->mutable_variant()->mutable_lowering()->set_path("simt_im2col");
  EXPECT_THAT(Msg(check(candidate)), HasSubstr("candidates[0].lowering.path"));
  // Through the reader: the record and the file are named.
  tuning::TuningDatabase edited = database;
  *edited.mutable_records(1) = sparse;
  edited.set_records_sha256(tuning::RecordsSha256(edited));
  std::string bytes;
  ASSERT_TRUE(edited.SerializeToString(&bytes));
  tuning::ReadOptions options;
  options.semantics = check;
  EXPECT_THAT(std::string(tuning::ParseTuningDatabase(bytes, tuning::DatabaseFormat::kBinary,
                                                      "edited.pb", options)
                              .status()
                              .message()),
              AllOf(HasSubstr("edited.pb"), HasSubstr("record 1"), HasSubstr("canonical")));
}

// Issue 34: merge, bake and the library accepted records no lowering produces and
// statistics no GPU measures; each is refused now, naming the field.
TEST(TileOpRegistryTest, RecordsThatWouldNotLowerOrBreakPhysicsAreRefused) {
  const TileOpRegistry& ops = BuiltinTileOps();
  tuning::RecordValidator semantic = ops.RecordValidator();
  auto check = [&](const tuning::TuningRecord& record) {
    tuning::TuningDatabase database;
    database.set_schema_version(tuning::kCurrentSchemaVersion);
    *database.add_records() = record;
    absl::Status schema = tuning::ValidateTuningDatabase(database, "db");
    return schema.ok() ? semantic(record) : schema;
  };
  const tuning::TuningRecord good = tuning::TestDatabase(1).records(0);
  ASSERT_TRUE(check(good).ok()) << check(good);
  struct Case {
    std::string what;
    std::function<void(tuning::TuningRecord&)> edit;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"threads", [](auto& r) { r.mutable_winner()->mutable_lowering()->set_threads(99999999); },
       "threads=99999999"},
      {"tile", [](auto& r) { r.mutable_winner()->mutable_lowering()->set_tile(0, INT64_MAX); },
       "tile extent 9223372036854775807"},
      {"stages", [](auto& r) { r.mutable_winner()->mutable_lowering()->set_stages(1000); },
       "stages=1000"},
      {"vector", [](auto& r) { r.mutable_winner()->mutable_lowering()->set_vector_bytes(3); },
       "vector_bytes is 3"},
      {"annotation",
       [](auto& r) { (*r.mutable_winner()->mutable_hints()->mutable_annotations())["zzz"] = "1"; },
       "annotation 'zzz'"},
      {"cc_major", [](auto& r) { r.mutable_device()->set_cc_major(1000); },
       "device.cc_major is 1000"},
      {"architecture", [](auto& r) { r.mutable_device()->set_cc_major(3); }, "sm_30"},
      {"median", [](auto& r) { r.mutable_winner_statistics()->set_median_us(1e308); },
       "winner_statistics.median_us is 1e+308"},
      {"ceiling",
       [](auto& r) { r.mutable_winner_statistics()->set_fraction_of_ceiling(1e6); },
       "winner_statistics.fraction_of_ceiling is 1e+06"},
      {"gbps", [](auto& r) { r.mutable_winner_statistics()->set_gbps(1e9); },
       "winner_statistics.gbps is 1e+09"},
      {"sm_count", [](auto& r) { r.mutable_device()->set_sm_count(1 << 20); },
       "device.sm_count is 1048576"},
  };
  for (const Case& c : cases) {
    tuning::TuningRecord record = good;
    c.edit(record);
    EXPECT_THAT(Msg(check(record)), HasSubstr(c.expected)) << c.what;
  }
}

// A record's winner must still lower to the path and form it names: a pixel-row im2col
// launch on a problem of channel-row columns lowers to the planes form, a kernel the record
// never timed. And a column order this reader does not know is refused, naming it.
TEST(TileOpRegistryTest, WinnersThatNowLowerToAnotherFormAreRefused) {
  const TileOpRegistry& ops = BuiltinTileOps();
  tuning::RecordValidator check = ops.RecordValidator();
  auto definition = ops.Find("im2col");
  ASSERT_TRUE(definition.ok()) << definition.status();
  auto op = (*definition)->ParseSpec("f16:8,56,56,64:k=3:p=1");
  ASSERT_TRUE(op.ok()) << op.status();
  const Target target = *Target::Parse("sm_90a");
  const Trial trial = (*definition)->Heuristic(**op, target);
  (*op)->hints = trial.hints;
  auto lowered = (*definition)->Lower(**op, target, trial.launch);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  tuning::TuningRecord record = tuning::TestIm2colRecord(1);
  record.mutable_problem()->set_dtype("f16");
  *record.mutable_winner() = VariantOf(trial.hints, **lowered, std::string(64, 'a'));
  record.clear_candidates();
  auto problem = (*definition)->ToProblem(**op);
  ASSERT_TRUE(problem.ok());
  *record.mutable_problem() = *problem;
  ASSERT_TRUE(check(record).ok()) << check(record);
  tuning::TuningRecord planes = record;
  tuning::Im2colProblem* p = planes.mutable_problem()->mutable_im2col();
  p->set_col_order(tuning::COLUMN_ORDER_CHANNEL_ROWS);
  p->clear_img_strides();
  for (int64_t s : {64 * 56 * 56, 56, 1, 56 * 56}) p->add_img_strides(s);
  EXPECT_THAT(Msg(check(planes)), HasSubstr("lower to simt_im2col/planes"));
  p->set_col_order(static_cast<tuning::ColumnOrder>(7));
  EXPECT_THAT(Msg(check(planes)), HasSubstr("col_order 7"));
}

// Issue 17: a database holding a shape of [INT64_MAX, INT64_MAX], or of rank 2,000,000,
// with a valid checksum, was accepted (a 4 MB input became a 26 MB output).
TEST(TileOpRegistryTest, HugeShapesInARecordAreRefused) {
  const TileOpRegistry& ops = BuiltinTileOps();
  tuning::RecordValidator check = ops.RecordValidator();
  tuning::TuningDatabase database = tuning::TestDatabase(1);
  tuning::TuningRecord huge = database.records(0);
  tuning::CopyProblem* copy = huge.mutable_problem()->mutable_copy();
  copy->set_shape(0, INT64_MAX);
  copy->set_shape(1, INT64_MAX);
  EXPECT_THAT(Msg(check(huge)), HasSubstr("not a valid copy"));
  tuning::TuningRecord deep = database.records(0);
  deep.mutable_problem()->mutable_copy()->clear_shape();
  for (int i = 0; i < 2000000; ++i) deep.mutable_problem()->mutable_copy()->add_shape(1);
  const std::string message = Msg(check(deep));
  EXPECT_THAT(message, HasSubstr("2000000"));
  EXPECT_LT(message.size(), 1000u);
  // Through the reader, checksum and all: the file is refused, naming the record.
  tuning::TuningDatabase edited = database;
  *edited.mutable_records(0) = huge;
  edited.set_records_sha256(tuning::RecordsSha256(edited));
  std::string bytes;
  ASSERT_TRUE(edited.SerializeToString(&bytes));
  tuning::ReadOptions options;
  options.semantics = check;
  EXPECT_FALSE(
      tuning::ParseTuningDatabase(bytes, tuning::DatabaseFormat::kBinary, "huge.pb", options).ok());
}

TEST(TileOpRegistryTest, SchemaOneFilesPassTheChecksAfterTheUpgrade) {
  tuning::ReadOptions options;
  options.semantics = BuiltinTileOps().RecordValidator();
  for (const char* file : {"compiler/tuning_db/testdata/v1_h200_a.txtpb",
                           "compiler/tuning_db/testdata/v1_h200_b.txtpb"}) {
    auto database = tuning::ReadTuningDatabase(file, options);
    ASSERT_TRUE(database.ok()) << database.status();
    for (const tuning::TuningRecord& record : database->records()) {
      // Described by its operator, not by the raw key.
      const std::string described = BuiltinTileOps().DescribeProblem(record.problem());
      EXPECT_TRUE(described.rfind("copy ", 0) == 0 || described.rfind("im2col ", 0) == 0)
          << described;
    }
  }
}

TEST(CandidatesTest, VariantsRoundTripThroughTheDatabase) {
  const TileOpRegistry& ops = BuiltinTileOps();
  auto op = ops.ParseSpec("copy:bf16:512,512");
  ASSERT_TRUE(op.ok());
  const TileOpDefinition& copy = **ops.For(**op);
  Trial trial;
  trial.hints.eviction_policy = EvictionPolicy::kEvictFirst;
  trial.hints.loop_layout = LoopLayout{4, 32};
  trial.hints.annotations["fallback"] = "auto";
  trial.launch.tile = {16, 256};
  trial.launch.threads = 128;
  trial.launch.through_shared = false;
  auto set = BuildCandidates(copy, **op, *Target::Parse("sm_90a"), {trial, trial});
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_EQ(set->candidates.size(), 1u);
  EXPECT_EQ(set->duplicates, 1);
  const tuning::Variant& variant = set->candidates[0].variant;
  EXPECT_EQ(variant.lowering().path(), "sync_simt");
  EXPECT_EQ(variant.lowering().vector_bytes(), 16);
  auto back = TrialOf(variant);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->hints.eviction_policy, EvictionPolicy::kEvictFirst);
  EXPECT_EQ(back->hints.loop_layout, (LoopLayout{4, 32}));
  EXPECT_EQ(back->hints.annotations.at("fallback"), "auto");
  EXPECT_THAT(back->launch.tile, ElementsAre(16, 256));
  EXPECT_FALSE(back->launch.through_shared);
  tuning::Variant broken = variant;
  broken.mutable_hints()->set_eviction_policy("evict_never");
  EXPECT_FALSE(TrialOf(broken).ok());
  broken = variant;
  broken.mutable_lowering()->clear_tile();
  EXPECT_THAT(TrialOf(broken).status().message(), HasSubstr("no tile"));
  // Nothing lowers: the error gives an example.
  trial.launch.threads = 48;
  EXPECT_THAT(Msg(BuildCandidates(copy, **op, *Target::Parse("sm_90a"), {trial}).status()),
              AllOf(HasSubstr("no variant lowers for this copy on sm_90a"),
                    HasSubstr("threads=48")));
}

}  // namespace
}  // namespace tiletune

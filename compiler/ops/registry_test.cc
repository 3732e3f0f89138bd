// The tile-operator registry: names, specs, database problems and the record checks it
// gives the tuning database's readers; and the candidate builder's variant records.
#include "compiler/ops/registry.h"

#include <cstdint>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/ops/candidates.h"
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
  EXPECT_EQ(ops.Names(), "copy, im2col, col2im");
  EXPECT_EQ(RegisterBuiltinTileOps(ops).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ((*ops.Find("col2im"))->name(), "col2im");
  auto missing = ops.Find("transpose");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("accepted are copy, im2col, col2im"));
  EXPECT_EQ(ops.All().size(), 3u);
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

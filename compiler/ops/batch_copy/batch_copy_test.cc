// batch_copy on the CPU: specs, problems and keys; the lowering's choices and refusals;
// every search-space candidate of both forms compiling with NVRTC; the example item
// tables and the reference.
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/codegen_test_util.h"
#include "compiler/ops/batch_copy/batch_copy_definition.h"
#include "compiler/ops/batch_copy/batch_copy_lowering.h"
#include "compiler/ops/batch_copy/batch_copy_op.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/ops/candidates.h"
#include "compiler/tuning_db/tuning_db.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

using ::testing::HasSubstr;

const BatchCopyOp& Batch(const TileOp& op) { return static_cast<const BatchCopyOp&>(op); }

std::vector<int64_t> Entries(const std::vector<uint8_t>& bytes) {
  std::vector<int64_t> out(bytes.size() / 8);
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

TEST(BatchCopyTest, SpecsProblemsAndKeysRoundTrip) {
  const TileOpRegistry& ops = BuiltinTileOps();
  for (const std::string spec : {"batch_copy:f16:1000:16384:src=4096:dst=4096",
                                 "batch_copy:u8:7:100:src=9:dst=7:regions",
                                 "batch_copy:f64:3:5:src=3:dst=3"}) {
    SCOPED_TRACE(spec);
    auto op = ops.ParseSpec(spec);
    ASSERT_TRUE(op.ok()) << op.status();
    auto formatted = ops.FormatSpec(**op);
    ASSERT_TRUE(formatted.ok());
    EXPECT_EQ(*formatted, spec);
    const TileOpDefinition& definition = **ops.For(**op);
    auto problem = definition.ToProblem(**op);
    ASSERT_TRUE(problem.ok());
    auto back = definition.FromProblem(*problem);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(definition.ToProblem(**back)->SerializeAsString(), problem->SerializeAsString());
  }
  // Pools default to the count; the key holds the count's power of two (a launch passes
  // its own count; records are per count).
  auto key = [&](const std::string& spec) {
    auto op = ops.ParseSpec(spec);
    EXPECT_TRUE(op.ok()) << op.status();
    std::string k;
    (*ops.For(**op))->AppendKey(**op, k);
    return k;
  };
  EXPECT_EQ(key("batch_copy:f16:33:512:src=64:dst=64"), key("batch_copy:f16:60:512:src=64:dst=64"));
  EXPECT_NE(key("batch_copy:f16:10:512:src=64:dst=64"), key("batch_copy:f16:60:512:src=64:dst=64"));
  EXPECT_EQ(Batch(**ops.ParseSpec("batch_copy:f32:5:8")).dst_items, 5);
  // The two forms of one shape are two problems (the database's record key tells them
  // apart).
  auto blocks = ops.ParseSpec("batch_copy:u8:8:64");
  auto regions = ops.ParseSpec("batch_copy:u8:8:64:regions");
  ASSERT_TRUE(blocks.ok() && regions.ok());
  EXPECT_NE(tuning::ProblemKey(*(*ops.For(**blocks))->ToProblem(**blocks)),
            tuning::ProblemKey(*(*ops.For(**regions))->ToProblem(**regions)));
}

TEST(BatchCopyTest, BadSpecsNameTheValue) {
  const TileOpRegistry& ops = BuiltinTileOps();
  auto message = [&](const std::string& spec) {
    return std::string(ops.ParseSpec(spec).status().message());
  };
  EXPECT_THAT(message("batch_copy:f16:0:16"), HasSubstr("COUNT (items per launch) '0'"));
  EXPECT_THAT(message("batch_copy:f16:10:x"), HasSubstr("ITEM (elements per item) 'x'"));
  EXPECT_THAT(message("batch_copy:f16:10:16:dst=5"),
              HasSubstr("count (items per launch) 10: accepted are 1 to 5"));
  EXPECT_THAT(message("batch_copy:f16:10:16:ring"), HasSubstr("option 'ring'"));
  EXPECT_THAT(message("batch_copy:f16:10"), HasSubstr("give DTYPE:COUNT:ITEM"));
}

TEST(BatchCopyTest, LoweringPicksVectorsAndRefusesWhatItCannotDo) {
  const Target target = *Target::Parse("sm_90a");
  BatchCopyOp op;
  op.element_type = DataType::kF16;
  op.item = 2048;
  op.count = 100;
  op.src_items = op.dst_items = 128;
  LaunchParams launch;
  launch.tile = {1000};  // 2000 B: 16 B vectors do not divide it
  auto lowered = LowerBatchCopy(op, target, launch);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_EQ(lowered->vector_bytes, 16);
  EXPECT_EQ(lowered->chunks, 3);
  EXPECT_EQ(lowered->num_tiles, 300);
  EXPECT_EQ(lowered->GridSizeForItems(132, 7), 21);
  launch.ctas_per_sm = 2;
  EXPECT_EQ(LowerBatchCopy(op, target, launch)->GridSizeForItems(132, 1000), 264);
  op.item = 2047;  // odd: 2-byte vectors
  launch.tile = {2047};
  EXPECT_EQ(LowerBatchCopy(op, target, launch)->vector_bytes, 2);
  launch.tile = {4096};
  EXPECT_THAT(std::string(LowerBatchCopy(op, target, launch).status().message()),
              HasSubstr("a chunk holds at most the item's 2047 elements"));
  launch.tile = {64};
  launch.stages = 2;
  EXPECT_THAT(std::string(LowerBatchCopy(op, target, launch).status().message()),
              HasSubstr("stages=2"));
  launch.stages = 1;
  op.hints.prefer_instruction = Instruction::kTma;
  EXPECT_THAT(std::string(LowerBatchCopy(op, target, launch).status().message()),
              HasSubstr("batch_copy has one path"));
  op.hints.annotations["fallback"] = "auto";
  EXPECT_TRUE(LowerBatchCopy(op, target, launch).ok());
}

TEST(BatchCopyTest, EverySearchCandidateCompiles) {
  const TileOpRegistry& ops = BuiltinTileOps();
  for (const std::string spec : {"batch_copy:f16:1000:16384:src=4096:dst=4096",
                                 "batch_copy:u8:300:12345:src=400:dst=300:regions",
                                 "batch_copy:f32:64:1000"}) {
    SCOPED_TRACE(spec);
    auto op = ops.ParseSpec(spec);
    ASSERT_TRUE(op.ok());
    const TileOpDefinition& definition = **ops.For(**op);
    for (const std::string arch : {"sm_90a", "sm_80", "sm_120"}) {
      const Target target = *Target::Parse(arch);
      const SearchSpace space = definition.Search(**op, target);
      std::vector<Trial> trials = space.first;
      for (const LaunchParams& launch : space.launches) trials.push_back({Hints{}, launch});
      auto set = BuildCandidates(definition, **op, target, trials);
      ASSERT_TRUE(set.ok()) << set.status();
      EXPECT_GE(set->candidates.size(), 5u);
      // Each distinct source once (launches differing only in grid share one).
      std::set<std::string> compiled;
      for (const Candidate& c : set->candidates) {
        if (!compiled.insert(c.source.text).second) continue;
        EXPECT_FALSE(TestPtx(c.source, arch).empty()) << c.source.text;
      }
    }
  }
}

TEST(BatchCopyTest, ExampleTablesAreValidAndTheReferenceAppliesThem) {
  for (BatchForm form : {BatchForm::kBlocks, BatchForm::kRegions}) {
    BatchCopyOp op;
    op.element_type = DataType::kU8;
    op.form = form;
    op.item = 37;
    op.count = 50;
    op.src_items = 20;
    op.dst_items = 64;
    const std::vector<int64_t> t = Entries(ExampleBatchTable(op, 1));
    EXPECT_EQ(Entries(ExampleBatchTable(op, 1)), t);
    const int fields = BatchEntryBytes(form) / 8;
    ASSERT_EQ(t.size(), static_cast<size_t>(op.count * fields));
    std::vector<uint8_t> src(op.src_items * op.item), dst(op.dst_items * op.item, 0xAB);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7 + 1);
    std::vector<uint8_t> expected = dst;
    std::set<int64_t> slots;
    for (int64_t i = 0; i < op.count; ++i) {
      const int64_t from = t[i * fields], to = t[i * fields + 1];
      const int64_t n = form == BatchForm::kBlocks ? op.item : t[i * fields + 2];
      const int64_t src_at = form == BatchForm::kBlocks ? from * op.item : from;
      const int64_t dst_at = form == BatchForm::kBlocks ? to * op.item : to;
      ASSERT_GE(n, 1);
      ASSERT_LE(src_at + n, op.src_items * op.item);
      ASSERT_LE(dst_at + n, op.dst_items * op.item);
      // Destinations in distinct item slots, so none overlap.
      EXPECT_TRUE(slots.insert(dst_at / op.item).second);
      EXPECT_EQ((dst_at + n - 1) / op.item, dst_at / op.item);
      std::memcpy(expected.data() + dst_at, src.data() + src_at, n);
    }
    const std::vector<uint8_t> table = ExampleBatchTable(op, 1);
    ASSERT_TRUE(BatchCopyReference(op, table.data(), op.count, src.data(), src.size(),
                                   dst.data(), dst.size())
                    .ok());
    EXPECT_EQ(dst, expected) << BatchFormName(form);
  }
}

TEST(BatchCopyTest, TheReferenceSkipsEntriesOutsideThePools) {
  BatchCopyOp op;
  op.element_type = DataType::kF32;
  op.item = 2;
  op.count = 3;
  op.src_items = op.dst_items = 3;
  const std::vector<int64_t> blocks = {0, 1, -1, 0, 2, 3};  // the last two are out of range
  std::vector<uint8_t> src(24), dst(24, 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i + 1);
  ASSERT_TRUE(BatchCopyReference(op, reinterpret_cast<const uint8_t*>(blocks.data()), 3,
                                 src.data(), src.size(), dst.data(), dst.size())
                  .ok());
  std::vector<uint8_t> expected(24, 0);
  std::memcpy(expected.data() + 8, src.data(), 8);
  EXPECT_EQ(dst, expected);
}

}  // namespace
}  // namespace tiletune

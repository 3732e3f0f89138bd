// The copy definition: problems in and out of the database, specs, flags, keys, and the
// search space turned into distinct kernels.
#include "compiler/ops/copy/copy_definition.h"

#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "compiler/ops/candidates.h"
#include "compiler/ops/copy/copy_lowering.h"
#include "compiler/ops/copy/copy_op.h"
#include "compiler/ops/copy/copy_search_space.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

CopyOp Op(DataType dtype, std::vector<int64_t> shape) {
  Buffer src = Buffer::RowMajor("src", dtype, Scope::kGlobal, shape);
  Buffer dst = Buffer::RowMajor("dst", dtype, Scope::kGlobal, shape);
  return CopyOp{Region::Whole(src), Region::Whole(dst)};
}

Target T(const char* arch) { return *Target::Parse(arch); }

TEST(CopyOpTest, ValidatesDtypeAndExtents) {
  Buffer a = Buffer::RowMajor("a", DataType::kF16, Scope::kGlobal, {64, 64});
  Buffer b = Buffer::RowMajor("b", DataType::kF16, Scope::kShared, {1, 64, 64});
  EXPECT_TRUE(ValidateCopyOp({Region::Whole(a), Region::Whole(b)}).ok());
  Buffer c = Buffer::RowMajor("c", DataType::kF32, Scope::kGlobal, {64, 64});
  EXPECT_THAT(ValidateCopyOp({Region::Whole(a), Region::Whole(c)}).message(),
              HasSubstr("one dtype"));
  Buffer d = Buffer::RowMajor("d", DataType::kF16, Scope::kGlobal, {64, 32});
  EXPECT_THAT(ValidateCopyOp({Region::Whole(a), Region::Whole(d)}).message(),
              HasSubstr("extents differ"));
  EXPECT_EQ(SqueezedExtents(Region::Element(a, {3, 4})), (std::vector<int64_t>{1}));
  // A destination whose elements alias (a broadcast stride, or interleaved strides) would
  // have source elements race for one; a broadcast source is fine.
  Buffer broadcast = a;
  broadcast.strides = {0, 1};
  EXPECT_TRUE(ValidateCopyOp({Region::Whole(broadcast), Region::Whole(a)}).ok());
  EXPECT_THAT(ValidateCopyOp({Region::Whole(a), Region::Whole(broadcast)}).message(),
              HasSubstr("its elements alias (a stride of 0 over 64 elements"));
  Buffer interleaved = a;
  interleaved.strides = {32, 1};
  EXPECT_THAT(ValidateCopyOp({Region::Whole(a), Region::Whole(interleaved)}).message(),
              HasSubstr("its elements alias (a stride of 32 over 64 elements within what the "
                        "smaller strides already span, 64)"));
  Buffer transposed = a;
  transposed.strides = {1, 64};
  EXPECT_TRUE(ValidateCopyOp({Region::Whole(a), Region::Whole(transposed)}).ok());
}

TEST(CopyDefinitionTest, ProblemsRoundTripInCanonicalForm) {
  const CopyDefinition copy;
  CopyOp op = Op(DataType::kF16, {200, 256});
  op.src = Region::Box(Buffer::RowMajor("src", DataType::kF16, Scope::kGlobal, {300, 512}),
                       {5, 32}, {200, 256});
  auto problem = copy.ToProblem(op);
  ASSERT_TRUE(problem.ok()) << problem.status();
  EXPECT_EQ(problem->dtype(), "f16");
  EXPECT_THAT(problem->copy().shape(), ElementsAre(200, 256));
  EXPECT_THAT(problem->copy().src_strides(), ElementsAre(512, 1));
  EXPECT_THAT(problem->copy().src_offset(), ElementsAre(5, 32));
  EXPECT_THAT(problem->copy().dst_offset(), ElementsAre(0, 0));
  auto back = copy.FromProblem(*problem);
  ASSERT_TRUE(back.ok()) << back.status();
  const CopyOp& same = static_cast<const CopyOp&>(**back);
  EXPECT_EQ(same.src.buffer.strides, op.src.buffer.strides);
  EXPECT_EQ(same.src.BaseOffsetElements(), op.src.BaseOffsetElements());
  EXPECT_EQ(copy.ToProblem(same)->SerializeAsString(), problem->SerializeAsString());
  tuning::Problem bad = *problem;
  bad.set_dtype("f12");
  EXPECT_FALSE(copy.FromProblem(bad).ok());
  bad = *problem;
  bad.mutable_copy()->add_src_offset(1);
  EXPECT_THAT(copy.FromProblem(bad).status().message(), HasSubstr("3 values for a rank-2"));
  tuning::Problem other;
  other.mutable_im2col();
  EXPECT_THAT(copy.FromProblem(other).status().message(), HasSubstr("'im2col' is not a copy"));
}

TEST(CopyDefinitionTest, RegionsOfDifferentRankRoundTrip) {
  // Extents may differ by unit dimensions; the destination's own extents are kept.
  const CopyDefinition copy;
  const Buffer src = Buffer::RowMajor("src", DataType::kF32, Scope::kGlobal, {1, 64});
  const Buffer dst = Buffer::RowMajor("dst", DataType::kF32, Scope::kGlobal, {64});
  const CopyOp op{Region::Whole(src), Region::Whole(dst)};
  ASSERT_TRUE(copy.Validate(op).ok());
  auto problem = copy.ToProblem(op);
  ASSERT_TRUE(problem.ok()) << problem.status();
  EXPECT_THAT(problem->copy().dst_shape(), ElementsAre(64));
  auto back = copy.FromProblem(*problem);
  ASSERT_TRUE(back.ok()) << back.status();
  const CopyOp& same = static_cast<const CopyOp&>(**back);
  EXPECT_THAT(same.src.extents, ElementsAre(1, 64));
  EXPECT_THAT(same.dst.extents, ElementsAre(64));
  EXPECT_EQ(copy.ToProblem(same)->SerializeAsString(), problem->SerializeAsString());
  EXPECT_THAT(copy.Describe(op), HasSubstr("into [64]"));
  // Same-shape copies leave dst_shape out, so their keys are what they always were.
  EXPECT_TRUE(copy.ToProblem(Op(DataType::kF32, {64}))->copy().dst_shape().empty());
  tuning::Problem bad = *problem;
  bad.mutable_copy()->clear_dst_shape();
  bad.mutable_copy()->add_dst_shape(32);
  EXPECT_THAT(copy.FromProblem(bad).status().message(), HasSubstr("extents differ"));
}

TEST(CopyDefinitionTest, SpecsAndFlags) {
  const CopyDefinition copy;
  auto op = copy.ParseSpec("bf16:16384,16384");
  ASSERT_TRUE(op.ok()) << op.status();
  EXPECT_EQ(copy.Describe(**op), "copy bf16 [16384, 16384]");
  EXPECT_THAT(copy.ParseSpec("f16:0,4").status().message(), HasSubstr("'0' is not an integer"));
  EXPECT_THAT(copy.ParseSpec("f16:4:k=3").status().message(), HasSubstr("no options"));
  EXPECT_THAT(copy.ParseSpec("f12:4").status().message(), HasSubstr("unknown dtype"));
  FlagValues flags = {{"shape", "100,64"}, {"src_shape", "128,64"}, {"src_offset", "20,0"}};
  auto sliced = copy.FromFlags(flags, DataType::kU8, Hints{});
  ASSERT_TRUE(sliced.ok()) << sliced.status();
  EXPECT_EQ(copy.Describe(**sliced), "copy u8 [100, 64] src[20:120, 0:64]");
  flags["src_offset"] = "40,0";
  EXPECT_THAT(copy.FromFlags(flags, DataType::kU8, Hints{}).status().message(),
              HasSubstr("leaves buffer src"));
}

TEST(CopyDefinitionTest, KeysTellOpsApart) {
  const CopyDefinition copy;
  auto key = [&](const CopyOp& op) {
    std::string k;
    copy.AppendKey(op, k);
    return k;
  };
  CopyOp base = Op(DataType::kF16, {64, 64});
  CopyOp other_dtype = Op(DataType::kBF16, {64, 64});
  CopyOp other_shape = Op(DataType::kF16, {64, 65});
  CopyOp hinted = base;
  hinted.hints.disable_tma = true;
  // Offsets are kernel arguments: only the alignment of a region's start enters the key.
  auto sliced = [&](int64_t row, int64_t col) {
    CopyOp op = base;
    op.src = Region::Box(Buffer::RowMajor("src", DataType::kF16, Scope::kGlobal, {200, 128}),
                         {row, col}, {64, 64});
    return op;
  };
  std::set<std::string> keys = {key(base), key(other_dtype), key(other_shape), key(hinted),
                                key(sliced(1, 0))};
  EXPECT_EQ(keys.size(), 5u);
  EXPECT_EQ(key(base), key(Op(DataType::kF16, {64, 64})));
  EXPECT_EQ(key(sliced(1, 0)), key(sliced(100, 8)));  // both starts 16-byte aligned
  EXPECT_NE(key(sliced(1, 0)), key(sliced(1, 1)));    // 2-byte aligned
  EXPECT_EQ(key(sliced(1, 1)), key(sliced(7, 3)));
  EXPECT_NE(key(sliced(1, 1)), key(sliced(1, 2)));    // 4-byte aligned
}

TEST(CopyDefinitionTest, RegionSpecs) {
  const CopyDefinition copy;
  auto op = copy.ParseSpec("f16:src=4096x4096[0:4096,48:4048]:dst=4096x4000");
  ASSERT_TRUE(op.ok()) << op.status();
  EXPECT_EQ(copy.Describe(**op), "copy f16 [4096, 4000] src[0:4096, 48:4048]");
  const CopyOp& c = static_cast<const CopyOp&>(**op);
  EXPECT_THAT(c.src.buffer.shape, ElementsAre(4096, 4096));
  EXPECT_THAT(c.dst.buffer.shape, ElementsAre(4096, 4000));
  auto offsets = copy.Offsets(**op);
  ASSERT_TRUE(offsets.ok());
  EXPECT_EQ(offsets->input_bytes, 96);
  EXPECT_EQ(offsets->output_bytes, 0);
  // Open bounds, an index, a side left out (a dense buffer of the extents), rank 3.
  auto open = copy.ParseSpec("u8:src=8x100x300[2:,3,:250]");
  ASSERT_TRUE(open.ok()) << open.status();
  const CopyOp& o = static_cast<const CopyOp&>(**open);
  EXPECT_THAT(o.src.offsets, ElementsAre(2, 3, 0));
  EXPECT_THAT(o.src.extents, ElementsAre(6, 1, 250));
  EXPECT_THAT(o.dst.buffer.shape, ElementsAre(6, 1, 250));
  auto into = copy.ParseSpec("f32:dst=64x64[8:40,16:48]");
  ASSERT_TRUE(into.ok()) << into.status();
  EXPECT_THAT(static_cast<const CopyOp&>(**into).src.buffer.shape, ElementsAre(32, 32));
  // Round trip through a database problem.
  auto problem = copy.ToProblem(**op);
  ASSERT_TRUE(problem.ok());
  auto back = copy.FromProblem(*problem);
  ASSERT_TRUE(back.ok()) << back.status();
  std::string k1, k2;
  copy.AppendKey(**op, k1);
  copy.AppendKey(**back, k2);
  EXPECT_EQ(k1, k2);
  // Errors name the value.
  EXPECT_THAT(copy.ParseSpec("f16:src=64x64[0:65,0:64]").status().message(),
              HasSubstr("slice '0:65' of dimension 0 is empty or outside the buffer"));
  EXPECT_THAT(copy.ParseSpec("f16:src=64x64[0:8]").status().message(),
              HasSubstr("1 slice(s) for a rank-2 buffer"));
  EXPECT_THAT(copy.ParseSpec("f16:src=64x64[a:8,0:2]").status().message(),
              HasSubstr("slice 'a:8' of dimension 0 has a bound that is not an integer"));
  EXPECT_THAT(copy.ParseSpec("f16:src=64x64:src=64x64").status().message(),
              HasSubstr("src= is given twice"));
  EXPECT_THAT(copy.ParseSpec("f16:src=64x64[0:8,0:8]:dst=9x8").status().message(),
              HasSubstr("extents differ"));
  EXPECT_THAT(copy.ParseSpec("f16:src=64x64:k=3").status().message(),
              HasSubstr("'k=3' is not src=SHAPE[SLICES] or dst=SHAPE[SLICES]"));
  EXPECT_THAT(copy.ParseSpec("f16:src=64x64[0:8,0:8").status().message(),
              HasSubstr("must end the side with ']'"));
}

TEST(CopyDefinitionTest, OffsetsCheckTheRegionsAKeyLeavesOut) {
  const CopyDefinition copy;
  CopyOp op = Op(DataType::kF16, {64, 64});
  op.src = Region::Box(Buffer::RowMajor("src", DataType::kF16, Scope::kGlobal, {100, 64}),
                       {50, 0}, {64, 64});
  EXPECT_THAT(copy.Offsets(op).status().message(), HasSubstr("leaves buffer src"));
}

TEST(CopyDefinitionTest, LoweringNamesItsPaths) {
  const CopyDefinition copy;
  tuning::Lowering lowering;
  for (const char* path : {"tma", "bulk_1d", "cp_async", "sync_simt"}) {
    lowering.set_path(path);
    EXPECT_TRUE(copy.CheckLowering(lowering).ok()) << path;
  }
  lowering.set_path("tma_im2col");
  EXPECT_THAT(copy.CheckLowering(lowering).message(),
              HasSubstr("lowering.path is \"tma_im2col\"; accepted for copy"));
  lowering.set_path("tma");
  lowering.set_form("staged");
  EXPECT_THAT(copy.CheckLowering(lowering).message(), HasSubstr("has no forms"));
  lowering.set_path("sync_simt");
  lowering.set_form("head_tail");
  EXPECT_TRUE(copy.CheckLowering(lowering).ok());
}

TEST(CopySearchSpaceTest, PrunesAndDeduplicates) {
  const CopyDefinition copy;
  const CopyOp op = Op(DataType::kF16, {8192, 8192});
  SearchSpace space = copy.Search(op, T("sm_90a"));
  // The dense tensor merges to 1-D; tensor TMA boxes over its two dimensions are tried too.
  EXPECT_EQ(space.first.size(),
            AllCopyHints().size() * (RepresentativeCopyLaunches({8192 * 8192}, 2, T("sm_90a")).size() + 1));
  std::vector<Trial> all;
  for (const CopyHintChoice& choice : AllCopyHints()) {
    for (const LaunchParams& launch : space.launches) {
      Trial trial{choice.hints, launch};
      if (choice.row_layout) trial.hints.loop_layout = LoopLayout{launch.threads / 32, 32};
      all.push_back(trial);
    }
  }
  auto set = BuildCandidates(copy, op, T("sm_90a"), all);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->enumerated, static_cast<int>(all.size()));
  EXPECT_EQ(set->enumerated,
            set->pruned + set->duplicates + static_cast<int>(set->candidates.size()));
  EXPECT_GT(set->pruned, 0);
  EXPECT_GT(set->duplicates, static_cast<int>(set->candidates.size()));
  std::printf("enumerated %d, pruned %d, duplicates %d, distinct %zu\n", set->enumerated,
              set->pruned, set->duplicates, set->candidates.size());
  // Every kept source is distinct, and every path is represented.
  std::set<std::string> shas;
  std::set<std::string> paths;
  for (const Candidate& c : set->candidates) {
    EXPECT_TRUE(shas.insert(c.source_sha256).second);
    paths.insert(c.lowered->path_name);
    EXPECT_EQ(c.variant.source_sha256(), c.source_sha256);
    EXPECT_EQ(c.variant.lowering().path(), c.lowered->path_name);
    EXPECT_TRUE(copy.CheckLowering(c.variant.lowering()).ok());
  }
  EXPECT_EQ(paths, (std::set<std::string>{"tma", "bulk_1d", "cp_async", "sync_simt"}));
  EXPECT_FALSE(set->pruned_examples.empty());
}

TEST(CopySearchSpaceTest, OlderTargetsOnlyGetTheirPaths) {
  const CopyDefinition copy;
  const CopyOp op = Op(DataType::kF32, {1000, 1000});
  auto set = BuildCandidates(copy, op, T("sm_75"), copy.Search(op, T("sm_75")).first);
  ASSERT_TRUE(set.ok());
  for (const Candidate& c : set->candidates) {
    const auto& lowered = static_cast<const LoweredCopy&>(*c.lowered);
    EXPECT_EQ(lowered.path, CopyPath::kSyncSimt);
    EXPECT_FALSE(lowered.l2_policy.has_value());  // No L2 hints before sm_80.
  }
}

TEST(CopySearchSpaceTest, EvictionHintsMultiplyDistinctKernelsOnlyWhereTheyMatter) {
  const CopyDefinition copy;
  const CopyOp op = Op(DataType::kF16, {4096, 4096});
  auto sm90 = BuildCandidates(copy, op, T("sm_90a"), copy.Search(op, T("sm_90a")).first);
  auto sm75 = BuildCandidates(copy, op, T("sm_75"), copy.Search(op, T("sm_75")).first);
  ASSERT_TRUE(sm90.ok() && sm75.ok());
  int with_policy = 0;
  for (const Candidate& c : sm90->candidates) {
    with_policy += static_cast<const LoweredCopy&>(*c.lowered).l2_policy.has_value();
  }
  EXPECT_GT(with_policy, 0);
  EXPECT_LT(sm75->candidates.size(), sm90->candidates.size());
}

TEST(CopyDefinitionTest, HeuristicLowersAndKeepsTheOpsOwnPreference) {
  const CopyDefinition copy;
  CopyOp op = Op(DataType::kF16, {1000, 1000});
  Trial trial = copy.Heuristic(op, T("sm_90a"));
  EXPECT_EQ(trial.hints.prefer_instruction, Instruction::kSync);
  // A dense tensor is one contiguous run: a 1-D tile of 8 KiB.
  EXPECT_THAT(trial.launch.tile, ElementsAre(4096));
  op.hints = trial.hints;
  EXPECT_TRUE(copy.Lower(op, T("sm_90a"), trial.launch).ok());
  op.hints = Hints{};
  op.hints.annotations["prefer_instruction"] = "tma";
  EXPECT_FALSE(copy.Heuristic(op, T("sm_90a")).hints.prefer_instruction.has_value());
}

}  // namespace
}  // namespace tiletune

#include "compiler/ops/copy/copy_lowering.h"

#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

CopyOp Op(DataType dtype, std::vector<int64_t> shape) {
  Buffer src = Buffer::RowMajor("src", dtype, Scope::kGlobal, shape);
  Buffer dst = Buffer::RowMajor("dst", dtype, Scope::kGlobal, shape);
  return CopyOp{Region::Whole(src), Region::Whole(dst)};
}

LaunchParams Launch(std::vector<int64_t> tile, int threads = 128, int stages = 2,
                    int ctas_per_sm = 0, bool through_shared = true) {
  LaunchParams launch;
  launch.tile = std::move(tile);
  launch.threads = threads;
  launch.stages = stages;
  launch.ctas_per_sm = ctas_per_sm;
  launch.through_shared = through_shared;
  return launch;
}

Target T(const char* arch) { return *Target::Parse(arch); }

std::string Log(const LoweredCopy& l) { return absl::StrJoin(l.decision_log, "\n"); }

TEST(CopyLoweringTest, AutoChainPicksTheBestPathPerArchitecture) {
  struct Case {
    const char* arch;
    CopyPath expected;
  };
  for (const Case& c : {Case{"sm_70", CopyPath::kSyncSimt}, Case{"sm_75", CopyPath::kSyncSimt},
                        Case{"sm_80", CopyPath::kCpAsync}, Case{"sm_89", CopyPath::kCpAsync},
                        Case{"sm_90", CopyPath::kTma}, Case{"sm_90a", CopyPath::kTma},
                        Case{"sm_100a", CopyPath::kTma}}) {
    auto stages1 = LowerCopy(Op(DataType::kF16, {512, 512}), T(c.arch), Launch({32, 64}, 128, 1));
    ASSERT_TRUE(stages1.ok()) << c.arch << stages1.status();
    EXPECT_EQ(stages1->path, c.expected) << c.arch << "\n" << Log(*stages1);
  }
  auto pre_cp_async = LowerCopy(Op(DataType::kF16, {512, 512}), T("sm_75"), Launch({32, 64}, 128, 1));
  EXPECT_THAT(Log(*pre_cp_async), HasSubstr("tma rejected: sm_75 has no TMA"));
  EXPECT_THAT(Log(*pre_cp_async), HasSubstr("cp_async rejected: sm_75 has no cp.async"));
}

TEST(CopyLoweringTest, RaggedTilesTakeTileOriginAddressing) {
  CopyOp op = Op(DataType::kF16, {512, 512});
  op.hints.prefer_instruction = Instruction::kSync;
  auto divides = LowerCopy(op, T("sm_90a"), Launch({32, 64}, 128, 1));
  ASSERT_TRUE(divides.ok()) << divides.status();
  EXPECT_EQ(divides->addressing, SimtAddressing::kPerSlot);
  EXPECT_THAT(Log(*divides), HasSubstr("per-slot addressing: the tile divides the copy"));

  CopyOp ragged = Op(DataType::kF16, {3, 500, 512});
  ragged.hints.prefer_instruction = Instruction::kCpAsync;
  auto moved = LowerCopy(ragged, T("sm_90a"), Launch({4, 32, 64}, 128, 2));
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_EQ(moved->path, CopyPath::kCpAsync);
  EXPECT_EQ(moved->addressing, SimtAddressing::kTileOrigin);
  EXPECT_THAT(Log(*moved), HasSubstr("the last tile moves back to end with the copy along "
                                     "dimension 1 (500 over 32)"));
  EXPECT_THAT(Log(*moved), HasSubstr("bounds tested against the tile's share of the copy "
                                     "along dimension 0 (3 over 4)"));
  EXPECT_THAT(moved->moved_back, ElementsAre(false, true, false));
  // A last tile that would redo more than an eighth of its dimension is tested instead.
  CopyOp short_rows = Op(DataType::kF16, {3, 40, 512});
  short_rows.hints.prefer_instruction = Instruction::kCpAsync;
  auto tested = LowerCopy(short_rows, T("sm_90a"), Launch({4, 32, 64}, 128, 2));
  ASSERT_TRUE(tested.ok()) << tested.status();
  EXPECT_THAT(tested->moved_back, ElementsAre(false, false, false));
  EXPECT_THAT(Log(*tested), HasSubstr("along dimension 0 (3 over 4), 1 (40 over 32)"));

  // The simt_addressing annotation asks for either, whatever the tile.
  ragged.hints.annotations["simt_addressing"] = "per_slot";
  auto pinned = LowerCopy(ragged, T("sm_90a"), Launch({4, 32, 64}, 128, 2));
  ASSERT_TRUE(pinned.ok()) << pinned.status();
  EXPECT_EQ(pinned->addressing, SimtAddressing::kPerSlot);
  EXPECT_THAT(Log(*pinned), HasSubstr("per-slot addressing (simt_addressing=per_slot): each "
                                      "vector located and bounds-tested on its own"));
  op.hints.annotations["simt_addressing"] = "tile_origin";
  auto asked = LowerCopy(op, T("sm_90a"), Launch({32, 64}, 128, 1));
  ASSERT_TRUE(asked.ok()) << asked.status();
  EXPECT_EQ(asked->addressing, SimtAddressing::kTileOrigin);
  op.hints.annotations["simt_addressing"] = "per_vector";
  auto bad = LowerCopy(op, T("sm_90a"), Launch({32, 64}, 128, 1));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("per_slot"));

  // TMA moves whole boxes with the copy engine's own bounds: no addressing to choose.
  auto tma = LowerCopy(Op(DataType::kF16, {3, 500, 512}), T("sm_90a"), Launch({4, 32, 64}, 32, 2));
  ASSERT_TRUE(tma.ok()) << tma.status();
  EXPECT_EQ(tma->path, CopyPath::kTma);
  EXPECT_EQ(tma->addressing, SimtAddressing::kPerSlot);
  EXPECT_THAT(Log(*tma), Not(HasSubstr("addressing")));
}

TEST(CopyLoweringTest, DisableTmaSkipsTheCopyEngine) {
  CopyOp op = Op(DataType::kF16, {512, 512});
  op.hints.disable_tma = true;
  auto lowered = LowerCopy(op, T("sm_90a"), Launch({32, 64}));
  ASSERT_TRUE(lowered.ok());
  EXPECT_EQ(lowered->path, CopyPath::kCpAsync);
  EXPECT_THAT(Log(*lowered), HasSubstr("disable_tma is set"));
}

TEST(CopyLoweringTest, VectorWidthFollowsAlignment) {
  struct Case {
    DataType dtype;
    std::vector<int64_t> shape, tile;
    int expected;
  };
  for (const Case& c : {Case{DataType::kF16, {64, 64}, {8, 64}, 8},
                        Case{DataType::kF16, {64, 60}, {8, 60}, 4},
                        Case{DataType::kF16, {64, 61}, {8, 61}, 1},
                        Case{DataType::kU8, {64, 48}, {8, 48}, 16},
                        Case{DataType::kF64, {64, 64}, {8, 64}, 2},
                        Case{DataType::kF32, {64, 64}, {8, 6}, 2}}) {
    CopyOp op = Op(c.dtype, c.shape);
    op.hints.prefer_instruction = Instruction::kSync;
    auto lowered = LowerCopy(op, T("sm_80"), Launch(c.tile, 32, 1));
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    EXPECT_EQ(lowered->vector_elems, c.expected) << DataTypeName(c.dtype) << " " << c.shape[1];
  }
  CopyOp strided = Op(DataType::kF32, {64, 64});
  strided.src.buffer.strides = {1, 64};  // Column-major source.
  strided.hints.prefer_instruction = Instruction::kSync;
  auto lowered = LowerCopy(strided, T("sm_80"), Launch({8, 64}, 32, 1));
  ASSERT_TRUE(lowered.ok());
  EXPECT_EQ(lowered->vector_elems, 1);
  EXPECT_THAT(Log(*lowered), HasSubstr("strided innermost dimension"));
}

TEST(CopyLoweringTest, CoalescedWidthMustDivideTheLegalWidth) {
  CopyOp op = Op(DataType::kF16, {64, 60});
  op.hints.coalesced_width = 2;
  op.hints.prefer_instruction = Instruction::kSync;
  auto ok = LowerCopy(op, T("sm_80"), Launch({8, 60}, 32, 1));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->vector_elems, 2);
  op.hints.coalesced_width = 8;
  auto bad = LowerCopy(op, T("sm_80"), Launch({8, 60}, 32, 1));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("coalesced_width=8 does not divide"));
  EXPECT_THAT(bad.status().message(), HasSubstr("limited by inner extent 60"));
}

TEST(CopyLoweringTest, TensorMapsDescribeTheRegions) {
  CopyOp op = Op(DataType::kF16, {200, 256});
  op.src = Region::Box(Buffer::RowMajor("src", DataType::kF16, Scope::kGlobal, {300, 512}),
                       {5, 32}, {200, 256});
  op.hints.prefer_instruction = Instruction::kTma;
  auto lowered = LowerCopy(op, T("sm_90a"), Launch({32, 64}, 32, 3));
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  ASSERT_EQ(lowered->tensor_maps.size(), 2u);
  const TensorMapSpec& src = lowered->tensor_maps[0];
  EXPECT_EQ(src.operand, TensorMapSpec::Operand::kInput);
  EXPECT_THAT(src.dims, ElementsAre(256, 200));
  EXPECT_THAT(src.strides_bytes, ElementsAre(1024));
  EXPECT_THAT(src.box, ElementsAre(64, 32));
  // The map starts at the region's start, which the launch passes.
  EXPECT_EQ(src.base_offset_bytes, 0);
  EXPECT_EQ(lowered->input_offset_bytes, (5 * 512 + 32) * 2);
  EXPECT_EQ(lowered->input_span_bytes, (199 * 512 + 256) * 2);
  EXPECT_EQ(lowered->input_align, 16);
  const TensorMapSpec& dst = lowered->tensor_maps[1];
  EXPECT_THAT(dst.strides_bytes, ElementsAre(512));
  EXPECT_EQ(dst.base_offset_bytes, 0);
  EXPECT_EQ(lowered->shared_bytes, 3 * 4096);
  EXPECT_EQ(lowered->barriers, 3);
  EXPECT_EQ(lowered->param_count(), 4);
  EXPECT_EQ(lowered->num_tiles, 7 * 4);
}

TEST(CopyLoweringTest, MisalignedSliceFallsBackFromTma) {
  CopyOp op = Op(DataType::kF16, {200, 256});
  op.src = Region::Box(Buffer::RowMajor("src", DataType::kF16, Scope::kGlobal, {300, 512}),
                       {5, 4}, {200, 256});
  auto lowered = LowerCopy(op, T("sm_90a"), Launch({32, 64}));
  ASSERT_TRUE(lowered.ok());
  EXPECT_EQ(lowered->path, CopyPath::kCpAsync);
  EXPECT_THAT(Log(*lowered), HasSubstr("TMA needs 16-B alignment"));
}

TEST(CopyLoweringTest, SqueezesUnitDimensionsAndFlattensForOneDimensionalTiles) {
  CopyOp op = Op(DataType::kF32, {1, 64, 1, 32});
  auto lowered = LowerCopy(op, T("sm_90a"), Launch({1, 16, 1, 32}, 32, 2));
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_THAT(lowered->extents, ElementsAre(64, 32));
  EXPECT_THAT(lowered->tile, ElementsAre(16, 32));
  auto flat = LowerCopy(op, T("sm_90a"), Launch({512}, 32, 2));
  ASSERT_TRUE(flat.ok());
  EXPECT_EQ(flat->path, CopyPath::kBulk1d);
  EXPECT_THAT(flat->extents, ElementsAre(2048));
  auto bad = LowerCopy(op, T("sm_90a"), Launch({2, 16, 1, 32}));
  EXPECT_THAT(bad.status().message(), HasSubstr("whose extent is 1"));
}

TEST(CopyLoweringTest, MergesDimensionsContiguousOnBothSides) {
  // A dense tensor becomes 1-D.
  CopyOp dense = Op(DataType::kF16, {6, 5, 40});
  auto flat = LowerCopy(dense, T("sm_90a"), Launch({1024}, 128, 1, 0, false));
  ASSERT_TRUE(flat.ok()) << flat.status();
  EXPECT_THAT(flat->extents, ElementsAre(1200));
  EXPECT_THAT(Log(*flat), HasSubstr("merged 5 x 40, 6 x 200 (contiguous in src and dst): [6, 5, 40] -> [1200]"));
  // Whole rows of a larger buffer: the two inner dimensions merge, the outer does not.
  CopyOp rows = Op(DataType::kF16, {4, 8, 64});
  rows.src = Region::Box(Buffer::RowMajor("src", DataType::kF16, Scope::kGlobal, {9, 8, 64}),
                         {0, 0, 0}, {4, 8, 64});
  rows.dst = Region::Box(Buffer::RowMajor("dst", DataType::kF16, Scope::kGlobal, {4, 8, 128}),
                         {0, 0, 0}, {4, 8, 64});
  // src merges both pairs, dst only the outer (its rows are padded to 128): [32, 64].
  auto partial = LowerCopy(rows, T("sm_90a"), Launch({4, 64}, 128, 1, 0, false));
  ASSERT_TRUE(partial.ok()) << partial.status();
  EXPECT_THAT(partial->extents, ElementsAre(32, 64));
  EXPECT_THAT(partial->dst_strides, ElementsAre(128, 1));
  auto unmerged = LowerCopy(rows, T("sm_90a"), Launch({2, 4, 64}, 128, 1, 0, false));
  ASSERT_TRUE(unmerged.ok()) << unmerged.status();
  EXPECT_THAT(unmerged->extents, ElementsAre(4, 8, 64));
  // A tile over the unmerged dimensions keeps them.
  auto kept = LowerCopy(dense, T("sm_90a"), Launch({2, 5, 40}, 128, 1, 0, false));
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_THAT(kept->extents, ElementsAre(6, 5, 40));
  EXPECT_THAT(Log(*kept), HasSubstr("dimensions left unmerged"));
  auto wrong = LowerCopy(dense, T("sm_90a"), Launch({2, 5}, 128, 1, 0, false));
  EXPECT_THAT(wrong.status().message(),
              HasSubstr("has rank 1 (unit dimensions dropped, dimensions contiguous in src and "
                        "dst merged); give 1 tile extents, or 3 to tile [6, 5, 40] unmerged"));
}

TEST(CopyLoweringTest, OddRowsTakeTheHeadTailForm) {
  // f8 [4099, 4097]: one contiguous run of an odd number of bytes.
  CopyOp odd = Op(DataType::kF8E4M3, {4099, 4097});
  odd.hints.prefer_instruction = Instruction::kSync;
  auto lowered = LowerCopy(odd, T("sm_90a"), Launch({16384}, 256, 1, 0, false));
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_TRUE(lowered->head_tail);
  EXPECT_EQ(lowered->form_name, "head_tail");
  EXPECT_EQ(lowered->vector_elems, 16);
  EXPECT_EQ(lowered->row_slots, (15 + 4099 * 4097 + 15) / 16);
  EXPECT_EQ(lowered->num_tiles, (lowered->row_slots + 1023) / 1024);
  EXPECT_EQ(lowered->input_align, 1);
  EXPECT_EQ(lowered->relative_align, 16);
  // A narrower coalesced_width that fits the fixed alignment keeps the plain form.
  odd.hints.coalesced_width = 1;
  auto plain = LowerCopy(odd, T("sm_90a"), Launch({16384}, 256, 1, 0, false));
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(plain->head_tail);
  // Rows of a slice at an odd column: src and dst agree modulo 16 B, row by row.
  CopyOp slice = Op(DataType::kF16, {300, 1000});
  slice.src = Region::Box(Buffer::RowMajor("src", DataType::kF16, Scope::kGlobal, {300, 1024}),
                          {0, 3}, {300, 1000});
  slice.dst = Region::Box(Buffer::RowMajor("dst", DataType::kF16, Scope::kGlobal, {300, 1032}),
                          {0, 11}, {300, 1000});
  auto rows = LowerCopy(slice, T("sm_90a"), Launch({4, 1024}, 256, 1, 0, false));
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_TRUE(rows->head_tail);
  EXPECT_EQ(rows->vector_elems, 8);
  EXPECT_EQ(rows->row_slots, (14 + 2000 + 15) / 16);
  // Starts that agree only modulo 2 B: the shifted form, 16-B slots of dst.
  slice.dst = Region::Box(Buffer::RowMajor("dst", DataType::kF16, Scope::kGlobal, {300, 1032}),
                          {0, 12}, {300, 1000});
  auto shifted = LowerCopy(slice, T("sm_90a"), Launch({4, 1024}, 256, 1, 0, false));
  ASSERT_TRUE(shifted.ok()) << shifted.status();
  EXPECT_TRUE(shifted->shifted);
  EXPECT_EQ(shifted->form_name, "shifted");
  EXPECT_EQ(shifted->vector_elems, 8);
  EXPECT_EQ(shifted->relative_align, 1);
  EXPECT_THAT(Log(*shifted), HasSubstr("starts agree only modulo 2 B"));
  // coalesced_width=1 asks for the plain form's 2-B accesses.
  slice.hints.coalesced_width = 1;
  auto narrow = LowerCopy(slice, T("sm_90a"), Launch({4, 1024}, 256, 1, 0, false));
  ASSERT_TRUE(narrow.ok()) << narrow.status();
  EXPECT_FALSE(narrow->head_tail);
  EXPECT_EQ(narrow->vector_elems, 1);
  slice.hints.coalesced_width.reset();
  // Through shared memory there is no head_tail form.
  auto shared = LowerCopy(odd, T("sm_90a"), Launch({16384}, 256, 1, 0, true));
  ASSERT_TRUE(shared.ok());
  EXPECT_FALSE(shared->head_tail);
}

TEST(CopyLoweringTest, PersistentGridIsCappedByTiles) {
  LaunchParams launch = Launch({32, 64}, 128, 2);
  launch.ctas_per_sm = 2;
  auto lowered = LowerCopy(Op(DataType::kF16, {512, 512}), T("sm_90a"), launch);
  ASSERT_TRUE(lowered.ok());
  EXPECT_EQ(lowered->GridSize(132), 128);  // 16 x 8 tiles < 264 CTAs.
  launch.tile = {8, 64};
  lowered = LowerCopy(Op(DataType::kF16, {512, 512}), T("sm_90a"), launch);
  EXPECT_EQ(lowered->GridSize(132), 264);
  launch.ctas_per_sm = 0;
  lowered = LowerCopy(Op(DataType::kF16, {512, 512}), T("sm_90a"), launch);
  EXPECT_EQ(lowered->GridSize(132), 512);
}

TEST(CopyLoweringTest, OnlyGlobalToGlobalKernels) {
  CopyOp op = Op(DataType::kF16, {64, 64});
  op.dst.buffer.scope = Scope::kShared;
  auto lowered = LowerCopy(op, T("sm_90a"), Launch({32, 64}));
  EXPECT_THAT(lowered.status().message(), HasSubstr("global -> shared"));
}

}  // namespace
}  // namespace tiletune

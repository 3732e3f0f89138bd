// col2im lowering: forms, tiles, vector widths, the stage plan, hints and errors.
#include "compiler/ops/col2im/col2im_lowering.h"

#include <optional>
#include <string>
#include <utility>

#include "compiler/ops/im2col/conv_spec.h"
#include "compiler/ops/im2col/im2col_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

Target T(const char* arch) { return *Target::Parse(arch); }

LaunchParams Launch(int64_t tile_h, int64_t tile_w, bool staged, int threads = 256,
                    int stages = 1) {
  LaunchParams launch;
  launch.tile = {tile_h, tile_w};
  launch.through_shared = staged;
  launch.threads = threads;
  launch.stages = stages;
  return launch;
}

const Im2colGeometry kResnet = G(64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1);
const Im2colGeometry kStem = G(32, 224, 224, 3, 7, 7, 2, 2, 1, 1, 3, 3);

TEST(Col2imLoweringTest, DirectFormTilesTheImage) {
  auto l = LowerCol2im(Col2imOp::Dense(DataType::kF16, kResnet), T("sm_90a"), Launch(1, 32, false));
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->path_name, "simt_col2im");
  EXPECT_EQ(l->form_name, "direct");
  EXPECT_EQ(l->kernel_name, "tt_col2im_direct");
  EXPECT_EQ(l->vector_elems, 8);
  EXPECT_EQ(l->tiles_h, 56);
  EXPECT_EQ(l->tiles_w, 2);
  EXPECT_EQ(l->num_tiles, 64 * 56 * 2);
  EXPECT_EQ(l->items_per_thread, 1);  // 32 pixels x 8 vectors over 256 threads
  EXPECT_EQ(l->shared_bytes, 0);
  EXPECT_EQ(l->input_name, "col");
  EXPECT_EQ(l->output_name, "img");
  const std::string plan = DescribeCol2imPlan(*l);
  EXPECT_THAT(plan, AllOf(HasSubstr("path        simt_col2im (direct form)"),
                          HasSubstr("order       kh ascending, then kw"),
                          HasSubstr("column tail guarded")));
}

TEST(Col2imLoweringTest, StagedFormPlansItsStage) {
  auto l = LowerCol2im(Col2imOp::Dense(DataType::kF16, kStem), T("sm_90a"), Launch(2, 224, true));
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->form_name, "staged");
  // Rows h0, h0+1 are reached by window rows (h0 + 3 - 6) / 2 .. (h0 + 1 + 3) / 2: four.
  EXPECT_EQ(l->stage.rows, 4);
  EXPECT_EQ(l->stage.cols, 112);  // every window column: (223 + 6) / 2 + 1 = 115, OW = 112
  EXPECT_EQ(l->stage.taps_h, 2);
  EXPECT_EQ(l->stage.run_elems, 2 * 7 * 3);
  // 84 bytes from any 2-byte aligned start: at most 7 aligned 16-byte chunks.
  EXPECT_EQ(l->stage.chunks, 7);
  EXPECT_EQ(l->shared_bytes, 4 * 112 * 7 * 16);
  EXPECT_EQ(l->vector_elems, 1);
  EXPECT_THAT(DescribeCol2imPlan(*l), HasSubstr("stage       4 window rows x 112 columns"));
}

TEST(Col2imLoweringTest, SweptFormPlansItsBuffers) {
  auto l = LowerCol2im(Col2imOp::Dense(DataType::kF16, kStem), T("sm_90a"),
                       Launch(8, 224, true, 512, 2));
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->path, Col2imPath::kTmaSwept);
  EXPECT_EQ(l->path_name, "tma_col2im");
  EXPECT_EQ(l->form_name, "swept");
  EXPECT_EQ(l->kernel_name, "tt_col2im_swept");
  EXPECT_EQ(l->instruction, Instruction::kTma);
  EXPECT_EQ(l->barriers, 4);  // a full and an empty mbarrier per buffer
  EXPECT_EQ(l->sweep.cols, 112);
  // 112 matrix rows of 147 f16 starting anywhere in a 128-byte line (TMA keeps the place):
  // 32928 + 127 bytes, 2060 chunks, rounded up to whole lines: 2072.
  EXPECT_EQ(l->sweep.chunks, 2072);
  EXPECT_EQ(l->sweep.buffers, 2);
  EXPECT_EQ(l->shared_bytes, 2 * 2072 * 16);
  // A row's 224 pixels take 224 threads; 512 threads make two bands of 256 (a multiple of
  // 32), each thread one pixel in each of its band's 4 rows: 4 x 3 channels.
  EXPECT_EQ(l->sweep.row_items, 224);
  EXPECT_EQ(l->sweep.row_groups, 2);
  EXPECT_EQ(l->sweep.group_threads, 256);
  EXPECT_EQ(l->sweep.group_rows, 4);
  EXPECT_EQ(l->sweep.per_row, 1);
  EXPECT_EQ(l->sums_per_thread, 12);
  EXPECT_EQ(l->vector_bytes, 16);
  EXPECT_THAT(DescribeCol2imPlan(*l),
              HasSubstr("sweep       2 buffers of 2072 16-byte chunks (one window row, up to "
                        "112 window columns), 2 band(s) of 4 rows x 256 threads"));
  // 256 threads: one band of the 8 rows.
  auto one = LowerCol2im(Col2imOp::Dense(DataType::kF16, kStem), T("sm_90a"),
                         Launch(8, 224, true, 256, 2));
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->sweep.row_groups, 1);
  EXPECT_EQ(one->sums_per_thread, 24);
  // 448 threads over 56-pixel rows could make 7 bands, but 8 rows in bands of 2 are 4
  // bands: 96 threads each (112 rounded down to warps).
  auto four = LowerCol2im(Col2imOp::Dense(DataType::kF16, kStem), T("sm_90a"),
                          Launch(8, 56, true, 448, 2));
  ASSERT_TRUE(four.ok()) << four.status();
  EXPECT_EQ(four->sweep.row_items, 56);
  EXPECT_EQ(four->sweep.group_rows, 2);
  EXPECT_EQ(four->sweep.row_groups, 4);
  EXPECT_EQ(four->sweep.group_threads, 96);
  EXPECT_EQ(four->sweep.per_row, 1);
  // disable_tma (or sm_80) copies with cp.async instead.
  Col2imOp no_tma = Col2imOp::Dense(DataType::kF16, kStem);
  no_tma.hints.disable_tma = true;
  for (auto [op, arch] : {std::pair{no_tma, "sm_90a"},
                          std::pair{Col2imOp::Dense(DataType::kF16, kStem), "sm_80"}}) {
    auto c = LowerCol2im(op, T(arch), Launch(8, 224, true, 512, 2));
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(c->path_name, "cp_async_col2im") << arch;
    EXPECT_EQ(c->instruction, Instruction::kCpAsync);
    EXPECT_EQ(c->barriers, 0);
  }
  // Half the width: the window columns of 112 pixels and the kernel's reach.
  l = LowerCol2im(Col2imOp::Dense(DataType::kF32, kStem), T("sm_90a"),
                  Launch(8, 112, true, 256, 3));
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->sweep.cols, (111 + 6) / 2 + 1);
  EXPECT_EQ(l->sweep.buffers, 3);

  // What the swept form needs, each named: cp.async (sm_75 has none, and the simt path is
  // not pipelined), two stages, the shared buffers, and sums that fit in registers.
  EXPECT_THAT(LowerCol2im(Col2imOp::Dense(DataType::kF16, kStem), T("sm_75"),
                          Launch(8, 224, true, 512, 2))
                  .status()
                  .message(),
              HasSubstr("stages=2: simt_col2im is not pipelined"));
  Col2imOp swept_only = Col2imOp::Dense(DataType::kF16, kStem);
  swept_only.hints.prefer_instruction = Instruction::kCpAsync;
  EXPECT_THAT(LowerCol2im(swept_only, T("sm_75"), Launch(8, 224, true, 512, 2)).status().message(),
              HasSubstr("sm_75 has no cp.async"));
  Col2imOp tma_only = Col2imOp::Dense(DataType::kF16, kStem);
  tma_only.hints.prefer_instruction = Instruction::kTma;
  EXPECT_THAT(LowerCol2im(tma_only, T("sm_80"), Launch(8, 224, true, 512, 2)).status().message(),
              HasSubstr("sm_80 has no TMA"));
  EXPECT_THAT(LowerCol2im(swept_only, T("sm_90a"), Launch(8, 224, true, 512, 1)).status().message(),
              HasSubstr("stages=1: the swept form"));
  EXPECT_THAT(LowerCol2im(swept_only, T("sm_90a"), Launch(8, 224, false, 512, 2)).status().message(),
              HasSubstr("through_shared=false"));
  EXPECT_THAT(LowerCol2im(swept_only, T("sm_90a"), Launch(64, 224, true, 128, 2)).status().message(),
              HasSubstr("f32 sums per thread"));
  // Without a preference, stages=1 keeps the simt forms.
  l = LowerCol2im(Col2imOp::Dense(DataType::kF16, kStem), T("sm_90a"), Launch(2, 224, true));
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->path, Col2imPath::kSimtStaged);
}

TEST(Col2imLoweringTest, TilesAreClippedToTheImage) {
  auto l = LowerCol2im(Col2imOp::Dense(DataType::kF32, G(1, 5, 7, 4, 3, 3)), T("sm_90a"),
                       Launch(64, 64, false));
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->tile_h, 5);
  EXPECT_EQ(l->tile_w, 7);
  EXPECT_EQ(l->num_tiles, 1);
  EXPECT_THAT(DescribeCol2imPlan(*l), HasSubstr("tile clipped to the image"));
}

TEST(Col2imLoweringTest, VectorWidthFollowsCAndTheHint) {
  Col2imOp op = Col2imOp::Dense(DataType::kBF16, G(1, 8, 8, 12, 3, 3));
  auto l = LowerCol2im(op, T("sm_90a"), Launch(1, 8, false));
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->vector_elems, 4);  // C = 12: 8 bytes
  op.hints.coalesced_width = 2;
  l = LowerCol2im(op, T("sm_90a"), Launch(1, 8, false));
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->vector_elems, 2);
  op.hints.coalesced_width = 8;
  EXPECT_THAT(LowerCol2im(op, T("sm_90a"), Launch(1, 8, false)).status().message(),
              HasSubstr("coalesced_width=8"));
  // A padded C stride allows only single elements.
  op.hints.coalesced_width.reset();
  op.img.strides = {8 * 8 * 13, 8 * 13, 13, 1};
  l = LowerCol2im(op, T("sm_90a"), Launch(1, 8, false));
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->vector_elems, 1);
}

TEST(Col2imLoweringTest, PoliciesAndInstructions) {
  Col2imOp op = Col2imOp::Dense(DataType::kF16, kResnet);
  op.hints.annotations["col_eviction_policy"] = "evict_first";
  op.hints.eviction_policy = EvictionPolicy::kEvictLast;
  auto l = LowerCol2im(op, T("sm_90a"), Launch(1, 32, false));
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->col_policy, EvictionPolicy::kEvictFirst);
  EXPECT_EQ(l->img_policy, EvictionPolicy::kEvictLast);
  // No cache hints before sm_80.
  l = LowerCol2im(op, T("sm_75"), Launch(1, 32, false));
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_FALSE(l->col_policy.has_value());
  // col2im has no TMA path: asking for one fails unless fallback=auto.
  op.hints.prefer_instruction = Instruction::kTma;
  EXPECT_FALSE(LowerCol2im(op, T("sm_90a"), Launch(1, 32, false)).ok());
  op.hints.annotations["fallback"] = "auto";
  l = LowerCol2im(op, T("sm_90a"), Launch(1, 32, false));
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->path_name, "simt_col2im");
}

// The planes form reads, for each pixel, the taps reaching it: along an axis, one tap in
// every S / gcd(S, D) of the K, so ceil(K * gcd(S, D) / S). The other forms move vectors
// both ways.
TEST(Col2imLoweringTest, PlanesFormCountsTheReadsOfAPixel) {
  auto reads = [](const Im2colGeometry& g) {
    Col2imOp op = Col2imOp::Dense(DataType::kF16, g);
    op.order = ColumnOrder::kChannelRows;
    auto lowered = LowerCol2im(op, T("sm_90a"), Launch(4, 64, false));
    EXPECT_TRUE(lowered.ok()) << lowered.status();
    return lowered.ok() ? lowered->gather_reads : std::nullopt;
  };
  EXPECT_EQ(reads(G(2, 20, 20, 3, 3, 3, 1, 1, 1, 1, 1, 1)), 9);    // 3x3 stride 1
  EXPECT_EQ(reads(G(2, 32, 32, 3, 16, 16, 16, 16, 1, 1, 0, 0)), 1);  // patches
  EXPECT_EQ(reads(G(2, 32, 30, 3, 7, 3, 2, 3, 1, 1, 3, 0)), 4);      // 4 of 7 rows, 1 of 3 columns
  // kh = 2 dilated 3 at stride 2: only one of the two taps has the pixel's parity.
  EXPECT_EQ(reads(G(2, 20, 20, 3, 2, 2, 2, 2, 3, 3, 0, 0)), 1);
  // Dilation 2 at stride 2: both taps share a parity.
  EXPECT_EQ(reads(G(2, 20, 20, 3, 2, 1, 2, 1, 2, 1, 0, 0)), 2);
  auto direct = LowerCol2im(Col2imOp::Dense(DataType::kF16, kResnet), T("sm_90a"),
                            Launch(1, 16, false));
  ASSERT_TRUE(direct.ok()) << direct.status();
  EXPECT_EQ(direct->gather_reads, std::nullopt);
  EXPECT_EQ(direct->warp_load_sectors, std::nullopt);
}

// through_shared gives the planes_staged form: tiles of whole rows of one plane, a stage
// holding every tap's run of the window rows that reach the tile.
TEST(Col2imLoweringTest, PlanesStagedFormPlansItsStage) {
  // F.fold of a 3x3 stride-1 pad-1 window: rows [8, 16) are reached by window rows [7, 17).
  Col2imOp op = Col2imOp::Dense(DataType::kF16, G(2, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1));
  op.order = ColumnOrder::kChannelRows;
  op.img.strides = {64 * 56 * 56, 56, 1, 56 * 56};  // NCHW
  auto l = LowerCol2im(op, T("sm_90a"), Launch(8, 56, true));
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->form_name, "planes_staged");
  EXPECT_EQ(l->kernel_name, "tt_col2im_planes_staged");
  EXPECT_EQ(l->tiles_h, 7);
  EXPECT_EQ(l->num_tiles, 2 * 64 * 7);
  EXPECT_EQ(l->stage_rows, 10);
  EXPECT_EQ(l->shared_bytes, 9 * 10 * 56 * 2 + 256 * 16);  // the stage, each warp's vectors
  EXPECT_EQ(l->vector_elems, 8);
  EXPECT_EQ(l->gather_reads, 9);
  // Patches (k = s = 16): a tile of 16 rows is one window row; of 20 rows, two.
  Col2imOp patches = Col2imOp::Dense(DataType::kBF16, G(2, 32, 32, 3, 16, 16, 16, 16, 1, 1, 0, 0));
  patches.order = ColumnOrder::kChannelRows;
  auto p16 = LowerCol2im(patches, T("sm_90a"), Launch(16, 32, true));
  ASSERT_TRUE(p16.ok()) << p16.status();
  EXPECT_EQ(p16->stage_rows, 1);
  auto p20 = LowerCol2im(patches, T("sm_90a"), Launch(20, 32, true));
  ASSERT_TRUE(p20.ok()) << p20.status();
  EXPECT_EQ(p20->stage_rows, 2);
  // Part rows, and a stage larger than shared memory, are refused with the reason.
  auto part = LowerCol2im(op, T("sm_90a"), Launch(8, 32, true));
  ASSERT_FALSE(part.ok());
  EXPECT_NE(part.status().message().find("stages whole rows"), std::string::npos) << part.status();
  Col2imOp wide = Col2imOp::Dense(DataType::kF32, G(1, 64, 4096, 1, 7, 7, 1, 1, 1, 1, 3, 3));
  wide.order = ColumnOrder::kChannelRows;
  auto big = LowerCol2im(wide, T("sm_90a"), Launch(64, 4096, true));
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("shared"), std::string::npos) << big.status();
}

// The patches form: tiles of kernel rows x window rows of one plane, one span of the
// taps' matrix rows where a tile takes every window row (16-byte loads where the span's
// bytes allow them), runs otherwise (as wide as the window rows allow); refused, with the
// reasons, where the windows do not tile a dense NCHW image exactly.
TEST(Col2imLoweringTest, PatchesFormTilesKernelRowsAndWindowRows) {
  Col2imOp vit = Col2imOp::Dense(DataType::kF16, G(2, 224, 224, 3, 16, 16, 16, 16, 1, 1, 0, 0));
  vit.img.strides = NchwStrides(vit.geometry);
  vit.order = ColumnOrder::kChannelRows;
  vit.hints.annotations["planes_gather"] = "patches";
  auto whole = LowerCol2im(vit, T("sm_90a"), Launch(4, 14, false));
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->path, Col2imPath::kSimtPatches);
  EXPECT_EQ(whole->kernel_name, "tt_col2im_patches");
  EXPECT_EQ(whole->num_tiles, 2 * 3 * 4);
  EXPECT_EQ(whole->tile_h, 4 * 14);  // image rows a tile stores
  EXPECT_EQ(whole->shared_bytes, 4 * 16 * 14 * 14 * 2);
  EXPECT_EQ(whole->patch_load_elems, 8);  // spans of 16 x 196 f16: 16-byte loads
  EXPECT_EQ(whole->vector_elems, 8);
  EXPECT_EQ(whole->gather_reads, 1);
  EXPECT_FALSE(whole->warp_load_sectors.has_value());  // neighbouring vectors
  EXPECT_THAT(DescribeCol2imPlan(*whole), HasSubstr("one contiguous span"));
  // Bands of 5 window rows (3 tiles of them, the last of 4): runs of 5 x 14 elements from
  // row starts 392 bytes apart, so 4-byte loads; kernel rows clipped to KH.
  auto bands = LowerCol2im(vit, T("sm_90a"), Launch(32, 5, false));
  ASSERT_TRUE(bands.ok()) << bands.status();
  EXPECT_EQ(bands->patch_rows, 16);
  EXPECT_EQ(bands->num_tiles, 2 * 3 * 3);
  EXPECT_EQ(bands->patch_load_elems, 2);
  EXPECT_THAT(DescribeCol2imPlan(*bands), HasSubstr("runs of 70 elements"));
  // A stage beyond shared memory is refused with the reason.
  auto big = LowerCol2im(vit, T("sm_90a"), Launch(16, 14, false));
  ASSERT_TRUE(big.ok()) << big.status();  // 16 x 16 x 196 f16: 100 KB fits sm_90's 227
  Col2imOp f32 = vit;
  f32.img.dtype = DataType::kF32;
  auto too_big = LowerCol2im(f32, T("sm_80"), Launch(16, 14, false));
  ASSERT_FALSE(too_big.ok());
  EXPECT_THAT(too_big.status().message(), HasSubstr("shared"));
  // A 3x3 stride-1 padded window overlaps: refused, naming each reason.
  Col2imOp overlap = Col2imOp::Dense(DataType::kF16, G(2, 14, 14, 8, 3, 3, 1, 1, 1, 1, 1, 1));
  overlap.img.strides = NchwStrides(overlap.geometry);
  overlap.order = ColumnOrder::kChannelRows;
  overlap.hints.annotations["planes_gather"] = "patches";
  auto refused = LowerCol2im(overlap, T("sm_90a"), Launch(1, 14, false));
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              AllOf(HasSubstr("planes_gather=patches"), HasSubstr("kernel 3x3 differs from stride 1x1"),
                    HasSubstr("padding 1x1"), HasSubstr("planes_gather=element")));
  // Patches that leave a row or column of the image over, and an NHWC image.
  Col2imOp ragged = Col2imOp::Dense(DataType::kF16, G(1, 17, 16, 3, 4, 4, 4, 4, 1, 1, 0, 0));
  ragged.img.strides = NchwStrides(ragged.geometry);
  ragged.order = ColumnOrder::kChannelRows;
  EXPECT_THAT(PatchesBlocker(ragged), HasSubstr("image 17x16 is not whole 4x4 windows"));
  ragged.img.strides = {17 * 16 * 3, 16 * 3, 3, 1};
  EXPECT_THAT(PatchesBlocker(ragged), HasSubstr("not dense NCHW"));
  EXPECT_EQ(PatchesBlocker(vit), "");
  // The hint asks for a channel_rows form: pixel-row columns refuse it, naming why.
  Col2imOp nhwc = Col2imOp::Dense(DataType::kF16, G(2, 32, 32, 3, 16, 16, 16, 16, 1, 1, 0, 0));
  nhwc.hints.annotations["planes_gather"] = "patches";
  auto pixel_rows = LowerCol2im(nhwc, T("sm_90a"), Launch(1, 32, false));
  ASSERT_FALSE(pixel_rows.ok());
  EXPECT_THAT(pixel_rows.status().message(), HasSubstr("channel_rows columns (F.fold's layout) only"));
  nhwc.hints.annotations["planes_gather"] = "element";
  EXPECT_TRUE(LowerCol2im(nhwc, T("sm_90a"), Launch(1, 32, false)).ok());
}

// The planes form's warp loads (thread j sums vector j's pixels, loading each pixel's window
// positions), walked into 32-byte sectors per instruction, here where they can be counted
// by hand.
TEST(Col2imLoweringTest, PlanesFormWalksItsWarpsLoads) {
  auto sectors = [](const Im2colGeometry& g, int width) {
    Col2imOp op = Col2imOp::Dense(DataType::kF16, g);
    op.order = ColumnOrder::kChannelRows;
    op.img.strides = NchwStrides(g);  // F.fold's layout: a plane's rows side by side
    op.hints.coalesced_width = width;
    auto lowered = LowerCol2im(op, T("sm_90a"), Launch(4, 64, false));
    EXPECT_TRUE(lowered.ok()) << lowered.status();
    return lowered.ok() ? lowered->warp_load_sectors.value_or(-1) : -1;
  };
  // A 1x1 window: a pixel loads its own column. Vectors of 8: a warp is 4 image rows of 8
  // threads 16 B apart, 4 sectors a row; vectors of 1: 32 threads 2 B apart, 2 sectors.
  const Im2colGeometry pointwise = G(2, 64, 64, 3, 1, 1, 1, 1, 1, 1, 0, 0);
  EXPECT_EQ(sectors(pointwise, 8), 16);
  EXPECT_EQ(sectors(pointwise, 1), 2);
  // 2x2 patches: with vectors of 1, neighbouring pixels take alternate taps, two matrix rows
  // of 16 threads 2 B apart, a sector each (a stride of a vector over SW would say one).
  const Im2colGeometry patches = G(2, 64, 64, 3, 2, 2, 2, 2, 1, 1, 0, 0);
  EXPECT_EQ(sectors(patches, 1), 2);
  // Vectors of 8: instruction e takes tap column e % 2 at window column 4j + e / 2: 8 threads
  // 8 B apart on each of 4 image rows, 2 sectors a row.
  EXPECT_EQ(sectors(patches, 8), 8);
  // A 1x65 window (too wide to unroll: the loop form), 1-element vectors. The middle of 3
  // tiles holds pixels w = 64..95, and at window step j each sums tap 64 - j at window column
  // w - 64 + j: 32 neighbouring elements from element j of a 256-byte aligned matrix row, 2
  // sectors at j = 0 and 3 after; walked over the first 8 steps.
  EXPECT_DOUBLE_EQ(sectors(G(1, 1, 192, 1, 1, 65, 1, 1, 1, 1, 0, 0), 1), (2 + 3 * 7) / 8.0);
}

TEST(Col2imLoweringTest, ErrorsNameTheValue) {
  const Col2imOp op = Col2imOp::Dense(DataType::kF16, kResnet);
  LaunchParams launch = Launch(1, 32, false);
  launch.tile = {4};
  EXPECT_THAT(LowerCol2im(op, T("sm_90a"), launch).status().message(),
              HasSubstr("give two extents, tile_h and tile_w"));
  launch = Launch(1, 32, false);
  launch.stages = 2;
  EXPECT_THAT(LowerCol2im(op, T("sm_90a"), launch).status().message(),
              HasSubstr("stages=2: simt_col2im is not pipelined"));
  // A stage too large for shared memory: very wide kernel rows.
  const Col2imOp wide = Col2imOp::Dense(DataType::kF32, G(1, 64, 4000, 4, 8, 4000, 1, 1, 1, 1, 0, 0));
  EXPECT_THAT(LowerCol2im(wide, T("sm_90a"), Launch(8, 64, true)).status().message(),
              HasSubstr("shared"));
  Col2imOp u8 = op;
  u8.img.dtype = DataType::kU8;
  EXPECT_THAT(LowerCol2im(u8, T("sm_90a"), Launch(1, 32, false)).status().message(),
              HasSubstr("accepted are f32, f16, bf16"));
  Col2imOp aliased = op;
  aliased.img.strides = {56 * 56 * 64, 56 * 64, 32, 1};  // pixels overlap
  EXPECT_THAT(LowerCol2im(aliased, T("sm_90a"), Launch(1, 32, false)).status().message(),
              HasSubstr("share an address"));
}

}  // namespace
}  // namespace tiletune

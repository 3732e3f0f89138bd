// Code generation for `im2col`, checked without a GPU: golden sources, the instructions
// each path must contain in its PTX, every hint combination compiling through NVRTC for
// sm_80 and sm_90a, and hint neutrality.
//
// Regenerate the goldens with:
//   TILETUNE_UPDATE_GOLDENS=1 bazel run //compiler/ops/im2col:im2col_codegen_test
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/base/sha256.h"
#include "compiler/codegen/codegen_test_util.h"
#include "compiler/cuda/nvrtc_compilation_provider.h"
#include "compiler/ops/im2col/conv_spec.h"
#include "compiler/ops/im2col/im2col_emitter.h"
#include "compiler/ops/im2col/im2col_lowering.h"
#include "compiler/ops/im2col/im2col_op.h"
#include "compiler/ops/im2col/im2col_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Asymmetric everything: 3x2 kernel, stride 2x1, dilation 1x2, pad 1x1; M = 120, K = 384.
Im2colGeometry Asymmetric(int64_t c = 64) { return G(2, 11, 10, c, 3, 2, 2, 1, 1, 2, 1, 1); }

LaunchParams Launch(int64_t block_m, int64_t block_k, int threads, int stages, int ctas = 0) {
  LaunchParams launch;
  launch.tile = {block_m, block_k};
  launch.threads = threads;
  launch.stages = stages;
  launch.ctas_per_sm = ctas;
  return launch;
}

Target T(const char* arch) { return *Target::Parse(arch); }

std::string Ptx(const LoweredIm2col& lowered) {
  return TestPtx(EmitIm2colKernel(lowered), lowered.target.ArchName());
}

struct GoldenCase {
  std::string name;
  Im2colOp op;
  Target target;
  LaunchParams launch;
  Im2colPath path;
};

std::vector<GoldenCase> GoldenCases() {
  Im2colOp resnet = Im2colOp::Dense(DataType::kF16, G(64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1));
  resnet.hints.prefer_instruction = Instruction::kTma;
  Im2colOp tma = Im2colOp::Dense(DataType::kBF16, Asymmetric(48));
  tma.hints.prefer_instruction = Instruction::kTma;
  tma.hints.annotations = {{"img_eviction_policy", "evict_last"},
                           {"col_eviction_policy", "evict_first"}};
  Im2colOp simt = Im2colOp::Dense(DataType::kF16, Asymmetric(24));
  simt.hints.prefer_instruction = Instruction::kSync;
  Im2colOp odd = Im2colOp::Dense(DataType::kU8, G(3, 7, 9, 3, 2, 3, 1, 2, 2, 1, 0, 2));
  odd.hints.loop_layout = LoopLayout{16, 4};
  Im2colOp strided = Im2colOp::Dense(DataType::kF32, G(2, 9, 9, 8, 3, 3, 2, 2, 1, 1, 1, 1));
  strided.img.strides = {9 * 10 * 8, 10 * 8, 8, 1};  // One pixel of padding per row.
  strided.hints.eviction_policy = EvictionPolicy::kEvictFirst;
  // The ResNet stem: C=3 allows one element along C; whole-row tiles take the flat form.
  Im2colOp stem = Im2colOp::Dense(DataType::kF16, G(2, 32, 32, 3, 7, 7, 2, 2, 1, 1, 3, 3));
  stem.hints.annotations = {{"img_eviction_policy", "evict_last"},
                            {"col_eviction_policy", "evict_first"}};
  // The staged form's other gather and prefetch, by annotation.
  Im2colOp phase = stem;
  phase.hints.annotations["staged_gather"] = "phase";
  phase.hints.annotations["img_prefetch"] = "all";
  Im2colOp table_all = stem;
  table_all.hints.annotations["img_prefetch"] = "all";
  // F.unfold's layout: an NCHW image into channel_rows columns.
  Im2colOp unfold = Im2colOp::Dense(DataType::kF16, G(64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1));
  unfold.img.strides = {64 * 56 * 56, 56, 1, 56 * 56};
  unfold.order = ColumnOrder::kChannelRows;
  unfold.hints.annotations = {{"img_eviction_policy", "evict_last"},
                              {"col_eviction_policy", "evict_first"}};
  Im2colOp unfold_odd = Im2colOp::Dense(DataType::kU8, G(3, 7, 9, 3, 2, 3, 1, 2, 2, 1, 0, 2));
  unfold_odd.order = ColumnOrder::kChannelRows;
  Im2colOp unfold_span = unfold;
  unfold_span.hints.annotations[kPlanesGatherKey] = "span";
  Im2colOp unfold_shared = unfold;
  unfold_shared.hints.annotations[kPlanesGatherKey] = "shared";
  Im2colOp unfold_shared_runs = unfold;
  unfold_shared_runs.hints.annotations[kPlanesGatherKey] = "shared_runs";
  // ViT's patchify of C3 with the row form's vectors along a kernel row (16 B).
  Im2colOp patchify = Im2colOp::Dense(DataType::kF16, G(2, 224, 224, 3, 16, 16, 16, 16, 1, 1, 0, 0));
  patchify.hints.prefer_instruction = Instruction::kSync;
  patchify.hints.annotations[kRowVectorKey] = "window_row";
  // F.unfold of a ViT's 16x16 patches by the patches form, over every window row.
  Im2colOp unfold_patches =
      Im2colOp::Dense(DataType::kF16, G(2, 224, 224, 3, 16, 16, 16, 16, 1, 1, 0, 0));
  unfold_patches.img.strides = NchwStrides(unfold_patches.geometry);
  unfold_patches.order = ColumnOrder::kChannelRows;
  unfold_patches.hints.annotations[kPlanesGatherKey] = "patches";
  unfold_patches.hints.annotations["col_eviction_policy"] = "evict_first";
  return {
      {"im2col_simt_f16_unfold_planes_patches", unfold_patches, T("sm_90a"),
       Launch(2, 14, 256, 1), Im2colPath::kSimtPlanes},
      {"im2col_simt_f16_patchify_window_row", patchify, T("sm_90a"), Launch(14, 768, 256, 1),
       Im2colPath::kSimtRow},
      {"im2col_simt_f16_unfold_planes", unfold, T("sm_90a"), Launch(3, 3136, 256, 1),
       Im2colPath::kSimtPlanes},
      {"im2col_simt_f16_unfold_planes_span", unfold_span, T("sm_90a"), Launch(3, 3136, 256, 1),
       Im2colPath::kSimtPlanes},
      {"im2col_simt_f16_unfold_planes_shared", unfold_shared, T("sm_90a"),
       Launch(18, 8 * 56, 256, 1), Im2colPath::kSimtPlanes},
      {"im2col_simt_f16_unfold_planes_shared_runs", unfold_shared_runs, T("sm_90a"),
       Launch(18, 8 * 56, 256, 1), Im2colPath::kSimtPlanes},
      {"im2col_simt_u8_unfold_planes_part_rows", unfold_odd, T("sm_75"), Launch(2, 4, 64, 1),
       Im2colPath::kSimtPlanes},
      // 63 whole rows of 147 elements: the run allows no store wider than C does, so this
      // tile keeps the row form (the name is older than the forms' names).
      {"im2col_simt_f16_stem_flat", stem, T("sm_90a"), Launch(63, 147, 256, 1),
       Im2colPath::kSimtRow},
      // Staged: on sm_90a its boxes fill by bulk copies; on sm_80 by the threads' loads.
      {"im2col_simt_f16_stem_staged", stem, T("sm_90a"), Launch(16, 147, 256, 1),
       Im2colPath::kSimtStaged},
      {"im2col_simt_f16_stem_staged_sm80", stem, T("sm_80"), Launch(16, 147, 256, 1),
       Im2colPath::kSimtStaged},
      {"im2col_simt_f16_stem_staged_prefetch_all", table_all, T("sm_90a"),
       Launch(16, 147, 256, 1), Im2colPath::kSimtStaged},
      {"im2col_simt_f16_stem_staged_phase", phase, T("sm_90a"), Launch(16, 147, 512, 1),
       Im2colPath::kSimtStaged},
      {"im2col_tma_f16_resnet", resnet, T("sm_90a"), Launch(128, 64, 32, 2), Im2colPath::kTma},
      {"im2col_tma_bf16_asymmetric_evict", tma, T("sm_90a"), Launch(64, 96, 32, 3, 2),
       Im2colPath::kTma},
      {"im2col_simt_f16_asymmetric", simt, T("sm_80"), Launch(32, 48, 128, 1),
       Im2colPath::kSimtRow},
      {"im2col_simt_u8_odd_layout", odd, T("sm_75"), Launch(16, 32, 64, 1), Im2colPath::kSimtRow},
      {"im2col_simt_f32_strided_evict_first", strided, T("sm_86"), Launch(64, 32, 256, 1, 2),
       Im2colPath::kSimtRow},
  };
}

TEST(Im2colCodegenTest, GoldenSources) {
  for (const GoldenCase& c : GoldenCases()) {
    auto lowered = LowerIm2col(c.op, c.target, c.launch);
    ASSERT_TRUE(lowered.ok()) << c.name << ": " << lowered.status();
    ASSERT_EQ(lowered->path, c.path) << c.name << "\n" << DescribeIm2colPlan(*lowered);
    const std::string text = EmitIm2colKernel(*lowered).text;
    ExpectMatchesGolden("compiler/ops/im2col/testdata", c.name, text,
                        "//compiler/ops/im2col:im2col_codegen_test");
    ExpectGuardedLoadsTakeSafeAddresses(text, c.name);
  }
}

TEST(Im2colCodegenTest, GoldensCompile) {
  for (const GoldenCase& c : GoldenCases()) {
    auto lowered = LowerIm2col(c.op, c.target, c.launch);
    ASSERT_TRUE(lowered.ok());
    CompileOptions options;
    options.arch = c.target.ArchName();
    auto cubin = TestCompiler().CompileToCubin(EmitIm2colKernel(*lowered), options);
    EXPECT_TRUE(cubin.ok()) << c.name << ": " << cubin.status();
  }
}

TEST(Im2colCodegenTest, TmaPtxHoldsTheIm2colLoadAndTileStore) {
  Im2colOp op = Im2colOp::Dense(DataType::kF16, Asymmetric());
  op.hints.prefer_instruction = Instruction::kTma;
  auto lowered = LowerIm2col(op, T("sm_90a"), Launch(64, 128, 32, 3));
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  ASSERT_EQ(lowered->path, Im2colPath::kTma);
  std::string ptx = Ptx(*lowered);
  EXPECT_THAT(ptx, HasSubstr("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::"
                             "complete_tx::bytes ["));
  EXPECT_THAT(ptx, HasSubstr("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group ["));
  EXPECT_THAT(ptx, HasSubstr("mbarrier.init.shared::cta.b64"));
  EXPECT_THAT(ptx, HasSubstr("mbarrier.arrive.expect_tx.shared::cta.b64"));
  EXPECT_THAT(ptx, HasSubstr("mbarrier.try_wait.parity.shared::cta.b64"));
  EXPECT_THAT(ptx, HasSubstr("cp.async.bulk.wait_group.read 1"));
  EXPECT_THAT(ptx, HasSubstr("cp.async.bulk.commit_group"));
  EXPECT_THAT(ptx, Not(HasSubstr("createpolicy")));
  EXPECT_THAT(ptx, Not(HasSubstr("ld.global")));
  // The im2col offsets are 16-bit operands in braces after the barrier.
  EXPECT_THAT(ptx, testing::ContainsRegex(
                       R"(\.im2col\.mbarrier::complete_tx::bytes \[%r[0-9]+\], \[%rd[0-9]+, )"
                       R"(\{%r[0-9]+, %r[0-9]+, %r[0-9]+, %r[0-9]+\}\], \[%r[0-9]+\], )"
                       R"(\{%rs[0-9]+, %rs[0-9]+\};)"));

  // Eviction policies: loads and stores each with their own.
  op.hints.annotations = {{"img_eviction_policy", "evict_last"},
                          {"col_eviction_policy", "evict_first"}};
  lowered = LowerIm2col(op, T("sm_90a"), Launch(64, 128, 32, 3));
  ASSERT_TRUE(lowered.ok());
  ptx = Ptx(*lowered);
  EXPECT_THAT(ptx, HasSubstr("createpolicy.fractional.L2::evict_last.b64"));
  EXPECT_THAT(ptx, HasSubstr("createpolicy.fractional.L2::evict_first.b64"));
  EXPECT_THAT(ptx, HasSubstr(".im2col.mbarrier::complete_tx::bytes.L2::cache_hint ["));
  EXPECT_THAT(ptx, HasSubstr("tile.bulk_group.L2::cache_hint ["));
  // Only the loads.
  op.hints.annotations = {{"img_eviction_policy", "evict_first"}};
  lowered = LowerIm2col(op, T("sm_90a"), Launch(64, 128, 32, 1));
  ASSERT_TRUE(lowered.ok());
  ptx = Ptx(*lowered);
  EXPECT_THAT(ptx, HasSubstr(".im2col.mbarrier::complete_tx::bytes.L2::cache_hint ["));
  EXPECT_THAT(ptx, Not(HasSubstr("tile.bulk_group.L2::cache_hint")));
  EXPECT_THAT(ptx, HasSubstr("cp.async.bulk.wait_group.read 0"));
}

TEST(Im2colCodegenTest, FlatFormStoresWideVectorsOfWholeRows) {
  Im2colOp op = Im2colOp::Dense(DataType::kF16, G(2, 32, 32, 3, 7, 7, 2, 2, 1, 1, 3, 3));
  for (auto [block_m, store] : std::vector<std::pair<int64_t, std::string>>{
           {40, "st.global.v4.u32"}, {2, "st.global.u32"}, {1, "st.global.u16"}}) {
    auto lowered = LowerIm2col(op, T("sm_90a"), Launch(block_m, 160, 128, 1));
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    EXPECT_EQ(lowered->path, block_m == 1 ? Im2colPath::kSimtRow : Im2colPath::kSimtFlat)
        << block_m;
    if (block_m > 1) {
      EXPECT_EQ(lowered->flat_vector_elems, block_m == 2 ? 2 : 8) << block_m;
    }
    std::string ptx = Ptx(*lowered);
    EXPECT_THAT(ptx, HasSubstr(store)) << block_m;
    EXPECT_THAT(ptx, HasSubstr("ld.global.nc.u16")) << block_m;
    EXPECT_NE(lowered->path, Im2colPath::kSimtStaged) << block_m;  // not whole output rows
  }
  // Whole output rows stage the input (image rows are 192 B, 16-byte aligned): on sm_90a
  // by bulk copies with an L2 prefetch ahead, under disable_tma with 16-byte loads.
  auto staged = LowerIm2col(op, T("sm_90a"), Launch(32, 147, 128, 1));
  ASSERT_TRUE(staged.ok()) << staged.status();
  EXPECT_EQ(staged->path, Im2colPath::kSimtStaged);
  EXPECT_EQ(staged->form_name, "staged");
  EXPECT_EQ(staged->box.rows_per_tile, 2);
  EXPECT_EQ(staged->box.load_bytes, 16);
  EXPECT_EQ(staged->box.pixels, 15 * 2 + 6 + 1);
  EXPECT_TRUE(staged->box.bulk_fill);
  EXPECT_EQ(staged->barriers, 1);
  const std::string bulk_ptx = Ptx(*staged);
  EXPECT_THAT(bulk_ptx, HasSubstr("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx"));
  EXPECT_THAT(bulk_ptx, HasSubstr("cp.async.bulk.prefetch.L2.global"));
  EXPECT_THAT(bulk_ptx, HasSubstr("mbarrier.try_wait.parity"));
  EXPECT_THAT(bulk_ptx, Not(HasSubstr("ld.global.nc.v4.u32")));
  Im2colOp no_tma = op;
  no_tma.hints.disable_tma = true;
  auto loads = LowerIm2col(no_tma, T("sm_90a"), Launch(32, 147, 128, 1));
  ASSERT_TRUE(loads.ok()) << loads.status();
  EXPECT_EQ(loads->path, Im2colPath::kSimtStaged);
  EXPECT_FALSE(loads->box.bulk_fill);
  EXPECT_EQ(loads->barriers, 0);
  const std::string loads_ptx = Ptx(*loads);
  EXPECT_THAT(loads_ptx, HasSubstr("ld.global.nc.v4.u32"));
  EXPECT_THAT(loads_ptx, Not(HasSubstr("cp.async.bulk")));
  // A tile narrower than K keeps the row form; so do the hints that shape it.
  auto narrow = LowerIm2col(op, T("sm_90a"), Launch(64, 64, 128, 1));
  ASSERT_TRUE(narrow.ok());
  EXPECT_EQ(narrow->path, Im2colPath::kSimtRow);
  op.hints.coalesced_width = 1;
  auto hinted = LowerIm2col(op, T("sm_90a"), Launch(16, 147, 128, 1));
  ASSERT_TRUE(hinted.ok()) << hinted.status();
  EXPECT_EQ(hinted->path, Im2colPath::kSimtRow);
}

TEST(Im2colCodegenTest, StagedFlatFormCompilesForEveryDtypeAndEdge) {
  struct Shape {
    Im2colGeometry g;
    int64_t rows;            // output rows per tile
    int64_t staged_from_bytes;  // narrowest element that stages
  };
  std::vector<Shape> shapes = {
      {G(2, 32, 32, 3, 7, 7, 2, 2, 1, 1, 3, 3), 1, 1},   // the stem
      {G(1, 9, 7, 5, 3, 2, 2, 1, 1, 3, 0, 0), 2, 1},     // no padding, dilation
      {G(3, 5, 6, 5, 4, 5, 3, 2, 1, 3, 2, 11), 3, 1},    // padding wider than the image
      {G(2, 10, 1, 4, 2, 4, 2, 3, 2, 2, 2, 3), 1, 1},    // one-pixel-wide image, K = 32
      // OW = 1 and K = 42: a 4-byte vector of 1-byte elements repeats every 2 rows, which
      // does not divide OW, so those stay unstaged; wider elements stage.
      {G(2, 10, 1, 7, 2, 3, 2, 3, 2, 2, 2, 2), 1, 2},
      // Rows of 34 pixels whose windows reach 33: box rows copied in 4-byte (f16) loads end
      // in elements loaded one at a time.
      {G(2, 34, 34, 3, 3, 3, 2, 2, 1, 1, 0, 0), 1, 1},
  };
  int tails = 0;  // kernels whose box rows end in elements loaded one at a time
  for (DataType dtype : AllDataTypes()) {
    const int64_t e = DataTypeBytes(dtype);
    for (const Shape& shape : shapes) {
      Im2colOp op = Im2colOp::Dense(dtype, shape.g);
      op.hints.annotations = {{"img_eviction_policy", "evict_last"}};
      LaunchParams launch = Launch(shape.g.OW() * shape.rows, shape.g.K() + 3, 128, 1);
      auto lowered = LowerIm2col(op, T("sm_90a"), launch);
      ASSERT_TRUE(lowered.ok()) << lowered.status();
      std::string name = absl::StrCat(DataTypeName(dtype), " ", Im2colGeometryToString(shape.g));
      const std::string text = EmitIm2colKernel(*lowered).text;
      ExpectGuardedLoadsTakeSafeAddresses(text, name);
      tails += absl::StrContains(text, "The copy's last elements") ? 1 : 0;
      if (lowered->path == Im2colPath::kSimtRow) continue;  // C allows full vectors.
      if (e < shape.staged_from_bytes) {
        EXPECT_EQ(lowered->path, Im2colPath::kSimtFlat) << name;
        continue;
      }
      ASSERT_EQ(lowered->path, Im2colPath::kSimtStaged) << name << "\n"
                                                       << DescribeIm2colPlan(*lowered);
      ASSERT_EQ(lowered->box.rows_per_tile, shape.rows) << name;
      const LoweredIm2col::InputBox& box = lowered->box;
      // Column iw = 0 of every box row starts on a load boundary.
      EXPECT_EQ(((box.lead_elems + shape.g.pw * shape.g.c) * e) % box.load_bytes, 0) << name;
      EXPECT_EQ(box.pitch_elems * e % box.load_bytes, 0) << name;
      EXPECT_EQ(box.offset_bytes % 16, 0) << name;
      // The vector's pattern repeats within an output row.
      EXPECT_GE(box.vector_elems * e, 4) << name;
      EXPECT_EQ(box.period_rows * shape.g.K() % box.vector_elems, 0) << name;
      EXPECT_EQ(shape.g.OW() % box.period_rows, 0) << name;
      std::string ptx = Ptx(*lowered);
      const char* unit = e == 1 ? "ld.shared.u8" : e == 2 ? "ld.shared.u16" : "ld.shared.b32";
      EXPECT_THAT(ptx, HasSubstr(unit)) << name;
      EXPECT_THAT(ptx, HasSubstr(box.vector_elems * e == 16  ? "st.global.v4.u32"
                                 : box.vector_elems * e == 8 ? "st.global.v2.u32"
                                                             : "st.global.u32"))
          << name;
      EXPECT_THAT(ptx, HasSubstr("createpolicy.fractional.L2::evict_last.b64")) << name;
      if (box.load_bytes == 1) {
        // A byte-wide box load lands as one byte (a 16-bit store at an odd address faults);
        // 16-bit stores are then the table's only.
        EXPECT_TRUE(absl::StrContains(ptx, "st.shared.u8")) << name;
        if (box.entry_bytes == 4) {
          EXPECT_FALSE(absl::StrContains(ptx, "st.shared.u16")) << name;
        }
      }
    }
  }
  EXPECT_GT(tails, 0);  // the check above covered a box-row tail
}

// The planes form's span gather compiles for every element size, stride 1 and 2, with and
// without padding, and every vector it takes: 16-B block loads, its registers never
// spilled to local memory (the shift's word selects are not indexed at run time).
TEST(Im2colCodegenTest, SpanGatherCompilesForEveryDtypeAndStride) {
  int compiled = 0;
  for (DataType dtype : AllDataTypes()) {
    for (const Im2colGeometry& g : {G(2, 12, 40, 3, 3, 3, 1, 1, 1, 1, 1, 1),
                                    G(2, 12, 40, 3, 4, 4, 2, 2, 1, 1, 1, 1),
                                    G(1, 9, 33, 2, 2, 3, 1, 2, 2, 1, 0, 0)}) {
      for (std::optional<int> width : std::vector<std::optional<int>>{std::nullopt, 2, 4}) {
        Im2colOp op = Im2colOp::Dense(dtype, g);
        op.img.strides = {g.c * g.h * g.w, g.w, 1, g.h * g.w};
        op.order = ColumnOrder::kChannelRows;
        op.hints.coalesced_width = width;
        op.hints.annotations[kPlanesGatherKey] = "span";
        auto lowered = LowerIm2col(op, T("sm_90a"), Launch(16, g.OH() * g.OW(), 128, 1));
        if (!lowered.ok()) {  // a width the run does not allow
          EXPECT_THAT(std::string(lowered.status().message()), HasSubstr("coalesced_width="));
          continue;
        }
        const std::string name = absl::StrCat(DataTypeName(dtype), " ", Im2colGeometryToString(g),
                                              " width ", width.value_or(0));
        if (!lowered->span_gather) {
          EXPECT_THAT(absl::StrJoin(lowered->decision_log, "\n"),
                      HasSubstr("planes_gather=span not taken"))
              << name;
          continue;
        }
        const std::string ptx = Ptx(*lowered);
        EXPECT_THAT(ptx, HasSubstr("ld.global.nc.v4.u32")) << name;
        EXPECT_FALSE(absl::StrContains(ptx, "ld.local")) << name;
        EXPECT_FALSE(absl::StrContains(ptx, "st.local")) << name;
        ++compiled;
      }
    }
  }
  EXPECT_GE(compiled, 20);
}

// The shared gather compiles for every element size at tiles of whole planes, whole and
// banded output rows: its box is the only shared memory, nothing spills.
TEST(Im2colCodegenTest, SharedGatherCompilesForEveryDtype) {
  int compiled = 0;
  for (DataType dtype : AllDataTypes()) {
    for (const Im2colGeometry& g : {G(2, 12, 40, 3, 3, 3, 1, 1, 1, 1, 1, 1),
                                    G(2, 12, 40, 3, 4, 4, 2, 2, 1, 1, 1, 1),
                                    G(1, 9, 33, 2, 2, 3, 1, 2, 2, 1, 0, 0)}) {
      for (int64_t band : {g.OH(), int64_t{2}}) {
        Im2colOp op = Im2colOp::Dense(dtype, g);
        op.img.strides = {g.c * g.h * g.w, g.w, 1, g.h * g.w};
        op.order = ColumnOrder::kChannelRows;
        op.hints.annotations[kPlanesGatherKey] = "shared";
        auto lowered = LowerIm2col(op, T("sm_90a"), Launch(2 * g.kh * g.kw, band * g.OW(), 128, 1));
        ASSERT_TRUE(lowered.ok()) << lowered.status();
        const std::string name = absl::StrCat(DataTypeName(dtype), " ", Im2colGeometryToString(g),
                                              " band ", band);
        ASSERT_TRUE(lowered->shared_gather) << name << absl::StrJoin(lowered->decision_log, "\n");
        const std::string ptx = Ptx(*lowered);
        EXPECT_FALSE(absl::StrContains(ptx, "ld.local")) << name;
        EXPECT_FALSE(absl::StrContains(ptx, "st.local")) << name;
        ++compiled;
      }
    }
  }
  EXPECT_GE(compiled, 20);
}

TEST(Im2colCodegenTest, StagedTableHoldsSixteenBitOffsetsWhenTheyFit) {
  // The stem: 7 box rows of 1392 B, so 16-bit offsets, two per table word.
  Im2colOp stem = Im2colOp::Dense(DataType::kF16, G(2, 224, 224, 3, 7, 7, 2, 2, 1, 1, 3, 3));
  auto narrow = LowerIm2col(stem, T("sm_90a"), Launch(112, 147, 256, 1));
  ASSERT_TRUE(narrow.ok()) << narrow.status();
  EXPECT_EQ(narrow->box.entry_bytes, 2);
  EXPECT_EQ(narrow->box.period_rows, 8);
  EXPECT_EQ(narrow->box.period_vectors, 147);
  EXPECT_EQ(narrow->box.offset_bytes, 147 * 8 * 2);
  EXPECT_THAT(Ptx(*narrow), HasSubstr("ld.shared.v4.u32"));  // one vector's 8 offsets
  // 3 box rows of 2050 f32 pixels (72 KiB): 32-bit offsets.
  Im2colOp wide = Im2colOp::Dense(DataType::kF32, G(1, 4, 2048, 3, 3, 3, 1, 1, 1, 1, 1, 1));
  auto lowered = LowerIm2col(wide, T("sm_90a"), Launch(2048, 27, 256, 1));
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  ASSERT_EQ(lowered->path, Im2colPath::kSimtStaged) << DescribeIm2colPlan(*lowered);
  ASSERT_EQ(lowered->box.rows_per_tile, 1);
  EXPECT_EQ(lowered->box.entry_bytes, 4);
  EXPECT_EQ(lowered->box.offset_bytes, 27 * 4 * 4);
  EXPECT_THAT(Ptx(*lowered), HasSubstr("ld.shared.b32"));
}

TEST(Im2colCodegenTest, SimtPtxVectorizesAndHonoursEviction) {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    Im2colOp op = Im2colOp::Dense(DataType::kF16, Asymmetric());
    op.hints.prefer_instruction = Instruction::kSync;
    auto lowered = LowerIm2col(op, T(arch), Launch(32, 64, 128, 1));
    ASSERT_TRUE(lowered.ok());
    std::string ptx = Ptx(*lowered);
    EXPECT_THAT(ptx, HasSubstr("ld.global.nc.v4.u32")) << arch;
    EXPECT_THAT(ptx, HasSubstr("st.global.v4.u32")) << arch;
    EXPECT_THAT(ptx, Not(HasSubstr("createpolicy"))) << arch;
    op.hints.annotations = {{"img_eviction_policy", "evict_last"},
                            {"col_eviction_policy", "evict_first"}};
    lowered = LowerIm2col(op, T(arch), Launch(32, 64, 128, 1));
    ASSERT_TRUE(lowered.ok());
    ptx = Ptx(*lowered);
    EXPECT_THAT(ptx, HasSubstr("createpolicy.fractional.L2::evict_last.b64")) << arch;
    EXPECT_THAT(ptx, HasSubstr("createpolicy.fractional.L2::evict_first.b64")) << arch;
    EXPECT_THAT(ptx, HasSubstr("ld.global.nc.L2::cache_hint.v4.u32")) << arch;
    EXPECT_THAT(ptx, HasSubstr("st.global.L2::cache_hint.v4.u32")) << arch;
    // Store-only policy.
    op.hints.annotations = {{"col_eviction_policy", "evict_first"}};
    lowered = LowerIm2col(op, T(arch), Launch(32, 64, 128, 1));
    ASSERT_TRUE(lowered.ok());
    ptx = Ptx(*lowered);
    EXPECT_THAT(ptx, HasSubstr("ld.global.nc.v4.u32")) << arch;
    EXPECT_THAT(ptx, HasSubstr("st.global.L2::cache_hint.v4.u32")) << arch;
  }
  // Narrow vectors for odd channel counts.
  Im2colOp odd = Im2colOp::Dense(DataType::kF16, Asymmetric(5));
  auto lowered = LowerIm2col(odd, T("sm_80"), Launch(32, 40, 128, 1));
  ASSERT_TRUE(lowered.ok());
  EXPECT_EQ(lowered->vector_elems, 1);
  EXPECT_THAT(Ptx(*lowered), HasSubstr("ld.global.nc.u16"));
}

// Every combination of the hints, as keywords, plus the im2col eviction annotations.
std::vector<Hints> AllHintCombinations() {
  std::vector<Hints> all;
  std::vector<std::optional<int>> widths = {std::nullopt, 1, 2, 4, 8, 16};
  std::vector<std::optional<EvictionPolicy>> policies = {
      std::nullopt, EvictionPolicy::kEvictNormal, EvictionPolicy::kEvictFirst,
      EvictionPolicy::kEvictLast};
  std::vector<std::optional<Instruction>> instructions = {std::nullopt, Instruction::kTma,
                                                          Instruction::kCpAsync, Instruction::kSync};
  std::vector<std::optional<LoopLayout>> layouts = {std::nullopt, LoopLayout{4, 32}};
  std::vector<std::map<std::string, std::string>> annotations = {
      {},
      {{"fallback", "auto"}},
      {{"img_eviction_policy", "evict_last"}, {"col_eviction_policy", "evict_first"}},
      {{"col_eviction_policy", "evict_first"}, {"fallback", "auto"}},
  };
  for (auto width : widths) {
    for (bool disable_tma : {false, true}) {
      for (auto policy : policies) {
        for (auto instruction : instructions) {
          for (auto layout : layouts) {
            for (const auto& annotation : annotations) {
              Hints hints;
              hints.coalesced_width = width;
              hints.disable_tma = disable_tma;
              hints.eviction_policy = policy;
              hints.prefer_instruction = instruction;
              hints.loop_layout = layout;
              hints.annotations = annotation;
              all.push_back(hints);
            }
          }
        }
      }
    }
  }
  return all;
}

TEST(Im2colCodegenTest, EveryValidHintCombinationCompiles) {
  std::set<std::string> compiled;
  std::set<bool> paths;  // TMA or SIMT
  int valid = 0, rejected = 0;
  for (const char* arch : {"sm_80", "sm_90a"}) {
    for (const LaunchParams& launch : {Launch(64, 64, 128, 1), Launch(64, 64, 128, 2, 2)}) {
      for (const Hints& hints : AllHintCombinations()) {
        Im2colOp op = Im2colOp::Dense(DataType::kF16, Asymmetric());
        op.hints = hints;
        auto lowered = LowerIm2col(op, T(arch), launch);
        if (!lowered.ok()) {
          ++rejected;
          EXPECT_EQ(lowered.status().code(), absl::StatusCode::kInvalidArgument);
          continue;
        }
        ++valid;
        paths.insert(IsSimt(lowered->path));
        CudaSource source = EmitIm2colKernel(*lowered);
        if (!compiled.insert(absl::StrCat(arch, Sha256Hex(source.text))).second) continue;
        CompileOptions options;
        options.arch = arch;
        auto cubin = TestCompiler().CompileToCubin(source, options);
        ASSERT_TRUE(cubin.ok()) << HintsToString(lowered->hints) << " on " << arch << ": "
                                << cubin.status() << "\n"
                                << source.text;
      }
    }
  }
  EXPECT_EQ(paths.size(), 2u);
  EXPECT_GT(valid, 1000);
  EXPECT_GT(rejected, 0);
  EXPECT_GT(compiled.size(), 20u);
  EXPECT_LT(compiled.size(), static_cast<size_t>(valid) / 10);
}

TEST(Im2colCodegenTest, AnnotationsGiveTheSameKernelAsKeywords) {
  Im2colOp keywords = Im2colOp::Dense(DataType::kF16, Asymmetric());
  keywords.hints.prefer_instruction = Instruction::kSync;
  keywords.hints.eviction_policy = EvictionPolicy::kEvictLast;
  keywords.hints.coalesced_width = 4;
  Im2colOp annotated = Im2colOp::Dense(DataType::kF16, Asymmetric());
  annotated.hints.prefer_instruction = Instruction::kTma;  // Overridden below.
  annotated.hints.annotations = {{"prefer_instruction", "sync"},
                                 {"img_eviction_policy", "evict_last"},
                                 {"col_eviction_policy", "evict_last"},
                                 {"coalesced_width", "4"}};
  auto a = LowerIm2col(keywords, T("sm_90a"), Launch(64, 64, 128, 1));
  auto b = LowerIm2col(annotated, T("sm_90a"), Launch(64, 64, 128, 1));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(EmitIm2colKernel(*a).text, EmitIm2colKernel(*b).text);
}

// A hint the target has no use for leaves the kernel byte-identical.
TEST(Im2colCodegenTest, HintNeutrality) {
  int checked = 0;
  for (const std::string& arch : Target::KnownArchs()) {
    Target target = T(arch.c_str());
    for (const LaunchParams& launch : {Launch(64, 64, 128, 1), Launch(64, 64, 128, 2)}) {
      Im2colOp base = Im2colOp::Dense(DataType::kF16, Asymmetric());
      auto plain = LowerIm2col(base, target, launch);
      if (!plain.ok()) continue;
      std::string reference = EmitIm2colKernel(*plain).text;
      std::vector<Hints> neutral;
      if (!target.HasTma()) {
        Hints disable;
        disable.disable_tma = true;
        neutral.push_back(disable);
        Hints prefer_tma;
        prefer_tma.prefer_instruction = Instruction::kTma;
        prefer_tma.annotations["fallback"] = "auto";
        neutral.push_back(prefer_tma);
      }
      if (!target.HasL2CacheHints()) {
        for (EvictionPolicy p : {EvictionPolicy::kEvictNormal, EvictionPolicy::kEvictFirst,
                                 EvictionPolicy::kEvictLast}) {
          Hints evict;
          evict.eviction_policy = p;
          neutral.push_back(evict);
          Hints sides;
          sides.annotations = {{"img_eviction_policy", EvictionPolicyName(p)},
                               {"col_eviction_policy", "evict_first"}};
          neutral.push_back(sides);
        }
      }
      Hints normal;
      normal.eviction_policy = EvictionPolicy::kEvictNormal;
      neutral.push_back(normal);
      Hints normal_sides;
      normal_sides.annotations = {{"img_eviction_policy", "evict_normal"},
                                  {"col_eviction_policy", "evict_normal"}};
      neutral.push_back(normal_sides);
      // im2col has no cp.async path: with fallback=auto the preference changes nothing.
      Hints cp_async;
      cp_async.prefer_instruction = Instruction::kCpAsync;
      cp_async.annotations["fallback"] = "auto";
      if (IsSimt(plain->path)) neutral.push_back(cp_async);
      if (plain->path == Im2colPath::kTma) {
        // Thread layout and vector width mean nothing to the copy engine.
        Hints simt_only;
        simt_only.loop_layout = LoopLayout{2, 64};
        simt_only.coalesced_width = 2;
        neutral.push_back(simt_only);
      }
      for (const Hints& hints : neutral) {
        Im2colOp op = base;
        op.hints = hints;
        auto lowered = LowerIm2col(op, target, launch);
        ASSERT_TRUE(lowered.ok()) << arch << ": " << lowered.status();
        EXPECT_EQ(EmitIm2colKernel(*lowered).text, reference)
            << arch << " with " << HintsToString(lowered->hints);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 30);
}

}  // namespace
}  // namespace tiletune

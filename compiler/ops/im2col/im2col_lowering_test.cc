// im2col geometry validation, hint resolution, path choice and fallback, TMA box corners
// and descriptor specs, all without a GPU.
#include "compiler/ops/im2col/im2col_lowering.h"

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/ops/im2col/conv_spec.h"
#include "compiler/ops/im2col/im2col_op.h"
#include "compiler/ops/im2col/im2col_search_space.h"
#include "compiler/ops/im2col/im2col_test_util.h"
#include "compiler/target/target.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

Target T(const char* arch) { return *Target::Parse(arch); }

LaunchParams Launch(int64_t block_m, int64_t block_k, int threads = 128, int stages = 1,
                    int ctas = 0) {
  LaunchParams launch;
  launch.tile = {block_m, block_k};
  launch.threads = threads;
  launch.stages = stages;
  launch.ctas_per_sm = ctas;
  return launch;
}

Im2colGeometry Resnet() { return G(64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1); }

TEST(Im2colGeometryTest, OutputExtentsAndMatrixShape) {
  Im2colGeometry g = Resnet();
  EXPECT_EQ(g.OH(), 56);
  EXPECT_EQ(g.OW(), 56);
  EXPECT_EQ(g.M(), 64 * 56 * 56);
  EXPECT_EQ(g.K(), 9 * 64);
  // Asymmetric: kh=3 kw=5, stride 2x1, dilation 1x2, pad 2x3.
  g = G(2, 11, 13, 8, 3, 5, 2, 1, 1, 2, 2, 3);
  EXPECT_EQ(g.OH(), (11 + 4 - 2 - 1) / 2 + 1);  // 7
  EXPECT_EQ(g.OW(), (13 + 6 - 8 - 1) / 1 + 1);  // 11
  EXPECT_EQ(g.K(), 3 * 5 * 8);
  // A window that does not fit has no output.
  EXPECT_EQ(G(1, 2, 2, 1, 5, 1).OH(), 0);
  EXPECT_TRUE(ValidateIm2colGeometry(Resnet()).ok());
}

struct BadGeometry {
  Im2colGeometry geometry;
  std::vector<std::string> needles;
};

TEST(Im2colGeometryTest, RejectsEveryInvalidGeometryWithAClearMessage) {
  std::vector<BadGeometry> bad = {
      {G(0, 8, 8, 4, 3, 3), {"n=0", "batch size must be positive"}},
      {G(-1, 8, 8, 4, 3, 3), {"n=-1", "accepted are 1"}},
      {G(1, 0, 8, 4, 3, 3), {"h=0", "height"}},
      {G(1, 8, 0, 4, 3, 3), {"w=0", "width"}},
      {G(1, 8, 8, 0, 3, 3), {"c=0", "channel"}},
      {G(1, 8, 8, 4, 0, 3), {"kh=0", "--kernel"}},
      {G(1, 8, 8, 4, 3, -2), {"kw=-2", "--kernel"}},
      {G(1, 8, 8, 4, 3, 3, 0, 1), {"sh=0", "--stride"}},
      {G(1, 8, 8, 4, 3, 3, 1, -1), {"sw=-1", "--stride"}},
      {G(1, 8, 8, 4, 3, 3, 1, 1, 0, 1), {"dh=0", "--dilation"}},
      {G(1, 8, 8, 4, 3, 3, 1, 1, 1, 0), {"dw=0", "--dilation"}},
      {G(1, 8, 8, 4, 3, 3, 1, 1, 1, 1, -1, 0), {"ph=-1", "--pad", "zero or more"}},
      {G(1, 8, 8, 4, 3, 3, 1, 1, 1, 1, 0, -3), {"pw=-3", "--pad"}},
      {G(1, 8, 8, 4, 3, 3, 1, 1, 1, 1, 3, 0), {"ph=3", "effective kernel", "0 to 2"}},
      {G(1, 8, 8, 4, 3, 3, 1, 1, 1, 1, 0, 4), {"pw=4", "effective kernel"}},
      {G(1, 8, 8, 4, 3, 3, 1, 1, 2, 1, 5, 0), {"ph=5", "dh=2", "effective kernel (kh-1)*dh+1 = 5"}},
      {G(1, 8, 8, 4, 1, 1, 1, 1, 1, 1, 1, 0), {"ph=1", "kh=1", "0 to 0"}},
      {G(1, 2, 8, 4, 5, 3), {"output h is 0", "smaller than the effective kernel 5"}},
      {G(1, 8, 2, 4, 3, 5), {"output w is 0", "effective kernel 5"}},
      {G(1, 8, 8, 4, 3, 3, 1, 1, 4, 1), {"output h is 0", "effective kernel 9"}},
      {G(1, 8, 8, 4, 3, 3, 1, 1, 1, 4, 0, 0), {"output w is 0", "8 plus twice pw=0 is 8"}},
      {G(1, 8, 8, 4, 70000, 3), {"kh=70000", "65535"}},
      {G(1, 8, 8, 4, 3, 3, 70000, 1), {"sh=70000", "65535"}},
      {G(1, int64_t{1} << 41, 8, 4, 3, 3), {"h=2199023255552"}},
      {G(1 << 20, 1 << 11, 1 << 11, 1, 1, 1), {"image", "exceeds 2^40"}},
      {G(1 << 12, 1 << 10, 1 << 10, 64, 3, 3, 1, 1, 1, 1, 1, 1), {"column matrix", "exceeds 2^40"}},
      {G(1 << 9, 1 << 10, 1 << 10, 64, 7, 7, 1, 1, 1, 1, 3, 3), {"column matrix", "exceeds 2^40"}},
  };
  ASSERT_GE(bad.size(), 20u);
  for (const BadGeometry& b : bad) {
    absl::Status status = ValidateIm2colGeometry(b.geometry);
    ASSERT_FALSE(status.ok()) << Im2colGeometryToString(b.geometry);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    for (const std::string& needle : b.needles) {
      EXPECT_THAT(std::string(status.message()), HasSubstr(needle))
          << Im2colGeometryToString(b.geometry);
    }
    // Lowering reports the same error.
    Im2colOp op;
    op.img = Buffer::RowMajor("img", DataType::kF16, Scope::kGlobal, {1, 1, 1, 1});
    op.geometry = b.geometry;
    auto lowered = LowerIm2col(op, T("sm_90a"), Launch(64, 64));
    EXPECT_EQ(lowered.status().message(), status.message());
  }
}

TEST(Im2colOpTest, ImageMustMatchTheGeometry) {
  Im2colOp op = Im2colOp::Dense(DataType::kF16, Resnet());
  EXPECT_TRUE(ValidateIm2colOp(op).ok());
  op.img.shape[3] = 32;
  EXPECT_THAT(std::string(ValidateIm2colOp(op).message()),
              AllOf(HasSubstr("[64, 56, 56, 32]"), HasSubstr("NHWC [64, 56, 56, 64]")));
  op = Im2colOp::Dense(DataType::kF16, Resnet());
  op.img.scope = Scope::kShared;
  EXPECT_THAT(std::string(ValidateIm2colOp(op).message()), HasSubstr("shared memory"));
  op = Im2colOp::Dense(DataType::kF16, Resnet());
  op.img = Buffer::RowMajor("img", DataType::kF16, Scope::kGlobal, {64, 56, 56 * 64});
  EXPECT_FALSE(ValidateIm2colOp(op).ok());
}

TEST(Im2colHintsTest, SideSpecificEvictionAnnotations) {
  Hints hints;
  hints.eviction_policy = EvictionPolicy::kEvictFirst;
  hints.annotations["img_eviction_policy"] = "evict_last";
  auto resolved = ResolveHints(hints, Im2colHintScope());
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->EvictionFor("img"), EvictionPolicy::kEvictLast);
  EXPECT_EQ(resolved->EvictionFor("col"), EvictionPolicy::kEvictFirst);
  EXPECT_EQ(HintsToString(*resolved), "eviction_policy=evict_first,img_eviction_policy=evict_last");

  hints.annotations["col_eviction_policy"] = "evict_sometimes";
  EXPECT_THAT(std::string(ResolveHints(hints, Im2colHintScope()).status().message()),
              HasSubstr("accepted are evict_normal, evict_first, evict_last"));
  Hints unknown;
  unknown.annotations["swizzle"] = "128B";
  EXPECT_THAT(std::string(ResolveHints(unknown, Im2colHintScope()).status().message()),
              AllOf(HasSubstr("unknown im2col annotation 'swizzle'"),
                    HasSubstr("img_eviction_policy, col_eviction_policy")));
  // Copy does not learn the im2col keys.
  Hints copy_only;
  copy_only.annotations["img_eviction_policy"] = "evict_last";
  EXPECT_FALSE(ResolveHints(copy_only, HintScope{"copy", {}}).ok());
}

TEST(Im2colLoweringTest, AutoPicksTmaOnHopperAndSimtElsewhere) {
  Im2colOp op = Im2colOp::Dense(DataType::kF16, Resnet());
  auto hopper = LowerIm2col(op, T("sm_90a"), Launch(128, 64, 128, 2));
  ASSERT_TRUE(hopper.ok()) << hopper.status();
  EXPECT_EQ(hopper->path, Im2colPath::kTma);
  EXPECT_EQ(hopper->kernel_name, "tt_im2col_tma_im2col");
  EXPECT_EQ(hopper->channels_per_pixel, 64);
  EXPECT_EQ(hopper->chunks_per_tile, 1);
  EXPECT_EQ(hopper->shared_bytes, 2 * 128 * 64 * 2);
  EXPECT_EQ(hopper->barriers, 2);
  EXPECT_EQ(hopper->param_count(), 4);
  EXPECT_EQ(hopper->tiles_m, 64 * 56 * 56 / 128);
  EXPECT_EQ(hopper->tiles_k, 9);

  for (const char* arch : {"sm_70", "sm_80", "sm_86"}) {
    auto lowered = LowerIm2col(op, T(arch), Launch(128, 64, 128, 1));
    ASSERT_TRUE(lowered.ok()) << arch << ": " << lowered.status();
    EXPECT_EQ(lowered->path, Im2colPath::kSimtRow) << arch;
    EXPECT_EQ(lowered->vector_elems, 8) << arch;
    EXPECT_EQ(lowered->layout, (LoopLayout{16, 8})) << arch;
    EXPECT_EQ(lowered->items_per_thread, 8) << arch;
    EXPECT_EQ(lowered->param_count(), 2) << arch;
    EXPECT_EQ(lowered->kernel_name, "tt_im2col_simt_im2col");
    EXPECT_THAT(DescribeIm2colPlan(*lowered), HasSubstr("tma_im2col rejected: " + std::string(arch) +
                                                  " has no TMA (sm_90+)"));
  }
}

TEST(Im2colLoweringTest, FallbackPolicy) {
  Im2colOp op = Im2colOp::Dense(DataType::kF16, G(2, 9, 9, 6, 3, 3, 1, 1, 1, 1, 1, 1));
  // C = 6 f16 = 12 B: no 16-byte channel box, so TMA cannot be used.
  op.hints.prefer_instruction = Instruction::kTma;
  auto refused = LowerIm2col(op, T("sm_90a"), Launch(64, 32));
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()),
              AllOf(HasSubstr("prefer_instruction=tma cannot be honoured"),
                    HasSubstr("no channel box fits"), HasSubstr("fallback=auto")));
  op.hints.annotations["fallback"] = "auto";
  auto fallback = LowerIm2col(op, T("sm_90a"), Launch(64, 32));
  ASSERT_TRUE(fallback.ok()) << fallback.status();
  EXPECT_EQ(fallback->path, Im2colPath::kSimtRow);
  EXPECT_EQ(fallback->vector_elems, 2);
  EXPECT_THAT(DescribeIm2colPlan(*fallback),
              AllOf(HasSubstr("tma_im2col rejected: "), HasSubstr("no channel box fits")));

  // Auto mode without a preference falls back silently (but logs why).
  Im2colOp plain = Im2colOp::Dense(DataType::kF16, G(2, 9, 9, 6, 3, 3, 1, 1, 1, 1, 1, 1));
  auto automatic = LowerIm2col(plain, T("sm_90a"), Launch(64, 32));
  ASSERT_TRUE(automatic.ok());
  EXPECT_EQ(automatic->path, Im2colPath::kSimtRow);

  // prefer tma + disable_tma is always an error.
  Im2colOp conflict = Im2colOp::Dense(DataType::kF16, Resnet());
  conflict.hints.prefer_instruction = Instruction::kTma;
  conflict.hints.disable_tma = true;
  conflict.hints.annotations["fallback"] = "auto";
  EXPECT_THAT(std::string(LowerIm2col(conflict, T("sm_90a"), Launch(128, 64)).status().message()),
              HasSubstr("conflicts with disable_tma"));

  // disable_tma alone steers to SIMT.
  Im2colOp disabled = Im2colOp::Dense(DataType::kF16, Resnet());
  disabled.hints.disable_tma = true;
  auto simt = LowerIm2col(disabled, T("sm_90a"), Launch(128, 64));
  ASSERT_TRUE(simt.ok());
  EXPECT_EQ(simt->path, Im2colPath::kSimtRow);

  // cp_async has no im2col lowering.
  Im2colOp cp_async = Im2colOp::Dense(DataType::kF16, Resnet());
  cp_async.hints.prefer_instruction = Instruction::kCpAsync;
  EXPECT_THAT(std::string(LowerIm2col(cp_async, T("sm_90a"), Launch(128, 64)).status().message()),
              AllOf(HasSubstr("no cp_async lowering"), HasSubstr("accepted are tma, sync")));
  cp_async.hints.annotations["fallback"] = "auto";
  auto cp_fallback = LowerIm2col(cp_async, T("sm_90a"), Launch(128, 64));
  ASSERT_TRUE(cp_fallback.ok());
  EXPECT_EQ(cp_fallback->path, Im2colPath::kSimtRow);

  // prefer sync on Hopper.
  Im2colOp sync = Im2colOp::Dense(DataType::kF16, Resnet());
  sync.hints.prefer_instruction = Instruction::kSync;
  auto sync_lowered = LowerIm2col(sync, T("sm_90a"), Launch(128, 64));
  ASSERT_TRUE(sync_lowered.ok());
  EXPECT_EQ(sync_lowered->path, Im2colPath::kSimtRow);

  // prefer sync with a pipelined launch cannot be honoured.
  auto pipelined = LowerIm2col(sync, T("sm_90a"), Launch(128, 64, 128, 2));
  EXPECT_THAT(std::string(pipelined.status().message()),
              AllOf(HasSubstr("prefer_instruction=sync"), HasSubstr("not pipelined")));
}

TEST(Im2colLoweringTest, TmaConstraintsAreCheckedAtCompileTime) {
  struct Case {
    std::string name;
    Im2colGeometry geometry;
    LaunchParams launch;
    std::string needle;
  };
  std::vector<Case> cases = {
      {"stride 9", G(1, 64, 64, 16, 3, 3, 9, 1, 1, 1, 1, 1), Launch(64, 16),
       "stride sh=9 exceeds the TMA traversal stride limit of 8"},
      {"pad 130", G(1, 300, 300, 16, 200, 1, 1, 1, 1, 1, 130, 0), Launch(64, 16),
       "box corner lower h = -130"},
      {"upper corner", G(1, 300, 300, 16, 1, 3, 1, 1, 1, 100, 0, 10), Launch(64, 16),
       "box corner upper w = -190"},
      {"offset", G(1, 600, 600, 16, 3, 1, 1, 1, 200, 1, 130, 0), Launch(64, 16),
       "largest im2col offset (kh-1)*dh = 400"},
      {"pixels per column", Resnet(), Launch(2048, 64), "pixels per column"},
      {"store rows", Resnet(), Launch(384, 64), "multiple of 256"},
      {"odd channels", G(1, 8, 8, 12, 3, 3), Launch(64, 12), "no channel box fits"},
      {"shared memory", G(1, 64, 64, 256, 3, 3), Launch(1024, 256, 128, 2),
       "B of shared memory (tile x stages) exceeds"},
  };
  for (const Case& c : cases) {
    Im2colOp op = Im2colOp::Dense(DataType::kF16, c.geometry);
    op.hints.prefer_instruction = Instruction::kTma;
    auto lowered = LowerIm2col(op, T("sm_90a"), c.launch);
    ASSERT_FALSE(lowered.ok()) << c.name;
    EXPECT_THAT(std::string(lowered.status().message()), HasSubstr(c.needle)) << c.name;
  }
  // Strided image rows that are not 16-byte multiples.
  Im2colOp strided = Im2colOp::Dense(DataType::kF16, G(2, 8, 8, 16, 3, 3, 1, 1, 1, 1, 1, 1));
  strided.img.strides = {8 * 9 * 17, 9 * 17, 17, 1};
  strided.hints.prefer_instruction = Instruction::kTma;
  EXPECT_THAT(std::string(LowerIm2col(strided, T("sm_90a"), Launch(64, 16)).status().message()),
              HasSubstr("the image's W stride is 34 B"));
  strided.hints.prefer_instruction = Instruction::kSync;
  auto strided_simt = LowerIm2col(strided, T("sm_90a"), Launch(64, 16));
  ASSERT_TRUE(strided_simt.ok());
  EXPECT_EQ(strided_simt->vector_elems, 1);
}

TEST(Im2colLoweringTest, BoxCornersFollowPadAndDilationPerAxis) {
  // Symmetric 3x3 pad 1: both corners -1 (TileLang's -pad happens to be right here).
  Im2colBoxCorners c = TmaIm2colBoxCorners(Resnet());
  EXPECT_EQ(c.lower_h, -1);
  EXPECT_EQ(c.lower_w, -1);
  EXPECT_EQ(c.upper_h, -1);
  EXPECT_EQ(c.upper_w, -1);
  // 7x7 pad 3 stride 2.
  c = TmaIm2colBoxCorners(G(32, 224, 224, 16, 7, 7, 2, 2, 1, 1, 3, 3));
  EXPECT_EQ(c.lower_h, -3);
  EXPECT_EQ(c.upper_h, -3);
  // 2*pad != (K-1)*dilation: kh=3 dh=2 ph=1 -> upper = 1 - 4 = -3; kw=5 dw=1 pw=0 -> -4.
  Im2colGeometry g = G(2, 20, 24, 16, 3, 5, 1, 2, 2, 1, 1, 0);
  c = TmaIm2colBoxCorners(g);
  EXPECT_EQ(c.lower_h, -1);
  EXPECT_EQ(c.upper_h, -3);
  EXPECT_EQ(c.lower_w, 0);
  EXPECT_EQ(c.upper_w, -4);
  // The box visits exactly OH x OW corners: (size - lower + upper - 1) / stride + 1.
  EXPECT_EQ((g.h - c.lower_h + c.upper_h - 1) / g.sh + 1, g.OH());
  EXPECT_EQ((g.w - c.lower_w + c.upper_w - 1) / g.sw + 1, g.OW());
  // Pad larger than half the window: kh=2 ph=1 -> upper = 0; kw=4 dw=3 pw=2 -> 2 - 9 = -7.
  c = TmaIm2colBoxCorners(G(1, 9, 30, 8, 2, 4, 3, 2, 1, 3, 1, 2));
  EXPECT_EQ(c.upper_h, 0);
  EXPECT_EQ(c.upper_w, -7);

  // The lowered descriptor spec carries them innermost (W) first.
  Im2colOp op = Im2colOp::Dense(DataType::kF16, g);
  auto lowered = LowerIm2col(op, T("sm_90a"), Launch(64, 48, 128, 2));
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  ASSERT_EQ(lowered->path, Im2colPath::kTma) << DescribeIm2colPlan(*lowered);
  ASSERT_EQ(lowered->tensor_maps.size(), 2u);
  const TensorMapSpec& map = lowered->tensor_maps[0];
  EXPECT_EQ(map.operand, TensorMapSpec::Operand::kInput);
  ASSERT_TRUE(map.im2col.has_value());
  EXPECT_EQ(map.im2col->lower_corner, (std::vector<int>{0, -1}));
  EXPECT_EQ(map.im2col->upper_corner, (std::vector<int>{-4, -3}));
  EXPECT_EQ(map.dims, (std::vector<uint64_t>{16, 24, 20, 2}));
  EXPECT_EQ(map.strides_bytes, (std::vector<uint64_t>{32, 32 * 24, 32 * 24 * 20}));
  EXPECT_EQ(map.element_strides, (std::vector<uint32_t>{1, 2, 1, 1}));
  EXPECT_EQ(map.im2col->channels_per_pixel, 16u);
  EXPECT_EQ(map.im2col->pixels_per_column, 64u);
  EXPECT_EQ(lowered->chunks_per_tile, 3);
  const TensorMapSpec& col = lowered->tensor_maps[1];
  EXPECT_EQ(col.operand, TensorMapSpec::Operand::kOutput);
  EXPECT_FALSE(col.im2col.has_value());
  EXPECT_EQ(col.dims, (std::vector<uint64_t>{240, static_cast<uint64_t>(g.M())}));
  EXPECT_EQ(col.box, (std::vector<uint32_t>{16, 64}));
  EXPECT_THAT(DescribeIm2colPlan(*lowered),
              HasSubstr("box corners lower (h, w) = (-1, 0), upper (h, w) = (-3, -4)"));
}

TEST(Im2colLoweringTest, VectorWidthAndHints) {
  Im2colOp op = Im2colOp::Dense(DataType::kF32, G(3, 7, 9, 12, 3, 2, 2, 1, 1, 1, 1, 0));
  op.hints.prefer_instruction = Instruction::kSync;
  auto lowered = LowerIm2col(op, T("sm_80"), Launch(32, 24));
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_EQ(lowered->vector_elems, 4);  // 16 B; C=12 allows 4.
  op.hints.coalesced_width = 8;
  EXPECT_THAT(std::string(LowerIm2col(op, T("sm_80"), Launch(32, 24)).status().message()),
              AllOf(HasSubstr("coalesced_width=8"), HasSubstr("use a divisor of 4")));
  op.hints.coalesced_width = 2;
  op.hints.loop_layout = LoopLayout{8, 16};
  lowered = LowerIm2col(op, T("sm_80"), Launch(32, 24));
  ASSERT_TRUE(lowered.ok());
  EXPECT_EQ(lowered->vector_elems, 2);
  EXPECT_EQ(lowered->layout, (LoopLayout{8, 16}));
  op.hints.loop_layout = LoopLayout{8, 8};
  EXPECT_THAT(std::string(LowerIm2col(op, T("sm_80"), Launch(32, 24)).status().message()),
              HasSubstr("arranges 64 threads but the launch has 128"));

  // Eviction policies per side; none on targets without L2 hints or for evict_normal.
  Im2colOp evict = Im2colOp::Dense(DataType::kF16, Resnet());
  evict.hints.annotations["img_eviction_policy"] = "evict_last";
  evict.hints.annotations["col_eviction_policy"] = "evict_first";
  for (const char* arch : {"sm_80", "sm_90a"}) {
    auto l = LowerIm2col(evict, T(arch), Launch(128, 64));
    ASSERT_TRUE(l.ok());
    EXPECT_EQ(l->img_policy, EvictionPolicy::kEvictLast);
    EXPECT_EQ(l->col_policy, EvictionPolicy::kEvictFirst);
  }
  auto volta = LowerIm2col(evict, T("sm_70"), Launch(128, 64));
  ASSERT_TRUE(volta.ok());
  EXPECT_FALSE(volta->img_policy.has_value());
  EXPECT_FALSE(volta->col_policy.has_value());
  evict.hints.annotations["col_eviction_policy"] = "evict_normal";
  auto normal = LowerIm2col(evict, T("sm_90a"), Launch(128, 64));
  ASSERT_TRUE(normal.ok());
  EXPECT_FALSE(normal->col_policy.has_value());
}

TEST(Im2colLoweringTest, LaunchErrors) {
  Im2colOp op = Im2colOp::Dense(DataType::kF16, Resnet());
  EXPECT_THAT(std::string(LowerIm2col(op, T("sm_90a"), LaunchParams{}).status().message()),
              HasSubstr("give two extents, block_M"));
  EXPECT_THAT(std::string(LowerIm2col(op, T("sm_90a"), Launch(128, 64, 100)).status().message()),
              HasSubstr("threads=100"));
  EXPECT_THAT(std::string(LowerIm2col(op, T("sm_90a"), Launch(128, 64, 128, 9)).status().message()),
              HasSubstr("stages=9"));
  op.hints.prefer_instruction = Instruction::kSync;
  EXPECT_THAT(std::string(LowerIm2col(op, T("sm_90a"), Launch(1024, 512, 32)).status().message()),
              HasSubstr("vector accesses per thread exceeds 64"));
}

TEST(Im2colLoweringTest, TailsAndGrid) {
  Im2colOp op = Im2colOp::Dense(DataType::kBF16, G(3, 5, 7, 24, 3, 3, 1, 1, 1, 1, 1, 1));
  auto lowered = LowerIm2col(op, T("sm_90a"), Launch(64, 80, 128, 3, 2));
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_EQ(lowered->m, 105);
  EXPECT_EQ(lowered->k, 216);
  EXPECT_EQ(lowered->tiles_m, 2);
  EXPECT_EQ(lowered->tiles_k, 3);
  EXPECT_EQ(lowered->GridSize(132), 6);
  EXPECT_EQ(lowered->GridSize(2), 4);
  EXPECT_THAT(DescribeIm2colPlan(*lowered), AllOf(HasSubstr("M tail guarded"), HasSubstr("K tail guarded")));
  EXPECT_EQ(lowered->path, Im2colPath::kTma);
  EXPECT_EQ(lowered->channels_per_pixel, 8);  // gcd(24, 80) = 8 bf16 = 16 B.
  EXPECT_EQ(lowered->chunks_per_tile, 10);
}

// The staged form's fill: bulk copies on sm_90+ for 16-byte aligned image rows, unless
// disable_tma; the threads' loads otherwise, with the reason in the log.
TEST(Im2colLoweringTest, StagedBoxFillEngine) {
  auto log_of = [](const LoweredIm2col& l) {
    std::string all;
    for (const std::string& line : l.decision_log) absl::StrAppend(&all, line, "\n");
    return all;
  };
  // The ResNet stem: 224 x 3 f16 pixels make 1344-byte image rows.
  Im2colOp stem = Im2colOp::Dense(DataType::kF16, G(32, 224, 224, 3, 7, 7, 2, 2, 1, 1, 3, 3));
  stem.hints.prefer_instruction = Instruction::kSync;
  auto bulk = LowerIm2col(stem, T("sm_90a"), Launch(112, 147, 512));
  ASSERT_TRUE(bulk.ok()) << bulk.status();
  ASSERT_EQ(bulk->path, Im2colPath::kSimtStaged);
  EXPECT_TRUE(bulk->box.bulk_fill);
  EXPECT_EQ(bulk->barriers, 1);
  EXPECT_EQ(bulk->box.resident_ctas, 4);  // 2048 threads per SM / 512
  EXPECT_EQ(bulk->box.max_registers, 24);  // 65536 / (5 x 512) = 25.6, in units of 8
  EXPECT_GT(bulk->box.prefetch_waves, 0);
  EXPECT_THAT(log_of(*bulk), AllOf(HasSubstr("cp.async.bulk copies"), HasSubstr("L2 prefetch")));
  EXPECT_THAT(DescribeIm2colPlan(*bulk), HasSubstr("bulk copies, L2 prefetch"));
  // A persistent grid bounds the resident CTAs.
  auto persistent = LowerIm2col(stem, T("sm_90a"), Launch(112, 147, 256, 1, 2));
  ASSERT_TRUE(persistent.ok()) << persistent.status();
  EXPECT_EQ(persistent->box.resident_ctas, 2);
  EXPECT_EQ(persistent->box.max_registers, 80);  // 65536 / (3 x 256) = 85.3
  EXPECT_THAT(log_of(*persistent), HasSubstr("registers held to 80 per thread"));
  // 1024 threads: room for a third CTA would leave 21 registers, below the floor of 24, so
  // the launch bounds ask for the two resident CTAs instead.
  auto wide = LowerIm2col(stem, T("sm_90a"), Launch(224, 147, 1024));
  ASSERT_TRUE(wide.ok()) << wide.status();
  EXPECT_TRUE(wide->box.bulk_fill);
  EXPECT_EQ(wide->box.resident_ctas, 2);
  EXPECT_EQ(wide->box.max_registers, 0);
  EXPECT_THAT(log_of(*wide), HasSubstr("what 2 resident CTAs per SM allow (launch bounds)"));

  Im2colOp no_tma = stem;
  no_tma.hints.disable_tma = true;
  auto loads = LowerIm2col(no_tma, T("sm_90a"), Launch(112, 147, 512));
  ASSERT_TRUE(loads.ok()) << loads.status();
  ASSERT_EQ(loads->path, Im2colPath::kSimtStaged);
  EXPECT_FALSE(loads->box.bulk_fill);
  EXPECT_EQ(loads->barriers, 0);
  EXPECT_THAT(log_of(*loads), HasSubstr("disable_tma is set"));

  auto ampere = LowerIm2col(stem, T("sm_80"), Launch(112, 147, 512));
  ASSERT_TRUE(ampere.ok()) << ampere.status();
  ASSERT_EQ(ampere->path, Im2colPath::kSimtStaged);
  EXPECT_FALSE(ampere->box.bulk_fill);

  // Image rows padded by one pixel: a 1350-byte row stride, not 16-byte aligned.
  Im2colOp odd = stem;
  odd.img.strides = {225 * 3 * 224, 225 * 3, 3, 1};
  auto unaligned = LowerIm2col(odd, T("sm_90a"), Launch(112, 147, 512));
  ASSERT_TRUE(unaligned.ok()) << unaligned.status();
  ASSERT_EQ(unaligned->path, Im2colPath::kSimtStaged) << DescribeIm2colPlan(*unaligned);
  EXPECT_FALSE(unaligned->box.bulk_fill);
  EXPECT_THAT(log_of(*unaligned), HasSubstr("bulk copies need 16-byte aligned image rows"));
}

TEST(Im2colLoweringTest, PhaseGatherWhereAskedForAndItApplies) {
  auto log_of = [](const LoweredIm2col& l) { return absl::StrJoin(l.decision_log, "\n"); };
  Im2colOp stem = Im2colOp::Dense(DataType::kF16, G(32, 224, 224, 3, 7, 7, 2, 2, 1, 1, 3, 3));
  stem.hints.prefer_instruction = Instruction::kSync;
  // The table by default, where the phase form would apply.
  auto table = LowerIm2col(stem, T("sm_90a"), Launch(112, 147, 512));
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_FALSE(table->box.phase_gather);
  EXPECT_THAT(log_of(*table), HasSubstr("the default; staged_gather=phase would apply here"));
  // 512 threads: 14 periods of 147 vectors per output row, 2 side by side (294 threads),
  // 7 vectors each.
  Im2colOp asked = stem;
  asked.hints.annotations = {{"staged_gather", "phase"}};
  auto phase = LowerIm2col(asked, T("sm_90a"), Launch(112, 147, 512));
  ASSERT_TRUE(phase.ok()) << phase.status();
  EXPECT_TRUE(phase->box.phase_gather);
  EXPECT_EQ(phase->box.phase_groups, 2);
  EXPECT_EQ(phase->items_per_thread, 7);
  EXPECT_EQ(phase->box.phase_lead_bytes, 32);  // 3 padding pixels x 3 x 2 B, rounded to 16
  // Lead, 7 rows of 1344 B, and 16 B for the right padding units' reads (the last pixel's
  // window ends 2 pixels past the image: 12 B).
  EXPECT_EQ(phase->box.phase_bytes, 32 + 7 * 1344 + 16);
  EXPECT_EQ(phase->shared_bytes, phase->box.phase_bytes);
  EXPECT_THAT(log_of(*phase), HasSubstr("(staged_gather=phase)"));
  EXPECT_THAT(DescribeIm2colPlan(*phase), HasSubstr("gather      by phase: 2 x 147 threads"));
  // 256 threads: one period at a time, 14 vectors each.
  auto narrow = LowerIm2col(asked, T("sm_90a"), Launch(112, 147, 256));
  ASSERT_TRUE(narrow.ok()) << narrow.status();
  EXPECT_TRUE(narrow->box.phase_gather);
  EXPECT_EQ(narrow->items_per_thread, 14);
  asked.hints.annotations = {{"staged_gather", "table"}};
  auto kept = LowerIm2col(asked, T("sm_90a"), Launch(112, 147, 512));
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_FALSE(kept->box.phase_gather);
  EXPECT_THAT(log_of(*kept), HasSubstr("(staged_gather=table)"));
  // Where it does not apply the log says why, asked for or not.
  struct Case {
    std::string name;
    Im2colOp op;
    LaunchParams launch;
    std::string why;
  };
  Im2colOp f32 = Im2colOp::Dense(DataType::kF32, stem.geometry);
  Im2colOp padded = stem;
  padded.img.strides = {232 * 3 * 230, 232 * 3, 3, 1};
  Im2colOp dilated = Im2colOp::Dense(DataType::kF16, G(32, 224, 224, 3, 7, 7, 2, 2, 2, 1, 6, 3));
  // Pad 5 with stride 2: pixels 0 to 2 reach left of the image, past the first period (one
  // pixel: K = 400, 8-element vectors).
  Im2colOp wide_pad = Im2colOp::Dense(DataType::kF16, G(2, 30, 30, 4, 10, 10, 2, 2, 1, 1, 5, 5));
  std::vector<Case> cases = {
      {"two rows", stem, Launch(224, 147, 512), "one output row per tile and one tile per CTA"},
      {"persistent", stem, Launch(112, 147, 512, 1, 2), "one tile per CTA"},
      {"f32", f32, Launch(112, 147, 512), "2-byte elements"},
      {"strided rows", padded, Launch(112, 147, 512), "back to back (H stride = W x C)"},
      {"dilated rows", dilated, Launch(112, 147, 512), "dilation_h = 1"},
      {"padding past a period", wide_pad, Launch(16, 400, 256),
       "padding columns within the first and last period"},
      {"few threads", stem, Launch(112, 147, 128), "a period of 147 vectors needs more than the 128"},
  };
  for (Case& c : cases) {
    c.op.hints.prefer_instruction = Instruction::kSync;
    c.op.hints.annotations["staged_gather"] = "phase";
    auto lowered = LowerIm2col(c.op, T("sm_90a"), c.launch);
    ASSERT_TRUE(lowered.ok()) << c.name << ": " << lowered.status();
    ASSERT_EQ(lowered->path, Im2colPath::kSimtStaged) << c.name << "\n" << DescribeIm2colPlan(*lowered);
    EXPECT_FALSE(lowered->box.phase_gather) << c.name;
    EXPECT_THAT(log_of(*lowered),
                AllOf(HasSubstr("staged_gather=phase not taken: "), HasSubstr(c.why)))
        << c.name;
  }
  asked.hints.annotations = {{"staged_gather", "rows"}};
  EXPECT_THAT(LowerIm2col(asked, T("sm_90a"), Launch(112, 147, 512)).status().message(),
              HasSubstr("invalid im2col staged_gather 'rows': accepted are table, phase"));
}

TEST(Im2colLoweringTest, RowPhaseGatherWhereAskedForAndItApplies) {
  auto log_of = [](const LoweredIm2col& l) { return absl::StrJoin(l.decision_log, "\n"); };
  // AlexNet's 11x11 s4: OW = 55 and K = 363 are odd, so no period of vectors divides a row.
  Im2colOp alexnet = Im2colOp::Dense(DataType::kF16, G(64, 227, 227, 3, 11, 11, 4, 4, 1, 1, 0, 0));
  alexnet.hints.prefer_instruction = Instruction::kSync;
  // Unasked, the tile of one output row is not staged (the row form, which this launch
  // cannot serve either).
  auto unasked = LowerIm2col(alexnet, T("sm_90a"), Launch(55, 363, 256));
  EXPECT_FALSE(unasked.ok() && unasked->path == Im2colPath::kSimtStaged);
  Im2colOp asked = alexnet;
  asked.hints.annotations = {{"staged_gather", "row_phase"}};
  auto row = LowerIm2col(asked, T("sm_90a"), Launch(55, 363, 256));
  ASSERT_TRUE(row.ok()) << row.status();
  ASSERT_EQ(row->path, Im2colPath::kSimtStaged) << DescribeIm2colPlan(*row);
  EXPECT_TRUE(row->box.row_phase);
  EXPECT_FALSE(row->box.phase_gather);
  EXPECT_EQ(row->box.vector_elems, 8);
  // 363 vectors start at the 363 columns; 8 x 227 = 5 x 363 + 1.
  EXPECT_EQ(row->box.period_vectors, 363);
  EXPECT_EQ(row->box.vector_inverse, 227);
  EXPECT_EQ(row->box.offset_bytes, 363 * 16);
  EXPECT_THAT(log_of(*row), AllOf(HasSubstr("(staged_gather=row_phase)"),
                                  HasSubstr("before its first whole vector and after its last")));
  EXPECT_THAT(DescribeIm2colPlan(*row), HasSubstr("each row at its own phase"));
  // C4 3x3 on 15x15, OW = 13: 8-element vectors repeat every 2 rows, which does not divide
  // 13, and C gives 4-element ones already: no table. K = 36 shares 4 with the vector, so 9
  // entries serve (every row's phase is a multiple of 4), and 2 x 5 = 1 modulo 9.
  Im2colOp c4 = Im2colOp::Dense(DataType::kF16, G(2, 15, 15, 4, 3, 3, 1, 1, 1, 1, 0, 0));
  c4.hints.prefer_instruction = Instruction::kSync;
  auto period = LowerIm2col(c4, T("sm_90a"), Launch(13, 36, 128));
  ASSERT_TRUE(period.ok()) << period.status();
  EXPECT_NE(period->path, Im2colPath::kSimtStaged) << DescribeIm2colPlan(*period);
  c4.hints.annotations = {{"staged_gather", "row_phase"}};
  auto phased = LowerIm2col(c4, T("sm_90a"), Launch(13, 36, 128));
  ASSERT_TRUE(phased.ok()) << phased.status();
  EXPECT_TRUE(phased->box.row_phase);
  EXPECT_EQ(phased->box.vector_elems, 8);
  EXPECT_EQ(phased->box.period_vectors, 9);
  EXPECT_EQ(phased->box.vector_inverse, 5);
  // Two output rows per tile: not taken, and the log says why. On 16x16 (OW = 14, which a
  // period of 2 rows divides) the C4 rows take the table; AlexNet's are not staged.
  Im2colOp even = Im2colOp::Dense(DataType::kF16, G(2, 16, 16, 4, 3, 3, 1, 1, 1, 1, 0, 0));
  even.hints = c4.hints;
  auto two = LowerIm2col(even, T("sm_90a"), Launch(28, 36, 128));
  ASSERT_TRUE(two.ok()) << two.status();
  ASSERT_EQ(two->path, Im2colPath::kSimtStaged) << DescribeIm2colPlan(*two);
  EXPECT_FALSE(two->box.row_phase);
  EXPECT_THAT(log_of(*two), HasSubstr("staged_gather=row_phase not taken: it needs one output row "
                                      "per tile"));
  auto flat = LowerIm2col(asked, T("sm_90a"), Launch(110, 363, 256));
  ASSERT_TRUE(flat.ok()) << flat.status();
  EXPECT_EQ(flat->path, Im2colPath::kSimtFlat);
  EXPECT_THAT(log_of(*flat), HasSubstr("or staged_gather=row_phase with block_M = OW"));
}

TEST(Im2colLoweringTest, BulkFillPrefetchesASmallImageWholeAndALargeOneAhead) {
  auto log_of = [](const LoweredIm2col& l) { return absl::StrJoin(l.decision_log, "\n"); };
  // The stem's 9633792-byte image is under a quarter of sm_90's 50 MB L2.
  Im2colOp stem = Im2colOp::Dense(DataType::kF16, G(32, 224, 224, 3, 7, 7, 2, 2, 1, 1, 3, 3));
  stem.hints.prefer_instruction = Instruction::kSync;
  auto small = LowerIm2col(stem, T("sm_90a"), Launch(112, 147, 512));
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_TRUE(small->box.prefetch_all);
  EXPECT_EQ(small->box.image_span_bytes, 32 * 224 * 224 * 3 * 2);
  EXPECT_THAT(log_of(*small),
              HasSubstr("of the whole image at the start, an equal share by each CTA of the "
                        "first wave (%nsmid x 4 resident CTAs per SM): 9633792 B of image are "
                        "at most 1/4 of the 50000000 B L2 of sm_90a, and the 118013952 B of "
                        "columns stream through more than it holds"));
  EXPECT_THAT(DescribeIm2colPlan(*small), HasSubstr("L2 prefetch of the whole image at the start"));
  // Twice the batch is over it: each tile's rows, 3 waves ahead.
  Im2colOp big = stem;
  big.geometry.n = 64;
  big.img = Im2colOp::Dense(DataType::kF16, big.geometry).img;
  auto large = LowerIm2col(big, T("sm_90a"), Launch(112, 147, 512));
  ASSERT_TRUE(large.ok()) << large.status();
  EXPECT_FALSE(large->box.prefetch_all);
  EXPECT_THAT(log_of(*large), HasSubstr("19267584 B of image exceed 1/4 of the 50000000 B L2"));
  // A batch of one: the columns fit in L2 as well.
  Im2colOp one = stem;
  one.geometry.n = 1;
  one.img = Im2colOp::Dense(DataType::kF16, one.geometry).img;
  auto fits = LowerIm2col(one, T("sm_90a"), Launch(112, 147, 512));
  ASSERT_TRUE(fits.ok()) << fits.status();
  EXPECT_FALSE(fits->box.prefetch_all);
  EXPECT_THAT(log_of(*fits), HasSubstr("the 3687936 B of columns fit in the 50000000 B L2"));
  // A strided image spans its padding too.
  Im2colOp padded = stem;
  padded.img.strides = {232 * 3 * 230, 232 * 3, 3, 1};
  auto span = LowerIm2col(padded, T("sm_90a"), Launch(112, 147, 512));
  ASSERT_TRUE(span.ok()) << span.status();
  EXPECT_EQ(span->box.image_span_bytes, (31 * 232 * 3 * 230 + 223 * 232 * 3 + 224 * 3) * 2);
  // The annotation decides either way.
  big.hints.annotations = {{"img_prefetch", "all"}};
  auto forced = LowerIm2col(big, T("sm_90a"), Launch(112, 147, 512));
  ASSERT_TRUE(forced.ok()) << forced.status();
  EXPECT_TRUE(forced->box.prefetch_all);
  EXPECT_THAT(log_of(*forced), HasSubstr(": img_prefetch=all"));
  stem.hints.annotations = {{"img_prefetch", "ahead"}};
  auto ahead = LowerIm2col(stem, T("sm_90a"), Launch(112, 147, 512));
  ASSERT_TRUE(ahead.ok()) << ahead.status();
  EXPECT_FALSE(ahead->box.prefetch_all);
  EXPECT_THAT(DescribeIm2colPlan(*ahead), HasSubstr("L2 prefetch 3 waves ahead"));
  stem.hints.annotations = {{"img_prefetch", "later"}};
  EXPECT_THAT(LowerIm2col(stem, T("sm_90a"), Launch(112, 147, 512)).status().message(),
              HasSubstr("invalid im2col img_prefetch 'later': accepted are ahead, all"));
}

}  // namespace
}  // namespace tiletune

namespace tiletune {
namespace {

Im2colOp Unfold(DataType dtype, const Im2colGeometry& g) {
  Im2colOp op = Im2colOp::Dense(dtype, g);
  op.img.strides = NchwStrides(g);
  op.order = ColumnOrder::kChannelRows;
  return op;
}

// Channel-row columns lower to the planes form over [N*C*KH*KW, OH*OW]: the tile is
// clipped to the matrix, tiles of whole rows store the vectors their run allows, part rows
// what their columns allow; TMA is refused with the reason, and so is a pipeline.
TEST(Im2colPlanesTest, TilesVectorsAndRefusals) {
  const Im2colOp op = Unfold(DataType::kF16, Resnet());
  auto whole = LowerIm2col(op, T("sm_90a"), Launch(3, 4000, 256));
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->path, Im2colPath::kSimtPlanes);
  EXPECT_EQ(whole->m, 64 * 64 * 9);
  EXPECT_EQ(whole->block_k, 3136);
  EXPECT_EQ(whole->segments, 1);
  EXPECT_EQ(whole->segment_elems, 3 * 3136);
  EXPECT_EQ(whole->vector_elems, 8);
  EXPECT_EQ(whole->num_tiles, 64 * 64 * 3);
  EXPECT_EQ(whole->gather_reads, 1);  // one image element per column-matrix element
  EXPECT_TRUE(whole->warp_load_sectors.has_value());
  auto part = LowerIm2col(op, T("sm_90a"), Launch(4, 12, 256));
  ASSERT_TRUE(part.ok()) << part.status();
  EXPECT_EQ(part->segments, 4);
  EXPECT_EQ(part->vector_elems, 4);  // block_K = 12
  // A 3 x 55 output: rows of 165 elements; two of them allow 4-byte vectors, three none.
  const Im2colOp odd_op = Unfold(DataType::kF16, G(1, 5, 57, 3, 3, 3, 1, 1, 1, 1, 0, 0));
  auto two = LowerIm2col(odd_op, T("sm_90a"), Launch(2, 165, 128));
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(two->vector_elems, 2);
  auto odd = LowerIm2col(odd_op, T("sm_90a"), Launch(3, 165, 128));
  ASSERT_TRUE(odd.ok()) << odd.status();
  EXPECT_EQ(odd->vector_elems, 1);
  EXPECT_THAT(absl::StrJoin(odd->decision_log, "\n"), HasSubstr("block_M x OH*OW="));
  Im2colOp tma = op;
  tma.hints.prefer_instruction = Instruction::kTma;
  EXPECT_THAT(std::string(LowerIm2col(tma, T("sm_90a"), Launch(8, 3136)).status().message()),
              HasSubstr("channel_rows columns (F.unfold's layout) have no TMA lowering"));
  EXPECT_THAT(std::string(LowerIm2col(op, T("sm_90a"), Launch(8, 3136, 128, 2)).status().message()),
              HasSubstr("stages=2"));
  Im2colOp layout = op;
  layout.hints.loop_layout = LoopLayout{4, 32};
  EXPECT_THAT(std::string(LowerIm2col(layout, T("sm_90a"), Launch(8, 3136)).status().message()),
              HasSubstr("loop_layout does not apply"));
}

// planes_gather=span reads a vector's image elements as aligned 16-B blocks where they lie
// side by side in a row (W stride 1) and 3 blocks can hold them; otherwise, and by default,
// the elements are gathered one by one, and the log says why the span was not taken.
TEST(Im2colPlanesTest, SpanGatherWhereAskedForAndItApplies) {
  auto span = [](Im2colOp op) {
    op.hints.annotations[kPlanesGatherKey] = "span";
    return op;
  };
  const Im2colOp op = Unfold(DataType::kF16, Resnet());
  auto plain = LowerIm2col(op, T("sm_90a"), Launch(3, 4000, 256));
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(plain->span_gather);
  EXPECT_THAT(DescribeIm2colPlan(*plain), HasSubstr("gather      element by element"));

  auto unit = LowerIm2col(span(op), T("sm_90a"), Launch(3, 4000, 256));
  ASSERT_TRUE(unit.ok()) << unit.status();
  EXPECT_TRUE(unit->span_gather);
  EXPECT_EQ(unit->span_blocks, 2);  // 16 B of elements, from anywhere in a block
  EXPECT_EQ(unit->image_bytes, 64 * 64 * 56 * 56 * 2);
  EXPECT_THAT(DescribeIm2colPlan(*unit), HasSubstr("span: up to 2 aligned 16-B blocks"));

  // Stride 2: 8 elements reach over 30 B; f32 4-element vectors over 28 B.
  Im2colGeometry s2 = Resnet();
  s2.sw = 2;
  auto wide = LowerIm2col(span(Unfold(DataType::kF16, s2)), T("sm_90a"), Launch(3, 1568, 256));
  ASSERT_TRUE(wide.ok()) << wide.status();
  EXPECT_TRUE(wide->span_gather);
  EXPECT_EQ(wide->span_blocks, 3);

  // Stride 3 would need 4 blocks; narrower vectors still fit.
  Im2colGeometry s3 = Resnet();
  s3.sw = 3;
  auto far = LowerIm2col(span(Unfold(DataType::kF16, s3)), T("sm_90a"), Launch(8, 1064, 256));
  ASSERT_TRUE(far.ok()) << far.status();
  EXPECT_FALSE(far->span_gather);
  EXPECT_THAT(absl::StrJoin(far->decision_log, "\n"),
              HasSubstr("planes_gather=span not taken: a vector's 8 elements at stride_w 3 can "
                        "span 4 aligned 16-B blocks, more than 3"));
  Im2colOp narrow = span(Unfold(DataType::kF16, s3));
  narrow.hints.coalesced_width = 4;
  auto four = LowerIm2col(narrow, T("sm_90a"), Launch(8, 1064, 256));
  ASSERT_TRUE(four.ok()) << four.status();
  EXPECT_TRUE(four->span_gather);
  EXPECT_EQ(four->vector_elems, 4);
  EXPECT_EQ(four->span_blocks, 3);  // 20 B

  // An NHWC image's row holds C channels per pixel: no span along W.
  Im2colOp nhwc = span(op);
  nhwc.img = Im2colOp::Dense(DataType::kF16, Resnet()).img;
  auto pixels = LowerIm2col(nhwc, T("sm_90a"), Launch(3, 4000, 256));
  ASSERT_TRUE(pixels.ok()) << pixels.status();
  EXPECT_FALSE(pixels->span_gather);
  EXPECT_THAT(absl::StrJoin(pixels->decision_log, "\n"),
              HasSubstr("it needs the image's W stride 1 (an image row's elements side by "
                        "side), not 64"));
  Im2colOp single = span(op);
  single.hints.coalesced_width = 1;
  auto one = LowerIm2col(single, T("sm_90a"), Launch(3, 4000, 256));
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_FALSE(one->span_gather);
  EXPECT_THAT(absl::StrJoin(one->decision_log, "\n"),
              HasSubstr("it needs vectors of 2 elements or more"));

  Im2colOp bad = op;
  bad.hints.annotations[kPlanesGatherKey] = "blocks";
  EXPECT_FALSE(LowerIm2col(bad, T("sm_90a"), Launch(3, 4000, 256)).ok());
}

// row_vector=window_row: with pixels side by side, a kernel row's KW*C elements are one run
// in the image as in the matrix, so the row form's vectors may cover several pixels where
// KW*C, SW*C, PW*C and W*C allow; the log says why where they do not.
TEST(Im2colRowFormTest, WindowRowVectorsWhereAskedForAndTheyApply) {
  auto window = [](DataType dtype, const Im2colGeometry& g) {
    Im2colOp op = Im2colOp::Dense(dtype, g);
    op.hints.prefer_instruction = Instruction::kSync;
    op.hints.annotations[kRowVectorKey] = "window_row";
    return op;
  };
  auto log_of = [](const LoweredIm2col& l) { return absl::StrJoin(l.decision_log, "\n"); };
  // ViT's 16x16 s16 patchify of C3: rows of 48 elements, 16-byte vectors in f16 and f32,
  // where C allows one element; the row form, even over tiles of whole rows.
  const Im2colGeometry patch16 = G(2, 224, 224, 3, 16, 16, 16, 16, 1, 1, 0, 0);
  for (auto [dtype, elems] : std::vector<std::pair<DataType, int>>{
           {DataType::kF16, 8}, {DataType::kF32, 4}, {DataType::kI8, 16}}) {
    auto l = LowerIm2col(window(dtype, patch16), T("sm_90a"), Launch(14, 768, 256));
    ASSERT_TRUE(l.ok()) << l.status();
    EXPECT_TRUE(l->window_row_vector);
    EXPECT_EQ(l->path, Im2colPath::kSimtRow);
    EXPECT_EQ(l->vector_elems, elems);
    EXPECT_EQ(l->vector_bytes, 16);
    EXPECT_THAT(DescribeIm2colPlan(*l), HasSubstr("along a kernel row (row_vector=window_row)"));
  }
  // 14x14 s14: 42 elements a row, 2-element vectors.
  auto patch14 = LowerIm2col(window(DataType::kF16, G(2, 224, 224, 3, 14, 14, 14, 14, 1, 1, 0, 0)),
                             T("sm_90a"), Launch(16, 588, 256));
  ASSERT_TRUE(patch14.ok()) << patch14.status();
  EXPECT_TRUE(patch14->window_row_vector);
  EXPECT_EQ(patch14->vector_elems, 2);
  EXPECT_THAT(log_of(*patch14), HasSubstr("limited by KW x C=42"));
  // Swin's 4x4 s4 patches of C3: 12 elements a row, 4-element vectors.
  auto swin = LowerIm2col(window(DataType::kF16, G(2, 224, 224, 3, 4, 4, 4, 4, 1, 1, 0, 0)),
                          T("sm_90a"), Launch(32, 48, 128));
  ASSERT_TRUE(swin.ok()) << swin.status();
  EXPECT_TRUE(swin->window_row_vector);
  EXPECT_EQ(swin->vector_elems, 4);
  // C4 3x3 pad 1: C already gives 4 elements, a kernel row (12) no more.
  auto c4 = LowerIm2col(window(DataType::kF16, G(2, 32, 32, 4, 3, 3, 1, 1, 1, 1, 1, 1)),
                        T("sm_90a"), Launch(32, 36, 128));
  ASSERT_TRUE(c4.ok()) << c4.status();
  EXPECT_FALSE(c4->window_row_vector);
  EXPECT_EQ(c4->vector_elems, 4);

  // Not taken: where a kernel row gives no wider vector than C (C3 3x3: 9 elements), with
  // W dilation, or where the pixels are not side by side (NCHW).
  auto c3 = LowerIm2col(window(DataType::kF16, G(2, 32, 32, 3, 3, 3, 1, 1, 1, 1, 1, 1)),
                        T("sm_90a"), Launch(32, 27, 128));
  ASSERT_TRUE(c3.ok()) << c3.status();
  EXPECT_FALSE(c3->window_row_vector);
  EXPECT_THAT(log_of(*c3), HasSubstr("row_vector=window_row not taken: along a kernel row a "
                                     "vector gets 1 element(s) (limited by KW x C=9), no more "
                                     "than along C"));
  auto dilated = LowerIm2col(window(DataType::kF16, G(2, 32, 32, 4, 3, 3, 1, 1, 1, 2, 0, 0)),
                             T("sm_90a"), Launch(32, 36, 128));
  ASSERT_TRUE(dilated.ok()) << dilated.status();
  EXPECT_FALSE(dilated->window_row_vector);
  EXPECT_THAT(log_of(*dilated), HasSubstr("row_vector=window_row not taken: it needs dilation_w 1 "
                                          "(not 2)\n"));
  Im2colOp nchw = window(DataType::kF16, patch16);
  nchw.img.strides = NchwStrides(patch16);
  auto planes = LowerIm2col(nchw, T("sm_90a"), Launch(14, 768, 256));
  ASSERT_TRUE(planes.ok()) << planes.status();
  EXPECT_FALSE(planes->window_row_vector);
  EXPECT_THAT(log_of(*planes), HasSubstr("it needs the image's C stride 1 (not 50176), W stride "
                                         "C=3 (not 1)\n"));
  // The default keeps the vectors along C (and here the staged form).
  Im2colOp plain = Im2colOp::Dense(DataType::kF16, patch16);
  auto staged = LowerIm2col(plain, T("sm_90a"), Launch(14, 768, 256));
  ASSERT_TRUE(staged.ok()) << staged.status();
  EXPECT_FALSE(staged->window_row_vector);
  EXPECT_NE(staged->path, Im2colPath::kSimtRow);
  Im2colOp bad = window(DataType::kF16, patch16);
  bad.hints.annotations[kRowVectorKey] = "pixels";
  EXPECT_FALSE(LowerIm2col(bad, T("sm_90a"), Launch(14, 768, 256)).ok());
}

// The search space adds the window-row vectors where they are wider than C's, and only there.
TEST(Im2colSearchSpaceTest, WindowRowHintsWhereTheyWiden) {
  auto has_window = [](const SearchSpace& space) {
    for (const Trial& t : space.first) {
      auto it = t.hints.annotations.find(kRowVectorKey);
      if (it != t.hints.annotations.end() && it->second == "window_row") return true;
    }
    return false;
  };
  EXPECT_TRUE(has_window(Im2colSearchSpace(
      Im2colOp::Dense(DataType::kF16, G(32, 224, 224, 3, 16, 16, 16, 16, 1, 1, 0, 0)),
      T("sm_90a"))));
  EXPECT_FALSE(has_window(
      Im2colSearchSpace(Im2colOp::Dense(DataType::kF16, Resnet()), T("sm_90a"))));
  EXPECT_FALSE(has_window(Im2colSearchSpace(
      Im2colOp::Dense(DataType::kF16, G(32, 224, 224, 3, 7, 7, 2, 2, 1, 1, 3, 3)), T("sm_90a"))));
}

// The element gather's warp loads (thread j gathers vector j, element e of every vector in
// load instruction e), walked into 32-byte sectors per instruction, here where they can be
// counted by hand.
TEST(Im2colPlanesTest, WarpLoadSectorsFollowTheGather) {
  auto sectors = [](const Im2colGeometry& g, int width, int64_t rows = 4) {
    Im2colOp op = Unfold(DataType::kF16, g);
    op.hints.coalesced_width = width;
    auto lowered = LowerIm2col(op, T("sm_90a"), Launch(rows, 1 << 20, 128));
    EXPECT_TRUE(lowered.ok()) << lowered.status();
    return lowered.ok() ? lowered->warp_load_sectors.value_or(-1) : -1;
  };
  // A 1x1 window: a matrix row is an image plane. Vectors of 8 put neighbouring threads'
  // elements 16 B apart, 498 B over 16 sectors; vectors of 1, 2 B apart, 2 sectors.
  const Im2colGeometry pointwise = G(2, 64, 64, 8, 1, 1, 1, 1, 1, 1, 0, 0);
  EXPECT_EQ(sectors(pointwise, 8), 16);
  EXPECT_EQ(sectors(pointwise, 1), 2);
  // Stride 2: vectors of 1 read every other element, 124 B over 4 sectors.
  EXPECT_EQ(sectors(G(2, 64, 64, 8, 1, 1, 2, 2, 1, 1, 0, 0), 1), 4);
  // 16x16 patches: each thread's element lies in a patch row of its own, a sector each.
  EXPECT_EQ(sectors(G(2, 224, 224, 3, 16, 16, 16, 16, 1, 1, 0, 0), 1), 32);
  // A tile of one 8x8 plane is a run of 8 vectors of 8: 8 threads 16 B apart, 4 sectors; the
  // other 24 threads have no vector and make no load.
  EXPECT_EQ(sectors(G(2, 8, 8, 3, 1, 1, 1, 1, 1, 1, 0, 0), 8, 1), 4);
  // Part rows: tiles of 2 rows x 64 columns are 2 segments of 8 vectors, on two planes
  // 8 KiB apart (1x1 window): 2 x 4 sectors; threads 16 to 31 make no load.
  Im2colOp part = Unfold(DataType::kF16, pointwise);
  part.hints.coalesced_width = 8;
  auto segments = LowerIm2col(part, T("sm_90a"), Launch(2, 64, 128));
  ASSERT_TRUE(segments.ok()) << segments.status();
  EXPECT_EQ(segments->segments, 2);
  EXPECT_EQ(segments->warp_load_sectors, 8);
}

// planes_gather=shared_runs: the shared gather with each vector read as a run of the box,
// where every vector lies within one output row (column stride 1, OW a whole number of
// vectors of 4 bytes or more); the box has one vector more, for the run's second load.
// Elsewhere it says why not, and the shared gather reads the elements one by one (a record
// tuned with runs keeps its shared memory where they do not apply).
TEST(Im2colPlanesTest, SharedRunsWhereEveryVectorLiesInOneOutputRow) {
  Im2colOp op = Unfold(DataType::kF16, Resnet());
  op.hints.annotations[kPlanesGatherKey] = "shared_runs";
  auto runs = LowerIm2col(op, T("sm_90a"), Launch(18, 3136, 256));
  ASSERT_TRUE(runs.ok()) << runs.status();
  EXPECT_TRUE(runs->shared_gather);
  EXPECT_TRUE(runs->box_runs);
  EXPECT_EQ(runs->shared_bytes, 2 * 58 * 58 * 2 + 16);
  EXPECT_EQ(runs->form_name, kPlanesSharedForm);
  // 14 pixels a row: 8-element vectors cross rows; 2-element (4-byte) ones do not.
  Im2colOp conv4 = Unfold(DataType::kF16, G(4, 14, 14, 256, 3, 3, 1, 1, 1, 1, 1, 1));
  conv4.hints.annotations[kPlanesGatherKey] = "shared_runs";
  auto crossing = LowerIm2col(conv4, T("sm_90a"), Launch(18, 196, 128));
  ASSERT_TRUE(crossing.ok()) << crossing.status();
  EXPECT_FALSE(crossing->box_runs);
  EXPECT_TRUE(crossing->shared_gather);
  EXPECT_EQ(crossing->shared_bytes, 2 * 16 * 16 * 2);  // no vector more
  EXPECT_THAT(absl::StrJoin(crossing->decision_log, "\n"),
              HasSubstr("planes_gather=shared_runs: no runs (vectors of 8 elements cross its "
                        "output rows of 14 (rows must be a whole number of vectors)); the "
                        "shared gather reads element by element"));
  conv4.hints.coalesced_width = 2;
  auto narrow = LowerIm2col(conv4, T("sm_90a"), Launch(18, 196, 128));
  ASSERT_TRUE(narrow.ok()) << narrow.status();
  EXPECT_TRUE(narrow->box_runs);
  // At column stride 2 a vector's elements are not consecutive in the box.
  Im2colOp strided = Unfold(DataType::kF16, G(4, 28, 28, 64, 3, 3, 2, 2, 1, 1, 1, 1));
  strided.hints.annotations[kPlanesGatherKey] = "shared_runs";
  auto apart = LowerIm2col(strided, T("sm_90a"), Launch(9, 196, 128));
  ASSERT_TRUE(apart.ok()) << apart.status();
  EXPECT_FALSE(apart->box_runs);
  EXPECT_TRUE(apart->shared_gather);
  EXPECT_THAT(absl::StrJoin(apart->decision_log, "\n"),
              HasSubstr("at column stride 2 a vector's elements are not consecutive"));
}

// Where 16-byte vectors would cross the output rows, the search space also offers the box
// runs at the widest vector that keeps rows whole, and the runs are taken there.
TEST(Im2colSearchSpaceTest, BoxRunsAtTheWidestVectorThatKeepsRowsWhole) {
  auto narrow_runs = [](int64_t hw) {
    const Im2colOp op = Unfold(DataType::kF16, G(4, hw, hw, 128, 3, 3, 1, 1, 1, 1, 1, 1));
    std::set<int> widths;  // vector bytes of the runs taken
    for (const Trial& trial : Im2colSearchSpace(op, T("sm_90a")).first) {
      auto gather = trial.hints.annotations.find(kPlanesGatherKey);
      if (gather == trial.hints.annotations.end() || gather->second != "shared_runs" ||
          !trial.hints.coalesced_width.has_value()) {
        continue;
      }
      Im2colOp with = op;
      with.hints = trial.hints;
      auto lowered = LowerIm2col(with, T("sm_90a"), trial.launch);
      EXPECT_TRUE(lowered.ok()) << lowered.status();
      if (!lowered.ok()) continue;
      EXPECT_TRUE(lowered->box_runs) << hw;
      widths.insert(lowered->vector_elems * lowered->element_bytes);
    }
    return widths;
  };
  EXPECT_THAT(narrow_runs(28), ::testing::ElementsAre(8));   // rows of 56 bytes
  EXPECT_THAT(narrow_runs(14), ::testing::ElementsAre(4));   // rows of 28 bytes
  EXPECT_THAT(narrow_runs(56), ::testing::IsEmpty());        // 16-byte vectors keep rows
  EXPECT_THAT(narrow_runs(7), ::testing::IsEmpty());         // no vector of 4 bytes does
}

// planes_gather=shared takes tiles of whole planes and whole output rows: each plane's image
// window for the tile's rows is copied to shared memory once, its KH*KW tap rows read there.
TEST(Im2colPlanesTest, SharedGatherTakesTilesOfWholePlanesAndRows) {
  Im2colOp op = Unfold(DataType::kF16, Resnet());
  op.hints.annotations[kPlanesGatherKey] = "shared";
  auto whole = LowerIm2col(op, T("sm_90a"), Launch(18, 3136, 256));
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_TRUE(whole->shared_gather);
  EXPECT_EQ(whole->box_planes, 2);
  EXPECT_EQ(whole->band_rows, 56);
  EXPECT_EQ(whole->box_rows, 58);  // pad 1 above and below
  EXPECT_EQ(whole->box_cols, 58);
  EXPECT_EQ(whole->shared_bytes, 2 * 58 * 58 * 2);
  EXPECT_EQ(whole->form_name, kPlanesSharedForm);
  EXPECT_EQ(whole->gather_reads, std::nullopt);  // its loads take image rows in order
  EXPECT_EQ(whole->warp_load_sectors, std::nullopt);
  EXPECT_THAT(DescribeIm2colPlan(*whole), HasSubstr("shared: 2 plane window(s) of 58 x 58"));
  // Bands of 8 output rows read 10 image rows.
  auto band = LowerIm2col(op, T("sm_90a"), Launch(9, 8 * 56, 256));
  ASSERT_TRUE(band.ok()) << band.status();
  EXPECT_TRUE(band->shared_gather);
  EXPECT_EQ(band->band_rows, 8);
  EXPECT_EQ(band->box_rows, 10);
  // Tiles that cut a plane's taps or an output row reach one more plane or row.
  auto cut = LowerIm2col(op, T("sm_90a"), Launch(10, 100, 256));
  ASSERT_TRUE(cut.ok()) << cut.status();
  EXPECT_TRUE(cut->shared_gather);
  EXPECT_EQ(cut->box_planes, 2);
  EXPECT_EQ(cut->band_rows, 3);
  EXPECT_EQ(cut->box_rows, 5);
  // Windows too large for shared memory: the elements are gathered one by one.
  auto refused = LowerIm2col(op, T("sm_90a"), Launch(9 * 64, 3136, 256));
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_FALSE(refused->shared_gather);
  EXPECT_THAT(absl::StrJoin(refused->decision_log, "\n"),
              HasSubstr("planes_gather=shared not taken: the image windows of a tile's 64 "
                        "plane(s) and 56 output row(s), 58 x 58 elements each (430592 B), do "
                        "not fit in shared memory"));
  // A persistent grid (one CTA per SM) takes it too: each CTA refills its box per tile.
  auto persistent = LowerIm2col(op, T("sm_90a"), Launch(18, 3136, 256, 1, 1));
  ASSERT_TRUE(persistent.ok()) << persistent.status();
  EXPECT_TRUE(persistent->shared_gather);
  // Windows that read each image element once (a k2 s2 patchify) have nothing to share.
  Im2colOp patches = Unfold(DataType::kF16, G(8, 32, 32, 16, 2, 2, 2, 2, 1, 1, 0, 0));
  patches.hints.annotations[kPlanesGatherKey] = "shared";
  auto once = LowerIm2col(patches, T("sm_90a"), Launch(16, 256, 256));
  ASSERT_TRUE(once.ok()) << once.status();
  EXPECT_FALSE(once->shared_gather);
  EXPECT_THAT(absl::StrJoin(once->decision_log, "\n"),
              HasSubstr("planes_gather=shared not taken: its 2x2 windows at stride 2x2 read each "
                        "image element at most once: nothing to share"));
  // The search space offers it at tiles it takes.
  int offered = 0;
  Im2colOp plain = Unfold(DataType::kF16, Resnet());
  for (const Trial& trial : Im2colSearchSpace(plain, T("sm_90a")).first) {
    auto it = trial.hints.annotations.find(kPlanesGatherKey);
    if (it == trial.hints.annotations.end() || it->second != "shared") continue;
    Im2colOp hinted = plain;
    hinted.hints = trial.hints;
    auto lowered = LowerIm2col(hinted, T("sm_90a"), trial.launch);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    EXPECT_TRUE(lowered->shared_gather) << absl::StrJoin(lowered->decision_log, "\n");
    ++offered;
  }
  EXPECT_GE(offered, 4);
}

// planes_gather=patches: tiles of kernel rows x window rows of one plane, the image rows
// loaded whole in vectors along W, the taps' runs stored as one span where a tile takes
// every window row (16-byte stores where the span's bytes allow them), as runs otherwise;
// refused, naming each reason, where the windows do not tile a dense NCHW image exactly.
TEST(Im2colPlanesTest, PatchesTileKernelRowsAndWindowRows) {
  Im2colOp vit = Im2colOp::Dense(DataType::kF16, G(2, 224, 224, 3, 16, 16, 16, 16, 1, 1, 0, 0));
  vit.img.strides = NchwStrides(vit.geometry);
  vit.order = ColumnOrder::kChannelRows;
  vit.hints.annotations[kPlanesGatherKey] = "patches";
  auto whole = LowerIm2col(vit, T("sm_90a"), Launch(4, 14, 256));
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->path, Im2colPath::kSimtPlanes);
  EXPECT_TRUE(whole->patches);
  EXPECT_EQ(whole->form_name, "planes_patches");
  EXPECT_EQ(whole->num_tiles, 2 * 3 * 4);
  EXPECT_EQ(whole->block_m, 4 * 16);
  EXPECT_EQ(whole->block_k, 14 * 14);
  EXPECT_EQ(whole->shared_bytes, 4 * 16 * 196 * 2);
  EXPECT_EQ(whole->patch_load_elems, 8);  // rows of 224 f16
  EXPECT_EQ(whole->vector_elems, 8);      // spans of 16 x 196 f16
  EXPECT_EQ(whole->gather_reads, 1);
  EXPECT_FALSE(whole->warp_load_sectors.has_value());  // neighbouring vectors
  EXPECT_THAT(DescribeIm2colPlan(*whole), HasSubstr("patches: 4 kernel row(s) x 14 window row(s)"));
  // Bands of 5 window rows: runs of 70 elements from rows 392 bytes apart, 4-byte stores.
  auto bands = LowerIm2col(vit, T("sm_90a"), Launch(32, 5, 256));
  ASSERT_TRUE(bands.ok()) << bands.status();
  EXPECT_EQ(bands->patch_rows, 16);
  EXPECT_EQ(bands->num_tiles, 2 * 3 * 3);
  EXPECT_EQ(bands->vector_elems, 2);
  // Too large a stage for sm_80's shared memory is refused with the reason.
  Im2colOp f64 = vit;
  f64.img.dtype = DataType::kF64;
  auto too_big = LowerIm2col(f64, T("sm_80"), Launch(16, 14, 256));
  ASSERT_FALSE(too_big.ok());
  EXPECT_THAT(too_big.status().message(), HasSubstr("shared"));
  // Overlapping padded windows: refused, naming each reason and what to use.
  Im2colOp overlap = Im2colOp::Dense(DataType::kF16, G(2, 14, 14, 8, 3, 3, 1, 1, 1, 1, 1, 1));
  overlap.img.strides = NchwStrides(overlap.geometry);
  overlap.order = ColumnOrder::kChannelRows;
  overlap.hints.annotations[kPlanesGatherKey] = "patches";
  auto refused = LowerIm2col(overlap, T("sm_90a"), Launch(1, 14, 256));
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              AllOf(HasSubstr("planes_gather=patches"), HasSubstr("kernel 3x3 differs from stride 1x1"),
                    HasSubstr("padding 1x1"), HasSubstr("planes_gather=element")));
}

}  // namespace
}  // namespace tiletune

// Every col2im form (direct, staged, swept), bit-exact against the CPU reference on fresh random data with the
// image poisoned and guard zones checked, over a few hundred geometries: asymmetric
// kernels, strides with gaps (stride > kernel), dilations, pads of half the kernel and
// more, C = 1, 3 and 7 among others, 1x1 kernels, padded image strides, tails, persistent
// grids and L2 policies. Each case runs twice on new data; the second run also checks the
// result is the same bits run to run.
//
// The geometries come from a fixed list of seeds (stable test names); the data is drawn
// from std::random_device on every run.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_format.h"
#include "compiler/codegen/codegen_test_util.h"
#include "compiler/ops/col2im/col2im_definition.h"
#include "compiler/ops/col2im/col2im_lowering.h"
#include "compiler/ops/col2im/col2im_op.h"
#include "compiler/ops/col2im/col2im_search_space.h"
#include "compiler/ops/im2col/im2col_test_util.h"
#include "compiler/ops/im2col/conv_spec.h"
#include "gtest/gtest.h"
#include "kernels/emulate/gpu_test_emulation.h"
#include "kernels/runtime/gpu_test_util.h"
#include "kernels/tile_kernel.h"
#include "kernels/verify.h"

namespace tiletune {
namespace {

struct Col2imCase {
  std::string name;
  Col2imOp op;
  LaunchParams launch;
  Col2imPath path;
};

void PrintTo(const Col2imCase& c, std::ostream* os) {
  *os << c.name << " (" << DataTypeName(c.op.img.dtype) << " "
      << Im2colGeometryToString(c.op.geometry) << ")";
}

int64_t Uniform(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

template <typename T>
const T& Pick(std::mt19937_64& rng, const std::vector<T>& values) {
  return values[Uniform(rng, 0, static_cast<int64_t>(values.size()) - 1)];
}

// A random geometry within `r`, padding below the effective kernel; nullopt where the
// draw is not a valid col2im. RandomCase and RandomRunCase draw theirs here.
struct GeometryRanges {
  int64_t n = 3, h_min = 1, h = 19, w_min = 1, w = 19;
  int64_t kernel = 5;  // kh, kw in [1, kernel]; 1x1 one time in ten where one_by_one_sometimes
  bool one_by_one_sometimes = false;
  int64_t sh = 4, sw = 4, dh = 3, dw = 3;  // strides and dilations in [1, max]
};
std::optional<Im2colGeometry> DrawGeometry(std::mt19937_64& rng, const GeometryRanges& r,
                                           const std::function<int64_t()>& draw_c) {
  Im2colGeometry g;
  g.n = Uniform(rng, 1, r.n);
  g.h = Uniform(rng, r.h_min, r.h);
  g.w = Uniform(rng, r.w_min, r.w);
  g.c = draw_c();
  const bool one_by_one = r.one_by_one_sometimes && Uniform(rng, 0, 9) == 0;
  g.kh = one_by_one ? 1 : Uniform(rng, 1, r.kernel);
  g.kw = one_by_one ? 1 : Uniform(rng, 1, r.kernel);
  g.sh = Uniform(rng, 1, r.sh);
  g.sw = Uniform(rng, 1, r.sw);
  g.dh = Uniform(rng, 1, r.dh);
  g.dw = Uniform(rng, 1, r.dw);
  g.ph = Uniform(rng, 0, g.EffectiveKh() - 1);
  g.pw = Uniform(rng, 0, g.EffectiveKw() - 1);
  if (!ValidateConvGeometry(g, "col2im").ok()) return std::nullopt;
  return g;
}

Col2imCase RandomCase(Col2imPath path, int index) {
  const bool staged = path == Col2imPath::kSimtStaged;
  const bool swept = Col2imSwept(path);
  const bool planes_staged = path == Col2imPath::kSimtPlanesStaged;
  const bool planes = path == Col2imPath::kSimtPlanes || planes_staged;
  std::mt19937_64 rng(0xc021 + 7919 * index + static_cast<int>(path));
  const Target target = *Target::Parse("sm_90a");
  for (;;) {
    const DataType dtype =
        Pick(rng, std::vector<DataType>{DataType::kF32, DataType::kF16, DataType::kBF16});
    GeometryRanges ranges;
    ranges.one_by_one_sometimes = true;  // strides above the kernel: pixels no window reaches
    const std::optional<Im2colGeometry> drawn = DrawGeometry(rng, ranges, [&] {
      return Uniform(rng, 0, 2) == 0 ? Pick(rng, std::vector<int64_t>{1, 3, 7}) : Uniform(rng, 1, 40);
    });
    if (!drawn) continue;
    const Im2colGeometry& g = *drawn;
    Col2imOp op = Col2imOp::Dense(dtype, g);
    if (planes) {
      // F.fold's columns; mostly into an NCHW image, sometimes an NHWC one or an NCHW one
      // with padded rows.
      op.order = ColumnOrder::kChannelRows;
      const int roll = static_cast<int>(Uniform(rng, 0, 5));
      if (roll == 0) {
        const int64_t row = g.w + Uniform(rng, 1, 3);
        op.img.strides = {g.c * g.h * row, row, 1, g.h * row};
      } else if (roll != 1) {
        op.img.strides = NchwStrides(g);
      }
    } else if (Uniform(rng, 0, 4) == 0) {  // padded pixels, rows and images
      const int64_t pixel = g.c + Uniform(rng, 0, 3);
      const int64_t row = pixel * (g.w + Uniform(rng, 0, 2));
      op.img.strides = {row * (g.h + Uniform(rng, 0, 1)), row, pixel, 1};
    }
    const int roll = static_cast<int>(Uniform(rng, 0, 5));
    if (roll == 0) {
      op.hints.annotations = {{"col_eviction_policy", "evict_first"},
                              {"img_eviction_policy", "evict_last"}};
    } else if (roll == 1) {
      op.hints.eviction_policy = Pick(rng, std::vector<EvictionPolicy>{
                                               EvictionPolicy::kEvictFirst,
                                               EvictionPolicy::kEvictLast,
                                               EvictionPolicy::kEvictNormal});
    } else if (roll == 2) {
      op.hints.coalesced_width = Pick(rng, std::vector<int>{1, 2, 4});
    }
    // The swept form copies with TMA on sm_90 unless told not to.
    if (path == Col2imPath::kCpAsyncSwept) op.hints.disable_tma = true;
    LaunchParams launch;
    launch.tile = {Uniform(rng, 1, 6), Pick(rng, std::vector<int64_t>{1, 3, 8, 16, 32, 64})};
    launch.threads = static_cast<int>(
        swept ? Pick(rng, std::vector<int64_t>{32, 64, 128, 256, 448, 512})
              : Pick(rng, std::vector<int64_t>{32, 64, 128, 256}));
    launch.through_shared = staged || swept || planes_staged;
    launch.stages = swept ? static_cast<int>(Uniform(rng, 2, 5)) : 1;
    launch.ctas_per_sm = static_cast<int>(Uniform(rng, 0, 2));
    if (planes) {
      // Tiles within a plane, and (dense NCHW images) runs of whole rows crossing planes.
      launch.tile = {Pick(rng, std::vector<int64_t>{1, 2, 5, 8, 40}),
                     planes_staged ? Pick(rng, std::vector<int64_t>{g.w, g.w + 3})
                                   : Pick(rng, std::vector<int64_t>{1, 3, 8, 16, g.w, g.w + 3})};
    }
    auto lowered = LowerCol2im(op, target, launch);
    if (!lowered.ok() || lowered->path != path) continue;
    return {absl::StrFormat("%s_%s_%03d_%s", Col2imFormName(path),
                            path == Col2imPath::kTmaSwept  ? "tma"
                            : planes                           ? "simt"
                                                              : "cp_async",
                            index,
                            DataTypeName(dtype)),
            op, launch, path};
  }
}

// The patches form (planes_gather=patches): windows tiling a dense NCHW image exactly, of
// square and oblong kernels from 1 to 16, at random tiles of kernel rows x window rows
// (whole spans and runs), thread counts, vector widths and L2 policies.
Col2imCase RandomPatchesCase(int index) {
  std::mt19937_64 rng(0x9a7c + 7919 * index);
  const DataType dtype =
      Pick(rng, std::vector<DataType>{DataType::kF32, DataType::kF16, DataType::kBF16});
  const std::vector<int64_t> kernels = {1, 2, 3, 4, 7, 8, 14, 16};
  const int64_t kh = Pick(rng, kernels);
  const int64_t kw = Uniform(rng, 0, 2) == 0 ? Pick(rng, kernels) : kh;
  const int64_t oh = Uniform(rng, 1, 12), ow = Uniform(rng, 1, 12);
  const Im2colGeometry g = G(Uniform(rng, 1, 3), oh * kh, ow * kw, Uniform(rng, 1, 5), kh, kw,
                             kh, kw, 1, 1, 0, 0);
  Col2imOp op = Col2imOp::Dense(dtype, g);
  op.img.strides = NchwStrides(g);
  op.order = ColumnOrder::kChannelRows;
  op.hints.annotations[kCol2imPlanesGatherKey] = "patches";
  const int roll = static_cast<int>(Uniform(rng, 0, 3));
  if (roll == 0) op.hints.annotations["col_eviction_policy"] = "evict_first";
  if (roll == 1) op.hints.annotations["img_eviction_policy"] = "evict_last";
  // A width the image rows allow (every width divides a row of 16 elements).
  if (roll == 2 && g.w % 2 == 0) op.hints.coalesced_width = 2;
  LaunchParams launch;
  launch.tile = {Uniform(rng, 1, kh + 1), Uniform(rng, 1, oh + 1)};
  launch.threads = static_cast<int>(Pick(rng, std::vector<int64_t>{32, 64, 128, 256}));
  launch.ctas_per_sm = static_cast<int>(Uniform(rng, 0, 2));
  return {absl::StrFormat("patches_simt_%03d_%s", index, DataTypeName(dtype)), op, launch,
          Col2imPath::kSimtPatches};
}

// F.fold's columns at unit stride and dilation along W (the ResNet and UNet layers' 3x3
// s1), into images up to 48 pixels wide, with 2- to 8-pixel vectors: vectors whose windows
// lie inside the matrix and vectors at its edges, in one kernel.
Col2imCase RandomRunCase(int index) {
  std::mt19937_64 rng(0x5e11 + 104729 * index);
  const Target target = *Target::Parse("sm_90a");
  for (;;) {
    const DataType dtype =
        Pick(rng, std::vector<DataType>{DataType::kF32, DataType::kF16, DataType::kBF16});
    GeometryRanges ranges;
    ranges.n = 2;
    ranges.h = 24;
    ranges.w_min = 8;
    ranges.w = 48;
    ranges.sh = 3;
    ranges.sw = 1;
    ranges.dh = 2;
    ranges.dw = 1;
    const std::optional<Im2colGeometry> drawn =
        DrawGeometry(rng, ranges, [&] { return Uniform(rng, 1, 12); });
    if (!drawn) continue;
    const Im2colGeometry& g = *drawn;
    Col2imOp op = Col2imOp::Dense(dtype, g);
    op.order = ColumnOrder::kChannelRows;
    op.img.strides = NchwStrides(g);
    op.hints.coalesced_width = Pick(rng, std::vector<int>{2, 4, 8});
    if (Uniform(rng, 0, 2) == 0) op.hints.eviction_policy = EvictionPolicy::kEvictFirst;
    LaunchParams launch;
    launch.tile = {Pick(rng, std::vector<int64_t>{1, 3, 8, 40}),
                   Pick(rng, std::vector<int64_t>{8, 16, g.w, g.w + 5})};
    launch.threads = static_cast<int>(Pick(rng, std::vector<int64_t>{32, 128, 256}));
    launch.through_shared = false;
    auto lowered = LowerCol2im(op, target, launch);
    if (!lowered.ok() || lowered->vector_elems < 2) continue;
    return {absl::StrFormat("planes_runs_%03d_%s", index, DataTypeName(dtype)), op, launch,
            Col2imPath::kSimtPlanes};
  }
}

LaunchParams Launch(int64_t tile_h, int64_t tile_w, bool staged, int threads, int stages = 1,
                    int ctas_per_sm = 0) {
  LaunchParams launch;
  launch.tile = {tile_h, tile_w};
  launch.through_shared = staged;
  launch.threads = threads;
  launch.stages = stages;
  launch.ctas_per_sm = ctas_per_sm;
  return launch;
}

std::vector<Col2imCase> Cases() {
  std::vector<Col2imCase> cases;
  for (int i = 0; i < 130; ++i) cases.push_back(RandomCase(Col2imPath::kSimtDirect, i));
  for (int i = 0; i < 130; ++i) cases.push_back(RandomCase(Col2imPath::kSimtStaged, i));
  for (int i = 0; i < 60; ++i) cases.push_back(RandomCase(Col2imPath::kTmaSwept, i));
  for (int i = 0; i < 60; ++i) cases.push_back(RandomCase(Col2imPath::kCpAsyncSwept, i));
  for (int i = 0; i < 80; ++i) cases.push_back(RandomCase(Col2imPath::kSimtPlanes, i));
  for (int i = 0; i < 60; ++i) cases.push_back(RandomCase(Col2imPath::kSimtPlanesStaged, i));
  for (int i = 0; i < 30; ++i) cases.push_back(RandomRunCase(i));
  for (int i = 0; i < 40; ++i) cases.push_back(RandomPatchesCase(i));
  // F.fold's layout at network sizes, with the heuristic's launch.
  for (const auto& [name, dtype, g] :
       std::vector<std::tuple<std::string, DataType, Im2colGeometry>>{
           {"fold_resnet_3x3", DataType::kF16, G(2, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1)},
           {"fold_vit_patchify", DataType::kF32, G(2, 224, 224, 3, 16, 16, 16, 16, 1, 1, 0, 0)},
           {"fold_unet_k4_s2_p1", DataType::kBF16, G(2, 64, 64, 32, 4, 4, 2, 2, 1, 1, 1, 1)}}) {
    Col2imOp op = Col2imOp::Dense(dtype, g);
    op.img.strides = NchwStrides(g);
    op.order = ColumnOrder::kChannelRows;
    const Trial trial = Col2imHeuristic(op, *Target::Parse("sm_90a"));
    Col2imOp heuristic = op;
    heuristic.hints = trial.hints;
    // (The heuristic takes the patches form where the windows tile the image.)
    cases.push_back({name, heuristic, trial.launch,
                     PatchesBlocker(op).empty() ? Col2imPath::kSimtPatches
                                                : Col2imPath::kSimtPlanes});
    op.hints = trial.hints;
    op.hints.annotations.erase(kCol2imPlanesGatherKey);
    // And the staged planes form, 16 whole rows a tile.
    cases.push_back({name + "_staged", op, Launch(16, g.w, true, 256),
                     Col2imPath::kSimtPlanesStaged});
    // And the patches form where the windows tile the image, 2 kernel rows a tile.
    if (PatchesBlocker(op).empty()) {
      Col2imOp patches = op;
      patches.hints.annotations[kCol2imPlanesGatherKey] = "patches";
      cases.push_back({name + "_patches", patches, Launch(2, g.OH(), false, 256),
                       Col2imPath::kSimtPatches});
    }
  }
  {
    // A dilated window with the stride equal to the dilation along H, one-pixel tiles and
    // an L2 policy: the launch an NHWC record transferred to (its selected addresses
    // faulted the GPU before every position's address was clamped into the plane).
    const Im2colGeometry g = G(1, 19, 15, 1, 3, 3, 3, 2, 3, 2, 4, 4);
    Col2imOp op = Col2imOp::Dense(DataType::kF16, g);
    op.img.strides = NchwStrides(g);
    op.order = ColumnOrder::kChannelRows;
    op.hints.eviction_policy = EvictionPolicy::kEvictFirst;
    cases.push_back({"fold_dilated_one_pixel_tiles_evict_first", op, Launch(1, 1, false, 256),
                     Col2imPath::kSimtPlanes});
  }
  struct Fixed {
    std::string name;
    DataType dtype;
    Im2colGeometry geometry;
    LaunchParams launch;
    bool disable_tma = false;  // the swept form through cp.async on sm_90
  };
  const std::vector<Fixed> fixed = {
      {"resnet_3x3_direct", DataType::kF16, G(2, 14, 14, 64, 3, 3, 1, 1, 1, 1, 1, 1),
       Launch(1, 32, false, 256)},
      {"resnet_3x3_staged", DataType::kF16, G(2, 14, 14, 64, 3, 3, 1, 1, 1, 1, 1, 1),
       Launch(2, 14, true, 256)},
      {"resnet_3x3_s2_direct", DataType::kF16, G(2, 28, 28, 128, 3, 3, 2, 2, 1, 1, 1, 1),
       Launch(1, 16, false, 256)},
      {"stem_7x7_s2_p3_staged", DataType::kF16, G(2, 64, 64, 3, 7, 7, 2, 2, 1, 1, 3, 3),
       Launch(2, 64, true, 256)},
      {"stem_7x7_s2_p3_direct", DataType::kBF16, G(2, 64, 64, 3, 7, 7, 2, 2, 1, 1, 3, 3),
       Launch(2, 32, false, 128)},
      {"gaps_stride_over_kernel", DataType::kF32, G(1, 17, 19, 5, 2, 2, 4, 3, 1, 1, 0, 1),
       Launch(3, 8, true, 64)},
      {"one_by_one_strided", DataType::kF16, G(2, 9, 9, 7, 1, 1, 2, 2, 1, 1, 0, 0),
       Launch(1, 9, false, 64)},
      {"pad_over_half_dilated", DataType::kBF16, G(1, 9, 11, 4, 3, 2, 1, 1, 3, 2, 5, 1),
       Launch(4, 11, true, 128)},
      {"large_staged_whole_rows", DataType::kF16, G(4, 56, 56, 32, 3, 3, 1, 1, 1, 1, 1, 1),
       Launch(2, 56, true, 512)},
      {"stem_7x7_s2_p3_swept", DataType::kF16, G(2, 64, 64, 3, 7, 7, 2, 2, 1, 1, 3, 3),
       Launch(8, 64, true, 512, 2)},
      {"stem_7x7_s2_p3_swept_f32_3_buffers", DataType::kF32, G(2, 37, 45, 3, 7, 7, 2, 2, 1, 1, 3, 3),
       Launch(6, 20, true, 256, 3), true},
      {"stem_7x7_s2_p3_swept_tma_f32_3_buffers", DataType::kF32, G(2, 37, 45, 3, 7, 7, 2, 2, 1, 1, 3, 3),
       Launch(6, 20, true, 256, 3)},
      {"wide_c_swept_vectors", DataType::kBF16, G(2, 12, 13, 40, 3, 3, 1, 1, 1, 1, 1, 1),
       Launch(2, 13, true, 256, 2)},
      {"gaps_swept", DataType::kF16, G(1, 23, 19, 1, 2, 3, 5, 4, 1, 1, 1, 2), Launch(5, 19, true, 64, 2)},
      // Bands of rows (2 x 64 threads over 64-pixel rows) on a persistent grid, whose
      // producer runs ahead across tiles; a tile height the bands do not divide.
      {"stem_7x7_s2_p3_swept_bands_persistent", DataType::kF16,
       G(3, 64, 64, 3, 7, 7, 2, 2, 1, 1, 3, 3), Launch(8, 64, true, 128, 5, 1)},
      {"stem_7x7_s2_p3_swept_3_bands_over_7_rows", DataType::kBF16,
       G(2, 41, 30, 3, 7, 7, 2, 2, 1, 1, 3, 3), Launch(7, 30, true, 96, 4, 1)},
      // A matrix of 3402 B: its last 10 bytes lie past the last whole 16-byte chunk.
      {"swept_matrix_tail_by_hand", DataType::kF16, G(1, 7, 9, 3, 3, 3, 1, 1, 1, 1, 1, 1),
       Launch(2, 9, true, 64, 3, 1)},
      // 1024 threads: 4 bands of a 256-pixel row, the register cap of a full CTA.
      {"stem_7x7_s2_p3_swept_1024_threads", DataType::kF16,
       G(1, 64, 256, 3, 7, 7, 2, 2, 1, 1, 3, 3), Launch(8, 256, true, 1024, 5, 1)},
  };
  for (const Fixed& f : fixed) {
    Col2imOp op = Col2imOp::Dense(f.dtype, f.geometry);
    op.hints.disable_tma = f.disable_tma;
    const Col2imPath path = f.launch.stages == 1     ? (f.launch.through_shared
                                                            ? Col2imPath::kSimtStaged
                                                            : Col2imPath::kSimtDirect)
                            : f.disable_tma ? Col2imPath::kCpAsyncSwept
                                            : Col2imPath::kTmaSwept;
    cases.push_back({f.name, op, f.launch, path});
  }
  // What Library runs with no tuned record: the heuristic's launch for the stem at its real
  // width (on sm_90, 896 threads in 4 bands of 224 pixels, 5 buffers, one CTA per SM).
  Col2imOp stem = Col2imOp::Dense(DataType::kF16, G(2, 224, 224, 3, 7, 7, 2, 2, 1, 1, 3, 3));
  const Trial trial = Col2imHeuristic(stem, *Target::Parse("sm_90a"));
  stem.hints = trial.hints;
  cases.push_back({"stem_224_heuristic_default", stem, trial.launch, Col2imPath::kTmaSwept});
  return cases;
}

class Col2imGpuTest : public ::testing::TestWithParam<Col2imCase> {
 protected:
  void SetUp() override {
    if (EmulatingGpuTests()) return;  // context_ stays null: the case runs on the CPU
    TT_SKIP_WITHOUT_GPU(context_);
  }

  std::unique_ptr<Context> context_;
};

TEST_P(Col2imGpuTest, BitExactAgainstReference) {
  const Col2imCase& c = GetParam();
  auto target = Target::Parse(context_ == nullptr ? "sm_90a" : context_->info().ArchName());
  ASSERT_TRUE(target.ok());
  const Col2imDefinition col2im;
  auto lowered = LowerCol2im(c.op, *target, c.launch);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  ASSERT_EQ(lowered->path, c.path) << DescribeCol2imPlan(*lowered);
  if (context_ == nullptr) {
    const uint64_t seed = std::random_device{}();
    std::mt19937_64 rng(seed);
    const absl::Status verified = VerifyEmulated(
        col2im, std::make_shared<const LoweredCol2im>(*lowered), c.op, rng, /*runs=*/2);
    ASSERT_TRUE(verified.ok()) << verified << " (seed " << seed << ")\n"
                               << DescribeCol2imPlan(*lowered);
    return;
  }
  auto kernel = TileKernel::Create(*context_, col2im,
                                   std::make_shared<const LoweredCol2im>(*lowered), TestCompiler());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  std::mt19937_64 rng(std::random_device{}());
  for (int run = 0; run < 2; ++run) {
    absl::Status verified = VerifyTileKernel(*context_, **kernel, col2im, c.op, rng);
    ASSERT_TRUE(verified.ok()) << verified << "\n" << DescribeCol2imPlan(*lowered)
                               << (*kernel)->source();
  }
}

TEST(Col2imCasesTest, CoverTheGeometriesTheIssueAsksFor) {
  const std::vector<Col2imCase> cases = Cases();
  int gaps = 0, dilated = 0, asymmetric = 0, big_pad = 0, one_by_one = 0, strided_img = 0;
  int small_c[8] = {0};
  int forms[static_cast<int>(Col2imPath::kSimtPatches) + 1] = {};  // by Col2imPath
  int dtypes[3] = {0, 0, 0};
  for (const Col2imCase& c : cases) {
    const Im2colGeometry& g = c.op.geometry;
    ++forms[static_cast<int>(c.path)];
    if (g.sh > g.kh || g.sw > g.kw) ++gaps;
    if (g.dh > 1 || g.dw > 1) ++dilated;
    if (g.kh != g.kw || g.sh != g.sw || g.dh != g.dw || g.ph != g.pw) ++asymmetric;
    if (2 * g.ph >= g.kh && g.ph > 0) ++big_pad;
    if (g.kh == 1 && g.kw == 1) ++one_by_one;
    if (!c.op.img.IsRowMajor()) ++strided_img;
    if (g.c < 8) ++small_c[g.c];
    ++dtypes[c.op.img.dtype == DataType::kF32 ? 0 : c.op.img.dtype == DataType::kF16 ? 1 : 2];
  }
  EXPECT_GE(cases.size(), 200u);
  EXPECT_GE(forms[0], 100);
  EXPECT_GE(forms[1], 100);
  EXPECT_GE(forms[static_cast<int>(Col2imPath::kCpAsyncSwept)], 50);
  EXPECT_GE(forms[static_cast<int>(Col2imPath::kTmaSwept)], 50);
  EXPECT_GE(forms[static_cast<int>(Col2imPath::kSimtPlanes)], 60);
  EXPECT_GE(forms[static_cast<int>(Col2imPath::kSimtPlanesStaged)], 60);
  EXPECT_GE(forms[static_cast<int>(Col2imPath::kSimtPatches)], 40);
  EXPECT_GE(gaps, 40);
  EXPECT_GE(dilated, 100);
  EXPECT_GE(asymmetric, 150);
  EXPECT_GE(big_pad, 50);
  EXPECT_GE(one_by_one, 10);
  EXPECT_GE(strided_img, 30);
  for (int c : {1, 3, 7}) EXPECT_GE(small_c[c], 10) << "C=" << c;
  for (int d : dtypes) EXPECT_GE(d, 50);
}

INSTANTIATE_TEST_SUITE_P(Forms, Col2imGpuTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Col2imCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace tiletune

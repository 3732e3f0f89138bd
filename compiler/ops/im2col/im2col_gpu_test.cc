// Both im2col paths, bit-exact against the CPU reference on fresh random data with the
// column matrix poisoned and guard zones checked, over a few hundred geometries:
// asymmetric kernels, strides, dilations and pads (2*pad != (K-1)*dilation included), odd
// N*OH*OW and C, M and K tails, strided images, persistent grids and eviction policies.
//
// The geometries come from a fixed list of seeds (stable test names); the image data is
// drawn from std::random_device on every run.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/codegen/codegen_test_util.h"
#include "compiler/ops/im2col/im2col_definition.h"
#include "compiler/ops/im2col/im2col_lowering.h"
#include "compiler/ops/im2col/conv_spec.h"
#include "compiler/ops/im2col/im2col_op.h"
#include "compiler/ops/im2col/im2col_reference.h"
#include "compiler/ops/im2col/im2col_search_space.h"
#include "compiler/ops/im2col/im2col_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/emulate/gpu_test_emulation.h"
#include "kernels/runtime/gpu_test_util.h"
#include "kernels/runtime/runtime.h"
#include "kernels/tile_kernel.h"
#include "kernels/verify.h"

namespace tiletune {
namespace {

struct Im2colCase {
  std::string name;
  Im2colOp op;
  LaunchParams launch;
  // The path and form the lowering must take.
  Im2colPath path;
};

// Keeps gtest from dumping the struct's bytes in failure messages.
void PrintTo(const Im2colCase& c, std::ostream* os) {
  *os << c.name << " (" << DataTypeName(c.op.img.dtype) << " "
      << Im2colGeometryToString(c.op.geometry) << ")";
}

LaunchParams Launch(int64_t block_m, int64_t block_k, int threads, int stages, int ctas = 0) {
  LaunchParams launch;
  launch.tile = {block_m, block_k};
  launch.threads = threads;
  launch.stages = stages;
  launch.ctas_per_sm = ctas;
  return launch;
}

int64_t Uniform(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

template <typename T>
const T& Pick(std::mt19937_64& rng, const std::vector<T>& values) {
  return values[Uniform(rng, 0, static_cast<int64_t>(values.size()) - 1)];
}

// One random case for `path`, valid for sm_90a (the lowering decides; draws repeat until
// it accepts). The flat form's cases have tiles that span whole rows; the staged form's,
// tiles of whole output rows of an image with contiguous pixels, their boxes filled by bulk
// copies when `bulk` (16-byte aligned image rows) and by the threads' loads (disable_tma)
// otherwise.
//
// With `phase` (staged, bulk), the cases the phase gather serves, asked for by annotation:
// one output row per tile, one tile per CTA, 2-byte elements, a dense image. With gather
// "row_phase" (staged), those of staged_gather=row_phase: one output row per tile, each
// row's run at its own phase of the vector, mostly rows where that phase varies.
//
// With `gather` (planes), the cases planes_gather=<gather> serves, asked for by annotation:
// "span", or "shared" (tiles of whole planes and output rows). With "window_row" (row),
// the cases row_vector=window_row serves: narrow C, no W dilation, and kernel rows, strides,
// pads and image rows that are whole multiples of a vector wider than C allows.
Im2colCase RandomCase(Im2colPath path, int index, bool bulk = false, bool phase = false,
                      const std::string& gather = "") {
  const bool span = gather == "span", shared = gather == "shared";
  const bool window = gather == "window_row";
  const bool row_phase = gather == "row_phase";
  const bool tma = path == Im2colPath::kTma;
  const bool staged = path == Im2colPath::kSimtStaged;
  const bool flat = staged || path == Im2colPath::kSimtFlat;
  const bool planes = path == Im2colPath::kSimtPlanes;
  std::mt19937_64 rng(0x1a2c0 + 7919 * index + (tma ? 1 : 0) + (flat ? 2 : 0) +
                      (staged ? 4 : 0) + (bulk ? 8 : 0) + (phase ? 16 : 0) + (planes ? 32 : 0) +
                      (span ? 64 : 0) + (shared ? 128 : 0) + (window ? 256 : 0) +
                      (row_phase ? 512 : 0));
  Target target = *Target::Parse("sm_90a");
  for (int attempt = 0;; ++attempt) {
    DataType dtype = phase ? Pick(rng, std::vector<DataType>{DataType::kF16, DataType::kBF16})
                           : Pick(rng, AllDataTypes());
    int e = DataTypeBytes(dtype);
    Im2colGeometry g;
    g.n = Uniform(rng, 1, 3);
    g.h = Uniform(rng, 1, 19);
    g.w = Uniform(rng, 1, 19);
    g.kh = Uniform(rng, 1, 5);
    g.kw = Uniform(rng, 1, 5);
    g.sh = Uniform(rng, 1, 3);
    g.sw = Uniform(rng, 1, 3);
    g.dh = Uniform(rng, 1, 3);
    g.dw = Uniform(rng, 1, 3);
    g.ph = Uniform(rng, 0, g.EffectiveKh() - 1);
    g.pw = Uniform(rng, 0, g.EffectiveKw() - 1);
    int64_t channel_unit = tma ? std::max(1, 16 / e) : 1;
    g.c = channel_unit * Uniform(rng, 1, tma ? 6 : 37);
    if (window) {
      // unit pixels hold a whole number of the vector's elements.
      g.c = Pick(rng, std::vector<int64_t>{1, 2, 3, 4, 6, 8});
      const int64_t vector = std::max(2, 16 / e) >> Uniform(rng, 0, 2);
      const int64_t unit = std::max<int64_t>(1, vector / std::gcd(vector, g.c));
      g.dw = 1;
      g.kw = unit * Uniform(rng, 1, unit > 4 ? 2 : 4);
      g.sw = unit * Uniform(rng, 1, 2);
      g.pw = Uniform(rng, 0, 1) == 0 ? 0 : unit * Uniform(rng, 0, (g.kw - 1) / unit);
      g.w = unit * Uniform(rng, 1, unit > 4 ? 4 : 12);
    }
    if (!ValidateIm2colGeometry(g).ok()) continue;
    Im2colOp op = Im2colOp::Dense(dtype, g);
    if (planes) {
      // F.unfold's columns; mostly of an NCHW image, sometimes of an NHWC one or of an
      // NCHW one with padded rows.
      op.order = ColumnOrder::kChannelRows;
      const int roll = static_cast<int>(Uniform(rng, 0, 5));
      if (roll == 0) {
        const int64_t row = g.w + Uniform(rng, 1, 3);
        op.img.strides = {g.c * g.h * row, row, 1, g.h * row};
      } else if (roll != 1) {
        op.img.strides = NchwStrides(g);
      }
    }
    // Sometimes a strided image: rows padded by a few pixels (whole 16-byte units on TMA).
    if (!phase && !planes && Uniform(rng, 0, 4) == 0) {
      int64_t pixel = tma || staged || window ? g.c : g.c + Uniform(rng, 0, 3);
      int64_t row = pixel * (g.w + (window ? 16 : 1) * Uniform(rng, 0, 2));
      op.img.strides = {row * (g.h + Uniform(rng, 0, 1)), row, pixel, 1};
    }
    int roll = static_cast<int>(Uniform(rng, 0, 5));
    if (roll == 0) {
      op.hints.annotations = {{"img_eviction_policy", "evict_last"},
                              {"col_eviction_policy", "evict_first"}};
    } else if (roll == 1) {
      op.hints.eviction_policy =
          Pick(rng, std::vector<EvictionPolicy>{EvictionPolicy::kEvictFirst,
                                                EvictionPolicy::kEvictLast,
                                                EvictionPolicy::kEvictNormal});
    }
    op.hints.prefer_instruction = tma ? Instruction::kTma : Instruction::kSync;
    if (staged) op.hints.disable_tma = !bulk;
    // Bulk fills bring the image into L2 whole at the start or each tile's rows ahead:
    // half of each (these small problems would take the second by default).
    if (bulk) op.hints.annotations[kImgPrefetchKey] = Uniform(rng, 0, 1) == 0 ? "ahead" : "all";
    if (staged) {
      op.hints.annotations[kStagedGatherKey] = phase ? "phase" : row_phase ? "row_phase" : "table";
    }
    if (window) {
      op.hints.annotations[kRowVectorKey] = "window_row";
    } else if (planes && !gather.empty()) {
      op.hints.annotations[kPlanesGatherKey] = gather;
    }
    LaunchParams launch;
    if (shared) {
      // Mostly tiles of 1 to 3 whole planes' tap rows, of whole output rows or bands of
      // them; sometimes tiles that cut planes and rows anywhere.
      const int64_t l = g.OH() * g.OW();
      const bool cut = Uniform(rng, 0, 3) == 0;
      const int64_t cols = Uniform(rng, 0, 2) == 0 ? l + Uniform(rng, 0, 4)
                           : cut                    ? Uniform(rng, 1, l)
                                                    : g.OW() * Uniform(rng, 1, g.OH());
      const int64_t rows = cut ? Uniform(rng, 1, 3 * g.kh * g.kw) : g.kh * g.kw * Uniform(rng, 1, 3);
      launch = Launch(rows, cols, Pick(rng, std::vector<int>{32, 64, 128, 256, 512}), 1, 0);
    } else if (planes) {
      // Tiles of whole rows of [N*C*KH*KW, OH*OW] (block_K >= OH*OW) and of part rows.
      const int64_t l = g.OH() * g.OW();
      const int64_t cols = Uniform(rng, 0, 2) == 0 ? Uniform(rng, 1, l) : l + Uniform(rng, 0, 4);
      launch = Launch(Pick(rng, std::vector<int64_t>{1, 2, 3, 8, 64}), cols,
                      Pick(rng, std::vector<int>{32, 64, 128, 256, 512}), 1, 0);
    } else if (tma) {
      launch = Launch(Pick(rng, std::vector<int64_t>{8, 16, 32, 64, 128, 256}),
                      channel_unit * Uniform(rng, 1, 8), 32, static_cast<int>(Uniform(rng, 1, 4)),
                      static_cast<int>(Uniform(rng, 0, 2)));
    } else if (phase || row_phase) {
      // row_phase: sometimes a persistent grid (tile after tile per CTA).
      launch = Launch(g.OW(), g.K() + Uniform(rng, 0, 8),
                      Pick(rng, std::vector<int>{64, 128, 256, 512}), 1,
                      row_phase ? static_cast<int>(Uniform(rng, 0, 2)) : 0);
    } else if (staged) {
      launch = Launch(g.OW() * Uniform(rng, 1, 3), g.K() + Uniform(rng, 0, 8),
                      Pick(rng, std::vector<int>{32, 64, 128, 256, 512}), 1,
                      static_cast<int>(Uniform(rng, 0, 2)));
    } else if (flat) {
      // Odd block_M too, so the run allows only narrower stores.
      launch = Launch(Pick(rng, std::vector<int64_t>{1, 3, 8, 16, 32, 64}),
                      g.K() + Uniform(rng, 0, 8), Pick(rng, std::vector<int>{32, 64, 128, 256}),
                      1, static_cast<int>(Uniform(rng, 0, 2)));
    } else if (window) {
      // Whole rows, or block_K a multiple of 16 elements (every vector width divides it).
      launch = Launch(Pick(rng, std::vector<int64_t>{1, 4, 16, 32, 64}),
                      Uniform(rng, 0, 1) == 0 ? g.K() : 16 * Uniform(rng, 1, 6),
                      Pick(rng, std::vector<int>{32, 64, 128, 256}), 1,
                      static_cast<int>(Uniform(rng, 0, 2)));
    } else {
      launch = Launch(Pick(rng, std::vector<int64_t>{1, 4, 16, 32, 64}), Uniform(rng, 1, 96),
                      Pick(rng, std::vector<int>{32, 64, 128, 256}), 1,
                      static_cast<int>(Uniform(rng, 0, 2)));
    }
    auto lowered = LowerIm2col(op, target, launch);
    if (!lowered.ok() || lowered->path != path) continue;
    if (staged && lowered->box.bulk_fill != bulk) continue;
    if (staged && lowered->box.phase_gather != phase) continue;
    if (staged && lowered->box.row_phase != row_phase) continue;
    // Rows whose phase varies (no period of vectors divides OW), three cases in four: where
    // one does, every row starts a whole vector and the phase is 0.
    if (row_phase && index % 4 != 0) {
      const int64_t vector = 16 / e;
      if (g.OW() % (vector / std::gcd(g.K(), vector)) == 0) continue;
    }
    if (planes && lowered->span_gather != span) continue;
    if (planes && lowered->shared_gather != shared) continue;
    if (lowered->window_row_vector != window) continue;
    return {absl::StrFormat("%s_%03d_%s",
                            window   ? "simt_window_row"
                            : span   ? "planes_span"
                            : shared ? "planes_shared"
                            : planes ? "planes"
                            : tma    ? "tma"
                            : phase  ? "staged_phase"
                            : row_phase ? (bulk ? "staged_row_phase_bulk" : "staged_row_phase")
                            : staged ? (bulk ? "staged_bulk" : "staged")
                            : flat   ? "flat"
                                     : "simt",
                            index, DataTypeName(dtype)),
            op, launch, path};
  }
}

// The planes form with planes_gather=patches: windows tiling a dense NCHW image exactly, of
// square and oblong kernels from 1 to 16, every element size, at random tiles of kernel rows
// x window rows (whole spans and runs), thread counts, vector widths and L2 policies.
Im2colCase RandomPatchesCase(int index) {
  std::mt19937_64 rng(0x7a1c + 7919 * index);
  const DataType dtype = Pick(rng, std::vector<DataType>{DataType::kU8, DataType::kF16,
                                                         DataType::kBF16, DataType::kF32,
                                                         DataType::kF64});
  const std::vector<int64_t> kernels = {1, 2, 3, 4, 7, 8, 14, 16};
  const int64_t kh = Pick(rng, kernels);
  const int64_t kw = Uniform(rng, 0, 2) == 0 ? Pick(rng, kernels) : kh;
  const int64_t oh = Uniform(rng, 1, 12), ow = Uniform(rng, 1, 12);
  const Im2colGeometry g = G(Uniform(rng, 1, 3), oh * kh, ow * kw, Uniform(rng, 1, 5), kh, kw,
                             kh, kw, 1, 1, 0, 0);
  Im2colOp op = Im2colOp::Dense(dtype, g);
  op.img.strides = NchwStrides(g);
  op.order = ColumnOrder::kChannelRows;
  op.hints.annotations[kPlanesGatherKey] = "patches";
  const int roll = static_cast<int>(Uniform(rng, 0, 3));
  if (roll == 0) op.hints.annotations["col_eviction_policy"] = "evict_first";
  if (roll == 1) op.hints.annotations["img_eviction_policy"] = "evict_last";
  if (roll == 2) op.hints.coalesced_width = 1;
  LaunchParams launch = Launch(Uniform(rng, 1, kh + 1), Uniform(rng, 1, oh + 1),
                               static_cast<int>(Pick(rng, std::vector<int64_t>{32, 64, 128, 256})),
                               1, static_cast<int>(Uniform(rng, 0, 2)));
  return {absl::StrFormat("planes_patches_%03d_%s", index, DataTypeName(dtype)), op, launch,
          Im2colPath::kSimtPlanes};
}

std::vector<Im2colCase> Cases() {
  std::vector<Im2colCase> cases;
  for (int i = 0; i < 40; ++i) cases.push_back(RandomPatchesCase(i));
  for (int i = 0; i < 130; ++i) cases.push_back(RandomCase(Im2colPath::kSimtRow, i));
  for (int i = 0; i < 80; ++i) {
    cases.push_back(RandomCase(Im2colPath::kSimtRow, i, false, false, "window_row"));
  }
  for (int i = 0; i < 110; ++i) cases.push_back(RandomCase(Im2colPath::kTma, i));
  for (int i = 0; i < 60; ++i) cases.push_back(RandomCase(Im2colPath::kSimtFlat, i));
  for (int i = 0; i < 80; ++i) cases.push_back(RandomCase(Im2colPath::kSimtPlanes, i));
  for (int i = 0; i < 80; ++i) {
    cases.push_back(RandomCase(Im2colPath::kSimtPlanes, i, false, false, "span"));
  }
  for (int i = 0; i < 80; ++i) {
    cases.push_back(RandomCase(Im2colPath::kSimtPlanes, i, false, false, "shared"));
  }
  for (int i = 0; i < 60; ++i) cases.push_back(RandomCase(Im2colPath::kSimtStaged, i));
  for (int i = 0; i < 40; ++i) {
    cases.push_back(RandomCase(Im2colPath::kSimtStaged, i, /*bulk=*/true));
  }
  for (int i = 0; i < 40; ++i) {
    cases.push_back(RandomCase(Im2colPath::kSimtStaged, i, /*bulk=*/true, /*phase=*/true));
  }
  for (int i = 0; i < 40; ++i) {
    cases.push_back(RandomCase(Im2colPath::kSimtStaged, i, i % 2 == 0, false, "row_phase"));
  }
  // Fixed shapes: ResNet-like layers scaled down, on both paths.
  struct Fixed {
    std::string name;
    DataType dtype;
    Im2colGeometry geometry;
    LaunchParams launch;
    bool tma;
    bool disable_tma = false;
    std::map<std::string, std::string> annotations;
  };
  std::vector<Fixed> fixed = {
      {"resnet_3x3_tma", DataType::kF16, G(2, 14, 14, 64, 3, 3, 1, 1, 1, 1, 1, 1),
       Launch(128, 64, 32, 2), true},
      {"resnet_3x3_simt", DataType::kF16, G(2, 14, 14, 64, 3, 3, 1, 1, 1, 1, 1, 1),
       Launch(64, 64, 128, 1), false},
      {"resnet_3x3_s2_tma", DataType::kF16, G(2, 28, 28, 128, 3, 3, 2, 2, 1, 1, 1, 1),
       Launch(64, 128, 32, 3, 2), true},
      {"stem_7x7_s2_p3_tma", DataType::kF16, G(2, 32, 32, 8, 7, 7, 2, 2, 1, 1, 3, 3),
       Launch(128, 56, 32, 2), true},
      {"stem_7x7_s2_p3_c3_simt", DataType::kF16, G(2, 32, 32, 3, 7, 7, 2, 2, 1, 1, 3, 3),
       Launch(64, 49, 128, 1), false},
      // 2*pad != (K-1)*dilation in both axes, differently per axis.
      {"stem_7x7_s2_p3_c3_flat", DataType::kF16, G(2, 32, 32, 3, 7, 7, 2, 2, 1, 1, 3, 3),
       Launch(64, 147, 256, 1), false},
      {"stem_7x7_s2_p3_c3_staged", DataType::kF16, G(2, 32, 32, 3, 7, 7, 2, 2, 1, 1, 3, 3),
       Launch(32, 147, 256, 1), false},
      {"stem_7x7_s2_p3_c3_staged_loads", DataType::kF16, G(2, 32, 32, 3, 7, 7, 2, 2, 1, 1, 3, 3),
       Launch(32, 147, 256, 1), false, /*disable_tma=*/true},
      // Bulk-filled boxes with more tiles than the L2 prefetch runs ahead (3 waves of
      // resident CTAs), so the prefetch runs: one CTA per tile, and a persistent grid whose
      // CTAs reuse their mbarrier tile after tile; then the same with the whole image
      // prefetched at the start (the lowering's choice for an image this small).
      {"stem_bulk_prefetch_t512", DataType::kF16, G(128, 32, 32, 3, 7, 7, 2, 2, 1, 1, 3, 3),
       Launch(16, 147, 512, 1), false, false, {{"img_prefetch", "ahead"}}},
      {"stem_bulk_prefetch_persistent", DataType::kF16, G(128, 32, 32, 3, 7, 7, 2, 2, 1, 1, 3, 3),
       Launch(16, 147, 256, 1, 2), false, false, {{"img_prefetch", "ahead"}}},
      {"stem_bulk_prefetch_t512_phase", DataType::kF16, G(128, 32, 32, 3, 7, 7, 2, 2, 1, 1, 3, 3),
       Launch(16, 147, 512, 1), false, false,
       {{"img_prefetch", "ahead"}, {"staged_gather", "phase"}}},
      {"stem_bulk_prefetch_all_t512", DataType::kF16, G(128, 32, 32, 3, 7, 7, 2, 2, 1, 1, 3, 3),
       Launch(16, 147, 512, 1), false, false, {{"img_prefetch", "all"}}},
      {"stem_bulk_prefetch_all_persistent", DataType::kF16,
       G(128, 32, 32, 3, 7, 7, 2, 2, 1, 1, 3, 3), Launch(16, 147, 256, 1, 2), false, false,
       {{"img_prefetch", "all"}}},
      // The ResNet stem at full size (3584 tiles) with the heuristic's launch (the table,
      // the whole image prefetched at the start), at 512 threads, and with the phase gather.
      {"stem_224_bulk_t448", DataType::kF16, G(32, 224, 224, 3, 7, 7, 2, 2, 1, 1, 3, 3),
       Launch(112, 147, 448, 1), false},
      {"stem_224_bulk_t512", DataType::kF16, G(32, 224, 224, 3, 7, 7, 2, 2, 1, 1, 3, 3),
       Launch(112, 147, 512, 1), false},
      {"stem_224_bulk_t512_phase", DataType::kF16, G(32, 224, 224, 3, 7, 7, 2, 2, 1, 1, 3, 3),
       Launch(112, 147, 512, 1), false, false, {{"staged_gather", "phase"}}},
      // staged_gather=row_phase. AlexNet's 11x11 s4 on smaller images: OW = 9 or 7 and
      // K = 363 are odd, so no period of vectors divides a row and each row starts at its own
      // phase. 40-pixel rows (240 B) fill by bulk copies, one tile per CTA and persistent;
      // 35-pixel ones (210 B, not 16-byte aligned) by the threads' loads, likewise.
      {"alexnet_11x11_s4_row_phase_bulk", DataType::kF16,
       G(3, 40, 40, 3, 11, 11, 4, 4, 1, 1, 2, 2), Launch(9, 363, 256, 1), false, false,
       {{"staged_gather", "row_phase"}}},
      {"alexnet_11x11_s4_row_phase_bulk_persistent", DataType::kBF16,
       G(4, 40, 40, 3, 11, 11, 4, 4, 1, 1, 2, 2), Launch(9, 363, 512, 1, 2), false, false,
       {{"staged_gather", "row_phase"}, {"img_prefetch", "ahead"}}},
      {"alexnet_11x11_s4_row_phase_loads", DataType::kF16,
       G(3, 35, 35, 3, 11, 11, 4, 4, 1, 1, 0, 0), Launch(7, 363, 128, 1), false, false,
       {{"staged_gather", "row_phase"}}},
      {"alexnet_11x11_s4_row_phase_loads_persistent", DataType::kBF16,
       G(4, 35, 35, 3, 11, 11, 4, 4, 1, 1, 0, 0), Launch(7, 363, 512, 1, 2), false, false,
       {{"staged_gather", "row_phase"}}},
      // 8-byte elements (2-element vectors, two 4-byte units each), 1-byte ones with K = 45
      // (16-element vectors), and K = 3 below the vector (a vector spans 6 pixels).
      {"row_phase_f64_c3", DataType::kF64, G(2, 9, 9, 3, 3, 3, 1, 1, 1, 1, 1, 1),
       Launch(9, 27, 64, 1), false, false, {{"staged_gather", "row_phase"}}},
      {"row_phase_i8_c5_s2", DataType::kI8, G(2, 13, 13, 5, 3, 3, 2, 2, 1, 1, 1, 1),
       Launch(7, 45, 128, 1), false, false, {{"staged_gather", "row_phase"}}},
      {"row_phase_u8_k1x3_c1", DataType::kU8, G(2, 5, 21, 1, 1, 3, 1, 1, 1, 1, 0, 0),
       Launch(19, 3, 32, 1), false, false, {{"staged_gather", "row_phase"}}},
      // Box rows too long for 16-bit offsets: the table holds 32-bit ones.
      {"staged_wide_f32_u32_table", DataType::kF32, G(1, 4, 2048, 3, 3, 3, 1, 1, 1, 1, 1, 1),
       Launch(2048, 27, 256, 1), false},
      {"corners_asymmetric_tma", DataType::kBF16, G(3, 17, 13, 16, 3, 5, 1, 2, 3, 1, 2, 1),
       Launch(64, 32, 32, 2), true},
      {"corners_asymmetric_simt", DataType::kBF16, G(3, 17, 13, 16, 3, 5, 1, 2, 3, 1, 2, 1),
       Launch(64, 32, 128, 1), false},
      {"pad_over_half_tma", DataType::kF32, G(1, 9, 11, 4, 2, 2, 1, 1, 1, 1, 1, 1),
       Launch(32, 16, 32, 1), true},
      // More pixels per column than the TMA store box: two 256-row store pieces.
      {"tall_tile_tma", DataType::kF16, G(2, 20, 30, 16, 3, 3, 1, 1, 1, 1, 1, 1),
       Launch(512, 16, 32, 2), true},
      {"large_tma", DataType::kF16, G(8, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1),
       Launch(128, 64, 32, 4, 3), true},
      {"large_simt", DataType::kF16, G(8, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1),
       Launch(64, 64, 256, 1, 4), false},
  };
  // F.unfold's layout at network sizes: NCHW images, channel_rows columns, the heuristic's
  // bands and narrower ones.
  struct Unfold {
    std::string name;
    DataType dtype;
    Im2colGeometry geometry;
    LaunchParams launch;
  };
  const std::vector<Unfold> unfold = {
      {"unfold_resnet_3x3", DataType::kF16, G(2, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1),
       Launch(3, 3136, 256, 1)},
      {"unfold_resnet_3x3_s2_part_rows", DataType::kBF16, G(2, 56, 56, 32, 3, 3, 2, 2, 1, 1, 1, 1),
       Launch(4, 16, 128, 1)},
      {"unfold_vit_patchify", DataType::kF32, G(2, 224, 224, 3, 16, 16, 16, 16, 1, 1, 0, 0),
       Launch(40, 196, 256, 1)},
      {"unfold_alexnet_11x11_s4", DataType::kF16, G(2, 227, 227, 3, 11, 11, 4, 4, 1, 1, 0, 0),
       Launch(8, 3025, 512, 1)},
      {"unfold_resnet_7x7_c512_odd_rows", DataType::kF16, G(2, 7, 7, 512, 3, 3, 1, 1, 1, 1, 1, 1),
       Launch(168, 49, 256, 1)},
      // Rows of 56 bytes: the search space's box runs take 8-byte vectors.
      {"unfold_resnet_28x28", DataType::kF16, G(2, 28, 28, 32, 3, 3, 1, 1, 1, 1, 1, 1),
       Launch(9, 784, 128, 1)},
  };
  // The heuristic's launch on network layers (what Library runs untuned).
  for (const auto& [name, dtype, g] :
       std::vector<std::tuple<std::string, DataType, Im2colGeometry>>{
           {"unfold_heuristic_resnet_conv5", DataType::kF16, G(3, 7, 7, 64, 3, 3, 1, 1, 1, 1, 1, 1)},
           {"unfold_heuristic_vit_h14", DataType::kBF16, G(2, 224, 224, 3, 14, 14, 14, 14, 1, 1, 0, 0)},
           {"unfold_heuristic_unet_up", DataType::kF32, G(2, 64, 64, 16, 4, 4, 2, 2, 1, 1, 1, 1)}}) {
    Im2colOp op = Im2colOp::Dense(dtype, g);
    op.img.strides = NchwStrides(g);
    op.order = ColumnOrder::kChannelRows;
    const Trial trial = Im2colHeuristic(op, *Target::Parse("sm_90a"));
    op.hints = trial.hints;
    cases.push_back({name, op, trial.launch, Im2colPath::kSimtPlanes});
  }
  for (const Unfold& u : std::vector<Unfold>(unfold)) {
    // The same layers with planes_gather=span, where it applies, and with =shared at the
    // tiles the search space gives it.
    Im2colOp op = Im2colOp::Dense(u.dtype, u.geometry);
    op.img.strides = NchwStrides(u.geometry);
    op.order = ColumnOrder::kChannelRows;
    op.hints.annotations[kPlanesGatherKey] = "span";
    auto lowered = LowerIm2col(op, *Target::Parse("sm_90a"), u.launch);
    if (lowered.ok() && lowered->span_gather) {
      cases.push_back({u.name + "_span", op, u.launch, Im2colPath::kSimtPlanes});
    }
    op.hints.annotations[kPlanesGatherKey] = "shared";
    int n = 0;
    for (const Trial& trial : Im2colSearchSpace(op, *Target::Parse("sm_90a")).first) {
      if (!trial.hints.annotations.count(kPlanesGatherKey)) continue;
      const std::string& gather = trial.hints.annotations.at(kPlanesGatherKey);
      if (gather != "shared" && gather != "shared_runs") continue;
      Im2colOp shared = op;
      shared.hints = trial.hints;
      auto planned = LowerIm2col(shared, *Target::Parse("sm_90a"), trial.launch);
      if (!planned.ok() || !planned->shared_gather) continue;
      if (gather == "shared_runs" && !planned->box_runs) continue;
      cases.push_back({absl::StrCat(u.name, "_", gather, "_", n++), shared, trial.launch,
                       Im2colPath::kSimtPlanes});
    }
  }
  // planes_gather=shared_runs (column stride 1, output rows of whole vectors: each vector
  // loaded as two aligned vectors of the box and shifted into place), at every element size
  // and vector width, at every alignment of a run in the box (its rows are W + 2 wide,
  // dilation moves taps by 2), on the last vector of the box too.
  for (DataType dtype : {DataType::kU8, DataType::kF16, DataType::kF32, DataType::kF64}) {
    const int e = DataTypeBytes(dtype);
    for (int vector_bytes = std::max(4, 2 * e); vector_bytes <= 16; vector_bytes *= 2) {
      for (const auto& [h, w] : std::vector<std::pair<int64_t, int64_t>>{{8, 16}, {5, 40}, {3, 32}}) {
        for (int64_t dilation : {1, 2}) {
          const Im2colGeometry g = G(2, h, w, 3, 3, 3, 1, 1, dilation, dilation, dilation, dilation);
          Im2colOp op = Im2colOp::Dense(dtype, g);
          op.img.strides = NchwStrides(g);
          op.order = ColumnOrder::kChannelRows;
          op.hints.annotations[kPlanesGatherKey] = "shared_runs";
          op.hints.coalesced_width = vector_bytes / e;
          // Whole runs of 9 rows, and bands of two output rows.
          for (const LaunchParams& launch : {Launch(9, g.OH() * g.OW(), 128, 1),
                                             Launch(5, 2 * g.OW(), 64, 1)}) {
            auto planned = LowerIm2col(op, *Target::Parse("sm_90a"), launch);
            if (!planned.ok() || !planned->box_runs) continue;
            cases.push_back({absl::StrCat("unfold_shared_box_run_", DataTypeName(dtype), "_",
                                          vector_bytes, "B_", h, "x", w, "_d", dilation, "_",
                                          launch.tile[0], "x", launch.tile[1]),
                             op, launch, Im2colPath::kSimtPlanes});
          }
        }
      }
    }
  }
  // The shared gather on a persistent grid (one CTA per SM, 512 tiles): each CTA refills
  // its box tile after tile.
  for (const LaunchParams& launch : {Launch(18, 196, 128, 1, 1), Launch(10, 100, 256, 1, 1)}) {
    const Im2colGeometry g = G(4, 14, 14, 256, 3, 3, 1, 1, 1, 1, 1, 1);
    Im2colOp op = Im2colOp::Dense(DataType::kF16, g);
    op.img.strides = NchwStrides(g);
    op.order = ColumnOrder::kChannelRows;
    op.hints.annotations[kPlanesGatherKey] = "shared";
    cases.push_back({absl::StrCat("unfold_shared_persistent_", launch.tile[0], "x", launch.tile[1]),
                     op, launch, Im2colPath::kSimtPlanes});
  }
  for (const Unfold& u : unfold) {
    Im2colOp op = Im2colOp::Dense(u.dtype, u.geometry);
    const Im2colGeometry& g = u.geometry;
    op.img.strides = NchwStrides(g);
    op.order = ColumnOrder::kChannelRows;
    cases.push_back({u.name, op, u.launch, Im2colPath::kSimtPlanes});
  }
  for (const Fixed& f : fixed) {
    Im2colOp op = Im2colOp::Dense(f.dtype, f.geometry);
    op.hints.prefer_instruction = f.tma ? Instruction::kTma : Instruction::kSync;
    op.hints.disable_tma = f.disable_tma;
    op.hints.annotations = f.annotations;
    // The SIMT form is the lowering's choice.
    auto lowered = LowerIm2col(op, *Target::Parse("sm_90a"), f.launch);
    cases.push_back({f.name, op, f.launch,
                     lowered.ok() ? lowered->path
                                  : (f.tma ? Im2colPath::kTma : Im2colPath::kSimtRow)});
  }
  return cases;
}

class Im2colGpuTest : public ::testing::TestWithParam<Im2colCase> {
 protected:
  void SetUp() override {
    if (EmulatingGpuTests()) return;  // context_ stays null: the case runs on the CPU
    TT_SKIP_WITHOUT_GPU(context_);
  }

  std::unique_ptr<Context> context_;
};

TEST_P(Im2colGpuTest, BitExactAgainstReference) {
  const Im2colCase& c = GetParam();
  auto target = Target::Parse(context_ == nullptr ? "sm_90a" : context_->info().ArchName());
  ASSERT_TRUE(target.ok());
  TT_SKIP_UNLESS(c.path != Im2colPath::kTma || target->HasTma(), "no TMA on " << target->ArchName());
  const Im2colDefinition im2col;
  auto lowered = LowerIm2col(c.op, *target, c.launch);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  ASSERT_EQ(lowered->path, c.path) << DescribeIm2colPlan(*lowered);
  // A case asking for the row_phase gather tests it, not a form it falls back to.
  auto gather = c.op.hints.annotations.find(kStagedGatherKey);
  if (gather != c.op.hints.annotations.end() && gather->second == "row_phase") {
    ASSERT_TRUE(lowered->box.row_phase) << DescribeIm2colPlan(*lowered);
  }
  auto planes_gather = c.op.hints.annotations.find(kPlanesGatherKey);
  if (planes_gather != c.op.hints.annotations.end() && planes_gather->second == "patches") {
    ASSERT_TRUE(lowered->patches) << DescribeIm2colPlan(*lowered);
  }
  if (context_ == nullptr) {
    const uint64_t seed = std::random_device{}();
    std::mt19937_64 rng(seed);
    const absl::Status verified = VerifyEmulated(
        im2col, std::make_shared<const LoweredIm2col>(*lowered), c.op, rng, /*runs=*/2);
    ASSERT_TRUE(verified.ok()) << verified << " (seed " << seed << ")";
    return;
  }
  auto kernel = TileKernel::Create(*context_, im2col,
                                   std::make_shared<const LoweredIm2col>(*lowered), TestCompiler());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  std::mt19937_64 rng(std::random_device{}());
  for (int run = 0; run < 2; ++run) {
    absl::Status verified = VerifyTileKernel(*context_, **kernel, im2col, c.op, rng);
    ASSERT_TRUE(verified.ok()) << verified << "\n" << DescribeIm2colPlan(*lowered)
                               << (*kernel)->source();
  }
}

TEST(Im2colCasesTest, CoverTheGeometriesTheBriefAsksFor) {
  std::vector<Im2colCase> cases = Cases();
  int tma = 0, simt = 0, corner_mismatch = 0, odd_mc = 0, asymmetric = 0;
  for (const Im2colCase& c : cases) {
    const Im2colGeometry& g = c.op.geometry;
    (c.path == Im2colPath::kTma ? tma : simt)++;
    if (2 * g.ph != (g.kh - 1) * g.dh || 2 * g.pw != (g.kw - 1) * g.dw) ++corner_mismatch;
    if (g.M() % 2 == 1 && g.c % 2 == 1) ++odd_mc;
    if (g.kh != g.kw || g.sh != g.sw || g.dh != g.dw || g.ph != g.pw) ++asymmetric;
  }
  EXPECT_GE(cases.size(), 200u);
  EXPECT_GE(tma, 100);
  EXPECT_GE(simt, 100);
  EXPECT_GE(corner_mismatch, 100);
  EXPECT_GE(odd_mc, 10);
  EXPECT_GE(asymmetric, 150);
  int forms[5] = {0, 0, 0, 0, 0};
  for (const Im2colCase& c : cases) ++forms[static_cast<int>(c.path)];
  for (int form : forms) EXPECT_GE(form, 60);
  // Both ways of bringing the image into L2 ahead of the bulk copies.
  // And both gathers, the phase form with each.
  int prefetch[2] = {0, 0}, gather[2] = {0, 0}, phase_prefetch[2] = {0, 0};
  for (const Im2colCase& c : cases) {
    if (c.path != Im2colPath::kSimtStaged) continue;
    auto lowered = LowerIm2col(c.op, *Target::Parse("sm_90a"), c.launch);
    ASSERT_TRUE(lowered.ok()) << c.name << ": " << lowered.status();
    if (!lowered->box.bulk_fill) continue;
    ++prefetch[lowered->box.prefetch_all ? 1 : 0];
    ++gather[lowered->box.phase_gather ? 1 : 0];
    if (lowered->box.phase_gather) ++phase_prefetch[lowered->box.prefetch_all ? 1 : 0];
  }
  EXPECT_GE(prefetch[0], 15);
  EXPECT_GE(prefetch[1], 15);
  EXPECT_GE(gather[0], 30);
  EXPECT_GE(gather[1], 40);
  EXPECT_GE(phase_prefetch[0], 10);
  EXPECT_GE(phase_prefetch[1], 10);
  // The shared gather's box runs at every element size and vector width they serve.
  std::set<std::pair<int, int>> box_runs;
  for (const Im2colCase& c : cases) {
    if (!absl::StrContains(c.name, "_box_run_")) continue;
    auto lowered = LowerIm2col(c.op, *Target::Parse("sm_90a"), c.launch);
    ASSERT_TRUE(lowered.ok()) << c.name << ": " << lowered.status();
    EXPECT_TRUE(lowered->box_runs) << c.name;
    box_runs.insert({lowered->element_bytes, lowered->vector_elems * lowered->element_bytes});
  }
  EXPECT_THAT(box_runs, ::testing::IsSupersetOf(std::vector<std::pair<int, int>>{
                            {1, 4}, {1, 8}, {1, 16}, {2, 4}, {2, 8}, {2, 16}, {4, 8}, {4, 16},
                            {8, 16}}));
}

// planes_gather=span reads nothing outside the image, even where its last byte ends a
// block early: here the image's allocation is exactly its 2 x 3 x 5 x 13 f16 elements
// (780 B, 12 B into a block), the windows reach every image column (pad 1), and the last
// row's blocks would stick out (compute-sanitizer's memcheck, which
// bench/sanitize_on_device.sh runs over the span tests, reports any such load).
TEST(Im2colSpanGpuTest, SpanGatherReadsOnlyTheImage) {
  std::unique_ptr<Context> context;
  TT_SKIP_WITHOUT_GPU(context);
  auto target = Target::Parse(context->info().ArchName());
  ASSERT_TRUE(target.ok());
  const Im2colGeometry g = G(2, 5, 13, 3, 3, 3, 1, 1, 1, 1, 1, 1);
  Im2colOp op = Im2colOp::Dense(DataType::kF16, g);
  op.img.strides = NchwStrides(g);
  op.order = ColumnOrder::kChannelRows;
  op.hints.annotations[kPlanesGatherKey] = "span";
  op.hints.coalesced_width = 4;
  const LaunchParams launch = Launch(4, g.OH() * g.OW(), 64, 1);
  auto lowered = LowerIm2col(op, *target, launch);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  ASSERT_TRUE(lowered->span_gather) << DescribeIm2colPlan(*lowered);
  ASSERT_EQ(lowered->image_bytes % 16, 12);
  const Im2colDefinition im2col;
  auto kernel = TileKernel::Create(*context, im2col,
                                   std::make_shared<const LoweredIm2col>(*lowered), TestCompiler());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  const size_t img_bytes = lowered->image_bytes, col_bytes = Im2colColumnBytes(op);
  auto img = DeviceBuffer::Allocate(*context, img_bytes);
  auto col = DeviceBuffer::Allocate(*context, col_bytes);
  ASSERT_TRUE(img.ok() && col.ok());
  std::vector<uint8_t> host(img_bytes), expected(col_bytes), got(col_bytes);
  std::mt19937_64 rng(std::random_device{}());
  for (uint8_t& b : host) b = static_cast<uint8_t>(rng());
  ASSERT_TRUE(Im2colReference(op, host.data(), host.size(), expected.data(), col_bytes).ok());
  ASSERT_TRUE(img->CopyFromHost(host.data(), host.size()).ok());
  ASSERT_TRUE(col->Fill(0xa5).ok());
  ASSERT_TRUE((*kernel)->Launch(img->ptr(), col->ptr(), nullptr).ok());
  ASSERT_TRUE(context->Synchronize().ok());
  ASSERT_TRUE(col->CopyToHost(got.data(), got.size()).ok());
  for (size_t i = 0; i < col_bytes; ++i) ASSERT_EQ(got[i], expected[i]) << "column byte " << i;
}

INSTANTIATE_TEST_SUITE_P(Paths, Im2colGpuTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Im2colCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace tiletune

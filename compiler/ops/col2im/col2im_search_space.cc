#include "compiler/ops/col2im/col2im_search_space.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <utility>
#include <vector>

#include "compiler/lower/lowering_rules.h"
#include "compiler/ops/col2im/col2im_lowering.h"
#include "compiler/ops/im2col/conv_spec.h"

namespace tiletune {
namespace {

LaunchParams MakeLaunch(int64_t tile_h, int64_t tile_w, int threads, bool staged, int ctas,
                        int stages = 1) {
  LaunchParams p;
  p.tile = {tile_h, tile_w};
  p.threads = threads;
  p.through_shared = staged;
  p.ctas_per_sm = ctas;
  p.stages = stages;
  return p;
}

// The swept form's launch (through shared memory, `stages` >= 2 buffers).
LaunchParams SweptLaunch(int64_t tile_h, int64_t tile_w, int threads, int stages,
                         int ctas = 0) {
  return MakeLaunch(tile_h, tile_w, threads, true, ctas, stages);
}

// A whole-width tile row's items (pixels of short C; residue classes of SW padded, as the
// swept form walks them) in warps: the threads one band of rows takes.
int64_t RowThreads(const Im2colGeometry& g) { return RoundUp(g.sw * CeilDiv(g.w, g.sw), 32); }

// Threads for bands of rows: 1, 2 and 4 bands, up to 1024.
std::vector<int> BandThreads(const Im2colGeometry& g) {
  std::vector<int> threads;
  for (int64_t bands : {1, 2, 4}) {
    const int64_t t = RowThreads(g) * bands;
    if (t <= 1024) threads.push_back(static_cast<int>(t));
  }
  return threads;
}

// Channel-row columns (the planes form): tiles of a few rows of whole image rows (or of
// 256 columns of wider ones), the vector along W unset or narrowed, the L2 policies unset
// or the column matrix streamed.
// The planes form's default tile, for about `pixels` pixels: with a dense NCHW image,
// rows of the image as [N*C*H, W] (crossing planes), a multiple of what makes the run a
// multiple of 16 bytes; otherwise up to 256 columns of one plane. Fewer rows while the
// grid would hold under 1024 tiles.
LaunchParams PlanesLaunch(const Col2imOp& op, int64_t pixels, int threads) {
  const Im2colGeometry& g = op.geometry;
  if (op.img.strides == NchwStrides(g)) {
    const int64_t rows = g.n * g.c * g.h;
    const int64_t vector = 16 / DataTypeBytes(op.img.dtype);
    const int64_t unit = vector / std::gcd(vector, g.w);
    int64_t tile_h = std::max<int64_t>(unit, RoundUp(std::max<int64_t>(1, pixels / g.w), unit));
    while (tile_h > unit && CeilDiv(rows, tile_h) < 1024) {
      tile_h = std::max<int64_t>(unit, RoundUp(tile_h / 2, unit));
    }
    return MakeLaunch(std::min(tile_h, RoundUp(rows, unit)), g.w, threads, false, 0);
  }
  const int64_t cols = std::min<int64_t>(g.w, 256);
  int64_t rows = std::clamp<int64_t>(CeilDiv(pixels, cols), 1, g.h);
  while (rows > 1 && g.n * g.c * CeilDiv(g.h, rows) * CeilDiv(g.w, cols) < 1024) {
    rows = CeilDiv(rows, 2);
  }
  return MakeLaunch(rows, cols, threads, false, 0);
}

// The planes_staged form (through_shared) is not searched: it measured slower than the
// planes form on every fold tried (bench/results/col2im_planes_staged.md).
SearchSpace PlanesSearchSpace(const Col2imOp& op) {
  SearchSpace space;
  const LaunchParams base = PlanesLaunch(op, kPlanesTilePixels, 256);
  for (std::optional<int> width : std::vector<std::optional<int>>{std::nullopt, 1, 2, 4}) {
    for (bool stream : {false, true}) {
      Hints hints;
      hints.coalesced_width = width;
      hints.prefer_instruction = Instruction::kSync;
      if (stream) hints.annotations["col_eviction_policy"] = "evict_first";
      space.first.push_back({hints, base});
    }
  }
  auto add = [&](const LaunchParams& launch) {
    bool seen = false;
    for (const LaunchParams& have : space.launches) {
      seen = seen || (have.tile == launch.tile && have.threads == launch.threads &&
                      have.through_shared == launch.through_shared);
    }
    if (!seen) space.launches.push_back(launch);
  };
  for (int64_t pixels : {1024, 2048, 4096, 8192, 16384}) {
    for (int threads : {128, 256, 512}) {
      add(PlanesLaunch(op, pixels, threads));
    }
  }
  // Where the windows tile the image exactly, the patches form at its own tiles (its tile
  // means kernel rows x window rows; crossed with the launches above in the second phase,
  // a tile clips to min(tile_h, KH) kernel rows over every window row).
  if (PatchesBlocker(op).empty()) {
    for (int threads : {128, 256}) {
      for (const auto& [rows, band] : PatchesTiles(op.geometry, DataTypeBytes(op.img.dtype))) {
        const LaunchParams launch = MakeLaunch(rows, band, threads, false, 0);
        for (bool stream : {false, true}) {
          Hints hints;
          hints.prefer_instruction = Instruction::kSync;
          hints.annotations[kCol2imPlanesGatherKey] = "patches";
          if (stream) hints.annotations["col_eviction_policy"] = "evict_first";
          space.first.push_back({hints, launch});
        }
      }
    }
  }
  return space;
}

}  // namespace

std::vector<Hints> AllCol2imHints() {
  std::vector<Hints> all;
  const std::vector<std::optional<int>> widths = {std::nullopt, 1, 2, 4, 8};
  const std::vector<std::optional<EvictionPolicy>> policies = {
      std::nullopt, EvictionPolicy::kEvictFirst, EvictionPolicy::kEvictLast};
  for (auto width : widths) {
    for (auto policy : policies) {
      for (bool stream_columns : {false, true}) {
        Hints hints;
        hints.coalesced_width = width;
        hints.eviction_policy = policy;
        if (stream_columns) hints.annotations["col_eviction_policy"] = "evict_first";
        all.push_back(hints);
      }
    }
  }
  return all;
}

SearchSpace Col2imSearchSpace(const Col2imOp& op, const Target& target) {
  if (op.order == ColumnOrder::kChannelRows) return PlanesSearchSpace(op);
  const int64_t w = op.geometry.w;
  // The staged form only for short pixels: from a 128-byte pixel on, the direct form
  // already reads whole 128-byte runs and the stage only costs occupancy
  // (bench/col2im_benchmark compares the forms).
  const bool try_staged = op.geometry.c * DataTypeBytes(op.img.dtype) < kStagedMaxPixelBytes;
  SearchSpace space;
  // The swept form where cp.async exists, for the same short pixels: it reads each column
  // entry once in whole chunks, where the other forms read a few scattered bytes per tap.
  const bool try_swept = try_staged && target.HasCpAsync();
  std::vector<LaunchParams> representative = {MakeLaunch(1, 32, 256, false, 0)};
  if (try_staged) representative.push_back(MakeLaunch(2, 64, 256, true, 0));
  if (try_swept) representative.push_back(SweptLaunch(8, w, 256, 2));
  for (const Hints& hints : AllCol2imHints()) {
    for (const LaunchParams& launch : representative) space.first.push_back({hints, launch});
  }
  if (try_swept && target.HasTma()) {
    // The swept form copies with TMA where it can; its cp.async twin once per hint set.
    for (Hints hints : AllCol2imHints()) {
      hints.disable_tma = true;
      space.first.push_back({hints, SweptLaunch(8, w, 256, 2)});
    }
  }
  std::vector<std::pair<int64_t, int64_t>> tiles = {{1, 16}, {1, 32}, {1, 64}, {2, 32},
                                                    {4, 16}, {2, 64}, {4, 64}, {8, 32}};
  // Whole rows: a staged tile then reads each window row's runs once, with no overlap
  // between neighbouring tiles along W.
  for (int64_t rows : {1, 2, 4}) tiles.push_back({rows, w});
  for (auto [tile_h, tile_w] : tiles) {
    for (int threads : {128, 256, 512}) {
      for (bool staged : {false, true}) {
        if (staged && !try_staged) continue;
        for (int ctas : {0, 2}) {
          space.launches.push_back(MakeLaunch(tile_h, tile_w, threads, staged, ctas));
        }
      }
    }
  }
  if (try_swept) {
    // Taller tiles read fewer window rows twice (a window row reaching two tiles is read
    // by both, only the chunks each needs); narrower ones keep the buffers small for
    // wide rows. Tiles whose sums do not fit in registers are refused by the lowering.
    for (int64_t tile_h : {4, 8, 16}) {
      for (int64_t tile_w : {w, CeilDiv(w, 2), int64_t{64}}) {
        if (tile_w > w) continue;
        for (int threads : {128, 256, 512}) {
          for (int stages : {2, 3}) space.launches.push_back(SweptLaunch(tile_h, tile_w, threads, stages));
        }
      }
    }
  }
  if (try_swept && target.HasTma()) {
    // TMA's producer runs ahead across a persistent CTA's tiles, deep buffers keep several
    // window rows in flight, and bands of rows give a window row more warps (the swept
    // variants of bench/col2im_benchmark).
    for (int64_t tile_h : {4, 8, 16}) {
      for (int threads : BandThreads(op.geometry)) {
        for (int stages : {3, 5}) {
          space.launches.push_back(SweptLaunch(tile_h, w, threads, stages, /*ctas=*/1));
        }
      }
    }
  }
  return space;
}

Trial Col2imHeuristic(const Col2imOp& op, const Target& target) {
  Trial trial;
  trial.launch = MakeLaunch(1, 32, 256, false, 0);
  trial.hints = op.hints;
  const Hints& mine = op.hints;
  if (op.order == ColumnOrder::kChannelRows) {
    // The planes form: about 512 pixels of whole rows (256 columns of wider ones).
    trial.launch = PlanesLaunch(op, kPlanesTilePixels, 256);
    if (!mine.prefer_instruction.has_value() && !mine.annotations.count("prefer_instruction")) {
      trial.hints.prefer_instruction = Instruction::kSync;
    }
    if (!mine.eviction_policy.has_value() && !mine.annotations.count("col_eviction_policy")) {
      trial.hints.annotations["col_eviction_policy"] = "evict_first";
    }
    // Where the windows tile the image exactly, the patches form at its first tile (one
    // kernel row over as many window rows as fit), as the im2col heuristic does.
    // (Where the caller's other hints keep it from lowering, the planes form.)
    if (!mine.annotations.count(kCol2imPlanesGatherKey) && PatchesBlocker(op).empty()) {
      const auto tiles = PatchesTiles(op.geometry, DataTypeBytes(op.img.dtype));
      if (!tiles.empty()) {
        Col2imOp patches = op;
        patches.hints = trial.hints;
        patches.hints.annotations[kCol2imPlanesGatherKey] = "patches";
        const LaunchParams launch =
            MakeLaunch(tiles.front().first, tiles.front().second, 128, false, 0);
        if (LowerCol2im(patches, target, launch).ok()) {
          trial.launch = launch;
          trial.hints = patches.hints;
        }
      }
    }
    return trial;
  }
  bool swept_tma = false;
  if (op.geometry.c * DataTypeBytes(op.img.dtype) <= 16) {
    // Short pixels: the swept form where its buffers and sums fit, with TMA in bands of
    // rows on a persistent grid (faster than one band or the staged form on short-pixel
    // layers such as a 7x7 s2 stem, in bench/col2im_benchmark), else the staged form where
    // its stage fits (a very wide kernel's runs may not).
    const int64_t w = op.geometry.w;
    // Up to 4 whole bands of a row's pixels in warps, within 1024 threads.
    const int64_t row = RowThreads(op.geometry);
    const int banded =
        static_cast<int>(row >= 1024 ? 1024 : std::min<int64_t>(4, 1024 / row) * row);
    std::vector<LaunchParams> launches;
    if (target.HasTma() && !mine.disable_tma) {
      for (int stages : {5, 4, 3}) launches.push_back(SweptLaunch(8, w, banded, stages, 1));
    }
    for (const LaunchParams& launch :
         {SweptLaunch(8, w, 256, 2), SweptLaunch(8, std::min<int64_t>(w, 64), 256, 2),
          MakeLaunch(2, 64, 256, true, 0)}) {
      launches.push_back(launch);
    }
    for (const LaunchParams& launch : launches) {
      Col2imOp probe = op;
      probe.hints = trial.hints;
      if (launch.stages == 1 && !mine.prefer_instruction.has_value()) {
        probe.hints.prefer_instruction = Instruction::kSync;
      }
      auto lowered = LowerCol2im(probe, target, launch);
      if (lowered.ok()) {
        trial.launch = launch;
        swept_tma = lowered->path == Col2imPath::kTmaSwept;
        break;
      }
    }
  }
  if (trial.launch.stages == 1 && !mine.prefer_instruction.has_value() &&
      !mine.annotations.count("prefer_instruction")) {
    trial.hints.prefer_instruction = Instruction::kSync;
  }
  // Columns streamed (evict_first), except into the TMA sweep, whose window rows reaching
  // two tiles are read twice, the second time from L2.
  if (!swept_tma && !mine.eviction_policy.has_value() &&
      !mine.annotations.count("col_eviction_policy") &&
      !mine.annotations.count("img_eviction_policy")) {
    trial.hints.annotations["col_eviction_policy"] = "evict_first";
  }
  return trial;
}

}  // namespace tiletune

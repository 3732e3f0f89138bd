#include "compiler/ops/im2col/im2col_search_space.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/data_type.h"
#include "compiler/lower/lowering_rules.h"
#include "compiler/ops/im2col/conv_spec.h"
#include "compiler/ops/im2col/im2col_lowering.h"

namespace tiletune {
namespace {

// The longest column-matrix row for which the search adds tiles of whole rows.
constexpr int64_t kWholeRowTileMaxK = 1024;
// The widest output row for which it adds tiles of whole output rows.
constexpr int64_t kWholeOutputRowMaxOW = 512;

// The image kept in L2 (it is read many times) while the columns stream out.
void SplitEviction(Hints& hints) {
  hints.annotations["img_eviction_policy"] = "evict_last";
  hints.annotations["col_eviction_policy"] = "evict_first";
}

LaunchParams MakeLaunch(int64_t m, int64_t k, int threads, int stages, int ctas) {
  LaunchParams p;
  p.tile = {m, k};
  p.threads = threads;
  p.stages = stages;
  p.ctas_per_sm = ctas;
  return p;
}

// Threads of the search's extra whole-output-row launches, and of the heuristic's for a
// bulk-filled output row of at least kWideStagedMinVectors 16-byte vectors per thread:
// more threads than 256 keep more of a long row's loads in flight, and more than 512 were
// slower again.
constexpr int kWideStagedThreads = 512;
constexpr int64_t kWideStagedMinVectors = 4;

// The heuristic's threads for such a row: the fewest, in steps of 64 down from
// kWideStagedThreads, that give no thread more vectors than kWideStagedThreads would. The
// CTA's longest thread is then no longer, and fewer thread slots idle behind it.
int WideStagedThreads(int64_t vectors) {
  const int64_t most = CeilDiv(vectors, kWideStagedThreads);
  int threads = kWideStagedThreads;
  while (threads > 64 && CeilDiv(vectors, threads - 64) == most) threads -= 64;
  return threads;
}

// Box rows shorter than this fill faster by the threads' loads than by bulk copies (a
// bulk copy's fixed cost is not repaid by a short row): the heuristic then sets
// disable_tma.
constexpr int64_t kBulkFillMinRowBytes = 512;

// The heuristic's default tile: 128 rows of up to kDefaultBlockK columns.
constexpr int64_t kDefaultBlockM = 128;
constexpr int64_t kDefaultBlockK = 64;

// Whether a lowering is the staged form filling its boxes by bulk copies of rows long
// enough to gain from them.
bool LongBulkRows(const LoweredIm2col& l) {
  return l.path == Im2colPath::kSimtStaged && l.box.bulk_fill &&
         StagedRowCopyBytes(l) >= kBulkFillMinRowBytes;
}

// Narrow channels (C x element not a multiple of 16 B): the row form gathers element by
// element, where tiles of whole output rows (the staged form) or whole rows (the flat form)
// store 16-byte vectors. In order:
//  - a tile of one whole output row that the staged form fills by bulk copies of long
//    rows (sm_90+), whatever K, with 512 threads where each gets 4 vectors or more;
//  - for rows longer than the default tile's (K > 64; shorter ones lower to those forms by
//    themselves), one whole output row, or else 64 whole rows, filled by the threads;
// the first that lowers to one of the two forms with a vector wider than C allows. None
// when rows are long (K > 1024) or when the hints keep the row form.
std::optional<LaunchParams> WholeRowLaunch(const Im2colOp& op, const Hints& hints,
                                           const Target& target) {
  const int64_t k = op.geometry.K(), ow = op.geometry.OW();
  if (k > kWholeRowTileMaxK) return std::nullopt;
  Im2colOp trial_op = op;
  trial_op.hints = hints;
  auto lower = [&](const LaunchParams& launch) -> std::optional<LoweredIm2col> {
    absl::StatusOr<LoweredIm2col> lowered = LowerIm2col(trial_op, target, launch);
    if (lowered.ok() &&
        (lowered->path == Im2colPath::kSimtStaged || lowered->path == Im2colPath::kSimtFlat) &&
        lowered->flat_vector_elems > lowered->vector_elems) {
      return *std::move(lowered);
    }
    return std::nullopt;
  };
  if (ow <= kWholeOutputRowMaxOW) {
    const LaunchParams output_row = MakeLaunch(ow, k, 256, 1, 0);
    std::optional<LoweredIm2col> lowered = lower(output_row);
    if (lowered.has_value() && LongBulkRows(*lowered)) {
      const int64_t vectors = ow * k / lowered->flat_vector_elems;
      if (vectors >= kWideStagedMinVectors * kWideStagedThreads) {
        const LaunchParams wide = MakeLaunch(ow, k, WideStagedThreads(vectors), 1, 0);
        std::optional<LoweredIm2col> wide_lowered = lower(wide);
        if (wide_lowered.has_value() && LongBulkRows(*wide_lowered)) return wide;
      }
      return output_row;
    }
    if (lowered.has_value() && k > kDefaultBlockK) return output_row;
  }
  if (k <= kDefaultBlockK) return std::nullopt;
  const LaunchParams rows64 = MakeLaunch(64, k, 256, 1, 0);
  if (lower(rows64).has_value()) return rows64;
  return std::nullopt;
}

// Channel-row columns (the planes form), over the matrix [N*C*KH*KW, OH*OW]: tiles of
// whole rows up to this long, of kPlanesPartCols columns of longer ones.
constexpr int64_t kPlanesWholeMaxL = 16384;
constexpr int64_t kPlanesPartCols = 4096;

// A tile of whole rows of about `elems` elements: block_M a multiple of what makes
// block_M x OH*OW a multiple of 16 bytes (so the tile stores 16-byte vectors), fewer rows
// while the grid would hold under 1024 tiles (not below that multiple).
LaunchParams PlanesLaunch(const Im2colOp& op, int64_t elems, int threads) {
  const Im2colGeometry& g = op.geometry;
  const int64_t rows = g.n * g.c * g.kh * g.kw, l = g.OH() * g.OW();
  if (l > kPlanesWholeMaxL) {
    return MakeLaunch(std::max<int64_t>(1, elems / kPlanesPartCols), kPlanesPartCols, threads, 1, 0);
  }
  const int64_t vector = std::max<int64_t>(1, 16 / DataTypeBytes(op.img.dtype));
  const int64_t unit = vector / std::gcd(vector, l);
  int64_t block_m = std::max<int64_t>(unit, RoundUp(std::max<int64_t>(1, elems / l), unit));
  while (block_m > unit && CeilDiv(rows, block_m) < 1024) {
    block_m = std::max<int64_t>(unit, RoundUp(block_m / 2, unit));
  }
  return MakeLaunch(std::min(block_m, RoundUp(rows, unit)), l, threads, 1, 0);
}

// The planes form's hints: the vector unset or narrowed, the L2 policies unset or the
// image kept (it is read KH*KW times) while the columns stream out, and the elements
// gathered one by one or, for vectors of 2 elements or more, read as aligned blocks.
std::vector<Hints> PlanesHints() {
  std::vector<Hints> all;
  for (std::optional<int> width : std::vector<std::optional<int>>{std::nullopt, 1, 2, 4}) {
    for (bool split : {false, true}) {
      for (bool span : {false, true}) {
        if (span && width == 1) continue;
        Hints hints;
        hints.coalesced_width = width;
        hints.prefer_instruction = Instruction::kSync;
        if (split) SplitEviction(hints);
        if (span) hints.annotations[kPlanesGatherKey] = "span";
        all.push_back(hints);
      }
    }
  }
  return all;
}

// Tiles for planes_gather=shared: for 1, 2, 4 and 8 times the fewest planes whose tap rows
// make whole 16-byte vectors, the most output rows per tile whose image windows fit in
// kSharedBoxBytes while the grid keeps kSharedMinTiles tiles (bands of a multiple of the
// rows that make whole vectors too), at 256 and 512 threads.
constexpr int64_t kSharedBoxBytes = 48 << 10;
constexpr int64_t kSharedMinTiles = 256;

std::vector<LaunchParams> SharedPlanesLaunches(const Im2colOp& op) {
  const Im2colGeometry& g = op.geometry;
  const int64_t e = DataTypeBytes(op.img.dtype), vector = std::max<int64_t>(1, 16 / e);
  const int64_t taps = g.kh * g.kw, oh = g.OH(), ow = g.OW(), planes = g.n * g.c;
  const int64_t cols = PlanesWindowCols(g);
  const int64_t plane_unit = vector / std::gcd(vector, taps * oh * ow);
  const int64_t band_unit = vector / std::gcd(vector, ow);
  std::vector<LaunchParams> out;
  for (int64_t p = plane_unit; p <= 8 * plane_unit && p <= planes; p *= 2) {
    std::optional<int64_t> chosen;
    for (int64_t band = oh; band >= 1;) {
      const bool fits = p * PlanesWindowRows(g, band) * cols * e <= kSharedBoxBytes;
      const int64_t tiles = CeilDiv(planes, p) * CeilDiv(oh, band);
      if (fits) chosen = band;
      if (fits && tiles >= kSharedMinTiles) break;
      const int64_t next = RoundUp(CeilDiv(band, 2), band_unit);
      if (next >= band) break;
      band = next;
    }
    if (!chosen) continue;
    for (int threads : {256, 512}) {
      out.push_back(MakeLaunch(p * taps, *chosen * ow, threads, 1, 0));
    }
  }
  return out;
}

// Where 16-byte vectors cannot be read as runs of the shared gather's box (they would
// cross the output rows), the widest narrower vector that can, in elements
// (BoxRunsBlocker); none where 16 bytes can or nothing can.
std::optional<int> RowKeepingRunElems(const Im2colOp& op) {
  const int64_t e = DataTypeBytes(op.img.dtype);
  const int64_t widest = std::max<int64_t>(1, 16 / e);
  if (BoxRunsBlocker(op.geometry, e, widest).empty()) return std::nullopt;
  for (int64_t elems = widest / 2; elems >= 1; elems /= 2) {
    if (BoxRunsBlocker(op.geometry, e, elems).empty()) return static_cast<int>(elems);
  }
  return std::nullopt;
}

SearchSpace PlanesSearchSpace(const Im2colOp& op) {
  SearchSpace space;
  const LaunchParams base = PlanesLaunch(op, kPlanesTileElems, 256);
  for (const Hints& hints : PlanesHints()) space.first.push_back({hints, base});
  // Where the windows tile the image exactly, the patches form at its own tiles (its tile
  // means kernel rows x window rows; crossed with the launches below in the second phase, a
  // tile clips to min(block_M, KH) kernel rows over every window row), the image kept in L2
  // or not.
  if (ExactPatchesBlocker(op.geometry, op.img.strides).empty()) {
    for (int threads : {128, 256}) {
      for (const auto& [rows, band] : PatchesTiles(op.geometry, DataTypeBytes(op.img.dtype))) {
        const LaunchParams launch = MakeLaunch(rows, band, threads, 1, 0);
        for (bool split : {false, true}) {
          Hints hints;
          hints.prefer_instruction = Instruction::kSync;
          if (split) SplitEviction(hints);
          hints.annotations[kPlanesGatherKey] = "patches";
          space.first.push_back({hints, launch});
        }
      }
    }
  }
  std::vector<LaunchParams> launches;
  // The shared gather at its own tiles (whole planes and output rows), its image kept in
  // L2 while the columns stream out.
  Hints shared;
  shared.prefer_instruction = Instruction::kSync;
  SplitEviction(shared);
  shared.annotations[kPlanesGatherKey] = "shared";
  // At column stride 1, also with each vector read as a run of the box (where vectors
  // would cross output rows the lowering reads the box element by element: the shared
  // gather's kernel, which the tuner measures once), and there with the widest vectors
  // that keep the rows whole too (a 28-pixel f16 row: 8-byte vectors).
  Hints shared_runs = shared;
  shared_runs.annotations[kPlanesGatherKey] = "shared_runs";
  const std::optional<int> row_keeping = RowKeepingRunElems(op);
  Hints narrow_runs = shared_runs;
  narrow_runs.coalesced_width = row_keeping;
  for (const LaunchParams& launch : SharedPlanesLaunches(op)) {
    space.first.push_back({shared, launch});
    if (op.geometry.sw == 1) space.first.push_back({shared_runs, launch});
    if (row_keeping.has_value()) space.first.push_back({narrow_runs, launch});
    launches.push_back(launch);
  }
  for (int64_t elems : {2048, 4096, 8192, 16384, 32768}) {
    for (int threads : {128, 256, 512}) launches.push_back(PlanesLaunch(op, elems, threads));
  }
  for (const LaunchParams& launch : launches) {
    bool seen = false;
    for (const LaunchParams& have : space.launches) {
      seen = seen || (have.tile == launch.tile && have.threads == launch.threads);
    }
    if (!seen) space.launches.push_back(launch);
  }
  return space;
}

// The row form's vector bytes with row_vector=window_row added to `hints`, at `launch`; 0
// where the choice is not taken (it gives no wider vector than C, or does not apply).
int WindowRowVectorBytes(const Im2colOp& op, Hints hints, const Target& target,
                         const LaunchParams& launch) {
  Im2colOp trial = op;
  hints.annotations[kRowVectorKey] = "window_row";
  trial.hints = std::move(hints);
  absl::StatusOr<LoweredIm2col> lowered = LowerIm2col(trial, target, launch);
  return lowered.ok() && lowered->window_row_vector ? lowered->vector_bytes : 0;
}

}  // namespace

std::vector<Hints> AllIm2colHints() {
  std::vector<Hints> all;
  std::vector<std::optional<int>> widths = {std::nullopt, 1, 2, 4, 8};
  std::vector<std::optional<EvictionPolicy>> policies = {std::nullopt, EvictionPolicy::kEvictFirst,
                                                         EvictionPolicy::kEvictLast};
  std::vector<std::optional<Instruction>> instructions = {std::nullopt, Instruction::kTma,
                                                          Instruction::kSync};
  for (auto width : widths) {
    for (bool disable_tma : {false, true}) {
      for (auto policy : policies) {
        for (auto instruction : instructions) {
          for (bool split : {false, true}) {
            Hints hints;
            hints.coalesced_width = width;
            hints.disable_tma = disable_tma;
            hints.eviction_policy = policy;
            hints.prefer_instruction = instruction;
            if (split) SplitEviction(hints);
            all.push_back(hints);
            // Where the staged form may fill its boxes by bulk copies (no vector width, TMA
            // allowed, not the TMA path), each way of bringing the image into L2 and each
            // gather as well.
            if (!width && !disable_tma && instruction != Instruction::kTma) {
              for (const char* prefetch : {"ahead", "all"}) {
                for (const char* gather : {"table", "phase", "row_phase"}) {
                  Hints choice = hints;
                  choice.annotations[kImgPrefetchKey] = prefetch;
                  choice.annotations[kStagedGatherKey] = gather;
                  all.push_back(choice);
                }
              }
            }
          }
        }
      }
    }
  }
  return all;
}

SearchSpace Im2colSearchSpace(const Im2colOp& op, const Target& target) {
  if (op.order == ColumnOrder::kChannelRows) return PlanesSearchSpace(op);
  std::vector<LaunchParams> representative = {MakeLaunch(128, 64, 256, 1, 0),
                                              MakeLaunch(128, 64, 128, 2, 0)};
  std::vector<std::pair<int64_t, int64_t>> tiles = {{64, 64},  {128, 64}, {256, 64},
                                                    {128, 128}, {32, 128}, {64, 32}};
  // Tiles of whole rows when rows are short: the SIMT flat form stores 16-byte vectors of
  // them even where C allows only narrow ones (the C=3 stem).
  const int64_t k = op.geometry.K();
  if (k <= kWholeRowTileMaxK) {
    representative.push_back(MakeLaunch(64, k, 256, 1, 0));
    for (int64_t m : {16, 32, 64, 128}) tiles.push_back({m, k});
    // Whole output rows too: the flat form then stages its input rows in shared memory.
    const int64_t ow = op.geometry.OW();
    if (ow <= kWholeOutputRowMaxOW) {
      representative.push_back(MakeLaunch(ow, k, 256, 1, 0));
      tiles.push_back({ow, k});
      tiles.push_back({2 * ow, k});
    }
  }
  SearchSpace space;
  for (const Hints& hints : AllIm2colHints()) {
    for (const LaunchParams& launch : representative) space.first.push_back({hints, launch});
  }
  // The row form's vectors along a kernel row, where they are wider than along C.
  Hints sync;
  sync.prefer_instruction = Instruction::kSync;
  if (WindowRowVectorBytes(op, sync, target,
                           MakeLaunch(32, std::min(op.geometry.K(), kDefaultBlockK), 256, 1, 0)) >
      0) {
    for (bool split : {false, true}) {
      Hints hints = sync;
      hints.annotations[kRowVectorKey] = "window_row";
      if (split) SplitEviction(hints);
      for (const LaunchParams& launch : representative) space.first.push_back({hints, launch});
    }
  }
  for (auto [m, n] : tiles) {
    for (int threads : {128, 256}) {
      for (int stages : {1, 2, 3}) {
        for (int ctas : {0, 2}) space.launches.push_back(MakeLaunch(m, n, threads, stages, ctas));
      }
    }
  }
  // Tiles of whole output rows with more threads (the SIMT forms run one stage), and the
  // heuristic's fewer threads for one output row where it trims them.
  if (k <= kWholeRowTileMaxK && op.geometry.OW() <= kWholeOutputRowMaxOW) {
    for (int64_t rows : {1, 2}) {
      space.launches.push_back(
          MakeLaunch(rows * op.geometry.OW(), k, kWideStagedThreads, 1, 0));
    }
    // The row's 16-byte vectors.
    const int trimmed =
        WideStagedThreads(CeilDiv(op.geometry.OW() * k * DataTypeBytes(op.img.dtype), 16));
    if (trimmed != kWideStagedThreads) {
      space.launches.push_back(MakeLaunch(op.geometry.OW(), k, trimmed, 1, 0));
    }
  }
  return space;
}

Trial Im2colHeuristic(const Im2colOp& op, const Target& target) {
  Trial trial;
  trial.launch = MakeLaunch(kDefaultBlockM,
                            std::min<int64_t>(kDefaultBlockK, std::max<int64_t>(1, op.geometry.K())),
                            256, 1, 0);
  trial.hints = op.hints;
  const Hints& mine = op.hints;
  if (!mine.prefer_instruction.has_value() && !mine.annotations.count("prefer_instruction")) {
    trial.hints.prefer_instruction = Instruction::kSync;
  }
  if (!mine.eviction_policy.has_value() && !mine.annotations.count("img_eviction_policy") &&
      !mine.annotations.count("col_eviction_policy")) {
    SplitEviction(trial.hints);
  }
  if (op.order == ColumnOrder::kChannelRows) {
    trial.launch = PlanesLaunch(op, kPlanesTileElems, 256);
    // Where the windows tile the image exactly, the patches form at its first tile (one
    // kernel row over as many window rows as fit): its tunings won 12 of 14 such problems.
    // (Where the caller's other hints keep it from lowering, the planes form.)
    if (!mine.annotations.count(kPlanesGatherKey) &&
        ExactPatchesBlocker(op.geometry, op.img.strides).empty()) {
      const auto tiles = PatchesTiles(op.geometry, DataTypeBytes(op.img.dtype));
      if (!tiles.empty()) {
        Im2colOp patches = op;
        patches.hints = trial.hints;
        patches.hints.annotations[kPlanesGatherKey] = "patches";
        const LaunchParams launch =
            MakeLaunch(tiles.front().first, tiles.front().second, 128, 1, 0);
        if (LowerIm2col(patches, target, launch).ok()) {
          trial.launch = launch;
          trial.hints = patches.hints;
        }
      }
    }
    return trial;
  }
  // Where a kernel row gives the row form whole 16-byte vectors and C does not, the default
  // tile with them: a plain vector copy, which the narrow-channel tunings found ahead of
  // staging the input (bench/results/narrow_channels.md).
  if (!mine.coalesced_width && !mine.loop_layout && !mine.annotations.count(kRowVectorKey) &&
      trial.hints.prefer_instruction == Instruction::kSync &&
      WindowRowVectorBytes(op, trial.hints, target, trial.launch) == 16) {
    trial.hints.annotations[kRowVectorKey] = "window_row";
    return trial;
  }
  if (std::optional<LaunchParams> rows = WholeRowLaunch(op, trial.hints, target)) {
    trial.launch = *rows;
  }
  // Short box rows fill faster by the threads' loads, unless the hints chose.
  if (!mine.disable_tma && !mine.annotations.count("disable_tma")) {
    Im2colOp trial_op = op;
    trial_op.hints = trial.hints;
    absl::StatusOr<LoweredIm2col> lowered = LowerIm2col(trial_op, target, trial.launch);
    if (lowered.ok() && lowered->box.bulk_fill && !LongBulkRows(*lowered)) {
      trial.hints.disable_tma = true;
    }
  }
  return trial;
}

}  // namespace tiletune

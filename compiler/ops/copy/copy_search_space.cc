#include "compiler/ops/copy/copy_search_space.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "compiler/lower/lowering_rules.h"
#include "compiler/ir/hints.h"
#include "compiler/ops/copy/copy_lowering.h"
#include "compiler/ops/copy/copy_op.h"

namespace tiletune {
namespace {

// A tile of about `bytes` with `inner_bytes` along the innermost dimension.
// A 1-D copy (a dense tensor, merged) takes tiles of `bytes`.
std::vector<int64_t> Tile(const std::vector<int64_t>& extents, int element, int64_t inner_bytes,
                          int64_t bytes) {
  int r = static_cast<int>(extents.size());
  std::vector<int64_t> tile(r, 1);
  if (r == 1) return {std::max<int64_t>(1, bytes / element)};
  tile[r - 1] = std::max<int64_t>(1, inner_bytes / element);
  if (r >= 2) tile[r - 2] = std::max<int64_t>(1, bytes / (tile[r - 1] * element));
  return tile;
}

LaunchParams MakeLaunch(std::vector<int64_t> tile, int threads, int stages, int ctas,
                        bool through_shared) {
  LaunchParams launch;
  launch.tile = std::move(tile);
  launch.threads = threads;
  launch.stages = stages;
  launch.ctas_per_sm = ctas;
  launch.through_shared = through_shared;
  return launch;
}

// Rows that suit the span form (SpanGeometry): tiles of whole rows whose src span is
// about each of `span_bytes`, a multiple of 16 rows. None for other copies.
std::vector<std::vector<int64_t>> SpanTiles(const CopyOp& op, std::vector<int64_t> span_bytes) {
  const MergedCopyGeometry g = MergeCopyGeometry(op);
  const int element = DataTypeBytes(op.src.buffer.dtype);
  std::vector<std::vector<int64_t>> tiles;
  if (!SpanGeometry(g, element)) return tiles;
  const int64_t pitch = g.src_strides[0] * element;
  for (int64_t bytes : span_bytes) {
    std::vector<int64_t> tile = {std::min(SpanTileRows(bytes, pitch), g.extents[0]), g.extents[1]};
    if (std::find(tiles.begin(), tiles.end(), tile) == tiles.end()) tiles.push_back(tile);
  }
  return tiles;
}

}  // namespace

std::vector<CopyHintChoice> AllCopyHints() {
  std::vector<CopyHintChoice> all;
  std::vector<std::optional<int>> widths = {std::nullopt, 1, 2, 4, 8, 16};
  std::vector<std::optional<EvictionPolicy>> policies = {
      std::nullopt, EvictionPolicy::kEvictNormal, EvictionPolicy::kEvictFirst,
      EvictionPolicy::kEvictLast};
  std::vector<std::optional<Instruction>> instructions = {std::nullopt, Instruction::kTma,
                                                          Instruction::kCpAsync, Instruction::kSync};
  for (auto width : widths) {
    for (bool disable_tma : {false, true}) {
      for (auto policy : policies) {
        for (auto instruction : instructions) {
          for (bool row_layout : {false, true}) {
            CopyHintChoice choice;
            choice.hints.coalesced_width = width;
            choice.hints.disable_tma = disable_tma;
            choice.hints.eviction_policy = policy;
            choice.hints.prefer_instruction = instruction;
            choice.row_layout = row_layout;
            all.push_back(choice);
          }
        }
      }
    }
  }
  return all;
}

std::vector<LaunchParams> CopyLaunchCandidates(const std::vector<int64_t>& extents,
                                               int element, const Target& target) {
  std::vector<LaunchParams> out;
  auto add = [&](std::vector<int64_t> tile, int threads, int stages, int ctas, bool shared) {
    out.push_back(MakeLaunch(std::move(tile), threads, stages, ctas, shared));
  };
  // SIMT: direct and through shared memory.
  for (auto [inner, bytes] : std::vector<std::pair<int64_t, int64_t>>{
           {2048, 16384}, {2048, 8192}, {1024, 16384}, {512, 16384}, {2048, 32768}}) {
    for (int threads : {128, 256, 512}) {
      for (int ctas : {0, 4}) {
        add(Tile(extents, element, inner, bytes), threads, 1, ctas, false);
      }
      add(Tile(extents, element, inner, bytes), threads, 1, 0, true);
    }
  }
  // cp.async, pipelined.
  for (auto [inner, bytes] :
       std::vector<std::pair<int64_t, int64_t>>{{512, 16384}, {1024, 16384}, {512, 8192}}) {
    for (int stages : {2, 3, 4}) {
      for (int ctas : {0, 2}) add(Tile(extents, element, inner, bytes), 256, stages, ctas, true);
    }
  }
  // TMA tensor tiles (inner box at most 256 elements).
  if (target.HasTma()) {
    for (auto [inner, bytes] : std::vector<std::pair<int64_t, int64_t>>{
             {std::min<int64_t>(512, 256 * element), 16384},
             {std::min<int64_t>(512, 256 * element), 32768},
             {256, 8192}}) {
      for (int stages : {2, 3, 4}) {
        for (int ctas : {2, 3}) add(Tile(extents, element, inner, bytes), 32, stages, ctas, true);
      }
    }
    // Bulk copies of flattened contiguous problems.
    for (int64_t chunk : {16384, 32768}) {
      for (int stages : {3, 4}) {
        for (int ctas : {1, 2}) add({chunk / element}, 32, stages, ctas, true);
      }
    }
  }
  return out;
}

std::vector<LaunchParams> RepresentativeCopyLaunches(const std::vector<int64_t>& extents,
                                                     int element, const Target& target) {
  std::vector<LaunchParams> out;
  auto add = [&](std::vector<int64_t> tile, int threads, int stages, int ctas, bool shared) {
    out.push_back(MakeLaunch(std::move(tile), threads, stages, ctas, shared));
  };
  add(Tile(extents, element, 2048, 16384), 256, 1, 0, false);
  add(Tile(extents, element, 512, 16384), 256, 1, 0, true);
  add(Tile(extents, element, 512, 16384), 256, 3, 0, true);
  if (target.HasTma()) {
    // Four 16 KiB stages a CTA, and as many CTAs an SM (up to 3) as its shared memory
    // holds: one on a part with 100 KB (sm_120), so the first phase still tries TMA there.
    const int ctas = static_cast<int>(std::clamp<int64_t>(
        target.MaxSharedBytesPerSm() / (4 * 16384 + kReservedShared), 1, 3));
    add(Tile(extents, element, std::min<int64_t>(512, 256 * element), 16384), 32, 4, ctas, true);
    add({16384 / element}, 32, 4, 1, true);
  }
  return out;
}

SearchSpace CopySearchSpace(const CopyOp& op, const Target& target) {
  const std::vector<int64_t> extents = MergedCopyExtents(op);
  const std::vector<int64_t> unmerged = SqueezedExtents(op.src);
  const int element = DataTypeBytes(op.src.buffer.dtype);
  std::vector<LaunchParams> representative = RepresentativeCopyLaunches(extents, element, target);
  std::vector<LaunchParams> launches = CopyLaunchCandidates(extents, element, target);
  if (unmerged.size() != extents.size()) {
    // Tensor TMA boxes over the dimensions as they are (a merged copy is 1-D, which only
    // bulk copies serve).
    auto add_tensor_tma = [&](const std::vector<LaunchParams>& from, std::vector<LaunchParams>& to) {
      for (const LaunchParams& launch : from) {
        if (launch.threads == 32 && launch.tile.size() == unmerged.size()) to.push_back(launch);
      }
    };
    add_tensor_tma(RepresentativeCopyLaunches(unmerged, element, target), representative);
    add_tensor_tma(CopyLaunchCandidates(unmerged, element, target), launches);
  }
  for (const std::vector<int64_t>& tile : SpanTiles(op, {16384})) {
    representative.push_back(MakeLaunch(tile, 256, 1, 0, false));
  }
  for (const std::vector<int64_t>& tile : SpanTiles(op, {4096, 8192, 16384, 32768})) {
    for (int threads : {128, 256, 512}) launches.push_back(MakeLaunch(tile, threads, 1, 0, false));
  }
  SearchSpace space;
  for (const CopyHintChoice& choice : AllCopyHints()) {
    for (const LaunchParams& launch : representative) {
      Trial trial{choice.hints, launch};
      // 32 threads across each row.
      if (choice.row_layout) trial.hints.loop_layout = LoopLayout{launch.threads / 32, 32};
      space.first.push_back(std::move(trial));
    }
  }
  space.launches = std::move(launches);
  return space;
}

Trial CopyHeuristic(const CopyOp& op, const Target& target) {
  const int element = DataTypeBytes(op.src.buffer.dtype);
  // Tile over the merged dimensions: 8 KiB of a 1-D copy; else 2 KiB along the
  // innermost, then rows up to 16 KiB.
  const std::vector<int64_t> extents = MergedCopyExtents(op);
  std::vector<int64_t> tile(extents.size(), 1);
  const int r = static_cast<int>(extents.size());
  // Rounded up to whole 16-byte vectors, so the head_tail form can take odd rows.
  const int64_t vector = std::max(1, 16 / element);
  const int64_t inner = (extents[r - 1] + vector - 1) / vector * vector;
  tile[r - 1] = std::min<int64_t>(inner, (r == 1 ? 8192 : 2048) / element);
  if (r >= 2) {
    const int64_t rows = std::max<int64_t>(1, (16384 / element) / tile[r - 1]);
    tile[r - 2] = std::min<int64_t>(extents[r - 2], rows);
  }
  // Rows the span form takes (SpanGeometry): whole rows, 16 KiB of src span a tile.
  const std::vector<std::vector<int64_t>> span = SpanTiles(op, {16384});
  // A coalesced_width (a keyword or an annotation) other than 16 B asks for the row-by-row
  // kernel.
  absl::StatusOr<ResolvedHints> hints = ResolveHints(op.hints, CopyHintScope());
  const std::optional<int> width = hints.ok() ? hints->coalesced_width : std::nullopt;
  if (!span.empty() && (!width.has_value() || *width * element == 16)) {
    tile = span[0];
  }
  Trial trial;
  trial.hints = op.hints;
  // The launch is a SIMT one.
  if (!op.hints.prefer_instruction.has_value() &&
      !op.hints.annotations.count("prefer_instruction")) {
    trial.hints.prefer_instruction = Instruction::kSync;
  }
  trial.launch = MakeLaunch(tile, 256, 1, 0, /*through_shared=*/false);
  // Narrow vectors (odd pitches, unaligned starts) mean more accesses per thread than a
  // SIMT tile allows: halve the tile, outer dimension first, until it lowers.
  CopyOp hinted = op;
  hinted.hints = trial.hints;
  for (int attempt = 0; attempt < 24 && !LowerCopy(hinted, target, trial.launch).ok(); ++attempt) {
    std::vector<int64_t>& t = trial.launch.tile;
    const int d = (r >= 2 && t[r - 2] > 1) ? r - 2 : r - 1;
    if (t[d] == 1) break;
    t[d] = (t[d] + 1) / 2;
  }
  return trial;
}

}  // namespace tiletune

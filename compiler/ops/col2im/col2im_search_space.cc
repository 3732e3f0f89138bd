#include "compiler/ops/col2im/col2im_search_space.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "compiler/ops/col2im/col2im_lowering.h"

namespace tiletune {
namespace {

LaunchParams MakeLaunch(int64_t tile_h, int64_t tile_w, int threads, bool staged, int ctas) {
  LaunchParams p;
  p.tile = {tile_h, tile_w};
  p.threads = threads;
  p.through_shared = staged;
  p.ctas_per_sm = ctas;
  return p;
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
  const int64_t w = op.geometry.w;
  // The staged form only for short pixels: from a 128-byte pixel on, the direct form
  // already reads whole 128-byte runs and the stage only costs occupancy (measured on the
  // H200: staged 0.27-0.64 of the ceiling where direct reached 0.87-0.99).
  const bool try_staged = op.geometry.c * DataTypeBytes(op.img.dtype) < kStagedMaxPixelBytes;
  SearchSpace space;
  std::vector<LaunchParams> representative = {MakeLaunch(1, 32, 256, false, 0)};
  if (try_staged) representative.push_back(MakeLaunch(2, 64, 256, true, 0));
  for (const Hints& hints : AllCol2imHints()) {
    for (const LaunchParams& launch : representative) space.first.push_back({hints, launch});
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
  return space;
}

Trial Col2imHeuristic(const Col2imOp& op, const Target& target) {
  Trial trial;
  trial.launch = MakeLaunch(1, 32, 256, false, 0);
  trial.hints = op.hints;
  if (op.geometry.c * DataTypeBytes(op.img.dtype) <= 16) {
    // Staged where its stage fits (a very wide kernel's runs may not).
    const LaunchParams staged = MakeLaunch(2, 64, 256, true, 0);
    Col2imOp probe = op;
    probe.hints = trial.hints;
    if (LowerCol2im(probe, target, staged).ok()) trial.launch = staged;
  }
  const Hints& mine = op.hints;
  if (!mine.prefer_instruction.has_value() && !mine.annotations.count("prefer_instruction")) {
    trial.hints.prefer_instruction = Instruction::kSync;
  }
  if (!mine.eviction_policy.has_value() && !mine.annotations.count("col_eviction_policy") &&
      !mine.annotations.count("img_eviction_policy")) {
    trial.hints.annotations["col_eviction_policy"] = "evict_first";
  }
  return trial;
}

}  // namespace tiletune

#include "autotune/copy_search_space.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/backend/tuning_conversion.h"
#include "compiler/base/sha256.h"
#include "compiler/base/status_macros.h"
#include "compiler/codegen/copy_emitter.h"
#include "compiler/lower/copy_lowering.h"

namespace tiletune {
namespace autotune {
namespace {

// A tile of about `bytes` with `inner_bytes` along the innermost dimension.
std::vector<int64_t> Tile(const std::vector<int64_t>& extents, int element, int64_t inner_bytes,
                          int64_t bytes) {
  int r = static_cast<int>(extents.size());
  std::vector<int64_t> tile(r, 1);
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

}  // namespace

std::vector<CopyHints> AllCopyHints() {
  std::vector<CopyHints> all;
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
            CopyHints hints;
            hints.coalesced_width = width;
            hints.disable_tma = disable_tma;
            hints.eviction_policy = policy;
            hints.prefer_instruction = instruction;
            // The layout depends on the thread count: filled in per launch.
            if (row_layout) hints.annotations["loop_layout"] = "row";
            all.push_back(hints);
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
    add(Tile(extents, element, std::min<int64_t>(512, 256 * element), 16384), 32, 4, 3, true);
    add({16384 / element}, 32, 4, 1, true);
  }
  return out;
}

absl::StatusOr<CopySearchSpace> BuildCopySearchSpace(const CopyOp& op, const Target& target) {
  std::vector<int64_t> extents = SqueezedExtents(op.src);
  int element = DataTypeBytes(op.src.buffer.dtype);
  return BuildCopySearchSpace(op, target, AllCopyHints(),
                              CopyLaunchCandidates(extents, element, target));
}

absl::StatusOr<CopySearchSpace> BuildCopySearchSpace(const CopyOp& op, const Target& target,
                                                     const std::vector<CopyHints>& hints,
                                                     const std::vector<LaunchParams>& launches) {
  TT_RETURN_IF_ERROR(ValidateCopyOp(op));
  CopySearchSpace space;
  absl::flat_hash_map<std::string, size_t> by_source;
  std::set<std::string> reasons;
  for (const CopyHints& base : hints) {
    for (const LaunchParams& launch : launches) {
      ++space.enumerated;
      CopyOp candidate = op;
      candidate.hints = base;
      if (base.annotations.count("loop_layout")) {
        // 32 threads across each row.
        candidate.hints.annotations.erase("loop_layout");
        candidate.hints.loop_layout = LoopLayout{launch.threads / 32, 32};
      }
      absl::StatusOr<LoweredCopy> lowered = LowerCopy(candidate, target, launch);
      if (!lowered.ok()) {
        ++space.pruned;
        std::string reason(lowered.status().message().substr(0, 40));
        if (reasons.insert(reason).second && space.pruned_examples.size() < 20) {
          space.pruned_examples.push_back(std::string(lowered.status().message()));
        }
        continue;
      }
      CudaSource source = EmitCopyKernel(*lowered);
      std::string sha = Sha256Hex(source.text);
      auto [it, inserted] = by_source.emplace(sha, space.candidates.size());
      if (!inserted) {
        ++space.duplicates;
        ++space.candidates[it->second].duplicates;
        continue;
      }
      CopyCandidate c;
      c.hints = candidate.hints;
      c.variant = VariantFromLowered(candidate.hints, *lowered, sha);
      c.lowered = *std::move(lowered);
      c.source = std::move(source);
      c.source_sha256 = sha;
      space.candidates.push_back(std::move(c));
    }
  }
  if (space.candidates.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no variant lowers for this copy on ", target.ArchName(), "; e.g. ",
        space.pruned_examples.empty() ? "" : space.pruned_examples[0]));
  }
  return space;
}

}  // namespace autotune
}  // namespace tiletune

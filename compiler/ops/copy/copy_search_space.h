// The search space for one copy problem on one target: every value of the six hints at
// one representative launch per path family, then the launch parameters of each family
// (tiles of 0.5 to 32 KiB, thread counts, pipeline depths, persistent-grid occupancies)
// for the best hint sets. The lowering prunes what cannot work; the tuner's candidate
// builder (compiler/ops/candidates.h) keeps each distinct source once.
//
//   SearchSpace space = CopySearchSpace(op, target);
#ifndef COMPILER_OPS_COPY_COPY_SEARCH_SPACE_H_
#define COMPILER_OPS_COPY_COPY_SEARCH_SPACE_H_

#include <cstdint>
#include <vector>

#include "compiler/ops/copy/copy_op.h"
#include "compiler/ops/tile_op_definition.h"
#include "compiler/target/target.h"

namespace tiletune {

// Launch parameters tried for a problem of `extents` (unit dimensions dropped) and
// element size: per path family, tiles of 0.5 to 32 KiB, thread counts, pipeline depths
// and persistent-grid occupancies that fit `target`.
std::vector<LaunchParams> CopyLaunchCandidates(const std::vector<int64_t>& extents,
                                               int element_bytes, const Target& target);

// Every value of every hint: coalesced_width (unset, 1..16), disable_tma, eviction_policy
// (unset and the three), prefer_instruction (unset and the three), with and without a
// loop layout of 32 threads per row (`row_layout`; its rows depend on the launch).
struct CopyHintChoice {
  Hints hints;
  bool row_layout = false;
};
std::vector<CopyHintChoice> AllCopyHints();

// One representative launch per path family (direct SIMT, SIMT through shared memory,
// cp.async, TMA, bulk): the first search phase varies the hints over these.
std::vector<LaunchParams> RepresentativeCopyLaunches(const std::vector<int64_t>& extents,
                                                     int element_bytes, const Target& target);

// AllCopyHints() at every representative launch, then CopyLaunchCandidates().
SearchSpace CopySearchSpace(const CopyOp& op, const Target& target);

// The built-in launch: a direct SIMT copy of about 16 KiB tiles, 256 threads, one CTA per
// tile (the best family in bench/copy_benchmark), with
// prefer_instruction=sync unless the op asks for another.
Trial CopyHeuristic(const CopyOp& op, const Target& target);

}  // namespace tiletune

#endif  // COMPILER_OPS_COPY_COPY_SEARCH_SPACE_H_

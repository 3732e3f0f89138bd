// The search space for one im2col problem on one target: every hint value at a few
// representative launches, then tiles of 32 to 256 rows (and whole rows, whole output
// rows when the matrix's rows are short), thread counts, pipeline depths and persistent
// grids for the best hint sets.
//
//   SearchSpace space = Im2colSearchSpace(op, target);
#ifndef COMPILER_OPS_IM2COL_IM2COL_SEARCH_SPACE_H_
#define COMPILER_OPS_IM2COL_IM2COL_SEARCH_SPACE_H_

#include <vector>

#include "compiler/ops/im2col/im2col_op.h"
#include "compiler/ops/tile_op_definition.h"
#include "compiler/target/target.h"

namespace tiletune {

// Every im2col hint value: coalesced_width (unset, 1..8), disable_tma, eviction_policy
// (unset, evict_first, evict_last), prefer_instruction (unset, tma, sync), and the
// img_eviction_policy=evict_last / col_eviction_policy=evict_first annotation pair; where
// the staged form may fill by bulk copies (no width, TMA allowed, no prefer_instruction=tma),
// also with each pair of img_prefetch=ahead|all and staged_gather=table|phase.
std::vector<Hints> AllIm2colHints();

// Channel-row columns have their own smaller space: the vector unset or narrowed, the L2
// policies unset or split, at the heuristic's tile, then tiles of 2048 to 32768 elements
// with 128 to 512 threads.
SearchSpace Im2colSearchSpace(const Im2colOp& op, const Target& target);

// Elements per tile of the planes form's default launch.
inline constexpr int64_t kPlanesTileElems = 8192;

// The built-in launch: SIMT, 128 x 64 tiles (K narrower when it is), 256 threads, the
// image kept in L2 (evict_last) while the column matrix streams out (evict_first) where
// the op sets no policy, and prefer_instruction=sync unless the op asks for another.
// Where C allows only vectors narrower than 16 B and rows are longer than 64 but at most
// 1024 elements, tiles of whole output rows (OW x K, the staged form) or else 64 whole rows
// (the flat form), when they lower to that form: a 128 x 64 row tile of such a layer reads
// each narrow pixel many times over, where whole output rows read each once. Shorter rows
// keep 128 x K, which spans whole rows already.
// Channel-row columns (the planes form): tiles of whole rows of the matrix
// [N*C*KH*KW, OH*OW] of about kPlanesTileElems elements, sized for 16-byte vectors, fewer
// rows while the grid would hold under 1024 tiles (4096 columns of rows longer than
// 16384), 256 threads.
Trial Im2colHeuristic(const Im2colOp& op, const Target& target);

}  // namespace tiletune

#endif  // COMPILER_OPS_IM2COL_IM2COL_SEARCH_SPACE_H_

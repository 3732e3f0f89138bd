// The search space for one col2im problem on one target: every hint value at a direct and
// (for pixels under kStagedMaxPixelBytes) a staged and, with cp.async, a swept
// representative launch, then output tiles from one row of 16 pixels to several whole
// rows, thread counts, the forms, the swept form's tiles and buffer counts, and persistent
// grids for the best hint sets.
//
//   SearchSpace space = Col2imSearchSpace(op, target);
#ifndef COMPILER_OPS_COL2IM_COL2IM_SEARCH_SPACE_H_
#define COMPILER_OPS_COL2IM_COL2IM_SEARCH_SPACE_H_

#include <vector>

#include "compiler/ops/col2im/col2im_op.h"
#include "compiler/ops/tile_op_definition.h"
#include "compiler/target/target.h"

namespace tiletune {

// Every col2im hint value that can change its kernel: coalesced_width (unset, 1..8),
// eviction_policy (unset, evict_first, evict_last), and the col_eviction_policy=evict_first
// annotation (the column matrix is read once). col2im has no TMA path and its launch picks
// the form (and with it the instruction family), so prefer_instruction and disable_tma are
// left unset.
std::vector<Hints> AllCol2imHints();

// Pixels of this many bytes or more (C x element size) are searched in the direct form
// only (the staged and swept forms for shorter ones).
inline constexpr int64_t kStagedMaxPixelBytes = 128;

// Channel-row columns search the planes form only: a few tile sizes, 128 to 512 threads,
// the vector along W unset or narrowed, the column matrix streamed or not.
SearchSpace Col2imSearchSpace(const Col2imOp& op, const Target& target);

// Pixels per tile of the planes form's default launch.
inline constexpr int64_t kPlanesTilePixels = 4096;

// The built-in launch: when a pixel's channels fit in 16 bytes (short matrix runs read best
// through shared memory), the swept form over 8-row tiles (the whole width, else 64
// columns) where it lowers, else the staged form over 2 x 64 tiles; otherwise the direct
// form over 1 x 32 tiles; 256 threads; the column matrix streamed
// (col_eviction_policy=evict_first) where the op sets no policy. Channel-row columns: the
// planes form over about kPlanesTilePixels pixels, whole rows of a dense NCHW image (sized
// for 16-byte vectors) or up to 256 columns of a plane, fewer rows while the grid would
// hold under 1024 tiles.
Trial Col2imHeuristic(const Col2imOp& op, const Target& target);

}  // namespace tiletune

#endif  // COMPILER_OPS_COL2IM_COL2IM_SEARCH_SPACE_H_

// Lowering of `col2im` into one CUDA kernel that writes the whole image, tiled over CTAs
// by output tiles of tile_h rows x tile_w columns x all C channels of one image.
//
//   Col2imOp op = Col2imOp::Dense(DataType::kF16, geometry);
//   LaunchParams launch;
//   launch.tile = {2, 56};            // tile_h, tile_w (output rows, columns)
//   launch.through_shared = true;     // the staged form (planes_staged for F.fold's layout)
//   TT_ASSIGN_OR_RETURN(LoweredCol2im lowered, LowerCol2im(op, target, launch));
//   std::cout << DescribeCol2imPlan(lowered);
//
// Tile t of the grid is image n = t / (tiles_h * tiles_w), rows from
// ((t / tiles_w) % tiles_h) * tile_h, columns from (t % tiles_w) * tile_w.
//
// Two paths. simt_col2im (every target) has two forms that LaunchParams::through_shared
// picks:
//   direct  each thread gathers `vector_elems` channels of one output pixel straight from
//           the column matrix, tap by tap in the documented order, and stores them;
//   staged  the CTA first copies the column-matrix entries its tile needs into shared
//           memory (for each window row oh and column ow that reaches the tile, the taps
//           kh that land in its rows: one contiguous run of the matrix row, copied as the
//           16-byte aligned chunks that cover it, whatever its alignment), then gathers
//           from shared memory.
// tma_col2im (sm_90+) and cp_async_col2im (sm_80+), for through_shared with stages >= 2,
// have one form:
//   swept   the CTA sweeps the window rows oh reaching its tile one at a time, from the
//           last to the first (so each pixel meets its taps kh ascending). The matrix rows
//           of one window row and the tile's window columns are contiguous in memory, and
//           are copied into one of `stages` shared buffers, the next ones filling while the
//           threads add the current one into f32 sums kept in registers for the whole
//           sweep.
//           tma_col2im copies them whole, every tap row, with one 1-D bulk copy widened to
//           16-byte bounds. A window row reaching two tiles is read by both, in the same
//           wave of CTAs (tile t and t + 1 run side by side), so the second read is an L2
//           hit. One thread produces: it waits on a buffer's "empty" mbarrier (an arrival
//           per warp that summed it) and refills it, completing on its "full" mbarrier; no
//           CTA-wide barrier is left in the sweep, and with a persistent grid
//           (ctas_per_sm) the producer runs ahead into the CTA's next tile.
//           cp_async_col2im copies only the 16-byte chunks holding a tap landing in the
//           tile, with cp.async, and a CTA barrier closes each window row.
//           Either way each column entry crosses from L2 in whole chunks, which suits short
//           pixels (small C) where the other forms read a few scattered bytes per tap.
// Channel-row columns (ColumnOrder::kChannelRows, F.fold's [N, C*KH*KW, OH*OW]) have one
// form, simt_col2im's planes form: a tile is tile_h x tile_w pixels of one (n, c) plane, or,
// for a dense NCHW image and tile_w >= W, tile_h whole rows of the image as the matrix
// [N*C*H, W] (one run, which may cross planes); each thread sums `vector_elems` neighbouring
// pixels straight from the column matrix, each over the window positions reaching it, oh
// then ow ascending (its taps kh descending then kw descending: F.fold's order), and stores
// them as one vector. With through_shared, the planes_staged form: a tile is tile_h whole
// rows of one plane; the CTA first copies, for every tap, the run of the matrix row holding
// the window rows oh that reach the tile (contiguous: oh * OW + ow), neighbouring threads
// loading neighbouring elements, into shared memory, then sums from there in the same order.
// With planes_gather=patches, where the windows tile a dense NCHW image exactly (kernel ==
// stride, no dilation or padding, H = OH*KH and W = OW*KW: every pixel lies in one window,
// as in a ViT's or a Swin's patches), the patches form: F.fold is then a permutation. A
// tile is `patch_rows` kernel rows kh of one plane over `patch_oh` window rows oh
// (LaunchParams::tile = {patch_rows, patch_oh}); the CTA copies the column-matrix rows
// of those taps (all kw), the run of its window rows each (one contiguous span where it
// takes them all), in `patch_load_elems`-element vectors into shared memory, then stores
// the image rows oh*KH + kh they make, whole, in vectors along W; each element is added to
// a zero f32 sum and rounded back, as the sums of the other forms are.
// All visit an element's taps in the same order, so they give identical bits. The
// fallback policy of compiler/lower/lowering_rules.h holds: tma and cp_async name the
// swept form's two copy engines; disable_tma leaves cp.async.
#ifndef COMPILER_OPS_COL2IM_COL2IM_LOWERING_H_
#define COMPILER_OPS_COL2IM_COL2IM_LOWERING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/lower/lowered_kernel.h"
#include "compiler/ops/col2im/col2im_op.h"
#include "compiler/target/target.h"

namespace tiletune {

enum class Col2imPath {
  kSimtDirect,  // "simt_col2im", direct form
  kSimtStaged,  // "simt_col2im", staged form
  kCpAsyncSwept,  // "cp_async_col2im", swept form
  kTmaSwept,      // "tma_col2im", swept form
  kSimtPlanes,    // "simt_col2im", planes form (channel-row columns)
  kSimtPlanesStaged,  // "simt_col2im", planes_staged form (channel-row columns)
  kSimtPatches,       // "simt_col2im", patches form (channel-row columns, exact patches)
};

// "simt_col2im", "cp_async_col2im" or "tma_col2im".
std::string Col2imPathName(Col2imPath path);
// "direct", "staged", "swept", "planes", "planes_staged" or "patches".
std::string Col2imFormName(Col2imPath path);

// The planes form sums windows of up to this many positions per pixel by an unrolled loop;
// larger ones (wide kernels at stride 1) keep a bounded loop, for code size.
inline constexpr int64_t kCol2imMaxUnrolledSpan = 64;

struct LoweredCol2im : LoweredTileKernel {
  Col2imPath path = Col2imPath::kSimtDirect;
  // The column matrix's order; for kChannelRows, m and k are its rows and columns
  // (N*C*KH*KW, OH*OW) and the tiles run over N x C planes.
  ColumnOrder order = ColumnOrder::kPixelRows;
  // Planes form: the image is dense NCHW and the tile spans its width, so tiles are
  // tile_h rows of the matrix [N*C*H, W] (crossing planes), each a contiguous run.
  bool flat_rows = false;
  // planes_staged form: the window rows oh a tile's stage holds at most; each tap's run is
  // stage_rows * OW elements of shared memory.
  int64_t stage_rows = 0;
  // patches form: kernel rows and window rows per tile, the tiles of each along a plane,
  // and the elements of each vector that loads the column matrix into shared memory.
  int64_t patch_rows = 0, patch_oh = 0;
  int64_t patch_row_tiles = 0, patch_oh_tiles = 0;
  int patch_load_elems = 1;

  Im2colGeometry geometry;
  // Element strides of the image's N, H, W, C dimensions.
  std::vector<int64_t> img_strides;
  int64_t oh = 0, ow = 0;
  // Column matrix extents.
  int64_t m = 0, k = 0;
  // The output tile and the tile counts per image.
  int64_t tile_h = 0, tile_w = 0;
  int64_t tiles_h = 0, tiles_w = 0;
  // Channels per vector access (image stores; the direct form's column loads too), and
  // vector accesses per thread per tile at most.
  int vector_elems = 1;
  int64_t items_per_thread = 0;

  // The staged form's shared-memory stage: for up to `rows` window rows oh and `cols`
  // window columns ow reaching the tile, a slot holding the run of up to `run_elems`
  // column-matrix entries (the taps kh landing in the tile's rows, all kw and c) as the
  // up to `chunks` 16-byte aligned chunks of the matrix that cover it (16-byte loads
  // whatever the run's alignment; the run starts at its offset within the first chunk).
  struct Stage {
    int64_t rows = 0;
    int64_t cols = 0;
    int64_t taps_h = 0;  // kh per run at most
    int64_t run_elems = 0;
    int64_t chunks = 0;
    int64_t PitchBytes() const { return chunks * 16; }
  };
  Stage stage;

  // The swept form's buffers: each holds the 16-byte chunks covering the matrix rows of
  // one window row oh and up to `cols` window columns (contiguous in the matrix), at most
  // `chunks` of them; `buffers` (= stages) of them rotate. A byte at matrix offset a lies
  // at buffer offset a - start + start % 16 (cp.async) or start % 128 (TMA: a bulk copy's
  // source and destination then share their place in a 128-byte line), where start is
  // the window row's first byte.
  //
  // Its threads: a tile row has `row_items` items (pixels, or pixel vectors along C), and
  // the threads form `row_groups` groups of `group_threads` (a multiple of 32); group q
  // owns the tile's rows [q * group_rows, (q + 1) * group_rows) and takes `per_row` items
  // of each. Threads beyond a row's items thus split the tile's rows into bands.
  struct Sweep {
    int64_t cols = 0;
    int64_t chunks = 0;
    int64_t buffers = 0;
    int64_t row_items = 0;
    int64_t row_groups = 1;
    int64_t group_threads = 0;
    int64_t group_rows = 0;
    int64_t per_row = 0;
    int64_t BufferBytes() const { return chunks * 16; }
  };
  Sweep sweep;
  // The swept form's f32 sums per thread (vectors per thread times channels per vector).
  int64_t sums_per_thread = 0;

  // The L2 policies the generated code applies to column loads and image stores; empty
  // where it emits none.
  std::optional<EvictionPolicy> col_policy;
  std::optional<EvictionPolicy> img_policy;
};

// The planes_staged form's stage in shared memory (every tap's run of stage_rows window
// rows), rounded up to 16 bytes; its warps' vector slices follow it.
int64_t PlanesStageBytes(const LoweredCol2im& lowered);
// Why the patches form does not apply to `op` (empty where it does): its windows must tile a
// dense NCHW image exactly.
std::string PatchesBlocker(const Col2imOp& op);

// Whether `path` is one of the swept form's.
bool Col2imSwept(Col2imPath path);

// Channels one thread sums per pixel: all C of a pixel of at most 16 bytes, else one
// vector.
int64_t Col2imChannelsPerThread(const LoweredCol2im& lowered);

absl::StatusOr<LoweredCol2im> LowerCol2im(const Col2imOp& op, const Target& target,
                                          const LaunchParams& launch);

// A multi-line human-readable plan, then the decision log.
std::string DescribeCol2imPlan(const LoweredCol2im& lowered);

}  // namespace tiletune

#endif  // COMPILER_OPS_COL2IM_COL2IM_LOWERING_H_

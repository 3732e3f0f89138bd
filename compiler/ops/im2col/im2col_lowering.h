// Lowering of `im2col` into one CUDA kernel that writes the whole column matrix
// [N*OH*OW, KH*KW*C] (dense, row-major, a buffer of its own), tiled over CTAs with the
// block tile [block_M, block_K]: instruction selection under the op's hints, a declared
// fallback policy and a decision log.
//
//   Im2colOp op = Im2colOp::Dense(DataType::kF16, geometry);
//   LaunchParams launch;
//   launch.tile = {128, 64};  // block_M, block_K
//   launch.stages = 2;
//   TT_ASSIGN_OR_RETURN(LoweredIm2col lowered, LowerIm2col(op, target, launch));
//   std::cout << DescribeIm2colPlan(lowered);
//
// Tile t of the grid is the tile op at (nhw_step, c_step) = (t / tiles_k, t % tiles_k).
//
// Paths. tma_im2col (sm_90+): one thread issues cp.async.bulk.tensor.4d ... .im2col loads
// (one per (kh, kw) tap and channel box of the tile) completing on an mbarrier, then TMA
// stores of the shared tile to the column matrix; the image map's box corners are
// lower = -pad, upper = pad - (kernel-1)*dilation per axis. simt_im2col (every target), in
// one of three forms (Im2colPath): row, each thread gathers vectors along C, zero for
// padding, and stores them (with row_vector=window_row, along a kernel row: see
// LoweredIm2col::window_row_vector); flat, when a tile is whole rows of the matrix and C allows
// only narrow vectors, the tile's run is gathered into shared memory and stored in wide
// vectors; staged, the flat form with each output row's input rows first copied into
// shared memory, gathered through a table of offsets.
//
// The staged form fills its boxes with cp.async.bulk on sm_90+ (InputBox::bulk_fill) unless
// disable_tma is set; with it, or without TMA, the threads fill them with vector loads.
//
// Channel-row columns (ColumnOrder::kChannelRows, F.unfold's [N, C*KH*KW, OH*OW]) have one
// form, simt_im2col's planes form, over the matrix [N*C*KH*KW, OH*OW] tiled like the pixel
// rows' [block_M, block_K]. A tile of whole rows (block_K >= OH*OW) is one contiguous run,
// stored in vectors that may cross rows (so OH*OW need not be a multiple of the vector);
// otherwise each row's block_K columns are. Each thread gathers a vector's elements from the
// image (consecutive threads read consecutive image columns when SW = 1 and the image's W
// stride is 1, as in NCHW), stepping (row, oh, ow) along it, and stores it whole. TMA does
// not apply.
//
// Path choice. With no prefer_instruction the chain is tma_im2col -> simt_im2col (TMA
// skipped under disable_tma); the log says why each rejected path failed. prefer_instruction
// =tma that cannot be honoured, prefer_instruction=cp_async (im2col has no cp.async path)
// and tma with disable_tma are InvalidArgument naming every failed constraint, unless the
// `fallback=auto` annotation allows falling back to simt_im2col (tma with disable_tma is
// always an error). LaunchParams::through_shared does not apply and is ignored.
#ifndef COMPILER_OPS_IM2COL_IM2COL_LOWERING_H_
#define COMPILER_OPS_IM2COL_IM2COL_LOWERING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/data_type.h"
#include "compiler/lower/lowered_kernel.h"
#include "compiler/ops/im2col/im2col_op.h"
#include "compiler/target/target.h"

namespace tiletune {

// The bounding box of the filter base in the image for TMA im2col, per axis:
// lower = -pad, upper = pad - (kernel-1)*dilation. Walking it with the stride visits
// exactly OH x OW window corners.
struct Im2colBoxCorners {
  int64_t lower_h = 0, lower_w = 0;
  int64_t upper_h = 0, upper_w = 0;
};
Im2colBoxCorners TmaIm2colBoxCorners(const Im2colGeometry& geometry);

// The named lowering paths of im2col: the TMA path, and the SIMT path's three forms.
enum class Im2colPath {
  kTma,         // "tma_im2col"
  kSimtRow,     // "simt_im2col", row form
  kSimtFlat,    // "simt_im2col", flat form
  kSimtStaged,  // "simt_im2col", staged form
  kSimtPlanes,  // "simt_im2col", planes form (channel-row columns)
};

// "tma_im2col" or "simt_im2col".
std::string Im2colPathName(Im2colPath path);
// "" for TMA; "row", "flat", "staged", "planes" for the SIMT forms.
std::string Im2colFormName(Im2colPath path);
// The planes form with planes_gather=shared taken: its tile is whole planes and output
// rows by design, which its transfer keeps (Im2colDefinition::AdaptLaunch).
inline constexpr char kPlanesSharedForm[] = "planes_shared";
// The planes form with planes_gather=patches taken: its tile is kernel rows x window rows.
inline constexpr char kPlanesPatchesForm[] = "planes_patches";
// The image window, rows and columns, one plane's tap rows read for `band` output rows (the
// shared gather's box per plane, padding included).
inline int64_t PlanesWindowRows(const Im2colGeometry& g, int64_t band) {
  return (band - 1) * g.sh + (g.kh - 1) * g.dh + 1;
}
inline int64_t PlanesWindowCols(const Im2colGeometry& g) {
  return (g.OW() - 1) * g.sw + (g.kw - 1) * g.dw + 1;
}
// The planes and output rows whose windows the shared gather stages for a planes tile of
// `tile_rows` matrix rows and `tile_cols` columns: the most any tile of that shape reaches
// (its rows may start within a plane, its columns within an output row), within the image.
struct SharedGatherReach {
  int64_t planes = 1;
  int64_t band = 1;  // output rows
};
SharedGatherReach SharedGatherReachOf(const Im2colGeometry& g, int64_t tile_rows,
                                      int64_t tile_cols);
// Why the shared gather cannot read vectors of `vector_elems` elements of `element_bytes`
// as runs of the box on `g` ("" when it can): column stride 1, vectors of 2 elements and 4
// bytes at least, output rows a whole number of vectors.
std::string BoxRunsBlocker(const Im2colGeometry& g, int64_t element_bytes,
                           int64_t vector_elems);
bool IsSimt(Im2colPath path);

// A lowered `im2col` kernel.
struct LoweredIm2col : LoweredTileKernel {
  Im2colPath path = Im2colPath::kSimtRow;

  Im2colGeometry geometry;
  // Element strides of the image's N, H, W, C dimensions.
  std::vector<int64_t> img_strides;
  int64_t oh = 0, ow = 0;
  // Column matrix extents.
  int64_t m = 0, k = 0;
  int64_t block_m = 0, block_k = 0;
  int64_t tiles_m = 0, tiles_k = 0;

  // simt_im2col: elements per vector along C, the thread layout over (block_M rows,
  // block_K / vector vectors) and the vector accesses per thread per tile.
  int vector_elems = 1;
  // Row form, row_vector=window_row where it applies: with unit C stride, pixels side by
  // side (W stride C) and no W dilation, a kernel row's KW*C elements are contiguous in the
  // image as in the matrix, so a vector may cover several pixels. It must divide KW*C,
  // SW*C, PW*C and W*C (and the N and H strides and block_K): then every vector lies
  // wholly inside the image or wholly in its padding, and the row form's gather, which
  // places a vector by its first element, is unchanged. The row form is then taken even
  // where the flat or staged form would store wider vectors.
  bool window_row_vector = false;
  LoopLayout layout;
  int items_per_thread = 0;
  // Flat and staged forms: when a tile spans whole rows (block_K >= K) and C allows only
  // narrow vectors, the tile's block_M rows are one contiguous run of block_M * K elements,
  // gathered one element at a time and written in flat_vector_elems-element vectors
  // (wider than vector_elems).
  int flat_vector_elems = 0;
  // Staged form: when a tile is whole output rows (block_M a multiple of OW) of an image
  // whose pixels are contiguous, each output row's KH input rows are
  // first copied into shared memory with `load_bytes`-wide loads, zero where the window
  // leaves the image, as box rows of `pixels` pixels starting at iw = -PW. The run's
  // vectors then repeat their (row, column) pattern every `period_rows` rows: vector p of
  // every period takes its elements from the same places relative to the period's first
  // output pixel, so a table of those byte offsets (one 32-bit entry per `unit_bytes` of the
  // vector), built once per CTA, lets each thread gather a vector with one shared load per
  // unit and store it straight to global memory.
  struct InputBox {
    int64_t rows_per_tile = 0;   // output rows per tile
    int vector_elems = 0;        // elements per stored vector (>= 4 B); = flat_vector_elems
    int64_t period_rows = 0;     // V / gcd(K, V); divides OW (0 with row_phase)
    int64_t period_vectors = 0;  // K' = K / gcd(K, V): vectors per period, or table entries
    // staged_gather=row_phase, for a tile of one output row: each row's run starts at its
    // own phase h < V of the (16-byte) vector, where a whole vector first begins; the row's
    // elements before it and after its last whole vector go one by one. Vector v of the row
    // starts at column (h + V v) mod K of a pixel, one of the K' columns V t mod K: table
    // entry t holds the offsets of that vector's units from the box column of its first
    // pixel, and the row's vectors take consecutive entries from t0 = vector_inverse x
    // (h / gcd) mod K' on (vector_inverse: the inverse of V / gcd modulo K'), so a warp's
    // table loads do not conflict. Serves rows whose vectors have no period dividing OW (say
    // OW and K odd: AlexNet's 11x11 s4).
    bool row_phase = false;
    int64_t phase_unit = 0;      // gcd(K, V): every row's phase is a multiple of it
    int64_t vector_inverse = 0;
    int unit_bytes = 0;          // min(element, 4 B): one table entry and one shared load
    int entry_bytes = 0;         // 2 when every offset fits 16 bits, else 4
    int64_t pixels = 0;          // (OW - 1) * SW + (KW - 1) * DW + 1
    int64_t copy_pixels = 0;     // in-image pixels per box row, from iw = 0
    int64_t lead_elems = 0;      // elements before box column 0 (aligns column PW)
    int64_t pitch_elems = 0;     // elements per box row
    int load_bytes = 0;          // width of the global loads and shared stores filling it
    int64_t offset_bytes = 0;    // where the boxes start in shared memory, after the table
    // sm_90+ without disable_tma, with 16-byte loads: one thread fills a tile's box rows
    // with 1-D cp.async.bulk copies (the TMA engine, not the load/store units the gather
    // and the stores keep busy) completing on one mbarrier, so that a CTA's fill rarely
    // waits on DRAM, the image comes into L2 ahead of the copies in one of two ways:
    //   - prefetch_all: the first wave of CTAs (%nsmid x resident_ctas, or the whole
    //     persistent grid) each prefetch an equal share of the image's `image_span_bytes`
    //     at the start. Chosen when the image takes at most 1 / kPrefetchAllL2Fraction of
    //     the target's L2 (Target::MinL2Bytes) and the columns at least all of it, or by
    //     the img_prefetch=all annotation.
    //   - otherwise the first box-row threads prefetch the image rows of the tile
    //     `prefetch_waves` waves of resident CTAs ahead (img_prefetch=ahead).
    bool bulk_fill = false;
    bool prefetch_all = false;
    int64_t image_span_bytes = 0;  // first to last byte of the image, whatever its strides
    int prefetch_waves = 0;
    int resident_ctas = 0;       // estimated CTAs per SM (threads and shared memory)
    // Registers per thread the bulk-filled kernel is held to (__maxnreg__): what leaves
    // room for the registers of one CTA more than resident_ctas, when that is at least
    // 24; 0: none (the kernel's launch bounds ask for resident_ctas CTAs instead).
    int max_registers = 0;
    // Phase gather (staged_gather=phase, where it applies), instead of the table:
    // thread t < phase_groups x period_vectors gathers vector t % period_vectors (its phase)
    // of periods t / period_vectors + phase_groups i, so it works out its units' offsets
    // once, in registers, with no table and no barrier after building one. The output row's
    // KH image rows, back to back in the image, arrive by one bulk copy at the image's row
    // pitch after phase_lead_bytes; units on padding (columns left or right of the image,
    // which only the first and last period have, and rows outside it) are masked to zero,
    // not read from zeroed shared memory. Needs the bulk fill, one output row per tile and
    // one tile per CTA, H stride = W x C, dilation_h = 1, 2-byte elements, offsets that fit
    // 16 bits and a period of fewer vectors than threads (a thread left to fill the box).
    bool phase_gather = false;
    int phase_groups = 0;           // G: the largest divisor of the periods per row that fits
    int64_t phase_lead_bytes = 0;   // before the first box row: the left padding units' reads
    int64_t phase_bytes = 0;        // lead, KH rows, room for the right padding units' reads
    std::string gather_reason;      // why the gather is the table or the phase form
  };
  // Set for the staged form.
  InputBox box;

  // The column matrix's order; for kChannelRows, m and k are its rows and columns
  // (N*C*KH*KW, OH*OW).
  ColumnOrder order = ColumnOrder::kPixelRows;
  // Planes form: a tile is `segments` runs of `segment_elems` elements (one of block_M x
  // OH*OW for whole rows, else block_M of block_K), stored in vector_elems-element vectors;
  // `items_per_thread` of them per thread per tile at most.
  int64_t segments = 0;
  int64_t segment_elems = 0;
  // Planes form, planes_gather=span where it applies: a vector whose elements lie in one
  // image row (one output row, unit W stride) reads them as the `span_blocks` aligned
  // 16-B blocks that can hold them (fewer where the row's ends cut the span), and takes
  // each element out of those registers; a vector that does not, or whose last block would
  // pass the image's last byte (`image_bytes`), gathers element by element.
  bool span_gather = false;
  int span_blocks = 0;
  int64_t image_bytes = 0;
  // Planes form, planes_gather=shared where it applies: a tile, whose rows reach up to
  // box_planes planes (whole planes where block_M is a multiple of KH*KW) and whose
  // columns up to band_rows output rows, first copies, per plane, the box_rows x box_cols
  // image window those rows read into shared memory (zeros where the window leaves the
  // image); its vectors then read their elements there.
  bool shared_gather = false;
  // planes_gather=shared_runs where it applies: the shared gather where every vector lies
  // within one output row (column stride 1, OW a whole number of vectors of at least 4
  // bytes), so its elements are consecutive in the box: each vector is read as the two
  // aligned vectors of the box holding it, shifted into place (shared_bytes holds one
  // vector more, for the second).
  bool box_runs = false;
  // Planes form, planes_gather=patches where the windows tile a dense NCHW image exactly
  // (ExactPatchesBlocker): F.unfold is then a permutation. A tile is `patch_rows` kernel
  // rows of one plane over `patch_oh` window rows (LaunchParams::tile = {patch_rows,
  // patch_oh}; block_M = patch_rows * KW matrix rows, block_K = patch_oh * OW columns). The
  // CTA loads the image rows oh * KH + kh it reads, whole, in `patch_load_elems`-element
  // vectors, parting each vector's pixels into their taps' runs in shared memory (tap
  // kh * KW + kw, pitch block_K); it then stores those runs, one contiguous span where the
  // tile takes every window row, in vector_elems-element vectors.
  bool patches = false;
  int64_t patch_rows = 0, patch_oh = 0;
  int64_t patch_row_tiles = 0, patch_oh_tiles = 0;
  int patch_load_elems = 1;
  int64_t box_planes = 0;
  int64_t band_rows = 0;
  int64_t box_rows = 0;
  int64_t box_cols = 0;

  // tma_im2col: channels per TMA load (a divisor of C and block_K), loads per tile (one per
  // channel box), rows per TMA store (block_M, or 256 when block_M is larger).
  int channels_per_pixel = 0;
  int chunks_per_tile = 0;
  int store_rows = 0;

  // The L2 policies the generated code applies to image loads and column stores; empty
  // where it emits none.
  std::optional<EvictionPolicy> img_policy;
  std::optional<EvictionPolicy> col_policy;
  // tma_im2col's tensor maps (LoweredTileKernel::tensor_maps) are the image's im2col-mode
  // map, then the column matrix's store map.
};

// Staged form: bytes of one box row copied from the image (its in-image pixels).
inline int64_t StagedRowCopyBytes(const LoweredIm2col& l) {
  return l.box.copy_pixels * l.geometry.c * l.element_bytes;
}

// How a bulk-filled staged kernel brings the image into L2: "L2 prefetch of the whole image
// at the start" or "L2 prefetch 3 waves ahead".
std::string DescribeImagePrefetch(const LoweredIm2col::InputBox& box);

absl::StatusOr<LoweredIm2col> LowerIm2col(const Im2colOp& op, const Target& target,
                                          const LaunchParams& launch);


// A multi-line human-readable plan, then the decision log.
std::string DescribeIm2colPlan(const LoweredIm2col& lowered);

// Without the img_prefetch annotation the bulk fill prefetches the whole image into L2 at
// the start when the image takes at most this fraction (1/n) of the target's L2 and the
// column matrix at least all of it: then every tile finds its rows in L2, where prefetching
// each tile's rows a few waves ahead leaves some to HBM; an image that is a larger share of
// L2, or columns not much larger than the image, do better with the per-tile prefetch
// (both are variants of bench/im2col_benchmark).
inline constexpr int64_t kPrefetchAllL2Fraction = 4;

// TMA im2col limits (PTX ISA and cuTensorMapEncodeIm2col, rank-4 maps).
inline constexpr int kTmaIm2colMaxChannelsPerPixel = 256;
inline constexpr int kTmaIm2colMaxPixelsPerColumn = 1024;
inline constexpr int kTmaIm2colMinCorner = -128;
inline constexpr int kTmaIm2colMaxCorner = 127;
inline constexpr int kTmaIm2colMaxOffset = 255;
inline constexpr int kTmaIm2colMaxTraversalStride = 8;
// Loads per tile above which lowering refuses a TMA tile (one thread issues them all).
inline constexpr int kTmaIm2colMaxChunksPerTile = 64;

}  // namespace tiletune

#endif  // COMPILER_OPS_IM2COL_IM2COL_LOWERING_H_

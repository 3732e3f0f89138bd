// Lowering of a global->global `copy` into one CUDA kernel: instruction selection under
// the op's hints, with the declared fallback policy (compiler/lower/lowering_rules.h) and
// a decision log.
//
//   LaunchParams launch;
//   launch.tile = {128, 128};
//   launch.stages = 3;
//   TT_ASSIGN_OR_RETURN(LoweredCopy lowered, LowerCopy(op, target, launch));
//   std::cout << DescribeCopyPlan(lowered);
//
// Paths. tma: cp.async.bulk.tensor loads and TMA stores of tiles, mbarrier-synchronised
// (sm_90+); bulk_1d: 1-D cp.async.bulk of a contiguous range (sm_90+); cp_async: 4/8/16-byte
// cp.async transfers to shared memory, then vector stores (sm_80+); sync_simt: vector
// ld.global/st.global by every thread (all targets). With no prefer_instruction the chain
// is tma (bulk_1d for a 1-D tile) -> cp_async -> sync_simt, skipping TMA under
// disable_tma. Launch parameters that no path can use (a tile too large for shared
// memory, too many accesses per thread) are errors too, so the autotuner can prune with
// this function alone.
#ifndef COMPILER_OPS_COPY_COPY_LOWERING_H_
#define COMPILER_OPS_COPY_COPY_LOWERING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/lower/lowered_kernel.h"
#include "compiler/ops/copy/copy_op.h"
#include "compiler/target/target.h"

namespace tiletune {

enum class CopyPath {
  kTma,       // cp.async.bulk.tensor load + TMA store (sm_90+)
  kBulk1d,    // 1-D cp.async.bulk of a contiguous range (sm_90+)
  kCpAsync,   // cp.async to shared, then vector stores (sm_80+)
  kSyncSimt,  // vector ld.global/st.global by every thread
};

// "tma", "bulk_1d", "cp_async", "sync_simt".
std::string CopyPathName(CopyPath path);

// How the SIMT and cp.async kernels (other than the head_tail and span forms) address a
// tile's vectors.
enum class SimtAddressing {
  // Each vector located from the tile index on its own, bounds-tested against the copy,
  // its dst offset kept from load to store. Where the tile divides the copy the tests
  // fold away.
  kPerSlot,
  // The tile's origin worked out once; each vector at the thread's base plus a constant of
  // the unrolled loop. Along a dimension the tiles do not divide, the last tile moves back
  // to end where the copy does (it overlaps its neighbour, which writes the same values)
  // where that redoes little of the dimension, so its vectors need no bounds test; the
  // others test each vector against what of the copy the tile holds.
  kTileOrigin,
};

// "per_slot", "tile_origin".
std::string SimtAddressingName(SimtAddressing addressing);

// A lowered `copy`. Dimensions are after squeezing unit dimensions and merging those
// contiguous in both operands (unless the tile names the unmerged ones). The kernel takes
// the regions' start addresses: offsets are launch arguments, and only their alignments
// shape the kernel.
struct LoweredCopy : LoweredTileKernel {
  CopyPath path = CopyPath::kSyncSimt;
  // sync_simt's head_tail form (form_name "head_tail"): each row is walked in aligned
  // slots of vector_elems elements; the first and last slot of a row, partial where the
  // row's start or end is not aligned, are moved piecewise. Needs src and dst starts
  // congruent modulo the slot (relative_align), in every row.
  bool head_tail = false;
  // The shifted form (form_name "shifted"), head_tail's kernel for src and dst starts that
  // agree only modulo 1, 2 or 4 B: dst-aligned 16-B slots, each loaded as the two aligned
  // 16-B blocks of src that hold its bytes and funnel-shifted into place. Those loads may
  // read up to 15 bytes beyond a row, never beyond the copy's src span (a slot whose
  // blocks would leave it is gathered byte by byte).
  bool shifted = false;
  // head_tail: slots a row spans at most, whatever its start's alignment.
  int64_t row_slots = 0;
  // The span form (form_name "span") of a 2-D copy whose rows take no 16-B vector
  // (SpanGeometry: narrower than one, or misaligned): each tile of tile[0] whole rows
  // reads its src span (from the first row's start to the last row's end, row gaps
  // included) in aligned 16-B vectors into shared memory, then writes dst from there:
  // whole aligned 16-B vectors where dst rows are contiguous (dst pitch = the row),
  // element by element otherwise. Loads stay inside the copy's own
  // src span: its first and last aligned blocks, where they stick out, are read bytewise.
  bool span = false;
  // span, when both starts are 16-B aligned, dst rows contiguous and the tile a whole
  // number of groups: rows taken span_group_rows at a time, the fewest whose dst bytes are
  // whole 16-B vectors (16 / gcd(row bytes, 16)). A group's src bytes then sit at fixed
  // aligned words of shared memory, so the kernel gathers each dst word with byte
  // permutes known at compile time. 0: the general gather.
  int span_group_rows = 0;
  // SIMT and cp.async outside the head_tail and span forms: tile_origin where the tile
  // leaves a partial tile along some dimension (per-slot offsets and tests there cost a
  // thread its registers), per_slot where it divides the copy.
  SimtAddressing addressing = SimtAddressing::kPerSlot;
  // tile_origin: per dimension, whether the last tile moves back to end with the copy
  // (where the overlap it redoes is at most a quarter of the dimension); a dimension the
  // tiles do not divide that does not is bounds-tested against the tile's own extent.
  std::vector<bool> moved_back;

  std::vector<int64_t> extents;
  std::vector<int64_t> src_strides;  // elements
  std::vector<int64_t> dst_strides;  // elements
  // Elements from the buffer pointers to the regions' starts, of the op lowered; the
  // kernel does not depend on them beyond their alignments.
  int64_t src_offset = 0;
  int64_t dst_offset = 0;
  std::vector<int64_t> tile;         // same rank as extents
  std::vector<int64_t> tiles_per_dim;

  // SIMT and cp.async: elements per vector access and the thread layout.
  int vector_elems = 1;
  LoopLayout layout;
  // Accesses each thread makes per tile (SIMT and cp.async).
  int items_per_thread = 0;

  // The L2 policy the generated code applies to every load and store; empty when it
  // emits none.
  std::optional<EvictionPolicy> l2_policy;
};

// The dimensions a copy is tiled over by default: unit dimensions dropped, and those
// contiguous in both operands merged (a dense tensor gives one). A launch's tile has one
// extent per entry (or one per unmerged dimension, to tile those instead).
std::vector<int64_t> MergedCopyExtents(const CopyOp& op);

// The merged dimensions with both operands' strides and start offsets (elements): what
// decides a copy's speed beyond its size (the contiguous run, the pitches, alignments).
struct MergedCopyGeometry {
  std::vector<int64_t> extents;
  std::vector<int64_t> src_strides;
  std::vector<int64_t> dst_strides;
  int64_t src_offset = 0;
  int64_t dst_offset = 0;
};
MergedCopyGeometry MergeCopyGeometry(const CopyOp& op);

// How a copy's merged geometry is aligned: the widest vector (bytes, up to 16) its fixed
// alignments (run length, pitches, starts) allow a plain access, and the alignment modulo
// which src and dst starts agree on every row (the head_tail slot).
struct CopyAlignment {
  int fixed = 16;
  int agree = 16;
};
CopyAlignment AlignmentOfMerged(const MergedCopyGeometry& g, int element_bytes);

// The widest rows the span form takes (16 rows of a pitch of up to twice it stage in
// 32 KiB of shared memory).
inline constexpr int64_t kSpanMaxRowBytes = 1024;

// Whether the copy's rows suit the span form: after merging, rows contiguous on both
// sides at a src pitch of at most twice the row, and either narrower than 16 B, or under
// kSpanMaxRowBytes into contiguous dst rows where no 16-B vector fits them (misaligned
// starts, pitch or length) and the rows are shorter than 128 B or not whole 16-B slots
// (what the slot forms need of a tile of whole rows). Launch and hints may still rule it
// out, and a slot form that fits the launch comes first (ChooseVector).
bool SpanGeometry(const MergedCopyGeometry& g, int element_bytes);

// Largest power of two up to 16 dividing `bytes` (16 for 0): the alignment a byte offset
// or stride keeps, which is all the lowering reads of offsets (and all the cache key holds).
int AlignmentOf(int64_t bytes);

absl::StatusOr<LoweredCopy> LowerCopy(const CopyOp& op, const Target& target,
                                      const LaunchParams& launch);

// A multi-line human-readable plan: path, vector width, layout, shared memory, barriers,
// L2 policy, grid shape, then the decision log.
std::string DescribeCopyPlan(const LoweredCopy& lowered);

// Rows of a span-form tile whose src span is about `span_bytes` at a src pitch of
// `pitch_bytes`: a multiple of 16 rows, at least 16.
int64_t SpanTileRows(int64_t span_bytes, int64_t pitch_bytes);

// The span form's shared memory for tiles of `rows` rows at a src pitch of `pitch_bytes`:
// the tile's src span, rounded out to aligned 16-B blocks.
int64_t SpanStageBytes(int64_t rows, int64_t pitch_bytes);

// Per-thread cp.async transfers per stage above which lowering refuses a tile (code size).
inline constexpr int kMaxCpAsyncItemsPerThread = 128;

}  // namespace tiletune

#endif  // COMPILER_OPS_COPY_COPY_LOWERING_H_

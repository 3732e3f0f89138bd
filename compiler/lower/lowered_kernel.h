// The result of lowering a tile operator: everything the emitter needs to write a kernel
// and the runtime needs to launch it, plus the log of every decision taken on the way.
#ifndef COMPILER_LOWER_LOWERED_KERNEL_H_
#define COMPILER_LOWER_LOWERED_KERNEL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/ir/copy_op.h"
#include "compiler/ir/data_type.h"
#include "compiler/target/target.h"

namespace tiletune {

// How data moves. The first four lower `copy`, the last two `im2col`.
enum class LoweringPath {
  kTma,         // cp.async.bulk.tensor load + TMA store, mbarrier-synchronised (sm_90+)
  kBulk1d,      // 1-D cp.async.bulk of a contiguous range (sm_90+)
  kCpAsync,     // cp.async 4/8/16-byte transfers to shared, then vector stores (sm_80+)
  kSyncSimt,    // vector ld.global/st.global by every thread (all targets)
  kTmaIm2col,   // cp.async.bulk.tensor im2col mode (sm_90+)
  kSimtIm2col,  // SIMT gather (all targets)
};

// "tma", "bulk_1d", "cp_async", "sync_simt", "tma_im2col", "simt_im2col".
std::string LoweringPathName(LoweringPath path);
absl::StatusOr<LoweringPath> ParseLoweringPath(absl::string_view name);

// Launch-side choices the autotuner varies; the hints are the op's own.
struct LaunchParams {
  // Block tile, one entry per (unit-squeezed) dimension of the copy; a single entry over a
  // contiguous copy tiles its flattened range.
  std::vector<int64_t> tile;
  // Threads per CTA: a multiple of 32, at most 1024.
  int threads = 128;
  // Shared-memory pipeline depth for tma, bulk_1d and cp_async (1 = no overlap).
  int stages = 1;
  // sync_simt only: stage the tile through shared memory (the copy op's G->S->G form)
  // or copy global->global directly.
  bool through_shared = true;
  // 0: one CTA per tile. n > 0: a persistent grid of n CTAs per SM looping over tiles.
  int ctas_per_sm = 0;
};

// Checks what every lowering requires of a launch on `target`: threads a multiple of 32
// up to 1024, 1..kMaxLaunchStages stages, 0..32 CTAs per SM within the SM's thread
// budget, and 1..2^24 for each tile extent (the tile's rank is the lowering's business).
// InvalidArgument names the value and what is accepted.
inline constexpr int kMaxLaunchStages = 8;
absl::Status ValidateLaunchParams(const LaunchParams& launch, const Target& target);

// A TMA descriptor the host must encode before launch (cuTensorMapEncodeTiled).
struct TensorMapSpec {
  enum class Operand { kSrc, kDst };
  Operand operand = Operand::kSrc;
  // Element size: the map moves raw 1, 2, 4 or 8-byte elements.
  int element_bytes = 0;
  // Innermost first.
  std::vector<uint64_t> dims;
  // Byte strides of dims[1..]; innermost first.
  std::vector<uint64_t> strides_bytes;
  std::vector<uint32_t> box;
  // Region start relative to the operand's buffer pointer; the map's base address is
  // pointer + this.
  int64_t base_offset_bytes = 0;
};

// A lowered `copy` kernel. Dimensions are after squeezing unit dimensions (and after
// flattening, for a 1-D tile over a contiguous copy).
struct LoweredCopy {
  Target target = *Target::Parse("sm_90a");
  LoweringPath path = LoweringPath::kSyncSimt;
  DataType dtype = DataType::kF32;
  int element_bytes = 4;
  ResolvedHints hints;
  LaunchParams launch;

  std::vector<int64_t> extents;
  std::vector<int64_t> src_strides;  // elements
  std::vector<int64_t> dst_strides;  // elements
  int64_t src_offset = 0;            // elements from the src buffer pointer
  int64_t dst_offset = 0;
  std::vector<int64_t> tile;         // same rank as extents
  std::vector<int64_t> tiles_per_dim;
  int64_t num_tiles = 0;
  int64_t tile_bytes = 0;

  // SIMT and cp.async: elements per vector access and the thread layout.
  int vector_elems = 1;
  LoopLayout layout;
  // Accesses each thread makes per tile (SIMT and cp.async).
  int items_per_thread = 0;

  int stages = 1;
  int64_t shared_bytes = 0;  // dynamic shared memory per CTA
  int barriers = 0;          // mbarriers per CTA
  // The L2 policy the generated code applies; empty when it emits none.
  std::optional<EvictionPolicy> l2_policy;
  std::vector<TensorMapSpec> tensor_maps;

  std::string kernel_name;
  // Parameters in order: src pointer, dst pointer, then one per tensor map.
  int param_count() const { return 2 + static_cast<int>(tensor_maps.size()); }
  std::vector<std::string> decision_log;
};

// Grid size for `sm_count` multiprocessors.
int64_t CopyGridSize(const LoweredCopy& lowered, int sm_count);

// A multi-line human-readable plan: path, vector width, layout, shared memory, barriers,
// L2 policy, grid shape, then the decision log.
std::string DescribePlan(const LoweredCopy& lowered);

}  // namespace tiletune

#endif  // COMPILER_LOWER_LOWERED_KERNEL_H_

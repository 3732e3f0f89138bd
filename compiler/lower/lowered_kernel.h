// The result of lowering any tile operator: what the runtime needs to launch the kernel,
// what the database records of it, and the log of every decision taken on the way. Each
// operator derives its own type from LoweredTileKernel (LoweredCopy, LoweredIm2col) with
// the details its emitter reads; code that serves every operator sees this base only.
//
//   TT_ASSIGN_OR_RETURN(std::shared_ptr<const LoweredTileKernel> lowered,
//                       definition.Lower(op, target, launch));
//   int64_t grid = lowered->GridSize(sm_count);
#ifndef COMPILER_LOWER_LOWERED_KERNEL_H_
#define COMPILER_LOWER_LOWERED_KERNEL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/ir/data_type.h"
#include "compiler/ir/hints.h"
#include "compiler/target/target.h"

namespace tiletune {

// Launch-side choices the autotuner varies; the hints are the op's own.
struct LaunchParams {
  // Block tile, one entry per dimension the operator tiles (copy: its unit-squeezed
  // dimensions, or one over a contiguous copy; im2col: block_M, block_K).
  std::vector<int64_t> tile;
  // Threads per CTA: a multiple of 32, at most 1024.
  int threads = 128;
  // Shared-memory pipeline depth for the paths that pipeline (1 = no overlap).
  int stages = 1;
  // copy's sync_simt only: stage the tile through shared memory or copy global->global
  // directly.
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

// A TMA descriptor the host encodes before launch, over the operand's buffer pointer:
// tiled (cuTensorMapEncodeTiled) or, when `im2col` is set, im2col mode
// (cuTensorMapEncodeIm2col).
struct TensorMapSpec {
  enum class Operand { kInput, kOutput };
  // The bounding box and box of an im2col-mode map of a rank-4 NHWC image.
  struct Im2colBox {
    // Bounding-box corners, W then H (innermost first, like dims).
    std::vector<int> lower_corner;
    std::vector<int> upper_corner;
    // Box: channels per pixel x pixels per column.
    uint32_t channels_per_pixel = 0;
    uint32_t pixels_per_column = 0;
  };

  Operand operand = Operand::kInput;
  // Element size: the map moves raw 1, 2, 4 or 8-byte elements.
  int element_bytes = 0;
  // Innermost first.
  std::vector<uint64_t> dims;
  // Byte strides of dims[1..]; innermost first.
  std::vector<uint64_t> strides_bytes;
  // Tiled maps: the box, innermost first.
  std::vector<uint32_t> box;
  // Traversal strides, innermost first; empty means all 1.
  std::vector<uint32_t> element_strides;
  // Start relative to the operand's start address (the kernel's pointer parameter); the
  // map's base address is that address + this.
  int64_t base_offset_bytes = 0;
  // Set for an im2col-mode map.
  std::optional<Im2colBox> im2col;
};

// Every lowered kernel: its path, launch, resources and parameters. The kernel's
// parameters are the input pointer, the output pointer, with an item table its pointer and
// the item count (long long), then one per tensor map.
struct LoweredTileKernel {
  virtual ~LoweredTileKernel() = default;

  // The operator ("copy") and its operands' names ("src", "dst"), for messages.
  std::string op;
  std::string input_name = "input";
  std::string output_name = "output";
  Target target = *Target::Parse("sm_90a");
  // The operator's name of the path taken ("tma", "simt_im2col") and, where a path has
  // several forms, the form ("staged"); "" otherwise.
  std::string path_name;
  std::string form_name;
  // The instruction family the path uses: what a device codegen must support to emit it.
  Instruction instruction = Instruction::kSync;
  DataType dtype = DataType::kF32;
  int element_bytes = 4;
  ResolvedHints hints;
  LaunchParams launch;

  int64_t num_tiles = 0;
  int64_t tile_bytes = 0;
  int stages = 1;
  int64_t shared_bytes = 0;  // dynamic shared memory per CTA
  int barriers = 0;          // mbarriers per CTA
  // Bytes of the widest global access the kernel makes (the database records it).
  int vector_bytes = 0;
  // Set for a kernel that reads its input element by element and stores vectors of
  // vector_bytes (the planes forms of im2col and col2im): the input elements it reads for
  // one output element, at most (col2im sums the taps reaching a pixel, im2col copies one).
  // Its width then sets how many neighbouring elements a warp's loads take at once, and a
  // narrower one may read better. Unset: the kernel moves vectors both ways.
  std::optional<int64_t> gather_reads;
  // Set for a kernel that loads its input element by element (the planes forms' element
  // gathers): the 32-byte sectors one warp load instruction touches, on average over the
  // first warp of the middle tile, walked with the kernel's own index arithmetic
  // (MeanWarpLoadSectors). These are L1 requests: a thread's neighbouring elements come
  // back from L1. Unset: neighbouring threads load neighbouring vectors of vector_bytes.
  std::optional<double> warp_load_sectors;
  std::vector<TensorMapSpec> tensor_maps;

  // The kernel's two pointer parameters are its operands' start addresses: the buffer
  // pointers plus these offsets, which the launch adds (copy's region starts; 0 for
  // operators whose kernels index whole buffers). They are the offsets of the op this
  // kernel was lowered from; a launch may pass others that keep the alignments below.
  int64_t input_offset_bytes = 0;
  int64_t output_offset_bytes = 0;
  // What the kernel needs of those start addresses, in bytes: each a multiple of
  // input_align and output_align, and (output - input) a multiple of relative_align.
  int input_align = 16;
  int output_align = 16;
  int relative_align = 1;
  // Bytes from each start address to one past the farthest byte the kernel may touch
  // (the launch refuses overlapping operands); 0 when not known.
  int64_t input_span_bytes = 0;
  int64_t output_span_bytes = 0;

  // Items listed at run time (batch_copy): the kernel takes a device table of them and
  // their count, and a launch of `items` items has items * units_per_item tiles.
  bool item_table = false;
  int64_t units_per_item = 0;

  std::string kernel_name;
  int param_count() const {
    return 2 + (item_table ? 2 : 0) + static_cast<int>(tensor_maps.size());
  }
  // CTAs for `sm_count` multiprocessors: one per tile, or the persistent grid.
  int64_t GridSize(int sm_count) const;
  // The same for a launch of `items` items of an item-table kernel.
  int64_t GridSizeForItems(int sm_count, int64_t items) const;
  std::vector<std::string> decision_log;
};

// A launch in a few words, for tables: "simt_im2col/row tile 32x128, 128 threads" (and ",
// 2 stages" where it pipelines); `form` may be empty.
std::string LaunchSummary(const std::string& path, const std::string& form,
                          const LaunchParams& launch);

// The lines every plan starts with (kernel, target, path and form, dtype) and the lines
// it ends with (stages, shared memory, barriers, the L2 policies as `l2_policies` says
// them, grid, then the decision log), for an operator's DescribePlan to put its own
// lines between.
std::string PlanHeader(const LoweredTileKernel& lowered);
std::string PlanFooter(const LoweredTileKernel& lowered, const std::string& l2_policies);

}  // namespace tiletune

#endif  // COMPILER_LOWER_LOWERED_KERNEL_H_

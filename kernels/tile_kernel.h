// A compiled, loaded tile kernel of any operator, ready to launch on device buffers.
//
//   TT_ASSIGN_OR_RETURN(auto lowered, definition.Lower(op, target, launch));
//   TT_ASSIGN_OR_RETURN(std::unique_ptr<TileKernel> kernel,
//                       TileKernel::Create(context, definition, lowered, compiler));
//   TT_RETURN_IF_ERROR(kernel->Launch(input.ptr(), output.ptr(), stream));
//
// `input` and `output` are the pointers of the op's whole input and output buffers; the
// kernel runs from the regions' starts, the pointers plus the op's offsets (the lowered
// op's own, or others given to Launch: the kernel takes them as arguments). Launch
// refuses, naming the address, starts without the alignment the kernel was lowered for
// and operands that overlap. It encodes the kernel's TMA descriptors (tiled or im2col
// mode) for a new pair of starts and reuses them for the same pair. A kernel of an
// operator whose items are listed at run time (LoweredTileKernel::item_table: batch_copy)
// takes a device item table and its count with every launch (tuning and verification pass
// the operator's example, UploadExampleItems in kernels/verify.h). Not thread-safe: one
// launching thread per TileKernel.
#ifndef KERNELS_TILE_KERNEL_H_
#define KERNELS_TILE_KERNEL_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/cuda/compilation_provider.h"
#include "compiler/lower/lowered_kernel.h"
#include "compiler/ops/tile_op_definition.h"
#include "cuda.h"
#include "kernels/runtime/runtime.h"

namespace tiletune {

// Encodes one TensorMapSpec over the operand buffer at `buffer`: cuTensorMapEncodeTiled,
// or cuTensorMapEncodeIm2col when the spec is an im2col-mode map.
absl::StatusOr<CUtensorMap> EncodeTensorMap(const DriverApi& cu, const TensorMapSpec& spec,
                                            CUdeviceptr buffer);

// InvalidArgument naming each operand start address (buffer pointer plus region offset)
// without the alignment the kernel needs (input_align, output_align, relative_align), or
// the two byte ranges the kernel touches when they overlap.
absl::Status CheckTileOperands(const LoweredTileKernel& lowered, CUdeviceptr input_start,
                               CUdeviceptr output_start);

// Tensor maps encoded per (input, output) buffer pair, so kernels launched over a rotation
// of buffers (the autotuner's) encode each pair once. Keeps the kMaxPairs most recent.
class TensorMapCache {
 public:
  static constexpr size_t kMaxPairs = 64;

  // The maps for the pair, encoded with `encode` (a callable returning
  // StatusOr<std::vector<CUtensorMap>>) on a miss. The pointer is valid until the next
  // call. A template so a launch's hit costs no allocation.
  template <typename Encode>
  absl::StatusOr<std::vector<CUtensorMap>*> Get(CUdeviceptr first, CUdeviceptr second,
                                                const Encode& encode) {
    if (std::vector<CUtensorMap>* hit = Find(first, second)) return hit;
    absl::StatusOr<std::vector<CUtensorMap>> maps = encode();
    if (!maps.ok()) return maps.status();
    return Insert(first, second, *std::move(maps));
  }

 private:
  // The pair's maps, now the most recent; null on a miss.
  std::vector<CUtensorMap>* Find(CUdeviceptr first, CUdeviceptr second);
  // Adds the pair, evicting the least recent at kMaxPairs.
  std::vector<CUtensorMap>* Insert(CUdeviceptr first, CUdeviceptr second,
                                   std::vector<CUtensorMap> maps);

  struct Entry {
    CUdeviceptr first;
    CUdeviceptr second;
    std::vector<CUtensorMap> maps;
  };
  std::vector<Entry> entries_;  // Most recently used last.
};

// A device item table and how many items of it a launch runs.
struct ItemArgs {
  CUdeviceptr table = 0;
  int64_t count = 0;
};

// InvalidArgument for a negative count, or for a table that is not an 8-byte aligned
// device address when there are items to copy.
absl::Status CheckItemArgs(const ItemArgs& items);

class TileKernel {
 public:
  // Emits through `definition`, compiles (through `compiler`, for the lowered target) and
  // loads the kernel.
  static absl::StatusOr<std::unique_ptr<TileKernel>> Create(
      const Context& context, const TileOpDefinition& definition,
      std::shared_ptr<const LoweredTileKernel> lowered, CompilationProvider& compiler);
  // Loads an already compiled kernel (`source` is kept for reports). InvalidArgument when
  // the lowering's target is not the architecture of the context's device, or the cubin
  // lacks the kernel or its parameters.
  static absl::StatusOr<std::unique_ptr<TileKernel>> CreateFromCubin(
      const Context& context, std::shared_ptr<const LoweredTileKernel> lowered,
      std::string source, const Cubin& cubin);
  // From a module already loaded in `context` (shared: it is unloaded with its last user),
  // as CreateFromCubin checks.
  static absl::StatusOr<std::unique_ptr<TileKernel>> CreateFromModule(
      const Context& context, std::shared_ptr<const LoweredTileKernel> lowered,
      std::string source, std::shared_ptr<const Module> module);

  // From the buffers at `input` and `output`, with the regions where the op the kernel
  // was lowered from has them; `items` for an item-table kernel.
  absl::Status Launch(CUdeviceptr input, CUdeviceptr output, CUstream stream,
                      const ItemArgs* items = nullptr);
  // With the regions `offsets` bytes into the buffers (another op of the same kernel key).
  // InvalidArgument for an item-table kernel given no items, and for items given to
  // another.
  absl::Status Launch(CUdeviceptr input, CUdeviceptr output, const RegionOffsets& offsets,
                      CUstream stream, const ItemArgs* items = nullptr);

  const LoweredTileKernel& lowered() const { return *lowered_; }
  const std::string& source() const { return source_; }
  // The loaded kernel function.
  const Kernel& kernel() const { return kernel_; }
  // Grid size used on this device.
  int64_t grid() const { return grid_; }

 private:
  TileKernel(const Context& context, std::shared_ptr<const LoweredTileKernel> lowered,
             std::string source, std::shared_ptr<const Module> module, Kernel kernel);

  const Context& context_;
  std::shared_ptr<const LoweredTileKernel> lowered_;
  std::string source_;
  std::shared_ptr<const Module> module_;
  Kernel kernel_;
  int64_t grid_;
  TensorMapCache maps_;
};

}  // namespace tiletune

#endif  // KERNELS_TILE_KERNEL_H_

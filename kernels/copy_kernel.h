// A compiled, loaded `copy` variant, ready to launch on device buffers.
//
//   TT_ASSIGN_OR_RETURN(LoweredCopy lowered, LowerCopy(op, target, launch));
//   TT_ASSIGN_OR_RETURN(std::unique_ptr<CopyKernel> kernel,
//                       CopyKernel::Create(context, lowered, compiler));
//   TT_RETURN_IF_ERROR(kernel->Launch(src.ptr(), dst.ptr(), stream));
//
// `src` and `dst` are the pointers of the op's whole buffers (the regions' offsets are
// part of the kernel), at least 16-byte aligned, and must not overlap. Launch encodes
// the TMA descriptors for a new pointer pair and reuses them for the same pair. Not
// thread-safe: one launching thread per CopyKernel.
#ifndef KERNELS_COPY_KERNEL_H_
#define KERNELS_COPY_KERNEL_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/cuda/compilation_provider.h"
#include "compiler/lower/lowered_kernel.h"
#include "cuda.h"
#include "kernels/runtime/runtime.h"

namespace tiletune {

// Encodes one TensorMapSpec over the buffer at `buffer`.
absl::StatusOr<CUtensorMap> EncodeTensorMap(const DriverApi& cu, const TensorMapSpec& spec,
                                            CUdeviceptr buffer);

// Launches a tile kernel whose parameters are two pointers and then `maps`, one CTA of
// `threads` threads per grid entry, with `shared_bytes` of dynamic shared memory.
absl::Status LaunchTileKernel(const Kernel& kernel, int64_t grid, int threads,
                              int64_t shared_bytes, CUstream stream, CUdeviceptr first,
                              CUdeviceptr second, std::vector<CUtensorMap>& maps);

// A compiled tile kernel loaded into a context: its module and entry point.
struct LoadedTileKernel {
  std::unique_ptr<Module> module;
  Kernel kernel;
};

// Loads `cubin` into `context` and finds `name`, which must take `param_count`
// parameters; InvalidArgument when `target` is not the architecture of the context's
// device.
absl::StatusOr<LoadedTileKernel> LoadTileKernel(const Context& context, const Target& target,
                                                const Cubin& cubin, const std::string& name,
                                                int param_count);

// InvalidArgument naming both addresses unless each is 16-byte aligned, as tile kernels
// require: "<op> buffers must be 16-byte aligned; got <first_name> 0x.., <second_name> 0x..".
absl::Status CheckTileBuffersAligned(const std::string& op, const std::string& first_name,
                                     CUdeviceptr first, const std::string& second_name,
                                     CUdeviceptr second);

// Tensor maps encoded per (first, second) buffer pair, so kernels launched over a rotation
// of buffers (the autotuner's) encode each pair once. Keeps the kMaxPairs most recent.
class TensorMapCache {
 public:
  static constexpr size_t kMaxPairs = 64;
  using Encoder = std::function<absl::StatusOr<std::vector<CUtensorMap>>()>;

  // The maps for the pair, encoded with `encode` on a miss. The pointer is valid until the
  // next call.
  absl::StatusOr<std::vector<CUtensorMap>*> Get(CUdeviceptr first, CUdeviceptr second,
                                                const Encoder& encode);

 private:
  struct Entry {
    CUdeviceptr first;
    CUdeviceptr second;
    std::vector<CUtensorMap> maps;
  };
  std::vector<Entry> entries_;  // Most recently used last.
};

class CopyKernel {
 public:
  // Emits, compiles (through `compiler`, for the lowered target) and loads the kernel.
  static absl::StatusOr<std::unique_ptr<CopyKernel>> Create(const Context& context,
                                                            const LoweredCopy& lowered,
                                                            CompilationProvider& compiler);
  // Loads an already compiled kernel (`source` is kept for reports).
  static absl::StatusOr<std::unique_ptr<CopyKernel>> CreateFromCubin(const Context& context,
                                                                     const LoweredCopy& lowered,
                                                                     std::string source,
                                                                     const Cubin& cubin);

  absl::Status Launch(CUdeviceptr src, CUdeviceptr dst, CUstream stream);

  const LoweredCopy& lowered() const { return lowered_; }
  const std::string& source() const { return source_; }
  // The loaded kernel function.
  const Kernel& kernel() const { return kernel_; }
  // Grid size used on this device.
  int64_t grid() const { return grid_; }

 private:
  CopyKernel(const Context& context, LoweredCopy lowered, std::string source,
             std::unique_ptr<Module> module, Kernel kernel);

  const Context& context_;
  LoweredCopy lowered_;
  std::string source_;
  std::unique_ptr<Module> module_;
  Kernel kernel_;
  int64_t grid_;
  TensorMapCache maps_;
};

}  // namespace tiletune

#endif  // KERNELS_COPY_KERNEL_H_

// A compiled, loaded `im2col` variant, ready to launch on device buffers.
//
//   TT_ASSIGN_OR_RETURN(LoweredIm2col lowered, LowerIm2col(op, target, launch));
//   TT_ASSIGN_OR_RETURN(std::unique_ptr<Im2colKernel> kernel,
//                       Im2colKernel::Create(context, lowered, compiler));
//   TT_RETURN_IF_ERROR(kernel->Launch(img.ptr(), col.ptr(), stream));
//
// `img` points at the image buffer's first element, `col` at a dense row-major [M, K]
// column matrix; both at least 16-byte aligned and not overlapping. Launch encodes the
// TMA descriptors for a new pointer pair and reuses them for the same pair. Not
// thread-safe: one launching thread per Im2colKernel.
#ifndef KERNELS_IM2COL_KERNEL_H_
#define KERNELS_IM2COL_KERNEL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/cuda/compilation_provider.h"
#include "compiler/lower/im2col_lowering.h"
#include "cuda.h"
#include "kernels/copy_kernel.h"
#include "kernels/runtime/runtime.h"

namespace tiletune {

// Encodes an im2col-mode descriptor (cuTensorMapEncodeIm2col) over the image at `img`.
absl::StatusOr<CUtensorMap> EncodeIm2colTensorMap(const DriverApi& cu,
                                                  const Im2colTensorMapSpec& spec,
                                                  CUdeviceptr img);

class Im2colKernel {
 public:
  // Emits, compiles (through `compiler`, for the lowered target) and loads the kernel.
  static absl::StatusOr<std::unique_ptr<Im2colKernel>> Create(const Context& context,
                                                              const LoweredIm2col& lowered,
                                                              CompilationProvider& compiler);

  // Loads an already compiled kernel (`source` is kept for reports).
  static absl::StatusOr<std::unique_ptr<Im2colKernel>> CreateFromCubin(
      const Context& context, const LoweredIm2col& lowered, std::string source,
      const Cubin& cubin);

  absl::Status Launch(CUdeviceptr img, CUdeviceptr col, CUstream stream);

  const LoweredIm2col& lowered() const { return lowered_; }
  const std::string& source() const { return source_; }
  // The loaded kernel function.
  const Kernel& kernel() const { return kernel_; }
  // Grid size used on this device.
  int64_t grid() const { return grid_; }

 private:
  Im2colKernel(const Context& context, LoweredIm2col lowered, std::string source,
               std::unique_ptr<Module> module, Kernel kernel);

  const Context& context_;
  LoweredIm2col lowered_;
  std::string source_;
  std::unique_ptr<Module> module_;
  Kernel kernel_;
  int64_t grid_;
  // Tensor maps per pointer pair: image, then column matrix.
  TensorMapCache maps_;
};

}  // namespace tiletune

#endif  // KERNELS_IM2COL_KERNEL_H_

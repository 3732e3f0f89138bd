// Bit-exact verification of an `im2col` variant on the GPU.
//
// Each call draws fresh random image data, poisons the column matrix with a random byte,
// surrounds both buffers with guard zones, launches once and compares every byte with the
// CPU reference: the column matrix must equal the reference (padding as zeros), every
// guard byte must still hold the poison, and the image must be unchanged.
//
//   std::mt19937_64 rng(seed);
//   TT_RETURN_IF_ERROR(VerifyIm2col(*context, *kernel, op, rng));
#ifndef KERNELS_IM2COL_VERIFY_H_
#define KERNELS_IM2COL_VERIFY_H_

#include <cstddef>
#include <random>

#include "absl/status/status.h"
#include "compiler/ir/im2col_op.h"
#include "kernels/im2col_kernel.h"
#include "kernels/runtime/runtime.h"

namespace tiletune {

// Guard bytes before and after each device buffer.
inline constexpr size_t kIm2colGuardBytes = 4096;

// OK when the kernel matches the reference; DataLoss naming the first wrong byte (its
// column-matrix row and column, or the guard zone) otherwise; launch or driver errors as
// returned by the runtime (a fault is Aborted).
absl::Status VerifyIm2col(const Context& context, Im2colKernel& kernel, const Im2colOp& op,
                          std::mt19937_64& rng);

}  // namespace tiletune

#endif  // KERNELS_IM2COL_VERIFY_H_

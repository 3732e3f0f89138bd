// Bit-exact verification of a `copy` variant on the GPU.
//
// Each call draws fresh random source data, poisons the destination with a random byte,
// surrounds both buffers with guard zones, launches once and compares every byte with
// the CPU reference: the dst region must equal the reference, every other dst byte and
// every guard byte must still hold the poison.
//
//   std::mt19937_64 rng(seed);
//   TT_RETURN_IF_ERROR(VerifyCopy(*context, *kernel, op, rng));
#ifndef KERNELS_COPY_VERIFY_H_
#define KERNELS_COPY_VERIFY_H_

#include <random>

#include "absl/status/status.h"
#include "compiler/ir/copy_op.h"
#include "kernels/copy_kernel.h"
#include "kernels/runtime/runtime.h"

namespace tiletune {

// Guard bytes before and after each device buffer.
inline constexpr size_t kGuardBytes = 4096;

// OK when the kernel matches the reference; DataLoss naming the first wrong byte (region
// element, outside the region, or in a guard zone) otherwise; launch or driver errors as
// returned by the runtime (a fault is Aborted).
absl::Status VerifyCopy(const Context& context, CopyKernel& kernel, const CopyOp& op,
                        std::mt19937_64& rng);

}  // namespace tiletune

#endif  // KERNELS_COPY_VERIFY_H_

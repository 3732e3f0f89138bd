// Bit-exact verification of any tile kernel on the GPU.
//
// Each call draws fresh random input data, poisons the output with a random non-zero byte
// (so an output written as zero is told apart from one left alone), surrounds both buffers
// with guard zones, launches once and compares every byte with the operator's CPU
// reference: the output must equal the reference, every byte the op does not write and
// every guard byte must still hold the poison, and the input must be unchanged.
//
//   std::mt19937_64 rng(seed);
//   TT_RETURN_IF_ERROR(VerifyTileKernel(*context, *kernel, definition, op, rng));
//
// Timings after verification rotate through buffers larger than the L2 (kernels/measure.h).
#ifndef KERNELS_VERIFY_H_
#define KERNELS_VERIFY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/ir/tile_op.h"
#include "compiler/ops/tile_op_definition.h"
#include "kernels/runtime/runtime.h"
#include "kernels/tile_kernel.h"

namespace tiletune {

// Guard bytes before and after each device buffer.
inline constexpr size_t kGuardBytes = 4096;

// An allocator whose resize leaves new bytes uninitialised, so that images of a GiB are
// first touched by the threads that fill them, not zeroed by one thread beforehand.
template <typename T>
struct DefaultInitAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() = default;
  template <typename U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using HostBytes = std::vector<uint8_t, DefaultInitAllocator<uint8_t>>;

// Host images for one verification: random input and the expected output, each with
// kGuardBytes of guard on both sides; `expected` holds `poison` wherever the op writes
// nothing (the guards included). Made on several threads where large.
struct VerificationImages {
  HostBytes input;
  HostBytes expected;
  uint8_t poison = 0;
};
absl::StatusOr<VerificationImages> MakeVerificationImages(const TileOpDefinition& definition,
                                                          const TileOp& op,
                                                          std::mt19937_64& rng);

// The operator's example item table (TileOpDefinition::ExampleItems) on the device, for
// operators whose items a launch lists (batch_copy): what tuning, verification and
// evaluation launch `op` with. get() is null for the other operators.
struct DeviceItems {
  std::optional<DeviceBuffer> table;
  ItemArgs args;
  const ItemArgs* get() const { return table.has_value() ? &args : nullptr; }
};
absl::StatusOr<DeviceItems> UploadExampleItems(const Context& context,
                                               const TileOpDefinition& definition,
                                               const TileOp& op);

// `kernel` runs at the region offsets of `op` (TileOpDefinition::Offsets), and with its
// example items, so one kernel can be verified on every op of its key. OK when the kernel matches the reference; DataLoss naming the first wrong byte (its
// output element as the operator describes it, or the guard zone) and how many follow;
// launch or driver errors as the runtime returns them (a fault is Aborted).
absl::Status VerifyTileKernel(const Context& context, TileKernel& kernel,
                              const TileOpDefinition& definition, const TileOp& op,
                              std::mt19937_64& rng);

// The first difference of a run's output (`got`, guards included) and input (`input_after`)
// from `images`: DataLoss naming `name` (what ran), the input written, or the first wrong
// byte (its output element as the operator describes it, or the guard zone) and how many
// follow; OK when there is none.
absl::Status FirstMismatch(const TileOpDefinition& definition, const TileOp& op,
                           const VerificationImages& images, const HostBytes& got,
                           const HostBytes& input_after, const std::string& name);

}  // namespace tiletune

#endif  // KERNELS_VERIFY_H_

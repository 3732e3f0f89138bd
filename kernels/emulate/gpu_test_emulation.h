// GPU tests on a machine without a GPU: with $TILETUNE_EMULATE_GPU_TESTS=1 and no device, a
// GPU test verifies its kernels with the host emulator (host_emulator.h) instead of
// skipping. Each case compiles its kernel with the host's C++ compiler, so a suite takes
// minutes; it checks what the kernels compute (not timing, not the hardware's memory
// model).
//
//   void SetUp() override {
//     if (EmulatingGpuTests()) return;  // context_ stays null: the case runs on the CPU
//     TT_SKIP_WITHOUT_GPU(context_);
//   }
//   ...
//   if (context_ == nullptr) {
//     ASSERT_TRUE(VerifyEmulated(definition, lowered, op, rng, /*runs=*/2).ok());
//     return;
//   }
#ifndef KERNELS_EMULATE_GPU_TEST_EMULATION_H_
#define KERNELS_EMULATE_GPU_TEST_EMULATION_H_

#include <memory>
#include <random>

#include "absl/status/status.h"
#include "compiler/ir/tile_op.h"
#include "compiler/lower/lowered_kernel.h"
#include "compiler/ops/tile_op_definition.h"

namespace tiletune {

// Whether $TILETUNE_EMULATE_GPU_TESTS is 1 and no GPU is there (TestContext() is
// Unavailable). With $TILETUNE_REQUIRE_GPU=1 it is false: a GPU machine never emulates.
bool EmulatingGpuTests();

// Emits `lowered` through `definition`, compiles it for the host emulator and verifies it
// `runs` times against the reference, each on fresh random data (HostEmulator::Verify).
absl::Status VerifyEmulated(const TileOpDefinition& definition,
                            std::shared_ptr<const LoweredTileKernel> lowered, const TileOp& op,
                            std::mt19937_64& rng, int runs);

}  // namespace tiletune

#endif  // KERNELS_EMULATE_GPU_TEST_EMULATION_H_

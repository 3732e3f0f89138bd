// Runs one launch of a kernel compiled for the host (host_source.h) on the CPU: every CTA
// in turn, each CUDA thread a fiber, with the semantics the generated kernels rely on.
//
//   - __syncthreads and __syncwarp are barriers over the threads that have not exited;
//     threads run between barriers in a fresh random order each time, so a kernel that
//     depends on an order it does not enforce can fail.
//   - Shared memory is a per-CTA arena filled with random bytes before each CTA: a read of
//     shared memory nobody wrote gives garbage, as on the GPU.
//   - Asynchronous copies land when the kernel waits for them, not before: cp.async at
//     cp.async.wait_group, bulk and tensor loads when a thread waits on their mbarrier,
//     bulk and tensor stores at cp.async.bulk.wait_group (read). A kernel that reads
//     before it waits reads stale data.
//   - mbarriers count arrivals and transaction bytes and complete phases; a wait that can
//     never complete is reported as a deadlock, naming what each thread waits for.
//   - Every global access the PTX interpreter makes is checked against the launch's
//     buffers, and every shared one against the CTA's shared memory.
//   - Alignment is checked as the hardware requires it: vector accesses, cp.async, bulk
//     copies, mbarriers, tensor-copy shared memory.
//   - A thread that exits with copies it never waited for, or a CTA that ends with tensor or
//     bulk loads nobody waited for, is an error (on a GPU they touch shared memory after the
//     CTA is gone).
//   - CTAs run in a random order.
// Plain C++ loads and stores in a kernel body are not checked, nor is anything about
// memory ordering that only hardware shows (compute-sanitizer's racecheck does that).
//
// Launches are serialised across the process (a kernel library's current-thread variable
// is shared). A kernel that loops forever hangs its caller.
#ifndef KERNELS_EMULATE_EMULATED_GRID_H_
#define KERNELS_EMULATE_EMULATED_GRID_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kernels/emulate/host_abi.h"

namespace tiletune {

// A byte range of host memory that a kernel's global accesses may touch.
struct HostRange {
  std::string name;
  uint64_t begin = 0;
  uint64_t end = 0;
};

// What the emulator's tensor-map parameters hold (in the 128 bytes of a CUtensorMap):
// TensorMapSpec's fields with the base address resolved.
struct EmulatedTensorMap {
  static constexpr uint32_t kMagic = 0x7474656d;  // "ttem"
  enum class Mode : uint32_t { kTiled, kIm2col };
  uint32_t magic = kMagic;
  uint32_t rank = 0;
  uint64_t base = 0;
  uint32_t element_bytes = 0;
  Mode mode = Mode::kTiled;
  uint64_t dims[5] = {};           // innermost first
  uint64_t strides_bytes[4] = {};  // of dims[1..]
  uint16_t box[5] = {};            // tiled maps
  uint8_t element_strides[5] = {};
  int8_t lower_corner[2] = {};  // im2col maps: W, H
  int8_t upper_corner[2] = {};
  uint16_t channels_per_pixel = 0;
  uint16_t pixels_per_column = 0;
};
static_assert(sizeof(EmulatedTensorMap) <= 128, "a tensor map parameter holds 128 bytes");

struct GridLaunch {
  // The kernel library's entry for this kernel, and its tt_emu_current variable.
  void (*entry)(void** args) = nullptr;
  host_abi::tt_emu_thread** current = nullptr;
  void** args = nullptr;
  int64_t grid = 1;
  int threads = 1;
  int64_t dynamic_shared_bytes = 0;
  // %nsmid.
  int sm_count = 1;
  // Seeds the shared-memory garbage and the thread orders.
  uint64_t seed = 0;
  std::vector<HostRange> buffers;
};

// Runs the launch; the first error a thread meets (a global access outside the buffers, a
// shared access outside the arena, PTX the interpreter does not know, a deadlock) ends it,
// naming the CTA and thread.
absl::Status RunGrid(const GridLaunch& launch);

// The table of entry points every host kernel library's tt_emu_host_api points at.
const host_abi::tt_emu_host& EmulatorHostApi();

// IEEE binary16 conversions as PTX's cvt does them (round to nearest even).
float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);

}  // namespace tiletune

#endif  // KERNELS_EMULATE_EMULATED_GRID_H_

// Runs tiletune's generated kernels on the CPU, so that every variant can be checked
// bit-exact against its operator's CPU reference on a machine with no GPU.
//
//   std::vector<HostKernel> kernels = ...;  // lowered kernels and their CUDA source
//   TT_ASSIGN_OR_RETURN(std::unique_ptr<HostEmulator> emulator,
//                       HostEmulator::Create(std::move(kernels), {}));
//   std::mt19937_64 rng(seed);
//   TT_RETURN_IF_ERROR(emulator->Verify(0, definition, op, rng));
//
// Each kernel's source is rewritten as host C++ (host_source.h), compiled with the host's
// C++ compiler into shared libraries (several kernels each, compiled in parallel) and
// loaded; a launch runs every CTA on the calling thread (emulated_grid.h says what is
// emulated). It checks what the kernel computes, never how fast: the emulated device
// has `sm_count` multiprocessors, so persistent grids loop over several tiles per CTA.
#ifndef KERNELS_EMULATE_HOST_EMULATOR_H_
#define KERNELS_EMULATE_HOST_EMULATOR_H_

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/ir/tile_op.h"
#include "compiler/lower/lowered_kernel.h"
#include "compiler/ops/tile_op_definition.h"
#include "kernels/emulate/emulated_grid.h"

namespace tiletune {

struct HostKernel {
  std::shared_ptr<const LoweredTileKernel> lowered;
  // The CUDA source the operator's definition emitted for it.
  std::string source;
};

class HostEmulator {
 public:
  struct Options {
    // The host C++ compiler; empty: $TILETUNE_HOST_CXX, else `c++` on $PATH.
    std::string compiler;
    // Multiprocessors of the emulated device: its persistent grids and %nsmid.
    int sm_count = 4;
    // Kernels per compiled library, and libraries compiled at once.
    int kernels_per_library = 24;
    int jobs = 2;
  };

  // Rewrites, compiles and loads every kernel. InvalidArgument naming a kernel the
  // rewrite cannot read; Internal with the compiler's output when a library does not
  // compile; FailedPrecondition when there is no host compiler.
  static absl::StatusOr<std::unique_ptr<HostEmulator>> Create(std::vector<HostKernel> kernels,
                                                              const Options& options);
  ~HostEmulator();
  HostEmulator(const HostEmulator&) = delete;
  HostEmulator& operator=(const HostEmulator&) = delete;

  int size() const { return static_cast<int>(kernels_.size()); }
  const LoweredTileKernel& lowered(int index) const { return *kernels_[index].lowered; }

  // Kernel `index` over host buffers as TileKernel::Launch runs it on device buffers: the
  // regions `offsets` bytes into `input` and `output`, the operands' alignment and
  // overlap checked, tensor maps encoded, with `items` for an item-table kernel.
  // `buffers` are the ranges its global accesses may touch.
  absl::Status Launch(int index, uint8_t* input, uint8_t* output, const RegionOffsets& offsets,
                      const ItemTableImage* items, std::vector<HostRange> buffers,
                      uint64_t seed) const;

  // VerifyTileKernel (kernels/verify.h) on the CPU: fresh random input, the output
  // poisoned and guarded, one launch, every byte compared with the operator's reference.
  absl::Status Verify(int index, const TileOpDefinition& definition, const TileOp& op,
                      std::mt19937_64& rng) const;

 private:
  struct Library;
  HostEmulator(std::vector<HostKernel> kernels, Options options);
  absl::Status Build();

  std::vector<HostKernel> kernels_;
  Options options_;
  std::string directory_;
  std::vector<std::unique_ptr<Library>> libraries_;
  // Per kernel: its library and entry.
  std::vector<const Library*> library_of_;
  std::vector<void (*)(void**)> entries_;
};

// The host C++ compiler the emulator uses: $TILETUNE_HOST_CXX, else `c++` on $PATH.
// FailedPrecondition naming both when neither is there.
absl::StatusOr<std::string> FindHostCompiler();

}  // namespace tiletune

#endif  // KERNELS_EMULATE_HOST_EMULATOR_H_

// What ptxas gives a kernel (registers, spills, static shared memory), read from the
// verbose log of a CUBIN compile, and how many CTAs of it an SM can hold at once.
//
//   TT_ASSIGN_OR_RETURN(KernelResources r, CompileForResources(compiler, source, "sm_90a"));
//   const int resident = ResidentCtas(r, /*threads=*/256, /*dynamic_shared=*/16384);
//
// The figures are the compiler's, with no GPU: a memory-bound kernel whose registers leave
// one CTA per SM has that much less in flight, which its timing shows and a model of its
// bytes alone does not.
#ifndef COMPILER_CUDA_KERNEL_RESOURCES_H_
#define COMPILER_CUDA_KERNEL_RESOURCES_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/cuda/artifacts.h"
#include "compiler/cuda/compilation_provider.h"

namespace tiletune {

struct KernelResources {
  int registers = 0;            // per thread
  int64_t spill_bytes = 0;      // spill stores, per thread
  int64_t static_shared = 0;    // bytes, per CTA (dynamic shared memory comes on top)
};

// The figures of ptxas's verbose log ("Used 40 registers, ... 16 bytes smem"), for the one
// kernel the log describes; InvalidArgument when the log has no register count.
absl::StatusOr<KernelResources> ParsePtxasLog(absl::string_view log);

// Compiles `source` to a CUBIN for `arch` with ptxas's verbose output and reads it.
absl::StatusOr<KernelResources> CompileForResources(CompilationProvider& compiler,
                                                    const CudaSource& source,
                                                    const std::string& arch);

// CTAs of `threads` threads, each with `dynamic_shared` bytes besides the kernel's own, that
// one SM of compute capability 7.0 to 12.x holds at once: the least of what its registers
// (64 Ki a SM, allocated per warp in units of 256), threads (`max_threads_per_sm`), CTA
// slots and shared memory (`shared_per_sm` bytes, 1 KiB of it reserved per CTA) allow.
int ResidentCtas(const KernelResources& resources, int threads, int64_t dynamic_shared,
                 int max_threads_per_sm = 2048, int64_t shared_per_sm = 233472,
                 int max_ctas_per_sm = 32);

}  // namespace tiletune

#endif  // COMPILER_CUDA_KERNEL_RESOURCES_H_

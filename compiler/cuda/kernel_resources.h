// What ptxas gives a kernel (registers, spills, static shared memory), read from the
// verbose log of a CUBIN compile.
//
//   TT_ASSIGN_OR_RETURN(KernelResources r, CompileForResources(compiler, source, "sm_90a"));
//   // CTAs an SM holds: ResidentCtasPerSm(target, threads, dynamic + r.static_shared,
//   //                                     r.registers) (compiler/lower/lowering_rules.h)
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

}  // namespace tiletune

#endif  // COMPILER_CUDA_KERNEL_RESOURCES_H_

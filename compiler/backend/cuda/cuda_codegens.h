// tiletune's built-in codegens for the "cuda" target kind, one per instruction set, each
// serving the architectures whose features (compiler/target's table) match it:
//
//   cuda.tma       sm_90 .. sm_121 (Hopper, Blackwell)   TMA (tensor and bulk), cp.async, SIMT
//   cuda.cp_async  sm_80 .. sm_89 (Ampere, Ada)           cp.async, SIMT
//   cuda.simt      sm_70, sm_75 (Volta, Turing)           SIMT
//
// Each lowers any registered tile operator with the request's hints, restricted to its
// family's instructions, and emits the CUDA kernel; Build also compiles it. Registration
// is explicit:
//
//   DeviceCodegenRegistry registry;
//   TT_RETURN_IF_ERROR(RegisterBuiltinCudaCodegens(registry, BuiltinTileOps()));
#ifndef COMPILER_BACKEND_CUDA_CUDA_CODEGENS_H_
#define COMPILER_BACKEND_CUDA_CUDA_CODEGENS_H_

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "compiler/backend/device_codegen.h"
#include "compiler/backend/registry.h"
#include "compiler/ops/registry.h"

namespace tiletune {

// The three built-in codegens, newest family first, building the operators of `ops`
// (which must outlive them).
std::vector<std::shared_ptr<const DeviceCodegen>> BuiltinCudaCodegens(const TileOpRegistry& ops);

// Registers BuiltinCudaCodegens(ops) for kind "cuda".
absl::Status RegisterBuiltinCudaCodegens(DeviceCodegenRegistry& registry,
                                         const TileOpRegistry& ops);

}  // namespace tiletune

#endif  // COMPILER_BACKEND_CUDA_CUDA_CODEGENS_H_

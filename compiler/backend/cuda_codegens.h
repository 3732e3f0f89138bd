// tiletune's built-in codegens for the "cuda" target kind, one per hardware family:
//
//   cuda.hopper   sm_90 .. sm_100a   TMA (tensor and bulk), cp.async, SIMT
//   cuda.ampere   sm_80 .. sm_89     cp.async, SIMT
//   cuda.simt     sm_70 .. sm_75     SIMT
//
// Each lowers with the request's hints, restricted to its family's paths, and emits the
// CUDA kernel; Build also compiles it. Registration is explicit:
//
//   DeviceCodegenRegistry registry;
//   TT_RETURN_IF_ERROR(RegisterBuiltinCudaCodegens(registry));
#ifndef COMPILER_BACKEND_CUDA_CODEGENS_H_
#define COMPILER_BACKEND_CUDA_CODEGENS_H_

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "compiler/backend/device_codegen.h"
#include "compiler/backend/registry.h"

namespace tiletune {

// The three built-in codegens, newest family first.
std::vector<std::shared_ptr<const DeviceCodegen>> BuiltinCudaCodegens();

// Registers BuiltinCudaCodegens() for kind "cuda".
absl::Status RegisterBuiltinCudaCodegens(DeviceCodegenRegistry& registry);

}  // namespace tiletune

#endif  // COMPILER_BACKEND_CUDA_CODEGENS_H_

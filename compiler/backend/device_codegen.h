// A device codegen: turns a tile-operator request into kernel source (and a binary) for
// the targets its predicate accepts, for every registered tile operator. Registered by
// name in a DeviceCodegenRegistry (registry.h); the CUDA families live in backend/cuda.
//
//   std::shared_ptr<const DeviceCodegen> codegen = ...;
//   if (codegen->SupportsTarget(target)) {
//     TT_ASSIGN_OR_RETURN(BuiltKernel kernel, codegen->Build(request, compiler));
//   }
//
// Implementations are immutable after construction and thread-safe.
#ifndef COMPILER_BACKEND_DEVICE_CODEGEN_H_
#define COMPILER_BACKEND_DEVICE_CODEGEN_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/cuda/artifacts.h"
#include "compiler/cuda/compilation_provider.h"
#include "compiler/ir/tile_op.h"
#include "compiler/lower/lowered_kernel.h"
#include "compiler/target/target.h"

namespace tiletune {

// What to build: an op of any registered operator with the hints to lower it under, the
// launch parameters, and the target.
struct CodegenRequest {
  std::shared_ptr<const TileOp> op;
  LaunchParams launch;
  Target target = *Target::Parse("sm_90a");
};

struct BuiltKernel {
  // The name of the codegen that built it.
  std::string codegen;
  std::shared_ptr<const LoweredTileKernel> lowered;
  CudaSource source;
  // Set by Build, empty from BuildWithoutCompile.
  std::optional<Cubin> cubin;
};

class DeviceCodegen {
 public:
  virtual ~DeviceCodegen() = default;

  // Unique within a registry, e.g. "cuda.tma".
  virtual std::string name() const = 0;
  // Whether this codegen produces kernels for `target`.
  virtual bool SupportsTarget(const Target& target) const = 0;
  // Lowers and emits; no compiler involved (works anywhere).
  virtual absl::StatusOr<BuiltKernel> BuildWithoutCompile(const CodegenRequest& request) const = 0;
  // Lowers, emits and compiles for the request's target.
  virtual absl::StatusOr<BuiltKernel> Build(const CodegenRequest& request,
                                            CompilationProvider& compiler) const = 0;
};

}  // namespace tiletune

#endif  // COMPILER_BACKEND_DEVICE_CODEGEN_H_

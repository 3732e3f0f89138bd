// A device codegen: turns a tile-operator request into CUDA source (and a CUBIN) for the
// targets its predicate accepts. Registered by name in a DeviceCodegenRegistry.
//
//   std::shared_ptr<const DeviceCodegen> codegen = ...;
//   if (codegen->SupportsTarget(target)) {
//     TT_ASSIGN_OR_RETURN(BuiltKernel kernel, codegen->Build(request, compiler));
//   }
//
// Implementations are immutable after construction and thread-safe.
#ifndef COMPILER_BACKEND_DEVICE_CODEGEN_H_
#define COMPILER_BACKEND_DEVICE_CODEGEN_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/cuda/compilation_provider.h"
#include "compiler/ir/copy_op.h"
#include "compiler/ir/im2col_op.h"
#include "compiler/lower/im2col_lowering.h"
#include "compiler/lower/lowered_kernel.h"
#include "compiler/target/target.h"

namespace tiletune {

// What to build: a copy with its hints, the launch parameters, and the target.
struct KernelRequest {
  CopyOp op;
  LaunchParams launch;
  Target target = *Target::Parse("sm_90a");
};

struct BuiltKernel {
  // The name of the codegen that built it.
  std::string codegen;
  LoweredCopy lowered;
  CudaSource source;
  // Set by Build, empty from BuildWithoutCompile.
  std::optional<Cubin> cubin;
};

// The same for im2col: the op (image, geometry, hints), the launch (tile = {block_M,
// block_K}), the target.
struct Im2colRequest {
  Im2colOp op;
  LaunchParams launch;
  Target target = *Target::Parse("sm_90a");
};

struct BuiltIm2col {
  std::string codegen;
  LoweredIm2col lowered;
  CudaSource source;
  std::optional<Cubin> cubin;
};

class DeviceCodegen {
 public:
  virtual ~DeviceCodegen() = default;

  // Unique within a registry, e.g. "cuda.hopper".
  virtual std::string name() const = 0;
  // Whether this codegen produces kernels for `target`.
  virtual bool SupportsTarget(const Target& target) const = 0;
  // Lowers and emits; no compiler involved (works anywhere).
  virtual absl::StatusOr<BuiltKernel> BuildWithoutCompile(const KernelRequest& request) const = 0;
  // Lowers, emits and compiles to a CUBIN for the request's target.
  virtual absl::StatusOr<BuiltKernel> Build(const KernelRequest& request,
                                            CompilationProvider& compiler) const = 0;
  // The im2col counterparts of the two above.
  virtual absl::StatusOr<BuiltIm2col> BuildIm2colWithoutCompile(
      const Im2colRequest& request) const = 0;
  virtual absl::StatusOr<BuiltIm2col> BuildIm2col(const Im2colRequest& request,
                                                  CompilationProvider& compiler) const = 0;
};

}  // namespace tiletune

#endif  // COMPILER_BACKEND_DEVICE_CODEGEN_H_

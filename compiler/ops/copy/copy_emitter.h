// CUDA C++ for a lowered `copy`: one self-contained translation unit (no #include), one
// extern "C" __global__ kernel named LoweredCopy::kernel_name.
//
// Output is a pure function of the LoweredCopy's code-relevant fields (path, shapes,
// strides, tile, vector width, layout, stages, L2 policy): hints that change none of
// these leave the text byte-identical, and the decision log never reaches the source.
//
//   TT_ASSIGN_OR_RETURN(LoweredCopy lowered, LowerCopy(op, target, launch));
//   CudaSource source = EmitCopyKernel(lowered);
#ifndef COMPILER_OPS_COPY_COPY_EMITTER_H_
#define COMPILER_OPS_COPY_COPY_EMITTER_H_

#include "compiler/cuda/artifacts.h"
#include "compiler/ops/copy/copy_lowering.h"

namespace tiletune {

CudaSource EmitCopyKernel(const LoweredCopy& lowered);

}  // namespace tiletune

#endif  // COMPILER_OPS_COPY_COPY_EMITTER_H_

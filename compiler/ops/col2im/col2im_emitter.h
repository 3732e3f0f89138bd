// CUDA C++ source of a lowered col2im kernel (col2im_lowering.h): deterministic text, a
// pure function of the lowering (golden-tested).
#ifndef COMPILER_OPS_COL2IM_COL2IM_EMITTER_H_
#define COMPILER_OPS_COL2IM_COL2IM_EMITTER_H_

#include "compiler/cuda/artifacts.h"
#include "compiler/ops/col2im/col2im_lowering.h"

namespace tiletune {

CudaSource EmitCol2imKernel(const LoweredCol2im& lowered);

}  // namespace tiletune

#endif  // COMPILER_OPS_COL2IM_COL2IM_EMITTER_H_

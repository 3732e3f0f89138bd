// CUDA C++ for a lowered `im2col`: one self-contained translation unit (no #include), one
// extern "C" __global__ kernel named LoweredIm2col::kernel_name taking (img, col) and, on
// the TMA path, the image's im2col map and the column matrix's store map.
//
// Output is a pure function of the LoweredIm2col's code-relevant fields (path, geometry,
// strides, tile, vector width, layout, stages, channel box, L2 policies): hints that change
// none of these leave the text byte-identical, and the decision log never reaches the
// source.
//
//   TT_ASSIGN_OR_RETURN(LoweredIm2col lowered, LowerIm2col(op, target, launch));
//   CudaSource source = EmitIm2colKernel(lowered);
#ifndef COMPILER_OPS_IM2COL_IM2COL_EMITTER_H_
#define COMPILER_OPS_IM2COL_IM2COL_EMITTER_H_

#include "compiler/cuda/artifacts.h"
#include "compiler/ops/im2col/im2col_lowering.h"

namespace tiletune {

CudaSource EmitIm2colKernel(const LoweredIm2col& lowered);

}  // namespace tiletune

#endif  // COMPILER_OPS_IM2COL_IM2COL_EMITTER_H_

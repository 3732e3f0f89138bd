// The problems the example's tests (and //bench:dispatch_benchmark's first calls) use: two
// of those baked by :resnet_kernels.
#ifndef KERNELS_EXAMPLE_EXAMPLE_PROBLEMS_H_
#define KERNELS_EXAMPLE_EXAMPLE_PROBLEMS_H_

#include <cstdint>

#include "compiler/ops/copy/copy_op.h"
#include "compiler/ops/im2col/im2col_op.h"

namespace tiletune {

// A dense f16 tensor of [rows, cols] into another.
inline CopyOp DenseCopy(int64_t rows, int64_t cols) {
  Buffer src = Buffer::RowMajor("src", DataType::kF16, Scope::kGlobal, {rows, cols});
  Buffer dst = Buffer::RowMajor("dst", DataType::kF16, Scope::kGlobal, {rows, cols});
  return CopyOp{Region::Whole(src), Region::Whole(dst)};
}

// ResNet-50's first 3x3 layer: f16 N32 C64 56x56, pad 1.
inline Im2colOp Layer1() {
  Im2colGeometry g;
  g.n = 32;
  g.h = g.w = 56;
  g.c = 64;
  g.kh = g.kw = 3;
  g.ph = g.pw = 1;
  return Im2colOp::Dense(DataType::kF16, g);
}

}  // namespace tiletune

#endif  // KERNELS_EXAMPLE_EXAMPLE_PROBLEMS_H_

// CPU reference of `col2im` (col2im_op.h): sums each image element's taps in the kernels'
// order (kh ascending, then kw ascending) in f32 and rounds once, bit for bit as the GPU
// does. Also the f32 <-> f16 / bf16 conversions it uses, exposed for tests.
#ifndef COMPILER_OPS_COL2IM_COL2IM_REFERENCE_H_
#define COMPILER_OPS_COL2IM_COL2IM_REFERENCE_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "compiler/ops/col2im/col2im_op.h"

namespace tiletune {

// Exact widening of an f16 or bf16 bit pattern.
float HalfBitsToFloat(uint16_t bits);
float Bf16BitsToFloat(uint16_t bits);
// Round to nearest even, overflow to infinity, subnormals kept; NaN as the canonical NaN
// (0x7fff). The same results as the GPU's cvt.rn.f16.f32 and the kernels' bf16 rounding.
uint16_t FloatToHalfBits(float value);
uint16_t FloatToBf16Bits(float value);

// Writes img from col (dense [N*OH*OW, KH*KW*C] of `col_bytes`) into `img` (a host image
// of the op's buffer: SpanBytes(op.img) bytes, strides as the buffer's). Bytes of `img`
// that no element occupies are left as they are. InvalidArgument when a size is wrong.
absl::Status Col2imReference(const Col2imOp& op, const uint8_t* col, size_t col_bytes,
                             uint8_t* img, size_t img_bytes);

}  // namespace tiletune

#endif  // COMPILER_OPS_COL2IM_COL2IM_REFERENCE_H_

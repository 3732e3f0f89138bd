// CPU reference for `im2col`: the ground truth every kernel variant is checked against.
//
// Follows the op's definition directly, not any lowering: column-matrix element (m, k),
// m = (n, oh, ow) and k = (kh, kw, c) with c fastest, is the image element at
// (n, oh*SH - PH + kh*DH, ow*SW - PW + kw*DW, c), or zero where that lies in the padding.
// The image is a host copy of the op's buffer from its first element; the column matrix
// is dense and row-major, [M, K].
//
//   std::vector<uint8_t> img(SpanBytes(op.img)), col(Im2colColumnBytes(op));
//   TT_RETURN_IF_ERROR(Im2colReference(op, img.data(), img.size(), col.data(), col.size()));
#ifndef COMPILER_OPS_IM2COL_IM2COL_REFERENCE_H_
#define COMPILER_OPS_IM2COL_IM2COL_REFERENCE_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "compiler/ops/im2col/im2col_op.h"

namespace tiletune {

// Bytes of the dense [M, K] column matrix.
size_t Im2colColumnBytes(const Im2colOp& op);

// InvalidArgument if the op is invalid or an image is smaller than the buffer's span or
// the column matrix.
absl::Status Im2colReference(const Im2colOp& op, const uint8_t* img, size_t img_bytes,
                             uint8_t* col, size_t col_bytes);

}  // namespace tiletune

#endif  // COMPILER_OPS_IM2COL_IM2COL_REFERENCE_H_

// The `col2im` tile operator: im2col's adjoint, PyTorch nn.Fold in NHWC.
//
// col2im(col, img, geometry, hints) reads `col`, a dense row-major column matrix
// [N*OH*OW, KH*KW*C] laid out as im2col writes it (row m = (n, oh, ow), column
// k = (kh, kw, c), c fastest), and writes every element of `img`, an NHWC image:
//
//   img[n, h, w, c] = sum over the taps (kh, kw) with h = oh*SH - PH + kh*DH and
//                     w = ow*SW - PW + kw*DW for some 0 <= oh < OH, 0 <= ow < OW
//                     of col[(n*OH + oh)*OW + ow, (kh*KW + kw)*C + c]
//
// and 0 where no tap reaches (h, w). Entries of `col` whose window position lies in the
// padding are not read.
//
// Determinism. There are no atomics: each image element is computed by one thread, which
// visits its taps in a fixed order, kh ascending and, within a kh, kw ascending, and
// accumulates in f32 from 0.0f (for f16 and bf16 too), rounding once to the image type at
// the end (round to nearest even). A NaN result is written as the canonical NaN of the
// type (f32 0x7fffffff, f16 and bf16 0x7fff). The result is bit-reproducible run to run and
// equal to the CPU reference (col2im_reference.h), which sums in the same order.
//
// Column order. With `order` = ColumnOrder::kChannelRows the column matrix is
// [N, C*KH*KW, OH*OW], PyTorch's F.fold input (im2col_op.h), and each element's taps are
// visited kh descending and, within a kh, kw descending: F.fold's order (its CUDA kernel
// walks window positions oh, ow ascending), so with its f32 accumulation the bits are
// F.fold's too.
//
//   Im2colGeometry g{.n = 64, .h = 56, .w = 56, .c = 64, .kh = 3, .kw = 3, .ph = 1, .pw = 1};
//   Col2imOp op = Col2imOp::Dense(DataType::kF16, g);
//   op.hints.annotations["col_eviction_policy"] = "evict_first";
//   TT_RETURN_IF_ERROR(ValidateCol2imOp(op));
//
// Types: f32, f16, bf16. Hints (compiler/ir/hints.h): coalesced_width (channels per
// vector access), disable_tma, eviction_policy, prefer_instruction (sync; col2im has no
// TMA or cp.async lowering), annotations (which win over the keywords). loop_layout does
// not apply: the kernels' threads walk channels fastest. Two annotation keys are col2im's:
//   col_eviction_policy  L2 priority of the column-matrix loads (default: eviction_policy)
//   img_eviction_policy  L2 priority of the image stores (default: eviction_policy)
#ifndef COMPILER_OPS_COL2IM_COL2IM_OP_H_
#define COMPILER_OPS_COL2IM_COL2IM_OP_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "compiler/ir/buffer.h"
#include "compiler/ir/data_type.h"
#include "compiler/ir/hints.h"
#include "compiler/ir/tile_op.h"
#include "compiler/ops/im2col/im2col_op.h"

namespace tiletune {

// What col2im accepts beyond the common hints: the column matrix's and the image's own L2
// policies (col_eviction_policy, img_eviction_policy), and for F.fold's layout
// planes_gather=element|patches: each pixel gathered from the column matrix (the planes
// form), or, where the windows tile the image exactly, the patches form (col2im_lowering.h).
HintScope Col2imHintScope();
inline constexpr char kCol2imPlanesGatherKey[] = "planes_gather";

struct Col2imOp final : TileOp {
  // "col2im".
  static const std::string& Name();
  // An op writing a dense NHWC global image named "img" of the geometry's shape.
  static Col2imOp Dense(DataType dtype, const Im2colGeometry& geometry);

  const std::string& op_name() const override { return Name(); }
  DataType dtype() const override { return img.dtype; }
  std::unique_ptr<TileOp> Clone() const override { return std::make_unique<Col2imOp>(*this); }

  // The image written: global scope, rank 4, shape {n, h, w, c} (NHWC), strides that do
  // not make two elements share an address (an NCHW tensor: strides {C*H*W, W, 1, H*W}).
  Buffer img;
  Im2colGeometry geometry;
  // The column matrix's order (and so the taps' order, above).
  ColumnOrder order = ColumnOrder::kPixelRows;
};

// The geometry is valid (ValidateConvGeometry), the dtype is f32, f16 or bf16, the image
// is a valid global rank-4 buffer of shape {n, h, w, c} whose elements do not overlap, and
// the hints resolve. InvalidArgument names the bad value and what is accepted.
absl::Status ValidateCol2imOp(const Col2imOp& op);

// Bytes of the dense column matrix col2im reads.
int64_t Col2imColumnBytes(const Col2imOp& op);

}  // namespace tiletune

#endif  // COMPILER_OPS_COL2IM_COL2IM_OP_H_

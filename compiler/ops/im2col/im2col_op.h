// The `im2col` tile operator: its geometry and its lowering hints.
//
// im2col(img, col, nhw_step, c_step, kernel, stride, dilation, pad, eviction_policy,
//        annotations) reads `img`, an NHWC image, as the implicit column matrix
// [N*OH*OW, KH*KW*C]: row m = (n, oh, ow) in row-major order, column k = (kh, kw, c) with c
// fastest; element (m, k) is img[n, oh*SH - PH + kh*DH, ow*SW - PW + kw*DW, c], or zero
// where that position lies in the padding. A tile op moves one [block_M, block_K] tile of
// that matrix at tile coordinates (nhw_step, c_step); the complete kernel tiles the whole
// matrix over CTAs and writes it, dense and row-major, to a separate `col` buffer.
// Kernel, stride, dilation and pad are given per axis (h, w).
//
//   Im2colGeometry g{.n = 64, .h = 56, .w = 56, .c = 64, .kh = 3, .kw = 3, .ph = 1, .pw = 1};
//   Im2colOp op = Im2colOp::Dense(DataType::kF16, g);
//   op.hints.annotations["img_eviction_policy"] = "evict_last";
//   op.hints.annotations["col_eviction_policy"] = "evict_first";
//   TT_RETURN_IF_ERROR(ValidateIm2colOp(op));
//
// Hints (compiler/ir/hints.h): coalesced_width, disable_tma (no TMA path, and the staged
// SIMT form fills its input boxes by loads instead of bulk copies), eviction_policy,
// prefer_instruction (tma or sync; im2col has no cp.async lowering), loop_layout and
// annotations (which win over the keywords). Two annotation keys are im2col's own:
//   img_eviction_policy  L2 priority of the image loads (default: eviction_policy)
//   col_eviction_policy  L2 priority of the column stores (default: eviction_policy)
#ifndef COMPILER_OPS_IM2COL_IM2COL_OP_H_
#define COMPILER_OPS_IM2COL_IM2COL_OP_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/ir/buffer.h"
#include "compiler/ir/data_type.h"
#include "compiler/ir/hints.h"
#include "compiler/ir/tile_op.h"

namespace tiletune {

struct Im2colGeometry {
  // Image: batch, height, width, channels.
  int64_t n = 1, h = 1, w = 1, c = 1;
  // Kernel (filter) size.
  int64_t kh = 1, kw = 1;
  // Stride of the sliding window.
  int64_t sh = 1, sw = 1;
  // Distance between neighbouring kernel taps.
  int64_t dh = 1, dw = 1;
  // Zero padding, applied on both sides of each axis.
  int64_t ph = 0, pw = 0;

  // (KH-1)*DH + 1: the height the kernel window spans.
  int64_t EffectiveKh() const { return (kh - 1) * dh + 1; }
  int64_t EffectiveKw() const { return (kw - 1) * dw + 1; }
  // (H + 2*PH - (KH-1)*DH - 1) / SH + 1; 0 when the window does not fit.
  int64_t OH() const;
  int64_t OW() const;
  // Rows of the column matrix: N*OH*OW.
  int64_t M() const { return n * OH() * OW(); }
  // Columns of the column matrix: KH*KW*C.
  int64_t K() const { return kh * kw * c; }

  bool operator==(const Im2colGeometry& o) const {
    return n == o.n && h == o.h && w == o.w && c == o.c && kh == o.kh && kw == o.kw &&
           sh == o.sh && sw == o.sw && dh == o.dh && dw == o.dw && ph == o.ph && pw == o.pw;
  }
};

// The order of the column matrix's elements.
enum class ColumnOrder {
  // [N*OH*OW, KH*KW*C]: row (n, oh, ow), column (kh, kw, c) with c fastest. The default.
  kPixelRows,
  // [N, C*KH*KW, OH*OW], PyTorch's F.unfold layout: for image n, row (c, kh, kw) with kw
  // fastest, column (oh, ow) with ow fastest. Element (n, r, l) is the same image element
  // as element (n*OH*OW + l, (kh*KW + kw)*C + c) of kPixelRows.
  kChannelRows,
};
// "pixel_rows", "channel_rows".
std::string ColumnOrderName(ColumnOrder order);

// Largest kernel size, stride, dilation or pad accepted.
inline constexpr int64_t kMaxIm2colWindowParam = 65535;
// Largest image or column matrix, in elements.
inline constexpr int64_t kMaxIm2colElements = int64_t{1} << 40;

// Positive sizes, kernels, strides and dilations; non-negative pads smaller than the
// effective kernel; OH, OW >= 1; image and column matrix within kMaxIm2colElements.
// InvalidArgument names `op` ("im2col", "col2im": operators over this geometry), the bad
// value and what is accepted.
absl::Status ValidateConvGeometry(const Im2colGeometry& geometry, absl::string_view op);
absl::Status ValidateIm2colGeometry(const Im2colGeometry& geometry);

// "n64 h56 w56 c64 kernel 3x3 stride 1x1 dilation 1x1 pad 1x1 -> [200704, 576]".
std::string Im2colGeometryToString(const Im2colGeometry& geometry);

// What im2col accepts beyond the common hints: the image's and the column matrix's own
// L2 policies (img_eviction_policy, col_eviction_policy), and two choices of the staged
// form (im2col_lowering.h): img_prefetch=ahead|all, how a bulk-filled kernel brings the
// image into L2, and staged_gather=table|phase|row_phase, how its threads find their
// elements (row_phase: the table at each output row's own phase); and
// the planes form's planes_gather=element|span|shared|shared_runs|patches, how a thread
// reads its vector's elements (patches: windows tiling the image exactly, staged in shared
// memory), and the row form's row_vector=channels|window_row, whether its vectors lie along
// C or along a kernel row's KW*C elements (im2col_lowering.h).
HintScope Im2colHintScope();
inline constexpr char kImgPrefetchKey[] = "img_prefetch";
inline constexpr char kStagedGatherKey[] = "staged_gather";
inline constexpr char kPlanesGatherKey[] = "planes_gather";
inline constexpr char kRowVectorKey[] = "row_vector";

struct Im2colOp final : TileOp {
  // "im2col".
  static const std::string& Name();
  // An op over a dense NHWC global image named "img" of the geometry's shape.
  static Im2colOp Dense(DataType dtype, const Im2colGeometry& geometry);

  const std::string& op_name() const override { return Name(); }
  DataType dtype() const override { return img.dtype; }
  std::unique_ptr<TileOp> Clone() const override { return std::make_unique<Im2colOp>(*this); }

  // The image: global scope, rank 4, shape {n, h, w, c} (NHWC); any strides (an NCHW
  // tensor is this shape with strides {C*H*W, W, 1, H*W}).
  Buffer img;
  Im2colGeometry geometry;
  // The column matrix's order: kChannelRows writes F.unfold's layout (the planes form of
  // the SIMT path, im2col_lowering.h).
  ColumnOrder order = ColumnOrder::kPixelRows;
};

// The geometry is valid, the image buffer is a valid global rank-4 buffer of shape
// {n, h, w, c}, and the hints resolve.
absl::Status ValidateIm2colOp(const Im2colOp& op);

}  // namespace tiletune

#endif  // COMPILER_OPS_IM2COL_IM2COL_OP_H_

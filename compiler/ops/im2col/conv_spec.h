// Text and database forms of a convolution geometry (Im2colGeometry), shared by the
// operators over it (im2col, col2im): the spec options, the command-line flags and the
// geometry fields of their Problem messages.
//
//   TT_ASSIGN_OR_RETURN(ConvSpec spec, ParseConvSpec("col2im", {"64,56,56,64", "k=3", "p=1"}));
#ifndef COMPILER_OPS_IM2COL_CONV_SPEC_H_
#define COMPILER_OPS_IM2COL_CONV_SPEC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "compiler/ir/buffer.h"
#include "compiler/ir/hints.h"
#include "compiler/lower/lowered_kernel.h"
#include "compiler/ops/im2col/im2col_op.h"
#include "compiler/ops/tile_op_definition.h"

namespace tiletune {

// The two layouts a spec names: NHWC (a dense NHWC image, ColumnOrder::kPixelRows) and
// NCHW (a dense NCHW image, ColumnOrder::kChannelRows: PyTorch's unfold and fold).
enum class ConvLayout { kNhwc, kNchw };

// The element strides of a dense NCHW image of `g`'s extents, in NHWC order:
// {C*H*W, W, 1, H*W}.
std::vector<int64_t> NchwStrides(const Im2colGeometry& g);

// Why the windows of `g` do not tile a dense NCHW image of `img_strides` exactly (kernel =
// stride, no dilation or padding, H and W whole windows: each pixel in one window, as a
// ViT's patches are), or "" where they do: the patches forms of unfold and fold.
std::string ExactPatchesBlocker(const Im2colGeometry& g, const std::vector<int64_t>& img_strides);

// The patches forms' searched tiles, {kernel rows, window rows}: 1, 2, 4 and 8 kernel rows
// (up to KH) over every window row, or over bands of them where those would stage more
// than kPatchesStageBytes, fewer window rows per tile while the grid would hold under 256
// tiles.
inline constexpr int64_t kPatchesStageBytes = 48 << 10;
std::vector<std::pair<int64_t, int64_t>> PatchesTiles(const Im2colGeometry& g,
                                                      int64_t element_bytes);

// The image buffer of `layout`: extents {n, h, w, c}, dense NHWC strides or dense NCHW
// ones {C*H*W, W, 1, H*W}.
Buffer ConvImage(const std::string& name, DataType dtype, const Im2colGeometry& g,
                 ConvLayout layout);
ColumnOrder ConvColumnOrder(ConvLayout layout);
// The layout that `img` and `order` are, if they are one.
std::optional<ConvLayout> ConvLayoutOf(const Buffer& img, ColumnOrder order);

// "N,H,W,C[:k=KH[xKW]][:s=SH[xSW]][:d=DH[xDW]][:p=PH[xPW]][:layout=nhwc|nchw]".
std::string ConvSpecSyntax();

// The image extents and window options of a spec, split at ':' (`parts[0]` is "N,H,W,C",
// whatever the layout). Stride and dilation default to 1, pad to 0, layout to nhwc; each
// option once. InvalidArgument naming the bad part; the geometry is validated for `op`.
struct ConvSpec {
  Im2colGeometry geometry;
  ConvLayout layout = ConvLayout::kNhwc;
};
absl::StatusOr<ConvSpec> ParseConvSpec(absl::string_view op,
                                       absl::Span<const absl::string_view> parts);

// The spec ParseConvSpec reads back as `g` over `img` with columns in `order`:
// "f16:32,224,224,3:k=7:s=2:p=3" (an option at its default is left out; a pair of unequal
// values is written HxW). Unimplemented for an image and order that are not one of the
// layouts.
absl::StatusOr<std::string> FormatConvSpec(const Im2colGeometry& g, const Buffer& img,
                                           ColumnOrder order);

// --shape, --kernel, --stride, --dilation, --pad, --layout.
std::vector<OpFlag> ConvFlags();
// The geometry and layout the flags describe (--shape and --kernel required), validated
// for `op`.
absl::StatusOr<ConvSpec> ConvSpecFromFlags(absl::string_view op, const FlagValues& flags);

// The twelve geometry fields of an Im2colProblem or a Col2imProblem (same names).
template <typename ProblemMessage>
void ConvGeometryToProblem(const Im2colGeometry& g, ProblemMessage* p) {
  p->set_n(g.n);
  p->set_h(g.h);
  p->set_w(g.w);
  p->set_c(g.c);
  p->set_kh(g.kh);
  p->set_kw(g.kw);
  p->set_sh(g.sh);
  p->set_sw(g.sw);
  p->set_dh(g.dh);
  p->set_dw(g.dw);
  p->set_ph(g.ph);
  p->set_pw(g.pw);
}

// A Problem message's col_order as a ColumnOrder; InvalidArgument for a value this
// reader does not know.
absl::StatusOr<ColumnOrder> ColumnOrderFromProblem(int value);
int ColumnOrderToProblem(ColumnOrder order);

template <typename ProblemMessage>
Im2colGeometry ConvGeometryFromProblem(const ProblemMessage& p) {
  Im2colGeometry g;
  g.n = p.n();
  g.h = p.h();
  g.w = p.w();
  g.c = p.c();
  g.kh = p.kh();
  g.kw = p.kw();
  g.sh = p.sh();
  g.sw = p.sw();
  g.dh = p.dh();
  g.dw = p.dw();
  g.ph = p.ph();
  g.pw = p.pw();
  return g;
}

// Feature vector for transfer between problems over this geometry: sizes in log space,
// the kernel area, stride and dilation classes, the alignment of a pixel's C elements, the
// column matrix's M and K, and whether it is launch-bound; scaled by how much each decides
// the fastest variant.
// Columns in channel_rows order are a feature far from every pixel_rows problem; among
// them, windows tiling the image exactly (ConvTransferFamily) another.
std::vector<double> ConvTransferFeatures(const Im2colGeometry& g, int element_bytes,
                                         bool channel_rows);
// "patches" where channel_rows columns' windows tile the image exactly (kernel = stride, no
// dilation or padding: the geometry the patches forms need), else "": the operators'
// TransferFamily.
std::string ConvTransferFamily(const Im2colGeometry& g, bool channel_rows);
// The widest vector along C (bytes, up to 16): the alignment of a pixel's C elements.
int ConvPixelAlignment(const Im2colGeometry& g, int element_bytes);
// The channel_rows ("planes") forms' fitting of a tuned tile [rows, run] to another
// problem: a tile whose run covered the record's whole `their_run` (each tile one
// contiguous run of whole rows) covers `our_run` whole, with as many rows as tuned, fewer
// when that would pass `max_growth` times the tuned elements (rounded to the nearest row,
// at least one). Any other tile as tuned.
LaunchParams FitWholeRunTile(const LaunchParams& tuned, int64_t their_run, int64_t our_run,
                             int64_t max_growth);

// The tiles of a patches form (a geometry ExactPatchesBlocker accepts) for
// LaunchParams::tile = {kernel rows, window rows}, clipped to KH and OH: each tile is
// `rows` kernel rows x `oh` window rows of one plane. Its column-matrix side is one span of
// rows * KW whole matrix rows where it takes every window row (`whole`), else a run of
// oh * OW elements from each of them, aligned to `matrix_align_bytes` (up to 16) either way;
// its image side is rows * oh whole image rows. Both forms stage the matrix side
// (`stage_bytes`, rounded up to 16 B).
struct PatchesPlan {
  int64_t rows = 0, oh = 0;
  int64_t row_tiles = 0, oh_tiles = 0;  // per plane
  int64_t tiles = 0;                    // N * C planes x row_tiles x oh_tiles
  bool whole = false;
  int64_t matrix_align_bytes = 1;
  int64_t stage_bytes = 0;
};
// Fails where OH * OW or the grid reach 2^31.
absl::StatusOr<PatchesPlan> PlanPatches(const Im2colGeometry& g, absl::Span<const int64_t> tile,
                                        int64_t element_bytes);

// The patches forms' fitting of a tuned tile [kernel rows, window rows] from the record's
// geometry `theirs` to `ours`: the kernel rows as tuned (the lowerings clip them to KH); a
// tile that took every window row of its plane takes every one here too (one span of the
// matrix); and no tile stages more than the search's 48 KB (PatchesTiles), or the tuned
// tile's bytes where those were more: fewer window rows where it would (at least one), so
// a band that fit its own image's shared memory does not outgrow it on a larger image.
LaunchParams FitPatchesTile(const LaunchParams& tuned, const Im2colGeometry& theirs,
                            const Im2colGeometry& ours, int64_t element_bytes);

// "<op> f16 N64 C64 56x56 k3x3 s1x1 d1x1 p1x1", then " NCHW" for the NCHW layout, or
// " img strides [...]" for another image that is not dense, and " channel_rows" for
// columns in that order.
std::string DescribeConvOp(const std::string& op, const Im2colGeometry& g, const Buffer& img,
                           ColumnOrder order);

// The key of an operator over `img` and `g` with `hints` (TileOpDefinition::AppendKey).
void AppendConvKey(const std::string& op, const Im2colGeometry& g, const Buffer& img,
                   ColumnOrder order, const Hints& hints, std::string& key);

// A problem's img_strides onto `img`: four values (N, H, W, C) replace its strides, none
// keeps the dense ones; InvalidArgument for any other count.
template <typename Repeated>
absl::Status ApplyImgStrides(const Repeated& strides, Buffer& img) {
  if (strides.size() == 4) {
    img.strides.assign(strides.begin(), strides.end());
    return absl::OkStatus();
  }
  if (strides.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError("img_strides has " + std::to_string(strides.size()) +
                                    " values; give 4 (N, H, W, C) or none");
}

}  // namespace tiletune

#endif  // COMPILER_OPS_IM2COL_CONV_SPEC_H_

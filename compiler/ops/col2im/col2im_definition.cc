#include "compiler/ops/col2im/col2im_definition.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "compiler/base/status_macros.h"
#include "compiler/ir/buffer.h"
#include "compiler/ops/col2im/col2im_emitter.h"
#include "compiler/ops/col2im/col2im_lowering.h"
#include "compiler/ops/col2im/col2im_op.h"
#include "compiler/ops/col2im/col2im_reference.h"
#include "compiler/ops/col2im/col2im_search_space.h"
#include "compiler/ops/im2col/conv_spec.h"
#include "compiler/ops/op_util.h"
#include "compiler/tuning_db/tuning_db.h"

namespace tiletune {
namespace {

const LoweredCol2im& AsCol2im(const LoweredTileKernel& lowered) {
  return LoweredRef<LoweredCol2im>(lowered, Col2imOp::Name());
}

absl::StatusOr<std::unique_ptr<TileOp>> DenseOp(DataType dtype, const ConvSpec& spec,
                                                Hints hints) {
  auto op = std::make_unique<Col2imOp>(Col2imOp::Dense(dtype, spec.geometry));
  op->img = ConvImage("img", dtype, spec.geometry, spec.layout);
  op->order = ConvColumnOrder(spec.layout);
  op->hints = std::move(hints);
  TT_RETURN_IF_ERROR(ValidateCol2imOp(*op));
  return op;
}

// The direct and staged forms' tile [rows, pixels] of an NHWC image: each CTA sums the
// tile's pixels x all C channels, in vectors along C. Tuned on one channel count, on
// another:
// - where half its threads or more would have no vector (fewer C channels), the pixels
//   grow until each has one, along W first (a tile row is one contiguous run of pixels x
//   C), past the image width into whole rows: a record tuned at C64 left 3 of 4 threads
//   idle on C16 (bench/results/heldout_fresh6_miss.md: 52.4 us against 28.1 with 4x the
//   pixels), where tiles leaving fewer idle time within a few percent of grown ones;
// - where C is 4x or more the record's, it keeps the record's pixels x C (the nearest
//   power of two of its pixels), rows halved first; within 4x, the tuned tile stays (the
//   miss tables time such tiles within a few percent, the tuned ones ahead).
LaunchParams FitPixelTile(const LaunchParams& tuned, const Im2colGeometry& theirs,
                          const Im2colGeometry& ours, int element_bytes) {
  if (tuned.tile.size() != 2 || tuned.tile[0] < 1 || tuned.tile[1] < 1 || tuned.threads < 1 ||
      theirs.c < 1 || ours.c < 1 || theirs.h < 1 || theirs.w < 1 || ours.h < 1 || ours.w < 1 ||
      theirs.c == ours.c || element_bytes < 1) {
    return tuned;
  }
  int64_t rows = std::min(tuned.tile[0], theirs.h), pixels = std::min(tuned.tile[1], theirs.w);
  const int shift = static_cast<int>(std::lround(std::log2(static_cast<double>(theirs.c) /
                                                           static_cast<double>(ours.c))));
  const bool shrink = ours.c >= 4 * theirs.c;
  for (int step = 0; shrink && step < -shift && rows * pixels > 1; ++step) {
    if (rows > 1) {
      rows = (rows + 1) / 2;
    } else {
      pixels = (pixels + 1) / 2;
    }
  }
  const int64_t vector_elems = ConvPixelAlignment(ours, element_bytes) / element_bytes;
  const bool idle = 2 * rows * pixels * ours.c <= tuned.threads * vector_elems;
  while (idle && rows * pixels * ours.c < tuned.threads * vector_elems &&
         (pixels < ours.w || rows < ours.h)) {
    if (pixels < ours.w) {
      pixels = std::min(pixels * 2, ours.w);
    } else {
      rows = std::min(rows * 2, ours.h);
    }
  }
  if (rows == std::min(tuned.tile[0], theirs.h) && pixels == std::min(tuned.tile[1], theirs.w)) {
    return tuned;
  }
  LaunchParams fitted = tuned;
  fitted.tile = {rows, pixels};
  return fitted;
}

}  // namespace

const std::string& Col2imDefinition::name() const { return Col2imOp::Name(); }

std::vector<std::string> Col2imDefinition::operand_names() const { return {"col", "img"}; }

HintScope Col2imDefinition::hint_scope() const { return Col2imHintScope(); }

absl::Status Col2imDefinition::Validate(const TileOp& op) const {
  TT_ASSIGN_OR_RETURN(const Col2imOp* col2im, OpAs<Col2imOp>(op));
  return ValidateCol2imOp(*col2im);
}

std::string Col2imDefinition::Describe(const TileOp& op) const {
  const Col2imOp& col2im = OpRef<Col2imOp>(op);
  return DescribeConvOp(name(), col2im.geometry, col2im.img, col2im.order);
}

void Col2imDefinition::AppendKey(const TileOp& op, std::string& key) const {
  const Col2imOp& col2im = OpRef<Col2imOp>(op);
  AppendConvKey(name(), col2im.geometry, col2im.img, col2im.order, col2im.hints, key);
}

absl::StatusOr<tuning::Problem> Col2imDefinition::ToProblem(const TileOp& op) const {
  TT_ASSIGN_OR_RETURN(const Col2imOp* col2im, OpAs<Col2imOp>(op));
  tuning::Problem problem;
  problem.set_dtype(DataTypeName(col2im->img.dtype));
  tuning::Col2imProblem* p = problem.mutable_col2im();
  ConvGeometryToProblem(col2im->geometry, p);
  for (int64_t s : col2im->img.strides) p->add_img_strides(s);
  p->set_col_order(static_cast<tuning::ColumnOrder>(ColumnOrderToProblem(col2im->order)));
  return problem;
}

absl::StatusOr<std::unique_ptr<TileOp>> Col2imDefinition::FromProblem(
    const tuning::Problem& problem) const {
  if (!problem.has_col2im()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "problem of operator '", tuning::OperatorName(problem), "' is not a col2im"));
  }
  TT_ASSIGN_OR_RETURN(DataType dtype, ParseDataType(problem.dtype()));
  const tuning::Col2imProblem& p = problem.col2im();
  const Im2colGeometry g = ConvGeometryFromProblem(p);
  TT_RETURN_IF_ERROR(ValidateConvGeometry(g, name()));
  auto op = std::make_unique<Col2imOp>(Col2imOp::Dense(dtype, g));
  TT_RETURN_IF_ERROR(ApplyImgStrides(p.img_strides(), op->img));
  TT_ASSIGN_OR_RETURN(op->order, ColumnOrderFromProblem(p.col_order()));
  TT_RETURN_IF_ERROR(ValidateCol2imOp(*op));
  return op;
}

absl::Status Col2imDefinition::CheckLowering(const tuning::Lowering& lowering) const {
  return CheckPathNames(lowering, name(),
                        {{Col2imPathName(Col2imPath::kSimtDirect),
                          {Col2imFormName(Col2imPath::kSimtDirect),
                           Col2imFormName(Col2imPath::kSimtStaged),
                           Col2imFormName(Col2imPath::kSimtPlanes),
                           Col2imFormName(Col2imPath::kSimtPlanesStaged),
                           Col2imFormName(Col2imPath::kSimtPatches)}},
                         {Col2imPathName(Col2imPath::kCpAsyncSwept),
                          {Col2imFormName(Col2imPath::kCpAsyncSwept)}},
                         {Col2imPathName(Col2imPath::kTmaSwept),
                          {Col2imFormName(Col2imPath::kTmaSwept)}}});
}

int Col2imDefinition::WidestVectorBytes(const TileOp& op) const {
  const auto& conv = OpRef<Col2imOp>(op);
  if (conv.order == ColumnOrder::kChannelRows) {
    // Along W: what the image width allows.
    int align = 16;
    while (align > 1 && conv.geometry.w * DataTypeBytes(conv.img.dtype) % align != 0) align /= 2;
    return align;
  }
  return ConvPixelAlignment(conv.geometry, DataTypeBytes(conv.img.dtype));
}

LaunchParams Col2imDefinition::AdaptLaunch(const TileOp& op, const tuning::Problem& from,
                                           const LaunchParams& tuned,
                                           absl::string_view tuned_form) const {
  if (tuned.tile.size() != 2 || !from.has_col2im() || op.op_name() != name()) return tuned;
  const auto& conv = static_cast<const Col2imOp&>(op);
  if (tuned_form == Col2imFormName(Col2imPath::kSimtPatches)) {
    return FitPatchesTile(tuned, ConvGeometryFromProblem(from.col2im()), conv.geometry,
                          DataTypeBytes(op.dtype()));
  }
  if (conv.order != ColumnOrder::kChannelRows) {
    if (tuned_form == Col2imFormName(Col2imPath::kSimtDirect) ||
        tuned_form == Col2imFormName(Col2imPath::kSimtStaged)) {
      return FitPixelTile(tuned, ConvGeometryFromProblem(from.col2im()), conv.geometry,
                          DataTypeBytes(op.dtype()));
    }
    return tuned;
  }
  // The planes form's tile is [image rows, W]: as wide as the image, each tile is one run
  // of the dense image; narrower, a 2-D block of each plane, kept as tuned.
  // A run of whole rows keeps the tuned tile's pixels, so each thread sums as many as
  // tuned: a wider image takes fewer rows per tile, a narrower one as many as tuned. (The
  // rows of a tuned whole-row tile follow the width inversely; its pixels vary far less.)
  return FitWholeRunTile(tuned, from.col2im().w(), conv.geometry.w, /*max_growth=*/1);
}

std::string Col2imDefinition::TransferFamily(const tuning::Problem& problem) const {
  return ConvTransferFamily(ConvGeometryFromProblem(problem.col2im()),
                            problem.col2im().col_order() == tuning::COLUMN_ORDER_CHANNEL_ROWS);
}

std::vector<double> Col2imDefinition::TransferFeatures(const tuning::Problem& problem) const {
  absl::StatusOr<DataType> dtype = ParseDataType(problem.dtype());
  return ConvTransferFeatures(ConvGeometryFromProblem(problem.col2im()),
                              dtype.ok() ? DataTypeBytes(*dtype) : 2,
                              problem.col2im().col_order() == tuning::COLUMN_ORDER_CHANNEL_ROWS);
}

std::string Col2imDefinition::SpecSyntax() const { return "DTYPE:" + ConvSpecSyntax(); }

absl::StatusOr<std::unique_ptr<TileOp>> Col2imDefinition::ParseSpec(
    absl::string_view spec) const {
  std::vector<absl::string_view> parts = absl::StrSplit(spec, ':');
  if (parts.size() < 2) return absl::InvalidArgumentError("give a dtype and the image N,H,W,C");
  TT_ASSIGN_OR_RETURN(DataType dtype, ParseDataType(parts[0]));
  TT_ASSIGN_OR_RETURN(ConvSpec conv, ParseConvSpec(name(), absl::MakeConstSpan(parts).subspan(1)));
  return DenseOp(dtype, conv, Hints{});
}

absl::StatusOr<std::string> Col2imDefinition::FormatSpec(const TileOp& op) const {
  TT_ASSIGN_OR_RETURN(const Col2imOp* conv, OpAs<Col2imOp>(op));
  return FormatConvSpec(conv->geometry, conv->img, conv->order);
}

std::vector<OpFlag> Col2imDefinition::flags() const {
  std::vector<OpFlag> flags = ConvFlags();
  flags.push_back({"through_shared",
                   "true|false: through shared memory (default true; the swept form with "
                   "--stages >= 2, else the staged one) or the direct form",
                   /*boolean=*/true});
  return flags;
}

absl::StatusOr<std::unique_ptr<TileOp>> Col2imDefinition::FromFlags(const FlagValues& flags,
                                                                   DataType dtype,
                                                                   Hints hints) const {
  TT_ASSIGN_OR_RETURN(ConvSpec conv, ConvSpecFromFlags(name(), flags));
  return DenseOp(dtype, conv, std::move(hints));
}

absl::StatusOr<std::shared_ptr<const LoweredTileKernel>> Col2imDefinition::Lower(
    const TileOp& op, const Target& target, const LaunchParams& launch) const {
  TT_ASSIGN_OR_RETURN(const Col2imOp* col2im, OpAs<Col2imOp>(op));
  TT_ASSIGN_OR_RETURN(LoweredCol2im lowered, LowerCol2im(*col2im, target, launch));
  // The whole buffers: what the launch checks for overlap.
  const OperandSizes sizes = Sizes(op);
  lowered.input_span_bytes = static_cast<int64_t>(sizes.input_bytes);
  lowered.output_span_bytes = static_cast<int64_t>(sizes.output_bytes);
  return std::make_shared<const LoweredCol2im>(std::move(lowered));
}

CudaSource Col2imDefinition::Emit(const LoweredTileKernel& lowered) const {
  return EmitCol2imKernel(AsCol2im(lowered));
}

std::string Col2imDefinition::DescribePlan(const LoweredTileKernel& lowered) const {
  return DescribeCol2imPlan(AsCol2im(lowered));
}

OperandSizes Col2imDefinition::Sizes(const TileOp& op) const {
  const Col2imOp& col2im = OpRef<Col2imOp>(op);
  const Im2colGeometry& g = col2im.geometry;
  OperandSizes sizes;
  sizes.input_bytes = static_cast<size_t>(Col2imColumnBytes(col2im));
  sizes.output_bytes = SpanBytes(col2im.img);
  sizes.bytes_moved = static_cast<int64_t>(sizes.input_bytes) +
                      g.n * g.h * g.w * g.c * DataTypeBytes(col2im.img.dtype);
  return sizes;
}

absl::Status Col2imDefinition::Reference(const TileOp& op, absl::Span<const uint8_t> input,
                                         absl::Span<uint8_t> output) const {
  TT_ASSIGN_OR_RETURN(const Col2imOp* col2im, OpAs<Col2imOp>(op));
  return Col2imReference(*col2im, input.data(), input.size(), output.data(), output.size());
}

std::string Col2imDefinition::DescribeOutputElement(const TileOp& op, int64_t element) const {
  // `element` counts elements of the image buffer's span; name its NHWC index when it is
  // one of the image's (strided images have gaps).
  const Col2imOp& col2im = OpRef<Col2imOp>(op);
  const std::vector<int64_t>& s = col2im.img.strides;
  const std::vector<int64_t>& shape = col2im.img.shape;
  std::vector<int> order = {0, 1, 2, 3};
  std::sort(order.begin(), order.end(), [&](int a, int b) { return s[a] > s[b]; });
  int64_t rest = element;
  int64_t index[4] = {0, 0, 0, 0};
  for (int d : order) {
    index[d] = s[d] > 0 ? rest / s[d] : 0;
    rest -= index[d] * s[d];
  }
  bool inside = rest == 0;
  for (int d = 0; d < 4; ++d) inside = inside && index[d] < shape[d];
  if (!inside) return absl::StrCat("element ", element, " of the image's span, between pixels");
  return absl::StrCat("pixel n=", index[0], ", h=", index[1], ", w=", index[2], ", channel c=",
                      index[3]);
}

SearchSpace Col2imDefinition::Search(const TileOp& op, const Target& target) const {
  return Col2imSearchSpace(OpRef<Col2imOp>(op), target);
}

Trial Col2imDefinition::Heuristic(const TileOp& op, const Target& target) const {
  return Col2imHeuristic(OpRef<Col2imOp>(op), target);
}

}  // namespace tiletune

#include "compiler/ops/im2col/im2col_definition.h"

#include <algorithm>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "compiler/base/status_macros.h"
#include "compiler/ir/buffer.h"
#include "compiler/lower/lowering_rules.h"
#include "compiler/ops/im2col/conv_spec.h"
#include "compiler/ops/im2col/im2col_emitter.h"
#include "compiler/ops/im2col/im2col_lowering.h"
#include "compiler/ops/im2col/im2col_op.h"
#include "compiler/ops/im2col/im2col_reference.h"
#include "compiler/ops/im2col/im2col_search_space.h"
#include "compiler/ops/op_util.h"
#include "compiler/tuning_db/tuning_db.h"

namespace tiletune {
namespace {

const LoweredIm2col& AsIm2col(const LoweredTileKernel& lowered) {
  return LoweredRef<LoweredIm2col>(lowered, Im2colOp::Name());
}

absl::StatusOr<std::unique_ptr<TileOp>> DenseOp(DataType dtype, const ConvSpec& spec,
                                                Hints hints) {
  auto op = std::make_unique<Im2colOp>(Im2colOp::Dense(dtype, spec.geometry));
  op->img = ConvImage("img", dtype, spec.geometry, spec.layout);
  op->order = ConvColumnOrder(spec.layout);
  op->hints = std::move(hints);
  TT_RETURN_IF_ERROR(ValidateIm2colOp(*op));
  return op;
}

}  // namespace

const std::string& Im2colDefinition::name() const { return Im2colOp::Name(); }

std::vector<std::string> Im2colDefinition::operand_names() const { return {"img", "col"}; }

HintScope Im2colDefinition::hint_scope() const { return Im2colHintScope(); }

absl::Status Im2colDefinition::Validate(const TileOp& op) const {
  TT_ASSIGN_OR_RETURN(const Im2colOp* im2col, OpAs<Im2colOp>(op));
  return ValidateIm2colOp(*im2col);
}

std::string Im2colDefinition::Describe(const TileOp& op) const {
  const Im2colOp& im2col = OpRef<Im2colOp>(op);
  return DescribeConvOp(name(), im2col.geometry, im2col.img, im2col.order);
}

void Im2colDefinition::AppendKey(const TileOp& op, std::string& key) const {
  const Im2colOp& im2col = OpRef<Im2colOp>(op);
  AppendConvKey(name(), im2col.geometry, im2col.img, im2col.order, im2col.hints, key);
}

absl::StatusOr<tuning::Problem> Im2colDefinition::ToProblem(const TileOp& op) const {
  TT_ASSIGN_OR_RETURN(const Im2colOp* im2col, OpAs<Im2colOp>(op));
  tuning::Problem problem;
  problem.set_dtype(DataTypeName(im2col->img.dtype));
  const Im2colGeometry& g = im2col->geometry;
  tuning::Im2colProblem* p = problem.mutable_im2col();
  ConvGeometryToProblem(g, p);
  for (int64_t s : im2col->img.strides) p->add_img_strides(s);
  p->set_col_order(static_cast<tuning::ColumnOrder>(ColumnOrderToProblem(im2col->order)));
  return problem;
}

absl::StatusOr<std::unique_ptr<TileOp>> Im2colDefinition::FromProblem(
    const tuning::Problem& problem) const {
  if (!problem.has_im2col()) {
    return absl::InvalidArgumentError(absl::StrCat("problem of operator '",
                                                   tuning::OperatorName(problem),
                                                   "' is not an im2col"));
  }
  TT_ASSIGN_OR_RETURN(DataType dtype, ParseDataType(problem.dtype()));
  const tuning::Im2colProblem& p = problem.im2col();
  const Im2colGeometry g = ConvGeometryFromProblem(p);
  TT_RETURN_IF_ERROR(ValidateIm2colGeometry(g));
  auto op = std::make_unique<Im2colOp>(Im2colOp::Dense(dtype, g));
  TT_RETURN_IF_ERROR(ApplyImgStrides(p.img_strides(), op->img));
  TT_ASSIGN_OR_RETURN(op->order, ColumnOrderFromProblem(p.col_order()));
  TT_RETURN_IF_ERROR(ValidateIm2colOp(*op));
  return op;
}

absl::Status Im2colDefinition::CheckLowering(const tuning::Lowering& lowering) const {
  return CheckPathNames(
      lowering, name(),
      {{Im2colPathName(Im2colPath::kTma), {}},
       {Im2colPathName(Im2colPath::kSimtRow),
        {Im2colFormName(Im2colPath::kSimtRow), Im2colFormName(Im2colPath::kSimtFlat),
         Im2colFormName(Im2colPath::kSimtStaged), Im2colFormName(Im2colPath::kSimtPlanes),
         kPlanesSharedForm, kPlanesPatchesForm}}});
}

int Im2colDefinition::WidestVectorBytes(const TileOp& op) const {
  const auto& conv = OpRef<Im2colOp>(op);
  // The planes form's tiles of whole rows can be sized for 16-byte vectors whatever OH*OW.
  if (conv.order == ColumnOrder::kChannelRows) return 16;
  return ConvPixelAlignment(conv.geometry, DataTypeBytes(conv.img.dtype));
}

std::string Im2colDefinition::TransferFamily(const tuning::Problem& problem) const {
  return ConvTransferFamily(ConvGeometryFromProblem(problem.im2col()),
                            problem.im2col().col_order() == tuning::COLUMN_ORDER_CHANNEL_ROWS);
}

std::vector<double> Im2colDefinition::TransferFeatures(const tuning::Problem& problem) const {
  absl::StatusOr<DataType> dtype = ParseDataType(problem.dtype());
  return ConvTransferFeatures(ConvGeometryFromProblem(problem.im2col()),
                              dtype.ok() ? DataTypeBytes(*dtype) : 2,
                              problem.im2col().col_order() == tuning::COLUMN_ORDER_CHANNEL_ROWS);
}

namespace {

// Image-window elements a shared-gather tile of `planes` planes and `band` output rows
// copies to shared memory.
int64_t SharedWindowElements(const Im2colGeometry& g, int64_t planes, int64_t band) {
  return planes * PlanesWindowRows(g, band) * PlanesWindowCols(g);
}

// The shared gather's tile, tuned as planes x output rows, on another image: as many whole
// planes (of its own KH*KW tap rows) and output rows per band (all of a shorter image's),
// the bands evened out over the image, then fewer planes, then fewer rows, while the
// windows would take more shared memory than the tuned kernel's did (its occupancy): the
// windows of every plane and row a tuned tile reaches, which is what that kernel staged
// (a tile of 20 rows of 9 taps reaches up to 4 planes, where 2 whole planes fit in it).
// Never more planes than the tuned tile's: tuned shared-gather tiles keep few planes up
// to a whole image, and more planes per tile means fewer tiles, under one wave of
// resident CTAs on mid-sized layers. The resolver halves a tile that leaves too few
// (HalveTile).
LaunchParams FitSharedPlanesTile(const LaunchParams& tuned, const Im2colGeometry& theirs,
                                 const Im2colGeometry& ours) {
  const int64_t their_band = tuned.tile[1] >= theirs.OH() * theirs.OW()
                                 ? theirs.OH()
                                 : std::max<int64_t>(1, tuned.tile[1] / theirs.OW());
  int64_t planes = std::max<int64_t>(1, tuned.tile[0] / (theirs.kh * theirs.kw));
  const SharedGatherReach staged = SharedGatherReachOf(theirs, tuned.tile[0], tuned.tile[1]);
  const int64_t budget = SharedWindowElements(theirs, staged.planes, staged.band);
  // Bands of at most the tuned rows, as even as their count allows; more bands (so fewer
  // rows each: one more band always helps or keeps the rows) while over the budget.
  int64_t bands = CeilDiv(ours.OH(), std::min(their_band, ours.OH()));
  int64_t band = CeilDiv(ours.OH(), bands);
  while (planes > 1 && SharedWindowElements(ours, planes, band) > budget) --planes;
  while (band > 1 && SharedWindowElements(ours, planes, band) > budget) {
    band = CeilDiv(ours.OH(), ++bands);
  }
  LaunchParams adapted = tuned;
  adapted.tile[0] = planes * ours.kh * ours.kw;
  adapted.tile[1] = band >= ours.OH() ? ours.OH() * ours.OW() : band * ours.OW();
  return adapted;
}

}  // namespace

bool Im2colDefinition::HalveTile(const TileOp& op, absl::string_view tuned_form,
                                 std::vector<int64_t>& tile) const {
  const Im2colOp& conv = OpRef<Im2colOp>(op);
  const Im2colGeometry& g = conv.geometry;
  const int64_t taps = g.kh * g.kw;
  if (conv.order != ColumnOrder::kChannelRows || tuned_form != kPlanesSharedForm ||
      tile.size() != 2 || taps <= 0 || tile[0] % taps != 0 || g.OW() <= 0) {
    return HalveOutermostTile(tile);
  }
  if (tile[0] > taps) {
    tile[0] = PowerOfTwoBelow(tile[0] / taps) * taps;
    return true;
  }
  if (tile[1] > g.OW() && tile[1] % g.OW() == 0) {
    const int64_t bands = CeilDiv(g.OH(), tile[1] / g.OW());
    tile[1] = CeilDiv(g.OH(), 2 * bands) * g.OW();
    return true;
  }
  if (tile[1] <= 1) return false;
  tile[1] = PowerOfTwoBelow(tile[1]);
  return true;
}

LaunchParams Im2colDefinition::AdaptLaunch(const TileOp& op, const tuning::Problem& from,
                                           const LaunchParams& tuned,
                                           absl::string_view tuned_form) const {
  if (tuned.tile.size() != 2 || !from.has_im2col() || op.op_name() != name()) return tuned;
  const Im2colGeometry theirs = ConvGeometryFromProblem(from.im2col());
  const Im2colGeometry& ours = static_cast<const Im2colOp&>(op).geometry;
  if (static_cast<const Im2colOp&>(op).order == ColumnOrder::kChannelRows) {
    if (tuned_form == kPlanesPatchesForm) {
      return FitPatchesTile(tuned, theirs, ours, DataTypeBytes(op.dtype()));
    }
    if (tuned_form == kPlanesSharedForm && theirs.OW() > 0 && ours.OW() > 0) {
      return FitSharedPlanesTile(tuned, theirs, ours);
    }
    // The planes form's tile is [matrix rows, OH*OW columns]; a band of columns is kept as
    // tuned (the lowering clips it). Whole runs grow up to four times the tuned elements.
    return FitWholeRunTile(tuned, theirs.OH() * theirs.OW(), ours.OH() * ours.OW(),
                           /*max_growth=*/4);
  }
  if (theirs.K() <= 0 || tuned.tile[1] != theirs.K()) return tuned;
  LaunchParams adapted = tuned;
  adapted.tile[1] = ours.K();
  const int64_t tuned_elements = tuned.tile[0] * tuned.tile[1];
  const int64_t their_ow = theirs.OW();
  if (their_ow <= 0 || ours.OW() <= 0 || tuned.tile[0] % their_ow != 0) {
    // Whole matrix rows of a longer K: fewer of them, so a tile stays within four times
    // the tuned one's elements (16 rows of K=80 are not 16 rows of K=1536).
    adapted.tile[0] = std::clamp<int64_t>(4 * tuned_elements / ours.K(), 1, tuned.tile[0]);
    return adapted;
  }
  // As many of this problem's output rows as the record's tile had of its own, fewer when
  // that would make a tile over four times the tuned one's elements or leave fewer tiles
  // than the record had (up to 256, two waves of CTAs): the output row of a long 1-D
  // signal is one tile of thousands of pixels. The tuned block_M when even one row would.
  const int64_t their_tiles = (theirs.M() + tuned.tile[0] - 1) / tuned.tile[0];
  const int64_t min_tiles = std::min<int64_t>(their_tiles, 256);
  for (int64_t rows = std::min<int64_t>(tuned.tile[0] / their_ow, 8); rows >= 1; --rows) {
    const int64_t block_m = rows * ours.OW();
    if (block_m * ours.K() <= 4 * tuned_elements &&
        (ours.M() + block_m - 1) / block_m >= min_tiles) {
      adapted.tile[0] = block_m;
      break;
    }
  }
  return adapted;
}

std::string Im2colDefinition::SpecSyntax() const { return "DTYPE:" + ConvSpecSyntax(); }

absl::StatusOr<std::unique_ptr<TileOp>> Im2colDefinition::ParseSpec(
    absl::string_view spec) const {
  std::vector<absl::string_view> parts = absl::StrSplit(spec, ':');
  if (parts.size() < 2) return absl::InvalidArgumentError("give a dtype and the image N,H,W,C");
  TT_ASSIGN_OR_RETURN(DataType dtype, ParseDataType(parts[0]));
  TT_ASSIGN_OR_RETURN(ConvSpec conv, ParseConvSpec(name(), absl::MakeConstSpan(parts).subspan(1)));
  return DenseOp(dtype, conv, Hints{});
}

absl::StatusOr<std::string> Im2colDefinition::FormatSpec(const TileOp& op) const {
  TT_ASSIGN_OR_RETURN(const Im2colOp* conv, OpAs<Im2colOp>(op));
  return FormatConvSpec(conv->geometry, conv->img, conv->order);
}

std::vector<OpFlag> Im2colDefinition::flags() const { return ConvFlags(); }

absl::StatusOr<std::unique_ptr<TileOp>> Im2colDefinition::FromFlags(const FlagValues& flags,
                                                                   DataType dtype,
                                                                   Hints hints) const {
  TT_ASSIGN_OR_RETURN(ConvSpec conv, ConvSpecFromFlags(name(), flags));
  return DenseOp(dtype, conv, std::move(hints));
}

absl::StatusOr<std::shared_ptr<const LoweredTileKernel>> Im2colDefinition::Lower(
    const TileOp& op, const Target& target, const LaunchParams& launch) const {
  TT_ASSIGN_OR_RETURN(const Im2colOp* im2col, OpAs<Im2colOp>(op));
  TT_ASSIGN_OR_RETURN(LoweredIm2col lowered, LowerIm2col(*im2col, target, launch));
  // The whole buffers: what the launch checks for overlap.
  const OperandSizes sizes = Sizes(op);
  lowered.input_span_bytes = static_cast<int64_t>(sizes.input_bytes);
  lowered.output_span_bytes = static_cast<int64_t>(sizes.output_bytes);
  return std::make_shared<const LoweredIm2col>(std::move(lowered));
}

CudaSource Im2colDefinition::Emit(const LoweredTileKernel& lowered) const {
  return EmitIm2colKernel(AsIm2col(lowered));
}

std::string Im2colDefinition::DescribePlan(const LoweredTileKernel& lowered) const {
  return DescribeIm2colPlan(AsIm2col(lowered));
}

OperandSizes Im2colDefinition::Sizes(const TileOp& op) const {
  const Im2colOp& im2col = OpRef<Im2colOp>(op);
  const Im2colGeometry& g = im2col.geometry;
  OperandSizes sizes;
  sizes.input_bytes = SpanBytes(im2col.img);
  sizes.output_bytes = Im2colColumnBytes(im2col);
  sizes.bytes_moved = g.n * g.h * g.w * g.c * DataTypeBytes(im2col.img.dtype) +
                      static_cast<int64_t>(sizes.output_bytes);
  return sizes;
}

absl::Status Im2colDefinition::Reference(const TileOp& op, absl::Span<const uint8_t> input,
                                         absl::Span<uint8_t> output) const {
  TT_ASSIGN_OR_RETURN(const Im2colOp* im2col, OpAs<Im2colOp>(op));
  return Im2colReference(*im2col, input.data(), input.size(), output.data(), output.size());
}

std::string Im2colDefinition::DescribeOutputElement(const TileOp& op, int64_t element) const {
  const Im2colOp& im2col = OpRef<Im2colOp>(op);
  const Im2colGeometry& g = im2col.geometry;
  if (im2col.order == ColumnOrder::kChannelRows) {
    const int64_t l = g.OH() * g.OW(), rows = g.K();
    return absl::StrCat("image n=", element / (rows * l), ", row ", element / l % rows,
                        " (c=", element / l % rows / (g.kh * g.kw), "), column ", element % l);
  }
  const int64_t k = g.K();
  return absl::StrCat("row m=", element / k, ", column k=", element % k);
}

SearchSpace Im2colDefinition::Search(const TileOp& op, const Target& target) const {
  return Im2colSearchSpace(OpRef<Im2colOp>(op), target);
}

Trial Im2colDefinition::Heuristic(const TileOp& op, const Target& target) const {
  return Im2colHeuristic(OpRef<Im2colOp>(op), target);
}

}  // namespace tiletune

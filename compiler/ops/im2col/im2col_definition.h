// The `im2col` operator's definition (compiler/ops/tile_op_definition.h).
//
//   TT_RETURN_IF_ERROR(ops.Register(std::make_shared<Im2colDefinition>()));
#ifndef COMPILER_OPS_IM2COL_IM2COL_DEFINITION_H_
#define COMPILER_OPS_IM2COL_IM2COL_DEFINITION_H_

#include <memory>
#include <string>
#include <vector>

#include "compiler/ops/tile_op_definition.h"

namespace tiletune {

class Im2colDefinition final : public TileOpDefinition {
 public:
  const std::string& name() const override;
  std::vector<std::string> operand_names() const override;
  HintScope hint_scope() const override;
  absl::Status Validate(const TileOp& op) const override;
  std::string Describe(const TileOp& op) const override;
  void AppendKey(const TileOp& op, std::string& key) const override;

  absl::StatusOr<tuning::Problem> ToProblem(const TileOp& op) const override;
  absl::StatusOr<std::unique_ptr<TileOp>> FromProblem(
      const tuning::Problem& problem) const override;
  absl::Status CheckLowering(const tuning::Lowering& lowering) const override;
  std::string TransferFamily(const tuning::Problem& problem) const override;
  std::vector<double> TransferFeatures(const tuning::Problem& problem) const override;
  int WidestVectorBytes(const TileOp& op) const override;

  // "DTYPE:N,H,W,C[:k=KH[xKW]][:s=SH[xSW]][:d=DH[xDW]][:p=PH[xPW]]": the whole column
  // matrix of a dense NHWC image (stride and dilation 1, pad 0 by default).
  std::string SpecSyntax() const override;
  absl::StatusOr<std::unique_ptr<TileOp>> ParseSpec(absl::string_view spec) const override;
  absl::StatusOr<std::string> FormatSpec(const TileOp& op) const override;
  // --shape=N,H,W,C (a dense NHWC image), --kernel, --stride, --dilation, --pad (each one
  // value for both axes or two, h then w).
  std::vector<OpFlag> flags() const override;
  absl::StatusOr<std::unique_ptr<TileOp>> FromFlags(const FlagValues& flags, DataType dtype,
                                                    Hints hints) const override;

  absl::StatusOr<std::shared_ptr<const LoweredTileKernel>> Lower(
      const TileOp& op, const Target& target, const LaunchParams& launch) const override;
  CudaSource Emit(const LoweredTileKernel& lowered) const override;
  std::string DescribePlan(const LoweredTileKernel& lowered) const override;

  OperandSizes Sizes(const TileOp& op) const override;
  absl::Status Reference(const TileOp& op, absl::Span<const uint8_t> input,
                         absl::Span<uint8_t> output) const override;
  std::string DescribeOutputElement(const TileOp& op, int64_t element) const override;

  SearchSpace Search(const TileOp& op, const Target& target) const override;
  Trial Heuristic(const TileOp& op, const Target& target) const override;
  // A tile tuned as whole rows of another problem's column matrix (block_K = its K) takes
  // this problem's whole rows, and then, when its block_M was whole output rows (a
  // multiple of its OW, up to 8), as many of this problem's, or fewer, so that the tile
  // stays within four times the tuned one's elements and the tiles are as many as the
  // record's (up to 256): the structure the staged form needs, where the tuned numbers
  // alone would not fit.
  LaunchParams AdaptLaunch(const TileOp& op, const tuning::Problem& from,
                           const LaunchParams& tuned,
                           absl::string_view tuned_form) const override;
  // A shared-gather planes tile halves in whole planes (to the largest power of two below
  // their count), then in output rows (the bands evened out over the image), then within a
  // row: a tile of 8 of a plane's 9 taps would stage two planes' windows for one plane's
  // work. Other tiles halve as any operator's.
  bool HalveTile(const TileOp& op, absl::string_view tuned_form,
                 std::vector<int64_t>& tile) const override;
};

}  // namespace tiletune

#endif  // COMPILER_OPS_IM2COL_IM2COL_DEFINITION_H_

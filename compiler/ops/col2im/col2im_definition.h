// The `col2im` operator's definition (compiler/ops/tile_op_definition.h).
//
//   TT_RETURN_IF_ERROR(ops.Register(std::make_shared<Col2imDefinition>()));
#ifndef COMPILER_OPS_COL2IM_COL2IM_DEFINITION_H_
#define COMPILER_OPS_COL2IM_COL2IM_DEFINITION_H_

#include <memory>
#include <string>
#include <vector>

#include "compiler/ops/tile_op_definition.h"

namespace tiletune {

class Col2imDefinition final : public TileOpDefinition {
 public:
  const std::string& name() const override;
  // "col" (read), "img" (written).
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
  LaunchParams AdaptLaunch(const TileOp& op, const tuning::Problem& from,
                           const LaunchParams& tuned,
                           absl::string_view tuned_form) const override;

  // "DTYPE:N,H,W,C[:k=KH[xKW]][:s=SH[xSW]][:d=DH[xDW]][:p=PH[xPW]]": the dense NHWC image
  // of the geometry (the same syntax as im2col's), summed from its column matrix.
  std::string SpecSyntax() const override;
  absl::StatusOr<std::unique_ptr<TileOp>> ParseSpec(absl::string_view spec) const override;
  absl::StatusOr<std::string> FormatSpec(const TileOp& op) const override;
  // --shape=N,H,W,C (the dense image written), --kernel, --stride, --dilation, --pad, and
  // --through_shared (the form).
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
};

}  // namespace tiletune

#endif  // COMPILER_OPS_COL2IM_COL2IM_DEFINITION_H_

// The `copy` operator's definition (compiler/ops/tile_op_definition.h).
//
//   TT_RETURN_IF_ERROR(ops.Register(std::make_shared<CopyDefinition>()));
#ifndef COMPILER_OPS_COPY_COPY_DEFINITION_H_
#define COMPILER_OPS_COPY_COPY_DEFINITION_H_

#include <memory>
#include <string>
#include <vector>

#include "compiler/ops/tile_op_definition.h"

namespace tiletune {

class CopyDefinition final : public TileOpDefinition {
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
  std::vector<double> TransferFeatures(const tuning::Problem& problem) const override;
  int WidestVectorBytes(const TileOp& op) const override;

  // "DTYPE:D0,D1,...": a whole dense row-major tensor of that shape; or regions of
  // row-major buffers, "DTYPE:src=4096x4096[0:4096,48:4048]:dst=4096x4000", each side
  // SHAPE[SLICE,...] with one BEGIN:END (half-open; BEGIN: , :END and : too) or index per
  // dimension; a side without brackets is the whole buffer, a side left out a dense
  // buffer of the other's extents.
  std::string SpecSyntax() const override;
  absl::StatusOr<std::unique_ptr<TileOp>> ParseSpec(absl::string_view spec) const override;
  absl::StatusOr<std::string> FormatSpec(const TileOp& op) const override;
  // --shape, and --src_shape, --src_offset, --dst_shape, --dst_offset (the copy of --shape
  // lies at those offsets of larger row-major buffers), --through_shared.
  std::vector<OpFlag> flags() const override;
  absl::StatusOr<std::unique_ptr<TileOp>> FromFlags(const FlagValues& flags, DataType dtype,
                                                    Hints hints) const override;

  absl::StatusOr<std::shared_ptr<const LoweredTileKernel>> Lower(
      const TileOp& op, const Target& target, const LaunchParams& launch) const override;
  CudaSource Emit(const LoweredTileKernel& lowered) const override;
  std::string DescribePlan(const LoweredTileKernel& lowered) const override;

  OperandSizes Sizes(const TileOp& op) const override;
  // The regions' starts: one kernel serves every offset that keeps their alignments.
  absl::StatusOr<RegionOffsets> Offsets(const TileOp& op) const override;
  absl::Status Reference(const TileOp& op, absl::Span<const uint8_t> input,
                         absl::Span<uint8_t> output) const override;
  std::string DescribeOutputElement(const TileOp& op, int64_t element) const override;

  SearchSpace Search(const TileOp& op, const Target& target) const override;
  Trial Heuristic(const TileOp& op, const Target& target) const override;
  // A tile over `from`'s merged dimensions is fitted to `op`'s merged dimensions, one over
  // its unmerged (unit-squeezed) dimensions to `op`'s unmerged ones, when the ranks differ
  // (a slice's record applied to a dense tensor, or the reverse): about as many elements,
  // filled from the innermost dimension out. Otherwise the launch as tuned.
  LaunchParams AdaptLaunch(const TileOp& op, const tuning::Problem& from,
                           const LaunchParams& tuned,
                           absl::string_view tuned_form) const override;
};

}  // namespace tiletune

#endif  // COMPILER_OPS_COPY_COPY_DEFINITION_H_

// batch_copy's TileOpDefinition (compiler/ops/tile_op_definition.h): spec
// "DTYPE:COUNT:ITEM[:src=ITEMS][:dst=ITEMS][:regions]" (pools default to COUNT items; the
// blocks form unless `regions`), records in tuning::BatchCopyProblem, and kernels that take
// an item table (LoweredTileKernel::item_table). Tuning and verification launch an op with
// ExampleItems(op), which the CPU reference applies too.
#ifndef COMPILER_OPS_BATCH_COPY_BATCH_COPY_DEFINITION_H_
#define COMPILER_OPS_BATCH_COPY_BATCH_COPY_DEFINITION_H_

#include <memory>
#include <string>
#include <vector>

#include "compiler/ops/tile_op_definition.h"

namespace tiletune {

class BatchCopyDefinition final : public TileOpDefinition {
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

  std::string SpecSyntax() const override;
  absl::StatusOr<std::unique_ptr<TileOp>> ParseSpec(absl::string_view spec) const override;
  absl::StatusOr<std::string> FormatSpec(const TileOp& op) const override;
  std::vector<OpFlag> flags() const override;
  absl::StatusOr<std::unique_ptr<TileOp>> FromFlags(const FlagValues& flags, DataType dtype,
                                                    Hints hints) const override;

  absl::StatusOr<std::shared_ptr<const LoweredTileKernel>> Lower(
      const TileOp& op, const Target& target, const LaunchParams& launch) const override;
  CudaSource Emit(const LoweredTileKernel& lowered) const override;
  std::string DescribePlan(const LoweredTileKernel& lowered) const override;

  OperandSizes Sizes(const TileOp& op) const override;
  ItemTableImage ExampleItems(const TileOp& op) const override;
  absl::Status Reference(const TileOp& op, absl::Span<const uint8_t> input,
                         absl::Span<uint8_t> output) const override;
  std::string DescribeOutputElement(const TileOp& op, int64_t element) const override;

  SearchSpace Search(const TileOp& op, const Target& target) const override;
  Trial Heuristic(const TileOp& op, const Target& target) const override;
  // Items are bytes moved in 16-byte vectors: a record of another element size transfers
  // with its chunk's bytes.
  bool TransfersAcrossElementSizes() const override { return true; }
  // A record's chunk fitted to `op`'s item: the same bytes where the record's element size
  // differs; a whole-item chunk stays whole, a longer one than the item is cut to it (a
  // chunk longer than the item does not lower).
  LaunchParams AdaptLaunch(const TileOp& op, const tuning::Problem& from,
                           const LaunchParams& tuned,
                           absl::string_view tuned_form) const override;
};

}  // namespace tiletune

#endif  // COMPILER_OPS_BATCH_COPY_BATCH_COPY_DEFINITION_H_

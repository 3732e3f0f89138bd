#include "compiler/ops/batch_copy/batch_copy_definition.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "compiler/base/status_macros.h"
#include "compiler/ops/batch_copy/batch_copy_lowering.h"
#include "compiler/ops/batch_copy/batch_copy_op.h"
#include "compiler/ops/op_util.h"
#include "compiler/tuning_db/tuning_db.h"

namespace tiletune {
namespace {

// The seed of the item table tuning and verification use.
constexpr uint64_t kExampleSeed = 0x7469'6c65'7475'6e65ull;

const LoweredBatchCopy& AsBatchCopy(const LoweredTileKernel& lowered) {
  return LoweredRef<LoweredBatchCopy>(lowered, BatchCopyOp::Name());
}

absl::StatusOr<int64_t> ParseCount(absl::string_view what, absl::string_view text) {
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value < 1) {
    return absl::InvalidArgumentError(absl::StrCat("batch_copy ", what, " '",
                                                   text.substr(0, 40),
                                                   "': accepted is a positive integer"));
  }
  return value;
}

absl::StatusOr<std::unique_ptr<TileOp>> Make(DataType dtype, BatchForm form, int64_t count,
                                             int64_t item, int64_t src, int64_t dst,
                                             Hints hints) {
  auto op = std::make_unique<BatchCopyOp>();
  op->element_type = dtype;
  op->form = form;
  op->count = count;
  op->item = item;
  op->src_items = src > 0 ? src : count;
  op->dst_items = dst > 0 ? dst : count;
  op->hints = std::move(hints);
  TT_RETURN_IF_ERROR(ValidateBatchCopyOp(*op));
  return op;
}

}  // namespace

const std::string& BatchCopyDefinition::name() const { return BatchCopyOp::Name(); }

std::vector<std::string> BatchCopyDefinition::operand_names() const { return {"src", "dst"}; }

HintScope BatchCopyDefinition::hint_scope() const { return BatchCopyHintScope(); }

absl::Status BatchCopyDefinition::Validate(const TileOp& op) const {
  TT_ASSIGN_OR_RETURN(const BatchCopyOp* batch, OpAs<BatchCopyOp>(op));
  return ValidateBatchCopyOp(*batch);
}

std::string BatchCopyDefinition::Describe(const TileOp& op) const {
  const BatchCopyOp& b = OpRef<BatchCopyOp>(op);
  return absl::StrCat("batch_copy ", DataTypeName(b.element_type), " ", BatchFormName(b.form),
                      " ", b.count, " x ", b.item, b.form == BatchForm::kRegions ? " max" : "",
                      " (pools ", b.src_items, " -> ", b.dst_items, " items)");
}

void BatchCopyDefinition::AppendKey(const TileOp& op, std::string& key) const {
  // The count by its power of two: a launch passes its own count, and the kernel serves
  // every count, but records are tuned per count, so ops of counts far apart may resolve
  // to other kernels (and the library caches one per key).
  const BatchCopyOp& b = OpRef<BatchCopyOp>(op);
  int64_t bucket = 1;
  while (bucket < b.count) bucket *= 2;
  absl::StrAppend(&key, name(), "|", DataTypeName(b.element_type), "|", BatchFormName(b.form));
  AppendKeyInts(key, {b.item, b.src_items, b.dst_items, bucket});
  absl::StatusOr<ResolvedHints> hints = ResolveHints(b.hints, BatchCopyHintScope());
  absl::StrAppend(&key, "|", hints.ok() ? HintsToString(*hints) : "?");
}

absl::StatusOr<tuning::Problem> BatchCopyDefinition::ToProblem(const TileOp& op) const {
  TT_ASSIGN_OR_RETURN(const BatchCopyOp* b, OpAs<BatchCopyOp>(op));
  tuning::Problem problem;
  problem.set_dtype(DataTypeName(b->element_type));
  tuning::BatchCopyProblem* p = problem.mutable_batch_copy();
  p->set_form(b->form == BatchForm::kRegions ? tuning::BATCH_COPY_FORM_REGIONS
                                              : tuning::BATCH_COPY_FORM_BLOCKS);
  p->set_count(b->count);
  p->set_item(b->item);
  p->set_src_items(b->src_items);
  p->set_dst_items(b->dst_items);
  return problem;
}

absl::StatusOr<std::unique_ptr<TileOp>> BatchCopyDefinition::FromProblem(
    const tuning::Problem& problem) const {
  if (!problem.has_batch_copy()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "problem of operator '", tuning::OperatorName(problem), "' is not a batch_copy"));
  }
  TT_ASSIGN_OR_RETURN(DataType dtype, ParseDataType(problem.dtype()));
  const tuning::BatchCopyProblem& p = problem.batch_copy();
  BatchForm form;
  if (p.form() == tuning::BATCH_COPY_FORM_BLOCKS) {
    form = BatchForm::kBlocks;
  } else if (p.form() == tuning::BATCH_COPY_FORM_REGIONS) {
    form = BatchForm::kRegions;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("batch_copy form ", static_cast<int>(p.form()),
                                                   ": accepted are 0 (blocks), 1 (regions)"));
  }
  if (p.src_items() < 1 || p.dst_items() < 1) {
    return absl::InvalidArgumentError("batch_copy src_items and dst_items must be positive");
  }
  return Make(dtype, form, p.count(), p.item(), p.src_items(), p.dst_items(), Hints{});
}

absl::Status BatchCopyDefinition::CheckLowering(const tuning::Lowering& lowering) const {
  return CheckPathNames(lowering, name(), {{"sync_simt", {"blocks", "regions"}}});
}

std::vector<double> BatchCopyDefinition::TransferFeatures(const tuning::Problem& problem) const {
  const tuning::BatchCopyProblem& p = problem.batch_copy();
  absl::StatusOr<DataType> dtype = ParseDataType(problem.dtype());
  const double e = dtype.ok() ? DataTypeBytes(*dtype) : 2;
  const double item_bytes = std::max<double>(1, p.item() * e);
  const double count = std::max<double>(1, p.count());
  // The form is another kernel altogether (regions walk items of any size at any element
  // offset, blocks whole aligned items): a record of the problem's own form answers before
  // any of the other, of any element size (the sizes a little apart, as two doublings of
  // the items are).
  return {std::log2(item_bytes), std::log2(count), std::log2(item_bytes * count),
          2.0 * std::log2(e), p.form() == tuning::BATCH_COPY_FORM_REGIONS ? 64.0 : 0.0};
}

std::string BatchCopyDefinition::SpecSyntax() const {
  return "DTYPE:COUNT:ITEM[:src=ITEMS][:dst=ITEMS][:regions]";
}

absl::StatusOr<std::unique_ptr<TileOp>> BatchCopyDefinition::ParseSpec(
    absl::string_view spec) const {
  std::vector<absl::string_view> parts = absl::StrSplit(spec, ':');
  if (parts.size() < 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch_copy spec: give ", SpecSyntax(), ", e.g. f16:1000:16384:src=4096"));
  }
  TT_ASSIGN_OR_RETURN(DataType dtype, ParseDataType(parts[0]));
  TT_ASSIGN_OR_RETURN(int64_t count, ParseCount("COUNT (items per launch)", parts[1]));
  TT_ASSIGN_OR_RETURN(int64_t item, ParseCount("ITEM (elements per item)", parts[2]));
  int64_t src = 0, dst = 0;
  BatchForm form = BatchForm::kBlocks;
  for (size_t i = 3; i < parts.size(); ++i) {
    absl::string_view part = parts[i];
    if (part == "regions") {
      form = BatchForm::kRegions;
    } else if (part == "blocks") {
      form = BatchForm::kBlocks;
    } else if (absl::ConsumePrefix(&part, "src=")) {
      TT_ASSIGN_OR_RETURN(src, ParseCount("src (items in the source pool)", part));
    } else if (absl::ConsumePrefix(&part, "dst=")) {
      TT_ASSIGN_OR_RETURN(dst, ParseCount("dst (items in the destination pool)", part));
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "batch_copy spec option '", part.substr(0, 40),
          "': accepted are src=ITEMS, dst=ITEMS, blocks, regions"));
    }
  }
  return Make(dtype, form, count, item, src, dst, Hints{});
}

absl::StatusOr<std::string> BatchCopyDefinition::FormatSpec(const TileOp& op) const {
  TT_ASSIGN_OR_RETURN(const BatchCopyOp* b, OpAs<BatchCopyOp>(op));
  return absl::StrCat(DataTypeName(b->element_type), ":", b->count, ":", b->item,
                      ":src=", b->src_items, ":dst=", b->dst_items,
                      b->form == BatchForm::kRegions ? ":regions" : "");
}

std::vector<OpFlag> BatchCopyDefinition::flags() const {
  return {{"count", "N: items per launch"},
          {"item", "E: elements per item (regions: of the largest)"},
          {"src_items", "ITEMS: items in the source pool (default: count)"},
          {"dst_items", "ITEMS: items in the destination pool (default: count)"},
          {"form", "blocks|regions: index pairs into pools, or element offsets and sizes"}};
}

absl::StatusOr<std::unique_ptr<TileOp>> BatchCopyDefinition::FromFlags(const FlagValues& flags,
                                                                      DataType dtype,
                                                                      Hints hints) const {
  auto get = [&](const char* name) -> absl::StatusOr<int64_t> {
    auto it = flags.find(name);
    if (it == flags.end()) return int64_t{0};
    return ParseCount(absl::StrCat("--", name), it->second);
  };
  if (!flags.count("count") || !flags.count("item")) {
    return absl::InvalidArgumentError("batch_copy needs --count and --item");
  }
  TT_ASSIGN_OR_RETURN(int64_t count, get("count"));
  TT_ASSIGN_OR_RETURN(int64_t item, get("item"));
  TT_ASSIGN_OR_RETURN(int64_t src, get("src_items"));
  TT_ASSIGN_OR_RETURN(int64_t dst, get("dst_items"));
  BatchForm form = BatchForm::kBlocks;
  if (auto it = flags.find("form"); it != flags.end()) {
    if (it->second == "regions") {
      form = BatchForm::kRegions;
    } else if (it->second != "blocks") {
      return absl::InvalidArgumentError(absl::StrCat("--form='", it->second.substr(0, 40),
                                                     "': accepted are blocks, regions"));
    }
  }
  return Make(dtype, form, count, item, src, dst, std::move(hints));
}

absl::StatusOr<std::shared_ptr<const LoweredTileKernel>> BatchCopyDefinition::Lower(
    const TileOp& op, const Target& target, const LaunchParams& launch) const {
  TT_ASSIGN_OR_RETURN(const BatchCopyOp* b, OpAs<BatchCopyOp>(op));
  TT_ASSIGN_OR_RETURN(LoweredBatchCopy lowered, LowerBatchCopy(*b, target, launch));
  return std::make_shared<const LoweredBatchCopy>(std::move(lowered));
}

CudaSource BatchCopyDefinition::Emit(const LoweredTileKernel& lowered) const {
  return EmitBatchCopyKernel(AsBatchCopy(lowered));
}

std::string BatchCopyDefinition::DescribePlan(const LoweredTileKernel& lowered) const {
  return DescribeBatchCopyPlan(AsBatchCopy(lowered));
}

OperandSizes BatchCopyDefinition::Sizes(const TileOp& op) const {
  const BatchCopyOp& b = OpRef<BatchCopyOp>(op);
  const int64_t e = DataTypeBytes(b.element_type);
  OperandSizes sizes;
  sizes.input_bytes = static_cast<size_t>(b.src_items * b.item * e);
  sizes.output_bytes = static_cast<size_t>(b.dst_items * b.item * e);
  int64_t elements = b.count * b.item;
  if (b.form == BatchForm::kRegions) {
    // What the example items move.
    const std::vector<uint8_t> table = ExampleBatchTable(b, kExampleSeed);
    elements = 0;
    for (int64_t i = 0; i < b.count; ++i) {
      int64_t n = 0;
      std::memcpy(&n, table.data() + (i * 3 + 2) * 8, 8);
      elements += n;
    }
  }
  sizes.bytes_moved = 2 * elements * e;
  return sizes;
}

ItemTableImage BatchCopyDefinition::ExampleItems(const TileOp& op) const {
  const BatchCopyOp& b = OpRef<BatchCopyOp>(op);
  return ItemTableImage{ExampleBatchTable(b, kExampleSeed), b.count};
}

absl::Status BatchCopyDefinition::Reference(const TileOp& op, absl::Span<const uint8_t> input,
                                            absl::Span<uint8_t> output) const {
  TT_ASSIGN_OR_RETURN(const BatchCopyOp* b, OpAs<BatchCopyOp>(op));
  const std::vector<uint8_t> table = ExampleBatchTable(*b, kExampleSeed);
  return BatchCopyReference(*b, table.data(), b->count, input.data(), input.size(),
                            output.data(), output.size());
}

std::string BatchCopyDefinition::DescribeOutputElement(const TileOp& op, int64_t element) const {
  const BatchCopyOp& b = OpRef<BatchCopyOp>(op);
  return absl::StrCat("destination item ", element / b.item, ", element ", element % b.item);
}

SearchSpace BatchCopyDefinition::Search(const TileOp& op, const Target& target) const {
  return BatchCopySearchSpace(OpRef<BatchCopyOp>(op), target);
}

Trial BatchCopyDefinition::Heuristic(const TileOp& op, const Target& target) const {
  return BatchCopyHeuristic(OpRef<BatchCopyOp>(op), target);
}

LaunchParams BatchCopyDefinition::AdaptLaunch(const TileOp& op, const tuning::Problem& from,
                                              const LaunchParams& tuned,
                                              absl::string_view /*tuned_form*/) const {
  const BatchCopyOp& b = OpRef<BatchCopyOp>(op);
  LaunchParams launch = tuned;
  if (launch.tile.size() != 1 || !from.has_batch_copy()) return launch;
  const bool whole = launch.tile[0] >= from.batch_copy().item();
  absl::StatusOr<DataType> theirs = ParseDataType(from.dtype());
  if (theirs.ok() && DataTypeBytes(*theirs) != DataTypeBytes(b.element_type)) {
    launch.tile[0] = std::max<int64_t>(
        1, launch.tile[0] * DataTypeBytes(*theirs) / DataTypeBytes(b.element_type));
  }
  if (whole || launch.tile[0] > b.item) launch.tile[0] = b.item;
  return launch;
}

}  // namespace tiletune

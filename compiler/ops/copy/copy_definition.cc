#include "compiler/ops/copy/copy_definition.h"

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
#include "compiler/ops/copy/copy_emitter.h"
#include "compiler/ops/copy/copy_lowering.h"
#include "compiler/ops/copy/copy_op.h"
#include "compiler/ops/copy/copy_reference.h"
#include "compiler/ops/copy/copy_search_space.h"
#include "compiler/ops/op_util.h"
#include "compiler/tuning_db/tuning_db.h"

namespace tiletune {
namespace {

// Largest extent a spec or flag accepts.
constexpr int64_t kMaxSpecExtent = int64_t{1} << 40;

const LoweredCopy& AsCopy(const LoweredTileKernel& lowered) {
  return LoweredRef<LoweredCopy>(lowered, CopyOp::Name());
}


bool IsWholeDense(const Region& region) {
  return region.offsets == std::vector<int64_t>(region.rank(), 0) &&
         region.extents == region.buffer.shape && region.buffer.IsRowMajor();
}

// " src[0:64, 8:72]" and the strides when they are not row-major.
std::string DescribeSide(const Region& region) {
  if (IsWholeDense(region)) return "";
  std::string text = absl::StrCat(" ", RegionToString(region));
  if (!region.buffer.IsRowMajor()) {
    absl::StrAppend(&text, " strides [", absl::StrJoin(region.buffer.strides, ", "), "]");
  }
  return text;
}

// One side of a copy problem: a buffer just large enough for the region.
template <typename Repeated>
absl::StatusOr<Region> ProblemSide(const std::string& name, DataType dtype,
                                   const std::vector<int64_t>& shape, const Repeated& strides,
                                   const Repeated& offsets) {
  const int rank = static_cast<int>(shape.size());
  std::vector<int64_t> offset(rank, 0);
  if (offsets.size() == rank) {
    offset.assign(offsets.begin(), offsets.end());
  } else if (!offsets.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(name, "_offset has ", offsets.size(),
                                                   " values for a rank-", rank, " problem"));
  }
  std::vector<int64_t> buffer_shape(rank);
  for (int d = 0; d < rank; ++d) buffer_shape[d] = offset[d] + shape[d];
  Buffer buffer = Buffer::RowMajor(name, dtype, Scope::kGlobal, buffer_shape);
  if (strides.size() == rank) {
    buffer.strides.assign(strides.begin(), strides.end());
  } else if (!strides.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(name, "_strides have ", strides.size(),
                                                   " values for a rank-", rank, " problem"));
  }
  return Region::Box(buffer, offset, shape);
}

}  // namespace

const std::string& CopyDefinition::name() const { return CopyOp::Name(); }

std::vector<std::string> CopyDefinition::operand_names() const { return {"src", "dst"}; }

HintScope CopyDefinition::hint_scope() const { return CopyHintScope(); }

absl::Status CopyDefinition::Validate(const TileOp& op) const {
  TT_ASSIGN_OR_RETURN(const CopyOp* copy, OpAs<CopyOp>(op));
  return ValidateCopyOp(*copy);
}

std::string CopyDefinition::Describe(const TileOp& op) const {
  const CopyOp& copy = OpRef<CopyOp>(op);
  std::string text = absl::StrCat("copy ", DataTypeName(copy.src.buffer.dtype), " [",
                                  absl::StrJoin(copy.src.extents, ", "), "]");
  absl::StrAppend(&text, DescribeSide(copy.src), DescribeSide(copy.dst));
  if (copy.dst.extents != copy.src.extents && IsWholeDense(copy.dst)) {
    absl::StrAppend(&text, " into [", absl::StrJoin(copy.dst.extents, ", "), "]");
  }
  return text;
}

void CopyDefinition::AppendKey(const TileOp& op, std::string& key) const {
  const CopyOp& copy = OpRef<CopyOp>(op);
  key.append(name());
  key.push_back(static_cast<char>(copy.src.buffer.dtype));
  for (const Region* r : {&copy.src, &copy.dst}) {
    AppendKeyInts(key, r->buffer.strides);
    AppendKeyInts(key, r->offsets);
    AppendKeyInts(key, r->extents);
  }
  AppendHintsKey(copy.hints, key);
}

absl::StatusOr<tuning::Problem> CopyDefinition::ToProblem(const TileOp& op) const {
  TT_ASSIGN_OR_RETURN(const CopyOp* copy, OpAs<CopyOp>(op));
  tuning::Problem problem;
  problem.set_dtype(DataTypeName(copy->src.buffer.dtype));
  tuning::CopyProblem* p = problem.mutable_copy();
  for (int64_t e : copy->src.extents) p->add_shape(e);
  for (int64_t s : copy->src.buffer.strides) p->add_src_strides(s);
  for (int64_t o : copy->src.offsets) p->add_src_offset(o);
  for (int64_t s : copy->dst.buffer.strides) p->add_dst_strides(s);
  for (int64_t o : copy->dst.offsets) p->add_dst_offset(o);
  if (copy->dst.extents != copy->src.extents) {
    for (int64_t e : copy->dst.extents) p->add_dst_shape(e);
  }
  return problem;
}

absl::StatusOr<std::unique_ptr<TileOp>> CopyDefinition::FromProblem(
    const tuning::Problem& problem) const {
  if (!problem.has_copy()) {
    return absl::InvalidArgumentError(absl::StrCat("problem of operator '",
                                                   tuning::OperatorName(problem),
                                                   "' is not a copy"));
  }
  TT_ASSIGN_OR_RETURN(DataType dtype, ParseDataType(problem.dtype()));
  const tuning::CopyProblem& p = problem.copy();
  const std::vector<int64_t> shape(p.shape().begin(), p.shape().end());
  const std::vector<int64_t> dst_shape =
      p.dst_shape().empty() ? shape
                            : std::vector<int64_t>(p.dst_shape().begin(), p.dst_shape().end());
  for (const auto& [field, extents] : {std::pair{"shape", &shape}, {"dst_shape", &dst_shape}}) {
    if (extents->empty() || extents->size() > static_cast<size_t>(kMaxRank)) {
      return absl::InvalidArgumentError(absl::StrCat(field, " has ", extents->size(),
                                                     " dimensions; accepted are 1 to ", kMaxRank));
    }
  }
  auto op = std::make_unique<CopyOp>();
  TT_ASSIGN_OR_RETURN(op->src, ProblemSide("src", dtype, shape, p.src_strides(), p.src_offset()));
  TT_ASSIGN_OR_RETURN(op->dst,
                      ProblemSide("dst", dtype, dst_shape, p.dst_strides(), p.dst_offset()));
  TT_RETURN_IF_ERROR(ValidateCopyOp(*op));
  return op;
}

absl::Status CopyDefinition::CheckLowering(const tuning::Lowering& lowering) const {
  return CheckPathNames(lowering, name(),
                        {{CopyPathName(CopyPath::kTma), {}},
                         {CopyPathName(CopyPath::kBulk1d), {}},
                         {CopyPathName(CopyPath::kCpAsync), {}},
                         {CopyPathName(CopyPath::kSyncSimt), {}}});
}

std::vector<double> CopyDefinition::TransferFeatures(const tuning::Problem& problem) const {
  std::vector<double> features;
  for (int64_t e : problem.copy().shape()) features.push_back(std::log2(std::max<int64_t>(e, 1)));
  return features;
}

std::string CopyDefinition::SpecSyntax() const { return "DTYPE:D0,D1,..."; }

absl::StatusOr<std::unique_ptr<TileOp>> CopyDefinition::ParseSpec(absl::string_view spec) const {
  std::vector<absl::string_view> parts = absl::StrSplit(spec, ':');
  if (parts.size() != 2) {
    return absl::InvalidArgumentError("a copy takes a dtype and a shape, and no options");
  }
  TT_ASSIGN_OR_RETURN(DataType dtype, ParseDataType(parts[0]));
  TT_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                      ParseIntList("shape", parts[1], 1, kMaxSpecExtent, kMaxRank));
  Buffer src = Buffer::RowMajor("src", dtype, Scope::kGlobal, shape);
  Buffer dst = Buffer::RowMajor("dst", dtype, Scope::kGlobal, shape);
  auto op = std::make_unique<CopyOp>(Region::Whole(src), Region::Whole(dst));
  TT_RETURN_IF_ERROR(ValidateCopyOp(*op));
  return op;
}

std::vector<OpFlag> CopyDefinition::flags() const {
  return {{"shape", "D0,D1,...: extents of the copied region (required)"},
          {"src_shape", "D0,D1,...: the source buffer, when larger than --shape"},
          {"src_offset", "O0,O1,...: where the region starts in the source buffer"},
          {"dst_shape", "D0,D1,...: the destination buffer, when larger than --shape"},
          {"dst_offset", "O0,O1,...: where the region starts in the destination buffer"},
          {"through_shared", "true|false: sync_simt through shared memory (default true)"}};
}

absl::StatusOr<std::unique_ptr<TileOp>> CopyDefinition::FromFlags(const FlagValues& flags,
                                                                 DataType dtype,
                                                                 Hints hints) const {
  auto get = [&](const std::string& name) -> const std::string* {
    auto it = flags.find(name);
    return it == flags.end() ? nullptr : &it->second;
  };
  if (get("shape") == nullptr) {
    return absl::InvalidArgumentError("--shape is required, e.g. --shape=8192,8192");
  }
  TT_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                      ParseIntList("--shape", *get("shape"), 1, kMaxSpecExtent, kMaxRank));
  auto side = [&](const std::string& prefix) -> absl::StatusOr<Region> {
    std::vector<int64_t> buffer_shape = shape;
    std::vector<int64_t> offsets(shape.size(), 0);
    if (const std::string* text = get(prefix + "_shape")) {
      TT_ASSIGN_OR_RETURN(buffer_shape, ParseIntList(absl::StrCat("--", prefix, "_shape"), *text,
                                                     1, kMaxSpecExtent, kMaxRank));
    }
    if (const std::string* text = get(prefix + "_offset")) {
      TT_ASSIGN_OR_RETURN(offsets, ParseIntList(absl::StrCat("--", prefix, "_offset"), *text, 0,
                                                kMaxSpecExtent, kMaxRank));
    }
    if (buffer_shape.size() != shape.size() || offsets.size() != shape.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", prefix, "_shape and --", prefix, "_offset need ", shape.size(),
          " values, one per dimension of --shape"));
    }
    Buffer buffer = Buffer::RowMajor(prefix, dtype, Scope::kGlobal, buffer_shape);
    Region region = Region::Box(buffer, offsets, shape);
    TT_RETURN_IF_ERROR(ValidateRegion(region));
    return region;
  };
  auto op = std::make_unique<CopyOp>();
  TT_ASSIGN_OR_RETURN(op->src, side("src"));
  TT_ASSIGN_OR_RETURN(op->dst, side("dst"));
  op->hints = std::move(hints);
  TT_RETURN_IF_ERROR(ValidateCopyOp(*op));
  return op;
}

absl::StatusOr<std::shared_ptr<const LoweredTileKernel>> CopyDefinition::Lower(
    const TileOp& op, const Target& target, const LaunchParams& launch) const {
  TT_ASSIGN_OR_RETURN(const CopyOp* copy, OpAs<CopyOp>(op));
  TT_ASSIGN_OR_RETURN(LoweredCopy lowered, LowerCopy(*copy, target, launch));
  return std::make_shared<const LoweredCopy>(std::move(lowered));
}

CudaSource CopyDefinition::Emit(const LoweredTileKernel& lowered) const {
  return EmitCopyKernel(AsCopy(lowered));
}

std::string CopyDefinition::DescribePlan(const LoweredTileKernel& lowered) const {
  return DescribeCopyPlan(AsCopy(lowered));
}

OperandSizes CopyDefinition::Sizes(const TileOp& op) const {
  const CopyOp& copy = OpRef<CopyOp>(op);
  OperandSizes sizes;
  sizes.input_bytes = SpanBytes(copy.src.buffer);
  sizes.output_bytes = SpanBytes(copy.dst.buffer);
  sizes.bytes_moved = 2 * copy.src.NumElements() * DataTypeBytes(copy.src.buffer.dtype);
  return sizes;
}

absl::Status CopyDefinition::Reference(const TileOp& op, absl::Span<const uint8_t> input,
                                       absl::Span<uint8_t> output) const {
  TT_ASSIGN_OR_RETURN(const CopyOp* copy, OpAs<CopyOp>(op));
  return CopyReference(*copy, input.data(), input.size(), output.data(), output.size());
}

std::string CopyDefinition::DescribeOutputElement(const TileOp& op, int64_t element) const {
  return absl::StrCat("element ", element);
}

SearchSpace CopyDefinition::Search(const TileOp& op, const Target& target) const {
  return CopySearchSpace(OpRef<CopyOp>(op), target);
}

Trial CopyDefinition::Heuristic(const TileOp& op, const Target& target) const {
  return CopyHeuristic(OpRef<CopyOp>(op), target);
}

}  // namespace tiletune

#include "compiler/ops/copy/copy_definition.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
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

// Splits at `separator` outside square brackets.
std::vector<absl::string_view> SplitOutsideBrackets(absl::string_view text, char separator) {
  std::vector<absl::string_view> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '[') ++depth;
    if (text[i] == ']') --depth;
    if (text[i] == separator && depth == 0) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  parts.push_back(text.substr(start));
  return parts;
}

// "BxBx..." (or "B,B,..."): a row-major buffer's shape.
absl::StatusOr<std::vector<int64_t>> ParseBufferShape(absl::string_view what,
                                                      absl::string_view text) {
  std::string commas(text);
  std::replace(commas.begin(), commas.end(), 'x', ',');
  return ParseIntList(what, commas, 1, kMaxSpecExtent, kMaxRank);
}

// One side of a region spec, "4096x4096[0:4096,48:4048]": a row-major buffer and, per
// dimension, BEGIN:END (half-open; either end may be left out), or an index (extent 1).
// No brackets: the whole buffer.
absl::StatusOr<Region> ParseRegionSide(absl::string_view name, DataType dtype,
                                       absl::string_view text) {
  const std::string what = absl::StrCat(name);
  const size_t open = text.find('[');
  TT_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                      ParseBufferShape(what, text.substr(0, open)));
  const Buffer buffer = Buffer::RowMajor(std::string(name), dtype, Scope::kGlobal, shape);
  if (open == absl::string_view::npos) return Region::Whole(buffer);
  if (text.back() != ']') {
    return absl::InvalidArgumentError(absl::StrCat(
        name, "=", text, ": the slice must end the side with ']', e.g. ", name,
        "=4096x4096[0:4096,48:4048]"));
  }
  const absl::string_view slices = text.substr(open + 1, text.size() - open - 2);
  std::vector<absl::string_view> dims = absl::StrSplit(slices, ',');
  if (dims.size() != shape.size()) {
    return absl::InvalidArgumentError(absl::StrCat(name, "=", text, ": ", dims.size(),
                                                   " slice(s) for a rank-", shape.size(),
                                                   " buffer; give one per dimension"));
  }
  std::vector<int64_t> offsets, extents;
  for (size_t d = 0; d < dims.size(); ++d) {
    const absl::string_view slice = absl::StripAsciiWhitespace(dims[d]);
    auto bad = [&](const std::string& why) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, "=", text, ": slice '", slice, "' of dimension ", d, " ", why,
          "; give BEGIN:END with 0 <= BEGIN < END <= ", shape[d], ", BEGIN:, :END, : or an index"));
    };
    auto bound = [&](absl::string_view part, int64_t fallback, int64_t* value) {
      if (part.empty()) {
        *value = fallback;
        return true;
      }
      return absl::SimpleAtoi(part, value);
    };
    int64_t begin = 0, end = 0;
    const size_t colon = slice.find(':');
    if (colon == absl::string_view::npos) {
      if (!absl::SimpleAtoi(slice, &begin)) return bad("is not an integer or BEGIN:END");
      end = begin + 1;
    } else if (!bound(slice.substr(0, colon), 0, &begin) ||
               !bound(slice.substr(colon + 1), shape[d], &end)) {
      return bad("has a bound that is not an integer");
    }
    if (begin < 0 || end > shape[d] || begin >= end) return bad("is empty or outside the buffer");
    offsets.push_back(begin);
    extents.push_back(end - begin);
  }
  return Region::Box(buffer, offsets, extents);
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
  // Everything validation reads but the launch does not re-check: both dtypes and scopes,
  // the strides and extents (a cache hit skips validation but for the regions' places).
  for (const Region* r : {&copy.src, &copy.dst}) {
    key.push_back(static_cast<char>(r->buffer.dtype));
    key.push_back(static_cast<char>(r->buffer.scope));
    AppendKeyInts(key, r->buffer.strides);
    AppendKeyInts(key, r->extents);
  }
  // The kernel takes the regions' start addresses: offsets enter only through the
  // alignments the lowering reads (each start's, and that of their difference). Computed
  // in unsigned arithmetic: the op may not be validated yet, and alignments only need the
  // low bits, which wrapping keeps.
  auto start_bytes = [](const Region& r) {
    uint64_t offset = 0;
    for (int d = 0; d < r.rank() && d < static_cast<int>(r.offsets.size()) &&
                    d < static_cast<int>(r.buffer.strides.size());
         ++d) {
      offset += static_cast<uint64_t>(r.offsets[d]) * static_cast<uint64_t>(r.buffer.strides[d]);
    }
    return offset * static_cast<uint64_t>(DataTypeBytes(r.buffer.dtype));
  };
  const uint64_t src_start = start_bytes(copy.src);
  const uint64_t dst_start = start_bytes(copy.dst);
  AppendKeyInts(key, {AlignmentOf(static_cast<int64_t>(src_start & 15)),
                      AlignmentOf(static_cast<int64_t>(dst_start & 15)),
                      AlignmentOf(static_cast<int64_t>((src_start - dst_start) & 15))});
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
                         {CopyPathName(CopyPath::kSyncSimt), {"head_tail", "shifted", "span"}}});
}

namespace {

}  // namespace

std::vector<double> CopyDefinition::TransferFeatures(const tuning::Problem& problem) const {
  // What decides which variant is fast, each scaled by how much it matters: the bytes
  // moved (log2), whether the copy is launch-bound (under 8 MiB), the contiguous run
  // (log2 bytes), the widest vector fixed alignment allows, how src and dst starts agree
  // (the head_tail and shifted forms), the rank left after merging, and whether its rows
  // suit the span form (a kernel of its own: rows that do transfer among themselves).
  absl::StatusOr<std::unique_ptr<TileOp>> op = FromProblem(problem);
  if (!op.ok()) return std::vector<double>(7, 0.0);
  const CopyOp& copy = static_cast<const CopyOp&>(**op);
  const MergedCopyGeometry g = MergeCopyGeometry(copy);
  const int64_t e = DataTypeBytes(copy.src.buffer.dtype);
  const int r = static_cast<int>(g.extents.size());
  const double bytes = static_cast<double>(copy.src.NumElements() * e);
  const bool contiguous = g.src_strides[r - 1] == 1 && g.dst_strides[r - 1] == 1;
  const int64_t run = contiguous ? g.extents[r - 1] * e : e;
  const CopyAlignment a = AlignmentOfMerged(g, static_cast<int>(e));
  return {std::log2(std::max(bytes, 1.0)),
          bytes < double{8 << 20} ? 2.0 : 0.0,
          0.5 * std::log2(static_cast<double>(std::max<int64_t>(run, 1))),
          std::log2(static_cast<double>(a.fixed)),
          0.5 * std::log2(static_cast<double>(a.agree)),
          static_cast<double>(r),
          SpanGeometry(g, static_cast<int>(e)) ? 8.0 : 0.0};
}

int CopyDefinition::WidestVectorBytes(const TileOp& op) const {
  const CopyOp& copy = OpRef<CopyOp>(op);
  return AlignmentOfMerged(MergeCopyGeometry(copy), DataTypeBytes(copy.src.buffer.dtype)).fixed;
}

std::string CopyDefinition::SpecSyntax() const {
  return "DTYPE:D0,D1,... (a dense tensor) or DTYPE:src=B0xB1[BEGIN:END,...]:dst=C0xC1[...] "
         "(regions of row-major buffers; either side may be left out)";
}

absl::StatusOr<std::unique_ptr<TileOp>> CopyDefinition::ParseSpec(absl::string_view spec) const {
  std::vector<absl::string_view> parts = SplitOutsideBrackets(spec, ':');
  if (parts.size() < 2) {
    return absl::InvalidArgumentError("a copy takes a dtype, then a shape or src=/dst= regions");
  }
  TT_ASSIGN_OR_RETURN(DataType dtype, ParseDataType(parts[0]));
  auto op = std::make_unique<CopyOp>();
  const bool regions = absl::StartsWith(parts[1], "src=") || absl::StartsWith(parts[1], "dst=");
  if (!regions) {
    if (parts.size() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "a dense copy takes a dtype and a shape and no options; got '", parts[2],
          "' (regions are written src=SHAPE[SLICES]:dst=SHAPE[SLICES])"));
    }
    TT_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                        ParseIntList("shape", parts[1], 1, kMaxSpecExtent, kMaxRank));
    op->src = Region::Whole(Buffer::RowMajor("src", dtype, Scope::kGlobal, shape));
    op->dst = Region::Whole(Buffer::RowMajor("dst", dtype, Scope::kGlobal, shape));
  } else {
    std::optional<Region> src, dst;
    for (size_t i = 1; i < parts.size(); ++i) {
      const absl::string_view part = parts[i];
      const bool is_src = absl::StartsWith(part, "src=");
      if (!is_src && !absl::StartsWith(part, "dst=")) {
        return absl::InvalidArgumentError(absl::StrCat(
            "'", part, "' is not src=SHAPE[SLICES] or dst=SHAPE[SLICES]"));
      }
      std::optional<Region>& side = is_src ? src : dst;
      if (side.has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat(is_src ? "src" : "dst", "= is given twice; give each side once"));
      }
      TT_ASSIGN_OR_RETURN(side, ParseRegionSide(is_src ? "src" : "dst", dtype, part.substr(4)));
    }
    // A side left out is a dense buffer of the other's extents.
    if (!src.has_value()) {
      src = Region::Whole(Buffer::RowMajor("src", dtype, Scope::kGlobal, dst->extents));
    }
    if (!dst.has_value()) {
      dst = Region::Whole(Buffer::RowMajor("dst", dtype, Scope::kGlobal, src->extents));
    }
    op->src = *std::move(src);
    op->dst = *std::move(dst);
  }
  TT_RETURN_IF_ERROR(ValidateCopyOp(*op));
  return op;
}

absl::StatusOr<std::string> CopyDefinition::FormatSpec(const TileOp& op) const {
  TT_ASSIGN_OR_RETURN(const CopyOp* copy, OpAs<CopyOp>(op));
  for (const Region* region : {&copy->src, &copy->dst}) {
    if (!region->buffer.IsRowMajor()) {
      return absl::UnimplementedError(absl::StrCat(
          "buffer ", region->buffer.name, " has strides [",
          absl::StrJoin(region->buffer.strides, ", "),
          "]: a problem spec names row-major buffers only"));
    }
  }
  const std::string dtype = DataTypeName(copy->src.buffer.dtype);
  auto whole = [](const Region& region) { return region.extents == region.buffer.shape; };
  if (whole(copy->src) && whole(copy->dst) && copy->src.buffer.shape == copy->dst.buffer.shape) {
    return absl::StrCat(dtype, ":", absl::StrJoin(copy->src.extents, ","));
  }
  auto side = [&](const Region& region) {
    std::string text = absl::StrJoin(region.buffer.shape, "x");
    if (whole(region)) return text;
    std::vector<std::string> slices;
    for (int d = 0; d < region.rank(); ++d) {
      slices.push_back(absl::StrCat(region.offsets[d], ":", region.offsets[d] + region.extents[d]));
    }
    return absl::StrCat(text, "[", absl::StrJoin(slices, ","), "]");
  };
  return absl::StrCat(dtype, ":src=", side(copy->src), ":dst=", side(copy->dst));
}

std::vector<OpFlag> CopyDefinition::flags() const {
  return {{"shape", "D0,D1,...: extents of the copied region (required)"},
          {"src_shape", "D0,D1,...: the source buffer, when larger than --shape"},
          {"src_offset", "O0,O1,...: where the region starts in the source buffer"},
          {"dst_shape", "D0,D1,...: the destination buffer, when larger than --shape"},
          {"dst_offset", "O0,O1,...: where the region starts in the destination buffer"},
          {"through_shared", "true|false: sync_simt through shared memory (default true)",
           /*boolean=*/true}};
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

absl::StatusOr<RegionOffsets> CopyDefinition::Offsets(const TileOp& op) const {
  TT_ASSIGN_OR_RETURN(const CopyOp* copy_ptr, OpAs<CopyOp>(op));
  const CopyOp& copy = *copy_ptr;
  TT_RETURN_IF_ERROR(ValidateRegion(copy.src));
  TT_RETURN_IF_ERROR(ValidateRegion(copy.dst));
  const int64_t e = DataTypeBytes(copy.src.buffer.dtype);
  return RegionOffsets{copy.src.BaseOffsetElements() * e, copy.dst.BaseOffsetElements() * e};
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

namespace {

// The smallest power of two at least `extent`.
int64_t CoverPowerOfTwo(int64_t extent) {
  int64_t p = 1;
  while (p < extent) p *= 2;
  return p;
}

// The extents a copy's tile may cover: merged, or unit-squeezed but unmerged.
std::vector<int64_t> SqueezedCopyExtents(const CopyOp& op) {
  std::vector<int64_t> squeezed;
  for (int64_t e : op.src.extents) {
    if (e > 1) squeezed.push_back(e);
  }
  if (squeezed.empty()) squeezed.push_back(1);
  return squeezed;
}

// `count` (rows or elements) spread over the first `dims` of `target`'s dimensions,
// innermost first, into `tile`: each takes as much of what is left as its extent holds,
// the next the rest, rounded up.
void SpreadOver(const std::vector<int64_t>& target, size_t dims, int64_t count,
                std::vector<int64_t>& tile) {
  for (size_t d = dims; d-- > 0 && count > 1;) {
    tile[d] = std::min(target[d], count);
    count = (count + tile[d] - 1) / tile[d];
  }
}

// A tile wider than the record's rows (past the power of two that covers them) moved only
// those rows' elements per CTA. Where this problem's rows are of the same order (within 4x
// either way), that measured work is the evidence: the tile keeps its width (the kernel
// then has the accesses per thread the record measured) and takes as many rows as hold that
// work, a power of two (a [8, 2048] tile over rows of 250 moved 8 x 250 per CTA; over rows
// of 500 it is [4, 2048]). Over narrower rows than the record's it keeps the width only as
// many times theirs as it was over the record's rows, so its CTAs idle no more of their
// lanes than the record's did (over rows of 125, [8, 1024]). None for a tile within the
// record's rows (a [8, 1024] tile over rows of 1000 is a tile of whole rows, which
// transfers as any other), or rows of another order (rows of 8 against 3000: its CTAs'
// work says nothing there).
std::optional<std::vector<int64_t>> MeasuredWorkTile(const std::vector<int64_t>& tile,
                                                     const std::vector<int64_t>& their_extents,
                                                     const std::vector<int64_t>& target) {
  const int64_t their_row = their_extents.back(), row = target.back();
  if (tile.back() <= CoverPowerOfTwo(their_row)) return std::nullopt;
  if (CoverPowerOfTwo(row) > 4 * CoverPowerOfTwo(their_row) ||
      CoverPowerOfTwo(their_row) > 4 * CoverPowerOfTwo(row)) {
    return std::nullopt;
  }
  int64_t elements = 1;
  for (size_t d = 0; d < tile.size(); ++d) {
    elements = std::min<int64_t>(elements * std::min(tile[d], their_extents[d]), int64_t{1} << 30);
  }
  const int64_t width = std::min(
      tile.back(), CoverPowerOfTwo(row) * (tile.back() / CoverPowerOfTwo(their_row)));
  std::vector<int64_t> fitted(target.size(), 1);
  fitted.back() = width;
  // A CTA's row: the whole row where the tile covers it, else the tile's width of it.
  int64_t rows = 1;
  while (rows * 2 <= elements / std::min(width, row)) rows *= 2;
  SpreadOver(target, target.size() - 1, rows, fitted);
  return fitted;
}

// A record whose kernel took the span form, on rows that suit the span form too: the
// tile's whole rows keep the record's src span a tile (a tile's span is what its CTA
// stages and moves). None where the record's kernel took another form (its tuning chose
// it over the span tiles it also tried), where our rows do not suit it, or where our
// hints ask for the row-by-row kernel (a coalesced_width other than 16 B): such tiles
// transfer as any other.
std::optional<LaunchParams> SpanLaunch(const CopyOp& ours, const CopyOp& theirs,
                                       const LaunchParams& tuned, absl::string_view tuned_form) {
  if (tuned_form != "span") return std::nullopt;
  const int e = DataTypeBytes(ours.src.buffer.dtype);
  const int their_e = DataTypeBytes(theirs.src.buffer.dtype);
  const MergedCopyGeometry g = MergeCopyGeometry(ours);
  const MergedCopyGeometry h = MergeCopyGeometry(theirs);
  absl::StatusOr<ResolvedHints> hints = ResolveHints(ours.hints, CopyHintScope());
  const std::optional<int> width = hints.ok() ? hints->coalesced_width : std::nullopt;
  // (The record's span form already says its launch was a direct, one-stage tile of whole
  // rows of its 2-D copy.)
  if (!SpanGeometry(g, e) || h.extents.size() != 2 || tuned.tile.size() != 2 ||
      (width.has_value() && *width * e != 16)) {
    return std::nullopt;
  }
  const int64_t their_span = tuned.tile[0] * h.src_strides[0] * their_e;
  const int64_t pitch = g.src_strides[0] * e;
  LaunchParams adapted = tuned;
  // The record's span in whole 16 rows, the nearer multiple by ratio (at a wider pitch than
  // the record's the step is coarse: rounding down would leave a CTA up to half the span it
  // was tuned for).
  const double exact = static_cast<double>(their_span) / static_cast<double>(pitch);
  const int64_t below = SpanTileRows(their_span, pitch), above = below + 16;
  const int64_t rows = exact * exact > static_cast<double>(below * above) ? above : below;
  adapted.tile = {std::min(g.extents[0], rows), g.extents[1]};
  return adapted;
}

// A tile of a few of the record's rows, each a part of the row (tile [8, 1024] over rows of
// 8186), over rows shorter than its width but of the same order (within 4x, powers of two
// covering both): its width shrinks to cover the rows and it keeps its rows, spread over
// this copy's outer dimensions innermost first ([1, 8, 256] over [1024, 223, 223]; where an
// outer extent does not divide them the split rounds up, as the elements' split does). The
// record's tuning chose that many rows a CTA; giving a CTA more of the short rows instead,
// to keep its elements, gives it more accesses a thread than any tile its tuning measured
// there. Only while those rows give each of the record's `threads` a vector of `vector`
// elements at least: a tile of fewer idles threads the record's kept busy. None for other
// tiles (rows far shorter than the tile: [8, 2048] over rows of 11 takes as many rows as
// keep its work; see the callers).
std::optional<std::vector<int64_t>> RowsKeptTile(const std::vector<int64_t>& tile,
                                                 const std::vector<int64_t>& their_extents,
                                                 const std::vector<int64_t>& target,
                                                 int threads, int64_t vector) {
  if (tile.size() < 2 || target.size() < 2) return std::nullopt;
  const int64_t width = tile.back(), row = target.back();
  if (width >= their_extents.back() || row >= width || 4 * CoverPowerOfTwo(row) < width) {
    return std::nullopt;
  }
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < tile.size(); ++d) {
    rows = std::min<int64_t>(rows * std::min(tile[d], their_extents[d]), int64_t{1} << 30);
  }
  int64_t outer = 1;  // the rows this copy has
  for (size_t d = 0; d + 1 < target.size(); ++d) {
    outer = std::min<int64_t>(outer * target[d], int64_t{1} << 30);
  }
  if (std::min(rows, outer) * row < int64_t{threads} * vector) return std::nullopt;
  std::vector<int64_t> fitted(target.size(), 1);
  fitted.back() = std::min(width, CoverPowerOfTwo(row));
  SpreadOver(target, target.size() - 1, rows, fitted);
  return fitted;
}

}  // namespace

LaunchParams CopyDefinition::AdaptLaunch(const TileOp& op, const tuning::Problem& from,
                                         const LaunchParams& tuned,
                                         absl::string_view tuned_form) const {
  absl::StatusOr<std::unique_ptr<TileOp>> source = FromProblem(from);
  if (!source.ok()) return tuned;
  const CopyOp& theirs = OpRef<CopyOp>(**source);
  const CopyOp& ours = OpRef<CopyOp>(op);
  if (std::optional<LaunchParams> span = SpanLaunch(ours, theirs, tuned, tuned_form)) return *span;
  std::vector<int64_t> target, their_extents;
  if (tuned.tile.size() == MergedCopyExtents(theirs).size()) {
    target = MergedCopyExtents(ours);
    their_extents = MergedCopyExtents(theirs);
  } else if (tuned.tile.size() == SqueezedCopyExtents(theirs).size()) {
    target = SqueezedCopyExtents(ours);
    their_extents = SqueezedCopyExtents(theirs);
  }
  if (target.empty()) return tuned;
  LaunchParams adapted = tuned;
  // A tile larger than the record's whole problem (4096 elements over 1024: its one CTA
  // moved 1024) says only that one CTA took it all: what it did is the tile. (A tile only
  // wider than the record's rows: MeasuredWorkTile.)
  int64_t tile_elements = 1, their_elements = 1;
  for (size_t d = 0; d < adapted.tile.size(); ++d) {
    tile_elements = std::min<int64_t>(tile_elements * adapted.tile[d], int64_t{1} << 40);
    their_elements =
        std::min<int64_t>(their_elements * CoverPowerOfTwo(their_extents[d]), int64_t{1} << 40);
  }
  if (tile_elements > their_elements) {
    for (size_t d = 0; d < adapted.tile.size(); ++d) {
      adapted.tile[d] = std::min(adapted.tile[d], CoverPowerOfTwo(their_extents[d]));
    }
  }
  if (std::optional<std::vector<int64_t>> measured =
          MeasuredWorkTile(adapted.tile, their_extents, target)) {
    adapted.tile = *std::move(measured);
    return adapted;
  }
  // The vector a thread moves: the shifted form's 16-B slots whatever the alignments, else
  // as wide as they allow.
  const int vector_bytes = tuned_form == "shifted" ? 16 : WidestVectorBytes(op);
  if (std::optional<std::vector<int64_t>> kept =
          RowsKeptTile(adapted.tile, their_extents, target, tuned.threads,
                       std::max(1, vector_bytes / DataTypeBytes(op.dtype())))) {
    adapted.tile = *std::move(kept);
    return adapted;
  }
  if (target.size() != tuned.tile.size()) {
    int64_t elements = 1;
    for (int64_t t : adapted.tile) {
      elements = std::min<int64_t>(elements * std::max<int64_t>(t, 1), int64_t{1} << 30);
    }
    adapted.tile.assign(target.size(), 1);
    SpreadOver(target, target.size(), elements, adapted.tile);
    return adapted;
  }
  // Same rank: a tile dimension far wider than this problem's extent (a [*, 512] tile over
  // rows of 11) idles most of each CTA; it shrinks to the smallest power of two covering
  // the extent, and the elements it gave up go to the dimensions outside it, as far as
  // their extents reach, so a CTA keeps about the work it was tuned with.
  int64_t spare = 1;
  for (size_t d = target.size(); d-- > 0;) {
    const int64_t limit = CoverPowerOfTwo(target[d]);
    if (adapted.tile[d] > limit) {
      spare = std::min<int64_t>(spare * (adapted.tile[d] / limit), int64_t{1} << 24);
      adapted.tile[d] = limit;
    } else if (spare > 1 && adapted.tile[d] < limit) {
      const int64_t grow = std::min(spare, limit / adapted.tile[d]);
      adapted.tile[d] *= grow;
      spare /= grow;
    }
  }
  return adapted;
}

Trial CopyDefinition::Heuristic(const TileOp& op, const Target& target) const {
  return CopyHeuristic(OpRef<CopyOp>(op), target);
}

}  // namespace tiletune

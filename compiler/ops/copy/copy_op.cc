#include "compiler/ops/copy/copy_op.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/base/status_macros.h"

namespace tiletune {

const std::string& CopyOp::Name() {
  static const std::string* const name = new std::string("copy");
  return *name;
}

HintScope CopyHintScope() {
  HintScope scope{CopyOp::Name(), {}, {{kSimtAddressingKey, {"per_slot", "tile_origin"}}}};
  scope.problem_bound = {kSimtAddressingKey};
  return scope;
}

std::vector<int64_t> SqueezedExtents(const Region& region) {
  std::vector<int64_t> squeezed;
  for (int64_t e : region.extents) {
    if (e != 1) squeezed.push_back(e);
  }
  if (squeezed.empty()) squeezed.push_back(1);
  return squeezed;
}

absl::Status ValidateCopyOp(const CopyOp& op) {
  TT_RETURN_IF_ERROR(ValidateRegion(op.src));
  TT_RETURN_IF_ERROR(ValidateRegion(op.dst));
  if (op.src.buffer.dtype != op.dst.buffer.dtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        "copy from ", DataTypeName(op.src.buffer.dtype), " buffer ", op.src.buffer.name, " to ",
        DataTypeName(op.dst.buffer.dtype), " buffer ", op.dst.buffer.name,
        ": copy moves bits and needs one dtype on both sides"));
  }
  if (SqueezedExtents(op.src) != SqueezedExtents(op.dst)) {
    return absl::InvalidArgumentError(absl::StrCat("copy from ", RegionToString(op.src), " to ",
                                                   RegionToString(op.dst),
                                                   ": extents differ (unit dimensions aside)"));
  }
  // Each dst element is written once: its dimensions, from the smallest stride up, nest
  // (each stride reaches past everything the dimensions inside it span). A stride of 0,
  // or strides that interleave, would have several source elements race for one.
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, extent), extents above 1
  for (int d = 0; d < op.dst.rank(); ++d) {
    if (op.dst.extents[d] > 1) dims.emplace_back(op.dst.buffer.strides[d], op.dst.extents[d]);
  }
  std::sort(dims.begin(), dims.end());
  int64_t span = 0;  // elements past the first that the inner dimensions reach
  for (const auto& [stride, extent] : dims) {
    if (stride <= span) {
      return absl::InvalidArgumentError(absl::StrCat(
          "copy to ", RegionToString(op.dst), ": its elements alias (a stride of ", stride,
          " over ", extent, " elements within what the smaller strides already span, ", span + 1,
          "); a copy writes each destination element once"));
    }
    span += (extent - 1) * stride;
  }
  return ResolveHints(op.hints, CopyHintScope()).status();
}

}  // namespace tiletune

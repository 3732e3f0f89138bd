#include "compiler/ops/copy/copy_op.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/base/status_macros.h"

namespace tiletune {

const std::string& CopyOp::Name() {
  static const std::string* const name = new std::string("copy");
  return *name;
}

HintScope CopyHintScope() { return HintScope{CopyOp::Name(), {}}; }

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
  return ResolveHints(op.hints, CopyHintScope()).status();
}

}  // namespace tiletune

#include "compiler/ops/copy/copy_reference.h"

#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/base/status_macros.h"

namespace tiletune {
namespace {

struct Side {
  std::vector<int64_t> extents;
  std::vector<int64_t> strides;
  int64_t base = 0;
};

// The region with its unit dimensions dropped (one dimension kept at least).
Side Squeeze(const Region& region) {
  Side side;
  side.base = region.BaseOffsetElements();
  for (int d = 0; d < region.rank(); ++d) {
    if (region.extents[d] == 1) continue;
    side.extents.push_back(region.extents[d]);
    side.strides.push_back(region.buffer.strides[d]);
  }
  if (side.extents.empty()) {
    side.extents = {1};
    side.strides = {1};
  }
  return side;
}

}  // namespace

absl::Status CopyReference(const CopyOp& op, const uint8_t* src, size_t src_bytes, uint8_t* dst,
                           size_t dst_bytes) {
  TT_RETURN_IF_ERROR(ValidateCopyOp(op));
  if (src_bytes < SpanBytes(op.src.buffer) || dst_bytes < SpanBytes(op.dst.buffer)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "reference copy needs ", SpanBytes(op.src.buffer), " src and ", SpanBytes(op.dst.buffer),
        " dst bytes; got ", src_bytes, " and ", dst_bytes));
  }
  // Both regions have the same extents once unit dimensions are dropped: walk them
  // together, row by row, copying a whole row at once where both rows are contiguous.
  const int element = DataTypeBytes(op.src.buffer.dtype);
  Side from = Squeeze(op.src);
  Side to = Squeeze(op.dst);
  const int rank = static_cast<int>(from.extents.size());
  const int64_t row = from.extents[rank - 1];
  const bool contiguous = from.strides[rank - 1] == 1 && to.strides[rank - 1] == 1;
  std::vector<int64_t> index(rank, 0);
  while (true) {
    int64_t s = from.base, d = to.base;
    for (int i = 0; i + 1 < rank; ++i) {
      s += index[i] * from.strides[i];
      d += index[i] * to.strides[i];
    }
    if (contiguous) {
      std::memcpy(dst + d * element, src + s * element, row * element);
    } else {
      for (int64_t j = 0; j < row; ++j) {
        std::memcpy(dst + (d + j * to.strides[rank - 1]) * element,
                    src + (s + j * from.strides[rank - 1]) * element, element);
      }
    }
    int i = rank - 2;
    for (; i >= 0; --i) {
      if (++index[i] < from.extents[i]) break;
      index[i] = 0;
    }
    if (i < 0) break;
  }
  return absl::OkStatus();
}

}  // namespace tiletune

#include "kernels/copy_reference.h"

#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/base/status_macros.h"

namespace tiletune {
namespace {

// Element offsets of a region's elements, in row-major order of its extents.
std::vector<int64_t> ElementOffsets(const Region& region) {
  std::vector<int64_t> offsets;
  offsets.reserve(region.NumElements());
  int rank = region.rank();
  std::vector<int64_t> index(rank, 0);
  for (int64_t n = 0; n < region.NumElements(); ++n) {
    int64_t offset = 0;
    for (int d = 0; d < rank; ++d) {
      offset += (region.offsets[d] + index[d]) * region.buffer.strides[d];
    }
    offsets.push_back(offset);
    for (int d = rank - 1; d >= 0; --d) {
      if (++index[d] < region.extents[d]) break;
      index[d] = 0;
    }
  }
  return offsets;
}

}  // namespace

size_t SpanBytes(const Buffer& buffer) {
  return static_cast<size_t>(buffer.SpanElements()) * DataTypeBytes(buffer.dtype);
}

absl::Status CopyReference(const CopyOp& op, const uint8_t* src, size_t src_bytes, uint8_t* dst,
                           size_t dst_bytes) {
  TT_RETURN_IF_ERROR(ValidateCopyOp(op));
  if (src_bytes < SpanBytes(op.src.buffer) || dst_bytes < SpanBytes(op.dst.buffer)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "reference copy needs ", SpanBytes(op.src.buffer), " src and ", SpanBytes(op.dst.buffer),
        " dst bytes; got ", src_bytes, " and ", dst_bytes));
  }
  int element = DataTypeBytes(op.src.buffer.dtype);
  std::vector<int64_t> from = ElementOffsets(op.src);
  std::vector<int64_t> to = ElementOffsets(op.dst);
  for (size_t i = 0; i < from.size(); ++i) {
    std::memcpy(dst + to[i] * element, src + from[i] * element, element);
  }
  return absl::OkStatus();
}

}  // namespace tiletune

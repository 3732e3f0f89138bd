#include "compiler/ops/copy/copy_reference.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/base/parallel.h"
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
  int64_t rows = 1;
  for (int i = 0; i + 1 < rank; ++i) rows *= from.extents[i];
  // Pieces of about 1 MiB at least, in parallel: whole rows, or, for contiguous rows of
  // more than 1 MiB, parts of a row. A part is found by its row's index.
  constexpr int64_t kPieceBytes = int64_t{1} << 20;
  const int64_t row_bytes = std::max<int64_t>(row * element, 1);
  const int64_t parts = contiguous ? std::max<int64_t>(row_bytes / kPieceBytes, 1) : 1;
  ParallelFor(rows * parts, kPieceBytes / row_bytes, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t r = item / parts, part = item % parts;
      int64_t s = from.base, d = to.base;
      for (int64_t i = rank - 2, rest = r; i >= 0; --i) {
        const int64_t at = rest % from.extents[i];
        rest /= from.extents[i];
        s += at * from.strides[i];
        d += at * to.strides[i];
      }
      if (contiguous) {
        const int64_t first = row_bytes * part / parts, last = row_bytes * (part + 1) / parts;
        std::memcpy(dst + d * element + first, src + s * element + first, last - first);
      } else {
        for (int64_t j = 0; j < row; ++j) {
          std::memcpy(dst + (d + j * to.strides[rank - 1]) * element,
                      src + (s + j * from.strides[rank - 1]) * element, element);
        }
      }
    }
  });
  return absl::OkStatus();
}

}  // namespace tiletune

#include "compiler/ops/im2col/im2col_reference.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/base/parallel.h"
#include "compiler/base/status_macros.h"
#include "compiler/ir/buffer.h"

namespace tiletune {

size_t Im2colColumnBytes(const Im2colOp& op) {
  return static_cast<size_t>(op.geometry.M()) * static_cast<size_t>(op.geometry.K()) *
         DataTypeBytes(op.img.dtype);
}

absl::Status Im2colReference(const Im2colOp& op, const uint8_t* img, size_t img_bytes,
                             uint8_t* col, size_t col_bytes) {
  TT_RETURN_IF_ERROR(ValidateIm2colOp(op));
  if (img_bytes < SpanBytes(op.img) || col_bytes < Im2colColumnBytes(op)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "reference im2col needs ", SpanBytes(op.img), " image and ", Im2colColumnBytes(op),
        " column bytes; got ", img_bytes, " and ", col_bytes));
  }
  const Im2colGeometry& g = op.geometry;
  const int e = DataTypeBytes(op.img.dtype);
  const std::vector<int64_t>& s = op.img.strides;
  const int64_t oh_count = g.OH(), ow_count = g.OW(), k_count = g.K();
  if (op.order == ColumnOrder::kChannelRows) {
    // Matrix rows (n, c, kh, kw) of OH*OW elements each, in parallel.
    const int64_t l = oh_count * ow_count;
    ParallelFor(g.n * k_count, (int64_t{1} << 20) / std::max<int64_t>(l * e, 1),
                [&](int64_t begin, int64_t end) {
                  for (int64_t r = begin; r < end; ++r) {
                    const int64_t n = r / k_count, c = r % k_count / (g.kh * g.kw);
                    const int64_t kh = r % (g.kh * g.kw) / g.kw, kw = r % g.kw;
                    uint8_t* row = col + r * l * e;
                    for (int64_t oh = 0; oh < oh_count; ++oh) {
                      for (int64_t ow = 0; ow < ow_count; ++ow) {
                        const int64_t ih = oh * g.sh - g.ph + kh * g.dh;
                        const int64_t iw = ow * g.sw - g.pw + kw * g.dw;
                        uint8_t* to = row + (oh * ow_count + ow) * e;
                        if (ih >= 0 && ih < g.h && iw >= 0 && iw < g.w) {
                          std::memcpy(to, img + (n * s[0] + ih * s[1] + iw * s[2] + c * s[3]) * e, e);
                        } else {
                          std::memset(to, 0, e);
                        }
                      }
                    }
                  }
                });
    return absl::OkStatus();
  }
  // Matrix rows in parallel, about 1 MiB of them per piece at least.
  const int64_t row_bytes = std::max<int64_t>(k_count * e, 1);
  ParallelFor(g.M(), (int64_t{1} << 20) / row_bytes, [&](int64_t begin, int64_t end) {
    for (int64_t m = begin; m < end; ++m) {
      const int64_t n = m / (oh_count * ow_count);
      const int64_t oh = m / ow_count % oh_count;
      const int64_t ow = m % ow_count;
      uint8_t* row = col + m * k_count * e;
      int64_t k = 0;
      for (int64_t kh = 0; kh < g.kh; ++kh) {
        for (int64_t kw = 0; kw < g.kw; ++kw) {
          int64_t ih = oh * g.sh - g.ph + kh * g.dh;
          int64_t iw = ow * g.sw - g.pw + kw * g.dw;
          bool inside = ih >= 0 && ih < g.h && iw >= 0 && iw < g.w;
          if (!inside) {
            std::memset(row + k * e, 0, g.c * e);
          } else if (s[3] == 1) {  // The pixel's channels are contiguous: one copy.
            std::memcpy(row + k * e, img + (n * s[0] + ih * s[1] + iw * s[2]) * e, g.c * e);
          } else {
            for (int64_t c = 0; c < g.c; ++c) {
              const uint8_t* from = img + (n * s[0] + ih * s[1] + iw * s[2] + c * s[3]) * e;
              std::memcpy(row + (k + c) * e, from, e);
            }
          }
          k += g.c;
        }
      }
    }
  });
  return absl::OkStatus();
}

}  // namespace tiletune

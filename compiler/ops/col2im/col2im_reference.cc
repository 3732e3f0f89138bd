#include "compiler/ops/col2im/col2im_reference.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/base/parallel.h"

namespace tiletune {
namespace {

uint32_t FloatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float BitsFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

float Load(DataType dtype, const uint8_t* p) {
  if (dtype == DataType::kF32) {
    float value;
    std::memcpy(&value, p, sizeof(value));
    return value;
  }
  uint16_t bits;
  std::memcpy(&bits, p, sizeof(bits));
  return dtype == DataType::kF16 ? HalfBitsToFloat(bits) : Bf16BitsToFloat(bits);
}

void Store(DataType dtype, float value, uint8_t* p) {
  if (dtype == DataType::kF32) {
    const uint32_t bits = std::isnan(value) ? 0x7fffffffu : FloatBits(value);
    std::memcpy(p, &bits, sizeof(bits));
    return;
  }
  const uint16_t bits = dtype == DataType::kF16 ? FloatToHalfBits(value) : FloatToBf16Bits(value);
  std::memcpy(p, &bits, sizeof(bits));
}

}  // namespace

float HalfBitsToFloat(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t mantissa = bits & 0x3ff;
  if (exponent == 0x1f) return BitsFloat(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0) return BitsFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
  if (mantissa == 0) return BitsFloat(sign);
  // Subnormal: normalise.
  int e = -1;
  do {
    ++e;
    mantissa <<= 1;
  } while ((mantissa & 0x400) == 0);
  return BitsFloat(sign | static_cast<uint32_t>(112 - e) << 23 | ((mantissa & 0x3ff) << 13));
}

float Bf16BitsToFloat(uint16_t bits) { return BitsFloat(static_cast<uint32_t>(bits) << 16); }

uint16_t FloatToHalfBits(float value) {
  const uint32_t x = FloatBits(value);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  const int exponent = static_cast<int>((x >> 23) & 0xff);
  const uint32_t mantissa = x & 0x7fffff;
  if (exponent == 0xff) return mantissa != 0 ? 0x7fff : static_cast<uint16_t>(sign | 0x7c00);
  if (exponent == 0) return sign;  // f32 zero or subnormal: below half's range
  const int e = exponent - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00);
  if (e >= 1) {
    uint32_t half = (static_cast<uint32_t>(e) << 10) | (mantissa >> 13);
    const uint32_t rest = mantissa & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;  // may carry to infinity
    return static_cast<uint16_t>(sign | half);
  }
  // A half subnormal (or zero): the 24-bit significand shifted right by 14 - e.
  const int shift = 14 - e;
  if (shift > 24) return sign;
  const uint32_t significand = mantissa | 0x800000;
  uint32_t half = significand >> shift;
  const uint32_t rest = significand & ((1u << shift) - 1);
  const uint32_t halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (half & 1))) ++half;
  return static_cast<uint16_t>(sign | half);
}

uint16_t FloatToBf16Bits(float value) {
  const uint32_t x = FloatBits(value);
  if ((x & 0x7fffffff) > 0x7f800000) return 0x7fff;
  return static_cast<uint16_t>((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

absl::Status Col2imReference(const Col2imOp& op, const uint8_t* col, size_t col_bytes,
                             uint8_t* img, size_t img_bytes) {
  const Im2colGeometry& g = op.geometry;
  const DataType dtype = op.img.dtype;
  const int64_t e = DataTypeBytes(dtype);
  if (col_bytes != static_cast<size_t>(Col2imColumnBytes(op))) {
    return absl::InvalidArgumentError(absl::StrCat("col2im reference: the column matrix is ",
                                                   col_bytes, " bytes; expected ",
                                                   Col2imColumnBytes(op)));
  }
  if (img_bytes != SpanBytes(op.img)) {
    return absl::InvalidArgumentError(absl::StrCat("col2im reference: the image is ", img_bytes,
                                                   " bytes; expected ", SpanBytes(op.img)));
  }
  const int64_t oh_count = g.OH(), ow_count = g.OW(), k = g.K();
  const std::vector<int64_t>& s = op.img.strides;
  // Image rows (n, h) in parallel; each element's sum is one thread's, in the documented
  // order, so the bits do not depend on the split.
  const int64_t row_elements = std::max<int64_t>(g.w * g.c * g.kh * g.kw, 1);
  ParallelFor(g.n * g.h, (int64_t{1} << 18) / row_elements, [&](int64_t begin, int64_t end) {
    for (int64_t nh = begin; nh < end; ++nh) {
      const int64_t n = nh / g.h, h = nh % g.h;
      for (int64_t w = 0; w < g.w; ++w) {
        for (int64_t c = 0; c < g.c; ++c) {
          float sum = 0.0f;
          if (op.order == ColumnOrder::kChannelRows) {
            // F.fold's layout and order: kh descending, then kw descending.
            const int64_t l = oh_count * ow_count;
            for (int64_t kh = g.kh - 1; kh >= 0; --kh) {
              const int64_t th = h + g.ph - kh * g.dh;
              if (th < 0 || th % g.sh != 0 || th / g.sh >= oh_count) continue;
              const int64_t oh = th / g.sh;
              for (int64_t kw = g.kw - 1; kw >= 0; --kw) {
                const int64_t tw = w + g.pw - kw * g.dw;
                if (tw < 0 || tw % g.sw != 0 || tw / g.sw >= ow_count) continue;
                const int64_t row = (n * g.c + c) * g.kh * g.kw + kh * g.kw + kw;
                sum += Load(dtype, col + (row * l + oh * ow_count + tw / g.sw) * e);
              }
            }
            Store(dtype, sum, img + (n * s[0] + h * s[1] + w * s[2] + c * s[3]) * e);
            continue;
          }
          for (int64_t kh = 0; kh < g.kh; ++kh) {
            const int64_t th = h + g.ph - kh * g.dh;
            if (th < 0 || th % g.sh != 0 || th / g.sh >= oh_count) continue;
            const int64_t oh = th / g.sh;
            for (int64_t kw = 0; kw < g.kw; ++kw) {
              const int64_t tw = w + g.pw - kw * g.dw;
              if (tw < 0 || tw % g.sw != 0 || tw / g.sw >= ow_count) continue;
              const int64_t ow = tw / g.sw;
              const int64_t index =
                  ((n * oh_count + oh) * ow_count + ow) * k + (kh * g.kw + kw) * g.c + c;
              sum += Load(dtype, col + index * e);
            }
          }
          Store(dtype, sum, img + (n * s[0] + h * s[1] + w * s[2] + c * s[3]) * e);
        }
      }
    }
  });
  return absl::OkStatus();
}

}  // namespace tiletune

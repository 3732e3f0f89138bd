// The col2im CPU reference: the adjoint identity with im2col, the documented summation
// order and single rounding, and the f16 / bf16 conversions it shares with the kernels.
#include "compiler/ops/col2im/col2im_reference.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "compiler/ir/buffer.h"
#include "compiler/ops/im2col/conv_spec.h"
#include "compiler/ops/im2col/im2col_op.h"
#include "compiler/ops/im2col/im2col_reference.h"
#include "compiler/ops/im2col/im2col_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

using ::testing::HasSubstr;

uint16_t Bits16(const std::vector<uint8_t>& bytes, size_t element) {
  uint16_t bits;
  std::memcpy(&bits, bytes.data() + 2 * element, 2);
  return bits;
}

float F32(const std::vector<uint8_t>& bytes, size_t element) {
  float value;
  std::memcpy(&value, bytes.data() + 4 * element, 4);
  return value;
}

// The element's value in `dtype`, widened to float.
float Value(DataType dtype, const std::vector<uint8_t>& bytes, size_t element) {
  if (dtype == DataType::kF32) return F32(bytes, element);
  const uint16_t bits = Bits16(bytes, element);
  return dtype == DataType::kF16 ? HalfBitsToFloat(bits) : Bf16BitsToFloat(bits);
}

void Put(DataType dtype, float value, std::vector<uint8_t>& bytes, size_t element) {
  if (dtype == DataType::kF32) {
    std::memcpy(bytes.data() + 4 * element, &value, 4);
    return;
  }
  const uint16_t bits = dtype == DataType::kF16 ? FloatToHalfBits(value) : FloatToBf16Bits(value);
  std::memcpy(bytes.data() + 2 * element, &bits, 2);
}

// How many windows cover input position x along one axis.
int64_t Coverage(int64_t x, int64_t size_out, int64_t kernel, int64_t stride, int64_t dilation,
                 int64_t pad) {
  int64_t count = 0;
  for (int64_t k = 0; k < kernel; ++k) {
    const int64_t t = x + pad - k * dilation;
    if (t >= 0 && t % stride == 0 && t / stride < size_out) ++count;
  }
  return count;
}

TEST(Col2imReferenceTest, IsTheAdjointOfIm2col) {
  // col2im(im2col(x)) = x times the number of windows covering each pixel, exactly: small
  // integers sum exactly in every type.
  std::mt19937_64 rng(7);
  const Im2colGeometry geometries[] = {
      G(2, 7, 9, 3, 3, 3, 1, 1, 1, 1, 1, 1),  G(1, 11, 8, 7, 3, 5, 2, 1, 1, 2, 1, 4),
      G(2, 9, 9, 1, 2, 2, 3, 3, 1, 1, 0, 0),  // stride > kernel: pixels no window reaches
      G(1, 6, 10, 5, 1, 1, 1, 2, 1, 1, 0, 0), G(1, 13, 12, 2, 7, 7, 2, 2, 1, 1, 3, 3),
      G(3, 5, 5, 4, 3, 2, 1, 1, 2, 2, 2, 1),
      G(2, 120, 130, 3, 3, 3, 1, 1, 1, 1, 1, 1),  // large enough to be summed on threads
  };
  for (DataType dtype : {DataType::kF32, DataType::kF16, DataType::kBF16}) {
    for (const Im2colGeometry& g : geometries) {
      SCOPED_TRACE(Im2colGeometryToString(g));
      ASSERT_TRUE(ValidateConvGeometry(g, "col2im").ok());
      const int e = DataTypeBytes(dtype);
      Im2colOp forward = Im2colOp::Dense(dtype, g);
      Col2imOp backward = Col2imOp::Dense(dtype, g);
      const size_t pixels = static_cast<size_t>(g.n * g.h * g.w * g.c);
      std::vector<uint8_t> x(pixels * e);
      for (size_t i = 0; i < pixels; ++i) {
        Put(dtype, static_cast<float>(static_cast<int>(rng() % 7) - 3), x, i);
      }
      std::vector<uint8_t> col(static_cast<size_t>(Col2imColumnBytes(backward)));
      ASSERT_TRUE(Im2colReference(forward, x.data(), x.size(), col.data(), col.size()).ok());
      std::vector<uint8_t> back(x.size(), 0xab);
      ASSERT_TRUE(Col2imReference(backward, col.data(), col.size(), back.data(), back.size()).ok());
      for (int64_t n = 0; n < g.n; ++n) {
        for (int64_t h = 0; h < g.h; ++h) {
          for (int64_t w = 0; w < g.w; ++w) {
            const int64_t count = Coverage(h, g.OH(), g.kh, g.sh, g.dh, g.ph) *
                                  Coverage(w, g.OW(), g.kw, g.sw, g.dw, g.pw);
            for (int64_t c = 0; c < g.c; ++c) {
              const size_t i = static_cast<size_t>(((n * g.h + h) * g.w + w) * g.c + c);
              ASSERT_EQ(Value(dtype, back, i), Value(dtype, x, i) * static_cast<float>(count))
                  << DataTypeName(dtype) << " n" << n << " h" << h << " w" << w << " c" << c;
            }
          }
        }
      }
    }
  }
}

TEST(Col2imReferenceTest, SumsInF32AndRoundsOnce) {
  // Three taps onto one pixel (1-D, kernel 3, stride 1, pad 2 on a 1-wide image: every tap
  // of three windows lands on it). 1 + 2^-11 + 2^-11 is 1 + 2^-10 in f32, an f16 value;
  // rounding after each add would give 1.
  const Im2colGeometry g = G(1, 1, 1, 1, 1, 3, 1, 1, 1, 1, 0, 2);
  ASSERT_EQ(g.OW(), 3);
  Col2imOp op = Col2imOp::Dense(DataType::kF16, g);
  std::vector<uint8_t> col(static_cast<size_t>(Col2imColumnBytes(op)), 0);  // [3, 3]
  // Row ow takes tap kw = 2 - ow onto the pixel; the order of the sum is kw ascending.
  const float values[3] = {1.0f, std::ldexp(1.0f, -11), std::ldexp(1.0f, -11)};
  for (int ow = 0; ow < 3; ++ow) {
    const uint16_t bits = FloatToHalfBits(values[2 - ow]);
    std::memcpy(col.data() + 2 * (ow * 3 + (2 - ow)), &bits, 2);
  }
  std::vector<uint8_t> img(2);
  ASSERT_TRUE(Col2imReference(op, col.data(), col.size(), img.data(), img.size()).ok());
  EXPECT_EQ(HalfBitsToFloat(Bits16(img, 0)), 1.0f + std::ldexp(1.0f, -10));
}

TEST(Col2imReferenceTest, LeavesGapsOfAStridedImageAlone) {
  const Im2colGeometry g = G(1, 2, 2, 1, 1, 1);
  Col2imOp op = Col2imOp::Dense(DataType::kF32, g);
  op.img.strides = {8, 4, 2, 1};  // every other element is a gap
  std::vector<uint8_t> col(16);
  for (int i = 0; i < 4; ++i) {
    const float v = static_cast<float>(i + 1);
    std::memcpy(col.data() + 4 * i, &v, 4);
  }
  std::vector<uint8_t> img(SpanBytes(op.img), 0xee);
  ASSERT_TRUE(Col2imReference(op, col.data(), col.size(), img.data(), img.size()).ok());
  EXPECT_EQ(F32(img, 0), 1.0f);
  EXPECT_EQ(F32(img, 2), 2.0f);
  EXPECT_EQ(F32(img, 4), 3.0f);
  EXPECT_EQ(F32(img, 6), 4.0f);
  for (size_t gap : {1u, 3u, 5u}) EXPECT_EQ(img[4 * gap], 0xee) << gap;
}

TEST(Col2imReferenceTest, RejectsWrongSizes) {
  const Col2imOp op = Col2imOp::Dense(DataType::kF16, G(1, 4, 4, 2, 3, 3, 1, 1, 1, 1, 1, 1));
  std::vector<uint8_t> col(static_cast<size_t>(Col2imColumnBytes(op)));
  std::vector<uint8_t> img(SpanBytes(op.img));
  EXPECT_THAT(Col2imReference(op, col.data(), col.size() - 2, img.data(), img.size()).message(),
              HasSubstr("column matrix is"));
  EXPECT_THAT(Col2imReference(op, col.data(), col.size(), img.data(), img.size() + 2).message(),
              HasSubstr("the image is"));
}

TEST(HalfConversionTest, RoundsToNearestEvenWithInfinitiesSubnormalsAndCanonicalNaN) {
  EXPECT_EQ(FloatToHalfBits(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalfBits(-2.0f), 0xc000);
  EXPECT_EQ(FloatToHalfBits(-0.0f), 0x8000);
  EXPECT_EQ(FloatToHalfBits(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalfBits(65519.0f), 0x7bff);  // below the halfway point to 65536
  EXPECT_EQ(FloatToHalfBits(65520.0f), 0x7c00);  // the halfway point rounds to even: inf
  EXPECT_EQ(FloatToHalfBits(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(FloatToHalfBits(std::nanf("")), 0x7fff);
  EXPECT_EQ(FloatToHalfBits(-std::nanf("")), 0x7fff);
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.0f, -24)), 0x0001);        // smallest subnormal
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.0f, -25)), 0x0000);        // halfway: to even, 0
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1.5f, -25)), 0x0001);        // above halfway
  EXPECT_EQ(FloatToHalfBits(std::ldexp(3.0f, -25)), 0x0002);        // 1.5 ulp: to even
  EXPECT_EQ(FloatToHalfBits(std::ldexp(1023.5f, -24)), 0x0400);     // carries to normal
  EXPECT_EQ(FloatToHalfBits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie to even
  EXPECT_EQ(FloatToHalfBits(1.0f + std::ldexp(3.0f, -11)), 0x3c02);  // tie to even, up
  // Widening is exact and inverts rounding on every non-NaN half.
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    if ((bits & 0x7c00) == 0x7c00 && (bits & 0x3ff) != 0) continue;  // NaN
    ASSERT_EQ(FloatToHalfBits(HalfBitsToFloat(static_cast<uint16_t>(bits))), bits) << bits;
  }
}

TEST(Bf16ConversionTest, RoundsToNearestEvenWithCanonicalNaN) {
  EXPECT_EQ(FloatToBf16Bits(1.0f), 0x3f80);
  EXPECT_EQ(FloatToBf16Bits(1.0f + std::ldexp(1.0f, -8)), 0x3f80);   // tie to even
  EXPECT_EQ(FloatToBf16Bits(1.0f + std::ldexp(3.0f, -8)), 0x3f82);   // tie to even, up
  EXPECT_EQ(FloatToBf16Bits(std::numeric_limits<float>::max()), 0x7f80);  // rounds to inf
  EXPECT_EQ(FloatToBf16Bits(std::nanf("")), 0x7fff);
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    if ((bits & 0x7f80) == 0x7f80 && (bits & 0x7f) != 0) continue;  // NaN
    ASSERT_EQ(FloatToBf16Bits(Bf16BitsToFloat(static_cast<uint16_t>(bits))), bits) << bits;
  }
}

}  // namespace
}  // namespace tiletune

namespace tiletune {
namespace {

// F.fold's layout is the adjoint of F.unfold's: <im2col(x), y> = <x, col2im(y)> on small
// integers (exact in f32), and the channel_rows sums equal the pixel_rows ones on the same
// entries transposed.
TEST(Col2imReferenceTest, ChannelRowsFoldIsTheAdjointOfChannelRowsUnfold) {
  const Im2colGeometry g = G(2, 9, 11, 3, 3, 2, 2, 1, 1, 2, 1, 1);
  Im2colOp unfold = Im2colOp::Dense(DataType::kF32, g);
  unfold.img.strides = NchwStrides(g);
  unfold.order = ColumnOrder::kChannelRows;
  Col2imOp fold = Col2imOp::Dense(DataType::kF32, g);
  fold.img.strides = unfold.img.strides;
  fold.order = ColumnOrder::kChannelRows;
  const int64_t image = g.n * g.h * g.w * g.c, columns = g.M() * g.K();
  std::vector<float> x(image), y(columns), ux(columns), fy(image);
  for (int64_t i = 0; i < image; ++i) x[i] = static_cast<float>(i % 7 - 3);
  for (int64_t i = 0; i < columns; ++i) y[i] = static_cast<float>(i % 5 - 2);
  ASSERT_TRUE(Im2colReference(unfold, reinterpret_cast<const uint8_t*>(x.data()), image * 4,
                              reinterpret_cast<uint8_t*>(ux.data()), columns * 4)
                  .ok());
  ASSERT_TRUE(Col2imReference(fold, reinterpret_cast<const uint8_t*>(y.data()), columns * 4,
                              reinterpret_cast<uint8_t*>(fy.data()), image * 4)
                  .ok());
  double left = 0, right = 0;
  for (int64_t i = 0; i < columns; ++i) left += double(ux[i]) * y[i];
  for (int64_t i = 0; i < image; ++i) right += double(x[i]) * fy[i];
  EXPECT_EQ(left, right);
  EXPECT_NE(left, 0.0);
}

}  // namespace
}  // namespace tiletune

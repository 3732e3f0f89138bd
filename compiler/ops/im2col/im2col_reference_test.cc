#include "compiler/ops/im2col/im2col_reference.h"

#include <cstdint>
#include <numeric>
#include <vector>

#include "compiler/ops/im2col/im2col_test_util.h"
#include "gtest/gtest.h"
#include "compiler/ir/buffer.h"

namespace tiletune {
namespace {

std::vector<int32_t> RunReference(const Im2colOp& op, const std::vector<int32_t>& img) {
  std::vector<int32_t> col(op.geometry.M() * op.geometry.K(), -7);
  absl::Status status = Im2colReference(op, reinterpret_cast<const uint8_t*>(img.data()),
                                        img.size() * 4, reinterpret_cast<uint8_t*>(col.data()),
                                        col.size() * 4);
  EXPECT_TRUE(status.ok()) << status;
  return col;
}

TEST(Im2colReferenceTest, ValidWindowsNoPadding) {
  // 3x3 image 0..8, 2x2 kernel: four windows.
  Im2colOp op = Im2colOp::Dense(DataType::kI32, G(1, 3, 3, 1, 2, 2, 1, 1, 1, 1, 0, 0));
  std::vector<int32_t> img(9);
  std::iota(img.begin(), img.end(), 0);
  EXPECT_EQ(RunReference(op, img), (std::vector<int32_t>{0, 1, 3, 4,  //
                                                1, 2, 4, 5,  //
                                                3, 4, 6, 7,  //
                                                4, 5, 7, 8}));
}

// A matrix of megabytes is made on several threads, each from a row in the middle of an
// image: every entry is still the pixel (or zero) its window position names.
TEST(Im2colReferenceTest, LargeMatricesMatchTheDefinition) {
  const Im2colGeometry g = G(3, 150, 170, 3, 3, 5, 2, 1, 1, 2, 1, 3);
  Im2colOp op = Im2colOp::Dense(DataType::kI32, g);
  std::vector<int32_t> img(g.n * g.h * g.w * g.c);
  std::iota(img.begin(), img.end(), 1);
  const std::vector<int32_t> col = RunReference(op, img);
  ASSERT_GT(col.size() * 4, size_t{4} << 20);
  int64_t index = 0;
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t oh = 0; oh < g.OH(); ++oh) {
      for (int64_t ow = 0; ow < g.OW(); ++ow) {
        for (int64_t kh = 0; kh < g.kh; ++kh) {
          for (int64_t kw = 0; kw < g.kw; ++kw) {
            for (int64_t c = 0; c < g.c; ++c, ++index) {
              const int64_t ih = oh * g.sh - g.ph + kh * g.dh, iw = ow * g.sw - g.pw + kw * g.dw;
              const bool inside = ih >= 0 && ih < g.h && iw >= 0 && iw < g.w;
              const int32_t want = inside ? img[((n * g.h + ih) * g.w + iw) * g.c + c] : 0;
              ASSERT_EQ(col[index], want) << "entry " << index;
            }
          }
        }
      }
    }
  }
}

TEST(Im2colReferenceTest, WidthPaddingStrideAndChannelsFastest) {
  // H=2 W=3 C=2, kernel 1x2, stride 1x2, pad 0x1: pixel (h, w) holds 10*(3h+w)+1+c.
  Im2colOp op = Im2colOp::Dense(DataType::kI32, G(1, 2, 3, 2, 1, 2, 1, 2, 1, 1, 0, 1));
  ASSERT_EQ(op.geometry.OH(), 2);
  ASSERT_EQ(op.geometry.OW(), 2);
  std::vector<int32_t> img;
  for (int p = 0; p < 6; ++p) {
    for (int c = 0; c < 2; ++c) img.push_back(10 * p + 1 + c);
  }
  EXPECT_EQ(RunReference(op, img), (std::vector<int32_t>{0, 0, 1, 2,      //
                                                11, 12, 21, 22,  //
                                                0, 0, 31, 32,    //
                                                41, 42, 51, 52}));
}

TEST(Im2colReferenceTest, DilationBatchesAndPaddingBelow) {
  // N=2 H=4 W=1, kernel 2x1 with dh=2, pad 1x0: taps at ih = oh - 1 and oh + 1.
  Im2colOp op = Im2colOp::Dense(DataType::kI32, G(2, 4, 1, 1, 2, 1, 1, 1, 2, 1, 1, 0));
  ASSERT_EQ(op.geometry.OH(), 4);
  std::vector<int32_t> img = {1, 2, 3, 4, 101, 102, 103, 104};
  EXPECT_EQ(RunReference(op, img), (std::vector<int32_t>{0, 2, 1, 3, 2, 4, 3, 0,  //
                                                0, 102, 101, 103, 102, 104, 103, 0}));
}

TEST(Im2colReferenceTest, StridedImage) {
  // A 2x2 single-channel image stored with gaps: W stride 2, H stride 5.
  Im2colOp op = Im2colOp::Dense(DataType::kI32, G(1, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0, 0));
  op.img.strides = {10, 5, 2, 1};
  std::vector<int32_t> img(SpanBytes(op.img) / 4);
  std::iota(img.begin(), img.end(), 0);
  EXPECT_EQ(RunReference(op, img), (std::vector<int32_t>{0, 2, 5, 7}));
}

TEST(Im2colReferenceTest, EveryByteOfWideElementsMoves) {
  Im2colOp op = Im2colOp::Dense(DataType::kF64, G(1, 1, 2, 1, 1, 2, 1, 1, 1, 1, 0, 1));
  // OW = (2 + 2 - 2) + 1 = 3 windows of [pad|x0], [x0|x1], [x1|pad].
  std::vector<uint8_t> img(16);
  std::iota(img.begin(), img.end(), 1);
  std::vector<uint8_t> col(Im2colColumnBytes(op), 0xee);
  ASSERT_EQ(col.size(), 3u * 2 * 8);
  ASSERT_TRUE(Im2colReference(op, img.data(), img.size(), col.data(), col.size()).ok());
  std::vector<uint8_t> expected(48, 0);
  for (int i = 0; i < 8; ++i) {
    expected[8 + i] = img[i];
    expected[16 + i] = img[i];
    expected[24 + i] = img[8 + i];
    expected[32 + i] = img[8 + i];
  }
  EXPECT_EQ(col, expected);
}

TEST(Im2colReferenceTest, RejectsShortBuffersAndBadOps) {
  Im2colOp op = Im2colOp::Dense(DataType::kF32, G(1, 4, 4, 2, 3, 3, 1, 1, 1, 1, 1, 1));
  std::vector<uint8_t> img(SpanBytes(op.img)), col(Im2colColumnBytes(op));
  EXPECT_TRUE(Im2colReference(op, img.data(), img.size(), col.data(), col.size()).ok());
  EXPECT_FALSE(Im2colReference(op, img.data(), img.size() - 1, col.data(), col.size()).ok());
  EXPECT_FALSE(Im2colReference(op, img.data(), img.size(), col.data(), col.size() - 4).ok());
  op.geometry.ph = 3;
  EXPECT_FALSE(Im2colReference(op, img.data(), img.size(), col.data(), col.size()).ok());
}

}  // namespace
}  // namespace tiletune

namespace tiletune {
namespace {

// F.unfold's layout holds the same elements as the pixel-row matrix, transposed per image:
// element (n, (c*KH + kh)*KW + kw, oh*OW + ow) of one is ((n*OH + oh)*OW + ow, (kh*KW + kw)*C
// + c) of the other, for an NCHW image as for an NHWC one.
TEST(Im2colReferenceTest, ChannelRowsAreThePixelRowsTransposed) {
  const Im2colGeometry g = G(2, 9, 11, 3, 3, 2, 2, 1, 1, 2, 1, 1);
  Im2colOp pixel = Im2colOp::Dense(DataType::kI32, g);
  Im2colOp channel = pixel;
  channel.order = ColumnOrder::kChannelRows;
  std::vector<int32_t> img(g.n * g.h * g.w * g.c);
  std::iota(img.begin(), img.end(), 1);
  const std::vector<int32_t> rows = RunReference(pixel, img);
  const std::vector<int32_t> planes = RunReference(channel, img);
  const int64_t l = g.OH() * g.OW(), taps = g.kh * g.kw;
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t c = 0; c < g.c; ++c) {
      for (int64_t tap = 0; tap < taps; ++tap) {
        for (int64_t p = 0; p < l; ++p) {
          ASSERT_EQ(planes[((n * g.c + c) * taps + tap) * l + p],
                    rows[(n * l + p) * g.K() + tap * g.c + c])
              << "n " << n << " c " << c << " tap " << tap << " p " << p;
        }
      }
    }
  }
}

}  // namespace
}  // namespace tiletune

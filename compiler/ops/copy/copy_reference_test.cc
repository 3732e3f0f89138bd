#include "compiler/ops/copy/copy_reference.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace tiletune {
namespace {

TEST(CopyReferenceTest, CopiesASliceIntoASlice) {
  Buffer src_buffer = Buffer::RowMajor("src", DataType::kI32, Scope::kGlobal, {4, 5});
  Buffer dst_buffer = Buffer::RowMajor("dst", DataType::kI32, Scope::kGlobal, {3, 6});
  CopyOp op{Region::Box(src_buffer, {1, 2}, {2, 3}), Region::Box(dst_buffer, {0, 3}, {2, 3})};
  std::vector<int32_t> src(20), dst(18, -1);
  std::iota(src.begin(), src.end(), 0);
  ASSERT_TRUE(CopyReference(op, reinterpret_cast<uint8_t*>(src.data()), 80,
                            reinterpret_cast<uint8_t*>(dst.data()), 72)
                  .ok());
  std::vector<int32_t> expected = {-1, -1, -1, 7, 8, 9, -1, -1, -1, 12, 13, 14,
                                   -1, -1, -1, -1, -1, -1};
  EXPECT_EQ(dst, expected);
}

TEST(CopyReferenceTest, UnitDimensionsLineUp) {
  Buffer src_buffer = Buffer::RowMajor("src", DataType::kU8, Scope::kGlobal, {1, 4, 1});
  Buffer dst_buffer = Buffer::RowMajor("dst", DataType::kU8, Scope::kGlobal, {4});
  CopyOp op{Region::Whole(src_buffer), Region::Whole(dst_buffer)};
  std::vector<uint8_t> src = {9, 8, 7, 6}, dst(4, 0);
  ASSERT_TRUE(CopyReference(op, src.data(), 4, dst.data(), 4).ok());
  EXPECT_EQ(dst, src);
}

// The row-wise reference against an element-by-element walk, over random ranks, slices
// and (transposed, padded) strides. The last trials are megabytes, which the reference
// splits over threads at rows in the middle of its index space.
TEST(CopyReferenceTest, MatchesANaiveWalkOnRandomRegions) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 208; ++trial) {
    const bool large = trial >= 200;
    int rank = large ? 3 : 1 + rng() % 4;
    std::vector<int64_t> extents(rank);
    for (auto& e : extents) e = 1 + rng() % 5;
    if (large) {
      extents = {int64_t(20 + rng() % 30), int64_t(100 + rng() % 200), int64_t(1 + rng() % 200)};
    }
    auto make = [&](const char* name) {
      std::vector<int64_t> shape(rank), offsets(rank);
      for (int d = 0; d < rank; ++d) {
        offsets[d] = rng() % 3;
        shape[d] = extents[d] + offsets[d] + rng() % 2;
      }
      Buffer b = Buffer::RowMajor(name, DataType::kI32, Scope::kGlobal, shape);
      if (rng() % 2) {  // Reverse the stride order: the innermost dimension becomes strided.
        int64_t stride = 1;
        for (int d = 0; d < rank; ++d) {
          b.strides[d] = stride;
          stride *= shape[d] + 1;  // Padded.
        }
      }
      return Region::Box(b, offsets, extents);
    };
    CopyOp op{make("src"), make("dst")};
    size_t src_bytes = SpanBytes(op.src.buffer), dst_bytes = SpanBytes(op.dst.buffer);
    std::vector<uint8_t> src(src_bytes), fast(dst_bytes, 0xEE), naive(dst_bytes, 0xEE);
    for (auto& b : src) b = static_cast<uint8_t>(rng());
    ASSERT_TRUE(CopyReference(op, src.data(), src_bytes, fast.data(), dst_bytes).ok());
    std::vector<int64_t> index(rank, 0);
    for (int64_t n = 0; n < op.src.NumElements(); ++n) {
      int64_t s = 0, d = 0;
      for (int i = 0; i < rank; ++i) {
        s += (op.src.offsets[i] + index[i]) * op.src.buffer.strides[i];
        d += (op.dst.offsets[i] + index[i]) * op.dst.buffer.strides[i];
      }
      std::memcpy(naive.data() + d * 4, src.data() + s * 4, 4);
      for (int i = rank - 1; i >= 0; --i) {
        if (++index[i] < extents[i]) break;
        index[i] = 0;
      }
    }
    ASSERT_EQ(fast, naive) << "trial " << trial;
  }
}

// A contiguous row of megabytes is copied in parts, on several threads.
TEST(CopyReferenceTest, LongRowsAreCopiedWhole) {
  const int64_t n = (int64_t{5} << 20) + 3;
  Buffer src_buffer = Buffer::RowMajor("src", DataType::kU8, Scope::kGlobal, {n + 7});
  Buffer dst_buffer = Buffer::RowMajor("dst", DataType::kU8, Scope::kGlobal, {n});
  CopyOp op{Region::Box(src_buffer, {7}, {n}), Region::Whole(dst_buffer)};
  std::vector<uint8_t> src(n + 7), dst(n, 0xEE);
  std::mt19937 rng(7);
  for (auto& b : src) b = static_cast<uint8_t>(rng());
  ASSERT_TRUE(CopyReference(op, src.data(), src.size(), dst.data(), dst.size()).ok());
  EXPECT_TRUE(std::equal(dst.begin(), dst.end(), src.begin() + 7));
}

TEST(CopyReferenceTest, RejectsShortImages) {
  Buffer buffer = Buffer::RowMajor("b", DataType::kF32, Scope::kGlobal, {8});
  CopyOp op{Region::Whole(buffer), Region::Whole(buffer)};
  std::vector<uint8_t> small(16);
  EXPECT_FALSE(CopyReference(op, small.data(), 16, small.data(), 16).ok());
}

}  // namespace
}  // namespace tiletune

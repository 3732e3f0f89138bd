#include "kernels/copy_reference.h"

#include <cstdint>
#include <numeric>
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

TEST(CopyReferenceTest, RejectsShortImages) {
  Buffer buffer = Buffer::RowMajor("b", DataType::kF32, Scope::kGlobal, {8});
  CopyOp op{Region::Whole(buffer), Region::Whole(buffer)};
  std::vector<uint8_t> small(16);
  EXPECT_FALSE(CopyReference(op, small.data(), 16, small.data(), 16).ok());
}

}  // namespace
}  // namespace tiletune

// CPU tests of the runner's tensor-map cache (the encoder is a fake: no driver needed).
#include "kernels/tile_kernel.h"

#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(TensorMapCacheTest, EncodesEachPairOnceAndEvictsTheLeastRecent) {
  TensorMapCache cache;
  int encodes = 0;
  auto encoder = [&](CUdeviceptr tag) {
    return [&encodes, tag]() -> absl::StatusOr<std::vector<CUtensorMap>> {
      ++encodes;
      CUtensorMap map;
      std::memset(&map, 0, sizeof(map));
      std::memcpy(&map, &tag, sizeof(tag));
      return std::vector<CUtensorMap>{map};
    };
  };
  auto tag_of = [](const std::vector<CUtensorMap>* maps) {
    CUdeviceptr tag = 0;
    std::memcpy(&tag, &(*maps)[0], sizeof(tag));
    return tag;
  };
  // Fill the cache, then hit every pair again: no new encodes.
  for (CUdeviceptr p = 1; p <= TensorMapCache::kMaxPairs; ++p) {
    auto maps = cache.Get(p * 256, p * 512, encoder(p));
    ASSERT_TRUE(maps.ok());
    EXPECT_EQ(tag_of(*maps), p);
  }
  EXPECT_EQ(encodes, static_cast<int>(TensorMapCache::kMaxPairs));
  for (CUdeviceptr p = 1; p <= TensorMapCache::kMaxPairs; ++p) {
    auto maps = cache.Get(p * 256, p * 512, encoder(1000 + p));
    ASSERT_TRUE(maps.ok());
    EXPECT_EQ(tag_of(*maps), p);  // Cached, not re-encoded.
  }
  EXPECT_EQ(encodes, static_cast<int>(TensorMapCache::kMaxPairs));
  // A new pair evicts the least recently used one (pair 1), and only that one.
  ASSERT_TRUE(cache.Get(999 * 256, 999 * 512, encoder(999)).ok());
  ASSERT_TRUE(cache.Get(2 * 256, 2 * 512, encoder(2002)).ok());
  EXPECT_EQ(encodes, static_cast<int>(TensorMapCache::kMaxPairs) + 1);
  auto again = cache.Get(1 * 256, 1 * 512, encoder(1001));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(tag_of(*again), 1001u);
  // The same source with another destination is another pair.
  ASSERT_TRUE(cache.Get(2 * 256, 7, encoder(3)).ok());
  EXPECT_EQ(encodes, static_cast<int>(TensorMapCache::kMaxPairs) + 3);
}

TEST(CheckTileOperandsTest, NamesEachMisalignedStart) {
  LoweredTileKernel lowered;
  lowered.op = "im2col";
  lowered.input_name = "img";
  lowered.output_name = "col";
  lowered.kernel_name = "tt_im2col_simt";
  lowered.path_name = "simt";
  EXPECT_TRUE(CheckTileOperands(lowered, 0x1000, 0x2010).ok());
  absl::Status one = CheckTileOperands(lowered, 0x1000, 0x2008);
  EXPECT_EQ(one.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(one.message()), HasSubstr("col starts at 0x2008, not a multiple of 16 B"));
  EXPECT_THAT(std::string(one.message()), Not(HasSubstr("img starts")));
  absl::Status both = CheckTileOperands(lowered, 0x1002, 0x2008);
  EXPECT_THAT(std::string(both.message()),
              HasSubstr("im2col kernel tt_im2col_simt (path simt): img starts at 0x1002, not a "
                        "multiple of 16 B; col starts at 0x2008"));
}

TEST(CheckTileOperandsTest, RelativeAlignmentAndOverlap) {
  LoweredTileKernel lowered;
  lowered.op = "copy";
  lowered.input_name = "src";
  lowered.output_name = "dst";
  lowered.input_align = lowered.output_align = 2;
  lowered.relative_align = 16;
  lowered.input_span_bytes = 0x100;
  lowered.output_span_bytes = 0x100;
  EXPECT_TRUE(CheckTileOperands(lowered, 0x1002, 0x2002).ok());
  absl::Status relative = CheckTileOperands(lowered, 0x1002, 0x2004);
  EXPECT_THAT(std::string(relative.message()),
              HasSubstr("dst starts 4098 B from src, not a multiple of 16 B"));
  absl::Status odd = CheckTileOperands(lowered, 0x1001, 0x2001);
  EXPECT_THAT(std::string(odd.message()), HasSubstr("src starts at 0x1001, not a multiple of 2 B"));
  absl::Status overlap = CheckTileOperands(lowered, 0x1000, 0x1080);
  EXPECT_THAT(std::string(overlap.message()),
              HasSubstr("copy src [0x1000, 0x1100) overlaps dst [0x1080, 0x1180)"));
  // Touching ranges do not overlap.
  EXPECT_TRUE(CheckTileOperands(lowered, 0x1000, 0x1100).ok());
}

TEST(TensorMapCacheTest, EncoderErrorsPropagateAndAreNotCached) {
  TensorMapCache cache;
  int calls = 0;
  auto failing = [&]() -> absl::StatusOr<std::vector<CUtensorMap>> {
    ++calls;
    return absl::InvalidArgumentError("misaligned");
  };
  EXPECT_EQ(cache.Get(16, 32, failing).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(cache.Get(16, 32, failing).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace tiletune

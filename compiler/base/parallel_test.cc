#include "compiler/base/parallel.h"

#include <atomic>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace tiletune {
namespace {

// Every item is visited exactly once, whatever the count and grain.
TEST(ParallelForTest, VisitsEveryItemOnce) {
  for (int64_t count : {0, 1, 7, 64, 1000, 100003}) {
    for (int64_t grain : {0, 1, 3, 64, 1 << 20}) {
      std::vector<std::atomic<int>> seen(count);
      std::atomic<int> pieces{0};
      ParallelFor(count, grain, [&](int64_t begin, int64_t end) {
        ASSERT_LE(0, begin);
        ASSERT_LT(begin, end);
        ASSERT_LE(end, count);
        // Every piece holds a grain, unless one piece holds everything.
        if (end - begin < count) {
          ASSERT_GE(end - begin, grain);
        }
        ++pieces;
        for (int64_t i = begin; i < end; ++i) ++seen[i];
      });
      for (int64_t i = 0; i < count; ++i) {
        ASSERT_EQ(seen[i], 1) << count << " " << grain << " " << i;
      }
      EXPECT_LE(pieces, kMaxParallelWorkers);
      if (count > 0 && grain >= count) {
        EXPECT_EQ(pieces, 1);
      }
    }
  }
}

}  // namespace
}  // namespace tiletune

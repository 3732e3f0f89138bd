// What of tuning on a miss runs without a GPU: the compile threads a first call stopped
// waiting for are joined once finished and at the end, never leaked.
#include "kernels/tune_on_miss.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "gtest/gtest.h"

namespace tiletune {
namespace {

TEST(PendingCompilesTest, FinishedThreadsAreJoinedOnTheNextAdoptAndTheRestAtTheEnd) {
  std::atomic<bool> release{false};
  std::atomic<int> ran{0};
  {
    PendingCompiles pending;
    std::atomic<bool> first_done{false};
    pending.Adopt(std::thread([&] {
                    ++ran;
                    first_done = true;
                  }),
                  [&] { return first_done.load(); });
    pending.Adopt(std::thread([&] {
                    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
                    ++ran;
                  }),
                  [&] { return release.load(); });
    while (!first_done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    // The first has finished: adopting a third joins it; the second still runs.
    pending.Adopt(std::thread([&] { ++ran; }), [] { return false; });
    EXPECT_EQ(pending.size(), 2u);
    release = true;
  }  // Joins the second and third.
  EXPECT_EQ(ran.load(), 3);
}

}  // namespace
}  // namespace tiletune

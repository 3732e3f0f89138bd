// Helpers for tests that need a GPU.
//
//   class MyGpuTest : public ::testing::Test {
//    protected:
//     void SetUp() override { TT_SKIP_WITHOUT_GPU(context_); }
//     std::unique_ptr<Context> context_;
//   };
#ifndef KERNELS_RUNTIME_GPU_TEST_UTIL_H_
#define KERNELS_RUNTIME_GPU_TEST_UTIL_H_

#include <memory>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "kernels/runtime/runtime.h"

namespace tiletune {

// Device 0's context, or the status saying why there is none. $TILETUNE_TEST_DEVICE picks
// another ordinal.
absl::StatusOr<std::unique_ptr<Context>> TestContext();

}  // namespace tiletune

// Assigns the test device's context to `context`, skips the test when no driver or device
// is available, and fails it on any other error.
#define TT_SKIP_WITHOUT_GPU(context)                                                 \
  do {                                                                               \
    auto tt_test_context_ = ::tiletune::TestContext();                               \
    if (absl::IsUnavailable(tt_test_context_.status())) {                            \
      GTEST_SKIP() << "no GPU: " << tt_test_context_.status().message();             \
    }                                                                                \
    ASSERT_TRUE(tt_test_context_.ok()) << tt_test_context_.status();                 \
    context = *std::move(tt_test_context_);                                          \
  } while (false)

#endif  // KERNELS_RUNTIME_GPU_TEST_UTIL_H_

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
#include "cuda.h"
#include "gtest/gtest.h"
#include "kernels/runtime/runtime.h"

namespace tiletune {

// Device 0's context, or the status saying why there is none. $TILETUNE_TEST_DEVICE picks
// another ordinal.
absl::StatusOr<std::unique_ptr<Context>> TestContext();

// Whether $TILETUNE_REQUIRE_GPU is 1: then a GPU test that finds no driver, no device or
// not the architecture it needs fails instead of skipping (the GPU machine's scripts set
// it, so a broken setup cannot look green).
bool GpuRequired();

// Driver entry points the runtime does not load, for tests that make contexts, streams
// and CUDA graphs of their own; looked up in the already loaded libcuda.so.1.
struct TestDriver {
  CUresult (*ctx_create)(CUcontext*, unsigned int, CUdevice) = nullptr;
  CUresult (*ctx_destroy)(CUcontext) = nullptr;
  CUresult (*stream_create)(CUstream*, unsigned int) = nullptr;
  CUresult (*stream_destroy)(CUstream) = nullptr;
  CUresult (*begin_capture)(CUstream, CUstreamCaptureMode) = nullptr;
  CUresult (*end_capture)(CUstream, CUgraph*) = nullptr;
  CUresult (*instantiate)(CUgraphExec*, CUgraph, unsigned long long) = nullptr;
  CUresult (*launch_graph)(CUgraphExec, CUstream) = nullptr;
  CUresult (*destroy_graph)(CUgraph) = nullptr;
  CUresult (*destroy_exec)(CUgraphExec) = nullptr;
  // False when the driver is not loaded or lacks one of them.
  bool Load();
};

}  // namespace tiletune

// Skips the test (or, with TILETUNE_REQUIRE_GPU=1, fails it) saying `why` unless
// `condition` holds.
#define TT_SKIP_UNLESS(condition, why)                                               \
  do {                                                                               \
    if (!(condition)) {                                                              \
      if (::tiletune::GpuRequired()) {                                               \
        FAIL() << "TILETUNE_REQUIRE_GPU=1, and " << why;                             \
      }                                                                              \
      GTEST_SKIP() << why;                                                           \
    }                                                                                \
  } while (false)

// Assigns the test device's context to `context`; skips the test when no driver or device
// is available (fails it with TILETUNE_REQUIRE_GPU=1), and fails it on any other error.
#define TT_SKIP_WITHOUT_GPU(context)                                                 \
  do {                                                                               \
    auto tt_test_context_ = ::tiletune::TestContext();                               \
    TT_SKIP_UNLESS(!absl::IsUnavailable(tt_test_context_.status()),                  \
                   "no GPU: " << tt_test_context_.status().message());               \
    ASSERT_TRUE(tt_test_context_.ok()) << tt_test_context_.status();                 \
    context = *std::move(tt_test_context_);                                          \
  } while (false)

#endif  // KERNELS_RUNTIME_GPU_TEST_UTIL_H_

// The slim API's header is slim, and bad descriptors are refused naming the field, before
// any GPU is needed (the driver is made unloadable here).
#include "kernels/tiletune.h"

#ifdef GOOGLE_PROTOBUF_VERSION
#error "kernels/tiletune.h must not pull in protobuf"
#endif
#ifdef COMPILER_IR_BUFFER_H_
#error "kernels/tiletune.h must not pull in the IR"
#endif
#ifdef KERNELS_LIBRARY_H_
#error "kernels/tiletune.h must not pull in the library's internals"
#endif

#include <cstdlib>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

using ::testing::HasSubstr;

class TiletuneTest : public ::testing::Test {
 protected:
  void SetUp() override { setenv("TILETUNE_CUDA_DRIVER_LIBRARY", "/nonexistent/libcuda.so.1", 1); }
};

TEST_F(TiletuneTest, BadDescriptorsNameTheField) {
  CopyDesc no_shape;
  auto plan = Plan::Create(no_shape);
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("src.shape is empty"));

  CopyDesc outside;
  outside.src = {{64, 64}, {0, 8}, {64, 64}};
  plan = Plan::Create(outside);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(plan.status().message(), HasSubstr("src: "));

  CopyDesc hints;
  hints.src = {{64, 64}};
  hints.hints.eviction_policy = "evict_sometimes";
  plan = Plan::Create(hints);
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("evict_sometimes"));

  hints.hints = {};
  hints.hints.coalesced_width = -2;
  plan = Plan::Create(hints);
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("hints.coalesced_width is -2"));
}

TEST_F(TiletuneTest, AGoodDescriptorWithoutADriverIsUnavailable) {
  CopyDesc copy;
  copy.dtype = DType::kF16;
  copy.src = {{4096, 4096}, {0, 48}, {4096, 4000}};
  auto plan = Plan::Create(copy);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kUnavailable) << plan.status();
  Im2colDesc conv;
  conv.n = 2;
  conv.h = conv.w = 9;
  conv.c = 16;
  conv.kh = conv.kw = 3;
  conv.pad_h = conv.pad_w = 1;
  EXPECT_EQ(Plan::Create(conv).status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace tiletune

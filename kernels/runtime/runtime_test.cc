// CPU tests of the runtime: what happens with no driver, and pure helpers.
#include "kernels/runtime/runtime.h"

#include <cstdlib>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/runtime/driver_api.h"

namespace tiletune {
namespace {

using ::testing::HasSubstr;

TEST(DriverApiTest, MissingDriverIsUnavailableAndSaysWhy) {
  // The override makes this deterministic on machines that do have a driver.
  setenv("TILETUNE_CUDA_DRIVER_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  auto driver = LoadDriver();
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(driver.status().message(), HasSubstr("/nonexistent/libcuda.so.1"));
  EXPECT_THAT(driver.status().message(), HasSubstr("no usable NVIDIA GPU"));

  EXPECT_EQ(DeviceCount().status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(Context::Create(0).status().code(), absl::StatusCode::kUnavailable);
}

TEST(DriverApiTest, ToStatusMapsCodesWithoutADriver) {
  EXPECT_TRUE(ToStatus(CUDA_SUCCESS, "x").ok());
  EXPECT_EQ(ToStatus(CUDA_ERROR_OUT_OF_MEMORY, "alloc").code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(ToStatus(CUDA_ERROR_ILLEGAL_ADDRESS, "launch").code(), absl::StatusCode::kAborted);
  EXPECT_EQ(ToStatus(CUDA_ERROR_INVALID_VALUE, "x").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ToStatus(CUDA_ERROR_NO_DEVICE, "x").code(), absl::StatusCode::kUnavailable);
  absl::Status status = ToStatus(CUDA_ERROR_LAUNCH_FAILED, "cuLaunchKernel(copy)");
  EXPECT_THAT(status.message(), HasSubstr("cuLaunchKernel(copy)"));
  EXPECT_THAT(status.message(), HasSubstr("719"));
}

TEST(DeviceInfoTest, ArchNameUsesArchSpecificSuffixWhereItExists) {
  DeviceInfo info;
  info.cc_major = 9;
  info.cc_minor = 0;
  EXPECT_EQ(info.ArchName(), "sm_90a");
  info.cc_major = 8;
  info.cc_minor = 6;
  EXPECT_EQ(info.ArchName(), "sm_86");
  info.cc_major = 10;
  info.cc_minor = 0;
  EXPECT_EQ(info.ArchName(), "sm_100a");
  info.cc_major = 12;
  EXPECT_EQ(info.ArchName(), "sm_120");
}

}  // namespace
}  // namespace tiletune

#include "autotune/cudnn_im2col.h"

#include <cstdlib>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace autotune {
namespace {

using ::testing::HasSubstr;

TEST(CudnnIm2colTest, GeometryBeyondCudnnIntsIsRefusedNamingTheValue) {
  Im2colGeometry g;
  g.n = int64_t{1} << 33;
  absl::StatusOr<std::unique_ptr<CudnnIm2col>> cudnn = CudnnIm2col::Create(DataType::kF16, g);
  ASSERT_FALSE(cudnn.ok());
  EXPECT_EQ(cudnn.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(cudnn.status().message(), HasSubstr("8589934592"));
}

TEST(CudnnIm2colTest, MissingLibraryIsUnavailableNamingThePath) {
  // The library is loaded once per process: this is the first load in this test binary.
  setenv("TILETUNE_CUDNN", "/nonexistent/libcudnn.so.9", 1);
  Im2colGeometry g;
  g.n = 2, g.h = 8, g.w = 8, g.c = 3, g.kh = 3, g.kw = 3;
  absl::StatusOr<std::unique_ptr<CudnnIm2col>> cudnn = CudnnIm2col::Create(DataType::kF16, g);
  ASSERT_FALSE(cudnn.ok());
  EXPECT_EQ(cudnn.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(cudnn.status().message(), HasSubstr("/nonexistent/libcudnn.so.9"));
  EXPECT_THAT(cudnn.status().message(), HasSubstr("LD_LIBRARY_PATH"));
}

}  // namespace
}  // namespace autotune
}  // namespace tiletune

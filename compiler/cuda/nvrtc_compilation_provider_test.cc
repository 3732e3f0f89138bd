#include "compiler/cuda/nvrtc_compilation_provider.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/cuda/caching_compilation_provider.h"
#include "compiler/cuda/nvrtc_api.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

using ::testing::HasSubstr;

constexpr char kCopyKernel[] = R"cuda(
extern "C" __global__ void __launch_bounds__(128) vector_copy(const uint4* __restrict__ src,
                                                             uint4* __restrict__ dst,
                                                             unsigned long long n) {
  unsigned long long i = blockIdx.x * 128ull + threadIdx.x;
  if (i < n) dst[i] = src[i];
}
)cuda";

class NvrtcCompilationProviderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto provider = NvrtcCompilationProvider::Create();
    ASSERT_TRUE(provider.ok()) << provider.status();
    provider_ = *std::move(provider);
  }
  std::unique_ptr<NvrtcCompilationProvider> provider_;
};

// Issue 17: "NVRTC cannot be loaded" named no path; the loader's error names each path
// tried and why, and autotune and the compiler report it as is.
TEST(NvrtcApiTest, MissingLibraryNamesEveryPathTried) {
  absl::StatusOr<NvrtcApi> api =
      LoadNvrtcFrom({"/nonexistent/a/libnvrtc.so.13", "/nonexistent/b/libnvrtc.so.13"});
  ASSERT_FALSE(api.ok());
  EXPECT_TRUE(absl::IsUnavailable(api.status()));
  EXPECT_THAT(std::string(api.status().message()),
              ::testing::AllOf(
                  ::testing::HasSubstr("NVRTC not found; tried: /nonexistent/a/libnvrtc.so.13 ("),
                  ::testing::HasSubstr("; /nonexistent/b/libnvrtc.so.13 ("),
                  ::testing::HasSubstr("set CUDA_PATH or TILETUNE_NVRTC_LIBRARY")));
}

TEST_F(NvrtcCompilationProviderTest, NameCarriesVersion) {
  EXPECT_TRUE(absl::StartsWith(provider_->Name(), "nvrtc-13.")) << provider_->Name();
}

TEST_F(NvrtcCompilationProviderTest, PtxForSm90aHoldsTheKernel) {
  CompileOptions options;
  options.arch = "sm_90a";
  auto ptx = provider_->CompileToPtx({"vector_copy", kCopyKernel}, options);
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  EXPECT_THAT(ptx->text, HasSubstr(".target sm_90a"));
  EXPECT_THAT(ptx->text, HasSubstr(".visible .entry vector_copy("));
  EXPECT_THAT(ptx->text, HasSubstr("ld.global.nc.v4.u32"));
  EXPECT_THAT(ptx->text, HasSubstr("st.global.v4.u32"));
  EXPECT_THAT(ptx->text, HasSubstr(".maxntid 128"));
  EXPECT_EQ(ptx->arch, "sm_90a");
}

TEST_F(NvrtcCompilationProviderTest, CubinIsACudaElfForTheArch) {
  for (const char* arch : {"sm_80", "sm_90a"}) {
    CompileOptions options;
    options.arch = arch;
    auto cubin = provider_->CompileToCubin({"vector_copy", kCopyKernel}, options);
    ASSERT_TRUE(cubin.ok()) << cubin.status();
    const std::string& elf = cubin->bytes;
    ASSERT_GT(elf.size(), 64u);
    EXPECT_EQ(elf.substr(0, 4), "\x7f" "ELF");
    uint16_t machine = 0;
    std::memcpy(&machine, elf.data() + 18, sizeof(machine));
    EXPECT_EQ(machine, 190) << "EM_CUDA";
    EXPECT_NE(elf.find("vector_copy"), std::string::npos);
  }
}

TEST_F(NvrtcCompilationProviderTest, CompileErrorCarriesTheLog) {
  auto ptx = provider_->CompileToPtx({"broken.cu", "__global__ void k() { undeclared = 1; }"},
                                     CompileOptions{});
  ASSERT_FALSE(ptx.ok());
  EXPECT_EQ(ptx.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ptx.status().message(), HasSubstr("broken.cu"));
  EXPECT_THAT(ptx.status().message(), HasSubstr("identifier \"undeclared\" is undefined"));
}

TEST_F(NvrtcCompilationProviderTest, RejectsMalformedAndUnsupportedArchitectures) {
  for (const char* arch : {"", "sm90", "sm_", "sm_9", "sm_90x", "compute_90", "sm_1000"}) {
    CompileOptions options;
    options.arch = arch;
    auto ptx = provider_->CompileToPtx({"vector_copy", kCopyKernel}, options);
    ASSERT_FALSE(ptx.ok()) << arch;
    EXPECT_EQ(ptx.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(ptx.status().message(), HasSubstr("sm_")) << arch;
  }
  CompileOptions volta;
  volta.arch = "sm_70";  // CUDA 13 dropped Volta.
  auto ptx = provider_->CompileToPtx({"vector_copy", kCopyKernel}, volta);
  ASSERT_FALSE(ptx.ok());
  EXPECT_THAT(ptx.status().message(), HasSubstr("not supported by nvrtc-13"));
}

// What NVRTC makes passes the disk cache's check of what an entry holds (a CUBIN of the
// requested SM, PTX of its target), for every architecture: a second provider reads each
// back from disk instead of compiling again.
TEST_F(NvrtcCompilationProviderTest, ItsOutputIsWhatTheDiskCacheTrusts) {
  const std::string folder = absl::StrCat(::testing::TempDir(), "/nvrtc_cache_", getpid());
  const std::vector<std::string> archs = {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90a", "sm_100a", "sm_120"};
  for (int round = 0; round < 2; ++round) {
    CachingCompilationProvider::Options options;
    auto nvrtc = NvrtcCompilationProvider::Create();
    ASSERT_TRUE(nvrtc.ok()) << nvrtc.status();
    options.inner = *std::move(nvrtc);
    options.disk_directory = folder;
    auto cache = CachingCompilationProvider::Create(std::move(options));
    ASSERT_TRUE(cache.ok()) << cache.status();
    for (const std::string& arch : archs) {
      CompileOptions compile;
      compile.arch = arch;
      ASSERT_TRUE((*cache)->CompileToCubin({"vector_copy", kCopyKernel}, compile).ok()) << arch;
      ASSERT_TRUE((*cache)->CompileToPtx({"vector_copy", kCopyKernel}, compile).ok()) << arch;
    }
    const CachingCompilationProvider::Stats stats = (*cache)->stats();
    EXPECT_EQ(stats.corrupt_entries, 0);
    EXPECT_EQ(round == 0 ? stats.misses : stats.disk_hits, static_cast<int64_t>(2 * archs.size()));
  }
}

}  // namespace
}  // namespace tiletune

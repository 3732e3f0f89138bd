// Compiles a kernel through NVRTC, launches it through the runtime and checks the output
// bit-exact against the input, with the output poisoned first.
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "compiler/cuda/nvrtc_compilation_provider.h"
#include "kernels/runtime/gpu_test_util.h"
#include "kernels/runtime/runtime.h"

namespace tiletune {
namespace {

using ::testing::HasSubstr;

// dst[i] = src[i] ^ key, so a kernel that does nothing or copies blindly cannot pass.
constexpr char kXorKernel[] = R"cuda(
extern "C" __global__ void xor_copy(const unsigned* __restrict__ src, unsigned* __restrict__ dst,
                                    unsigned long long n, unsigned key) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    dst[i] = src[i] ^ key;
  }
}
)cuda";

class RuntimeGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TT_SKIP_WITHOUT_GPU(context_);
    auto nvrtc = NvrtcCompilationProvider::Create();
    ASSERT_TRUE(nvrtc.ok()) << nvrtc.status();
    CompileOptions options;
    options.arch = context_->info().ArchName();
    auto cubin = (*nvrtc)->CompileToCubin({"xor_copy", kXorKernel}, options);
    ASSERT_TRUE(cubin.ok()) << cubin.status();
    auto module = Module::Load(*context_, cubin->bytes);
    ASSERT_TRUE(module.ok()) << module.status();
    module_ = *std::move(module);
  }

  std::unique_ptr<Context> context_;
  std::unique_ptr<Module> module_;
};

TEST_F(RuntimeGpuTest, DeviceInfoIsPopulated) {
  const DeviceInfo& info = context_->info();
  EXPECT_FALSE(info.name.empty());
  EXPECT_THAT(info.uuid, ::testing::StartsWith("GPU-"));
  EXPECT_GT(info.sm_count, 0);
  EXPECT_GT(info.l2_bytes, 0);
  EXPECT_GT(info.memory_bytes, 0);
  EXPECT_GE(info.driver_version, 12000);
  std::printf("device %d: %s %s, %d SMs, L2 %lld B, %lld B memory, driver %d\n", info.ordinal,
              info.name.c_str(), info.ArchName().c_str(), info.sm_count,
              static_cast<long long>(info.l2_bytes), static_cast<long long>(info.memory_bytes),
              info.driver_version);
}

TEST_F(RuntimeGpuTest, CompiledKernelRunsBitExact) {
  auto kernel = module_->GetKernel("xor_copy", 4);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  std::mt19937 rng(std::random_device{}());
  for (uint64_t n : {1ull, 1000ull, 1ull << 20, (1ull << 22) + 7}) {
    std::vector<uint32_t> input(n);
    for (auto& v : input) v = rng();
    uint32_t key = rng();
    auto src = DeviceBuffer::Allocate(*context_, n * 4);
    auto dst = DeviceBuffer::Allocate(*context_, n * 4);
    ASSERT_TRUE(src.ok() && dst.ok());
    ASSERT_TRUE(src->CopyFromHost(input.data(), n * 4).ok());
    ASSERT_TRUE(dst->Fill(0xA5).ok());  // Poison.
    auto stream = Stream::Create(*context_);
    ASSERT_TRUE(stream.ok());
    CUdeviceptr src_ptr = src->ptr(), dst_ptr = dst->ptr();
    LaunchConfig config;
    config.grid = {static_cast<unsigned>(std::min<uint64_t>((n + 255) / 256, 1024)), 1, 1};
    config.block = {256, 1, 1};
    config.stream = (*stream)->get();
    absl::Status launched = kernel->Launch(config, {&src_ptr, &dst_ptr, &n, &key});
    ASSERT_TRUE(launched.ok()) << launched;
    ASSERT_TRUE((*stream)->Synchronize().ok());
    ASSERT_TRUE(context_->Synchronize().ok());
    std::vector<uint32_t> output(n);
    ASSERT_TRUE(dst->CopyToHost(output.data(), n * 4).ok());
    for (uint64_t i = 0; i < n; ++i) {
      ASSERT_EQ(output[i], input[i] ^ key) << "element " << i << " of " << n;
    }
  }
}

TEST_F(RuntimeGpuTest, ArgumentCountIsChecked) {
  auto wrong = module_->GetKernel("xor_copy", 3);
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.status().message(), HasSubstr("has 4 parameters; caller declared 3"));
  auto kernel = module_->GetKernel("xor_copy", 4);
  ASSERT_TRUE(kernel.ok());
  int unused = 0;
  absl::Status launched = kernel->Launch(LaunchConfig{}, {&unused, &unused});
  EXPECT_EQ(launched.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(launched.message(), HasSubstr("takes 4 arguments; launch passed 2"));
}

TEST_F(RuntimeGpuTest, ErrorsNameWhatFailed) {
  EXPECT_THAT(module_->GetKernel("no_such_kernel", 1).status().message(),
              HasSubstr("no_such_kernel"));
  EXPECT_THAT(Context::Create(1000).status().message(), HasSubstr("out of range"));
  auto bad = Module::Load(*context_, "this is not PTX");
  EXPECT_FALSE(bad.ok());
  auto buffer = DeviceBuffer::Allocate(*context_, 16);
  ASSERT_TRUE(buffer.ok());
  char host[32];
  EXPECT_EQ(buffer->CopyToHost(host, 32).code(), absl::StatusCode::kOutOfRange);
}

TEST_F(RuntimeGpuTest, EventsTimeALaunch) {
  auto start = Event::Create(*context_);
  auto stop = Event::Create(*context_);
  ASSERT_TRUE(start.ok() && stop.ok());
  auto kernel = module_->GetKernel("xor_copy", 4);
  ASSERT_TRUE(kernel.ok());
  uint64_t n = 1 << 24;
  auto src = DeviceBuffer::Allocate(*context_, n * 4);
  auto dst = DeviceBuffer::Allocate(*context_, n * 4);
  ASSERT_TRUE(src.ok() && dst.ok());
  CUdeviceptr s = src->ptr(), d = dst->ptr();
  unsigned key = 1;
  LaunchConfig config;
  config.grid = {1024, 1, 1};
  config.block = {256, 1, 1};
  ASSERT_TRUE((*start)->Record(nullptr).ok());
  ASSERT_TRUE(kernel->Launch(config, {&s, &d, &n, &key}).ok());
  ASSERT_TRUE((*stop)->Record(nullptr).ok());
  ASSERT_TRUE((*stop)->Synchronize().ok());
  auto ms = (*stop)->ElapsedSince(**start);
  ASSERT_TRUE(ms.ok()) << ms.status();
  EXPECT_GT(*ms, 0.0f);
}

}  // namespace
}  // namespace tiletune

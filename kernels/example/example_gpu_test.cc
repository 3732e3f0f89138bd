// The baked kernels on the GPU, with the JIT off: bit-exact through the library (also
// captured into a CUDA graph), from their PTX as a newer GPU would load them, through a
// plan made in a second context, a problem nobody baked is Unimplemented naming it, and
// the first call's host time against a JIT first call (printed, for the closing note).
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/ops/copy/copy_op.h"
#include "compiler/ops/im2col/im2col_op.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/library.h"
#include "kernels/prebuilt.h"
#include "kernels/runtime/driver_api.h"
#include "kernels/tiletune.h"
#include "kernels/runtime/gpu_test_util.h"
#include "kernels/verify.h"

namespace tiletune {
namespace {

using ::testing::HasSubstr;

CopyOp DenseCopy(int64_t rows, int64_t cols) {
  Buffer src = Buffer::RowMajor("src", DataType::kF16, Scope::kGlobal, {rows, cols});
  Buffer dst = Buffer::RowMajor("dst", DataType::kF16, Scope::kGlobal, {rows, cols});
  return CopyOp{Region::Whole(src), Region::Whole(dst)};
}

Im2colOp Layer1() {
  Im2colGeometry g;
  g.n = 32;
  g.h = g.w = 56;
  g.c = 64;
  g.kh = g.kw = 3;
  g.ph = g.pw = 1;
  return Im2colOp::Dense(DataType::kF16, g);
}

class ExampleGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TT_SKIP_WITHOUT_GPU(context_);
    TT_SKIP_UNLESS(context_->info().ArchName() == "sm_90a", "the kernels are baked for sm_90a");
  }

  // Runs `op` through `library` (directly, or captured into a graph and replayed) on
  // fresh random data and compares the whole output, guards included, with the reference.
  void CheckBitExact(Library& library, const TileOp& op, bool graph) {
    const TileOpDefinition& definition = **BuiltinTileOps().For(op);
    std::mt19937_64 rng(std::random_device{}());
    auto images = MakeVerificationImages(definition, op, rng);
    ASSERT_TRUE(images.ok()) << images.status();
    auto input = DeviceBuffer::Allocate(*context_, images->input.size());
    auto output = DeviceBuffer::Allocate(*context_, images->expected.size());
    ASSERT_TRUE(input.ok() && output.ok());
    ASSERT_TRUE(input->CopyFromHost(images->input.data(), images->input.size()).ok());
    ASSERT_TRUE(output->Fill(images->poison).ok());
    auto stream = Stream::Create(*context_);
    ASSERT_TRUE(stream.ok());
    const CUdeviceptr in = input->ptr() + kGuardBytes, out = output->ptr() + kGuardBytes;
    if (!graph) {
      absl::Status launched = library.Launch(op, in, out, (*stream)->get());
      ASSERT_TRUE(launched.ok()) << launched;
    } else {
      TestDriver api;
      ASSERT_TRUE(api.Load());
      ASSERT_TRUE(library.Inspect(op).ok());  // Load before capturing.
      ASSERT_EQ(api.begin_capture((*stream)->get(), CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
      absl::Status captured = library.Launch(op, in, out, (*stream)->get());
      CUgraph g = nullptr;
      ASSERT_EQ(api.end_capture((*stream)->get(), &g), CUDA_SUCCESS);
      ASSERT_TRUE(captured.ok()) << captured;
      CUgraphExec exec = nullptr;
      ASSERT_EQ(api.instantiate(&exec, g, 0), CUDA_SUCCESS);
      ASSERT_EQ(api.launch_graph(exec, (*stream)->get()), CUDA_SUCCESS);
      api.destroy_exec(exec);
      api.destroy_graph(g);
    }
    ASSERT_TRUE((*stream)->Synchronize().ok());
    std::vector<uint8_t> got(images->expected.size());
    ASSERT_TRUE(output->CopyToHost(got.data(), got.size()).ok());
    ASSERT_TRUE(got == images->expected) << definition.Describe(op) << " is not bit-exact";
  }

  std::unique_ptr<Context> context_;
};

TEST_F(ExampleGpuTest, BakedKernelsRunBitExactWithTheJitOff) {
  LibraryOptions options;
  options.jit = false;
  auto library = Library::Create(options);
  ASSERT_TRUE(library.ok()) << library.status();
  ASSERT_TRUE(context_->Activate().ok());
  for (const TileOp* op : std::vector<const TileOp*>{new CopyOp(DenseCopy(8192, 8192)),
                                                     new Im2colOp(Layer1())}) {
    std::unique_ptr<const TileOp> owned(op);
    auto info = (*library)->Inspect(*op);
    ASSERT_TRUE(info.ok()) << info.status();
    EXPECT_EQ(info->level, ResolutionLevel::kExact);
    EXPECT_TRUE(info->prebuilt);
    std::printf("baked first call (%s): %.3f ms host\n", op->op_name().c_str(), info->first_call_ms);
    CheckBitExact(**library, *op, /*graph=*/false);
    CheckBitExact(**library, *op, /*graph=*/true);
  }
  // Nobody baked this one, and the JIT is off.
  auto missing = (*library)->Inspect(DenseCopy(1000, 1000));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(missing.status().message(), HasSubstr("copy f16 [1000, 1000]"));
  EXPECT_THAT(missing.status().message(), HasSubstr("the JIT is off"));
}

// A newer GPU than the targets gets the baked PTX (compute_90), compiled by the driver.
// The H200 has a CUBIN of its own, so the set is given here without its CUBINs: the
// library then loads the PTX exactly as it would on that GPU, with the JIT off.
TEST_F(ExampleGpuTest, TheBakedPtxRunsBitExactWithoutTheCubins) {
  const PrebuiltKernelSet& baked = *PrebuiltKernelSets().at(0);
  std::vector<PrebuiltKernelImage> ptx;
  for (size_t i = 0; i < baked.image_count; ++i) {
    if (std::string(baked.images[i].arch).rfind("compute_", 0) == 0) ptx.push_back(baked.images[i]);
  }
  ASSERT_EQ(ptx.size(), 3u);
  static PrebuiltKernelSet ptx_only;
  ptx_only = {baked.name, baked.database_text, nullptr, 0};
  static std::vector<PrebuiltKernelImage> images;
  images = ptx;
  ptx_only.images = images.data();
  ptx_only.image_count = images.size();
  static const std::vector<const PrebuiltKernelSet*> sets = {&ptx_only};
  LibraryOptions options;
  options.jit = false;
  options.prebuilt = &sets;
  auto library = Library::Create(options);
  ASSERT_TRUE(library.ok()) << library.status();
  ASSERT_TRUE(context_->Activate().ok());
  for (const TileOp* op : std::vector<const TileOp*>{new CopyOp(DenseCopy(8192, 8192)),
                                                     new Im2colOp(Layer1())}) {
    std::unique_ptr<const TileOp> owned(op);
    auto info = (*library)->Inspect(*op);
    ASSERT_TRUE(info.ok()) << info.status();
    EXPECT_TRUE(info->prebuilt);
    EXPECT_EQ(info->prebuilt_arch, "compute_90");
    std::printf("baked PTX first call (%s, the driver compiles it): %.3f ms host\n",
                op->op_name().c_str(), info->first_call_ms);
    CheckBitExact(**library, *op, /*graph=*/false);
    CheckBitExact(**library, *op, /*graph=*/true);
  }
}

// A plan of a baked problem made in a second (non-primary) context, with the JIT off:
// served by the baked CUBIN, bit-exact on that context's stream, and the caller's current
// context is left as it was.
TEST_F(ExampleGpuTest, ABakedPlanRunsFromASecondContext) {
  TestDriver driver;
  ASSERT_TRUE(driver.Load());
  const DriverApi& cu = context_->api();
  CUdevice device = 0;
  ASSERT_EQ(cu.cuDeviceGet(&device, 0), CUDA_SUCCESS);
  CUcontext second = nullptr;
  ASSERT_EQ(driver.ctx_create(&second, 0, device), CUDA_SUCCESS);  // Now current.
  CopyDesc desc;
  desc.dtype = DType::kF16;
  desc.src = {{8192, 8192}};
  desc.dst = {{8192, 8192}};
  PlanOptions no_jit;
  no_jit.jit = false;
  auto plan = Plan::Create(desc, no_jit);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->context(), second);
  EXPECT_TRUE(plan->info().prebuilt);
  EXPECT_EQ(plan->info().prebuilt_arch, "sm_90a");
  std::printf("baked plan in a second context: created in %.3f ms host\n", plan->info().create_ms);
  CUstream stream = nullptr;
  ASSERT_EQ(driver.stream_create(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);

  // Data made on the primary context (one address space per device), run from the second.
  ASSERT_TRUE(context_->Activate().ok());
  const CopyOp op = DenseCopy(8192, 8192);
  const TileOpDefinition& definition = **BuiltinTileOps().For(op);
  std::mt19937_64 rng(std::random_device{}());
  auto images = MakeVerificationImages(definition, op, rng);
  ASSERT_TRUE(images.ok()) << images.status();
  auto input = DeviceBuffer::Allocate(*context_, images->input.size());
  auto output = DeviceBuffer::Allocate(*context_, images->expected.size());
  ASSERT_TRUE(input.ok() && output.ok());
  ASSERT_TRUE(input->CopyFromHost(images->input.data(), images->input.size()).ok());
  ASSERT_TRUE(output->Fill(images->poison).ok());
  CUcontext before = nullptr, after = nullptr;
  ASSERT_EQ(cu.cuCtxGetCurrent(&before), CUDA_SUCCESS);
  absl::Status executed =
      plan->Execute(input->ptr() + kGuardBytes, output->ptr() + kGuardBytes, stream);
  ASSERT_TRUE(executed.ok()) << executed;
  ASSERT_EQ(cu.cuCtxGetCurrent(&after), CUDA_SUCCESS);
  EXPECT_EQ(before, after) << "Execute changed the caller's current context";
  ASSERT_EQ(cu.cuStreamSynchronize(stream), CUDA_SUCCESS);
  std::vector<uint8_t> got(images->expected.size());
  ASSERT_TRUE(output->CopyToHost(got.data(), got.size()).ok());
  EXPECT_TRUE(got == images->expected) << "the baked plan is not bit-exact from a second context";
  driver.stream_destroy(stream);
  plan = absl::InternalError("released");
  driver.ctx_destroy(second);
  ASSERT_TRUE(context_->Activate().ok());
}

// For comparison: the same problem's first call through the JIT with an empty compile cache.
TEST_F(ExampleGpuTest, JitFirstCallForComparison) {
  LibraryOptions options;
  options.prebuilt = new std::vector<const PrebuiltKernelSet*>();  // Nothing baked.
  options.cache_directory = absl::StrCat(::testing::TempDir(), "/empty_cache_", std::random_device{}());
  auto library = Library::Create(options);
  ASSERT_TRUE(library.ok()) << library.status();
  ASSERT_TRUE(context_->Activate().ok());
  auto info = (*library)->Inspect(DenseCopy(8192, 8192));
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_FALSE(info->prebuilt);
  std::printf("JIT first call (copy, empty cache): %.3f ms host\n", info->first_call_ms);
  CheckBitExact(**library, DenseCopy(8192, 8192), /*graph=*/false);
}

}  // namespace
}  // namespace tiletune

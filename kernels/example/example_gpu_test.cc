// The baked kernels on the GPU, with the JIT off: bit-exact through the library (also
// captured into a CUDA graph), from their PTX as a newer GPU would load them, through a
// plan made in a second context, a problem nobody baked is Unimplemented naming it, and
// the first call's host time against a JIT first call (printed, for the closing note).
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/ops/copy/copy_op.h"
#include "compiler/ops/im2col/im2col_op.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/example/example_problems.h"
#include "kernels/library.h"
#include "kernels/prebuilt.h"
#include "kernels/runtime/driver_api.h"
#include "kernels/tiletune.h"
#include "kernels/runtime/gpu_test_util.h"
#include "kernels/verify.h"

namespace tiletune {
namespace {

using ::testing::HasSubstr;

class ExampleGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TT_SKIP_WITHOUT_GPU(context_);
    TT_SKIP_UNLESS(context_->info().ArchName() == "sm_90a", "the kernels are baked for sm_90a");
  }

  // One op's fresh random input on the device (primary context) and its poisoned output.
  struct Staged {
    VerificationImages images;
    DeviceBuffer input, output;
    CUdeviceptr in() const { return input.ptr() + kGuardBytes; }
    CUdeviceptr out() const { return output.ptr() + kGuardBytes; }
  };
  void Stage(const TileOp& op, Staged& staged) {
    std::mt19937_64 rng(std::random_device{}());
    auto images = MakeVerificationImages(**BuiltinTileOps().For(op), op, rng);
    ASSERT_TRUE(images.ok()) << images.status();
    staged.images = *std::move(images);
    auto input = DeviceBuffer::Allocate(*context_, staged.images.input.size());
    auto output = DeviceBuffer::Allocate(*context_, staged.images.expected.size());
    ASSERT_TRUE(input.ok() && output.ok());
    staged.input = *std::move(input);
    staged.output = *std::move(output);
    ASSERT_TRUE(staged.input.CopyFromHost(staged.images.input.data(), staged.images.input.size()).ok());
    ASSERT_TRUE(staged.output.Fill(staged.images.poison).ok());
  }
  // The whole output, guards included, equals the reference (after the work finished).
  void ExpectBitExact(const Staged& staged, const std::string& what) {
    HostBytes got(staged.images.expected.size());
    ASSERT_TRUE(staged.output.CopyToHost(got.data(), got.size()).ok());
    EXPECT_TRUE(got == staged.images.expected) << what << " is not bit-exact";
  }

  // Runs `op` through `library` (directly, or captured into a graph and replayed) on
  // fresh random data and compares the whole output, guards included, with the reference.
  void CheckBitExact(Library& library, const TileOp& op, bool graph) {
    Staged staged;
    Stage(op, staged);
    if (HasFatalFailure()) return;
    auto stream = Stream::Create(*context_);
    ASSERT_TRUE(stream.ok());
    const CUdeviceptr in = staged.in(), out = staged.out();
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
    ExpectBitExact(staged, (*BuiltinTileOps().For(op))->Describe(op));
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
    // Exact on the board the records were tuned on; on another of its architecture (an
    // H100 for H200 records) the same record answers as the nearest, at distance 0: the
    // kernel the H200 resolves.
    EXPECT_TRUE(info->level == ResolutionLevel::kExact ||
                absl::StrContains(info->resolution_detail, "distance 0.00"))
        << info->resolution_detail;
    tuning::DeviceIdentity h200;
    h200.set_name("NVIDIA H200");
    h200.set_cc_major(9);
    h200.set_cc_minor(0);
    auto on_h200 = (*library)->Explain(*op, h200);
    ASSERT_TRUE(on_h200.ok()) << on_h200.status();
    EXPECT_EQ(info->kernel_name, on_h200->kernel_name) << info->resolution_detail;
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
  Staged staged;
  Stage(DenseCopy(8192, 8192), staged);
  ASSERT_FALSE(HasFatalFailure());
  CUcontext before = nullptr, after = nullptr;
  ASSERT_EQ(cu.cuCtxGetCurrent(&before), CUDA_SUCCESS);
  absl::Status executed = plan->Execute(staged.in(), staged.out(), stream);
  ASSERT_TRUE(executed.ok()) << executed;
  ASSERT_EQ(cu.cuCtxGetCurrent(&after), CUDA_SUCCESS);
  EXPECT_EQ(before, after) << "Execute changed the caller's current context";
  ASSERT_EQ(cu.cuStreamSynchronize(stream), CUDA_SUCCESS);
  ExpectBitExact(staged, "the baked plan from a second context");
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

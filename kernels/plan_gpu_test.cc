// The slim API on the GPU: plans execute bit-exact, also replayed from a CUDA graph, from a
// non-primary context, and from 8 threads sharing one plan; a stream of another context is
// refused naming both; Execute leaves the caller's current context as it found it; every
// device of the host gets plans of its own.
#include <atomic>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/ops/batch_copy/batch_copy_op.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/ops/copy/copy_op.h"
#include "compiler/ops/im2col/im2col_op.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/runtime/driver_api.h"
#include "kernels/runtime/gpu_test_util.h"
#include "kernels/tiletune.h"
#include "kernels/verify.h"

namespace tiletune {
namespace {

using ::testing::HasSubstr;

Im2colGeometry Conv() {
  Im2colGeometry g;
  g.n = 4;
  g.h = 19;
  g.w = 23;
  g.c = 40;
  g.kh = 3;
  g.kw = 5;
  g.sh = 1;
  g.sw = 2;
  g.ph = 1;
  g.pw = 2;
  return g;
}

Im2colDesc ConvDesc() {
  const Im2colGeometry g = Conv();
  Im2colDesc d;
  d.dtype = DType::kF16;
  d.n = g.n;
  d.h = g.h;
  d.w = g.w;
  d.c = g.c;
  d.kh = g.kh;
  d.kw = g.kw;
  d.stride_h = g.sh;
  d.stride_w = g.sw;
  d.pad_h = g.ph;
  d.pad_w = g.pw;
  return d;
}

// The same copy as an IR op, for the reference.
CopyOp SliceOp() {
  Buffer src = Buffer::RowMajor("src", DataType::kF16, Scope::kGlobal, {1000, 1003});
  Buffer dst = Buffer::RowMajor("dst", DataType::kF16, Scope::kGlobal, {998, 999});
  return CopyOp{Region::Box(src, {1, 3}, {998, 999}), Region::Whole(dst)};
}

CopyDesc SliceDesc() {
  CopyDesc d;
  d.dtype = DType::kF16;
  d.src = {{1000, 1003}, {1, 3}, {998, 999}};
  d.dst = {{998, 999}};
  return d;
}

class PlanGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TT_SKIP_WITHOUT_GPU(context_);
    ASSERT_TRUE(driver_.Load());
    cu_ = *LoadDriver();
  }

  // Input and poisoned output (with guards) for `op`; the images for the comparison.
  struct Buffers {
    VerificationImages images;
    DeviceBuffer input, output;
  };
  // On `context` (the test device's when null).
  Buffers Make(const TileOp& op, const Context* context = nullptr) {
    if (context == nullptr) context = context_.get();
    const TileOpDefinition& definition = **BuiltinTileOps().For(op);
    std::mt19937_64 rng(std::random_device{}());
    Buffers b{*MakeVerificationImages(definition, op, rng), {}, {}};
    b.input = *DeviceBuffer::Allocate(*context, b.images.input.size());
    b.output = *DeviceBuffer::Allocate(*context, b.images.expected.size());
    EXPECT_TRUE(b.input.CopyFromHost(b.images.input.data(), b.images.input.size()).ok());
    EXPECT_TRUE(b.output.Fill(b.images.poison).ok());
    return b;
  }
  void ExpectBitExact(Buffers& b, const std::string& what, const Context* context = nullptr) {
    ASSERT_TRUE((context == nullptr ? context_.get() : context)->Synchronize().ok());
    HostBytes got(b.images.expected.size());
    ASSERT_TRUE(b.output.CopyToHost(got.data(), got.size()).ok());
    EXPECT_TRUE(got == b.images.expected) << what << " is not bit-exact";
  }
  CUdeviceptr In(Buffers& b) { return b.input.ptr() + kGuardBytes; }
  CUdeviceptr Out(Buffers& b) { return b.output.ptr() + kGuardBytes; }

  std::unique_ptr<Context> context_;
  TestDriver driver_;
  const DriverApi* cu_ = nullptr;
};

TEST_F(PlanGpuTest, ExecutesBitExactDirectlyAndFromAGraph) {
  ASSERT_TRUE(context_->Activate().ok());
  auto copy = Plan::Create(SliceDesc());
  ASSERT_TRUE(copy.ok()) << copy.status();
  auto conv = Plan::Create(ConvDesc());
  ASSERT_TRUE(conv.ok()) << conv.status();
  std::printf("plans: copy %s (%s, %.2f ms), im2col %s (%s, %.2f ms)\n",
              copy->info().kernel_name.c_str(), copy->info().level.c_str(),
              copy->info().create_ms, conv->info().kernel_name.c_str(),
              conv->info().level.c_str(), conv->info().create_ms);
  Buffers b = Make(SliceOp());
  ASSERT_TRUE(copy->Execute(In(b), Out(b), nullptr).ok());
  ExpectBitExact(b, "copy");
  Buffers c = Make(Im2colOp::Dense(DataType::kF16, Conv()));
  ASSERT_TRUE(conv->Execute(In(c), Out(c), nullptr).ok());
  ExpectBitExact(c, "im2col");

  // Captured into a graph and replayed.
  Buffers g = Make(Im2colOp::Dense(DataType::kF16, Conv()));
  CUstream stream = nullptr;
  ASSERT_EQ(driver_.stream_create(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(driver_.begin_capture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  absl::Status captured = conv->Execute(In(g), Out(g), stream);
  CUgraph graph = nullptr;
  ASSERT_EQ(driver_.end_capture(stream, &graph), CUDA_SUCCESS);
  ASSERT_TRUE(captured.ok()) << captured;
  CUgraphExec exec = nullptr;
  ASSERT_EQ(driver_.instantiate(&exec, graph, 0), CUDA_SUCCESS);
  ASSERT_EQ(driver_.launch_graph(exec, stream), CUDA_SUCCESS);
  ASSERT_EQ(cu_->cuStreamSynchronize(stream), CUDA_SUCCESS);
  ExpectBitExact(g, "im2col from a graph");
  driver_.destroy_exec(exec);
  driver_.destroy_graph(graph);
  driver_.stream_destroy(stream);
}

// batch_copy: the operator's example table executed through ExecuteItems, bit-exact, in
// both forms; a table of fewer items; Execute refused.
TEST_F(PlanGpuTest, BatchCopyExecutesItsItemTable) {
  ASSERT_TRUE(context_->Activate().ok());
  for (bool regions : {false, true}) {
    SCOPED_TRACE(regions ? "regions" : "blocks");
    BatchCopyDesc desc;
    desc.dtype = DType::kF16;
    desc.regions = regions;
    desc.count = 300;
    desc.item = regions ? 5000 : 16 * 8 * 128;
    desc.src_items = 400;
    desc.dst_items = 512;
    auto plan = Plan::Create(desc);
    ASSERT_TRUE(plan.ok()) << plan.status();
    BatchCopyOp op;
    op.element_type = DataType::kF16;
    op.form = regions ? BatchForm::kRegions : BatchForm::kBlocks;
    op.count = desc.count;
    op.item = desc.item;
    op.src_items = desc.src_items;
    op.dst_items = desc.dst_items;
    const ItemTableImage items = (*BuiltinTileOps().For(op))->ExampleItems(op);
    auto table = DeviceBuffer::Allocate(*context_, items.bytes.size());
    ASSERT_TRUE(table.ok());
    ASSERT_TRUE(table->CopyFromHost(items.bytes.data(), items.bytes.size()).ok());
    Buffers b = Make(op);
    ASSERT_TRUE(plan->ExecuteItems(In(b), Out(b), table->ptr(), items.count, nullptr).ok());
    ExpectBitExact(b, "batch_copy");
    EXPECT_THAT(std::string(plan->Execute(In(b), Out(b), nullptr).message()),
                HasSubstr("ExecuteItems"));
    EXPECT_TRUE(plan->ExecuteItems(In(b), Out(b), table->ptr(), 0, nullptr).ok());
  }
}

TEST_F(PlanGpuTest, NonPrimaryContextsAndForeignStreams) {
  CUdevice device = 0;
  ASSERT_EQ(cu_->cuDeviceGet(&device, 0), CUDA_SUCCESS);
  CUcontext own = nullptr;
  ASSERT_EQ(driver_.ctx_create(&own, 0, device), CUDA_SUCCESS);  // Now current.
  auto plan = Plan::Create(SliceDesc());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->context(), own);
  CUstream own_stream = nullptr;
  ASSERT_EQ(driver_.stream_create(&own_stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  // Back on the primary context: Execute on the plan's context's stream pushes and pops.
  ASSERT_TRUE(context_->Activate().ok());
  CUcontext before = nullptr, after = nullptr;
  ASSERT_EQ(cu_->cuCtxGetCurrent(&before), CUDA_SUCCESS);
  Buffers b = Make(SliceOp());
  absl::Status executed = plan->Execute(In(b), Out(b), own_stream);
  ASSERT_TRUE(executed.ok()) << executed;
  ASSERT_EQ(cu_->cuCtxGetCurrent(&after), CUDA_SUCCESS);
  EXPECT_EQ(before, after) << "Execute changed the caller's current context";
  ASSERT_EQ(cu_->cuStreamSynchronize(own_stream), CUDA_SUCCESS);
  ExpectBitExact(b, "copy from a non-primary context");

  // A plan of the primary context refuses the other context's stream.
  auto primary = Plan::Create(SliceDesc());
  ASSERT_TRUE(primary.ok()) << primary.status();
  absl::Status refused = primary->Execute(In(b), Out(b), own_stream);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("the stream belongs to context"));
  driver_.stream_destroy(own_stream);
  plan = absl::InternalError("released");
  driver_.ctx_destroy(own);
  ASSERT_TRUE(context_->Activate().ok());
}

TEST_F(PlanGpuTest, EightThreadsShareOnePlan) {
  ASSERT_TRUE(context_->Activate().ok());
  auto plan = Plan::Create(SliceDesc());
  ASSERT_TRUE(plan.ok()) << plan.status();
  Buffers b = Make(SliceOp());
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      CUstream stream = nullptr;
      if (context_->Activate().ok() &&
          driver_.stream_create(&stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS) {
        for (int i = 0; i < 200; ++i) failures += !plan->Execute(In(b), Out(b), stream).ok();
        cu_->cuStreamSynchronize(stream);
        driver_.stream_destroy(stream);
      } else {
        ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  ExpectBitExact(b, "copy from 8 threads");
}

// Every device of the host: a plan made with a device's primary context current binds to
// that device, executes bit-exact there, and refuses a stream of any other device, naming
// both. With one GPU it checks that one (and says so).
TEST_F(PlanGpuTest, EveryDeviceOfTheHost) {
  int count = 0;
  ASSERT_EQ(cu_->cuDeviceGetCount(&count), CUDA_SUCCESS);
  ASSERT_GE(count, 1);
  std::printf("plans on each of %d device(s)\n", count);
  std::vector<std::unique_ptr<Context>> contexts;
  std::vector<Plan> plans;
  std::vector<CUstream> streams;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    auto context = Context::Create(ordinal);
    ASSERT_TRUE(context.ok()) << context.status();
    ASSERT_TRUE((*context)->Activate().ok());
    for (bool copy : {true, false}) {
      auto plan = copy ? Plan::Create(SliceDesc()) : Plan::Create(ConvDesc());
      ASSERT_TRUE(plan.ok()) << "device " << ordinal << ": " << plan.status();
      CUcontext current = nullptr;
      ASSERT_EQ(cu_->cuCtxGetCurrent(&current), CUDA_SUCCESS);
      EXPECT_EQ(plan->context(), current) << "device " << ordinal;
      Buffers b = copy ? Make(SliceOp(), context->get())
                       : Make(Im2colOp::Dense(DataType::kF16, Conv()), context->get());
      CUstream stream = nullptr;
      ASSERT_EQ(driver_.stream_create(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
      ASSERT_TRUE(plan->Execute(In(b), Out(b), stream).ok()) << "device " << ordinal;
      ASSERT_EQ(cu_->cuStreamSynchronize(stream), CUDA_SUCCESS);
      ExpectBitExact(b, absl::StrCat(copy ? "copy" : "im2col", " on device ", ordinal),
                     context->get());
      if (copy) {
        plans.push_back(*std::move(plan));
        streams.push_back(stream);
      } else {
        driver_.stream_destroy(stream);
      }
    }
    contexts.push_back(*std::move(context));
  }
  // Each device's plan on the next device's stream.
  for (int ordinal = 0; count > 1 && ordinal < count; ++ordinal) {
    const int other = (ordinal + 1) % count;
    Buffers b = Make(SliceOp(), contexts[ordinal].get());
    absl::Status refused = plans[ordinal].Execute(In(b), Out(b), streams[other]);
    EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(refused.message(), HasSubstr(absl::StrCat("(device ", other, ")")));
    EXPECT_THAT(refused.message(), HasSubstr(absl::StrCat("(device ", ordinal, ")")));
  }
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    ASSERT_TRUE(contexts[ordinal]->Activate().ok());
    driver_.stream_destroy(streams[ordinal]);
  }
  ASSERT_TRUE(context_->Activate().ok());
}

}  // namespace
}  // namespace tiletune

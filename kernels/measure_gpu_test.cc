// The measurement harness on the GPU: a correct kernel verifies, a launch that leaves the
// output alone, writes a guard zone or writes its input is named; timing rotates over
// more than one buffer set and interleaves what it times.
#include "kernels/measure.h"

#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "compiler/codegen/codegen_test_util.h"
#include "compiler/ops/copy/copy_definition.h"
#include "compiler/ops/copy/copy_op.h"
#include "compiler/target/target.h"
#include "compiler/tuning_db/measurement.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/runtime/driver_api.h"
#include "kernels/runtime/gpu_test_util.h"

namespace tiletune {
namespace {

using ::testing::HasSubstr;

class MeasureGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TT_SKIP_WITHOUT_GPU(context_);
    Buffer src = Buffer::RowMajor("src", DataType::kF16, Scope::kGlobal, {1000, 1000});
    Buffer dst = Buffer::RowMajor("dst", DataType::kF16, Scope::kGlobal, {1000, 1000});
    op_ = CopyOp{Region::Whole(src), Region::Whole(dst)};
    auto target = Target::Parse(context_->info().ArchName());
    ASSERT_TRUE(target.ok()) << target.status();
    Trial trial = copy_.Heuristic(op_, *target);
    op_.hints = trial.hints;
    auto lowered = copy_.Lower(op_, *target, trial.launch);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    auto kernel = TileKernel::Create(*context_, copy_, *lowered, TestCompiler());
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    kernel_ = *std::move(kernel);
    std::mt19937_64 rng(std::random_device{}());
    auto bench = MeasureBench::Create(*context_, copy_, op_, rng);
    ASSERT_TRUE(bench.ok()) << bench.status();
    bench_ = *std::move(bench);
    auto check = DeviceCheck::Create(*context_, TestCompiler());
    ASSERT_TRUE(check.ok()) << check.status();
    check_ = *std::move(check);
  }

  std::unique_ptr<Context> context_;
  const CopyDefinition copy_;
  CopyOp op_;
  std::unique_ptr<TileKernel> kernel_;
  std::unique_ptr<MeasureBench> bench_;
  std::unique_ptr<DeviceCheck> check_;
};

TEST_F(MeasureGpuTest, VerifiesOnTheDeviceAndOnTheHost) {
  const Launcher launch = bench_->LauncherFor(*kernel_);
  EXPECT_TRUE(bench_->Verify(launch, "copy", check_.get()).ok());
  EXPECT_TRUE(bench_->Verify(launch, "copy", nullptr).ok());
}

TEST_F(MeasureGpuTest, NamesWhatAWrongRunDid) {
  const DriverApi& cu = context_->api();
  const Launcher nothing = [](CUdeviceptr, CUdeviceptr, CUstream) { return absl::OkStatus(); };
  for (DeviceCheck* check : {check_.get(), static_cast<DeviceCheck*>(nullptr)}) {
    absl::Status status = bench_->Verify(nothing, "idle", check);
    EXPECT_TRUE(absl::IsDataLoss(status)) << status;
    EXPECT_THAT(status.message(), HasSubstr("idle wrote 0x"));
  }
  // One byte past the output, not the poison: the guard zone after it.
  const size_t out_bytes = bench_->sizes().output_bytes;
  const uint8_t not_poison = static_cast<uint8_t>(~bench_->poison());
  const Launcher spill = [&](CUdeviceptr input, CUdeviceptr output, CUstream stream) {
    absl::Status copied = bench_->LauncherFor(*kernel_)(input, output, stream);
    if (!copied.ok()) return copied;
    return ToStatus(cu.cuMemsetD8Async(output + out_bytes, not_poison, 1, stream),
                    "cuMemsetD8Async");
  };
  absl::Status status = bench_->Verify(spill, "spill", check_.get());
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("guard zone after dst, 0 B past its end"));
  // Writing the input is caught, and the next verification gets a clean input back.
  const Launcher scribble = [&](CUdeviceptr input, CUdeviceptr output, CUstream stream) {
    absl::Status copied = bench_->LauncherFor(*kernel_)(input, output, stream);
    if (!copied.ok()) return copied;
    return ToStatus(cu.cuMemsetD8Async(input, 0, 64, stream), "cuMemsetD8Async");
  };
  status = bench_->Verify(scribble, "scribble", check_.get());
  EXPECT_TRUE(absl::IsDataLoss(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("scribble wrote to its input buffer src"));
  EXPECT_TRUE(bench_->Verify(bench_->LauncherFor(*kernel_), "copy", check_.get()).ok());
}

TEST_F(MeasureGpuTest, InterleavesRoundsOverRotatedSets) {
  // 4 MB a set against an L2 of tens of MB: several sets, and the launches go round them.
  EXPECT_GT(bench_->set_count(), 1u);
  std::set<CUdeviceptr> inputs;
  const Launcher counting = [&](CUdeviceptr input, CUdeviceptr output, CUstream stream) {
    inputs.insert(input);
    return bench_->LauncherFor(*kernel_)(input, output, stream);
  };
  ASSERT_TRUE(bench_->Batch(counting, static_cast<int>(bench_->set_count()), nullptr).ok());
  EXPECT_EQ(inputs.size(), bench_->set_count());
  const Launcher launch = bench_->LauncherFor(*kernel_);
  MeasureBench::RoundOptions options;
  options.min_rounds = options.max_rounds = 5;
  auto rounds = bench_->Interleave({launch, launch}, options, nullptr);
  ASSERT_TRUE(rounds.ok()) << rounds.status();
  EXPECT_EQ(rounds->rounds, 5);
  ASSERT_EQ(rounds->samples_us.size(), 2u);
  for (const std::vector<double>& samples : rounds->samples_us) {
    ASSERT_EQ(samples.size(), 5u);
    for (double us : samples) EXPECT_GT(us, 0);
  }
  EXPECT_GE(rounds->batch, 1);
  // Until separated: one run against four, which every sample tells apart long before
  // 25 rounds or the budget.
  const Launcher four_times = [&](CUdeviceptr input, CUdeviceptr output, CUstream stream) {
    for (int k = 0; k < 4; ++k) {
      absl::Status status = launch(input, output, stream);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  };
  options.min_rounds = 3;
  options.max_rounds = 25;
  options.budget_ms = 10000;
  options.until_separated = true;
  rounds = bench_->Interleave({launch, four_times}, options, nullptr);
  ASSERT_TRUE(rounds.ok()) << rounds.status();
  EXPECT_LT(rounds->rounds, 25);
  EXPECT_LT(tuning::Median(rounds->samples_us[0]), tuning::Median(rounds->samples_us[1]));
  EXPECT_TRUE(bench_->Interleave({}, options, nullptr).status().code() ==
              absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tiletune

// Every copy path, bit-exact against the CPU reference on fresh random data with the
// output poisoned and guard zones checked, over dtypes, odd tails, slices and ranks.
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/codegen/codegen_test_util.h"
#include "compiler/ir/buffer.h"
#include "compiler/ops/copy/copy_definition.h"
#include "compiler/ops/copy/copy_lowering.h"
#include "compiler/ops/copy/copy_op.h"
#include "gtest/gtest.h"
#include "kernels/runtime/gpu_test_util.h"
#include "kernels/tile_kernel.h"
#include "kernels/verify.h"

namespace tiletune {
namespace {

struct CopyCase {
  std::string name;
  DataType dtype;
  std::vector<int64_t> shape;
  std::vector<int64_t> tile;
  CopyPath path;
  int threads = 128;
  int stages = 1;
  int ctas_per_sm = 0;
  bool through_shared = true;
  std::optional<EvictionPolicy> eviction;
  // Optional larger buffers and offsets (slices); empty means the whole buffer.
  std::vector<int64_t> src_shape, src_offset, dst_shape, dst_offset;
};

// Keeps gtest from dumping the struct's bytes in failure messages.
void PrintTo(const CopyCase& c, std::ostream* os) { *os << c.name; }

Instruction InstructionFor(CopyPath path) {
  switch (path) {
    case CopyPath::kTma:
    case CopyPath::kBulk1d: return Instruction::kTma;
    case CopyPath::kCpAsync: return Instruction::kCpAsync;
    default: return Instruction::kSync;
  }
}

CopyOp MakeOp(const CopyCase& c) {
  auto region = [&](const std::string& name, const std::vector<int64_t>& buffer_shape,
                    const std::vector<int64_t>& offset) {
    Buffer buffer = Buffer::RowMajor(name, c.dtype, Scope::kGlobal,
                                     buffer_shape.empty() ? c.shape : buffer_shape);
    return Region::Box(buffer, offset.empty() ? std::vector<int64_t>(c.shape.size(), 0) : offset,
                       c.shape);
  };
  CopyOp op{region("src", c.src_shape, c.src_offset), region("dst", c.dst_shape, c.dst_offset)};
  op.hints.prefer_instruction = InstructionFor(c.path);
  op.hints.eviction_policy = c.eviction;
  return op;
}

std::vector<CopyCase> Cases() {
  std::vector<CopyCase> cases;
  for (DataType dtype : AllDataTypes()) {
    std::string t = DataTypeName(dtype);
    cases.push_back({"tma_" + t, dtype, {77, 160}, {32, 64}, CopyPath::kTma, 32, 2});
    cases.push_back({"tma_1stage_" + t, dtype, {77, 160}, {16, 32}, CopyPath::kTma, 32, 1});
    cases.push_back({"bulk_" + t, dtype, {1000, 48}, {4096}, CopyPath::kBulk1d, 32, 3, 1});
    cases.push_back({"cp_async_" + t, dtype, {77, 160}, {16, 64}, CopyPath::kCpAsync, 128, 3});
    cases.push_back(
        {"cp_async_1stage_" + t, dtype, {77, 160}, {16, 64}, CopyPath::kCpAsync, 64, 1, 2});
    cases.push_back({"simt_shared_" + t, dtype, {77, 150}, {8, 64}, CopyPath::kSyncSimt});
    cases.push_back(
        {"simt_direct_" + t, dtype, {77, 150}, {8, 64}, CopyPath::kSyncSimt, 128, 1, 2, false});
  }
  // Slices of larger buffers on both sides.
  for (CopyPath path : {CopyPath::kTma, CopyPath::kCpAsync, CopyPath::kSyncSimt}) {
    CopyCase c{absl::StrCat("slice_", CopyPathName(path)), DataType::kF16, {200, 256},
               {32, 64}, path, path == CopyPath::kTma ? 32 : 128, path == CopyPath::kSyncSimt ? 1 : 2};
    c.src_shape = {300, 512};
    c.src_offset = {5, 32};
    c.dst_shape = {256, 320};
    c.dst_offset = {7, 16};
    cases.push_back(c);
  }
  // Ranks 3 to 5 with tails in every dimension.
  cases.push_back({"rank4_tma", DataType::kF32, {6, 5, 33, 40}, {2, 2, 16, 8}, CopyPath::kTma, 32, 2});
  cases.push_back({"rank4_cp_async", DataType::kF32, {6, 5, 33, 40}, {2, 2, 16, 8},
                   CopyPath::kCpAsync, 64, 2});
  cases.push_back({"rank5_simt", DataType::kBF16, {3, 4, 5, 7, 24}, {2, 3, 2, 4, 16},
                   CopyPath::kSyncSimt, 64, 1});
  cases.push_back({"rank3_tma", DataType::kU8, {9, 13, 64}, {4, 8, 32}, CopyPath::kTma, 32, 4, 3});
  // Scalar accesses: odd inner extents.
  cases.push_back({"odd_u8_simt", DataType::kU8, {17, 31}, {4, 32}, CopyPath::kSyncSimt, 32});
  cases.push_back({"odd_f32_cp_async", DataType::kF32, {19, 33}, {4, 16}, CopyPath::kCpAsync, 32, 2});
  // Eviction policies on every path.
  for (EvictionPolicy policy : {EvictionPolicy::kEvictFirst, EvictionPolicy::kEvictLast}) {
    std::string p = EvictionPolicyName(policy);
    cases.push_back({"tma_" + p, DataType::kF16, {300, 256}, {64, 64}, CopyPath::kTma, 32, 3, 2,
                     true, policy});
    cases.push_back({"bulk_" + p, DataType::kF16, {300, 256}, {8192}, CopyPath::kBulk1d, 32, 2,
                     2, true, policy});
    cases.push_back({"cp_async_" + p, DataType::kF16, {300, 256}, {32, 64},
                     CopyPath::kCpAsync, 128, 2, 0, true, policy});
    cases.push_back({"simt_" + p, DataType::kF16, {300, 256}, {32, 64}, CopyPath::kSyncSimt,
                     128, 1, 0, false, policy});
  }
  // Single-stage cp.async with an L2 policy (faulted the GPU in an autotune run).
  for (int stages : {1, 2}) {
    for (bool hint : {true, false}) {
      CopyCase c{absl::StrCat("cp_async_s", stages, hint ? "_evict_first" : "_plain", "_32x256"),
                 DataType::kF16, {2048, 2048}, {32, 256}, CopyPath::kCpAsync, 256, stages};
      if (hint) c.eviction = EvictionPolicy::kEvictFirst;
      cases.push_back(c);
    }
  }
  // Neighbours of the faulting case, each varying one thing: threads, a ragged shape (so the
  // copies are predicated), evict_last, a narrower tile.
  auto probe = [&](const std::string& name, std::vector<int64_t> shape, std::vector<int64_t> tile,
                   int threads, int stages, EvictionPolicy policy) {
    CopyCase c{name, DataType::kF16, shape, tile, CopyPath::kCpAsync, threads, stages};
    c.eviction = policy;
    cases.push_back(c);
  };
  probe("cp_async_s1_evict_first_32x256_t128", {2048, 2048}, {32, 256}, 128, 1,
        EvictionPolicy::kEvictFirst);
  probe("cp_async_s1_evict_first_32x256_ragged", {2047, 2040}, {32, 256}, 256, 1,
        EvictionPolicy::kEvictFirst);
  probe("cp_async_s1_evict_last_32x256", {2048, 2048}, {32, 256}, 256, 1,
        EvictionPolicy::kEvictLast);
  probe("cp_async_s2_evict_first_32x64", {2048, 2048}, {32, 64}, 128, 2,
        EvictionPolicy::kEvictFirst);
  // Large enough to span many waves, persistent and not.
  cases.push_back({"large_tma", DataType::kF16, {4096, 2048}, {64, 128}, CopyPath::kTma, 32, 4, 3});
  cases.push_back({"large_simt", DataType::kF32, {4096, 1023}, {16, 128}, CopyPath::kSyncSimt,
                   256, 1, 0, false});
  return cases;
}

class CopyGpuTest : public ::testing::TestWithParam<CopyCase> {
 protected:
  void SetUp() override { TT_SKIP_WITHOUT_GPU(context_); }

  std::unique_ptr<Context> context_;
};

TEST_P(CopyGpuTest, BitExactAgainstReference) {
  const CopyCase& c = GetParam();
  auto target = Target::Parse(context_->info().ArchName());
  ASSERT_TRUE(target.ok());
  if (c.path == CopyPath::kTma || c.path == CopyPath::kBulk1d) {
    if (!target->HasTma()) GTEST_SKIP() << "no TMA on " << target->ArchName();
  }
  CopyOp op = MakeOp(c);
  LaunchParams launch;
  launch.tile = c.tile;
  launch.threads = c.threads;
  launch.stages = c.stages;
  launch.ctas_per_sm = c.ctas_per_sm;
  launch.through_shared = c.through_shared;
  const CopyDefinition copy;
  auto lowered = LowerCopy(op, *target, launch);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  ASSERT_EQ(lowered->path, c.path) << DescribeCopyPlan(*lowered);
  auto shared = std::make_shared<const LoweredCopy>(*lowered);
  auto kernel = TileKernel::Create(*context_, copy, shared, TestCompiler());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  std::mt19937_64 rng(std::random_device{}());
  for (int run = 0; run < 2; ++run) {
    absl::Status verified = VerifyTileKernel(*context_, **kernel, copy, op, rng);
    ASSERT_TRUE(verified.ok()) << verified << "\n" << DescribeCopyPlan(*lowered)
                               << (*kernel)->source();
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, CopyGpuTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<CopyCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace tiletune

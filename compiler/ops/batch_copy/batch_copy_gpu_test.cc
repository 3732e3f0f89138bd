// batch_copy on the GPU: every form, element size, vector width and launch shape,
// bit-exact against the CPU reference on fresh random pools with the destination poisoned
// and guard zones checked (kernels/verify.h), each case twice; tables given at launch
// (counts other than the op's, entries outside the pools, items larger than declared);
// and Library::LaunchItems end to end.
#include <cstdint>
#include <cstring>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "compiler/codegen/codegen_test_util.h"
#include "compiler/ops/batch_copy/batch_copy_definition.h"
#include "compiler/ops/batch_copy/batch_copy_lowering.h"
#include "compiler/ops/batch_copy/batch_copy_op.h"
#include "gtest/gtest.h"
#include "kernels/library.h"
#include "kernels/emulate/gpu_test_emulation.h"
#include "kernels/runtime/gpu_test_util.h"
#include "kernels/tile_kernel.h"
#include "kernels/verify.h"

namespace tiletune {
namespace {

struct BatchCase {
  std::string name;
  BatchCopyOp op;
  LaunchParams launch;
};

void PrintTo(const BatchCase& c, std::ostream* os) { *os << c.name; }

int64_t Uniform(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

std::vector<BatchCase> Cases() {
  std::vector<BatchCase> cases;
  const Target target = *Target::Parse("sm_90a");
  const std::vector<DataType> dtypes = {DataType::kU8, DataType::kF16, DataType::kF32,
                                        DataType::kF64};
  for (int index = 0; index < 80; ++index) {
    std::mt19937_64 rng(0xba7c + 104729 * index);
    for (;;) {
      BatchCopyOp op;
      op.form = index % 2 == 0 ? BatchForm::kBlocks : BatchForm::kRegions;
      op.element_type = dtypes[Uniform(rng, 0, 3)];
      // Items of a few elements to 64 KiB, often odd.
      op.item = Uniform(rng, 0, 2) == 0 ? Uniform(rng, 1, 40) : Uniform(rng, 1, 16384);
      op.count = Uniform(rng, 1, 300);
      op.dst_items = op.count + Uniform(rng, 0, 50);
      op.src_items = Uniform(rng, 1, 400);
      if (Uniform(rng, 0, 3) == 0) op.hints.eviction_policy = EvictionPolicy::kEvictFirst;
      LaunchParams launch;
      launch.tile = {Uniform(rng, 0, 2) == 0 ? op.item : Uniform(rng, 1, op.item)};
      launch.threads = static_cast<int>(32 * Uniform(rng, 1, 16));
      launch.ctas_per_sm = static_cast<int>(Uniform(rng, 0, 4));
      if (!LowerBatchCopy(op, target, launch).ok()) continue;
      cases.push_back({absl::StrFormat("%s_%03d_%s", BatchFormName(op.form), index,
                                       DataTypeName(op.element_type)),
                       op, launch});
      break;
    }
  }
  // The paged-KV shape: blocks of 16 tokens x 8 heads x 128 f16, with the heuristic.
  BatchCopyOp kv;
  kv.element_type = DataType::kF16;
  kv.item = 16 * 8 * 128;
  kv.count = 512;
  kv.src_items = kv.dst_items = 2048;
  cases.push_back({"paged_kv_heuristic", kv, BatchCopyHeuristic(kv, target).launch});
  BatchCopyOp regions = kv;
  regions.form = BatchForm::kRegions;
  regions.item = 65536;
  regions.count = 200;
  regions.src_items = regions.dst_items = 200;
  cases.push_back({"regions_64k_heuristic", regions, BatchCopyHeuristic(regions, target).launch});
  return cases;
}

class BatchCopyGpuTest : public ::testing::TestWithParam<BatchCase> {
 protected:
  void SetUp() override {
    if (EmulatingGpuTests()) return;  // context_ stays null: the case runs on the CPU
    TT_SKIP_WITHOUT_GPU(context_);
  }
  std::unique_ptr<Context> context_;
};

TEST_P(BatchCopyGpuTest, BitExactAgainstReference) {
  const BatchCase& c = GetParam();
  const BatchCopyDefinition definition;
  auto target = Target::Parse(context_ == nullptr ? "sm_90a" : context_->info().ArchName());
  ASSERT_TRUE(target.ok());
  auto lowered = LowerBatchCopy(c.op, *target, c.launch);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  if (context_ == nullptr) {
    const uint64_t seed = std::random_device{}();
    std::mt19937_64 rng(seed);
    const absl::Status verified = VerifyEmulated(
        definition, std::make_shared<const LoweredBatchCopy>(*lowered), c.op, rng, /*runs=*/2);
    ASSERT_TRUE(verified.ok()) << verified << " (seed " << seed << ")";
    return;
  }
  auto kernel = TileKernel::Create(*context_, definition,
                                   std::make_shared<const LoweredBatchCopy>(*lowered),
                                   TestCompiler());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  std::mt19937_64 rng(std::random_device{}());
  for (int run = 0; run < 2; ++run) {
    absl::Status verified = VerifyTileKernel(*context_, **kernel, definition, c.op, rng);
    ASSERT_TRUE(verified.ok()) << verified << "\n"
                               << DescribeBatchCopyPlan(*lowered) << (*kernel)->source();
  }
}

INSTANTIATE_TEST_SUITE_P(Forms, BatchCopyGpuTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<BatchCase>& info) {
                           return info.param.name;
                         });

// Pools for a table given at launch: a random source, a destination of `fill`, the
// table on the device, and what the CPU reference makes of them.
struct TableRun {
  DeviceBuffer in, out, table;
  std::vector<uint8_t> expected;
  int64_t count = 0;
  size_t pool = 0;
};

TableRun Upload(const Context& context, const BatchCopyOp& op,
                const std::vector<int64_t>& entries, uint8_t fill) {
  TableRun run;
  run.count = static_cast<int64_t>(entries.size()) / (BatchEntryBytes(op.form) / 8);
  run.pool = static_cast<size_t>(op.item * op.src_items * DataTypeBytes(op.element_type));
  std::vector<uint8_t> src(run.pool), dst(run.pool, fill);
  std::mt19937_64 rng(std::random_device{}());
  for (uint8_t& b : src) b = static_cast<uint8_t>(rng());
  run.expected = dst;
  EXPECT_TRUE(BatchCopyReference(op, reinterpret_cast<const uint8_t*>(entries.data()), run.count,
                                 src.data(), src.size(), run.expected.data(),
                                 run.expected.size())
                  .ok());
  run.in = *DeviceBuffer::Allocate(context, run.pool);
  run.out = *DeviceBuffer::Allocate(context, run.pool);
  run.table = *DeviceBuffer::Allocate(context, entries.size() * 8);
  EXPECT_TRUE(run.in.CopyFromHost(src.data(), run.pool).ok());
  EXPECT_TRUE(run.out.CopyFromHost(dst.data(), run.pool).ok());
  EXPECT_TRUE(run.table.CopyFromHost(entries.data(), entries.size() * 8).ok());
  return run;
}

// The destination pool after the launch equals the reference's.
void ExpectReference(const Context& context, const TableRun& run) {
  ASSERT_TRUE(context.Synchronize().ok());
  std::vector<uint8_t> got(run.pool);
  ASSERT_TRUE(run.out.CopyToHost(got.data(), run.pool).ok());
  EXPECT_TRUE(got == run.expected);
}

// A table given at launch: fewer items than the op's count, entries outside the pools
// (skipped), and in the regions form items three times the declared largest and
// unaligned to each other.
TEST(BatchCopyTableTest, TablesGivenAtLaunch) {
  std::unique_ptr<Context> context;
  TT_SKIP_WITHOUT_GPU(context);
  const BatchCopyDefinition definition;
  const Target target = *Target::Parse(context->info().ArchName());
  for (BatchForm form : {BatchForm::kBlocks, BatchForm::kRegions}) {
    SCOPED_TRACE(BatchFormName(form));
    BatchCopyOp op;
    op.form = form;
    op.element_type = DataType::kF16;
    op.item = 1000;
    op.count = 64;
    op.src_items = op.dst_items = 64;
    LaunchParams launch;
    launch.tile = {256};
    launch.threads = 128;
    launch.ctas_per_sm = 1;
    auto lowered = LowerBatchCopy(op, target, launch);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    auto kernel = TileKernel::Create(*context, definition,
                                     std::make_shared<const LoweredBatchCopy>(*lowered),
                                     TestCompiler());
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    std::vector<int64_t> entries;
    if (form == BatchForm::kBlocks) {
      entries = {3, 0, 63, 5, -1, 6, 2, 64, 64, 7, 10, 9};
    } else {
      entries = {1, 0, 3000,          // three declared items, odd start
                 17, 4001, 999,       // source and destination misaligned to each other
                 -5, 9000, 10,        // outside: negative offset
                 63000, 20000, 2000,  // outside: past the source pool
                 70000, 0, 10,        // outside: starts past the source pool
                 0, 70000, 10,        // outside: starts past the destination pool
                 500, 30000, 1};
    }
    TableRun run = Upload(*context, op, entries, 0x5A);
    const ItemArgs items{run.table.ptr(), run.count};
    ASSERT_TRUE(
        (*kernel)->Launch(run.in.ptr(), run.out.ptr(), RegionOffsets{}, nullptr, &items).ok());
    ExpectReference(*context, run);
    // No table: refused, naming what to do.
    absl::Status refused =
        (*kernel)->Launch(run.in.ptr(), run.out.ptr(), RegionOffsets{}, nullptr);
    EXPECT_NE(std::string(refused.message()).find("LaunchItems"), std::string::npos) << refused;
  }
}

// Through the Library: resolved, compiled and launched with the caller's table; a plain
// Launch is refused.
TEST(BatchCopyTableTest, LibraryLaunchItems) {
  std::unique_ptr<Context> context;
  TT_SKIP_WITHOUT_GPU(context);
  LibraryOptions options;
  options.user_directory = "";
  auto library = Library::Create(options);
  ASSERT_TRUE(library.ok()) << library.status();
  BatchCopyOp op;
  op.element_type = DataType::kF16;
  op.item = 16 * 8 * 128;
  op.count = 100;
  op.src_items = op.dst_items = 256;
  std::vector<int64_t> entries;
  for (int64_t i = 0; i < 100; ++i) entries.insert(entries.end(), {(i * 37) % 256, 255 - i});
  TableRun run = Upload(*context, op, entries, 0x11);
  ASSERT_TRUE(context->Activate().ok());
  absl::Status launched =
      (*library)->LaunchItems(op, run.in.ptr(), run.out.ptr(), run.table.ptr(), run.count, nullptr);
  ASSERT_TRUE(launched.ok()) << launched;
  ExpectReference(*context, run);
  absl::Status plain = (*library)->Launch(op, run.in.ptr(), run.out.ptr(), nullptr);
  EXPECT_NE(std::string(plain.message()).find("LaunchItems"), std::string::npos) << plain;
}

}  // namespace
}  // namespace tiletune

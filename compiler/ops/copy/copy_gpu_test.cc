// Every copy path, bit-exact against the CPU reference on fresh random data with the
// output poisoned and guard zones checked, over dtypes, odd tails, slices and ranks.
#include <cstdint>
#include <cstdio>
#include <map>
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
#include "compiler/ops/copy/copy_search_space.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/emulate/gpu_test_emulation.h"
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
  // A simt_addressing annotation ("per_slot", "tile_origin"); empty: the lowering's choice.
  std::string addressing;
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
  if (!c.addressing.empty()) op.hints.annotations[kSimtAddressingKey] = c.addressing;
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
  // Tile-origin addressing (tiles that do not divide the copy): rows that split into a
  // thread part and a loop constant and rows that do not (tile rows 2x5 walked 4 at a time),
  // dimensions shorter than their tile, a crop of a larger buffer.
  cases.push_back({"origin_rows_apart_simt", DataType::kF32, {7, 13, 100}, {2, 5, 64},
                   CopyPath::kSyncSimt, 64, 1, 0, false});
  cases.push_back({"origin_rows_apart_shared", DataType::kF32, {7, 13, 100}, {2, 5, 64},
                   CopyPath::kSyncSimt, 64, 1});
  cases.push_back({"origin_short_dims_cp_async", DataType::kF16, {3, 2, 100}, {4, 4, 64},
                   CopyPath::kCpAsync, 128, 2});
  cases.push_back({"origin_short_dims_simt", DataType::kU8, {3, 2, 100}, {4, 4, 64},
                   CopyPath::kSyncSimt, 128, 1, 0, false});
  cases.push_back({"origin_rows_apart_cp_async", DataType::kBF16, {7, 13, 100}, {2, 5, 64},
                   CopyPath::kCpAsync, 64, 2});
  // Last tiles that move back (an overlap of at most a quarter of the dimension) beside
  // tested ones, and a tile that divides the copy asked for tile-origin addressing.
  cases.push_back({"origin_moved_back_simt", DataType::kF16, {301, 600}, {16, 256},
                   CopyPath::kSyncSimt, 128, 1, 0, false});
  cases.push_back({"origin_moved_back_cp_async", DataType::kF32, {67, 9, 530}, {4, 8, 64},
                   CopyPath::kCpAsync, 128, 3});
  {
    CopyCase c{"origin_asked_divides", DataType::kF16, {64, 256}, {16, 64},
               CopyPath::kSyncSimt, 128, 1, 0, false};
    c.addressing = "tile_origin";
    cases.push_back(c);
  }
  {
    CopyCase c{"origin_crop_simt", DataType::kBF16, {6, 41, 45}, {1, 37, 40},
               CopyPath::kSyncSimt, 256, 1, 0, false};
    c.src_shape = {6, 45, 49};
    c.src_offset = {0, 2, 2};
    cases.push_back(c);
  }
  // Ragged tiles kept at per-slot addressing by the annotation (shipped records pin it).
  for (CopyPath path : {CopyPath::kSyncSimt, CopyPath::kCpAsync}) {
    for (bool shared : {false, true}) {
      if (path == CopyPath::kCpAsync && !shared) continue;
      CopyCase c{absl::StrCat("per_slot_ragged_", CopyPathName(path), shared ? "_shared" : ""),
                 DataType::kF32, {7, 13, 100}, {2, 5, 64}, path, 64, path == CopyPath::kCpAsync ? 2 : 1,
                 0, shared};
      c.addressing = "per_slot";
      cases.push_back(c);
    }
  }
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
  // The span form: rows narrower than 16 B (of two elements or more), and misaligned
  // wider ones, read as their src span. Pitches of 1.067x to 2x the row, unaligned starts
  // on either side, dst contiguous or apart, tails of every kind (rows not a multiple of
  // the tile, spans not a multiple of 16 B), tiles of 16 rows (many end blocks) to 2048.
  struct Span {
    std::string name;
    DataType dtype;
    int64_t rows, row, pitch, src_col, dst_pitch, dst_col, dst_row0, tile, threads;
  };
  for (const Span& sp : std::vector<Span>{
           {"u8_3of4", DataType::kU8, 5000, 3, 4, 0, 3, 0, 0, 1024, 256},
           {"u8_3of4_at1", DataType::kU8, 5001, 3, 4, 1, 3, 0, 1, 512, 128},
           {"u8_5of9", DataType::kU8, 3000, 5, 9, 3, 5, 0, 3, 256, 128},
           {"u8_15of16_at9", DataType::kU8, 999, 15, 16, 1, 15, 0, 7, 64, 64},
           {"f16_3of4", DataType::kF16, 3001, 3, 4, 1, 3, 0, 0, 1024, 256},
           {"f16_7of8", DataType::kF16, 2049, 7, 8, 0, 7, 0, 5, 128, 128},
           {"bf16_6of8", DataType::kBF16, 1500, 6, 8, 2, 6, 0, 1, 16, 32},
           {"f32_3of4", DataType::kF32, 4096, 3, 4, 1, 3, 0, 0, 512, 256},
           {"f32_2of3", DataType::kF32, 1234, 2, 3, 1, 2, 0, 3, 96, 64},
           {"u8_2of4_at2", DataType::kU8, 7777, 2, 4, 2, 2, 0, 0, 2048, 512},
           {"f32_2of4_at4", DataType::kF32, 2000, 2, 4, 1, 2, 0, 0, 256, 128},
           {"u8_3of4_dst_apart", DataType::kU8, 4000, 3, 4, 1, 5, 2, 0, 512, 256},
           {"f16_3of4_dst_apart", DataType::kF16, 1001, 3, 4, 0, 4, 1, 2, 128, 128},
           // Aligned starts and tiles of whole groups: the byte-permute gather, with a last
           // tile of rows that are not whole groups.
           {"u8_5of8_groups", DataType::kU8, 5003, 5, 8, 0, 5, 0, 0, 512, 128},
           {"u8_7of8_groups", DataType::kU8, 4099, 7, 8, 0, 7, 0, 0, 256, 64},
           {"u8_15of16_groups", DataType::kU8, 2051, 15, 16, 0, 15, 0, 0, 128, 128},
           {"u8_9of16_groups", DataType::kU8, 3333, 9, 16, 0, 9, 0, 16, 2048, 256},
           {"f16_3of4_groups", DataType::kF16, 6007, 3, 4, 0, 3, 0, 0, 1024, 256},
           {"f16_7of8_groups", DataType::kF16, 3001, 7, 8, 0, 7, 0, 0, 512, 128},
           {"f32_3of4_groups", DataType::kF32, 4097, 3, 4, 0, 3, 0, 4, 512, 256},
           {"f32_2of4_groups", DataType::kF32, 2222, 2, 4, 0, 2, 0, 0, 64, 32},
           // One tile of rows that are not whole groups.
           {"u8_3of4_one_tile", DataType::kU8, 1000, 3, 4, 0, 3, 0, 0, 1000, 128},
           // Rows of 16 B and more that no 16-B vector fits (misaligned starts, pitches or
           // lengths) into contiguous dst rows, up to just under kSpanMaxRowBytes.
           {"f16_32of40_at3", DataType::kF16, 3001, 32, 40, 3, 32, 0, 1, 64, 128},
           {"f16_100of112_at1", DataType::kF16, 2000, 100, 112, 1, 100, 0, 0, 32, 256},
           {"u8_250of301_at1", DataType::kU8, 1999, 250, 301, 1, 250, 0, 3, 48, 128},
           {"f32_25of27_at2", DataType::kF32, 4001, 25, 27, 2, 25, 0, 0, 128, 256},
           {"f64_8of9", DataType::kF64, 3000, 8, 9, 0, 8, 0, 0, 256, 128},
           {"i8_1000of1999_at7", DataType::kI8, 333, 1000, 1999, 7, 1000, 0, 1, 16, 512},
           {"f16_13of15", DataType::kF16, 5005, 13, 15, 0, 13, 0, 2, 512, 256},
       }) {
    CopyCase c{"span_" + sp.name, sp.dtype, {sp.rows, sp.row}, {sp.tile, sp.row},
               CopyPath::kSyncSimt, static_cast<int>(sp.threads), 1, 0, false};
    c.src_shape = {sp.rows, sp.pitch};
    c.src_offset = {0, sp.src_col};
    c.dst_shape = {sp.rows + sp.dst_row0, sp.dst_pitch};
    c.dst_offset = {sp.dst_row0, sp.dst_col};
    cases.push_back(c);
  }
  {
    CopyCase c{"span_u8_3of4_evict_first", DataType::kU8, {10000, 3}, {4096, 3},
               CopyPath::kSyncSimt, 256, 1, 0, false, EvictionPolicy::kEvictFirst};
    c.src_shape = {10000, 4};
    c.src_offset = {0, 1};
    cases.push_back(c);
  }
  // Large enough to span many waves, persistent and not.
  cases.push_back({"large_tma", DataType::kF16, {4096, 2048}, {64, 128}, CopyPath::kTma, 32, 4, 3});
  cases.push_back({"large_simt", DataType::kF32, {4096, 1023}, {16, 128}, CopyPath::kSyncSimt,
                   256, 1, 0, false});
  return cases;
}

class CopyGpuTest : public ::testing::TestWithParam<CopyCase> {
 protected:
  void SetUp() override {
    if (EmulatingGpuTests()) return;  // context_ stays null: the case runs on the CPU
    TT_SKIP_WITHOUT_GPU(context_);
  }

  std::unique_ptr<Context> context_;
};

TEST_P(CopyGpuTest, BitExactAgainstReference) {
  const CopyCase& c = GetParam();
  auto target = Target::Parse(context_ == nullptr ? "sm_90a" : context_->info().ArchName());
  ASSERT_TRUE(target.ok());
  if (c.path == CopyPath::kTma || c.path == CopyPath::kBulk1d) {
    TT_SKIP_UNLESS(target->HasTma(), "no TMA on " << target->ArchName());
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
  ASSERT_EQ(lowered->span, c.name.rfind("span_", 0) == 0) << DescribeCopyPlan(*lowered);
  if (c.name.rfind("origin_", 0) == 0) {
    ASSERT_EQ(lowered->addressing, SimtAddressing::kTileOrigin) << DescribeCopyPlan(*lowered);
  }
  if (c.name.rfind("origin_moved_back_", 0) == 0) {
    ASSERT_THAT(DescribeCopyPlan(*lowered), ::testing::HasSubstr("moves back"));
    ASSERT_THAT(DescribeCopyPlan(*lowered), ::testing::HasSubstr("bounds tested"));
  }
  if (c.name.rfind("per_slot_", 0) == 0) {
    ASSERT_EQ(lowered->addressing, SimtAddressing::kPerSlot) << DescribeCopyPlan(*lowered);
  }
  auto shared = std::make_shared<const LoweredCopy>(*lowered);
  if (context_ == nullptr) {
    const uint64_t seed = std::random_device{}();
    std::mt19937_64 rng(seed);
    const absl::Status verified = VerifyEmulated(copy, shared, op, rng, /*runs=*/2);
    ASSERT_TRUE(verified.ok()) << verified << " (seed " << seed << ")";
    return;
  }
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

// Random regions: ranks 1 to 5, every dtype (a third of them 1-byte), buffers padded by
// random amounts (odd pitches) or not at all (dense, merged), random offsets (unaligned
// starts), src and dst laid out independently. Each case takes the heuristic launch, or
// a launch of the search space (merged or unmerged tile, any path), so every path and
// form meets odd regions. The case list is fixed; the data is fresh on every run.
struct RegionCase {
  std::string name;
  CopyOp op;
  // Empty: the heuristic's launch.
  std::optional<LaunchParams> launch;
  std::optional<Instruction> prefer;
};

void PrintTo(const RegionCase& c, std::ostream* os) { *os << c.name; }

std::vector<RegionCase> RandomRegionCases() {
  std::mt19937_64 rng(20261201);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  const std::vector<DataType> dtypes = AllDataTypes();
  std::vector<DataType> one_byte;
  for (DataType t : dtypes) {
    if (DataTypeBytes(t) == 1) one_byte.push_back(t);
  }
  const Target sm90 = *Target::Parse("sm_90a");
  std::vector<RegionCase> cases;
  for (int i = 0; i < 240; ++i) {
    const DataType dtype = i % 3 == 0 ? one_byte[uniform(0, one_byte.size() - 1)]
                                      : dtypes[uniform(0, dtypes.size() - 1)];
    const int rank = 1 + i % 5;
    std::vector<int64_t> extents(rank);
    for (int d = 0; d < rank; ++d) {
      const bool inner = d == rank - 1;
      extents[d] = inner ? uniform(1, rank == 1 ? 70000 : 900) : uniform(1, rank <= 2 ? 300 : 9);
    }
    // Every eighth case is laid out for TMA: 16-byte aligned starts and pitches.
    const bool aligned = i % 8 == 1;
    const int64_t unit = aligned ? std::max(1, 16 / DataTypeBytes(dtype)) : 1;
    if (aligned) extents[rank - 1] = (extents[rank - 1] + unit - 1) / unit * unit;
    // Padding per side: none (dense), or up to 9 elements (units) per dimension.
    auto side = [&](const std::string& name, bool dense) {
      std::vector<int64_t> shape(rank), offsets(rank);
      for (int d = 0; d < rank; ++d) {
        const int64_t step = d == rank - 1 ? unit : 1;
        const int64_t pad = dense ? 0 : uniform(0, 9) * step;
        shape[d] = extents[d] + pad;
        offsets[d] = uniform(0, pad / step) * step;
      }
      return Region::Box(Buffer::RowMajor(name, dtype, Scope::kGlobal, shape), offsets, extents);
    };
    RegionCase c;
    c.op = CopyOp{side("src", uniform(0, 3) == 0), side("dst", uniform(0, 2) == 0)};
    const int mode = i % 4;
    if (mode != 0) {
      // A launch from the search space over the merged or the unmerged dimensions.
      const std::vector<int64_t> dims =
          mode == 3 ? SqueezedExtents(c.op.src) : MergedCopyExtents(c.op);
      std::vector<LaunchParams> launches = CopyLaunchCandidates(dims, DataTypeBytes(dtype), sm90);
      if (aligned) {
        // The TMA and bulk family (one thread drives the copy engine).
        std::vector<LaunchParams> tma;
        for (const LaunchParams& l : launches) {
          if (l.threads == 32) tma.push_back(l);
        }
        launches = tma;
      }
      c.launch = launches[uniform(0, launches.size() - 1)];
      if (mode == 2) c.prefer = Instruction::kSync;
    }
    c.name = absl::StrCat("r", i, "_", DataTypeName(dtype), "_rank", rank);
    cases.push_back(std::move(c));
  }
  return cases;
}

// The case's launch when it lowers for `target`, else the heuristic's (which always
// does); `op` gets the hints lowered with.
absl::StatusOr<std::shared_ptr<const LoweredTileKernel>> LowerRegionCase(const RegionCase& c,
                                                                        const Target& target,
                                                                        CopyOp& op) {
  const CopyDefinition copy;
  op = c.op;
  op.hints.prefer_instruction = c.prefer;
  if (c.launch.has_value()) {
    auto lowered = copy.Lower(op, target, *c.launch);
    if (lowered.ok()) return lowered;
  }
  Trial trial = copy.Heuristic(op, target);
  op.hints = trial.hints;
  return copy.Lower(op, target, trial.launch);
}

class CopyRegionGpuTest : public ::testing::TestWithParam<RegionCase> {
 protected:
  void SetUp() override {
    if (EmulatingGpuTests()) return;  // context_ stays null: the case runs on the CPU
    TT_SKIP_WITHOUT_GPU(context_);
  }

  std::unique_ptr<Context> context_;
};

TEST_P(CopyRegionGpuTest, BitExactOnRandomRegions) {
  const RegionCase& c = GetParam();
  auto target = Target::Parse(context_ == nullptr ? "sm_90a" : context_->info().ArchName());
  ASSERT_TRUE(target.ok());
  const CopyDefinition copy;
  CopyOp op;
  auto lowered = LowerRegionCase(c, *target, op);
  ASSERT_TRUE(lowered.ok()) << lowered.status() << "\n" << copy.Describe(op);
  if (context_ == nullptr) {
    const uint64_t seed = std::random_device{}();
    std::mt19937_64 rng(seed);
    const absl::Status verified = VerifyEmulated(copy, *lowered, op, rng, /*runs=*/2);
    ASSERT_TRUE(verified.ok()) << verified << " (seed " << seed << ")";
    return;
  }
  auto kernel = TileKernel::Create(*context_, copy, *lowered, TestCompiler());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  std::mt19937_64 rng(std::random_device{}());
  absl::Status verified = VerifyTileKernel(*context_, **kernel, copy, op, rng);
  ASSERT_TRUE(verified.ok()) << verified << "\n" << copy.Describe(op) << "\n"
                             << copy.DescribePlan(**lowered);
  RecordProperty("path", (*lowered)->path_name + "/" + (*lowered)->form_name);
}

INSTANTIATE_TEST_SUITE_P(Regions, CopyRegionGpuTest, ::testing::ValuesIn(RandomRegionCases()),
                         [](const ::testing::TestParamInfo<RegionCase>& info) {
                           return info.param.name;
                         });

// The paths and forms the random regions reach, so a change that routes them all to one
// path shows. Needs no GPU.
TEST(CopyRegionCasesTest, ReachEveryPathAndTheHeadTailForm) {
  const Target sm90 = *Target::Parse("sm_90a");
  std::map<std::string, int> reached;
  for (const RegionCase& c : RandomRegionCases()) {
    CopyOp op;
    auto lowered = LowerRegionCase(c, sm90, op);
    ASSERT_TRUE(lowered.ok()) << c.name << ": " << lowered.status();
    ++reached[(*lowered)->path_name + "/" + (*lowered)->form_name];
  }
  for (const auto& [path, count] : reached) std::printf("%-22s %d\n", path.c_str(), count);
  for (const char* path :
       {"tma/", "bulk_1d/", "cp_async/", "sync_simt/", "sync_simt/head_tail", "sync_simt/shifted"}) {
    EXPECT_GT(reached[path], 5) << path;
  }
}

// One kernel serves a region at any offset of the alignments it was lowered for: lowered
// once, then verified at other offsets of the same key.
TEST_F(CopyRegionGpuTest, OneKernelServesOtherOffsets) {
  if (context_ == nullptr) GTEST_SKIP() << "needs a GPU: not emulated";
  auto target = Target::Parse(context_->info().ArchName());
  ASSERT_TRUE(target.ok());
  const CopyDefinition copy;
  auto slice = [](int64_t row, int64_t col, int64_t dst_col) {
    // dst rows are 2080 B, a multiple of 16: any dst row keeps the dst start's alignment.
    CopyOp op;
    op.src = Region::Box(Buffer::RowMajor("src", DataType::kF16, Scope::kGlobal, {300, 1100}),
                         {row, col}, {200, 1000});
    op.dst = Region::Box(Buffer::RowMajor("dst", DataType::kF16, Scope::kGlobal, {210, 1040}),
                         {row / 30, dst_col}, {200, 1000});
    return op;
  };
  const CopyOp first = slice(3, 5, 13);  // starts 2 B-aligned, 8 B apart modulo 16
  Trial trial = copy.Heuristic(first, *target);
  CopyOp hinted = first;
  hinted.hints = trial.hints;
  auto lowered = copy.Lower(hinted, *target, trial.launch);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_EQ((*lowered)->form_name, "head_tail");  // 8-B slots
  auto kernel = TileKernel::Create(*context_, copy, *lowered, TestCompiler());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  std::string key;
  copy.AppendKey(hinted, key);
  std::mt19937_64 rng(std::random_device{}());
  int verified_ops = 0;
  for (int64_t row : {0, 7, 50, 99}) {
    for (int64_t col : {1, 5, 29, 93}) {
      // The same alignments as the first slice's: a src start of 2 mod 16 bytes (an
      // element index of 1 mod 8) into a dst start of 26 mod 16 bytes.
      const int64_t aligned_col = col + ((1 - (row * 1100 + col)) % 8 + 8) % 8;
      CopyOp other = slice(row, aligned_col, 13);
      other.hints = trial.hints;
      std::string other_key;
      copy.AppendKey(other, other_key);
      ASSERT_EQ(other_key, key) << "row " << row << " col " << col;
      absl::Status ok = VerifyTileKernel(*context_, **kernel, copy, other, rng);
      ASSERT_TRUE(ok.ok()) << ok << " at row " << row << ", col " << col;
      ++verified_ops;
    }
  }
  EXPECT_EQ(verified_ops, 16);
}

// The span form reads nothing outside the copy's own src span, even where the span's
// ends are not 16-B aligned: here the src allocation is exactly the buffer, whose last
// byte is the span's last, and the span starts 1 B into it, so a load of a whole end
// block would leave the allocation (compute-sanitizer's memcheck, which
// bench/sanitize_on_device.sh runs over the span tests, reports any such load).
TEST_F(CopyRegionGpuTest, SpanFormReadsOnlyItsSpan) {
  if (context_ == nullptr) GTEST_SKIP() << "needs a GPU: not emulated";
  auto target = Target::Parse(context_->info().ArchName());
  ASSERT_TRUE(target.ok());
  const CopyDefinition copy;
  constexpr int64_t kRows = 4099;
  CopyOp op;
  op.src = Region::Box(Buffer::RowMajor("src", DataType::kU8, Scope::kGlobal, {kRows, 4}),
                       {0, 1}, {kRows, 3});
  op.dst = Region::Whole(Buffer::RowMajor("dst", DataType::kU8, Scope::kGlobal, {kRows, 3}));
  Trial trial = copy.Heuristic(op, *target);
  CopyOp hinted = op;
  hinted.hints = trial.hints;
  auto lowered = copy.Lower(hinted, *target, trial.launch);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  ASSERT_EQ((*lowered)->form_name, "span") << copy.DescribePlan(**lowered);
  auto kernel = TileKernel::Create(*context_, copy, *lowered, TestCompiler());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  // Allocations of exactly the buffers' bytes (4 * kRows is a multiple of 4, not of 16).
  auto src = DeviceBuffer::Allocate(*context_, kRows * 4);
  auto dst = DeviceBuffer::Allocate(*context_, kRows * 3);
  ASSERT_TRUE(src.ok() && dst.ok());
  std::vector<uint8_t> host(kRows * 4);
  std::mt19937_64 rng(std::random_device{}());
  for (uint8_t& b : host) b = static_cast<uint8_t>(rng());
  ASSERT_TRUE(src->CopyFromHost(host.data(), host.size()).ok());
  ASSERT_TRUE(dst->Fill(0xa5).ok());
  ASSERT_TRUE((*kernel)->Launch(src->ptr(), dst->ptr(), RegionOffsets{1, 0}, nullptr).ok());
  ASSERT_TRUE(context_->Synchronize().ok());
  std::vector<uint8_t> got(kRows * 3);
  ASSERT_TRUE(dst->CopyToHost(got.data(), got.size()).ok());
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t c = 0; c < 3; ++c) {
      ASSERT_EQ(got[r * 3 + c], host[r * 4 + 1 + c]) << "row " << r << ", byte " << c;
    }
  }
}

// Bad launches are refused before anything runs: misaligned starts, overlapping operands.
TEST_F(CopyRegionGpuTest, RefusesMisalignedAndOverlappingOperands) {
  if (context_ == nullptr) GTEST_SKIP() << "needs a GPU: not emulated";
  auto target = Target::Parse(context_->info().ArchName());
  ASSERT_TRUE(target.ok());
  const CopyDefinition copy;
  CopyOp op;
  op.src = Region::Whole(Buffer::RowMajor("src", DataType::kF16, Scope::kGlobal, {64, 64}));
  op.dst = Region::Whole(Buffer::RowMajor("dst", DataType::kF16, Scope::kGlobal, {64, 64}));
  op.hints.prefer_instruction = Instruction::kSync;
  LaunchParams launch;
  launch.tile = {4096};
  launch.threads = 256;
  launch.through_shared = false;
  auto lowered = copy.Lower(op, *target, launch);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  ASSERT_EQ((*lowered)->input_align, 16);
  auto kernel = TileKernel::Create(*context_, copy, *lowered, TestCompiler());
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  auto buffer = DeviceBuffer::Allocate(*context_, 1 << 16);
  ASSERT_TRUE(buffer.ok());
  const CUdeviceptr base = buffer->ptr();
  absl::Status misaligned = (*kernel)->Launch(base + 8, base + 32768, nullptr);
  EXPECT_THAT(std::string(misaligned.message()),
              ::testing::HasSubstr("src starts at 0x"));
  EXPECT_THAT(std::string(misaligned.message()), ::testing::HasSubstr("not a multiple of 16 B"));
  absl::Status overlap = (*kernel)->Launch(base, base + 4096, nullptr);
  EXPECT_THAT(std::string(overlap.message()), ::testing::HasSubstr("overlaps dst"));
  EXPECT_TRUE((*kernel)->Launch(base, base + 8192, nullptr).ok());
  EXPECT_TRUE(context_->Synchronize().ok());
}

}  // namespace
}  // namespace tiletune

// Code generation for `copy`, checked without a GPU: golden sources, the instructions each
// path must contain in its PTX, every valid hint combination compiling through NVRTC, and
// hint neutrality.
//
// Regenerate the goldens with:
//   TILETUNE_UPDATE_GOLDENS=1 bazel run //compiler/ops/copy:copy_codegen_test
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/base/sha256.h"
#include "compiler/codegen/codegen_test_util.h"
#include "compiler/cuda/kernel_resources.h"
#include "compiler/cuda/nvrtc_compilation_provider.h"
#include "compiler/ir/buffer.h"
#include "compiler/ops/copy/copy_emitter.h"
#include "compiler/ops/copy/copy_lowering.h"
#include "compiler/ops/copy/copy_op.h"
#include "compiler/ops/copy/copy_search_space.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

CopyOp Op(DataType dtype, std::vector<int64_t> shape) {
  Buffer src = Buffer::RowMajor("src", dtype, Scope::kGlobal, shape);
  Buffer dst = Buffer::RowMajor("dst", dtype, Scope::kGlobal, shape);
  return CopyOp{Region::Whole(src), Region::Whole(dst)};
}

LaunchParams Launch(std::vector<int64_t> tile, int threads, int stages, int ctas = 0,
                    bool through_shared = true) {
  LaunchParams launch;
  launch.tile = std::move(tile);
  launch.threads = threads;
  launch.stages = stages;
  launch.ctas_per_sm = ctas;
  launch.through_shared = through_shared;
  return launch;
}

Target T(const char* arch) { return *Target::Parse(arch); }

std::string Ptx(const LoweredCopy& lowered) {
  return TestPtx(EmitCopyKernel(lowered), lowered.target.ArchName());
}

struct GoldenCase {
  std::string name;
  CopyOp op;
  Target target;
  LaunchParams launch;
};

std::vector<GoldenCase> GoldenCases() {
  CopyOp tma = Op(DataType::kF16, {8192, 8192});
  tma.hints.prefer_instruction = Instruction::kTma;
  tma.hints.eviction_policy = EvictionPolicy::kEvictFirst;
  CopyOp bulk = Op(DataType::kBF16, {4096, 4096});
  bulk.hints.prefer_instruction = Instruction::kTma;
  CopyOp cp_async = Op(DataType::kF32, {1000, 1000});
  cp_async.hints.prefer_instruction = Instruction::kCpAsync;
  cp_async.hints.eviction_policy = EvictionPolicy::kEvictLast;
  CopyOp simt = Op(DataType::kU8, {77, 150});
  simt.hints.prefer_instruction = Instruction::kSync;
  simt.hints.loop_layout = LoopLayout{8, 16};
  CopyOp slice = Op(DataType::kF16, {200, 256});
  slice.src = Region::Box(Buffer::RowMajor("src", DataType::kF16, Scope::kGlobal, {300, 512}),
                          {5, 32}, {200, 256});
  // Rows of a slice at odd columns, src and dst starts equal modulo 16 B: head_tail.
  CopyOp head_tail = Op(DataType::kF16, {300, 1000});
  head_tail.src = Region::Box(Buffer::RowMajor("src", DataType::kF16, Scope::kGlobal, {300, 1024}),
                              {0, 3}, {300, 1000});
  head_tail.dst = Region::Box(Buffer::RowMajor("dst", DataType::kF16, Scope::kGlobal, {300, 1032}),
                              {0, 11}, {300, 1000});
  head_tail.hints.eviction_policy = EvictionPolicy::kEvictFirst;
  // A dense f8 tensor of odd rows: one run, in 16-B slots.
  CopyOp odd = Op(DataType::kF8E4M3, {4099, 4097});
  // Rows whose src and dst starts disagree modulo 16 B (u8 pitches 4097 and 3997): shifted.
  CopyOp shifted = Op(DataType::kU8, {300, 3997});
  shifted.src = Region::Box(Buffer::RowMajor("src", DataType::kU8, Scope::kGlobal, {300, 4097}),
                            {0, 3}, {300, 3997});
  shifted.hints.eviction_policy = EvictionPolicy::kEvictFirst;
  // Rows of 3 B at a pitch of 4 B (RGBA to RGB): the span form, into contiguous rows and
  // into rows 5 B apart.
  CopyOp span = Op(DataType::kU8, {100000, 3});
  span.src = Region::Box(Buffer::RowMajor("src", DataType::kU8, Scope::kGlobal, {100000, 4}),
                         {0, 0}, {100000, 3});
  // The same from a src start 1 B in: the gather by bytes.
  CopyOp span_bytes = span;
  span_bytes.src = Region::Box(Buffer::RowMajor("src", DataType::kU8, Scope::kGlobal, {100000, 4}),
                               {0, 1}, {100000, 3});
  CopyOp span_apart = Op(DataType::kF16, {100000, 3});
  span_apart.src = Region::Box(Buffer::RowMajor("src", DataType::kF16, Scope::kGlobal, {100000, 4}),
                               {0, 1}, {100000, 3});
  span_apart.dst = Region::Box(Buffer::RowMajor("dst", DataType::kF16, Scope::kGlobal, {100000, 5}),
                               {0, 0}, {100000, 3});
  span_apart.hints.eviction_policy = EvictionPolicy::kEvictFirst;
  return {
      {"copy_sync_simt_span_u8", span, T("sm_90a"), Launch({4096, 3}, 256, 1, 0, false)},
      {"copy_sync_simt_span_u8_bytes", span_bytes, T("sm_90a"), Launch({4000, 3}, 256, 1, 0, false)},
      {"copy_sync_simt_span_f16_dst_apart", span_apart, T("sm_80"), Launch({2048, 3}, 128, 1, 0, false)},
      {"copy_sync_simt_head_tail_slice", head_tail, T("sm_90a"), Launch({4, 1024}, 256, 1, 0, false)},
      {"copy_sync_simt_head_tail_1d_f8", odd, T("sm_90a"), Launch({16384}, 256, 1, 0, false)},
      {"copy_sync_simt_shifted_u8", shifted, T("sm_90a"), Launch({4, 4096}, 256, 1, 0, false)},
      {"copy_tma_f16_evict_first", tma, T("sm_90a"), Launch({64, 128}, 32, 3, 2)},
      {"copy_bulk_1d_bf16", bulk, T("sm_90a"), Launch({16384}, 32, 4, 1)},
      {"copy_cp_async_f32_evict_last", cp_async, T("sm_80"), Launch({32, 64}, 128, 3)},
      {"copy_sync_simt_u8_layout", simt, T("sm_75"), Launch({8, 64}, 128, 1)},
      {"copy_sync_simt_direct_slice", slice, T("sm_86"), Launch({16, 128}, 256, 1, 0, false)},
  };
}

TEST(CopyCodegenTest, GoldenSources) {
  for (const GoldenCase& c : GoldenCases()) {
    auto lowered = LowerCopy(c.op, c.target, c.launch);
    ASSERT_TRUE(lowered.ok()) << c.name << ": " << lowered.status();
    ExpectMatchesGolden("compiler/ops/copy/testdata", c.name, EmitCopyKernel(*lowered).text,
                        "//compiler/ops/copy:copy_codegen_test");
  }
}

TEST(CopyCodegenTest, EachPathsPtxHoldsItsInstructions) {
  {
    CopyOp op = Op(DataType::kF16, {8192, 8192});
    op.hints.prefer_instruction = Instruction::kTma;
    auto lowered = LowerCopy(op, T("sm_90a"), Launch({64, 128}, 32, 3, 2));
    ASSERT_TRUE(lowered.ok());
    std::string ptx = Ptx(*lowered);
    EXPECT_THAT(ptx, HasSubstr("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"));
    EXPECT_THAT(ptx, HasSubstr("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"));
    EXPECT_THAT(ptx, HasSubstr("mbarrier.init.shared::cta.b64"));
    EXPECT_THAT(ptx, HasSubstr("mbarrier.arrive.expect_tx.shared::cta.b64"));
    EXPECT_THAT(ptx, HasSubstr("mbarrier.try_wait.parity.shared::cta.b64"));
    EXPECT_THAT(ptx, HasSubstr("cp.async.bulk.wait_group.read 1"));
    EXPECT_THAT(ptx, Not(HasSubstr("createpolicy")));
  }
  {
    CopyOp op = Op(DataType::kF16, {8192, 8192});
    op.hints.prefer_instruction = Instruction::kTma;
    auto lowered = LowerCopy(op, T("sm_90a"), Launch({8192}, 32, 2));
    ASSERT_TRUE(lowered.ok());
    ASSERT_EQ(lowered->path, CopyPath::kBulk1d);
    std::string ptx = Ptx(*lowered);
    EXPECT_THAT(ptx, HasSubstr("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"));
    EXPECT_THAT(ptx, HasSubstr("cp.async.bulk.global.shared::cta.bulk_group"));
  }
  for (const char* arch : {"sm_80", "sm_90a"}) {
    CopyOp op = Op(DataType::kF16, {1024, 1024});
    op.hints.prefer_instruction = Instruction::kCpAsync;
    auto lowered = LowerCopy(op, T(arch), Launch({32, 64}, 128, 3));
    ASSERT_TRUE(lowered.ok());
    std::string ptx = Ptx(*lowered);
    EXPECT_THAT(ptx, HasSubstr("cp.async.cg.shared.global [")) << arch;
    EXPECT_THAT(ptx, HasSubstr("cp.async.commit_group")) << arch;
    EXPECT_THAT(ptx, HasSubstr("cp.async.wait_group 1")) << arch;
    EXPECT_THAT(ptx, HasSubstr("st.global.v4.u32")) << arch;
  }
  {
    // 4-byte cp.async uses .ca.
    CopyOp op = Op(DataType::kF32, {64, 63});
    op.hints.prefer_instruction = Instruction::kCpAsync;
    auto lowered = LowerCopy(op, T("sm_80"), Launch({16, 63}, 64, 2));
    ASSERT_TRUE(lowered.ok());
    EXPECT_THAT(Ptx(*lowered), HasSubstr("cp.async.ca.shared.global ["));
  }
  for (bool through_shared : {true, false}) {
    CopyOp op = Op(DataType::kF16, {1024, 1024});
    op.hints.prefer_instruction = Instruction::kSync;
    auto lowered = LowerCopy(op, T("sm_90a"), Launch({16, 256}, 128, 1, 0, through_shared));
    ASSERT_TRUE(lowered.ok());
    std::string ptx = Ptx(*lowered);
    EXPECT_THAT(ptx, HasSubstr("ld.global.nc.v4.u32"));
    EXPECT_THAT(ptx, HasSubstr("st.global.v4.u32"));
    EXPECT_EQ(ptx.find("st.shared.v4.u32") != std::string::npos, through_shared);
  }
}

// Rows narrower than 16 B take the span form when nothing asks otherwise, on every
// architecture, and its kernels compile; the log says when it does not apply and why.
TEST(CopyCodegenTest, NarrowRowsTakeTheSpanForm) {
  struct Narrow {
    DataType dtype;
    int64_t row, pitch, col;
  };
  for (const Narrow& n : std::vector<Narrow>{{DataType::kU8, 3, 4, 1},
                                             {DataType::kU8, 2, 3, 0},
                                             {DataType::kF16, 7, 8, 1},
                                             {DataType::kF32, 3, 5, 2}}) {
    CopyOp op = Op(n.dtype, {1000, n.row});
    op.src = Region::Box(Buffer::RowMajor("src", n.dtype, Scope::kGlobal, {1000, n.pitch}),
                         {0, n.col}, {1000, n.row});
    for (const char* arch : {"sm_75", "sm_80", "sm_90a", "sm_120"}) {
      auto lowered = LowerCopy(op, T(arch), Launch({256, n.row}, 128, 1, 0, false));
      ASSERT_TRUE(lowered.ok()) << lowered.status();
      EXPECT_EQ(lowered->form_name, "span") << DescribeCopyPlan(*lowered);
      EXPECT_EQ(lowered->shared_bytes, SpanStageBytes(256, n.pitch * DataTypeBytes(n.dtype)));
      EXPECT_THAT(Ptx(*lowered), HasSubstr("ld.global.nc.v4.u32")) << arch;
    }
  }
  // Single elements at a stride (rows of one element) keep the kernel that loads them
  // one by one.
  for (DataType dtype : {DataType::kU8, DataType::kF16, DataType::kF64}) {
    CopyOp one = Op(dtype, {1000, 1});
    one.src = Region::Box(Buffer::RowMajor("src", dtype, Scope::kGlobal, {1000, 2}), {0, 1},
                          {1000, 1});
    auto lowered = LowerCopy(one, T("sm_90a"), Launch({256, 1}, 128, 1, 0, false));
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    EXPECT_FALSE(lowered->span) << DescribeCopyPlan(*lowered);
  }
  CopyOp op = Op(DataType::kU8, {1000, 3});
  op.src = Region::Box(Buffer::RowMajor("src", DataType::kU8, Scope::kGlobal, {1000, 7}),
                       {0, 1}, {1000, 3});
  auto sparse = LowerCopy(op, T("sm_90a"), Launch({256, 3}, 128, 1, 0, false));
  ASSERT_TRUE(sparse.ok());
  EXPECT_EQ(sparse->form_name, "");
  EXPECT_THAT(DescribeCopyPlan(*sparse),
              HasSubstr("span form not used for rows of 3 B: the src pitch, 7 B, is not within "
                        "twice the row (6 B)"));
  op.src = Region::Box(Buffer::RowMajor("src", DataType::kU8, Scope::kGlobal, {1000, 4}),
                       {0, 1}, {1000, 3});
  op.hints.coalesced_width = 1;
  auto hinted = LowerCopy(op, T("sm_90a"), Launch({256, 3}, 128, 1, 0, false));
  ASSERT_TRUE(hinted.ok());
  EXPECT_EQ(hinted->form_name, "");
  EXPECT_THAT(DescribeCopyPlan(*hinted), HasSubstr("coalesced_width=1 asks for vectors of 1 B"));
  op.hints.coalesced_width.reset();
  auto shared = LowerCopy(op, T("sm_90a"), Launch({256, 3}, 128, 1, 0, true));
  ASSERT_TRUE(shared.ok());
  EXPECT_THAT(DescribeCopyPlan(*shared), HasSubstr("through_shared=true asks for the tiled kernel"));
  // Overlapping src rows (a pitch under the row) keep the row-by-row kernel.
  CopyOp overlap = Op(DataType::kU8, {1000, 3});
  overlap.src = Region::Box(Buffer{"src", DataType::kU8, Scope::kGlobal, {1001, 3}, {2, 1}},
                            {0, 0}, {1000, 3});
  auto overlapping = LowerCopy(overlap, T("sm_90a"), Launch({256, 3}, 128, 1, 0, false));
  ASSERT_TRUE(overlapping.ok()) << overlapping.status();
  EXPECT_FALSE(overlapping->span);
  EXPECT_THAT(DescribeCopyPlan(*overlapping),
              HasSubstr("the src rows overlap (a pitch of 2 B under the row's 3 B)"));
  // A copy of one tile gathers by groups whatever its row count.
  CopyOp small = Op(DataType::kU8, {1000, 3});
  small.src = Region::Box(Buffer::RowMajor("src", DataType::kU8, Scope::kGlobal, {1000, 4}),
                          {0, 0}, {1000, 3});
  auto one_tile = LowerCopy(small, T("sm_90a"), Launch({1000, 3}, 128, 1, 0, false));
  ASSERT_TRUE(one_tile.ok()) << one_tile.status();
  EXPECT_EQ(one_tile->span_group_rows, 16) << DescribeCopyPlan(*one_tile);
  // A tile whose src span does not fit in shared memory is refused, naming it.
  auto huge = LowerCopy(op, T("sm_90a"), Launch({1 << 20, 3}, 128, 1, 0, false));
  EXPECT_FALSE(huge.ok());
}

// Rows of 16 B or more that no 16-B vector fits take the span form where no slot form
// takes them and dst rows are contiguous; aligned rows, slot-form rows, rows apart in dst
// and rows past kSpanMaxRowBytes keep their kernels.
TEST(CopyCodegenTest, MisalignedRowsTakeTheSpanForm) {
  struct Rows {
    DataType dtype;
    int64_t row, pitch, col, dst_pitch;
    bool span;
  };
  for (const Rows& r : std::vector<Rows>{
           {DataType::kF16, 32, 40, 3, 32, true},    // 64 B rows, 2-B aligned start
           {DataType::kF16, 100, 112, 1, 100, true},  // 200 B: no whole 16-B slots
           {DataType::kF32, 25, 27, 2, 25, true},    // 100 B rows, 4-B pitch
           {DataType::kF64, 8, 9, 0, 8, true},       // aligned start, 8-B pitch
           {DataType::kU8, 1000, 1999, 7, 1000, true},
           {DataType::kF16, 32, 40, 0, 32, false},   // 16-B aligned: 16-B vectors
           {DataType::kF16, 64, 72, 1, 64, false},   // 128 B in 16-B slots: shifted
           {DataType::kF16, 32, 40, 3, 33, false},   // dst rows apart
           {DataType::kF16, 32, 80, 3, 32, false},   // pitch over twice the row
           {DataType::kU8, 1100, 1200, 1, 1100, false},  // past kSpanMaxRowBytes
       }) {
    CopyOp op = Op(r.dtype, {1000, r.row});
    op.src = Region::Box(Buffer::RowMajor("src", r.dtype, Scope::kGlobal, {1000, r.pitch}),
                         {0, r.col}, {1000, r.row});
    op.dst = Region::Box(Buffer::RowMajor("dst", r.dtype, Scope::kGlobal, {1000, r.dst_pitch}),
                         {0, 0}, {1000, r.row});
    auto lowered = LowerCopy(op, T("sm_90a"), Launch({8, r.row}, 256, 1, 0, false));
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    EXPECT_EQ(lowered->span, r.span) << DescribeCopyPlan(*lowered);
    if (!r.span) continue;
    EXPECT_EQ(lowered->vector_elems * DataTypeBytes(r.dtype), 16);
    EXPECT_THAT(Ptx(*lowered), HasSubstr("ld.global.nc.v4.u32"));
    EXPECT_THAT(Ptx(*lowered), HasSubstr("st.global.v4.u32"));
    // A narrower coalesced_width asks for the row-by-row kernel, and the log says so.
    CopyOp hinted = op;
    hinted.hints.coalesced_width = 1;
    auto narrow = LowerCopy(hinted, T("sm_90a"), Launch({8, r.row}, 256, 1, 0, false));
    ASSERT_TRUE(narrow.ok()) << narrow.status();
    EXPECT_FALSE(narrow->span);
    EXPECT_THAT(DescribeCopyPlan(*narrow), HasSubstr("span form not used for misaligned rows"));
  }
  // Rows whose src and dst starts agree modulo 8 B, at 4-B alignment, in whole 8-B slots:
  // head_tail takes a whole row, so they do not suit the span form; modulo 2 B they do.
  const MergedCopyGeometry slots{{1000, 100}, {104, 1}, {100, 1}, /*src_offset=*/6,
                                 /*dst_offset=*/2};
  EXPECT_FALSE(SpanGeometry(slots, 2));
  MergedCopyGeometry shifted = slots;
  shifted.src_offset = 5;
  EXPECT_TRUE(SpanGeometry(shifted, 2));
  // The heuristic takes a span tile unless a coalesced_width, keyword or annotation alike,
  // asks for the row-by-row kernel.
  CopyOp narrow = Op(DataType::kU8, {1000, 3});
  narrow.src = Region::Box(Buffer::RowMajor("src", DataType::kU8, Scope::kGlobal, {1000, 4}),
                           {0, 1}, {1000, 3});
  const std::vector<int64_t> span_tile = CopyHeuristic(narrow, T("sm_90a")).launch.tile;
  EXPECT_THAT(span_tile, ElementsAre(1000, 3));
  CopyOp keyword = narrow, annotated = narrow;
  keyword.hints.coalesced_width = 1;
  annotated.hints.annotations["coalesced_width"] = "1";
  EXPECT_NE(CopyHeuristic(keyword, T("sm_90a")).launch.tile, span_tile);
  EXPECT_EQ(CopyHeuristic(annotated, T("sm_90a")).launch.tile,
            CopyHeuristic(keyword, T("sm_90a")).launch.tile);
}

TEST(CopyCodegenTest, EvictionPoliciesReachEveryPath) {
  struct Case {
    Instruction instruction;
    std::vector<int64_t> tile;
    int threads, stages;
    std::vector<std::string> hinted;
  };
  for (EvictionPolicy policy : {EvictionPolicy::kEvictFirst, EvictionPolicy::kEvictLast}) {
    std::string create =
        absl::StrCat("createpolicy.fractional.L2::", EvictionPolicyName(policy), ".b64");
    for (const Case& c :
         {Case{Instruction::kTma, {64, 128}, 32, 2,
               {"complete_tx::bytes.L2::cache_hint", "bulk_group.L2::cache_hint"}},
          Case{Instruction::kTma, {8192}, 32, 2,
               {"complete_tx::bytes.L2::cache_hint", "bulk_group.L2::cache_hint"}},
          Case{Instruction::kCpAsync, {32, 64}, 128, 2,
               {"cp.async.cg.shared.global.L2::cache_hint", "st.global.L2::cache_hint.v4.u32"}},
          Case{Instruction::kSync, {32, 64}, 128, 1,
               {"ld.global.nc.L2::cache_hint.v4.u32", "st.global.L2::cache_hint.v4.u32"}}}) {
      CopyOp op = Op(DataType::kF16, {1024, 1024});
      op.hints.prefer_instruction = c.instruction;
      op.hints.eviction_policy = policy;
      auto lowered = LowerCopy(op, T("sm_90a"), Launch(c.tile, c.threads, c.stages));
      ASSERT_TRUE(lowered.ok()) << lowered.status();
      std::string ptx = Ptx(*lowered);
      EXPECT_THAT(ptx, HasSubstr(create)) << CopyPathName(lowered->path);
      for (const std::string& needle : c.hinted) {
        EXPECT_THAT(ptx, HasSubstr(needle)) << CopyPathName(lowered->path);
      }
    }
  }
}

// The hinted cp.async takes its shared address as register + %tid.y, the workaround for
// ptxas 13.0 encoding it as LDGSTS [R+UR0], desc[UR1] (ILLEGAL_INSTRUCTION on an H200).
TEST(CopyCodegenTest, HintedCpAsyncKeepsTheSharedAddressInOneRegister) {
  CopyOp op = Op(DataType::kF16, {2048, 2048});
  op.hints.prefer_instruction = Instruction::kCpAsync;
  op.hints.eviction_policy = EvictionPolicy::kEvictFirst;
  auto lowered = LowerCopy(op, T("sm_90a"), Launch({32, 256}, 256, 1));
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  std::string ptx = Ptx(*lowered);
  EXPECT_THAT(ptx, HasSubstr("%tid.y"));
  // Without the hint the copy needs no workaround and the kernel does not read %tid.y.
  op.hints.eviction_policy = std::nullopt;
  lowered = LowerCopy(op, T("sm_90a"), Launch({32, 256}, 256, 1));
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_THAT(Ptx(*lowered), Not(HasSubstr("%tid.y")));
}

// A crop's rows fitted into a tile that divides none of its dimensions, the tile the library
// fits from a record's: with each vector's offsets and bounds flag held across the loop,
// ptxas gave such kernels over 200 registers a thread, one CTA an SM. Tile-origin
// addressing leaves them a handful beyond the vectors they move (and a predicate each
// where the last tile is tested rather than moved back).
TEST(CopyCodegenTest, RaggedTilesKeepTheirRegistersFew) {
  // 223 rows in tiles of 37 (the last tile moves back) and 40 (the last tile is tested).
  for (int64_t rows : {223, 40}) {
  Buffer src = Buffer::RowMajor("src", DataType::kBF16, Scope::kGlobal, {16, 64, 227, 227});
  Buffer dst = Buffer::RowMajor("dst", DataType::kBF16, Scope::kGlobal, {16, 64, rows, 223});
  CopyOp crop{Region::Box(src, {0, 0, 2, 2}, {16, 64, rows, 223}), Region::Whole(dst)};
  crop.hints.prefer_instruction = Instruction::kSync;
  crop.hints.coalesced_width = 1;
  for (int threads : {256, 512}) {
    auto lowered = LowerCopy(crop, T("sm_90a"), Launch({1, 37, 223}, threads, 1, 0, false));
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    ASSERT_EQ(lowered->addressing, SimtAddressing::kTileOrigin) << DescribeCopyPlan(*lowered);
    ASSERT_EQ(lowered->moved_back[1], rows == 223) << DescribeCopyPlan(*lowered);
    auto resources = CompileForResources(TestCompiler(), EmitCopyKernel(*lowered), "sm_90a");
    ASSERT_TRUE(resources.ok()) << resources.status();
    EXPECT_EQ(resources->spill_bytes, 0) << threads;
    // About 33 vectors of 2 B a thread at 256 threads, 17 at 512.
    // A tested last tile keeps a predicate a vector: still at least 3 CTAs of 256 an SM.
    EXPECT_LE(resources->registers, rows == 223 ? 64 : 80)
        << threads << " threads\n" << DescribeCopyPlan(*lowered);
  }
  }
}

// Every combination of the six hints, as keywords (and as annotations, which must give
// the same kernel).
std::vector<Hints> AllHintCombinations() {
  std::vector<Hints> all;
  std::vector<std::optional<int>> widths = {std::nullopt, 1, 2, 4, 8, 16};
  std::vector<std::optional<EvictionPolicy>> policies = {
      std::nullopt, EvictionPolicy::kEvictNormal, EvictionPolicy::kEvictFirst,
      EvictionPolicy::kEvictLast};
  std::vector<std::optional<Instruction>> instructions = {std::nullopt, Instruction::kTma,
                                                          Instruction::kCpAsync, Instruction::kSync};
  std::vector<std::optional<LoopLayout>> layouts = {std::nullopt, LoopLayout{4, 32}};
  for (auto width : widths) {
    for (bool disable_tma : {false, true}) {
      for (auto policy : policies) {
        for (auto instruction : instructions) {
          for (auto layout : layouts) {
            Hints hints;
            hints.coalesced_width = width;
            hints.disable_tma = disable_tma;
            hints.eviction_policy = policy;
            hints.prefer_instruction = instruction;
            hints.loop_layout = layout;
            all.push_back(hints);
          }
        }
      }
    }
  }
  return all;
}

TEST(CopyCodegenTest, EveryValidHintCombinationCompiles) {
  std::set<std::string> compiled;
  int valid = 0, rejected = 0;
  for (const char* arch : {"sm_80", "sm_90a"}) {
    for (const LaunchParams& launch : {Launch({32, 64}, 128, 1), Launch({32, 64}, 128, 3, 2)}) {
      for (const Hints& hints : AllHintCombinations()) {
        CopyOp op = Op(DataType::kF16, {300, 256});
        op.hints = hints;
        auto lowered = LowerCopy(op, T(arch), launch);
        if (!lowered.ok()) {
          ++rejected;
          EXPECT_EQ(lowered.status().code(), absl::StatusCode::kInvalidArgument);
          continue;
        }
        ++valid;
        CudaSource source = EmitCopyKernel(*lowered);
        if (!compiled.insert(absl::StrCat(arch, Sha256Hex(source.text))).second) continue;
        CompileOptions options;
        options.arch = arch;
        auto cubin = TestCompiler().CompileToCubin(source, options);
        ASSERT_TRUE(cubin.ok()) << HintsToString(lowered->hints) << " on " << arch << ": "
                                << cubin.status() << "\n" << source.text;
      }
    }
  }
  // The space is large and mostly valid; distinct kernels are far fewer than combinations.
  EXPECT_GT(valid, 500);
  EXPECT_GT(rejected, 0);
  EXPECT_GT(compiled.size(), 20u);
  EXPECT_LT(compiled.size(), static_cast<size_t>(valid) / 4);
}

TEST(CopyCodegenTest, AnnotationsGiveTheSameKernelAsKeywords) {
  CopyOp keywords = Op(DataType::kF16, {300, 256});
  keywords.hints.prefer_instruction = Instruction::kCpAsync;
  keywords.hints.eviction_policy = EvictionPolicy::kEvictLast;
  keywords.hints.coalesced_width = 4;
  CopyOp annotated = Op(DataType::kF16, {300, 256});
  annotated.hints.prefer_instruction = Instruction::kSync;  // Overridden below.
  annotated.hints.annotations = {{"prefer_instruction", "cp_async"},
                                 {"eviction_policy", "evict_last"},
                                 {"coalesced_width", "4"}};
  auto a = LowerCopy(keywords, T("sm_90a"), Launch({32, 64}, 128, 2));
  auto b = LowerCopy(annotated, T("sm_90a"), Launch({32, 64}, 128, 2));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(EmitCopyKernel(*a).text, EmitCopyKernel(*b).text);
}

// A hint the target has no use for leaves the kernel byte-identical.
TEST(CopyCodegenTest, HintNeutrality) {
  int checked = 0;
  for (const std::string& arch : Target::KnownArchs()) {
    Target target = T(arch.c_str());
    for (const LaunchParams& launch : {Launch({32, 64}, 128, 1), Launch({32, 64}, 128, 2)}) {
      CopyOp base = Op(DataType::kF16, {300, 256});
      auto plain = LowerCopy(base, target, launch);
      if (!plain.ok()) continue;
      std::string reference = EmitCopyKernel(*plain).text;
      std::vector<Hints> neutral;
      if (!target.HasTma()) {
        Hints disable;
        disable.disable_tma = true;
        neutral.push_back(disable);
        Hints prefer_tma;
        prefer_tma.prefer_instruction = Instruction::kTma;
        prefer_tma.annotations["fallback"] = "auto";
        neutral.push_back(prefer_tma);
      }
      if (!target.HasL2CacheHints()) {
        for (EvictionPolicy p : {EvictionPolicy::kEvictNormal, EvictionPolicy::kEvictFirst,
                                 EvictionPolicy::kEvictLast}) {
          Hints evict;
          evict.eviction_policy = p;
          neutral.push_back(evict);
        }
      }
      if (!target.HasCpAsync()) {
        Hints prefer_cp_async;
        prefer_cp_async.prefer_instruction = Instruction::kCpAsync;
        prefer_cp_async.annotations["fallback"] = "auto";
        neutral.push_back(prefer_cp_async);
      }
      Hints normal;
      normal.eviction_policy = EvictionPolicy::kEvictNormal;
      neutral.push_back(normal);
      if (plain->path == CopyPath::kTma || plain->path == CopyPath::kBulk1d) {
        // Thread layout and vector width mean nothing to the copy engine.
        Hints simt_only;
        simt_only.loop_layout = LoopLayout{2, 64};
        simt_only.coalesced_width = 2;
        neutral.push_back(simt_only);
      }
      for (const Hints& hints : neutral) {
        CopyOp op = base;
        op.hints = hints;
        auto lowered = LowerCopy(op, target, launch);
        ASSERT_TRUE(lowered.ok()) << arch << ": " << lowered.status();
        EXPECT_EQ(EmitCopyKernel(*lowered).text, reference)
            << arch << " with " << HintsToString(lowered->hints);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 30);
}

}  // namespace
}  // namespace tiletune

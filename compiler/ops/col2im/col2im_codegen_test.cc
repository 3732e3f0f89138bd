// Code generation for `col2im`, checked without a GPU: golden sources, the instructions
// each form must contain in its PTX, and every dtype, form and hint combination of the
// search space compiling through NVRTC for sm_80 and sm_90a.
//
// Regenerate the goldens with:
//   TILETUNE_UPDATE_GOLDENS=1 bazel run //compiler/ops/col2im:col2im_codegen_test
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/codegen_test_util.h"
#include "compiler/ops/col2im/col2im_emitter.h"
#include "compiler/ops/col2im/col2im_lowering.h"
#include "compiler/ops/col2im/col2im_op.h"
#include "compiler/ops/col2im/col2im_search_space.h"
#include "compiler/ops/im2col/conv_spec.h"
#include "compiler/ops/im2col/im2col_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Target T(const char* arch) { return *Target::Parse(arch); }

LaunchParams Launch(int64_t tile_h, int64_t tile_w, bool staged, int threads = 256,
                    int stages = 1, int ctas_per_sm = 0) {
  LaunchParams launch;
  launch.ctas_per_sm = ctas_per_sm;
  launch.tile = {tile_h, tile_w};
  launch.through_shared = staged;
  launch.threads = threads;
  launch.stages = stages;
  return launch;
}

std::string Ptx(const LoweredCol2im& lowered) {
  return TestPtx(EmitCol2imKernel(lowered), lowered.target.ArchName());
}

TEST(Col2imCodegenTest, MatchesGoldens) {
  Col2imOp resnet = Col2imOp::Dense(DataType::kF16, G(64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1));
  resnet.hints.annotations["col_eviction_policy"] = "evict_first";
  Col2imOp stem = Col2imOp::Dense(DataType::kF16, G(32, 224, 224, 3, 7, 7, 2, 2, 1, 1, 3, 3));
  Col2imOp asymmetric = Col2imOp::Dense(DataType::kBF16, G(2, 11, 10, 6, 3, 2, 2, 1, 1, 2, 1, 1));
  asymmetric.img.strides = {11 * 10 * 8, 10 * 8, 8, 1};  // padded C
  Col2imOp f32 = Col2imOp::Dense(DataType::kF32, G(2, 9, 9, 8, 3, 3, 2, 2, 1, 1, 1, 1));
  f32.hints.eviction_policy = EvictionPolicy::kEvictLast;
  Col2imOp f32_cp_async = f32;
  f32_cp_async.hints.disable_tma = true;
  // F.fold's layout: channel_rows columns into an NCHW image.
  Col2imOp fold = Col2imOp::Dense(DataType::kF16, G(64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1));
  fold.img.strides = {64 * 56 * 56, 56, 1, 56 * 56};
  fold.order = ColumnOrder::kChannelRows;
  fold.hints.annotations["col_eviction_policy"] = "evict_first";
  Col2imOp fold_f32 = Col2imOp::Dense(DataType::kF32, G(2, 11, 10, 6, 3, 2, 2, 1, 1, 2, 1, 1));
  fold_f32.order = ColumnOrder::kChannelRows;
  // F.fold of a ViT's 16x16 patches, by the patches form; a bf16 one of oblong 2x4 patches
  // in runs of window rows, its columns streamed.
  Col2imOp vit = Col2imOp::Dense(DataType::kF16, G(2, 224, 224, 3, 16, 16, 16, 16, 1, 1, 0, 0));
  vit.img.strides = NchwStrides(vit.geometry);
  vit.order = ColumnOrder::kChannelRows;
  vit.hints.annotations["planes_gather"] = "patches";
  Col2imOp oblong = Col2imOp::Dense(DataType::kBF16, G(2, 12, 20, 3, 2, 4, 2, 4, 1, 1, 0, 0));
  oblong.img.strides = NchwStrides(oblong.geometry);
  oblong.order = ColumnOrder::kChannelRows;
  oblong.hints.annotations["planes_gather"] = "patches";
  oblong.hints.annotations["col_eviction_policy"] = "evict_first";
  struct Case {
    std::string name;
    Col2imOp op;
    LaunchParams launch;
  } cases[] = {
      {"col2im_planes_fold_f16", fold, Launch(8, 56, false)},
      {"col2im_planes_nhwc_f32", fold_f32, Launch(2, 8, false, 64)},
      {"col2im_planes_staged_fold_f16", fold, Launch(8, 56, true)},
      {"col2im_patches_vit_f16", vit, Launch(1, 14, false)},
      {"col2im_patches_runs_bf16", oblong, Launch(2, 4, false, 64)},
      {"col2im_direct_resnet_f16", resnet, Launch(1, 32, false)},
      {"col2im_staged_stem_f16", stem, Launch(2, 224, true)},
      {"col2im_direct_asymmetric_bf16", asymmetric, Launch(2, 8, false, 128)},
      {"col2im_staged_f32_evict_last", f32, Launch(4, 9, true, 64)},
      {"col2im_swept_tma_stem_f16", stem, Launch(8, 224, true, 896, 5, 1)},
      {"col2im_swept_cp_async_f32_evict_last", f32_cp_async, Launch(4, 9, true, 64, 3)},
  };
  for (const Case& c : cases) {
    auto lowered = LowerCol2im(c.op, T("sm_90a"), c.launch);
    ASSERT_TRUE(lowered.ok()) << c.name << ": " << lowered.status();
    const CudaSource source = EmitCol2imKernel(*lowered);
    ExpectMatchesGolden("compiler/ops/col2im/testdata", c.name, source.text,
                        "//compiler/ops/col2im:col2im_codegen_test");
    ExpectGuardedLoadsTakeSafeAddresses(source.text, c.name);
    EXPECT_FALSE(Ptx(*lowered).empty()) << c.name;
  }
}

TEST(Col2imCodegenTest, PtxHasTheFormsInstructions) {
  Col2imOp op = Col2imOp::Dense(DataType::kF16, G(2, 14, 14, 64, 3, 3, 1, 1, 1, 1, 1, 1));
  op.hints.annotations["col_eviction_policy"] = "evict_first";
  auto direct = LowerCol2im(op, T("sm_90a"), Launch(1, 32, false));
  ASSERT_TRUE(direct.ok()) << direct.status();
  const std::string direct_ptx = Ptx(*direct);
  EXPECT_THAT(direct_ptx, HasSubstr("ld.global.nc.L2::cache_hint.v4.u32"));
  EXPECT_THAT(direct_ptx, HasSubstr("cvt.f32.f16"));
  EXPECT_THAT(direct_ptx, HasSubstr("cvt.rn.f16.f32"));
  EXPECT_THAT(direct_ptx, HasSubstr("st.global.v4.u32"));
  EXPECT_THAT(direct_ptx, Not(HasSubstr("atom")));
  EXPECT_THAT(direct_ptx, Not(HasSubstr("bar.sync")));
  auto staged = LowerCol2im(op, T("sm_90a"), Launch(2, 14, true));
  ASSERT_TRUE(staged.ok()) << staged.status();
  const std::string staged_ptx = Ptx(*staged);
  EXPECT_THAT(staged_ptx, HasSubstr("ld.shared.v4.u32"));
  EXPECT_THAT(staged_ptx, HasSubstr("st.shared.v4.u32"));
  EXPECT_THAT(staged_ptx, HasSubstr("bar.sync"));
  EXPECT_THAT(staged_ptx, Not(HasSubstr("atom")));
  auto tma = LowerCol2im(op, T("sm_90a"), Launch(4, 14, true, 256, 2));
  ASSERT_TRUE(tma.ok()) << tma.status();
  ASSERT_EQ(tma->path, Col2imPath::kTmaSwept);
  const std::string tma_ptx = Ptx(*tma);
  EXPECT_THAT(tma_ptx, HasSubstr("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"));
  EXPECT_THAT(tma_ptx, HasSubstr("mbarrier.arrive.expect_tx"));
  EXPECT_THAT(tma_ptx, HasSubstr("mbarrier.try_wait.parity"));
  EXPECT_THAT(tma_ptx, Not(HasSubstr("atom")));
  op.hints.disable_tma = true;
  auto swept = LowerCol2im(op, T("sm_90a"), Launch(4, 14, true, 256, 2));
  ASSERT_TRUE(swept.ok()) << swept.status();
  ASSERT_EQ(swept->path, Col2imPath::kCpAsyncSwept);
  const std::string swept_ptx = Ptx(*swept);
  EXPECT_THAT(swept_ptx, HasSubstr("cp.async.cg.shared.global.L2::cache_hint"));
  EXPECT_THAT(swept_ptx, HasSubstr("cp.async.wait_group 1"));
  EXPECT_THAT(swept_ptx, HasSubstr("ld.shared.v4.u32"));
  EXPECT_THAT(swept_ptx, HasSubstr("bar.sync"));
  EXPECT_THAT(swept_ptx, Not(HasSubstr("atom")));
}

TEST(Col2imCodegenTest, PatchesFormCopiesThroughSharedMemory) {
  // A ViT's patches: the taps' matrix rows in 16-byte vectors into shared memory, whole
  // image rows out in 16-byte vectors, no sums of several reads.
  Col2imOp vit = Col2imOp::Dense(DataType::kF16, G(2, 224, 224, 3, 16, 16, 16, 16, 1, 1, 0, 0));
  vit.img.strides = NchwStrides(vit.geometry);
  vit.order = ColumnOrder::kChannelRows;
  vit.hints.annotations["planes_gather"] = "patches";
  auto lowered = LowerCol2im(vit, T("sm_90a"), Launch(4, 14, false));
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  ASSERT_EQ(lowered->path, Col2imPath::kSimtPatches);
  const std::string ptx = Ptx(*lowered);
  EXPECT_THAT(ptx, HasSubstr("ld.global.nc.v4.u32"));
  EXPECT_THAT(ptx, HasSubstr("st.shared.v4.u32"));
  EXPECT_THAT(ptx, HasSubstr("bar.sync"));
  EXPECT_THAT(ptx, HasSubstr("st.global.v4.u32"));
  EXPECT_THAT(ptx, Not(HasSubstr("atom")));
}

TEST(Col2imCodegenTest, EveryDtypeFormAndHintCompiles) {
  // The search space's hint sets and every form, for each type, on sm_80 and sm_90a:
  // distinct sources all compile.
  std::set<std::string> sources;
  for (DataType dtype : {DataType::kF32, DataType::kF16, DataType::kBF16}) {
    for (int64_t c : {3, 8}) {
      const Col2imOp base = Col2imOp::Dense(dtype, G(2, 9, 11, c, 3, 2, 2, 1, 1, 2, 1, 1));
      for (const char* arch : {"sm_80", "sm_90a"}) {
        for (const Hints& hints : AllCol2imHints()) {
          for (int form = 0; form < 4; ++form) {  // direct, staged, swept by TMA, by cp.async
            Col2imOp op = base;
            op.hints = hints;
            op.hints.disable_tma = form == 3;
            auto lowered =
                LowerCol2im(op, T(arch), Launch(2, 8, form > 0, 128, form >= 2 ? 2 : 1));
            if (!lowered.ok()) continue;  // a coalesced_width C does not allow
            const CudaSource source = EmitCol2imKernel(*lowered);
            if (!sources.insert(source.text).second) continue;
            ExpectGuardedLoadsTakeSafeAddresses(source.text, HintsToString(lowered->hints));
            ASSERT_FALSE(TestPtx(source, arch).empty())
                << DataTypeName(dtype) << " " << arch << " " << HintsToString(lowered->hints);
          }
        }
      }
    }
  }
  EXPECT_GE(sources.size(), 100u);
}

}  // namespace
}  // namespace tiletune

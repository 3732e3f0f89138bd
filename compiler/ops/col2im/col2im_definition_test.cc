// The col2im definition: problems in and out of the database, specs, flags, forms as named
// paths, the search space and the heuristic.
#include "compiler/ops/col2im/col2im_definition.h"

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "compiler/ops/candidates.h"
#include "compiler/ops/col2im/col2im_lowering.h"
#include "compiler/ops/col2im/col2im_op.h"
#include "compiler/ops/col2im/col2im_search_space.h"
#include "compiler/ops/im2col/im2col_test_util.h"
#include "compiler/tuning_db/tuning_db.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Target T(const char* arch) { return *Target::Parse(arch); }

TEST(Col2imDefinitionTest, ProblemsRoundTripInCanonicalForm) {
  const Col2imDefinition col2im;
  Col2imOp op = Col2imOp::Dense(DataType::kBF16, G(4, 14, 14, 32, 3, 3, 2, 1, 1, 2, 1, 1));
  op.img.strides = {14 * 15 * 32, 15 * 32, 32, 1};  // a padded row
  auto problem = col2im.ToProblem(op);
  ASSERT_TRUE(problem.ok()) << problem.status();
  EXPECT_EQ(problem->dtype(), "bf16");
  EXPECT_EQ(problem->col2im().sh(), 2);
  EXPECT_EQ(problem->col2im().dw(), 2);
  EXPECT_THAT(problem->col2im().img_strides(), ElementsAre(14 * 15 * 32, 15 * 32, 32, 1));
  EXPECT_EQ(tuning::OperatorName(*problem), "col2im");
  auto back = col2im.FromProblem(*problem);
  ASSERT_TRUE(back.ok()) << back.status();
  const Col2imOp& same = static_cast<const Col2imOp&>(**back);
  EXPECT_TRUE(same.geometry == op.geometry);
  EXPECT_EQ(same.img.strides, op.img.strides);
  EXPECT_EQ(col2im.ToProblem(same)->SerializeAsString(), problem->SerializeAsString());
  EXPECT_THAT(col2im.Describe(op), HasSubstr("col2im bf16 N4 C32 14x14 k3x3 s2x1 d1x2 p1x1"));
  tuning::Problem bad = *problem;
  bad.mutable_col2im()->set_ph(5);
  EXPECT_THAT(col2im.FromProblem(bad).status().message(),
              HasSubstr("col2im ph=5 with kh=3 and dh=1: the pad must be smaller"));
  bad = *problem;
  bad.set_dtype("u8");
  EXPECT_THAT(col2im.FromProblem(bad).status().message(), HasSubstr("accepted are f32, f16, bf16"));
  tuning::Problem other;
  other.mutable_im2col();
  EXPECT_THAT(col2im.FromProblem(other).status().message(), HasSubstr("is not a col2im"));
}

TEST(Col2imDefinitionTest, SpecsAndFlags) {
  const Col2imDefinition col2im;
  auto op = col2im.ParseSpec("f16:32,224,224,3:k=7:s=2:p=3");
  ASSERT_TRUE(op.ok()) << op.status();
  EXPECT_EQ(col2im.Describe(**op), "col2im f16 N32 C3 224x224 k7x7 s2x2 d1x1 p3x3");
  EXPECT_THAT(col2im.ParseSpec("u8:2,9,11,5:k=3").status().message(),
              HasSubstr("accepted are f32, f16, bf16"));
  EXPECT_THAT(col2im.ParseSpec("f16:2,9,11,5:k=3:k=5").status().message(),
              HasSubstr("option 'k' is given twice"));
  EXPECT_THAT(col2im.ParseSpec("f16:2,9,11,5:k=3:p=9").status().message(),
              HasSubstr("col2im ph=9"));
  auto flags = col2im.FromFlags({{"shape", "2,9,11,5"}, {"kernel", "3,5"}, {"pad", "1"}},
                                DataType::kF32, Hints{});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(static_cast<const Col2imOp&>(**flags).geometry.kw, 5);
  EXPECT_THAT(col2im.FromFlags({{"shape", "2,9,11,5"}}, DataType::kF32, Hints{}).status().message(),
              HasSubstr("--kernel is required for --op=col2im"));
}

TEST(Col2imDefinitionTest, FormsAreNamedPathsInTheDatabase) {
  const Col2imDefinition col2im;
  tuning::Lowering lowering;
  lowering.set_path("simt_col2im");
  for (const char* form : {"", "direct", "staged", "planes", "planes_staged", "patches"}) {
    lowering.set_form(form);
    EXPECT_TRUE(col2im.CheckLowering(lowering).ok()) << form;
  }
  lowering.set_form("row");
  EXPECT_FALSE(col2im.CheckLowering(lowering).ok());
  lowering.set_path("tma");
  lowering.set_form("");
  EXPECT_THAT(col2im.CheckLowering(lowering).message(), HasSubstr("accepted for col2im"));
  const Col2imOp stem = Col2imOp::Dense(DataType::kF16, G(2, 32, 32, 3, 7, 7, 2, 2, 1, 1, 3, 3));
  LaunchParams launch;
  launch.tile = {2, 32};
  launch.through_shared = true;
  auto lowered = col2im.Lower(stem, T("sm_90a"), launch);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  tuning::Variant variant = VariantOf(stem.hints, **lowered, "sha");
  EXPECT_EQ(variant.lowering().path(), "simt_col2im");
  EXPECT_EQ(variant.lowering().form(), "staged");
}

TEST(Col2imDefinitionTest, SizesAndOutputElements) {
  const Col2imDefinition col2im;
  Col2imOp op = Col2imOp::Dense(DataType::kF16, G(2, 4, 5, 3, 3, 3, 1, 1, 1, 1, 1, 1));
  const OperandSizes sizes = col2im.Sizes(op);
  EXPECT_EQ(sizes.input_bytes, 2u * 4 * 5 * 27 * 2);
  EXPECT_EQ(sizes.output_bytes, 2u * 4 * 5 * 3 * 2);
  EXPECT_EQ(col2im.DescribeOutputElement(op, 3 * 5 + 2), "pixel n=0, h=1, w=0, channel c=2");
  op.img.strides = {4 * 5 * 4, 5 * 4, 4, 1};
  EXPECT_EQ(col2im.DescribeOutputElement(op, 7), "element 7 of the image's span, between pixels");
}

TEST(Col2imSearchSpaceTest, EveryFormAndHintBuilds) {
  const Col2imDefinition col2im;
  const Col2imOp stem = Col2imOp::Dense(DataType::kF16, G(4, 64, 64, 3, 7, 7, 2, 2, 1, 1, 3, 3));
  SearchSpace space = col2im.Search(stem, T("sm_90a"));
  EXPECT_EQ(space.first.size(), AllCol2imHints().size() * 4);
  auto first = BuildCandidates(col2im, stem, T("sm_90a"), space.first);
  ASSERT_TRUE(first.ok()) << first.status();
  std::set<std::string> forms, paths;
  for (const Candidate& c : first->candidates) {
    forms.insert(c.lowered->form_name);
    paths.insert(c.lowered->path_name);
  }
  EXPECT_EQ(forms, (std::set<std::string>{"direct", "staged", "swept"}));
  EXPECT_EQ(paths, (std::set<std::string>{"simt_col2im", "cp_async_col2im", "tma_col2im"}));
  std::vector<Trial> second;
  for (const LaunchParams& launch : space.launches) second.push_back({Hints{}, launch});
  auto launches = BuildCandidates(col2im, stem, T("sm_90a"), second);
  ASSERT_TRUE(launches.ok()) << launches.status();
  EXPECT_GE(launches->candidates.size(), 40u);
  int swept = 0;
  for (const Candidate& c : launches->candidates) swept += c.lowered->form_name == "swept";
  EXPECT_GE(swept, 10);
  // The TMA sweep on a persistent grid, in bands of rows: 64-pixel rows, 64 to 256 threads.
  std::set<int> banded;
  for (const Candidate& c : launches->candidates) {
    if (c.lowered->path_name == "tma_col2im" && c.lowered->launch.ctas_per_sm == 1) {
      banded.insert(c.lowered->launch.threads);
    }
  }
  EXPECT_EQ(banded, (std::set<int>{64, 128, 256}));
  // Without cp.async there is no swept form to search.
  for (const LaunchParams& launch : col2im.Search(stem, T("sm_75")).launches) {
    EXPECT_EQ(launch.stages, 1);
  }
  // Wide pixels are searched in the direct form only.
  const Col2imOp wide = Col2imOp::Dense(DataType::kF16, G(4, 14, 14, 64, 3, 3, 1, 1, 1, 1, 1, 1));
  const SearchSpace wide_space = col2im.Search(wide, T("sm_90a"));
  EXPECT_EQ(wide_space.first.size(), AllCol2imHints().size());
  for (const Trial& trial : wide_space.first) EXPECT_FALSE(trial.launch.through_shared);
  for (const LaunchParams& launch : wide_space.launches) EXPECT_FALSE(launch.through_shared);
}

TEST(Col2imDefinitionTest, HeuristicSweepsShortPixelsAndStreamsTheColumnsElsewhere) {
  const Col2imDefinition col2im;
  Col2imOp stem = Col2imOp::Dense(DataType::kF16, G(2, 32, 32, 3, 7, 7, 2, 2, 1, 1, 3, 3));
  Trial trial = col2im.Heuristic(stem, T("sm_90a"));
  EXPECT_TRUE(trial.launch.through_shared);
  // Swept by TMA on sm_90: 5 buffers, a persistent grid, 4 bands of a 32-pixel row's warp.
  EXPECT_EQ(trial.launch.stages, 5);
  EXPECT_EQ(trial.launch.ctas_per_sm, 1);
  EXPECT_EQ(trial.launch.threads, 128);
  // A window row reaching two tiles is read twice, the second time from L2: not streamed.
  EXPECT_EQ(trial.hints.annotations.count("col_eviction_policy"), 0u);
  EXPECT_FALSE(trial.hints.prefer_instruction.has_value());
  stem.hints = trial.hints;
  auto swept = col2im.Lower(stem, T("sm_90a"), trial.launch);
  ASSERT_TRUE(swept.ok()) << swept.status();
  EXPECT_EQ((*swept)->path_name, "tma_col2im");
  // disable_tma: the cp.async sweep, its columns streamed.
  Col2imOp no_tma = stem;
  no_tma.hints = Hints{};
  no_tma.hints.disable_tma = true;
  trial = col2im.Heuristic(no_tma, T("sm_90a"));
  EXPECT_EQ(trial.launch.stages, 2);
  EXPECT_EQ(trial.hints.annotations.at("col_eviction_policy"), "evict_first");
  no_tma.hints = trial.hints;
  auto cp_async = col2im.Lower(no_tma, T("sm_90a"), trial.launch);
  ASSERT_TRUE(cp_async.ok()) << cp_async.status();
  EXPECT_EQ((*cp_async)->path_name, "cp_async_col2im");
  // Without cp.async, the staged form.
  stem.hints = Hints{};
  trial = col2im.Heuristic(stem, T("sm_75"));
  EXPECT_TRUE(trial.launch.through_shared);
  EXPECT_EQ(trial.launch.stages, 1);
  EXPECT_EQ(trial.hints.prefer_instruction, Instruction::kSync);
  Col2imOp wide = Col2imOp::Dense(DataType::kF16, G(2, 14, 14, 256, 3, 3, 1, 1, 1, 1, 1, 1));
  EXPECT_FALSE(col2im.Heuristic(wide, T("sm_90a")).launch.through_shared);
  // Every heuristic lowers, a stage too large for shared memory included.
  Col2imOp huge = Col2imOp::Dense(DataType::kF32, G(1, 8, 6000, 4, 2, 6000));
  Trial fallback = col2im.Heuristic(huge, T("sm_90a"));
  huge.hints = fallback.hints;
  EXPECT_TRUE(col2im.Lower(huge, T("sm_90a"), fallback.launch).ok());
  EXPECT_FALSE(fallback.launch.through_shared);
}

}  // namespace
}  // namespace tiletune

namespace tiletune {
namespace {

// F.fold's layout through the definition: spec, problem, key, search space and heuristic.
TEST(Col2imDefinitionTest, NchwLayoutRoundTripsAndLowersToPlanes) {
  const Col2imDefinition col2im;
  auto op = col2im.ParseSpec("bf16:4,64,64,32:k=4:s=2:p=1:layout=nchw");
  ASSERT_TRUE(op.ok()) << op.status();
  const Col2imOp& fold = static_cast<const Col2imOp&>(**op);
  EXPECT_EQ(fold.order, ColumnOrder::kChannelRows);
  EXPECT_EQ(*col2im.FormatSpec(fold), "bf16:4,64,64,32:k=4:s=2:p=1:layout=nchw");
  auto problem = col2im.ToProblem(fold);
  ASSERT_TRUE(problem.ok()) << problem.status();
  EXPECT_EQ(problem->col2im().col_order(), tuning::COLUMN_ORDER_CHANNEL_ROWS);
  auto back = col2im.FromProblem(*problem);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(static_cast<const Col2imOp&>(**back).order, ColumnOrder::kChannelRows);
  EXPECT_EQ(static_cast<const Col2imOp&>(**back).img.strides, fold.img.strides);
  const Target target = *Target::Parse("sm_90a");
  const SearchSpace space = col2im.Search(fold, target);
  ASSERT_FALSE(space.first.empty());
  for (const Trial& trial : space.first) {
    Col2imOp with = fold;
    with.hints = trial.hints;
    auto lowered = LowerCol2im(with, target, trial.launch);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    // through_shared trials take the staged planes form.
    EXPECT_EQ(lowered->path, trial.launch.through_shared ? Col2imPath::kSimtPlanesStaged
                                                         : Col2imPath::kSimtPlanes);
  }
  const Trial heuristic = col2im.Heuristic(fold, target);
  Col2imOp with = fold;
  with.hints = heuristic.hints;
  auto lowered = LowerCol2im(with, target, heuristic.launch);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_EQ(lowered->form_name, "planes");
  EXPECT_EQ(lowered->vector_bytes, 16);
  EXPECT_THAT(DescribeCol2imPlan(*lowered), HasSubstr("kh descending"));
  // No copy engine serves this layout: asking for one says why.
  Col2imOp tma = fold;
  tma.hints.prefer_instruction = Instruction::kTma;
  LaunchParams swept = heuristic.launch;
  EXPECT_THAT(std::string(LowerCol2im(tma, target, swept).status().message()),
              HasSubstr("only the SIMT planes form"));
}

// A planes tile of whole image rows, tuned on one width, stays one of whole rows on
// another (each tile one run of the dense NCHW image) with as many pixels as tuned; a 2-D
// block of a plane, and the NHWC forms, keep theirs.
// Where the windows tile the image (a ViT's patches), the search space's first phase holds
// the patches form at its own tiles, every one of which builds; elsewhere none.
TEST(Col2imSearchSpaceTest, PatchesFormIsSearchedWhereTheWindowsTileTheImage) {
  const Col2imDefinition col2im;
  auto vit = col2im.ParseSpec("f16:32,224,224,3:k=16:s=16:layout=nchw");
  auto overlapping = col2im.ParseSpec("f16:32,56,56,64:k=3:p=1:layout=nchw");
  ASSERT_TRUE(vit.ok() && overlapping.ok());
  auto patches_trials = [&](const TileOp& op) {
    std::vector<Trial> out;
    for (const Trial& trial : col2im.Search(op, T("sm_90a")).first) {
      auto gather = trial.hints.annotations.find("planes_gather");
      if (gather != trial.hints.annotations.end() && gather->second == "patches") {
        out.push_back(trial);
      }
    }
    return out;
  };
  const std::vector<Trial> trials = patches_trials(**vit);
  // 1, 2, 4 and 8 kernel rows, at 128 and 256 threads, columns streamed or not.
  EXPECT_EQ(trials.size(), 16u);
  auto built = BuildCandidates(col2im, **vit, T("sm_90a"), trials);
  ASSERT_TRUE(built.ok()) << built.status();
  ASSERT_EQ(built->candidates.size(), trials.size());
  for (const Candidate& c : built->candidates) {
    EXPECT_EQ(c.lowered->form_name, "patches");
    EXPECT_LE(c.lowered->shared_bytes, 48 << 10);
  }
  EXPECT_TRUE(patches_trials(**overlapping).empty());
  // A record's tile over every window row takes every one on another image.
  const tuning::Problem from = *col2im.ToProblem(**vit);
  auto larger = col2im.ParseSpec("bf16:8,384,384,3:k=16:s=16:layout=nchw");
  ASSERT_TRUE(larger.ok());
  LaunchParams tuned;
  tuned.tile = {2, 14};
  tuned.threads = 256;
  EXPECT_THAT(col2im.AdaptLaunch(**larger, from, tuned, "patches").tile, ElementsAre(2, 24));
  tuned.tile = {2, 7};
  EXPECT_THAT(col2im.AdaptLaunch(**larger, from, tuned, "patches").tile, ElementsAre(2, 7));
  // On a much larger image, a whole band would stage more than the search's 48 KB: as
  // many window rows as fit (2 kernel rows x 16 taps x 128 windows x 2 B = 8 KB each).
  auto huge = col2im.ParseSpec("bf16:2,2048,2048,3:k=16:s=16:layout=nchw");
  ASSERT_TRUE(huge.ok());
  tuned.tile = {2, 14};
  EXPECT_THAT(col2im.AdaptLaunch(**huge, from, tuned, "patches").tile, ElementsAre(2, 6));
  // A tile of fewer window rows than its image's keeps them where they fit.
  tuned.tile = {2, 7};
  EXPECT_THAT(col2im.AdaptLaunch(**huge, from, tuned, "patches").tile, ElementsAre(2, 6));
  EXPECT_THAT(col2im.AdaptLaunch(**larger, from, tuned, "patches").tile, ElementsAre(2, 7));
}

TEST(Col2imDefinitionTest, WholeRowPlanesTilesTransferAsWholeRows) {
  const Col2imDefinition col2im;
  const Target target = *Target::Parse("sm_90a");
  auto record = col2im.ParseSpec("f16:32,14,14,256:k=3:p=1:layout=nchw");
  auto wider = col2im.ParseSpec("f16:32,28,28,256:k=3:p=1:layout=nchw");
  auto widest = col2im.ParseSpec("f16:32,224,224,16:k=3:p=1:layout=nchw");
  ASSERT_TRUE(record.ok() && wider.ok() && widest.ok());
  const tuning::Problem from = *col2im.ToProblem(**record);
  LaunchParams tuned;
  tuned.tile = {76, 14};
  tuned.threads = 256;
  tuned.through_shared = false;
  EXPECT_THAT(col2im.AdaptLaunch(**wider, from, tuned, "planes").tile, ElementsAre(38, 28));
  EXPECT_THAT(col2im.AdaptLaunch(**widest, from, tuned, "planes").tile, ElementsAre(5, 224));
  auto narrower = col2im.ParseSpec("f16:32,7,7,512:k=3:p=1:layout=nchw");
  ASSERT_TRUE(narrower.ok());
  EXPECT_THAT(col2im.AdaptLaunch(**narrower, from, tuned, "planes").tile, ElementsAre(76, 7));
  auto lowered = LowerCol2im(static_cast<const Col2imOp&>(**wider), target,
                             col2im.AdaptLaunch(**wider, from, tuned, "planes"));
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_TRUE(lowered->flat_rows);
  tuned.tile = {8, 8};
  EXPECT_THAT(col2im.AdaptLaunch(**wider, from, tuned, "planes").tile, ElementsAre(8, 8));
  auto nhwc = col2im.ParseSpec("f16:32,28,28,256:k=3:p=1");
  tuned.tile = {1, 32};
  auto nhwc_record = col2im.ParseSpec("f16:32,14,14,256:k=3:p=1");
  ASSERT_TRUE(nhwc.ok() && nhwc_record.ok());
  EXPECT_THAT(col2im.AdaptLaunch(**nhwc, *col2im.ToProblem(**nhwc_record), tuned, "direct").tile,
              ElementsAre(1, 32));
}

// An NHWC direct or staged tile is pixels x all C: on fewer channels, where half its
// threads or more would have no vector, its pixels grow (W first, then whole rows) until
// each has one; on 4x the channels or more it
// keeps its pixels x C (rows halved first); otherwise, and in the planes and swept forms,
// it stays as tuned.
TEST(Col2imDefinitionTest, PixelTilesKeepEachThreadAVectorAcrossChannelCounts) {
  const Col2imDefinition col2im;
  const Target target = *Target::Parse("sm_90a");
  auto record = col2im.ParseSpec("bf16:8,128,128,64:k=2:s=2");
  auto fewer = col2im.ParseSpec("bf16:64,141,141,16:k=2:s=2");
  auto narrow = col2im.ParseSpec("bf16:64,20,20,4:k=2:s=2");
  auto more = col2im.ParseSpec("bf16:32,35,35,768:k=2:s=2");
  auto twice = col2im.ParseSpec("bf16:8,48,48,128:k=4:s=2:p=1");
  ASSERT_TRUE(record.ok() && fewer.ok() && narrow.ok() && more.ok() && twice.ok());
  const tuning::Problem from = *col2im.ToProblem(**record);
  LaunchParams tuned;
  tuned.tile = {1, 16};
  tuned.threads = 128;
  // 16 pixels x 16 channels are 32 16-byte vectors for 128 threads: 64 pixels.
  EXPECT_THAT(col2im.AdaptLaunch(**fewer, from, tuned, "direct").tile, ElementsAre(1, 64));
  EXPECT_THAT(col2im.AdaptLaunch(**fewer, from, tuned, "staged").tile, ElementsAre(1, 64));
  EXPECT_THAT(col2im.AdaptLaunch(**fewer, from, tuned, "swept").tile, ElementsAre(1, 16));
  // C4 moves 8-byte vectors: 128 of them are 128 pixels, whole rows of a 20-wide image.
  EXPECT_THAT(col2im.AdaptLaunch(**narrow, from, tuned, "direct").tile, ElementsAre(8, 20));
  // 16 pixels of C32 are 64 vectors: half the 128 threads idle, twice the pixels.
  auto half = col2im.ParseSpec("bf16:8,48,48,32:k=4:s=2:p=1");
  ASSERT_TRUE(half.ok());
  EXPECT_THAT(col2im.AdaptLaunch(**half, from, tuned, "direct").tile, ElementsAre(1, 32));
  // At 96 threads, 64 vectors leave a third idle: as tuned.
  tuned.threads = 96;
  EXPECT_THAT(col2im.AdaptLaunch(**half, from, tuned, "direct").tile, ElementsAre(1, 16));
  tuned.threads = 128;
  // On twice the channels, as tuned.
  EXPECT_THAT(col2im.AdaptLaunch(**twice, from, tuned, "direct").tile, ElementsAre(1, 16));
  // 12x the channels: a [2, 32] tile's 64 pixels over 16 (the power of two nearest 12 by
  // ratio), its rows halved first.
  tuned.tile = {2, 32};
  EXPECT_THAT(col2im.AdaptLaunch(**more, from, tuned, "direct").tile, ElementsAre(1, 4));
  for (const TileOp* op : {fewer->get(), narrow->get(), more->get()}) {
    auto lowered = LowerCol2im(static_cast<const Col2imOp&>(*op), target,
                               col2im.AdaptLaunch(*op, from, tuned, "direct"));
    EXPECT_TRUE(lowered.ok()) << lowered.status();
  }
}

// Where the windows tile an NCHW image exactly, the heuristic takes the patches form; with
// the gather chosen by the caller, or elsewhere, the planes form.
TEST(Col2imDefinitionTest, HeuristicTakesThePatchesFormWhereTheWindowsTileTheImage) {
  const Col2imDefinition col2im;
  const Target target = *Target::Parse("sm_90a");
  auto vit = col2im.ParseSpec("f16:32,76,76,16:k=4:s=4:layout=nchw");
  auto padded = col2im.ParseSpec("f16:32,76,76,16:k=4:s=4:p=1:layout=nchw");
  ASSERT_TRUE(vit.ok() && padded.ok());
  auto form = [&](const TileOp& op, const Hints& hints) {
    return HeuristicForm(col2im, op, hints, target);
  };
  EXPECT_EQ(form(**vit, Hints{}), "patches");
  EXPECT_EQ(form(**padded, Hints{}), "planes");
  Hints planes;
  planes.annotations["planes_gather"] = "element";
  EXPECT_EQ(form(**vit, planes), "planes");
}

}  // namespace
}  // namespace tiletune

// The im2col definition: problems in and out of the database, specs, flags, keys, its
// named paths, and the search space turned into distinct kernels.
#include "compiler/ops/im2col/im2col_definition.h"

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/ops/candidates.h"
#include "compiler/ops/im2col/im2col_lowering.h"
#include "compiler/ops/im2col/im2col_op.h"
#include "compiler/ops/im2col/im2col_search_space.h"
#include "compiler/ops/im2col/im2col_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Target T(const char* arch) { return *Target::Parse(arch); }

TEST(Im2colDefinitionTest, ProblemsRoundTripInCanonicalForm) {
  const Im2colDefinition im2col;
  Im2colOp op = Im2colOp::Dense(DataType::kF16, G(4, 14, 14, 32, 3, 3, 2, 1, 1, 2, 1, 1));
  op.img.strides = {14 * 15 * 32, 15 * 32, 32, 1};  // a padded row
  auto problem = im2col.ToProblem(op);
  ASSERT_TRUE(problem.ok()) << problem.status();
  EXPECT_EQ(problem->im2col().sh(), 2);
  EXPECT_EQ(problem->im2col().dw(), 2);
  EXPECT_THAT(problem->im2col().img_strides(), ElementsAre(14 * 15 * 32, 15 * 32, 32, 1));
  auto back = im2col.FromProblem(*problem);
  ASSERT_TRUE(back.ok()) << back.status();
  const Im2colOp& same = static_cast<const Im2colOp&>(**back);
  EXPECT_TRUE(same.geometry == op.geometry);
  EXPECT_EQ(same.img.strides, op.img.strides);
  EXPECT_THAT(im2col.Describe(op), HasSubstr(" img strides [6720, 480, 32, 1]"));
  tuning::Problem bad = *problem;
  bad.mutable_im2col()->set_ph(5);
  EXPECT_THAT(im2col.FromProblem(bad).status().message(), HasSubstr("pad must be smaller"));
  bad = *problem;
  bad.mutable_im2col()->add_img_strides(1);
  EXPECT_THAT(im2col.FromProblem(bad).status().message(), HasSubstr("img_strides has 5 values"));
}

// F.unfold's layout: the spec's layout=nchw is an NCHW image and channel_rows columns, the
// problem keeps both, the key and the description tell it from NHWC, and a reader refuses a
// column order it does not know.
TEST(Im2colDefinitionTest, NchwLayoutRoundTrips) {
  const Im2colDefinition im2col;
  auto op = im2col.ParseSpec("f16:8,56,56,64:k=3:p=1:layout=nchw");
  ASSERT_TRUE(op.ok()) << op.status();
  const Im2colOp& unfold = static_cast<const Im2colOp&>(**op);
  EXPECT_EQ(unfold.order, ColumnOrder::kChannelRows);
  EXPECT_EQ(unfold.img.strides, (std::vector<int64_t>{64 * 56 * 56, 56, 1, 56 * 56}));
  EXPECT_EQ(im2col.Describe(unfold), "im2col f16 N8 C64 56x56 k3x3 s1x1 d1x1 p1x1 NCHW channel_rows");
  EXPECT_EQ(*im2col.FormatSpec(unfold), "f16:8,56,56,64:k=3:p=1:layout=nchw");
  auto problem = im2col.ToProblem(unfold);
  ASSERT_TRUE(problem.ok()) << problem.status();
  EXPECT_EQ(problem->im2col().col_order(), tuning::COLUMN_ORDER_CHANNEL_ROWS);
  auto back = im2col.FromProblem(*problem);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(static_cast<const Im2colOp&>(**back).order, ColumnOrder::kChannelRows);
  std::string nchw_key, nhwc_key;
  im2col.AppendKey(unfold, nchw_key);
  auto nhwc = im2col.ParseSpec("f16:8,56,56,64:k=3:p=1");
  im2col.AppendKey(**nhwc, nhwc_key);
  EXPECT_NE(nchw_key, nhwc_key);
  tuning::Problem unknown = *problem;
  unknown.mutable_im2col()->set_col_order(static_cast<tuning::ColumnOrder>(7));
  EXPECT_THAT(im2col.FromProblem(unknown).status().message(), HasSubstr("col_order 7"));
  EXPECT_THAT(im2col.ParseSpec("f16:8,56,56,64:k=3:layout=nchwc").status().message(),
              HasSubstr("accepted are nhwc"));
  auto flags = im2col.FromFlags({{"shape", "2,9,11,5"}, {"kernel", "3"}, {"layout", "nchw"}},
                                DataType::kF32, Hints{});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(static_cast<const Im2colOp&>(**flags).order, ColumnOrder::kChannelRows);
  // The search space and the heuristic lower to the planes form only.
  const Target target = T("sm_90a");
  const SearchSpace space = im2col.Search(unfold, target);
  ASSERT_FALSE(space.first.empty());
  for (const Trial& trial : space.first) {
    Im2colOp with = unfold;
    with.hints = trial.hints;
    auto lowered = LowerIm2col(with, target, trial.launch);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    EXPECT_EQ(lowered->path, Im2colPath::kSimtPlanes);
  }
  const Trial heuristic = im2col.Heuristic(unfold, target);
  Im2colOp with = unfold;
  with.hints = heuristic.hints;
  auto lowered = LowerIm2col(with, target, heuristic.launch);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_EQ(lowered->form_name, "planes");
  EXPECT_EQ(lowered->vector_bytes, 16);
}

TEST(Im2colDefinitionTest, SpecsAndFlags) {
  const Im2colDefinition im2col;
  auto op = im2col.ParseSpec("f16:32,224,224,3:k=7:s=2:p=3");
  ASSERT_TRUE(op.ok()) << op.status();
  EXPECT_EQ(im2col.Describe(**op), "im2col f16 N32 C3 224x224 k7x7 s2x2 d1x1 p3x3");
  auto asymmetric = im2col.ParseSpec("bf16:2,9,11,5:k=3x5:d=1x2:p=1x0");
  ASSERT_TRUE(asymmetric.ok()) << asymmetric.status();
  const Im2colGeometry& g = static_cast<const Im2colOp&>(**asymmetric).geometry;
  EXPECT_EQ(g.kw, 5);
  EXPECT_EQ(g.dw, 2);
  EXPECT_EQ(g.pw, 0);
  EXPECT_THAT(im2col.ParseSpec("f16:2,9,11").status().message(), HasSubstr("N,H,W,C"));
  EXPECT_THAT(im2col.ParseSpec("f16:2,9,11,5:q=3").status().message(),
              HasSubstr("unknown option 'q'"));
  EXPECT_THAT(im2col.ParseSpec("f16:2,9,11,5:k=3:p=9").status().message(),
              HasSubstr("pad must be smaller"));
  auto flags = im2col.FromFlags({{"shape", "2,9,11,5"}, {"kernel", "3,5"}, {"pad", "1"}},
                                DataType::kF32, Hints{});
  ASSERT_TRUE(flags.ok()) << flags.status();
  EXPECT_EQ(static_cast<const Im2colOp&>(**flags).geometry.kw, 5);
  EXPECT_THAT(im2col.FromFlags({{"shape", "2,9,11,5"}}, DataType::kF32, Hints{}).status().message(),
              HasSubstr("--kernel is required"));
}

TEST(Im2colDefinitionTest, FormsAreNamedPaths) {
  const Im2colDefinition im2col;
  tuning::Lowering lowering;
  lowering.set_path("simt_im2col");
  for (const char* form : {"", "row", "flat", "staged"}) {
    lowering.set_form(form);
    EXPECT_TRUE(im2col.CheckLowering(lowering).ok()) << form;
  }
  lowering.set_form("tiled");
  EXPECT_THAT(im2col.CheckLowering(lowering).message(),
              HasSubstr("has forms row, flat, staged"));
  lowering.set_path("cp_async");
  lowering.set_form("");
  EXPECT_THAT(im2col.CheckLowering(lowering).message(), HasSubstr("accepted for im2col"));
  // The lowering names them, and the variant it records carries them.
  Im2colOp stem = Im2colOp::Dense(DataType::kF16, G(2, 32, 32, 3, 7, 7, 2, 2, 1, 1, 3, 3));
  LaunchParams launch;
  launch.tile = {16, 147};
  launch.threads = 256;
  auto lowered = im2col.Lower(stem, T("sm_90a"), launch);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_EQ((*lowered)->path_name, "simt_im2col");
  EXPECT_EQ((*lowered)->form_name, "staged");
  EXPECT_THAT(im2col.DescribePlan(**lowered), HasSubstr("path        simt_im2col (staged form)"));
  tuning::Variant variant = VariantOf(stem.hints, **lowered, "sha");
  EXPECT_EQ(variant.lowering().form(), "staged");
  EXPECT_EQ(variant.lowering().vector_bytes(), 16);
}

TEST(Im2colSearchSpaceTest, EveryFormShowsUpForTheStem) {
  const Im2colDefinition im2col;
  Im2colOp stem = Im2colOp::Dense(DataType::kF16, G(4, 64, 64, 3, 7, 7, 2, 2, 1, 1, 3, 3));
  SearchSpace space = im2col.Search(stem, T("sm_90a"));
  EXPECT_EQ(space.first.size() % AllIm2colHints().size(), 0u);
  auto first = BuildCandidates(im2col, stem, T("sm_90a"), space.first);
  ASSERT_TRUE(first.ok()) << first.status();
  std::set<std::string> forms;
  for (const Candidate& c : first->candidates) {
    forms.insert(c.lowered->path_name + "/" + c.lowered->form_name);
  }
  EXPECT_THAT(forms, ::testing::IsSupersetOf({"simt_im2col/row", "simt_im2col/staged"}));
  // The second phase's launches add whole rows that are not whole output rows: the flat
  // form.
  std::vector<Trial> second;
  for (const LaunchParams& launch : space.launches) second.push_back({Hints{}, launch});
  auto launches = BuildCandidates(im2col, stem, T("sm_90a"), second);
  ASSERT_TRUE(launches.ok()) << launches.status();
  for (const Candidate& c : launches->candidates) {
    forms.insert(c.lowered->path_name + "/" + c.lowered->form_name);
  }
  EXPECT_THAT(forms, ::testing::Contains("simt_im2col/flat"));
}

TEST(Im2colDefinitionTest, HeuristicKeepsTheImageInL2UnlessAsked) {
  const Im2colDefinition im2col;
  Im2colOp op = Im2colOp::Dense(DataType::kF16, G(2, 17, 17, 3, 3, 3, 1, 1, 1, 1, 1, 1));
  Trial trial = im2col.Heuristic(op, T("sm_90a"));
  EXPECT_EQ(trial.hints.annotations.at("img_eviction_policy"), "evict_last");
  EXPECT_EQ(trial.hints.prefer_instruction, Instruction::kSync);
  op.hints.eviction_policy = EvictionPolicy::kEvictFirst;
  EXPECT_FALSE(im2col.Heuristic(op, T("sm_90a")).hints.annotations.count("img_eviction_policy"));
}

// Where the windows tile an NCHW image exactly (a ViT's patchify), the heuristic takes the
// patches form; with the gather chosen by the caller, or with padding, the planes form.
TEST(Im2colDefinitionTest, HeuristicTakesThePatchesFormWhereTheWindowsTileTheImage) {
  const Im2colDefinition im2col;
  const Target target = T("sm_90a");
  auto patchify = im2col.ParseSpec("bf16:32,70,70,24:k=14:s=14:layout=nchw");
  auto padded = im2col.ParseSpec("bf16:32,70,70,24:k=14:s=14:p=1:layout=nchw");
  ASSERT_TRUE(patchify.ok() && padded.ok());
  auto form = [&](const TileOp& op, const Hints& hints) {
    return HeuristicForm(im2col, op, hints, target);
  };
  EXPECT_EQ(form(**patchify, Hints{}), "planes_patches");
  EXPECT_EQ(form(**padded, Hints{}), "planes");
  Hints shared;
  shared.annotations["planes_gather"] = "shared";
  EXPECT_EQ(form(**patchify, shared), "planes");
}

TEST(Im2colDefinitionTest, HeuristicTakesWholeRowsWhereChannelsAreNarrow) {
  Im2colOp stem = Im2colOp::Dense(DataType::kF16, G(32, 224, 224, 3, 7, 7, 2, 2, 1, 1, 3, 3));
  Im2colOp narrowed = stem;
  narrowed.hints.coalesced_width = 1;
  struct Case {
    const char* why;
    Im2colOp op;
    const char* arch;
    const char* form;  // "path/form" the trial lowers to
    std::vector<int64_t> tile;
    int threads;
    bool bulk_fill;
  };
  Im2colOp stem_no_tma = stem;
  stem_no_tma.hints.disable_tma = true;
  Im2colOp padded_rows = stem;  // 225-pixel row stride: 1350-byte rows, not 16-byte aligned
  padded_rows.img.strides = {225 * 3 * 224, 225 * 3, 3, 1};
  const Case cases[] = {
      {"the C=3 stem: whole output rows, 16-byte stores, boxes by bulk copies, 448 threads "
       "for its 2058 vectors (5 at most per thread, as with 512; 384 would give 6)",
       stem, "sm_90a", "simt_im2col/staged", {112, 147}, 448, true},
      {"the stem at 256x256: 2352 vectors, 5 at most per thread at 512 threads, 6 at 448",
       Im2colOp::Dense(DataType::kF16, G(32, 256, 256, 3, 7, 7, 2, 2, 1, 1, 3, 3)), "sm_90a",
       "simt_im2col/staged", {128, 147}, 512, true},
      {"the stem without TMA", stem, "sm_80", "simt_im2col/staged", {112, 147}, 256, false},
      {"the stem under disable_tma", stem_no_tma, "sm_90a", "simt_im2col/staged", {112, 147},
       256, false},
      {"the stem with unaligned image rows", padded_rows, "sm_90a", "simt_im2col/staged",
       {112, 147}, 256, false},
      {"17 output pixels a row: no vector's pattern repeats in a row, so 64 whole rows",
       Im2colOp::Dense(DataType::kF16, G(2, 17, 17, 7, 5, 5, 1, 1, 1, 1, 2, 2)), "sm_90a",
       "simt_im2col/flat", {64, 175}, 256, false},
      {"rows of 64 elements or fewer: the default 128 x K tile spans whole rows already",
       Im2colOp::Dense(DataType::kF16, G(2, 17, 17, 3, 3, 3, 1, 1, 1, 1, 1, 1)), "sm_90a",
       "simt_im2col/flat", {128, 27}, 256, false},
      {"channels of 16 bytes or more keep the row form",
       Im2colOp::Dense(DataType::kF16, G(8, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1)), "sm_90a",
       "simt_im2col/row", {128, 64}, 256, false},
      {"rows longer than 1024 elements keep the row form",
       Im2colOp::Dense(DataType::kF32, G(2, 224, 224, 3, 32, 32, 32, 32, 1, 1, 0, 0)), "sm_90a",
       "simt_im2col/row", {128, 64}, 256, false},
      {"16x16 patches of C=3: the row form's 16-byte vectors along a kernel row, default tile",
       Im2colOp::Dense(DataType::kF16, G(32, 224, 224, 3, 16, 16, 16, 16, 1, 1, 0, 0)), "sm_90a",
       "simt_im2col/row", {128, 64}, 256, false},
      {"14x14 patches: a kernel row gives 4-byte vectors only, so the input is staged",
       Im2colOp::Dense(DataType::kF16, G(32, 224, 224, 3, 14, 14, 14, 14, 1, 1, 0, 0)), "sm_90a",
       "simt_im2col/staged", {16, 588}, 256, true},
      {"a hint that shapes the row form keeps it", narrowed, "sm_90a", "simt_im2col/row",
       {128, 64}, 256, false},
      {"short rows (K <= 64) of 1344 bytes: one whole output row by bulk copies, 256 threads "
       "for its 378 vectors",
       Im2colOp::Dense(DataType::kF16, G(64, 224, 224, 3, 3, 3, 2, 2, 1, 1, 1, 1)), "sm_90a",
       "simt_im2col/staged", {112, 27}, 256, true},
      {"256-byte image rows fill by the threads' loads: the heuristic sets disable_tma",
       Im2colOp::Dense(DataType::kF16, G(8, 128, 128, 1, 5, 5, 1, 1, 1, 1, 2, 2)), "sm_90a",
       "simt_im2col/staged", {128, 25}, 256, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.why);
    const Target target = T(c.arch);
    const Trial trial = Im2colHeuristic(c.op, target);
    EXPECT_EQ(trial.launch.tile, c.tile);
    EXPECT_EQ(trial.launch.threads, c.threads);
    Im2colOp hinted = c.op;
    hinted.hints = trial.hints;
    auto lowered = LowerIm2col(hinted, target, trial.launch);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    EXPECT_EQ(lowered->path_name + "/" + lowered->form_name, c.form);
    EXPECT_EQ(lowered->box.bulk_fill, c.bulk_fill);
    // Window-row vectors where, and only where, they are whole 16 bytes.
    EXPECT_EQ(lowered->window_row_vector,
              lowered->path == Im2colPath::kSimtRow && lowered->vector_bytes == 16 &&
                  c.op.geometry.c * DataTypeBytes(c.op.img.dtype) % 16 != 0);
  }
}

// A planes tile of whole matrix rows (all OH*OW columns, one run each), tuned on one image,
// stays one of whole rows on another, as many as tuned unless that passes four times its
// elements; a band of columns is kept for the lowering to clip.
TEST(Im2colDefinitionTest, WholeRowPlanesTilesTransferAsWholeRows) {
  const Im2colDefinition im2col;
  auto record = im2col.ParseSpec("f16:32,14,14,256:k=3:p=1:layout=nchw");
  auto larger = im2col.ParseSpec("f16:32,28,28,192:k=3:p=1:layout=nchw");
  auto largest = im2col.ParseSpec("f16:8,112,112,64:k=3:p=1:layout=nchw");
  ASSERT_TRUE(record.ok() && larger.ok() && largest.ok());
  const tuning::Problem from = *im2col.ToProblem(**record);
  LaunchParams tuned;
  tuned.tile = {10, 196};
  tuned.threads = 256;
  EXPECT_THAT(im2col.AdaptLaunch(**larger, from, tuned, "planes").tile, ElementsAre(10, 784));
  EXPECT_THAT(im2col.AdaptLaunch(**largest, from, tuned, "planes").tile, ElementsAre(1, 112 * 112));
  tuned.tile = {10, 64};
  EXPECT_THAT(im2col.AdaptLaunch(**larger, from, tuned, "planes").tile, ElementsAre(10, 64));
}

// Where the windows tile the image (a ViT's patches), the first phase holds the patches form
// at its own tiles, every one of which builds; elsewhere none. A record's tile over every
// window row takes every one on another image.
TEST(Im2colSearchSpaceTest, PatchesFormIsSearchedWhereTheWindowsTileTheImage) {
  const Im2colDefinition im2col;
  auto vit = im2col.ParseSpec("f16:32,224,224,3:k=16:s=16:layout=nchw");
  auto overlapping = im2col.ParseSpec("f16:32,56,56,64:k=3:p=1:layout=nchw");
  ASSERT_TRUE(vit.ok() && overlapping.ok());
  auto patches_trials = [&](const TileOp& op) {
    std::vector<Trial> out;
    for (const Trial& trial : im2col.Search(op, T("sm_90a")).first) {
      auto gather = trial.hints.annotations.find(kPlanesGatherKey);
      if (gather != trial.hints.annotations.end() && gather->second == "patches") {
        out.push_back(trial);
      }
    }
    return out;
  };
  const std::vector<Trial> trials = patches_trials(**vit);
  EXPECT_EQ(trials.size(), 16u);  // 1, 2, 4, 8 kernel rows x 2 thread counts x 2 policies
  auto built = BuildCandidates(im2col, **vit, T("sm_90a"), trials);
  ASSERT_TRUE(built.ok()) << built.status();
  ASSERT_EQ(built->candidates.size(), trials.size());
  for (const Candidate& c : built->candidates) {
    EXPECT_EQ(c.lowered->form_name, kPlanesPatchesForm);
    EXPECT_LE(c.lowered->shared_bytes, 48 << 10);
  }
  EXPECT_TRUE(patches_trials(**overlapping).empty());
  const tuning::Problem from = *im2col.ToProblem(**vit);
  auto larger = im2col.ParseSpec("bf16:8,384,384,3:k=16:s=16:layout=nchw");
  ASSERT_TRUE(larger.ok());
  LaunchParams tuned;
  tuned.tile = {2, 14};
  tuned.threads = 256;
  EXPECT_THAT(im2col.AdaptLaunch(**larger, from, tuned, kPlanesPatchesForm).tile,
              ElementsAre(2, 24));
  tuned.tile = {2, 7};
  EXPECT_THAT(im2col.AdaptLaunch(**larger, from, tuned, kPlanesPatchesForm).tile,
              ElementsAre(2, 7));
  // On a much larger image, a whole band would stage more than the search's 48 KB: as
  // many window rows as fit (2 kernel rows x 16 taps x 128 windows x 2 B = 8 KB each).
  auto huge = im2col.ParseSpec("bf16:2,2048,2048,3:k=16:s=16:layout=nchw");
  ASSERT_TRUE(huge.ok());
  tuned.tile = {2, 14};
  EXPECT_THAT(im2col.AdaptLaunch(**huge, from, tuned, kPlanesPatchesForm).tile, ElementsAre(2, 6));
  // A tile of fewer window rows than its image's keeps them where they fit.
  tuned.tile = {2, 7};
  EXPECT_THAT(im2col.AdaptLaunch(**huge, from, tuned, kPlanesPatchesForm).tile, ElementsAre(2, 6));
  EXPECT_THAT(im2col.AdaptLaunch(**larger, from, tuned, kPlanesPatchesForm).tile,
              ElementsAre(2, 7));
}

// A shared-gather planes tile transfers as planes x output rows: as many whole planes of
// the problem's own taps and as many output rows per band (all of a shorter image's, bands
// evened out), fewer planes and then fewer rows while the image windows would take more
// shared memory than the tuned kernel staged. It halves in whole planes, then in rows.
TEST(Im2colDefinitionTest, SharedPlanesTilesTransferAsPlanesAndRows) {
  const Im2colDefinition im2col;
  auto record = im2col.ParseSpec("f16:32,56,56,64:k=3:p=1:layout=nchw");
  auto small = im2col.ParseSpec("f16:32,32,32,128:k=2:s=2:layout=nchw");
  auto tall = im2col.ParseSpec("f16:8,128,128,64:k=3:p=1:layout=nchw");
  auto strided = im2col.ParseSpec("f16:32,64,64,64:k=4:s=2:p=1:layout=nchw");
  ASSERT_TRUE(record.ok() && small.ok() && tall.ok() && strided.ok());
  const tuning::Problem from = *im2col.ToProblem(**record);
  LaunchParams tuned;
  tuned.tile = {72, 1568};  // 8 planes, bands of 28 output rows: windows of 30 x 58
  tuned.threads = 256;
  // 8 planes of 4 taps, the 16-row image whole (windows of 32 x 32).
  EXPECT_THAT(im2col.AdaptLaunch(**small, from, tuned, kPlanesSharedForm).tile,
              ElementsAre(32, 256));
  // 128 rows in bands of 26 (5 bands, not 28 + 28 + 28 + 28 + 16), windows of 28 x 130:
  // 3 planes stay within the 8 x 30 x 58 tuned.
  EXPECT_THAT(im2col.AdaptLaunch(**tall, from, tuned, kPlanesSharedForm).tile,
              ElementsAre(27, 26 * 128));
  // 32 rows at stride 2 in two bands of 16 (windows of 34 x 66): 6 planes of 16 taps.
  EXPECT_THAT(im2col.AdaptLaunch(**strided, from, tuned, kPlanesSharedForm).tile,
              ElementsAre(96, 16 * 32));
  // One plane of the stem's bands of 28 rows (windows of 61 x 229) on a 512x512 image
  // (windows 517 wide): bands of 11 rows, the most whose windows (27 x 517) fit.
  auto stem = im2col.ParseSpec("f16:32,224,224,3:k=7:s=2:p=3:layout=nchw");
  auto big_stem = im2col.ParseSpec("f16:8,512,512,3:k=7:s=2:p=3:layout=nchw");
  ASSERT_TRUE(stem.ok() && big_stem.ok());
  LaunchParams stem_tile;
  stem_tile.tile = {49, 28 * 112};
  stem_tile.threads = 256;
  EXPECT_THAT(im2col.AdaptLaunch(**big_stem, *im2col.ToProblem(**stem), stem_tile,
                                 kPlanesSharedForm)
                  .tile,
              ElementsAre(49, 11 * 256));
  // The tuned kernel's windows are those of every plane its tiles reach: a 14x14 layer's
  // tile of 20 rows of 9 taps staged 4 planes' (a tile may start within a plane), so on a
  // 24x24 image 2 whole planes of bands of 12 rows (windows of 14 x 26) fit within them.
  auto c256 = im2col.ParseSpec("f16:32,14,14,256:k=3:p=1:layout=nchw");
  auto wider = im2col.ParseSpec("f16:32,24,24,256:k=3:p=1:layout=nchw");
  ASSERT_TRUE(c256.ok() && wider.ok());
  LaunchParams c256_tile;
  c256_tile.tile = {20, 196};
  c256_tile.threads = 128;
  EXPECT_THAT(im2col.AdaptLaunch(**wider, *im2col.ToProblem(**c256), c256_tile,
                                 kPlanesSharedForm)
                  .tile,
              ElementsAre(18, 12 * 24));
  // Over many images, kernels and strides the fit ends with a tile of whole planes and
  // whole output rows within the image.
  for (const auto& [spec, tile] : std::vector<std::pair<std::string, std::vector<int64_t>>>{
           {"f16:32,56,56,64:k=3:p=1:layout=nchw", {72, 1568}},
           {"f16:32,14,14,256:k=3:p=1:layout=nchw", {20, 196}},
           {"f16:32,224,224,3:k=7:s=2:p=3:layout=nchw", {49, 3136}}}) {
    auto from_op = im2col.ParseSpec(spec);
    ASSERT_TRUE(from_op.ok());
    LaunchParams from_tile;
    from_tile.tile = tile;
    from_tile.threads = 256;
    for (int64_t h : {5, 7, 14, 28, 56, 112, 224, 448, 1024}) {
      for (int64_t k : {2, 3, 5, 7, 11}) {
        for (int64_t stride : {1, 2, 4}) {
          auto to = im2col.ParseSpec(absl::StrCat("f16:2,", h, ",", h, ",8:k=", k, ":s=", stride,
                                                  ":p=", k / 2, ":layout=nchw"));
          if (!to.ok()) continue;
          const Im2colGeometry& g = static_cast<const Im2colOp&>(**to).geometry;
          const LaunchParams fitted = im2col.AdaptLaunch(**to, *im2col.ToProblem(**from_op),
                                                         from_tile, kPlanesSharedForm);
          ASSERT_EQ(fitted.tile.size(), 2u);
          EXPECT_GE(fitted.tile[0], g.kh * g.kw) << spec << " -> " << h << " k" << k;
          EXPECT_EQ(fitted.tile[0] % (g.kh * g.kw), 0) << spec << " -> " << h << " k" << k;
          EXPECT_GE(fitted.tile[1], g.OW()) << spec << " -> " << h << " k" << k;
          EXPECT_LE(fitted.tile[1], g.OH() * g.OW()) << spec << " -> " << h << " k" << k;
          EXPECT_EQ(fitted.tile[1] % g.OW(), 0) << spec << " -> " << h << " k" << k;
        }
      }
    }
  }
  // The element gather's tile of the same shape keeps its own fitting.
  tuned.tile = {20, 3136};
  EXPECT_THAT(im2col.AdaptLaunch(**small, from, tuned, "planes").tile, ElementsAre(20, 256));
  // Halving: planes to the power of two below, then the 54 rows of one plane in 2, 4 and 8
  // even bands, then within a row; the element gather's tile halves its rows.
  auto one_plane = im2col.ParseSpec("f16:8,54,54,24:k=3:p=1:layout=nchw");
  ASSERT_TRUE(one_plane.ok());
  std::vector<std::vector<int64_t>> halvings;
  std::vector<int64_t> tile = {5 * 9, 54 * 54};
  while (im2col.HalveTile(**one_plane, kPlanesSharedForm, tile)) halvings.push_back(tile);
  EXPECT_THAT(halvings, ElementsAre(ElementsAre(4 * 9, 54 * 54), ElementsAre(2 * 9, 54 * 54),
                                    ElementsAre(9, 54 * 54), ElementsAre(9, 27 * 54),
                                    ElementsAre(9, 14 * 54), ElementsAre(9, 7 * 54),
                                    ElementsAre(9, 4 * 54), ElementsAre(9, 2 * 54),
                                    ElementsAre(9, 54), ElementsAre(9, 32), ElementsAre(9, 16),
                                    ElementsAre(9, 8), ElementsAre(9, 4), ElementsAre(9, 2),
                                    ElementsAre(9, 1)));
  tile = {9, 54 * 54};
  ASSERT_TRUE(im2col.HalveTile(**one_plane, "planes", tile));
  EXPECT_THAT(tile, ElementsAre(8, 54 * 54));
}

}  // namespace
}  // namespace tiletune

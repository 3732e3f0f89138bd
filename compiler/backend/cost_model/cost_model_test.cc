#include "compiler/backend/cost_model/cost_model.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/ir/buffer.h"
#include "compiler/ops/copy/copy_lowering.h"
#include "compiler/ops/copy/copy_op.h"
#include "compiler/target/target.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Kernels of `problems` problems, timed by a model of the form the cost model fits (a
// floor of 3 us, a knot of 32 KiB, known coefficients), with `noise` relative noise.
std::vector<CostSample> Synthetic(int problems, int per_problem, double noise) {
  tuning::CostModel truth;
  truth.set_floor_us(3);
  truth.set_inflight_knot_bytes(32768);
  for (const std::string& name : CostTermNames()) truth.add_terms(name);
  for (double c : {-8.0, 1.0, 0.4, -0.1, 0.05, 0.8, 0.9, 0.3, 0.02, 0.1, 0.05, 0.15, 0.1, -0.05}) {
    truth.add_coefficients(c);
  }
  const CostModel model = *CostModel::FromProto(truth);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<CostSample> samples;
  for (int p = 0; p < problems; ++p) {
    const double bytes = std::pow(2.0, 20 + 10 * u(rng));
    for (int k = 0; k < per_problem; ++k) {
      CostSample s;
      s.problem = absl::StrCat("p", p);
      s.op = p % 2 ? "copy" : "im2col";
      s.terms.bytes = bytes;
      s.terms.vector_bytes = 1 << static_cast<int>(5 * u(rng));
      s.terms.tma = u(rng) < 0.3;
      s.terms.cp_async = !s.terms.tma && u(rng) < 0.3;
      s.terms.waves = 0.2 + 6 * u(rng);
      s.terms.inflight_per_sm = std::pow(2.0, 10 + 9 * u(rng));
      s.terms.tiles_per_sm = 20 * u(rng);
      s.terms.read_bytes = bytes * (0.2 + 0.6 * u(rng));
      s.terms.written_bytes = bytes - s.terms.read_bytes;
      s.terms.threads = 32 << static_cast<int>(5 * u(rng));
      s.terms.accesses_per_thread = 1 + 30 * u(rng);
      s.terms.shared_per_cta = u(rng) < 0.5 ? 0 : 65536 * u(rng);
      s.terms.stages = 1 + static_cast<int>(4 * u(rng));
      s.median_us = model.EstimateUs(s.terms) * (1 + noise * (2 * u(rng) - 1));
      samples.push_back(s);
    }
  }
  return samples;
}

TEST(CostModelTest, FitRecoversTheConstantsOfItsOwnForm) {
  const std::vector<CostSample> samples = Synthetic(12, 40, 0);
  auto model = CostModel::Fit(samples);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->floor_us(), 3);
  EXPECT_EQ(model->knot_bytes(), 32768);
  for (const CostSample& s : samples) {
    EXPECT_NEAR(model->EstimateUs(s.terms) / s.median_us, 1.0, 1e-3);
  }
}

TEST(CostModelTest, LeaveOneProblemOutReportsPerOperatorAndRanksWell) {
  auto errors = LeaveOneProblemOut(Synthetic(12, 40, 0.02));
  ASSERT_TRUE(errors.ok()) << errors.status();
  ASSERT_EQ(errors->size(), 3u);
  EXPECT_EQ((*errors)[0].op, "copy");
  EXPECT_EQ((*errors)[1].op, "im2col");
  EXPECT_EQ((*errors)[2].op, "all");
  EXPECT_EQ((*errors)[2].problems, 12);
  EXPECT_EQ((*errors)[2].samples, 480);
  // 2% noise: estimates within a few percent, and the first five always hold a kernel
  // within the noise of the fastest.
  EXPECT_LT((*errors)[2].median_abs_log_error, 0.03);
  EXPECT_LT((*errors)[2].mean_top5_regret, 0.05);
  EXPECT_LE((*errors)[2].mean_top1_regret, (*errors)[2].worst_top1_regret);
  // Within 2% noise the first choice or two already hold a kernel within 1% on average.
  EXPECT_GE((*errors)[2].k_for_one_percent, 1);
  EXPECT_LE((*errors)[2].k_for_one_percent, 5);
}

TEST(CostModelTest, TooLittleOrBadDataIsRefused) {
  std::vector<CostSample> one = Synthetic(1, 40, 0);
  EXPECT_THAT(std::string(CostModel::Fit(one).status().message()),
              HasSubstr("at least 2 problems and 14 kernels; got 1 problem(s) and 40"));
  std::vector<CostSample> bad = Synthetic(3, 6, 0);
  bad[4].median_us = -1;
  EXPECT_THAT(std::string(CostModel::Fit(bad).status().message()),
              HasSubstr("a sample of p0 has time -1 us; times must be > 0"));
}

TEST(CostModelTest, ProtoRoundTripAndBadFilesAreRefused) {
  auto model = CostModel::Fit(Synthetic(4, 20, 0));
  ASSERT_TRUE(model.ok());
  tuning::DeviceIdentity device;
  device.set_name("NVIDIA H200");
  const tuning::CostModel proto = model->ToProto(device);
  EXPECT_EQ(proto.terms_size(), 14);
  EXPECT_EQ(proto.problems(), 4);
  EXPECT_EQ(proto.samples(), 80);
  auto back = CostModel::FromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->coefficients(), model->coefficients());
  tuning::CostModel renamed = proto;
  renamed.set_terms(3, "tensor_cores");
  EXPECT_THAT(std::string(CostModel::FromProto(renamed).status().message()),
              HasSubstr("cost model term 3 is 'tensor_cores'; this tiletune's is 'tma'"));
  tuning::CostModel short_one = proto;
  short_one.mutable_coefficients()->RemoveLast();
  EXPECT_FALSE(CostModel::FromProto(short_one).ok());
  tuning::CostModel no_knot = proto;
  no_knot.set_inflight_knot_bytes(0);
  EXPECT_THAT(std::string(CostModel::FromProto(no_knot).status().message()),
              HasSubstr("inflight_knot_bytes 0 (accepted: > 0)"));
}

// Kernel k of a sweep over one copy problem `p` of `bytes`: threads 32 << (k % 5), vectors
// of 1 << (k / 5 % 5) bytes, of kind `kind`; its time is the caller's.
CostSample SweptCopy(int p, int k, double bytes, const std::string& kind) {
  CostSample s;
  s.problem = absl::StrCat("p", p);
  s.op = "copy";
  s.terms.bytes = s.terms.read_bytes = s.terms.written_bytes = bytes;
  s.terms.threads = 32 << (k % 5);
  s.terms.vector_bytes = 1 << (k / 5 % 5);
  s.terms.kind = kind;
  return s;
}

// Trees (FitOptions::trees) learn what a sum of terms cannot: here one kernel kind costs
// three times as much above 128 threads, the other nothing more. Left out problem by
// problem, they estimate and rank the kernels far better than the terms alone; the trees
// survive the file, and a file's broken tree is refused.
TEST(CostModelTest, TreesLearnWhatTheTermsCannotAndSurviveTheFile) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<CostSample> samples;
  for (int p = 0; p < 12; ++p) {
    const double bytes = std::pow(2.0, 24 + u(rng));
    for (int k = 0; k < 40; ++k) {
      CostSample s = SweptCopy(p, k, bytes, k % 2 ? "simt/rows" : "simt/planes");
      // 2 us plus the bytes at a bandwidth that narrow vectors lower; the planes kind
      // pays three times over above 128 threads.
      double us = 2 + bytes / 3e6 * (1 + 4.0 / s.terms.vector_bytes);
      if (k % 2 == 0 && s.terms.threads > 128) us *= 3;
      s.median_us = us * (1 + 0.02 * (2 * u(rng) - 1));
      samples.push_back(s);
    }
  }
  auto median_error = [&](const FitOptions& options) {
    auto errors = LeaveOneProblemOut(samples, options);
    EXPECT_TRUE(errors.ok()) << errors.status();
    return errors.ok() ? errors->back().median_abs_log_error : 0.0;
  };
  FitOptions trees;
  trees.trees = 60;
  trees.depth = 3;
  const double linear = median_error(FitOptions{});
  const double boosted = median_error(trees);
  EXPECT_LT(boosted, linear / 2) << "terms alone " << linear << ", with trees " << boosted;

  auto model = CostModel::Fit(samples, trees);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->tree_count(), 60);
  const tuning::CostModel proto = model->ToProto(tuning::DeviceIdentity());
  EXPECT_THAT(proto.kinds(), ElementsAre("simt/planes", "simt/rows"));
  auto back = CostModel::FromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  for (const CostSample& s : samples) {
    EXPECT_DOUBLE_EQ(back->EstimateUs(s.terms), model->EstimateUs(s.terms));
  }
  tuning::CostModel loop = proto;
  for (int i = 0; i < loop.trees(0).feature_size(); ++i) {
    if (loop.trees(0).feature(i) >= 0) {
      loop.mutable_trees(0)->set_left(i, i);
      break;
    }
  }
  EXPECT_THAT(std::string(CostModel::FromProto(loop).status().message()),
              HasSubstr("cost model tree 0 node"));
  tuning::CostModel unknown = proto;
  // 13 terms, 2 kinds and 2 access features.
  unknown.mutable_trees(1)->set_feature(0, 13 + 2 + 2);
  EXPECT_THAT(std::string(CostModel::FromProto(unknown).status().message()),
              HasSubstr("feature 17 (accepted: -1 to 16)"));
  FitOptions too_deep = trees;
  too_deep.depth = 40;
  EXPECT_THAT(std::string(CostModel::Fit(samples, too_deep).status().message()),
              HasSubstr("depth 40 (1 to 12)"));
}

// Ranking trees (FitOptions::rank) order each problem's kernels: where problems differ by
// a factor no term explains (here up to 30x, as a layout or an operator's arithmetic can),
// trees fitted to time spend themselves on it, while ranking trees see only what differs
// within a problem. They add to the terms' estimate, and survive the file.
TEST(CostModelTest, RankingTreesOrderEachProblemsKernels) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<CostSample> samples;
  for (int p = 0; p < 16; ++p) {
    const double bytes = std::pow(2.0, 22 + 4 * u(rng));
    const double unexplained = std::exp(3.4 * u(rng));
    for (int k = 0; k < 30; ++k) {
      CostSample s = SweptCopy(p, k, bytes, k % 3 ? "simt/rows" : "simt/planes");
      // Wide vectors are faster; the planes kind wants 256 threads, the rows kind 64.
      const double best_threads = k % 3 ? 64 : 256;
      double us = unexplained * bytes / 3e6 * (1 + 4.0 / s.terms.vector_bytes) *
                  (1 + 0.3 * std::abs(std::log2(s.terms.threads / best_threads)));
      s.median_us = us * (1 + 0.01 * (2 * u(rng) - 1));
      samples.push_back(s);
    }
  }
  FitOptions time;
  time.trees = 100;
  FitOptions rank = time;
  rank.rank = true;
  auto time_errors = LeaveOneProblemOut(samples, time);
  auto rank_errors = LeaveOneProblemOut(samples, rank);
  ASSERT_TRUE(time_errors.ok() && rank_errors.ok());
  EXPECT_LT(rank_errors->back().mean_top1_regret, 0.01)
      << "ranking " << rank_errors->back().mean_top1_regret << ", timing "
      << time_errors->back().mean_top1_regret;
  EXPECT_LT(rank_errors->back().mean_top1_regret, time_errors->back().mean_top1_regret)
      << "ranking " << rank_errors->back().mean_top1_regret << ", timing "
      << time_errors->back().mean_top1_regret;

  auto model = CostModel::Fit(samples, rank);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_TRUE(model->trees_from_terms());
  const tuning::CostModel proto = model->ToProto(tuning::DeviceIdentity());
  EXPECT_TRUE(proto.trees_from_terms());
  auto back = CostModel::FromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  for (const CostSample& s : samples) {
    EXPECT_DOUBLE_EQ(back->EstimateUs(s.terms), model->EstimateUs(s.terms));
  }
  // The same trees read as adding to a base estimate otherwise; trees that add to the
  // terms' estimate have no base of their own.
  tuning::CostModel based = proto;
  based.set_trees_from_terms(false);
  auto as_based = CostModel::FromProto(based);
  ASSERT_TRUE(as_based.ok()) << as_based.status();
  EXPECT_NE(as_based->EstimateUs(samples[0].terms), model->EstimateUs(samples[0].terms));
  tuning::CostModel both = proto;
  both.set_tree_base(1.5);
  EXPECT_THAT(std::string(CostModel::FromProto(both).status().message()),
              HasSubstr("trees_from_terms and tree_base 1.5"));
}

// How a warp's loads spread is the trees' to learn: kernels alike in every term but their
// load_scatter (an element gather whose neighbouring threads load far apart pays for the
// sectors) are told apart with trees, and a model fitted before these features existed
// (trees splitting only on terms and kinds) still reads and estimates as it did.
TEST(CostModelTest, TreesLearnFromHowTheLoadsSpread) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<CostSample> samples;
  for (int p = 0; p < 10; ++p) {
    const double bytes = std::pow(2.0, 24 + u(rng));
    for (int k = 0; k < 30; ++k) {
      CostSample s;
      s.problem = absl::StrCat("p", p);
      s.op = "im2col";
      s.terms.bytes = s.terms.read_bytes = s.terms.written_bytes = bytes;
      s.terms.threads = 32 << (k % 4);
      s.terms.kind = "simt_im2col/planes";
      s.terms.load_scatter = 1 << (k % 5);
      s.terms.gather_reads = 1;
      s.median_us = (2 + bytes / 3e6 * (1 + 0.5 * s.terms.load_scatter)) * (1 + 0.02 * (2 * u(rng) - 1));
      samples.push_back(s);
    }
  }
  FitOptions trees;
  trees.trees = 60;
  trees.depth = 3;
  auto linear = LeaveOneProblemOut(samples, FitOptions{});
  auto boosted = LeaveOneProblemOut(samples, trees);
  ASSERT_TRUE(linear.ok() && boosted.ok());
  EXPECT_LT(boosted->back().median_abs_log_error, linear->back().median_abs_log_error / 2);
  EXPECT_LT(boosted->back().mean_top1_regret, 0.02);

  // The file names the features after the kinds, and a reader checks them: a model fitted
  // before they existed names none and may split on none of them; one naming features this
  // tiletune lacks is refused.
  auto model = CostModel::Fit(samples, trees);
  ASSERT_TRUE(model.ok()) << model.status();
  const tuning::CostModel proto = model->ToProto(tuning::DeviceIdentity());
  EXPECT_THAT(proto.access_features(), ElementsAre("load_scatter", "gather_reads"));
  tuning::CostModel old = proto;
  old.clear_access_features();
  EXPECT_THAT(std::string(CostModel::FromProto(old).status().message()),
              HasSubstr("past its terms and kinds, but the model names no access features"));
  tuning::CostModel renamed = proto;
  renamed.set_access_features(0, "load_spread");
  EXPECT_THAT(std::string(CostModel::FromProto(renamed).status().message()),
              HasSubstr("access feature 0 is 'load_spread'; this tiletune's are load_scatter, "
                        "gather_reads"));
}

// The k a tuner measures: the operator's; for an operator the fit gave none (never in its
// corpus), 0, every candidate; the default for a model with no k at all. It survives the file,
// and a k below 1 is refused.
TEST(CostModelTest, TopKPerOperatorAndNoneForOperatorsTheFitNeverSaw) {
  auto model = CostModel::Fit(Synthetic(4, 20, 0));
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(model->TopKFor("copy"), CostModel::kDefaultTopK);
  model->set_top_k({{"copy", 7}, {"all", 12}});
  const tuning::CostModel proto = model->ToProto(tuning::DeviceIdentity());
  auto back = CostModel::FromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->TopKFor("copy"), 7);
  EXPECT_EQ(back->TopKFor("batch_copy"), 0);
  tuning::CostModel zero = proto;
  (*zero.mutable_top_k())["im2col"] = 0;
  EXPECT_THAT(std::string(CostModel::FromProto(zero).status().message()),
              HasSubstr("top_k of 'im2col' is 0; accepted: >= 1"));
}

// The terms of real lowered kernels: bytes, vector, instruction, waves and bytes in flight
// follow the launch.
TEST(CostModelTest, TermsFollowTheLowering) {
  const Target sm90 = *Target::Parse("sm_90a");
  const DeviceConstants h200 = DeviceConstantsFor(sm90, 132);
  CopyOp op{Region::Whole(Buffer::RowMajor("src", DataType::kF16, Scope::kGlobal, {8192, 8192})),
            Region::Whole(Buffer::RowMajor("dst", DataType::kF16, Scope::kGlobal, {8192, 8192}))};
  op.hints.prefer_instruction = Instruction::kSync;
  LaunchParams launch;
  launch.tile = {8192};
  launch.threads = 256;
  launch.through_shared = false;
  auto simt = LowerCopy(op, sm90, launch);
  ASSERT_TRUE(simt.ok()) << simt.status();
  const KernelTerms a = TermsOf(*simt, h200);
  EXPECT_EQ(a.bytes, 2.0 * 8192 * 8192 * 2);
  EXPECT_EQ(a.vector_bytes, 16);
  EXPECT_FALSE(a.tma);
  // 8 CTAs of 256 threads an SM: 8192 tiles of 16 KiB over 1056 at once.
  EXPECT_NEAR(a.waves, 8192.0 / 1056, 1e-9);
  EXPECT_NEAR(a.inflight_per_sm, 8 * 16384.0, 1e-6);
  launch.tile = {4096};
  auto halved = LowerCopy(op, sm90, launch);
  ASSERT_TRUE(halved.ok());
  const KernelTerms b = TermsOf(*halved, h200);
  EXPECT_NEAR(b.waves, 2 * a.waves, 1e-9);
  EXPECT_NEAR(b.tiles_per_sm, 2 * a.tiles_per_sm, 1e-9);
  op.hints.prefer_instruction = Instruction::kTma;
  launch.tile = {16384};
  launch.threads = 32;
  launch.stages = 4;
  launch.through_shared = true;
  launch.ctas_per_sm = 1;
  auto bulk = LowerCopy(op, sm90, launch);
  ASSERT_TRUE(bulk.ok()) << bulk.status();
  const KernelTerms c = TermsOf(*bulk, h200);
  EXPECT_TRUE(c.tma);
  // A persistent grid of one CTA an SM, four 32 KiB stages each.
  EXPECT_NEAR(c.waves, 4096.0 / 132, 1e-9);
  EXPECT_NEAR(c.inflight_per_sm, 4 * 32768.0, 1e-6);
  // Neighbouring threads load neighbouring vectors: no sector beyond the bytes' own.
  EXPECT_EQ(a.load_scatter, 1);
  EXPECT_EQ(a.gather_reads, 1);
}

// An element gather's load_scatter: its warp loads' sectors over the fewest that 32 of its
// elements fill (2 for f16, 4 for f32); a kernel loading vectors has 1.
TEST(CostModelTest, LoadScatterIsTheWarpsSectorsOverTheFewest) {
  const DeviceConstants h200 = DeviceConstantsFor(*Target::Parse("sm_90a"), 132);
  LoweredTileKernel gather;
  gather.vector_bytes = 16;
  gather.num_tiles = 1000;
  gather.tile_bytes = 16384;
  gather.launch.threads = 256;
  gather.gather_reads = 9;
  auto scatter = [&](int element_bytes, std::optional<double> sectors) {
    gather.element_bytes = element_bytes;
    gather.warp_load_sectors = sectors;
    return TermsOf(gather, h200).load_scatter;
  };
  EXPECT_EQ(scatter(2, 16), 8);
  EXPECT_EQ(scatter(4, 16), 4);
  EXPECT_EQ(scatter(2, 32), 16);
  EXPECT_EQ(scatter(2, 1), 0.5);  // neighbouring threads loading the same elements
  EXPECT_EQ(scatter(2, std::nullopt), 1);
  EXPECT_EQ(TermsOf(gather, h200).gather_reads, 9);
}

}  // namespace
}  // namespace tiletune

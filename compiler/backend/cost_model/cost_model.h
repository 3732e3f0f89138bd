// A cost model of tile kernels: the estimated time of a lowered kernel on a GPU, from the
// terms of a memory-bound kernel, with constants fitted to measurements (`autotune fit`).
//
//   DeviceConstants gpu = DeviceConstantsFor(target, /*sm_count=*/132);
//   KernelTerms terms = TermsOf(*lowered, gpu);
//   double us = model.EstimateUs(terms);
//
// The terms come from what every operator's lowering fills in (LoweredTileKernel: the
// bytes its operands span, the widest access, the instruction family, the tiles, threads,
// stages and shared memory), so the model serves every operator with no branch on which
// one it is:
//   log_bytes      ln(bytes read + written)
//   narrow_vector  log2(16 / bytes of the widest access)
//   tma, cp_async  the instruction family (the SIMT loads and stores being the base)
//   wave_tail      ln(ceil(W) / W) for W >= 1 waves of tiles over the resident CTAs
//   underfill      ln(1 / W) where W < 1: fewer tiles than CTAs the GPU holds at once
//   shallow        ln(1 + knot / bytes in flight per SM)
//   tiles_per_sm   ln(1 + tiles per SM): work per tile beyond its bytes
//   read_share     ln(bytes read / bytes written)
//   threads        log2(threads / 128)
//   accesses       ln(widest accesses per thread per tile)
//   shared         ln(1 + shared memory per CTA / 4 KiB)
//   stages         pipeline stages beyond one
// The time is floor_us + exp(sum of coefficient x term). floor_us and the knot are chosen
// from grids and the coefficients by least squares on log time, each problem weighted
// alike, whichever pair fits best.
//
// A fit may add boosted regression trees (FitOptions::trees): fitted to log time over the
// same terms, the kernel's kind (its path and form), and how its loads spread
// (log2 load_scatter, ln gather_reads), they model what a sum of terms cannot, such as one
// form's cost growing with a term that costs another form nothing. A model with trees
// estimates exp(its base + the sum of its trees). Ranking trees (FitOptions::rank) are
// fitted instead to what differs among one problem's kernels and add to ln of the terms'
// estimate: such a model orders a problem's kernels, and its scale is the terms'.
#ifndef COMPILER_BACKEND_COST_MODEL_COST_MODEL_H_
#define COMPILER_BACKEND_COST_MODEL_COST_MODEL_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/lower/lowered_kernel.h"
#include "compiler/target/target.h"
#include "compiler/tuning_db/tuning_db.pb.h"

namespace tiletune {

// What the model knows of a GPU: its architecture's limits (Target) and its own size.
struct DeviceConstants {
  Target target = *Target::Parse("sm_90a");
  int sm_count = 0;
};
DeviceConstants DeviceConstantsFor(const Target& target, int sm_count);

// The terms of one lowered kernel on one GPU, before the model's knot is applied.
struct KernelTerms {
  double bytes = 0;              // read + written
  double vector_bytes = 16;      // the widest access
  bool tma = false;
  bool cp_async = false;
  double waves = 1;              // tiles over the CTAs at work at once
  double inflight_per_sm = 0;    // bytes one SM's resident CTAs have under way
  double tiles_per_sm = 0;
  double read_bytes = 0;          // the input operand's span
  double written_bytes = 0;       // the output operand's span
  double threads = 128;
  double accesses_per_thread = 1; // widest accesses a thread makes per tile
  double shared_per_cta = 0;      // bytes of shared memory
  double stages = 1;
  std::string kind;               // "path/form" (LoweredTileKernel's names), for trees
  // For trees: an element gather's 32-byte sectors per warp load over the fewest a warp's
  // elements fill (LoweredTileKernel::warp_load_sectors; 1 for kernels loading vectors, below
  // 1 where neighbouring threads load the same elements), and the input elements summed per
  // output element (LoweredTileKernel::gather_reads, 1 where unset).
  double load_scatter = 1;
  double gather_reads = 1;
};
KernelTerms TermsOf(const LoweredTileKernel& lowered, const DeviceConstants& device);

// The terms' names, in the order of the model's coefficients.
const std::vector<std::string>& CostTermNames();

// One measurement: a kernel's terms and its median time, and the problem it ran on
// (problems weigh alike in a fit and are left out whole in leave-one-problem-out).
struct CostSample {
  std::string problem;
  std::string op;  // the operator, for per-operator reports
  KernelTerms terms;
  double median_us = 0;
};

// What a fit adds to the terms' least squares: `trees` boosted regression trees (0: none)
// of at most `depth` levels, each scaled by `learning_rate`.
struct FitOptions {
  int trees = 0;
  int depth = 4;
  double learning_rate = 0.1;
  // Trees that order a problem's kernels rather than place them: boosted from the terms'
  // estimate, on what differs among one problem's kernels (each problem's mean left out,
  // and times past kRankCap times the problem's fastest counted as that), so they spend
  // nothing on what all of a problem's kernels share. The terms give the scale.
  bool rank = false;
  static constexpr double kRankCap = 3;
};

// A regression tree over a feature vector (see tuning::RegressionTree).
struct RegressionTree {
  std::vector<int> feature;  // -1: a leaf
  std::vector<double> threshold;
  std::vector<int> left, right;
  std::vector<double> value;
  // The leaf `x` reaches; the tree must be well formed (from CostModel::Fit or FromProto)
  // and `x` as long as the features it splits on.
  double Evaluate(const std::vector<double>& x) const;
};

class CostModel {
 public:
  // Fits floor, knot and coefficients to `samples` (at least two problems and as many
  // samples as terms), then the trees `options` asks for. InvalidArgument otherwise.
  static absl::StatusOr<CostModel> Fit(const std::vector<CostSample>& samples,
                                       const FitOptions& options = {});
  // The model a file holds; InvalidArgument naming what is wrong with it.
  static absl::StatusOr<CostModel> FromProto(const tuning::CostModel& proto);

  double EstimateUs(const KernelTerms& terms) const;
  // How many of the model's first choices a tuner measures for operator `op`: the k its
  // leave-one-problem-out found for that operator; 0 (measure every candidate) for an
  // operator the fit gave no k (absent from its corpus, or none held 1%); kDefaultTopK for
  // a model that holds no k at all.
  static constexpr int kDefaultTopK = 40;
  int TopKFor(const std::string& op) const;
  // The k each operator needs ("all" for every operator), from LeaveOneProblemOut.
  void set_top_k(std::map<std::string, int> top_k) { top_k_ = std::move(top_k); }
  const std::map<std::string, int>& top_k() const { return top_k_; }
  // device, floor, knot, terms and coefficients; the counts of what it was fitted on.
  tuning::CostModel ToProto(const tuning::DeviceIdentity& device) const;

  double floor_us() const { return floor_us_; }
  double knot_bytes() const { return knot_bytes_; }
  const std::vector<double>& coefficients() const { return coefficients_; }
  int tree_count() const { return static_cast<int>(trees_.size()); }
  // Whether the trees add to the terms' estimate (FitOptions::rank) rather than to a base.
  bool trees_from_terms() const { return trees_from_terms_; }

 private:
  // The trees' features of a kernel: the terms but the intercept, its kind's 0/1, then
  // kAccessFeatures of how its loads spread (after the kinds, so that the indices of a
  // model fitted without them still hold).
  std::vector<double> TreeFeatures(const KernelTerms& terms) const;

  double floor_us_ = 0;
  double knot_bytes_ = 0;
  std::vector<double> coefficients_;
  int problems_ = 0;
  int samples_ = 0;
  std::map<std::string, int> top_k_;
  std::vector<std::string> kinds_;
  double tree_base_ = 0;
  bool trees_from_terms_ = false;
  std::vector<RegressionTree> trees_;
};

// A model and the GPU model its corpus was measured on; it answers for GPUs of that name
// and compute capability.
struct GpuCostModel {
  CostModel model;
  tuning::DeviceIdentity device;
  std::string origin;  // where it came from, for messages
};
// The model of `models` whose GPU is `device`'s (name and compute capability); null when
// none is.
const GpuCostModel* CostModelFor(const std::vector<GpuCostModel>& models,
                                 const tuning::DeviceIdentity& device);

// How well a model fitted without each problem ranks and times that problem's kernels.
struct LeaveOneOutError {
  std::string op;
  int problems = 0;
  int samples = 0;
  // Median over samples of |ln(estimate / measured)|.
  double median_abs_log_error = 0;
  // Per problem: measured time of the model's first choice (or the best of its first
  // five) over the fastest measured, minus one; the mean and the worst over problems.
  double mean_top1_regret = 0;
  double worst_top1_regret = 0;
  double mean_top5_regret = 0;
  // The fewest of the model's first choices that, measured, leave a mean regret of at most
  // 1% over these problems (the k a tuner measuring the model's top k would need), and the
  // worst problem's regret at that k. 0 when no k up to the largest problem's kernels does.
  int k_for_one_percent = 0;
  double worst_regret_at_k = 0;
};

// One entry per operator in `samples`, in name order, then one for all ("all").
absl::StatusOr<std::vector<LeaveOneOutError>> LeaveOneProblemOut(
    const std::vector<CostSample>& samples, const FitOptions& options = {});

}  // namespace tiletune

#endif  // COMPILER_BACKEND_COST_MODEL_COST_MODEL_H_

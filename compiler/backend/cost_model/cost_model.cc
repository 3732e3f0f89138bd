#include "compiler/backend/cost_model/cost_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/lower/lowering_rules.h"

namespace tiletune {
namespace {

constexpr int kTerms = 14;
// The trees' features after the kinds, as a model file names them: log2 load_scatter and
// ln gather_reads.
const std::vector<std::string>& AccessFeatureNames() {
  static const std::vector<std::string>* const names =
      new std::vector<std::string>{"load_scatter", "gather_reads"};
  return *names;
}

// The grids floor_us and the knot are chosen from.
constexpr double kFloorsUs[] = {0, 0.5, 1, 1.5, 2, 3, 4, 6, 8};
constexpr double kKnotsBytes[] = {4096, 8192, 16384, 32768, 65536, 131072, 262144};

std::vector<double> TermVector(const KernelTerms& t, double knot) {
  const double vector = std::clamp(t.vector_bytes, 1.0, 16.0);
  const double waves = std::max(t.waves, 1e-9);
  return {1.0,
          std::log(std::max(t.bytes, 1.0)),
          std::log2(16.0 / vector),
          t.tma ? 1.0 : 0.0,
          t.cp_async ? 1.0 : 0.0,
          waves >= 1 ? std::log(std::ceil(waves) / waves) : 0.0,
          waves < 1 ? std::log(1 / waves) : 0.0,
          std::log1p(knot / std::max(t.inflight_per_sm, 1.0)),
          std::log1p(std::max(t.tiles_per_sm, 0.0)),
          std::log((t.read_bytes + 1) / (t.written_bytes + 1)),
          std::log2(std::max(t.threads, 32.0) / 128),
          std::log(std::max(t.accesses_per_thread, 1.0)),
          std::log1p(std::max(t.shared_per_cta, 0.0) / 4096),
          std::max(t.stages - 1, 0.0)};
}

double Estimate(double floor_us, double knot, const std::vector<double>& coefficients,
                const KernelTerms& terms) {
  const std::vector<double> x = TermVector(terms, knot);
  double z = 0;
  for (int i = 0; i < kTerms; ++i) z += coefficients[i] * x[i];
  return floor_us + std::exp(std::min(z, 50.0));
}

// Trees: how many a model may hold (a file's too: at about 2.4 KB of text a tree, 2000
// fit in the model files' 16 MiB) and how deep a fit grows them; a leaf's magnitude, so
// that no sum of leaves overflows.
constexpr int kMaxTrees = 2000;
constexpr int kMaxTreeDepth = 12;
constexpr double kMaxLeaf = 50;

// One least-squares regression tree of at most `depth` levels fitted to targets `g`
// weighted by `w` over rows `x`, grown level by level; `sorted[f]` lists the rows by
// feature f ascending. A node splits where the weighted squared error falls most, between
// two distinct values of a feature; a node no split improves is a leaf worth its weighted
// mean target.
RegressionTree FitTree(const std::vector<std::vector<double>>& x,
                       const std::vector<std::vector<int>>& sorted, const std::vector<double>& g,
                       const std::vector<double>& w, int depth) {
  const size_t n = x.size(), features = sorted.size();
  RegressionTree tree;
  auto add_node = [&] {
    tree.feature.push_back(-1);
    tree.threshold.push_back(0);
    tree.left.push_back(-1);
    tree.right.push_back(-1);
    tree.value.push_back(0);
    return static_cast<int>(tree.feature.size()) - 1;
  };
  std::vector<int> node_of(n, add_node());
  std::vector<double> sum_w = {0}, sum_g = {0};
  for (size_t i = 0; i < n; ++i) {
    sum_w[0] += w[i];
    sum_g[0] += w[i] * g[i];
  }
  std::vector<int> active = {0};
  for (int level = 0; level < depth && !active.empty(); ++level) {
    // Per active node: the best split so far, and a feature's running left sums.
    std::vector<int> slot(tree.feature.size(), -1);
    for (size_t a = 0; a < active.size(); ++a) slot[active[a]] = static_cast<int>(a);
    std::vector<double> best_gain(active.size(), 1e-12), best_threshold(active.size(), 0);
    std::vector<int> best_feature(active.size(), -1);
    std::vector<double> left_w(active.size()), left_g(active.size()), last(active.size());
    for (size_t f = 0; f < features; ++f) {
      std::fill(left_w.begin(), left_w.end(), 0.0);
      std::fill(left_g.begin(), left_g.end(), 0.0);
      for (int i : sorted[f]) {
        const int a = slot[node_of[i]];
        if (a < 0) continue;
        const int node = active[a];
        const double v = x[i][f];
        if (left_w[a] > 0 && v > last[a] && sum_w[node] - left_w[a] > 0) {
          const double right_w = sum_w[node] - left_w[a], right_g = sum_g[node] - left_g[a];
          const double gain = left_g[a] * left_g[a] / left_w[a] + right_g * right_g / right_w -
                              sum_g[node] * sum_g[node] / sum_w[node];
          if (gain > best_gain[a]) {
            best_gain[a] = gain;
            best_feature[a] = static_cast<int>(f);
            // Between the two values; adjacent doubles can round the midpoint down to
            // the lower one, which would send both sides right.
            const double mid = last[a] + 0.5 * (v - last[a]);
            best_threshold[a] = mid > last[a] ? mid : v;
          }
        }
        left_w[a] += w[i];
        left_g[a] += w[i] * g[i];
        last[a] = v;
      }
    }
    std::vector<int> next;
    std::vector<int> child(2 * active.size(), -1);
    for (size_t a = 0; a < active.size(); ++a) {
      if (best_feature[a] < 0) continue;
      const int node = active[a];
      tree.feature[node] = best_feature[a];
      tree.threshold[node] = best_threshold[a];
      for (int side = 0; side < 2; ++side) {
        const int c = add_node();
        child[2 * a + side] = c;
        next.push_back(c);
        sum_w.push_back(0);
        sum_g.push_back(0);
      }
      tree.left[node] = child[2 * a];
      tree.right[node] = child[2 * a + 1];
    }
    for (size_t i = 0; i < n; ++i) {
      const int a = slot[node_of[i]];
      if (a < 0 || best_feature[a] < 0) continue;
      const bool left = x[i][best_feature[a]] < best_threshold[a];
      node_of[i] = child[2 * a + (left ? 0 : 1)];
      sum_w[node_of[i]] += w[i];
      sum_g[node_of[i]] += w[i] * g[i];
    }
    active = std::move(next);
  }
  for (size_t node = 0; node < tree.feature.size(); ++node) {
    if (tree.feature[node] < 0 && sum_w[node] > 0) tree.value[node] = sum_g[node] / sum_w[node];
  }
  return tree;
}

// Solves a x = b (n x n, row-major) by elimination with partial pivoting; false when
// singular.
bool Solve(std::vector<double> a, std::vector<double> b, int n, std::vector<double>& x) {
  for (int col = 0; col < n; ++col) {
    int pivot = col;
    for (int r = col + 1; r < n; ++r) {
      if (std::abs(a[r * n + col]) > std::abs(a[pivot * n + col])) pivot = r;
    }
    if (std::abs(a[pivot * n + col]) < 1e-300) return false;
    if (pivot != col) {
      for (int c = 0; c < n; ++c) std::swap(a[col * n + c], a[pivot * n + c]);
      std::swap(b[col], b[pivot]);
    }
    for (int r = col + 1; r < n; ++r) {
      const double f = a[r * n + col] / a[col * n + col];
      if (f == 0) continue;
      for (int c = col; c < n; ++c) a[r * n + c] -= f * a[col * n + c];
      b[r] -= f * b[col];
    }
  }
  x.assign(n, 0);
  for (int r = n - 1; r >= 0; --r) {
    double s = b[r];
    for (int c = r + 1; c < n; ++c) s -= a[r * n + c] * x[c];
    x[r] = s / a[r * n + r];
  }
  return true;
}

struct Fitted {
  double floor_us = 0, knot = 0, error = std::numeric_limits<double>::infinity();
  std::vector<double> coefficients;
};

// Least squares of ln(t - floor) on the terms, each sample weighted by `weights`, with a
// small ridge so terms that never vary in the corpus stay at 0; the weighted squared error
// of ln(estimate / t).
Fitted FitFixed(const std::vector<CostSample>& samples, const std::vector<double>& weights,
                double floor_us, double knot) {
  std::vector<double> ata(kTerms * kTerms, 0), atb(kTerms, 0);
  for (size_t s = 0; s < samples.size(); ++s) {
    const double t = samples[s].median_us;
    const double y = std::log(std::max(t - floor_us, 0.1 * t));
    const std::vector<double> x = TermVector(samples[s].terms, knot);
    for (int i = 0; i < kTerms; ++i) {
      atb[i] += weights[s] * x[i] * y;
      for (int j = 0; j < kTerms; ++j) ata[i * kTerms + j] += weights[s] * x[i] * x[j];
    }
  }
  double trace = 0;
  for (int i = 0; i < kTerms; ++i) trace += ata[i * kTerms + i];
  for (int i = 1; i < kTerms; ++i) ata[i * kTerms + i] += 1e-6 * trace / kTerms;
  Fitted fitted;
  fitted.floor_us = floor_us;
  fitted.knot = knot;
  if (!Solve(ata, atb, kTerms, fitted.coefficients)) return fitted;
  double error = 0;
  for (size_t s = 0; s < samples.size(); ++s) {
    const double e =
        std::log(Estimate(floor_us, knot, fitted.coefficients, samples[s].terms) /
                 samples[s].median_us);
    error += weights[s] * e * e;
  }
  fitted.error = error;
  return fitted;
}

absl::Status CheckSamples(const std::vector<CostSample>& samples) {
  std::set<std::string> problems;
  for (const CostSample& s : samples) {
    if (!(s.median_us > 0) || !std::isfinite(s.median_us)) {
      return absl::InvalidArgumentError(absl::StrCat("a sample of ", s.problem, " has time ",
                                                     s.median_us, " us; times must be > 0"));
    }
    problems.insert(s.problem);
  }
  if (problems.size() < 2 || samples.size() < static_cast<size_t>(kTerms)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a fit needs measurements of at least 2 problems and ", kTerms, " kernels; got ",
        problems.size(), " problem(s) and ", samples.size(), " kernel(s)"));
  }
  return absl::OkStatus();
}

}  // namespace

DeviceConstants DeviceConstantsFor(const Target& target, int sm_count) {
  return DeviceConstants{target, sm_count};
}

KernelTerms TermsOf(const LoweredTileKernel& lowered, const DeviceConstants& device) {
  KernelTerms terms;
  const int sm_count = std::max(device.sm_count, 1);
  terms.bytes = static_cast<double>(lowered.input_span_bytes + lowered.output_span_bytes);
  terms.vector_bytes = lowered.vector_bytes > 0 ? lowered.vector_bytes : 16;
  terms.tma = lowered.instruction == Instruction::kTma;
  terms.cp_async = lowered.instruction == Instruction::kCpAsync;
  const int64_t per_sm =
      ResidentCtasPerSm(device.target, lowered.launch.threads, lowered.shared_bytes);
  const double tiles = static_cast<double>(std::max<int64_t>(lowered.num_tiles, 1));
  const double grid = static_cast<double>(std::max<int64_t>(lowered.GridSize(sm_count), 1));
  const double at_once = std::min(grid, static_cast<double>(per_sm * sm_count));
  terms.waves = tiles / at_once;
  terms.inflight_per_sm = at_once / sm_count * static_cast<double>(lowered.tile_bytes) *
                          std::max(lowered.stages, 1);
  terms.tiles_per_sm = tiles / sm_count;
  terms.read_bytes = static_cast<double>(lowered.input_span_bytes);
  terms.written_bytes = static_cast<double>(lowered.output_span_bytes);
  terms.threads = std::max(lowered.launch.threads, 1);
  terms.accesses_per_thread = static_cast<double>(lowered.tile_bytes) /
                              (terms.threads * terms.vector_bytes);
  terms.shared_per_cta = static_cast<double>(lowered.shared_bytes);
  terms.stages = std::max(lowered.stages, 1);
  terms.kind = absl::StrCat(lowered.path_name, "/", lowered.form_name);
  // An element gather's warp load against the fewest sectors a warp's elements fill (a
  // vector kernel's loads fill theirs).
  if (lowered.warp_load_sectors.has_value() && *lowered.warp_load_sectors > 0) {
    const double fewest = std::ceil(static_cast<double>(kWarpLanes * std::max(lowered.element_bytes, 1)) /
                                    static_cast<double>(kSectorBytes));
    terms.load_scatter = *lowered.warp_load_sectors / fewest;
  }
  terms.gather_reads = static_cast<double>(lowered.gather_reads.value_or(1));
  return terms;
}

const std::vector<std::string>& CostTermNames() {
  static const std::vector<std::string>* const names = new std::vector<std::string>{
      "intercept",  "log_bytes",  "narrow_vector", "tma",      "cp_async",
      "wave_tail",  "underfill",  "shallow",       "tiles_per_sm", "read_share",
      "threads",    "accesses",   "shared",        "stages"};
  return *names;
}

double RegressionTree::Evaluate(const std::vector<double>& x) const {
  int node = 0;
  while (feature[node] >= 0) {
    node = x[feature[node]] < threshold[node] ? left[node] : right[node];
  }
  return value[node];
}

std::vector<double> CostModel::TreeFeatures(const KernelTerms& terms) const {
  std::vector<double> x = TermVector(terms, knot_bytes_);
  x.erase(x.begin());  // the intercept
  for (const std::string& kind : kinds_) x.push_back(terms.kind == kind ? 1.0 : 0.0);
  x.push_back(std::log2(std::max(terms.load_scatter, 1e-3)));
  x.push_back(std::log(std::max(terms.gather_reads, 1.0)));
  return x;
}

absl::StatusOr<CostModel> CostModel::Fit(const std::vector<CostSample>& samples,
                                         const FitOptions& options) {
  if (absl::Status ok = CheckSamples(samples); !ok.ok()) return ok;
  if (options.trees < 0 || options.trees > kMaxTrees || options.depth < 1 ||
      options.depth > kMaxTreeDepth || !(options.learning_rate > 0) ||
      !(options.learning_rate <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "trees ", options.trees, " (accepted: 0 to ", kMaxTrees, "), depth ", options.depth,
        " (1 to ", kMaxTreeDepth, "), learning rate ", options.learning_rate, " (above 0, at most 1)"));
  }
  // Each problem weighs alike, however many of its kernels were measured.
  std::map<std::string, int> per_problem;
  for (const CostSample& s : samples) ++per_problem[s.problem];
  std::vector<double> weights;
  for (const CostSample& s : samples) weights.push_back(1.0 / per_problem[s.problem]);
  Fitted best;
  for (double floor_us : kFloorsUs) {
    for (double knot : kKnotsBytes) {
      Fitted fitted = FitFixed(samples, weights, floor_us, knot);
      if (fitted.error < best.error) best = std::move(fitted);
    }
  }
  if (!std::isfinite(best.error)) {
    return absl::InvalidArgumentError("the samples' terms admit no least-squares fit");
  }
  CostModel model;
  model.floor_us_ = best.floor_us;
  model.knot_bytes_ = best.knot;
  model.coefficients_ = best.coefficients;
  model.problems_ = static_cast<int>(per_problem.size());
  model.samples_ = static_cast<int>(samples.size());
  if (options.trees == 0) return model;
  // Boosting on log time: each tree fits what the trees before it leave, scaled by the
  // learning rate; problems weigh alike here too.
  std::set<std::string> kinds;
  for (const CostSample& s : samples) {
    if (!s.terms.kind.empty()) kinds.insert(s.terms.kind);
  }
  model.kinds_.assign(kinds.begin(), kinds.end());
  std::vector<std::vector<double>> x;
  std::vector<double> y, estimate;
  double total_w = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    x.push_back(model.TreeFeatures(samples[i].terms));
    y.push_back(std::log(samples[i].median_us));
    model.tree_base_ += weights[i] * y.back();
    total_w += weights[i];
  }
  model.tree_base_ /= total_w;
  estimate.assign(samples.size(), model.tree_base_);
  // Ranking trees: boosted from the terms' estimate, on each problem's kernels' differences
  // (their residuals less the problem's mean), with the slow tail capped so that it does
  // not outweigh the order of the fast kernels.
  std::vector<std::vector<size_t>> problem_rows;
  if (options.rank) {
    model.trees_from_terms_ = true;
    model.tree_base_ = 0;
    std::map<std::string, std::vector<size_t>> rows;
    for (size_t i = 0; i < samples.size(); ++i) rows[samples[i].problem].push_back(i);
    for (auto& [problem, indices] : rows) {
      double fastest = std::numeric_limits<double>::infinity();
      for (size_t i : indices) fastest = std::min(fastest, y[i]);
      for (size_t i : indices) {
        y[i] = std::min(y[i], fastest + std::log(FitOptions::kRankCap));
        estimate[i] =
            std::log(Estimate(model.floor_us_, model.knot_bytes_, model.coefficients_,
                              samples[i].terms));
      }
      problem_rows.push_back(std::move(indices));
    }
  }
  std::vector<std::vector<int>> sorted(x[0].size());
  for (size_t f = 0; f < sorted.size(); ++f) {
    sorted[f].resize(samples.size());
    for (size_t i = 0; i < samples.size(); ++i) sorted[f][i] = static_cast<int>(i);
    std::stable_sort(sorted[f].begin(), sorted[f].end(),
                     [&](int a, int b) { return x[a][f] < x[b][f]; });
  }
  std::vector<double> residual(samples.size());
  for (int t = 0; t < options.trees; ++t) {
    for (size_t i = 0; i < samples.size(); ++i) residual[i] = y[i] - estimate[i];
    for (const std::vector<size_t>& indices : problem_rows) {
      double mean = 0;
      for (size_t i : indices) mean += residual[i] / indices.size();
      for (size_t i : indices) residual[i] -= mean;
    }
    RegressionTree tree = FitTree(x, sorted, residual, weights, options.depth);
    for (double& v : tree.value) v = std::clamp(v * options.learning_rate, -kMaxLeaf, kMaxLeaf);
    for (size_t i = 0; i < samples.size(); ++i) estimate[i] += tree.Evaluate(x[i]);
    model.trees_.push_back(std::move(tree));
  }
  return model;
}

absl::StatusOr<CostModel> CostModel::FromProto(const tuning::CostModel& proto) {
  const std::vector<std::string>& names = CostTermNames();
  if (proto.terms_size() != static_cast<int>(names.size()) ||
      proto.coefficients_size() != proto.terms_size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a cost model has ", proto.terms_size(), " terms and ", proto.coefficients_size(),
        " coefficients; this tiletune's has ", names.size(), " of each"));
  }
  for (int i = 0; i < proto.terms_size(); ++i) {
    if (proto.terms(i) != names[i]) {
      return absl::InvalidArgumentError(absl::StrCat("cost model term ", i, " is '",
                                                     proto.terms(i).substr(0, 40),
                                                     "'; this tiletune's is '", names[i], "'"));
    }
    if (!std::isfinite(proto.coefficients(i))) {
      return absl::InvalidArgumentError(
          absl::StrCat("cost model coefficient of ", names[i], " is not finite"));
    }
  }
  if (!(proto.floor_us() >= 0) || !(proto.inflight_knot_bytes() > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cost model floor_us ", proto.floor_us(), " (accepted: >= 0) or inflight_knot_bytes ",
        proto.inflight_knot_bytes(), " (accepted: > 0) is out of range"));
  }
  CostModel model;
  model.floor_us_ = proto.floor_us();
  model.knot_bytes_ = proto.inflight_knot_bytes();
  model.coefficients_.assign(proto.coefficients().begin(), proto.coefficients().end());
  model.problems_ = proto.problems();
  model.samples_ = proto.samples();
  for (const auto& [op, k] : proto.top_k()) {
    if (k < 1) {
      return absl::InvalidArgumentError(absl::StrCat("cost model top_k of '", op.substr(0, 40),
                                                     "' is ", k, "; accepted: >= 1"));
    }
    model.top_k_[op] = k;
  }
  if (proto.trees_size() > kMaxTrees) {
    return absl::InvalidArgumentError(absl::StrCat("cost model has ", proto.trees_size(),
                                                   " trees; accepted: up to ", kMaxTrees));
  }
  if (!(std::abs(proto.tree_base()) <= kMaxLeaf)) {
    return absl::InvalidArgumentError(absl::StrCat("cost model tree_base ", proto.tree_base(),
                                                   "; accepted: -", kMaxLeaf, " to ", kMaxLeaf));
  }
  model.kinds_.assign(proto.kinds().begin(), proto.kinds().end());
  if (proto.trees_from_terms() && proto.tree_base() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cost model has trees_from_terms and tree_base ", proto.tree_base(),
        "; trees that add to the terms' estimate have no base (accepted: 0)"));
  }
  model.tree_base_ = proto.tree_base();
  model.trees_from_terms_ = proto.trees_from_terms();
  // The access features a file names are a prefix of this tiletune's, in order; a file
  // naming none (fitted before they existed) splits on terms and kinds only.
  const std::vector<std::string>& access = AccessFeatureNames();
  for (int i = 0; i < proto.access_features_size(); ++i) {
    if (i >= static_cast<int>(access.size()) || proto.access_features(i) != access[i]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cost model access feature ", i, " is '", proto.access_features(i).substr(0, 40),
          "'; this tiletune's are ", absl::StrJoin(access, ", "), ", in that order"));
    }
  }
  const int features = kTerms - 1 + proto.kinds_size() + proto.access_features_size();
  for (int t = 0; t < proto.trees_size() && proto.access_features_size() == 0; ++t) {
    for (int f : proto.trees(t).feature()) {
      if (f >= features && f < features + static_cast<int>(access.size())) {
        return absl::InvalidArgumentError(absl::StrCat(
            "cost model tree ", t, " splits on feature ", f, ", past its terms and kinds, but "
            "the model names no access features (a file written before it had to): fit it "
            "again"));
      }
    }
  }
  for (int t = 0; t < proto.trees_size(); ++t) {
    const tuning::RegressionTree& p = proto.trees(t);
    const int nodes = p.feature_size();
    if (nodes == 0 || p.threshold_size() != nodes || p.left_size() != nodes ||
        p.right_size() != nodes || p.value_size() != nodes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cost model tree ", t, " has ", nodes, " features, ", p.threshold_size(),
          " thresholds, ", p.left_size(), " left and ", p.right_size(), " right children and ",
          p.value_size(), " values; a tree needs one of each per node, at least one node"));
    }
    for (int i = 0; i < nodes; ++i) {
      // Children come after their parent, so every walk from the root ends at a leaf.
      const bool split = p.feature(i) >= 0;
      if (p.feature(i) < -1 || p.feature(i) >= features || !std::isfinite(p.threshold(i)) ||
          !(std::abs(p.value(i)) <= kMaxLeaf) ||
          (split && (p.left(i) <= i || p.left(i) >= nodes || p.right(i) <= i ||
                     p.right(i) >= nodes))) {
        return absl::InvalidArgumentError(absl::StrCat(
            "cost model tree ", t, " node ", i, ": feature ", p.feature(i), " (accepted: -1 to ",
            features - 1, "), children ", p.left(i), " and ", p.right(i), " (accepted: after ",
            i, ", before ", nodes, "), threshold ", p.threshold(i), " (accepted: finite), value ",
            p.value(i), " (accepted: -", kMaxLeaf, " to ", kMaxLeaf, ")"));
      }
    }
    RegressionTree tree;
    tree.feature.assign(p.feature().begin(), p.feature().end());
    tree.threshold.assign(p.threshold().begin(), p.threshold().end());
    tree.left.assign(p.left().begin(), p.left().end());
    tree.right.assign(p.right().begin(), p.right().end());
    tree.value.assign(p.value().begin(), p.value().end());
    model.trees_.push_back(std::move(tree));
  }
  return model;
}

double CostModel::EstimateUs(const KernelTerms& terms) const {
  if (trees_.empty()) return Estimate(floor_us_, knot_bytes_, coefficients_, terms);
  const std::vector<double> x = TreeFeatures(terms);
  double z = trees_from_terms_
                 ? std::log(Estimate(floor_us_, knot_bytes_, coefficients_, terms))
                 : tree_base_;
  for (const RegressionTree& tree : trees_) z += tree.Evaluate(x);
  return std::exp(std::clamp(z, -50.0, 50.0));
}

tuning::CostModel CostModel::ToProto(const tuning::DeviceIdentity& device) const {
  tuning::CostModel proto;
  *proto.mutable_device() = device;
  proto.set_floor_us(floor_us_);
  proto.set_inflight_knot_bytes(knot_bytes_);
  for (const std::string& name : CostTermNames()) proto.add_terms(name);
  for (double c : coefficients_) proto.add_coefficients(c);
  proto.set_problems(problems_);
  proto.set_samples(samples_);
  for (const auto& [op, k] : top_k_) (*proto.mutable_top_k())[op] = k;
  for (const std::string& kind : kinds_) proto.add_kinds(kind);
  if (!trees_.empty()) {
    for (const std::string& name : AccessFeatureNames()) proto.add_access_features(name);
  }
  proto.set_tree_base(tree_base_);
  proto.set_trees_from_terms(trees_from_terms_);
  for (const RegressionTree& tree : trees_) {
    tuning::RegressionTree* p = proto.add_trees();
    for (size_t i = 0; i < tree.feature.size(); ++i) {
      p->add_feature(tree.feature[i]);
      p->add_threshold(tree.threshold[i]);
      p->add_left(tree.left[i]);
      p->add_right(tree.right[i]);
      p->add_value(tree.value[i]);
    }
  }
  return proto;
}

int CostModel::TopKFor(const std::string& op) const {
  if (top_k_.empty()) return kDefaultTopK;
  auto it = top_k_.find(op);
  return it != top_k_.end() ? it->second : 0;
}

absl::StatusOr<std::vector<LeaveOneOutError>> LeaveOneProblemOut(
    const std::vector<CostSample>& samples, const FitOptions& options) {
  if (absl::Status ok = CheckSamples(samples); !ok.ok()) return ok;
  std::map<std::string, std::vector<size_t>> by_problem;
  for (size_t i = 0; i < samples.size(); ++i) by_problem[samples[i].problem].push_back(i);
  // Per operator (and "all"): |log errors| and per-problem regrets.
  struct Tally {
    std::vector<double> abs_log_errors, top1, top5;
    // Per problem: the measured times in the model's order, over the fastest.
    std::vector<std::vector<double>> ranked;
  };
  std::map<std::string, Tally> tallies;
  for (const auto& [problem, indices] : by_problem) {
    std::vector<CostSample> rest;
    for (const auto& [other, other_indices] : by_problem) {
      if (other == problem) continue;
      for (size_t i : other_indices) rest.push_back(samples[i]);
    }
    absl::StatusOr<CostModel> model = CostModel::Fit(rest, options);
    if (!model.ok()) return model.status();
    std::vector<std::pair<double, double>> ranked;  // (estimate, measured)
    for (size_t i : indices) {
      ranked.emplace_back(model->EstimateUs(samples[i].terms), samples[i].median_us);
    }
    std::sort(ranked.begin(), ranked.end());
    double best = std::numeric_limits<double>::infinity(), best5 = best;
    for (size_t k = 0; k < ranked.size(); ++k) {
      best = std::min(best, ranked[k].second);
      if (k < 5) best5 = std::min(best5, ranked[k].second);
    }
    for (const std::string& key : {samples[indices[0]].op, std::string("all")}) {
      Tally& tally = tallies[key];
      for (const auto& [estimate, measured] : ranked) {
        tally.abs_log_errors.push_back(std::abs(std::log(estimate / measured)));
      }
      tally.top1.push_back(ranked[0].second / best - 1);
      tally.top5.push_back(best5 / best - 1);
      std::vector<double> order;
      for (const auto& [estimate, measured] : ranked) order.push_back(measured / best);
      tally.ranked.push_back(std::move(order));
    }
  }
  std::vector<LeaveOneOutError> out;
  auto summarize = [&](const std::string& op, Tally& tally) {
    LeaveOneOutError e;
    e.op = op;
    e.problems = static_cast<int>(tally.top1.size());
    e.samples = static_cast<int>(tally.abs_log_errors.size());
    std::vector<double>& errors = tally.abs_log_errors;
    std::nth_element(errors.begin(), errors.begin() + errors.size() / 2, errors.end());
    e.median_abs_log_error = errors[errors.size() / 2];
    for (double r : tally.top1) {
      e.mean_top1_regret += r / tally.top1.size();
      e.worst_top1_regret = std::max(e.worst_top1_regret, r);
    }
    for (double r : tally.top5) e.mean_top5_regret += r / tally.top5.size();
    size_t most = 0;
    for (const std::vector<double>& order : tally.ranked) most = std::max(most, order.size());
    for (size_t k = 1; k <= most; ++k) {
      double mean = 0, worst = 0;
      for (const std::vector<double>& order : tally.ranked) {
        const double regret =
            *std::min_element(order.begin(), order.begin() + std::min(k, order.size())) - 1;
        mean += regret / tally.ranked.size();
        worst = std::max(worst, regret);
      }
      if (mean <= 0.01) {
        e.k_for_one_percent = static_cast<int>(k);
        e.worst_regret_at_k = worst;
        break;
      }
    }
    out.push_back(e);
  };
  for (auto& [op, tally] : tallies) {
    if (op != "all") summarize(op, tally);
  }
  summarize("all", tallies["all"]);
  return out;
}

const GpuCostModel* CostModelFor(const std::vector<GpuCostModel>& models,
                                 const tuning::DeviceIdentity& device) {
  for (const GpuCostModel& m : models) {
    if (m.device.name() == device.name() && m.device.cc_major() == device.cc_major() &&
        m.device.cc_minor() == device.cc_minor()) {
      return &m;
    }
  }
  return nullptr;
}

}  // namespace tiletune

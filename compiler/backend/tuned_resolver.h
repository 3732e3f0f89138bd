// Tuned resolution: which codegen, hints and launch parameters to use for a problem of any
// tile operator on a particular GPU, through a declared fallback chain.
//
//   1. exact      a database record for this device (name + compute capability) and
//                 this exact problem;
//   2. nearest    a record for the same compute capability and operator, of a dtype of
//                 the same element size (any, where the operator's records transfer
//                 across sizes: batch_copy), whose problem's transfer features (the
//                 operator's TransferFeatures, plus a step for another dtype) are nearest
//                 and whose variant lowers for this problem; on a GPU of another name the
//                 records of its compute capability transfer this way, never as exact.
//                 A record of another problem is fitted to this one (Transfer: the
//                 operator's AdaptLaunch, halvings, the vector width, the path). Where
//                 one of the next few records' kernels moves wider vectors here than the
//                 nearest's, the first such of the nearest's TransferFamily answers
//                 instead (not against a kernel summing
//                 gathered reads, unless it narrowed from its own problem); where the
//                 nearest's narrowed and none does, the heuristic's kernel if it is
//                 wider. A record of this very problem from another board of the
//                 architecture answers as stored. With a
//                 cost model of the GPU (Options::cost_models), the variant of the 8
//                 nearest usable records it predicts fastest instead;
//   3. older      with no usable record of the device's own compute capability: the
//                 records of the newest older one whose target has the same data-movement
//                 features (cp.async, L2 hints, TMA: sm_90 records on an sm_100 GPU, never
//                 sm_80 records on an sm_90 one), ranked as in 2 (reported as nearest);
//   4. heuristic  the operator's built-in choice for the target.
//
// Every answer says which level produced it and why the levels above did not.
//
//   TunedResolver::Options options;
//   options.registry = &codegens;
//   options.ops = &BuiltinTileOps();
//   options.databases = {std::move(db)};
//   TT_ASSIGN_OR_RETURN(auto resolver, TunedResolver::Create(std::move(options)));
//   TT_ASSIGN_OR_RETURN(Resolution r, resolver->Resolve(device, op));
//   if (r.level != ResolutionLevel::kExact) LOG << r.detail;
//
// Thread-safe after Create.
#ifndef COMPILER_BACKEND_TUNED_RESOLVER_H_
#define COMPILER_BACKEND_TUNED_RESOLVER_H_

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "compiler/backend/cost_model/cost_model.h"
#include "compiler/backend/device_codegen.h"
#include "compiler/backend/registry.h"
#include "compiler/ir/tile_op.h"
#include "compiler/ops/registry.h"
#include "compiler/target/target.h"
#include "compiler/tuning_db/tuning_db.pb.h"

namespace tiletune {

enum class ResolutionLevel { kExact, kNearest, kHeuristic };
std::string ResolutionLevelName(ResolutionLevel level);  // "exact", "nearest", "heuristic"

struct Resolution {
  ResolutionLevel level = ResolutionLevel::kHeuristic;
  std::shared_ptr<const DeviceCodegen> codegen;
  // What to build: the op with the resolved hints, the launch, the target.
  CodegenRequest request;
  // The request lowered and emitted (the resolver lowers it to know it is usable; callers
  // compile this rather than lowering again).
  BuiltKernel built;
  // Which record answered (exact, nearest), or why none did.
  std::string detail;
  // The database the answering record came from (Options::origins); empty for the
  // heuristic.
  std::string origin;
  // The cost model chose it (Options::select_by_model, with a model of the GPU), rather
  // than the exact or nearest record, or the heuristic.
  bool chosen_by_model = false;
  // An exact record whose kernel has changed since it was timed: the digest it holds is not
  // the emitted kernel's (an older tiletune wrote it). It still answers; its time describes
  // another kernel, so a caller may treat the problem as untuned.
  bool stale = false;
};

// The target a device of `device`'s compute capability compiles for ("sm_90a" for 9.0).
absl::StatusOr<Target> TargetOf(const tuning::DeviceIdentity& device);

class TunedResolver {
 public:
  struct Options {
    // Where codegens come from. Required; must outlive the resolver.
    DeviceCodegenRegistry* registry = nullptr;
    // The tile operators. Required; must outlive the resolver.
    const TileOpRegistry* ops = nullptr;
    // Tuning databases to consult, highest precedence first: where two hold a record of
    // the same key, the earlier one's is used and the later one's ignored, but for the
    // exact problem where the earlier one's is stale (Resolution::stale) or does not lower
    // and the later one's is current (its digest is today's kernel's): a problem tuned
    // again into a lower database answers with its current kernel. Nearest records are
    // ranked among the earlier ones only. Records of all of them are used otherwise.
    std::vector<tuning::TuningDatabase> databases;
    // What each database is called (a file, "... (built in)"), for Resolution::origin; may
    // be shorter than `databases`.
    std::vector<std::string> origins;
    // Cost models, one per GPU model (compiler/backend/cost_model); the first of a GPU
    // answers. With select_by_model, on a GPU one is of (its name and compute capability,
    // and a known SM count), a problem with no exact record runs the kernel the model
    // predicts fastest among the variants of the kModelCandidates nearest usable records
    // and, for a model with trees, the kernels of the operator's search space
    // (SpaceCandidates). A model with trees estimates each directly; a terms-only one
    // predicts a record's variant as its estimate on this problem times the record's
    // measured time over the estimate of the record's own launch on its own problem (how a
    // measured kernel scales, not its time; records with no measured time are not
    // predicted). Without one, the nearest record's.
    // The models answer NearbyEstimates whatever select_by_model says; Resolve and
    // Alternatives use them only with it.
    std::vector<GpuCostModel> cost_models;
    bool select_by_model = false;
    // How much faster than the nearest record's variant the model must predict another
    // kernel for selection to take it: 0.1 takes it only at or below 1 / 1.1 of the
    // nearest's prediction; a nearest variant the model cannot predict stays. The nearest record's kernel was measured on a problem like this one; the
    // model's estimates are not measurements, and a margin keeps small predicted gains from
    // trading it for a kernel nobody timed. 0: the fastest predicted, however close.
    double model_margin = 0;
  };
  static constexpr size_t kModelCandidates = 8;

  static absl::StatusOr<std::unique_ptr<TunedResolver>> Create(Options options);

  // `device` needs name, cc_major and cc_minor. The op's own hints, where set, win over
  // tuned ones; the tuned launch parameters are used as stored.
  absl::StatusOr<Resolution> Resolve(const tuning::DeviceIdentity& device, const TileOp& op) const;

  // Distinct variants worth measuring for `op` on `device`, best guess first: the exact
  // record's, then those of the nearest records (as Resolve ranks them) that lower for the
  // op, then the heuristic; at most `max_count` (>= 1). Then, where the device's GPU has a
  // cost model (whether or not it selects by it), up to `searched` more: the operator's
  // search space as the model ranks it, fastest estimate first (lowering the whole space
  // takes a while). Two variants are never the same kernel. For tuning on a miss
  // (kernels/library.h).
  absl::StatusOr<std::vector<Resolution>> Alternatives(const tuning::DeviceIdentity& device,
                                                       const TileOp& op, size_t max_count,
                                                       size_t searched = 0) const;

  // The variants of the kModelCandidates nearest usable records fitted to `op` on
  // `device`, nearest first, each with its record's distance and the prediction of the
  // device's cost model where it has one (Options::cost_models). For reports: what the
  // library weighs, and how the model sees it.
  struct NearbyEstimate {
    std::string variant;  // the resolution's detail: the record, its variant, the fitting
    double distance = 0;
    std::optional<double> predicted_us;
  };
  absl::StatusOr<std::vector<NearbyEstimate>> NearbyEstimates(const tuning::DeviceIdentity& device,
                                                              const TileOp& op) const;

  // Records in use, and records an earlier database's of the same key shadows (consulted
  // only for their exact problem, where every record above is stale: Exact).
  size_t record_count() const { return records_.size(); }
  size_t shadowed_count() const { return shadowed_; }

 private:
  explicit TunedResolver(Options options);

  // The nearest usable record's variant of `near` (Ranked), or that of one of the next
  // kWiderRecordTries records whose kernel moves wider vectors here, or the heuristic's
  // where the nearest's narrows here and the heuristic's is wider; a nearest record of
  // this very problem (another board's) as it is (see the definition for when), with `why`
  // and the reason in its detail; none when no record of `near` lowers.
  std::optional<Resolution> NearestUsable(const std::vector<std::pair<double, size_t>>& near,
                                          const std::string& why,
                                          const TileOpDefinition& definition,
                                          const std::shared_ptr<const DeviceCodegen>& codegen,
                                          const TileOp& op, const tuning::Problem& problem,
                                          const Target& target) const;
  // Selection by `model` (Options::select_by_model): among the variants of the
  // kModelCandidates nearest usable records of `near` and, for a model with trees, the
  // operator's search space, the kernel it predicts fastest, unless Options::model_margin
  // keeps the nearest record's (NearestUsable). None where it predicts none, or no record of
  // `near` lowers and the model has no trees.
  std::optional<Resolution> ByModel(const GpuCostModel& model,
                                    const std::vector<std::pair<double, size_t>>& near,
                                    const std::string& why, const TileOpDefinition& definition,
                                    const std::shared_ptr<const DeviceCodegen>& codegen,
                                    const TileOp& op, const tuning::Problem& problem,
                                    const Target& target, int sm_count) const;
  // The request `record`'s winner makes of `op` (its hints over the tuned ones), if a
  // codegen lowers it. `problem` is `op` as a database problem (made once by the caller).
  // `record` is one of records_; the answer names its origin.
  absl::StatusOr<Resolution> Attempt(const tuning::TuningRecord& record, ResolutionLevel level,
                                     const std::shared_ptr<const DeviceCodegen>& codegen,
                                     const TileOp& op, const tuning::Problem& problem,
                                     const Target& target) const;
  // The exact record of `key` (from `by_key`), attempted: the highest database's, unless
  // its kernel has changed since it was timed (stale) or it does not lower, and a record of
  // the same key it shadows is current (a digest of today's kernel), which then answers.
  // None when no database holds the key.
  std::optional<absl::StatusOr<Resolution>> Exact(
      absl::flat_hash_map<std::string, size_t>::const_iterator by_key,
      const std::shared_ptr<const DeviceCodegen>& codegen, const TileOp& op,
      const tuning::Problem& problem, const Target& target) const;
  // Attempt without the origin.
  absl::StatusOr<Resolution> Fit(const tuning::TuningRecord& record, ResolutionLevel level,
                                 const std::shared_ptr<const DeviceCodegen>& codegen,
                                 const TileOp& op, const tuning::Problem& problem,
                                 const Target& target) const;
  // `record`'s variant (`tuned`, as `resolved` holds its hints) fitted to another problem
  // `op`: the operator's AdaptLaunch, halved (its HalveTile) while it does not lower,
  // leaves too few tiles or spreads them unevenly over the SMs; its detail is what to
  // append to the record's.
  // None when no fitted tile lowers.
  std::optional<Resolution> Transfer(const tuning::TuningRecord& record, const Trial& tuned,
                                     const TileOpDefinition& definition,
                                     const std::shared_ptr<const DeviceCodegen>& codegen,
                                     const TileOp& op, const TileOp& resolved,
                                     const Target& target) const;
  // `fitted` (Transfer's answer), or the same transfer with the record's path and thread
  // layout left to the lowering when its path cannot keep the record's vector width on
  // `op` while `op`'s alignments allow it. `variant` is the record's description that
  // details start with.
  Resolution Repathed(const tuning::TuningRecord& record, const Trial& tuned,
                      const TileOpDefinition& definition,
                      const std::shared_ptr<const DeviceCodegen>& codegen, const TileOp& op,
                      const TileOp& resolved, const Target& target, const std::string& variant,
                      Resolution fitted) const;
  // `fitted` at half its threads (256 or more, and the same tiles) where its resident CTAs
  // move too few bytes per SM to keep the memory busy and half the threads double them.
  Resolution FittedThreads(const tuning::TuningRecord& record, const TileOpDefinition& definition,
                           const TileOp& op, const Target& target, Resolution fitted) const;
  // The operator's heuristic, or (with `safe_fallback`) the smallest safe launch when the
  // op's own hints do not fit it.
  absl::StatusOr<Resolution> Heuristic(const TileOpDefinition& definition,
                                       const std::shared_ptr<const DeviceCodegen>& codegen,
                                       const TileOp& op, const Target& target,
                                       bool safe_fallback = true) const;

  // A nearby record's variant fitted to the problem, with the record's distance and rank
  // (0: nearest) and the cost model's prediction of its time.
  struct Candidate {
    Resolution resolution;
    double distance = 0;
    size_t rank = 0;
    std::optional<double> predicted_us;
  };
  // The cost model of `device`'s GPU; null when none, or the device's SM count is unknown.
  const GpuCostModel* ModelFor(const tuning::DeviceIdentity& device) const;
  // ModelFor where selection is by the model (Options::select_by_model); else null.
  const GpuCostModel* SelectingModelFor(const tuning::DeviceIdentity& device) const;
  // The variants of the first `count` records of `near` that lower for `op` (two never
  // the same kernel), nearest first, each predicted by `model` where it is not null.
  std::vector<Candidate> NearCandidates(const std::vector<std::pair<double, size_t>>& near,
                                        size_t count, const GpuCostModel* model,
                                        const TileOpDefinition& definition,
                                        const std::shared_ptr<const DeviceCodegen>& codegen,
                                        const TileOp& op, const tuning::Problem& problem,
                                        const Target& target, int sm_count) const;
  // The kernels of the operator's search space for `op` (SearchTrials, `op`'s own hints
  // kept) that lower and are not in `kernels` yet, each predicted by `model` alone (no
  // record measured them); their keys join `kernels`.
  std::vector<Candidate> SpaceCandidates(const GpuCostModel& model,
                                         const TileOpDefinition& definition,
                                         const std::shared_ptr<const DeviceCodegen>& codegen,
                                         const TileOp& op, const Target& target, int sm_count,
                                         std::set<std::string>& kernels) const;
  // `candidate`'s (a variant of `record` fitted to this problem) time on a GPU of
  // `sm_count` SMs as `model` predicts it (Options::cost_models); none when the record
  // holds no measured time or its own launch does not lower for its own problem.
  std::optional<double> Predicted(const GpuCostModel& model, const tuning::TuningRecord& record,
                                  const TileOpDefinition& definition, const Resolution& candidate,
                                  const Target& target, int sm_count) const;

  // The records `op` may transfer from (same architecture and operator, same element
  // size unless the operator TransfersAcrossElementSizes), nearest first, with their
  // distances.
  std::vector<std::pair<double, size_t>> Ranked(const TileOpDefinition& definition,
                                                const tuning::Problem& problem,
                                                const tuning::DeviceIdentity& device) const;

  // The device identity, with the compute capability of the newest older architecture
  // whose records may stand in for this device's (step 3 above); none when no record of
  // `definition` is of such an architecture.
  std::optional<tuning::DeviceIdentity> OlderStandIn(const TileOpDefinition& definition,
                                                     const tuning::DeviceIdentity& device) const;

  DeviceCodegenRegistry* registry_;
  const TileOpRegistry* ops_;
  std::vector<tuning::TuningRecord> records_;
  // The origin of each of records_.
  std::vector<std::string> origins_;
  // RecordKey -> index into records_.
  absl::flat_hash_map<std::string, size_t> by_key_;
  // Records a higher database's record of the same key shadows, and their origins: they
  // answer only where every record above them is stale (Exact).
  std::vector<tuning::TuningRecord> shadowed_records_;
  std::vector<std::string> shadowed_origins_;
  // RecordKey -> indices into shadowed_records_, highest database first.
  absl::flat_hash_map<std::string, std::vector<size_t>> shadowed_by_key_;
  size_t shadowed_ = 0;
  std::vector<GpuCostModel> cost_models_;
  bool select_by_model_ = false;
  double model_margin_ = 0;
};

}  // namespace tiletune

#endif  // COMPILER_BACKEND_TUNED_RESOLVER_H_

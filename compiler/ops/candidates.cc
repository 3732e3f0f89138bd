#include "compiler/ops/candidates.h"

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/cuda/kernel_digest.h"
#include "compiler/base/abbreviate.h"
#include "compiler/base/status_macros.h"

namespace tiletune {

std::vector<Trial> SearchTrials(const TileOpDefinition& definition, const TileOp& op,
                                const Target& target) {
  const SearchSpace space = definition.Search(op, target);
  std::vector<Trial> trials = space.first;
  const Trial heuristic = definition.Heuristic(op, target);
  for (const LaunchParams& launch : space.launches) trials.push_back({heuristic.hints, launch});
  trials.push_back(heuristic);
  return trials;
}

absl::StatusOr<CandidateSet> BuildCandidates(const TileOpDefinition& definition, const TileOp& op,
                                             const Target& target,
                                             absl::Span<const Trial> trials) {
  CandidateSet set;
  absl::flat_hash_map<std::string, size_t> by_source;
  std::set<std::string> reasons;
  std::unique_ptr<TileOp> candidate_op = op.Clone();
  for (const Trial& trial : trials) {
    ++set.enumerated;
    candidate_op->hints = trial.hints;
    absl::StatusOr<std::shared_ptr<const LoweredTileKernel>> lowered =
        definition.Lower(*candidate_op, target, trial.launch);
    if (!lowered.ok()) {
      ++set.pruned;
      // One example per kind of reason: the first words say which check failed.
      std::string reason(lowered.status().message().substr(0, 40));
      if (reasons.insert(reason).second && set.pruned_examples.size() < 20) {
        set.pruned_examples.push_back(std::string(lowered.status().message()));
      }
      continue;
    }
    CudaSource source = definition.Emit(**lowered);
    // Candidates whose code is the same are one kernel (KernelDigest ignores comments).
    std::string sha = KernelDigest(source.text);
    auto [it, inserted] = by_source.emplace(sha, set.candidates.size());
    if (!inserted) {
      ++set.duplicates;
      ++set.candidates[it->second].duplicates;
      continue;
    }
    Candidate c;
    c.hints = trial.hints;
    c.variant = VariantOf(trial.hints, **lowered, sha);
    c.lowered = *std::move(lowered);
    c.source = std::move(source);
    c.source_sha256 = std::move(sha);
    set.candidates.push_back(std::move(c));
  }
  if (set.candidates.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no variant lowers for this ", definition.name(), " on ", target.ArchName(), "; e.g. ",
        set.pruned_examples.empty() ? "no trials were given" : set.pruned_examples[0]));
  }
  return set;
}

tuning::Variant VariantOf(const Hints& hints, const LoweredTileKernel& lowered,
                          const std::string& source_sha256) {
  tuning::Variant variant;
  tuning::Hints* h = variant.mutable_hints();
  if (hints.coalesced_width) h->set_coalesced_width(*hints.coalesced_width);
  h->set_disable_tma(hints.disable_tma);
  if (hints.eviction_policy) h->set_eviction_policy(EvictionPolicyName(*hints.eviction_policy));
  if (hints.prefer_instruction) {
    h->set_prefer_instruction(InstructionName(*hints.prefer_instruction));
  }
  if (hints.loop_layout) h->set_loop_layout(LoopLayoutName(*hints.loop_layout));
  for (const auto& [key, value] : hints.annotations) (*h->mutable_annotations())[key] = value;
  tuning::Lowering* l = variant.mutable_lowering();
  l->set_path(lowered.path_name);
  l->set_form(lowered.form_name);
  for (int64_t t : lowered.launch.tile) l->add_tile(t);
  l->set_threads(lowered.launch.threads);
  l->set_stages(lowered.launch.stages);
  l->set_vector_bytes(lowered.vector_bytes);
  l->set_through_shared(lowered.launch.through_shared);
  l->set_ctas_per_sm(lowered.launch.ctas_per_sm);
  variant.set_source_sha256(source_sha256);
  return variant;
}

absl::StatusOr<Trial> TrialOf(const tuning::Variant& variant) {
  const tuning::Hints& h = variant.hints();
  Trial trial;
  Hints& out = trial.hints;
  if (h.coalesced_width() != 0) out.coalesced_width = h.coalesced_width();
  out.disable_tma = h.disable_tma();
  if (!h.eviction_policy().empty()) {
    TT_ASSIGN_OR_RETURN(out.eviction_policy, ParseEvictionPolicy(h.eviction_policy()));
  }
  if (!h.prefer_instruction().empty()) {
    TT_ASSIGN_OR_RETURN(out.prefer_instruction, ParseInstruction(h.prefer_instruction()));
  }
  if (!h.loop_layout().empty()) {
    TT_ASSIGN_OR_RETURN(out.loop_layout, ParseLoopLayout(h.loop_layout()));
  }
  for (const auto& [key, value] : h.annotations()) out.annotations[key] = value;
  const tuning::Lowering& l = variant.lowering();
  LaunchParams& launch = trial.launch;
  launch.tile.assign(l.tile().begin(), l.tile().end());
  launch.threads = l.threads();
  launch.stages = l.stages() > 0 ? l.stages() : 1;
  launch.through_shared = l.through_shared();
  launch.ctas_per_sm = l.ctas_per_sm();
  if (launch.tile.empty() || launch.threads <= 0) {
    return absl::InvalidArgumentError("stored variant has no tile or thread count");
  }
  return trial;
}

absl::StatusOr<std::shared_ptr<const LoweredTileKernel>> LowerVariant(
    const TileOpDefinition& definition, const TileOp& op, const tuning::Variant& variant,
    const Target& target, absl::string_view what) {
  absl::StatusOr<Trial> trial = TrialOf(variant);
  if (!trial.ok()) return absl::InvalidArgumentError(absl::StrCat(what, ": ", trial.status().message()));
  std::unique_ptr<TileOp> tuned = op.Clone();
  tuned->hints = trial->hints;
  absl::StatusOr<std::shared_ptr<const LoweredTileKernel>> lowered =
      definition.Lower(*tuned, target, trial->launch);
  if (!lowered.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " does not lower for its problem on ", target.ArchName(), ": ",
                     Abbreviate(lowered.status().message(), 300)));
  }
  const tuning::Lowering& stored = variant.lowering();
  if (!stored.path().empty() &&
      (stored.path() != (*lowered)->path_name || stored.form() != (*lowered)->form_name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, "'s lowering is ", stored.path(), stored.form().empty() ? "" : "/", stored.form(),
        " but its hints and launch lower to ", (*lowered)->path_name,
        (*lowered)->form_name.empty() ? "" : "/", (*lowered)->form_name, " for its problem on ",
        target.ArchName()));
  }
  return lowered;
}

}  // namespace tiletune

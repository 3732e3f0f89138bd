// Turning trials into distinct kernels: every (hints, launch) pair lowered and emitted by
// its operator's definition, the pairs that cannot lower pruned (with one example per
// kind of reason), and pairs that emit the same source kept once.
//
//   SearchSpace space = definition.Search(op, target);
//   TT_ASSIGN_OR_RETURN(CandidateSet set, BuildCandidates(definition, op, target, space.first));
//   for (const Candidate& c : set.candidates) compile(c.source);
#ifndef COMPILER_OPS_CANDIDATES_H_
#define COMPILER_OPS_CANDIDATES_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/cuda/artifacts.h"
#include "compiler/ir/hints.h"
#include "compiler/ir/tile_op.h"
#include "compiler/lower/lowered_kernel.h"
#include "compiler/ops/tile_op_definition.h"
#include "compiler/target/target.h"
#include "compiler/tuning_db/tuning_db.pb.h"

namespace tiletune {

struct Candidate {
  // The first trial that produced this source.
  Hints hints;
  std::shared_ptr<const LoweredTileKernel> lowered;
  CudaSource source;
  std::string source_sha256;
  tuning::Variant variant;
  // How many other trials produced the same source.
  int duplicates = 0;
};

struct CandidateSet {
  std::vector<Candidate> candidates;
  // Trials given, rejected by the lowering, and folded into an identical kernel.
  int enumerated = 0;
  int pruned = 0;
  int duplicates = 0;
  // One example rejection per distinct reason, for reports (at most 20).
  std::vector<std::string> pruned_examples;
};

// The trials a cost model ranks for `op` on `target`: the search space's first phase, each
// of its launches with the heuristic's hints, and the heuristic.
std::vector<Trial> SearchTrials(const TileOpDefinition& definition, const TileOp& op,
                                const Target& target);

// Every trial applied to `op` (its hints replaced by the trial's), lowered for `target`,
// emitted, and deduplicated by source. InvalidArgument with an example rejection when no
// trial lowers.
absl::StatusOr<CandidateSet> BuildCandidates(const TileOpDefinition& definition, const TileOp& op,
                                             const Target& target,
                                             absl::Span<const Trial> trials);

// The database's record of a variant: the hints as given and the lowering's choices.
tuning::Variant VariantOf(const Hints& hints, const LoweredTileKernel& lowered,
                          const std::string& source_sha256);

// The hints and launch a stored variant describes; InvalidArgument for unreadable values.
absl::StatusOr<Trial> TrialOf(const tuning::Variant& variant);

// The kernel a stored variant names, lowered again for `op` (its hints replaced by the
// variant's) on `target`. InvalidArgument, its message starting with `what` ("winner"),
// when the variant does not read or lower, or lowers to another path or form than it
// records: a kernel nobody timed.
absl::StatusOr<std::shared_ptr<const LoweredTileKernel>> LowerVariant(
    const TileOpDefinition& definition, const TileOp& op, const tuning::Variant& variant,
    const Target& target, absl::string_view what);

}  // namespace tiletune

#endif  // COMPILER_OPS_CANDIDATES_H_

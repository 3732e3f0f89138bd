// The search space for one copy problem on one target: every combination of the six
// hints with the launch parameters of each path family, pruned by the lowering's own
// constraint checks, with variants whose generated source is identical kept once.
//
//   TT_ASSIGN_OR_RETURN(CopySearchSpace space, BuildCopySearchSpace(op, target));
//   for (const CopyCandidate& c : space.candidates) compile(c.source);
#ifndef AUTOTUNE_COPY_SEARCH_SPACE_H_
#define AUTOTUNE_COPY_SEARCH_SPACE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "autotune/tuning_db.pb.h"
#include "compiler/cuda/compilation_provider.h"
#include "compiler/ir/copy_op.h"
#include "compiler/lower/lowered_kernel.h"
#include "compiler/target/target.h"

namespace tiletune {
namespace autotune {

struct CopyCandidate {
  // The first (hints, launch) pair that produced this source.
  CopyHints hints;
  LoweredCopy lowered;
  CudaSource source;
  std::string source_sha256;
  Variant variant;
  // How many enumerated combinations produced the same source.
  int duplicates = 0;
};

struct CopySearchSpace {
  std::vector<CopyCandidate> candidates;
  // Combinations enumerated, rejected by the lowering, and folded into an identical kernel.
  int enumerated = 0;
  int pruned = 0;
  int duplicates = 0;
  // One example rejection per distinct reason prefix, for reports.
  std::vector<std::string> pruned_examples;
};

// Launch parameters tried for a problem of `extents` (unit dimensions dropped) and
// element size: per path family, tiles of 0.5 to 32 KiB, thread counts, pipeline depths
// and persistent-grid occupancies that fit `target`.
std::vector<LaunchParams> CopyLaunchCandidates(const std::vector<int64_t>& extents,
                                               int element_bytes, const Target& target);

// Every value of every hint: coalesced_width (unset, 1..16), disable_tma, eviction_policy
// (unset and the three), prefer_instruction (unset and the three), loop_layout (unset and
// 32 threads per row).
std::vector<CopyHints> AllCopyHints();

// One representative launch per path family (direct SIMT, SIMT through shared memory,
// cp.async, TMA, bulk): the first search phase varies the hints over these.
std::vector<LaunchParams> RepresentativeCopyLaunches(const std::vector<int64_t>& extents,
                                                     int element_bytes, const Target& target);

// Every (hints, launch) combination given, lowered, pruned and deduplicated.
absl::StatusOr<CopySearchSpace> BuildCopySearchSpace(const CopyOp& op, const Target& target,
                                                     const std::vector<CopyHints>& hints,
                                                     const std::vector<LaunchParams>& launches);

// The full space: AllCopyHints() x CopyLaunchCandidates().
absl::StatusOr<CopySearchSpace> BuildCopySearchSpace(const CopyOp& op, const Target& target);

}  // namespace autotune
}  // namespace tiletune

#endif  // AUTOTUNE_COPY_SEARCH_SPACE_H_

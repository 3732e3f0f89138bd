// The lowering decisions every tile operator makes the same way, written once: the path
// chain with its fallback policy, the L2 policy, the widest legal vector and the
// coalesced_width hint, the SIMT thread layout, and the shared-memory budget.
//
//   std::vector<PathOption> chain = {
//       {Instruction::kTma, "tma", [&] { return CheckTma(); }},
//       {Instruction::kSync, "sync_simt", [&] { return CheckSimt(); }}};
//   TT_ASSIGN_OR_RETURN(size_t chosen, ChoosePath(chain, hints, "copy", target, log));
#ifndef COMPILER_LOWER_LOWERING_RULES_H_
#define COMPILER_LOWER_LOWERING_RULES_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/ir/hints.h"
#include "compiler/lower/lowered_kernel.h"
#include "compiler/target/target.h"

namespace tiletune {

inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline int64_t RoundUp(int64_t a, int64_t b) { return CeilDiv(a, b) * b; }

// Shared bytes kept back from the per-block limit for static barriers.
inline constexpr int64_t kReservedShared = 1024;
// Blocks an SM holds at once at most (sm_50 and later).
inline constexpr int64_t kMaxResidentCtasPerSm = 32;
// Registers an SM has (sm_70 to sm_121), given to warps in units of kRegisterUnit.
inline constexpr int64_t kRegistersPerSm = 65536;
inline constexpr int64_t kRegisterUnit = 256;

// Threads a warp has, and bytes a global-memory sector has.
inline constexpr int kWarpLanes = 32;
inline constexpr int64_t kSectorBytes = 32;

// The mean number of sectors one warp load instruction touches: `loads[i][lane]` is the
// byte offset (from a 32-byte aligned base) that `lane` loads in instruction i, or none
// where the lane makes no load. Instructions no lane makes are not counted; none when no
// lane loads at all. The lowerings of kernels that gather element by element walk their
// first warp's addresses with the kernel's own index arithmetic and keep this
// (LoweredTileKernel::warp_load_sectors).
std::optional<double> MeanWarpLoadSectors(
    const std::vector<std::vector<std::optional<int64_t>>>& loads);

// CTAs of `threads` threads and `dynamic_shared` bytes of dynamic shared memory one SM of
// `target` holds at once: the fewest that its threads, its shared memory (with
// kReservedShared a block), the block limit and, where `registers` (a thread's, as ptxas
// reports them) is above 0, its registers allow; at least 1.
int64_t ResidentCtasPerSm(const Target& target, int threads, int64_t dynamic_shared,
                          int registers = 0);

// Per-thread vector accesses above which SIMT lowering refuses a tile (registers).
inline constexpr int kMaxSimtItemsPerThread = 64;

// One lowering path of an operator.
struct PathOption {
  // The family prefer_instruction names it by.
  Instruction instruction = Instruction::kSync;
  // The operator's name for it ("tma", "simt_im2col").
  std::string name;
  // Why the path cannot be used here; empty when it can.
  std::function<std::vector<std::string>()> check;
};

// The fallback policy of DESIGN.md over `chain` (best path first; families in the order
// tma, cp_async, sync). With no prefer_instruction the first path whose check passes
// wins. With one, the chain starts at the first path of that family; if it cannot be
// honoured (its checks fail, or `op` has no path of that family) the result is
// InvalidArgument naming every failed constraint, unless `fallback=auto` lets the chain
// go on. prefer_instruction=tma with disable_tma is always an error. Each rejection and
// the choice go to `log`; when no path fits, the error names every path tried and why.
// Returns the index of the chosen path.
absl::StatusOr<size_t> ChoosePath(absl::Span<const PathOption> chain, const ResolvedHints& hints,
                                  const std::string& op, const Target& target,
                                  std::vector<std::string>& log);

// The L2 policy the generated code applies to `accesses` (e.g. "every load and store",
// "image loads") when `requested`: none when nothing is asked, when `target` has no cache
// hints, or for evict_normal (the default priority). The choice goes to `log`.
std::optional<EvictionPolicy> ChooseL2Policy(const std::optional<EvictionPolicy>& requested,
                                             const Target& target, const std::string& accesses,
                                             std::vector<std::string>& log);

// A value a vector width must divide, and how to name it when it limits the width
// ("inner extent", "C").
struct VectorConstraint {
  std::string name;
  int64_t value = 0;
};

// The widest vector (elements, a power of two, at most 16 bytes) that divides every
// constraint; 1 when `contiguous` is false. `limit` names the constraint that stopped a
// wider one ("" when none did).
int WidestVector(int element_bytes, bool contiguous, const std::string& not_contiguous,
                 absl::Span<const VectorConstraint> constraints, std::string* limit);

// The vector width to use: the coalesced_width hint when it divides `legal`, else
// InvalidArgument naming the hint, `legal`, what limited it and what to use; `legal` with
// no hint. `what` says along what ("" or " along C"). The choice goes to `log`.
absl::StatusOr<int> ChooseVectorWidth(const ResolvedHints& hints, int legal, int element_bytes,
                                      const std::string& limit, const std::string& what,
                                      std::vector<std::string>& log);

// The SIMT thread layout over a tile of `vectors_per_row` vectors per row: the loop_layout
// hint when it arranges exactly `threads` threads (InvalidArgument otherwise), else as
// many consecutive threads along a row as it has vectors (a power of two dividing
// `threads`), the rest over rows.
absl::StatusOr<LoopLayout> ChooseLoopLayout(const ResolvedHints& hints, int threads,
                                            int64_t vectors_per_row);

// Appends to `why` what stops `bytes` of shared memory per CTA on `target`: the
// per-block limit (less kReservedShared), and with `ctas_per_sm` > 0 the SM's capacity.
void CheckSharedFit(int64_t bytes, int ctas_per_sm, const Target& target,
                    std::vector<std::string>& why);

}  // namespace tiletune

#endif  // COMPILER_LOWER_LOWERING_RULES_H_

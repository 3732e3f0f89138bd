// Lowering of a global->global `copy` into one CUDA kernel: instruction selection under
// the op's hints, with a declared fallback policy and a decision log.
//
//   LaunchParams launch;
//   launch.tile = {128, 128};
//   launch.stages = 3;
//   TT_ASSIGN_OR_RETURN(LoweredCopy lowered, LowerCopy(op, target, launch));
//   std::cout << DescribePlan(lowered);
//
// Path choice. With no prefer_instruction the chain is tma (bulk_1d for a 1-D tile) ->
// cp_async -> sync_simt, skipping TMA under disable_tma; the first path whose constraints
// hold wins and the log records why each earlier one was rejected. With
// prefer_instruction the chain starts at that path; if it cannot be honoured the result
// is InvalidArgument naming every failed constraint, unless the `fallback=auto`
// annotation allows continuing down the chain. prefer_instruction=tma together with
// disable_tma is always an error. Launch parameters that no path can use (a tile too
// large for shared memory, too many accesses per thread) are errors too, so the autotuner
// can prune with this function alone.
#ifndef COMPILER_LOWER_COPY_LOWERING_H_
#define COMPILER_LOWER_COPY_LOWERING_H_

#include "absl/status/statusor.h"
#include "compiler/ir/copy_op.h"
#include "compiler/lower/lowered_kernel.h"
#include "compiler/target/target.h"

namespace tiletune {

absl::StatusOr<LoweredCopy> LowerCopy(const CopyOp& op, const Target& target,
                                      const LaunchParams& launch);

// Per-thread vector accesses above which SIMT lowering refuses a tile (registers).
inline constexpr int kMaxSimtItemsPerThread = 64;
// Per-thread cp.async transfers per stage above which lowering refuses a tile (code size).
inline constexpr int kMaxCpAsyncItemsPerThread = 128;
inline constexpr int kMaxStages = kMaxLaunchStages;

}  // namespace tiletune

#endif  // COMPILER_LOWER_COPY_LOWERING_H_

// Lowering, emission and search of batch_copy (batch_copy_op.h). One path, "sync_simt":
// the work is count x chunks units (an item split into chunks of the launch's tile); CTAs
// walk the units grid-stride (a persistent grid with ctas_per_sm, else one CTA per unit of
// the op's count), read each unit's entry of the item table, and copy the chunk with
// vector loads and stores: the blocks form at the widest vector the item's bytes allow
// (the launch checks the pools' alignment); the regions form at 16 B between a head and a
// tail of single bytes wherever source and destination agree modulo 16, elementwise
// where they do not.
//
// Kernel parameters: the source pool, the destination pool, the item table, the count.
#ifndef COMPILER_OPS_BATCH_COPY_BATCH_COPY_LOWERING_H_
#define COMPILER_OPS_BATCH_COPY_BATCH_COPY_LOWERING_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/cuda/artifacts.h"
#include "compiler/ir/hints.h"
#include "compiler/lower/lowered_kernel.h"
#include "compiler/ops/batch_copy/batch_copy_op.h"
#include "compiler/ops/tile_op_definition.h"
#include "compiler/target/target.h"

namespace tiletune {

struct LoweredBatchCopy : LoweredTileKernel {
  BatchForm form = BatchForm::kBlocks;
  int64_t item_elems = 1;
  // Elements per chunk (the launch's tile), and chunks per item (of the largest item).
  int64_t tile_elems = 1;
  int64_t chunks = 1;
  int64_t src_elems = 0;
  int64_t dst_elems = 0;
  // evict_first: loads and stores stream (L2 evict-first policy).
  std::optional<EvictionPolicy> policy;
};

// The launch's tile is {elements per chunk}, at most the item; threads, stages 1, any
// ctas_per_sm. InvalidArgument names what fails.
absl::StatusOr<LoweredBatchCopy> LowerBatchCopy(const BatchCopyOp& op, const Target& target,
                                                const LaunchParams& launch);

CudaSource EmitBatchCopyKernel(const LoweredBatchCopy& lowered);
std::string DescribeBatchCopyPlan(const LoweredBatchCopy& lowered);

// First phase: no hint and evict_first at a 16 KiB chunk, 256 threads, 4 CTAs per SM;
// second: chunks of 4 to 64 KiB (and the whole item), 128 to 512 threads, 1 to 8 CTAs per
// SM or one CTA per unit.
SearchSpace BatchCopySearchSpace(const BatchCopyOp& op, const Target& target);
Trial BatchCopyHeuristic(const BatchCopyOp& op, const Target& target);

}  // namespace tiletune

#endif  // COMPILER_OPS_BATCH_COPY_BATCH_COPY_LOWERING_H_

// The `batch_copy` tile operator: many independent items copied in one launch, listed at
// run time in a device-side item table (the operand whose count only the launch knows).
//
// Two forms:
//   blocks   every item is `item` contiguous elements; the table holds int64 pairs
//            (source item index, destination item index) into a source pool of
//            `src_items` items and a destination pool of `dst_items` items: paged
//            KV-cache block copies (vLLM's block_mapping [N, 2] int64 is such a table).
//   regions  the table holds int64 triples (source element offset, destination element
//            offset, elements): items of any size up to `item` elements (larger ones are
//            copied too, with less balance), at any element offsets into the source pool of
//            src_items * item elements and the destination pool of dst_items * item.
//
// An entry that would read or write outside its pool is skipped (nothing of it is
// written); destinations must not overlap (where they do, which item lands is unspecified).
// `count` is the number of items a tuning measures; a launch passes its own count (one
// kernel serves every count), and ops whose counts share a power of two share a kernel.
//
//   BatchCopyOp op;
//   op.dtype = DataType::kF16;
//   op.item = 16 * 8 * 128;  // a KV block: 16 tokens x 8 heads x 128
//   op.count = 1000;
//   op.src_items = op.dst_items = 4096;
//   TT_RETURN_IF_ERROR(ValidateBatchCopyOp(op));
//
// Hints: eviction_policy evict_first streams the loads and stores past L1 and L2 (each
// byte is touched once); prefer_instruction sync or unset (it has one path).
#ifndef COMPILER_OPS_BATCH_COPY_BATCH_COPY_OP_H_
#define COMPILER_OPS_BATCH_COPY_BATCH_COPY_OP_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/ir/data_type.h"
#include "compiler/ir/hints.h"
#include "compiler/ir/tile_op.h"

namespace tiletune {

enum class BatchForm { kBlocks, kRegions };
std::string BatchFormName(BatchForm form);  // "blocks", "regions"

// Bytes of one entry of the item table: 16 (blocks) or 24 (regions).
int BatchEntryBytes(BatchForm form);

struct BatchCopyOp final : TileOp {
  // "batch_copy".
  static const std::string& Name();

  const std::string& op_name() const override { return Name(); }
  DataType dtype() const override { return element_type; }
  std::unique_ptr<TileOp> Clone() const override { return std::make_unique<BatchCopyOp>(*this); }

  DataType element_type = DataType::kF16;
  BatchForm form = BatchForm::kBlocks;
  // Items of a launch (tuning measures this many; a launch may pass any count).
  int64_t count = 1;
  // Elements of an item (regions: of the largest item).
  int64_t item = 1;
  // Items the source and destination pools hold.
  int64_t src_items = 1;
  int64_t dst_items = 1;
};

// What batch_copy accepts beyond the common hints: nothing of its own.
HintScope BatchCopyHintScope();

// Positive count, item and pools, pools of at most 2^40 elements, count <= dst_items (so
// that a table of distinct destinations exists) and <= 2^22 (a launch may pass more), and hints that resolve. InvalidArgument
// names the bad value and what is accepted.
absl::Status ValidateBatchCopyOp(const BatchCopyOp& op);

// A valid item table of op.count entries, the same for the same op and seed: blocks,
// random source items and distinct random destination items; regions, random sizes of 1 to
// `item` elements at random offsets (seven of eight at 16-byte multiples of the pools when
// the slot allows, the eighth anywhere), destinations in distinct item slots.
std::vector<uint8_t> ExampleBatchTable(const BatchCopyOp& op, uint64_t seed);

// Applies `entries` of the item table `table` (host bytes) from the source pool image
// `src` to the destination pool image `dst`, skipping entries outside the pools as the
// kernels do. InvalidArgument when the images are smaller than the pools; `table` must hold
// `entries` entries.
absl::Status BatchCopyReference(const BatchCopyOp& op, const uint8_t* table, int64_t entries,
                                const uint8_t* src, size_t src_size, uint8_t* dst,
                                size_t dst_size);

}  // namespace tiletune

#endif  // COMPILER_OPS_BATCH_COPY_BATCH_COPY_OP_H_

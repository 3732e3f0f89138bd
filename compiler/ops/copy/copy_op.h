// The `copy` tile operator: a region of one buffer to a region of another.
//
// copy(src, dst, *, coalesced_width, disable_tma, eviction_policy, prefer_instruction,
//      annotations, loop_layout) copies a region to a region of equal extents (unit
// dimensions aside). The hints (compiler/ir/hints.h) steer lowering; `annotations` take
// precedence over the individual keywords; `fallback` (an annotation) says what to do
// when `prefer_instruction` cannot be honoured: "error" (the default) or "auto".
//
//   CopyOp op(Region::Whole(src), Region::Whole(dst));
//   op.hints.prefer_instruction = Instruction::kTma;
//   op.hints.annotations["eviction_policy"] = "evict_first";
//   TT_RETURN_IF_ERROR(ValidateCopyOp(op));
#ifndef COMPILER_OPS_COPY_COPY_OP_H_
#define COMPILER_OPS_COPY_COPY_OP_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/ir/buffer.h"
#include "compiler/ir/hints.h"
#include "compiler/ir/tile_op.h"

namespace tiletune {

struct CopyOp final : TileOp {
  // "copy".
  static const std::string& Name();

  CopyOp() = default;
  CopyOp(Region src_region, Region dst_region, Hints hints = {})
      : TileOp(std::move(hints)), src(std::move(src_region)), dst(std::move(dst_region)) {}

  const std::string& op_name() const override { return Name(); }
  DataType dtype() const override { return src.buffer.dtype; }
  std::unique_ptr<TileOp> Clone() const override { return std::make_unique<CopyOp>(*this); }

  Region src;
  Region dst;
};

// The annotation that picks how SIMT and cp.async kernels address a tile's vectors:
// "per_slot" or "tile_origin" (copy_lowering.h, SimtAddressing); unset, the lowering picks
// by whether the tile divides the copy. A record keeps it for its own problem only.
inline constexpr char kSimtAddressingKey[] = "simt_addressing";

// What copy accepts beyond the common hints: the simt_addressing choice (no per-operand
// policies).
HintScope CopyHintScope();

// Both regions valid, same dtype, and equal extents once unit dimensions are dropped.
absl::Status ValidateCopyOp(const CopyOp& op);

// Extents with unit dimensions dropped (at least one dimension is kept).
std::vector<int64_t> SqueezedExtents(const Region& region);

}  // namespace tiletune

#endif  // COMPILER_OPS_COPY_COPY_OP_H_

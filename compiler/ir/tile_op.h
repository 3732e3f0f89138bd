// A tile operator instance: one concrete problem of a registered operator (copy, im2col,
// ...) with its lowering hints.
//
// Each operator derives its own type (compiler/ops/<op>/<op>_op.h) holding its operands
// and geometry; code that works for every operator holds a `const TileOp&` and reaches
// the operator's behaviour through its definition in the tile-operator registry
// (compiler/ops/registry.h), found by op_name().
//
//   CopyOp op(Region::Whole(src), Region::Whole(dst));
//   op.hints.eviction_policy = EvictionPolicy::kEvictFirst;
//   const TileOp& any = op;
//   TT_ASSIGN_OR_RETURN(const TileOpDefinition* definition, ops.Find(any.op_name()));
#ifndef COMPILER_IR_TILE_OP_H_
#define COMPILER_IR_TILE_OP_H_

#include <memory>
#include <string>

#include "compiler/ir/data_type.h"
#include "compiler/ir/hints.h"

namespace tiletune {

class TileOp {
 public:
  virtual ~TileOp() = default;

  // The operator's registered name: "copy", "im2col".
  virtual const std::string& op_name() const = 0;
  // The element type it moves.
  virtual DataType dtype() const = 0;
  // A copy of the whole op, hints included.
  virtual std::unique_ptr<TileOp> Clone() const = 0;

  // The hints lowering follows.
  Hints hints;

 protected:
  TileOp() = default;
  explicit TileOp(Hints h) : hints(std::move(h)) {}
  TileOp(const TileOp&) = default;
  TileOp& operator=(const TileOp&) = default;
};

}  // namespace tiletune

#endif  // COMPILER_IR_TILE_OP_H_

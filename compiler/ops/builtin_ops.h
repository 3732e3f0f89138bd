// tiletune's own tile operators, registered explicitly.
//
//   TileOpRegistry ops;
//   TT_RETURN_IF_ERROR(RegisterBuiltinTileOps(ops));
//   // or, read-only and shared by the process:
//   const TileOpRegistry& builtin = BuiltinTileOps();
#ifndef COMPILER_OPS_BUILTIN_OPS_H_
#define COMPILER_OPS_BUILTIN_OPS_H_

#include "absl/status/status.h"
#include "compiler/ops/registry.h"

namespace tiletune {

// Registers copy and im2col.
absl::Status RegisterBuiltinTileOps(TileOpRegistry& registry);

// A registry holding the built-in operators, made on first use; thread-safe.
const TileOpRegistry& BuiltinTileOps();

}  // namespace tiletune

#endif  // COMPILER_OPS_BUILTIN_OPS_H_

#include "compiler/ops/builtin_ops.h"

#include <cstdlib>
#include <memory>

#include "compiler/base/status_macros.h"
#include "compiler/ops/batch_copy/batch_copy_definition.h"
#include "compiler/ops/col2im/col2im_definition.h"
#include "compiler/ops/copy/copy_definition.h"
#include "compiler/ops/im2col/im2col_definition.h"

namespace tiletune {

absl::Status RegisterBuiltinTileOps(TileOpRegistry& registry) {
  TT_RETURN_IF_ERROR(registry.Register(std::make_shared<CopyDefinition>()));
  TT_RETURN_IF_ERROR(registry.Register(std::make_shared<Im2colDefinition>()));
  TT_RETURN_IF_ERROR(registry.Register(std::make_shared<Col2imDefinition>()));
  TT_RETURN_IF_ERROR(registry.Register(std::make_shared<BatchCopyDefinition>()));
  return absl::OkStatus();
}

const TileOpRegistry& BuiltinTileOps() {
  static const TileOpRegistry* const registry = [] {
    auto* ops = new TileOpRegistry();
    // Registering distinct built-in names cannot fail.
    if (!RegisterBuiltinTileOps(*ops).ok()) std::abort();
    return ops;
  }();
  return *registry;
}

}  // namespace tiletune

#ifndef KERNELS_OP_KEY_H_
#define KERNELS_OP_KEY_H_

// Cache keys of the library: a compact binary string for everything about an op that can
// change its kernel. Two ops get the same key only when they lower to the same kernel.

#include <string>

#include "compiler/ir/copy_op.h"
#include "compiler/ir/im2col_op.h"

namespace tiletune {

// Each writes the key into `key`, replacing its contents; callers on the hot path reuse one
// buffer, so nothing is allocated once it has grown.
void CopyOpKey(const CopyOp& op, std::string& key);
void Im2colOpKey(const Im2colOp& op, std::string& key);

}  // namespace tiletune

#endif  // KERNELS_OP_KEY_H_

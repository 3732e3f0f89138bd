// CPU reference for `copy`: the ground truth every kernel variant is checked against.
//
// Works on host images of the two buffers (each starting at its buffer's first element)
// and follows the op's semantics directly, not any lowering: the src region's elements in
// row-major order of its non-unit dimensions go to the dst region's elements in the same
// order.
//
//   std::vector<uint8_t> src(SpanBytes(op.src.buffer)), dst(SpanBytes(op.dst.buffer));
//   TT_RETURN_IF_ERROR(CopyReference(op, src.data(), src.size(), dst.data(), dst.size()));
#ifndef COMPILER_OPS_COPY_COPY_REFERENCE_H_
#define COMPILER_OPS_COPY_COPY_REFERENCE_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "compiler/ir/buffer.h"
#include "compiler/ops/copy/copy_op.h"

namespace tiletune {

// InvalidArgument if the op is invalid or a buffer image is smaller than SpanBytes.
absl::Status CopyReference(const CopyOp& op, const uint8_t* src, size_t src_bytes, uint8_t* dst,
                           size_t dst_bytes);

}  // namespace tiletune

#endif  // COMPILER_OPS_COPY_COPY_REFERENCE_H_

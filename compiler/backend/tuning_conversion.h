// Conversions between the compiler's types and the tuning database's messages.
//
//   autotune::Problem problem = ProblemFromCopyOp(op);
//   TT_ASSIGN_OR_RETURN(CopyOp same, CopyOpFromProblem(problem));
//   autotune::Variant variant = VariantFromLowered(op.hints, lowered, source_sha256);
//   TT_RETURN_IF_ERROR(ApplyVariant(variant, &op.hints, &launch));
#ifndef COMPILER_BACKEND_TUNING_CONVERSION_H_
#define COMPILER_BACKEND_TUNING_CONVERSION_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "autotune/tuning_db.pb.h"
#include "compiler/ir/copy_op.h"
#include "compiler/ir/im2col_op.h"
#include "compiler/lower/im2col_lowering.h"
#include "compiler/lower/lowered_kernel.h"

namespace tiletune {

// op "copy", dtype, shape = the src region's extents, strides and offsets of both sides.
autotune::Problem ProblemFromCopyOp(const CopyOp& op);

// The op a copy problem describes (hints empty): buffers just large enough for the
// regions. InvalidArgument for a problem that is not a valid copy.
absl::StatusOr<CopyOp> CopyOpFromProblem(const autotune::Problem& problem);

// The variant a lowering realised: the op's hints as given and the launch's choices.
autotune::Variant VariantFromLowered(const CopyHints& hints, const LoweredCopy& lowered,
                                     const std::string& source_sha256);

// op "im2col", dtype, shape = the image's NHWC extents, its strides, and the geometry
// with block_m x block_k = the whole column matrix (M x K).
autotune::Problem ProblemFromIm2colOp(const Im2colOp& op);
absl::StatusOr<Im2colOp> Im2colOpFromProblem(const autotune::Problem& problem);
autotune::Variant VariantFromLoweredIm2col(const CopyHints& hints, const LoweredIm2col& lowered,
                                           const std::string& source_sha256);

// Sets `hints` and `launch` from a stored variant; InvalidArgument for unreadable values.
absl::Status ApplyVariant(const autotune::Variant& variant, CopyHints* hints,
                          LaunchParams* launch);

}  // namespace tiletune

#endif  // COMPILER_BACKEND_TUNING_CONVERSION_H_

// Propagation macros for absl::Status and absl::StatusOr.
//
// The system abseil (20220623) has no ABSL_RETURN_IF_ERROR / ABSL_ASSIGN_OR_RETURN; these
// are tiletune's, defined here and nowhere else.
//
//   absl::StatusOr<Cubin> Build(const CudaSource& source) {
//     TT_RETURN_IF_ERROR(Validate(source));
//     TT_ASSIGN_OR_RETURN(Ptx ptx, CompileToPtx(source));
//     return Assemble(ptx);
//   }
#ifndef COMPILER_BASE_STATUS_MACROS_H_
#define COMPILER_BASE_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define TT_STATUS_MACROS_CONCAT_INNER_(x, y) x##y
#define TT_STATUS_MACROS_CONCAT_(x, y) TT_STATUS_MACROS_CONCAT_INNER_(x, y)

// Evaluates `expr` (an absl::Status) once and returns it from the enclosing function if
// it is not OK.
#define TT_RETURN_IF_ERROR(expr)                         \
  do {                                                   \
    ::absl::Status tt_status_macro_status_ = (expr);     \
    if (!tt_status_macro_status_.ok()) {                 \
      return tt_status_macro_status_;                    \
    }                                                    \
  } while (false)

// Evaluates `rexpr` (an absl::StatusOr<T>) once; on error returns its status from the
// enclosing function, otherwise moves the value into `lhs` (a declaration or an lvalue).
#define TT_ASSIGN_OR_RETURN(lhs, rexpr)                                                   \
  TT_ASSIGN_OR_RETURN_IMPL_(TT_STATUS_MACROS_CONCAT_(tt_statusor_, __LINE__), lhs, rexpr)

#define TT_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                              \
  if (!statusor.ok()) {                                 \
    return std::move(statusor).status();                \
  }                                                     \
  lhs = std::move(statusor).value()

#endif  // COMPILER_BASE_STATUS_MACROS_H_

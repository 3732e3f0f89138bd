// Problem lists for the autotuner: the built-in default suite and "op:dtype:shape"
// specifications from the command line.
//
//   TT_ASSIGN_OR_RETURN(std::vector<CopyOp> problems, ParseProblems("copy:f16:8192,8192"));
#ifndef AUTOTUNE_SUITE_H_
#define AUTOTUNE_SUITE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/ir/copy_op.h"

namespace tiletune {
namespace autotune {

// Copies of 4 MiB to 512 MiB in several dtypes.
std::vector<CopyOp> DefaultCopySuite();

// A ';'-separated list of "copy:DTYPE:D0,D1,..." (whole row-major buffers). Each bad
// entry is InvalidArgument naming it and the accepted form.
absl::StatusOr<std::vector<CopyOp>> ParseProblems(absl::string_view specs);

// "copy f16 [8192, 8192]".
std::string DescribeProblem(const CopyOp& op);

}  // namespace autotune
}  // namespace tiletune

#endif  // AUTOTUNE_SUITE_H_

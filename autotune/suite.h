// Problem lists for the autotuner: the built-in default suite and specifications from the
// command line.
//
//   copy:DTYPE:D0,D1,...                        a copy of a whole row-major tensor
//   im2col:DTYPE:N,H,W,C:k=KH[xKW]:s=..:d=..:p=..   the whole column matrix of an image
//
//   TT_ASSIGN_OR_RETURN(std::vector<SuiteProblem> problems,
//                       ParseProblems("copy:f16:8192,8192;im2col:f16:64,56,56,64:k=3:p=1"));
#ifndef AUTOTUNE_SUITE_H_
#define AUTOTUNE_SUITE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "autotune/tuning_task.h"
#include "compiler/ir/copy_op.h"
#include "compiler/ir/im2col_op.h"
#include "compiler/target/target.h"

namespace tiletune {
namespace autotune {

// One problem of a suite: exactly one of the two is set.
struct SuiteProblem {
  std::optional<CopyOp> copy;
  std::optional<Im2colOp> im2col;
};

// Copies of 4 MiB to 512 MiB in several dtypes, and the ResNet-50-like f16 im2col layers
// (N64 C64 56x56 3x3 s1 p1; N64 C256 14x14 3x3 s1 p1; N64 C128 56x56 3x3 s2 p1;
// N32 C3 224x224 7x7 s2 p3).
std::vector<SuiteProblem> DefaultSuite();

// A ';'-separated list of specifications (see above). Each bad entry is InvalidArgument
// naming it and the accepted form.
absl::StatusOr<std::vector<SuiteProblem>> ParseProblems(absl::string_view specs);

// "copy f16 [8192, 8192]", "im2col f16 N64 C64 56x56 k3x3 s1x1 d1x1 p1x1".
std::string DescribeProblem(const SuiteProblem& problem);

// The tuner's task for the problem on `target`.
absl::StatusOr<TuningTask> MakeTask(const SuiteProblem& problem, const Target& target);

}  // namespace autotune
}  // namespace tiletune

#endif  // AUTOTUNE_SUITE_H_

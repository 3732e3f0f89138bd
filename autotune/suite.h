// Problem lists for the autotuner: the built-in default suite and specifications from the
// command line, for every registered tile operator. A spec is "<op>:<the operator's own
// syntax>" (TileOpRegistry::SpecSyntax), e.g.
//
//   copy:DTYPE:D0,D1,...                               a copy of a whole row-major tensor
//   im2col:DTYPE:N,H,W,C[:k=KH[xKW]][:s=..][:d=..][:p=..]   the whole column matrix
//
//   TT_ASSIGN_OR_RETURN(std::vector<SuiteProblem> problems,
//                       ParseProblems(BuiltinTileOps(),
//                                     "copy:f16:8192,8192;im2col:f16:64,56,56,64:k=3:p=1"));
#ifndef AUTOTUNE_SUITE_H_
#define AUTOTUNE_SUITE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/ir/tile_op.h"
#include "compiler/ops/registry.h"

namespace tiletune {
namespace autotune {

// One problem of a suite: an op of any registered operator.
using SuiteProblem = std::shared_ptr<const TileOp>;

// The default suite as specs: copies of 4 MiB to 512 MiB in several dtypes, and the
// ResNet-50-like f16 im2col layers (N64 C64 56x56 3x3 s1 p1; N64 C256 14x14 3x3 s1 p1;
// N64 C128 56x56 3x3 s2 p1; N32 C3 224x224 7x7 s2 p3).
const std::vector<std::string>& DefaultSuiteSpecs();

// A ';'-separated list of specs. Each bad entry is InvalidArgument naming it and the
// accepted forms; an empty list is InvalidArgument too.
absl::StatusOr<std::vector<SuiteProblem>> ParseProblems(const TileOpRegistry& ops,
                                                        absl::string_view specs);

// A suite file's text: one spec per line; '#' starts a comment, blank lines are skipped.
// A bad line is InvalidArgument naming `origin`, the line number and the spec's fault; a
// file with no problem is InvalidArgument too.
absl::StatusOr<std::vector<SuiteProblem>> ParseSuiteFile(const TileOpRegistry& ops,
                                                         absl::string_view text,
                                                         absl::string_view origin);

// `problems` in order with each problem once: one given again (the same problem, however its
// spec was written) is left out. `repeats` gets one entry per problem given more than
// once, its spec and how often it was given ("copy:u8:64 (3 times)").
std::vector<SuiteProblem> UniqueProblems(const TileOpRegistry& ops,
                                         std::vector<SuiteProblem> problems,
                                         std::vector<std::string>* repeats);

// The default suite, parsed: Internal when `ops` lacks an operator it uses.
absl::StatusOr<std::vector<SuiteProblem>> DefaultSuite(const TileOpRegistry& ops);

// "copy f16 [8192, 8192]", "im2col f16 N64 C64 56x56 k3x3 s1x1 d1x1 p1x1".
std::string DescribeProblem(const TileOpRegistry& ops, const TileOp& problem);

}  // namespace autotune
}  // namespace tiletune

#endif  // AUTOTUNE_SUITE_H_

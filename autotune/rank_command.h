// `autotune rank`: the cost model's ranking of a problem's candidates on a GPU, without the
// GPU: what a tuning with the model would measure first, and the estimates behind it.
//
//   autotune rank SPEC... [--target=sm_100a] [--sm_count=148] [--cost_model=FILE] [--top=10]
//
// The candidates are the operator's search space (every first-phase hint set at its
// launch, and every launch with the heuristic's hints), lowered for --target; each is
// estimated with the model on a GPU of that architecture and --sm_count multiprocessors
// (the model's device constants scale with them: waves, resident CTAs, bytes in flight per
// SM). The model is --cost_model, else the built-in one (kernels/tuned/), fitted on
// another GPU where the target is not the model's. Prints, per problem, the --top best
// estimated candidates and how many were ranked.
//
// Exit codes: 0 ranked; 2 usage error (a bad spec, target or flag); 3 the model does not
// read.
#ifndef AUTOTUNE_RANK_COMMAND_H_
#define AUTOTUNE_RANK_COMMAND_H_

#include <cstdio>
#include <string>
#include <vector>

namespace tiletune {
namespace autotune {

int RunRankCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err);

}  // namespace autotune
}  // namespace tiletune

#endif  // AUTOTUNE_RANK_COMMAND_H_

// `autotune fit`: fits the cost model (compiler/backend/cost_model/cost_model.h) to the
// kernels tunings measured, and says how well it predicts problems it was not fitted on.
//
//   autotune fit CORPUS... [-o MODEL.txtpb] [--terms=TERMS.csv]
//
// A corpus is a tuner's own output: each record holds every candidate it measured (a
// database merged with --winners_only, like the one the library embeds, holds only the
// winners and says little). Every measured kernel is lowered again from its record's
// problem, hints and launch for the record's GPU, and its terms taken (TermsOf); a kernel
// whose lowering no longer gives the path and form it was timed as is left out and
// counted. The corpus must be of one GPU model. The command prints the fitted constants
// and the leave-one-problem-out error per operator (how far off the estimates are, and
// what picking the model's first choice, or the best of its first five, would have cost
// against the fastest measured), and with -o writes the model (text format); --terms
// writes every kernel's problem, time and terms as CSV, for analysis elsewhere.
//
// Exit codes: 0 fitted; 1 the model could not be written; 2 usage error; 3 a corpus does
// not read, or holds too little to fit.
#ifndef AUTOTUNE_FIT_COMMAND_H_
#define AUTOTUNE_FIT_COMMAND_H_

#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/backend/cost_model/cost_model.h"
#include "compiler/ops/registry.h"
#include "compiler/tuning_db/tuning_db.pb.h"

namespace tiletune {
namespace autotune {

// The measured kernels of `databases` as cost samples.
struct FitCorpus {
  tuning::DeviceIdentity device;
  std::vector<CostSample> samples;
  // Per sample: the kernel's path and form ("sync_simt/span"), for analysis.
  std::vector<std::string> kernels;
  // Per sample: the measured variant as tuning::DescribeVariant gives it, for analysis.
  std::vector<std::string> variants;
  // Measured kernels left out: their lowering changed, or does not lower any more.
  int left_out = 0;
};
absl::StatusOr<FitCorpus> CorpusSamples(const std::vector<tuning::TuningDatabase>& databases,
                                        const TileOpRegistry& ops);

// The model `autotune fit -o` wrote at `path`: kernels/builtin_cost_models.h's
// CostModelFromFile (text format, at most 16 MiB, naming its GPU), without the GPU.
// InvalidArgument naming the path and the first parse error, or what is wrong with the
// model (compiler/backend/cost_model: CostModel::FromProto).
absl::StatusOr<CostModel> ReadCostModelFile(const std::string& path);

// The command, on the arguments after "fit"; returns the exit code.
int RunFitCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err);

}  // namespace autotune
}  // namespace tiletune

#endif  // AUTOTUNE_FIT_COMMAND_H_

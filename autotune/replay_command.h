// `autotune replay`: what the library would launch for each problem of a corpus, by each of
// its selections, and what that kernel measured there; no GPU.
//
//   # on the GPU, every candidate measured:
//   autotune --suite=autotune/suites/heldout.txt --cost_model=none --library_alternatives=9
//     --output=heldout.corpus.txtpb
//   autotune replay heldout.corpus.txtpb [--cost_model=FILE] [--model_margin=P] [--leave_out]
//     [-o PREFIX]
//
// A corpus is a tuning's own output, each record holding every candidate it measured. For
// each record's problem, on the record's GPU, replay asks the library (its databases: the
// built-in ones and $TILETUNE_DB, or --database alone; never the user folder) what it would
// launch:
//   nearest   the nearest record's variant fitted to the problem (the default selection);
//   model     the cost model's pick (LibraryOptions::cost_model; --cost_model names a model
//             file that answers before the built-in one; --model_margin=P keeps the nearest
//             record's variant unless the model predicts another P% faster), where a model
//             of the GPU chose;
//   choices   the kernels the library chooses among (Library::Alternatives: the nearby
//             records' variants and the heuristic's, and the nearest record's pick), the
//             fastest of them that was measured: what a perfect selection among them gets.
//             A model with trees also weighs the operator's search space, which a tuning with
//             no cost model measures in its first phase and for its leading hints' launches.
// Each kernel is found among the record's candidates by its source hash (else by its
// variant, marked ~: the corpus was measured with other code), and its time is put over the
// winner's. A kernel the tuning tried and could not time shows its status; one it did not
// try is counted as not measured, not guessed. Problems the library holds exactly exercise
// no selection: they are listed apart. So a selection rule or model is judged on measured
// times, here, before any GPU runs it.
//
// --leave_out replays each problem without its own record: the records of its key are
// taken out of the databases (held in memory) for that problem alone. A tuning's corpus
// replayed against the database its winners went into then shows each problem's transfer
// from the others: a validation set for selection that is not the held-out suites.
//
// The times are the tuning's: first-pass medians for most candidates, the re-measured
// finalists' for the fastest few; differences of a few percent are within their noise.
//
// Exit codes: 0 replayed; 1 the report could not be written; 2 usage error
// ($TILETUNE_COST_MODEL or $TILETUNE_COST_MODEL_FILE set: replay sets both selections
// itself); 3 a corpus, the database or the model does not read, or no record replays.
#ifndef AUTOTUNE_REPLAY_COMMAND_H_
#define AUTOTUNE_REPLAY_COMMAND_H_

#include <cstdio>
#include <string>
#include <vector>

namespace tiletune {
namespace autotune {

int RunReplayCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err);

}  // namespace autotune
}  // namespace tiletune

#endif  // AUTOTUNE_REPLAY_COMMAND_H_

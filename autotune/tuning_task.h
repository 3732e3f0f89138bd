// What the tuner needs to know about one problem, whatever the operator: how to build the
// candidates for a set of hints and launches, how big its input and output are, how to
// compute the expected output on the CPU, and how to load a compiled candidate.
//
//   TT_ASSIGN_OR_RETURN(TuningTask task, CopyTask(op, target));
//   TT_ASSIGN_OR_RETURN(TuningRecord record, tuner.Tune(task, &faulted, &stats));
#ifndef AUTOTUNE_TUNING_TASK_H_
#define AUTOTUNE_TUNING_TASK_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "autotune/tuning_db.pb.h"
#include "compiler/cuda/compilation_provider.h"
#include "compiler/ir/copy_op.h"
#include "compiler/ir/im2col_op.h"
#include "compiler/lower/lowered_kernel.h"
#include "compiler/target/target.h"
#include "cuda.h"
#include "kernels/runtime/runtime.h"

namespace tiletune {
namespace autotune {

// A loaded candidate: one launch from input to output.
class Launcher {
 public:
  virtual ~Launcher() = default;
  virtual absl::Status Launch(CUdeviceptr input, CUdeviceptr output, CUstream stream) = 0;
};

struct Candidate {
  // The hints that produced it (the first of any identical sources).
  CopyHints hints;
  LoweringPath path = LoweringPath::kSyncSimt;
  CudaSource source;
  std::string source_sha256;
  Variant variant;
  // Loads the compiled candidate into a context.
  std::function<absl::StatusOr<std::unique_ptr<Launcher>>(const Context&, const Cubin&)> load;
};

struct SearchStats {
  int enumerated = 0;
  int pruned = 0;
  int duplicates = 0;
  std::vector<std::string> pruned_examples;
};

struct TuningTask {
  std::string description;  // "copy f16 [8192, 8192]"
  Problem problem;
  // Bytes of the input and output buffers (whole buffers, not regions).
  size_t input_bytes = 0;
  size_t output_bytes = 0;
  // Bytes one run reads plus writes, for GB/s.
  int64_t bytes_moved = 0;
  // Writes the expected output over `output` (which holds the poison where the op
  // writes nothing).
  std::function<absl::Status(const uint8_t* input, uint8_t* output)> reference;
  // Lowers and emits every (hints, launch) pair, dropping invalid and duplicate ones.
  std::function<absl::StatusOr<std::vector<Candidate>>(const std::vector<CopyHints>&,
                                                       const std::vector<LaunchParams>&,
                                                       SearchStats*)>
      build;
  // Phase 1 varies all_hints over representative_launches; phase 2 varies
  // all_launches for the best hint sets.
  std::vector<CopyHints> all_hints;
  std::vector<LaunchParams> representative_launches;
  std::vector<LaunchParams> all_launches;
};

absl::StatusOr<TuningTask> CopyTask(const CopyOp& op, const Target& target);
absl::StatusOr<TuningTask> Im2colTask(const Im2colOp& op, const Target& target);

// Every im2col hint value: coalesced_width (unset, 1..8), disable_tma, eviction_policy
// (unset, evict_first, evict_last), prefer_instruction (unset, tma, sync), and the
// img_eviction_policy=evict_last / col_eviction_policy=evict_first annotation pair.
std::vector<CopyHints> AllIm2colHints();

}  // namespace autotune
}  // namespace tiletune

#endif  // AUTOTUNE_TUNING_TASK_H_

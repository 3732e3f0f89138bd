// One problem to tune on one target, whatever its operator: the operator's definition, the
// op, the database problem it is recorded under, its buffers and its search space.
//
//   TT_ASSIGN_OR_RETURN(TuningTask task, MakeTask(BuiltinTileOps(), *op, target));
//   TT_ASSIGN_OR_RETURN(TuningRecord record, tuner.Tune(task, &faulted, &stats));
#ifndef AUTOTUNE_TUNING_TASK_H_
#define AUTOTUNE_TUNING_TASK_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/ir/tile_op.h"
#include "compiler/ops/registry.h"
#include "compiler/ops/tile_op_definition.h"
#include "compiler/target/target.h"
#include "compiler/tuning_db/tuning_db.pb.h"

namespace tiletune {
namespace autotune {

struct TuningTask {
  // The operator's definition (owned by the registry, which outlives the task).
  const TileOpDefinition* definition = nullptr;
  std::shared_ptr<const TileOp> op;
  Target target = *Target::Parse("sm_90a");
  // "copy f16 [8192, 8192]".
  std::string description;
  tuning::Problem problem;
  OperandSizes sizes;
  SearchSpace space;
};

// The task for `op` on `target`; InvalidArgument for an op that is not valid.
absl::StatusOr<TuningTask> MakeTask(const TileOpRegistry& ops, const TileOp& op,
                                    const Target& target);

}  // namespace autotune
}  // namespace tiletune

#endif  // AUTOTUNE_TUNING_TASK_H_

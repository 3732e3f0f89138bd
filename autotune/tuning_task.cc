#include "autotune/tuning_task.h"

#include <memory>
#include <utility>

#include "compiler/base/status_macros.h"

namespace tiletune {
namespace autotune {

absl::StatusOr<TuningTask> MakeTask(const TileOpRegistry& ops, const TileOp& op,
                                    const Target& target) {
  TuningTask task;
  TT_ASSIGN_OR_RETURN(task.definition, ops.For(op));
  TT_RETURN_IF_ERROR(task.definition->Validate(op));
  task.op = op.Clone();
  task.target = target;
  task.description = task.definition->Describe(op);
  TT_ASSIGN_OR_RETURN(task.problem, task.definition->ToProblem(op));
  task.sizes = task.definition->Sizes(op);
  task.space = task.definition->Search(op, target);
  return task;
}

}  // namespace autotune
}  // namespace tiletune

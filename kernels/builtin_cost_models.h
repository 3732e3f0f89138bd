// The cost models built into this tiletune (kernels/tuned/*.model.txtpb, ShippedCostModels),
// read: the library chooses among nearby records' variants with the one of the GPU it runs
// on, and the autotuner prunes its search with it.
#ifndef KERNELS_BUILTIN_COST_MODELS_H_
#define KERNELS_BUILTIN_COST_MODELS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/backend/cost_model/cost_model.h"

namespace tiletune {

// Every built-in model, in build order, each with the GPU its corpus was measured on and
// its origin ("kernels/tuned/h200.model.txtpb (NVIDIA H200, 53 problems)"). InternalError
// naming a model that does not read (a build fault).
absl::StatusOr<std::vector<GpuCostModel>> BuiltinCostModels();

// The model a file holds (`autotune fit -o`), with the GPU its corpus was measured on;
// InvalidArgument naming the file and what is wrong with it.
absl::StatusOr<GpuCostModel> CostModelFromFile(const std::string& path);

}  // namespace tiletune

#endif  // KERNELS_BUILTIN_COST_MODELS_H_

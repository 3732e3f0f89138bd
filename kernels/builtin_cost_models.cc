#include "kernels/builtin_cost_models.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/tuning_db/tuning_db.h"
#include "compiler/tuning_db/tuning_db.pb.h"
#include "kernels/shipped_databases.h"

namespace tiletune {

absl::StatusOr<std::vector<GpuCostModel>> BuiltinCostModels() {
  std::vector<GpuCostModel> models;
  for (const ShippedDatabase& shipped : ShippedCostModels()) {
    tuning::CostModel proto;
    absl::Status parsed = tuning::ParseTextMessage(shipped.text, shipped.origin, &proto);
    absl::StatusOr<CostModel> model =
        parsed.ok() ? CostModel::FromProto(proto) : absl::StatusOr<CostModel>(parsed);
    if (!model.ok()) {
      return absl::InternalError(absl::StrCat(shipped.origin, ": ", model.status().message()));
    }
    models.push_back({*std::move(model), proto.device(),
                      absl::StrCat(shipped.origin, " (", proto.device().name(), ", ",
                                   proto.problems(), " problems)")});
  }
  return models;
}

}  // namespace tiletune

#include "kernels/builtin_cost_models.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/base/abbreviate.h"
#include "compiler/tuning_db/atomic_file.h"
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

absl::StatusOr<GpuCostModel> CostModelFromFile(const std::string& path) {
  constexpr char kHint[] = " (autotune fit -o writes a cost model)";
  const std::string shown = Printable(path);
  absl::StatusOr<std::string> text = tuning::ReadFileToString(path, 16 << 20);
  if (!text.ok()) return absl::InvalidArgumentError(absl::StrCat(text.status().message(), kHint));
  tuning::CostModel proto;
  // The parser's message starts with the path.
  if (absl::Status parsed = tuning::ParseTextMessage(*text, shown, &proto); !parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(BoundedMessage(parsed.message()), kHint));
  }
  absl::StatusOr<CostModel> model = CostModel::FromProto(proto);
  if (!model.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(shown, ": ", model.status().message(), kHint));
  }
  if (proto.device().name().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        shown, ": the model names no GPU (device.name), so no GPU would use it", kHint));
  }
  return GpuCostModel{*std::move(model), proto.device(),
                      absl::StrCat(shown, " (", Printable(proto.device().name()), ", ",
                                   proto.problems(), " problems)")};
}

}  // namespace tiletune

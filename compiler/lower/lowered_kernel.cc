#include "compiler/lower/lowered_kernel.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tiletune {

absl::Status ValidateLaunchParams(const LaunchParams& launch, const Target& target) {
  if (launch.threads < 32 || launch.threads > 1024 || launch.threads % 32 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "threads=", launch.threads, ": accepted are multiples of 32 from 32 to 1024"));
  }
  if (launch.stages < 1 || launch.stages > kMaxLaunchStages) {
    return absl::InvalidArgumentError(
        absl::StrCat("stages=", launch.stages, ": accepted are 1 to ", kMaxLaunchStages));
  }
  if (launch.ctas_per_sm < 0 || launch.ctas_per_sm > 32) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ctas_per_sm=", launch.ctas_per_sm, ": accepted are 0 (one CTA per tile) to 32"));
  }
  if (launch.ctas_per_sm * launch.threads > target.MaxThreadsPerSm()) {
    return absl::InvalidArgumentError(absl::StrCat(
        launch.ctas_per_sm, " CTAs per SM x ", launch.threads, " threads exceeds the ",
        target.MaxThreadsPerSm(), " threads an SM of ", target.ArchName(), " holds"));
  }
  if (launch.tile.empty()) {
    return absl::InvalidArgumentError("no tile given: pass one tile extent per dimension");
  }
  for (int64_t t : launch.tile) {
    if (t < 1 || t > (int64_t{1} << 24)) {
      return absl::InvalidArgumentError(
          absl::StrCat("tile extent ", t, ": accepted are 1 to 2^24"));
    }
  }
  return absl::OkStatus();
}

int64_t LoweredTileKernel::GridSize(int sm_count) const {
  if (launch.ctas_per_sm <= 0) return num_tiles;
  return std::min<int64_t>(num_tiles, static_cast<int64_t>(launch.ctas_per_sm) * sm_count);
}

int64_t LoweredTileKernel::GridSizeForItems(int sm_count, int64_t items) const {
  // At most 2^31 - 1 CTAs (the grid's x limit); an item-table kernel walks its units
  // grid-stride, so a capped grid still covers them.
  constexpr int64_t kMaxGrid = (int64_t{1} << 31) - 1;
  const int64_t per_item = std::max<int64_t>(1, units_per_item);
  const int64_t tiles =
      std::max<int64_t>(1, items > kMaxGrid / per_item ? kMaxGrid : items * per_item);
  if (launch.ctas_per_sm <= 0) return tiles;
  return std::min<int64_t>(tiles, static_cast<int64_t>(launch.ctas_per_sm) * sm_count);
}

std::string LaunchSummary(const std::string& path, const std::string& form,
                          const LaunchParams& launch) {
  return absl::StrCat(path, form.empty() ? "" : absl::StrCat("/", form), " tile ",
                      absl::StrJoin(launch.tile, "x"), ", ", launch.threads, " threads",
                      launch.stages > 1 ? absl::StrCat(", ", launch.stages, " stages") : "");
}

std::string PlanHeader(const LoweredTileKernel& l) {
  std::string out;
  absl::StrAppend(&out, "kernel      ", l.kernel_name, "\n");
  absl::StrAppend(&out, "target      ", l.target.ArchName(), "\n");
  absl::StrAppend(&out, "path        ", l.path_name,
                  l.form_name.empty() ? "" : absl::StrCat(" (", l.form_name, " form)"), "\n");
  absl::StrAppend(&out, "dtype       ", DataTypeName(l.dtype), "\n");
  return out;
}

std::string PlanFooter(const LoweredTileKernel& l, const std::string& l2_policies) {
  std::string out;
  absl::StrAppend(&out, "stages      ", l.stages, "\n");
  absl::StrAppend(&out, "shared      ", l.shared_bytes, " B dynamic\n");
  absl::StrAppend(&out, "barriers    ", l.barriers, "\n");
  absl::StrAppend(&out, "l2 policy   ", l2_policies, "\n");
  absl::StrAppend(&out, "grid        ",
                  l.launch.ctas_per_sm > 0
                      ? absl::StrCat("persistent, ", l.launch.ctas_per_sm, " CTA(s) per SM")
                      : std::string("one CTA per tile"),
                  "\n");
  absl::StrAppend(&out, "decisions:\n");
  for (const std::string& line : l.decision_log) absl::StrAppend(&out, "  - ", line, "\n");
  return out;
}

}  // namespace tiletune

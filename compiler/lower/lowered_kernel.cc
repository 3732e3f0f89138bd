#include "compiler/lower/lowered_kernel.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tiletune {

std::string LoweringPathName(LoweringPath path) {
  switch (path) {
    case LoweringPath::kTma: return "tma";
    case LoweringPath::kBulk1d: return "bulk_1d";
    case LoweringPath::kCpAsync: return "cp_async";
    case LoweringPath::kSyncSimt: return "sync_simt";
    case LoweringPath::kTmaIm2col: return "tma_im2col";
    case LoweringPath::kSimtIm2col: return "simt_im2col";
  }
  return "unknown";
}

absl::StatusOr<LoweringPath> ParseLoweringPath(absl::string_view name) {
  for (LoweringPath path : {LoweringPath::kTma, LoweringPath::kBulk1d, LoweringPath::kCpAsync,
                            LoweringPath::kSyncSimt, LoweringPath::kTmaIm2col,
                            LoweringPath::kSimtIm2col}) {
    if (name == LoweringPathName(path)) return path;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown path '", name,
      "': accepted are tma, bulk_1d, cp_async, sync_simt, tma_im2col, simt_im2col"));
}

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

int64_t CopyGridSize(const LoweredCopy& lowered, int sm_count) {
  if (lowered.launch.ctas_per_sm <= 0) return lowered.num_tiles;
  return std::min<int64_t>(lowered.num_tiles,
                           static_cast<int64_t>(lowered.launch.ctas_per_sm) * sm_count);
}

std::string DescribePlan(const LoweredCopy& l) {
  std::string out;
  absl::StrAppend(&out, "kernel      ", l.kernel_name, "\n");
  absl::StrAppend(&out, "target      ", l.target.ArchName(), "\n");
  absl::StrAppend(&out, "path        ", LoweringPathName(l.path), "\n");
  absl::StrAppend(&out, "dtype       ", DataTypeName(l.dtype), "\n");
  absl::StrAppend(&out, "extents     [", absl::StrJoin(l.extents, ", "), "]\n");
  absl::StrAppend(&out, "tile        [", absl::StrJoin(l.tile, ", "), "] (", l.tile_bytes,
                  " B), ", l.num_tiles, " tiles\n");
  absl::StrAppend(&out, "threads     ", l.launch.threads, "\n");
  if (l.path == LoweringPath::kSyncSimt || l.path == LoweringPath::kCpAsync) {
    absl::StrAppend(&out, "vector      ", l.vector_elems, " elements (",
                    l.vector_elems * l.element_bytes, " B)\n");
    absl::StrAppend(&out, "layout      ", LoopLayoutName(l.layout), ", ", l.items_per_thread,
                    " accesses per thread per tile\n");
  }
  absl::StrAppend(&out, "stages      ", l.stages, "\n");
  absl::StrAppend(&out, "shared      ", l.shared_bytes, " B dynamic\n");
  absl::StrAppend(&out, "barriers    ", l.barriers, "\n");
  absl::StrAppend(&out, "l2 policy   ",
                  l.l2_policy ? EvictionPolicyName(*l.l2_policy) : std::string("none"), "\n");
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

#include "compiler/backend/tuned_resolver.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "autotune/tuning_db.h"
#include "compiler/backend/tuning_conversion.h"
#include "compiler/base/status_macros.h"

namespace tiletune {
namespace {

// The op's explicit hints on top of the tuned ones.
CopyHints MergeHints(const CopyHints& tuned, const CopyHints& mine) {
  CopyHints merged = tuned;
  if (mine.coalesced_width) merged.coalesced_width = mine.coalesced_width;
  if (mine.disable_tma) merged.disable_tma = true;
  if (mine.eviction_policy) merged.eviction_policy = mine.eviction_policy;
  if (mine.prefer_instruction) merged.prefer_instruction = mine.prefer_instruction;
  if (mine.loop_layout) merged.loop_layout = mine.loop_layout;
  for (const auto& [key, value] : mine.annotations) merged.annotations[key] = value;
  return merged;
}

double Distance(const autotune::Problem& a, const autotune::Problem& b) {
  double distance = 0;
  for (int d = 0; d < a.shape_size(); ++d) {
    distance += std::fabs(std::log2(static_cast<double>(a.shape(d)) / b.shape(d)));
  }
  return distance;
}

}  // namespace

std::string ResolutionLevelName(ResolutionLevel level) {
  switch (level) {
    case ResolutionLevel::kExact: return "exact";
    case ResolutionLevel::kNearest: return "nearest";
    case ResolutionLevel::kHeuristic: return "heuristic";
  }
  return "unknown";
}

LaunchParams HeuristicIm2colLaunch(const Im2colOp& op, const Target& target) {
  LaunchParams launch;
  launch.tile = {128, std::min<int64_t>(64, std::max<int64_t>(1, op.geometry.K()))};
  launch.threads = 256;
  launch.stages = 1;
  return launch;
}

LaunchParams HeuristicCopyLaunch(const CopyOp& op, const Target& target) {
  int element = DataTypeBytes(op.src.buffer.dtype);
  // Tile over the non-unit dimensions: 2 KiB along the innermost, then rows up to 16 KiB.
  std::vector<int64_t> extents = SqueezedExtents(op.src);
  std::vector<int64_t> tile(extents.size(), 1);
  int r = static_cast<int>(extents.size());
  tile[r - 1] = std::min<int64_t>(extents[r - 1], 2048 / element);
  if (r >= 2) {
    int64_t rows = std::max<int64_t>(1, (16384 / element) / tile[r - 1]);
    tile[r - 2] = std::min<int64_t>(extents[r - 2], rows);
  }
  LaunchParams launch;
  launch.tile = tile;
  launch.threads = 256;
  launch.stages = 1;
  launch.through_shared = false;
  launch.ctas_per_sm = 0;
  return launch;
}

TunedResolver::TunedResolver(Options options) : registry_(options.registry) {
  for (auto& database : options.databases) {
    for (auto& record : *database.mutable_records()) records_.push_back(std::move(record));
  }
  for (size_t i = 0; i < records_.size(); ++i) {
    by_key_.emplace(autotune::RecordKey(records_[i]), i);
  }
}

absl::StatusOr<std::unique_ptr<TunedResolver>> TunedResolver::Create(Options options) {
  if (options.registry == nullptr) {
    return absl::InvalidArgumentError("TunedResolver needs a codegen registry");
  }
  return std::unique_ptr<TunedResolver>(new TunedResolver(std::move(options)));
}

namespace {

absl::StatusOr<Target> TargetOf(const autotune::DeviceIdentity& device) {
  bool arch_specific = (device.cc_major() == 9 && device.cc_minor() == 0) || device.cc_major() == 10;
  return Target::Parse(
      absl::StrCat("sm_", device.cc_major(), device.cc_minor(), arch_specific ? "a" : ""));
}

}  // namespace

template <typename Request>
absl::StatusOr<BasicResolution<Request>> TunedResolver::ResolveChain(
    const autotune::DeviceIdentity& device, Request base, const autotune::Problem& problem,
    const std::function<absl::Status(const DeviceCodegen&, const Request&)>& lowers,
    const std::function<void(Request&)>& heuristic_hints) const {
  TT_ASSIGN_OR_RETURN(std::shared_ptr<const DeviceCodegen> codegen,
                      registry_->Resolve(base.target));
  autotune::TuningRecord probe;
  *probe.mutable_device() = device;
  *probe.mutable_problem() = problem;
  std::string why;

  auto attempt = [&](const autotune::TuningRecord& record,
                     ResolutionLevel level) -> absl::StatusOr<BasicResolution<Request>> {
    BasicResolution<Request> resolution;
    resolution.level = level;
    resolution.codegen = codegen;
    resolution.request = base;
    CopyHints tuned;
    TT_RETURN_IF_ERROR(ApplyVariant(record.winner(), &tuned, &resolution.request.launch));
    resolution.request.op.hints = MergeHints(tuned, base.op.hints);
    TT_RETURN_IF_ERROR(lowers(*codegen, resolution.request));
    resolution.detail = absl::StrCat(ResolutionLevelName(level), ": record ",
                                     autotune::RecordKey(record), " -> ",
                                     autotune::DescribeVariant(record.winner()));
    return resolution;
  };

  // 1. Exact.
  auto exact = by_key_.find(autotune::RecordKey(probe));
  if (exact != by_key_.end()) {
    auto resolution = attempt(records_[exact->second], ResolutionLevel::kExact);
    if (resolution.ok()) return resolution;
    why = absl::StrCat("exact record unusable (", resolution.status().message(), "); ");
  } else {
    why = "no exact record; ";
  }

  // 2. Nearest problem on the same architecture.
  std::vector<std::pair<double, size_t>> near;
  for (size_t i = 0; i < records_.size(); ++i) {
    const autotune::TuningRecord& record = records_[i];
    if (record.device().cc_major() != device.cc_major() ||
        record.device().cc_minor() != device.cc_minor() ||
        record.problem().op() != problem.op() || record.problem().dtype() != problem.dtype() ||
        record.problem().shape_size() != problem.shape_size()) {
      continue;
    }
    near.emplace_back(Distance(record.problem(), problem), i);
  }
  std::sort(near.begin(), near.end());
  for (const auto& [distance, index] : near) {
    auto resolution = attempt(records_[index], ResolutionLevel::kNearest);
    if (resolution.ok()) {
      resolution->detail = absl::StrCat(why, resolution->detail, " (distance ", distance, ")");
      return resolution;
    }
  }
  absl::StrAppend(&why, near.empty() ? "no record for this architecture, op, dtype and rank; "
                                     : absl::StrCat(near.size(), " nearby record(s) do not lower "
                                                                 "for this problem; "));

  // 3. Heuristic: `base` carries its launch; its hints are added here.
  BasicResolution<Request> resolution;
  resolution.level = ResolutionLevel::kHeuristic;
  resolution.codegen = codegen;
  resolution.request = base;
  heuristic_hints(resolution.request);
  absl::Status lowered = lowers(*codegen, resolution.request);
  if (!lowered.ok()) {
    // The op's own hints may not fit the heuristic launch: the smallest safe tile instead.
    LaunchParams safe;
    safe.tile.assign(resolution.request.launch.tile.size(), 1);
    safe.tile.back() = std::min<int64_t>(resolution.request.launch.tile.back(), 256);
    safe.threads = 64;
    resolution.request.launch = safe;
    TT_RETURN_IF_ERROR(lowers(*codegen, resolution.request));
  }
  resolution.detail = absl::StrCat(why, "heuristic: ", codegen->name(), " with ",
                                   resolution.request.launch.threads, " threads");
  return resolution;
}

absl::StatusOr<Resolution> TunedResolver::Resolve(const autotune::DeviceIdentity& device,
                                                  const CopyOp& op) const {
  KernelRequest base;
  TT_ASSIGN_OR_RETURN(base.target, TargetOf(device));
  base.op = op;
  base.launch = HeuristicCopyLaunch(op, base.target);
  auto lowers = [](const DeviceCodegen& codegen, const KernelRequest& request) {
    return codegen.BuildWithoutCompile(request).status();
  };
  auto heuristic_hints = [&op](KernelRequest& request) {
    // The heuristic launch is a SIMT one.
    if (!op.hints.prefer_instruction.has_value() &&
        !op.hints.annotations.count("prefer_instruction")) {
      request.op.hints.prefer_instruction = Instruction::kSync;
    }
  };
  return ResolveChain<KernelRequest>(device, base, ProblemFromCopyOp(op), lowers,
                                     heuristic_hints);
}

absl::StatusOr<Im2colResolution> TunedResolver::ResolveIm2col(
    const autotune::DeviceIdentity& device, const Im2colOp& op) const {
  Im2colRequest base;
  TT_ASSIGN_OR_RETURN(base.target, TargetOf(device));
  base.op = op;
  base.launch = HeuristicIm2colLaunch(op, base.target);
  auto lowers = [](const DeviceCodegen& codegen, const Im2colRequest& request) {
    return codegen.BuildIm2colWithoutCompile(request).status();
  };
  auto heuristic_hints = [&op](Im2colRequest& request) {
    const CopyHints& mine = op.hints;
    if (!mine.prefer_instruction.has_value() && !mine.annotations.count("prefer_instruction")) {
      request.op.hints.prefer_instruction = Instruction::kSync;
    }
    if (!mine.eviction_policy.has_value() && !mine.annotations.count("img_eviction_policy") &&
        !mine.annotations.count("col_eviction_policy")) {
      request.op.hints.annotations["img_eviction_policy"] = "evict_last";
      request.op.hints.annotations["col_eviction_policy"] = "evict_first";
    }
  };
  return ResolveChain<Im2colRequest>(device, base, ProblemFromIm2colOp(op), lowers,
                                     heuristic_hints);
}

}  // namespace tiletune

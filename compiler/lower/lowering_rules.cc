#include "compiler/lower/lowering_rules.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tiletune {
namespace {

// Families in the order the chain tries them.
int FamilyRank(Instruction instruction) {
  switch (instruction) {
    case Instruction::kTma: return 0;
    case Instruction::kCpAsync: return 1;
    case Instruction::kSync: return 2;
  }
  return 2;
}

std::string FamilyNames(absl::Span<const PathOption> chain) {
  std::vector<std::string> names;
  for (const PathOption& option : chain) {
    std::string name = InstructionName(option.instruction);
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return absl::StrJoin(names, ", ");
}

}  // namespace

absl::StatusOr<size_t> ChoosePath(absl::Span<const PathOption> chain, const ResolvedHints& hints,
                                  const std::string& op, const Target& target,
                                  std::vector<std::string>& log) {
  const std::optional<Instruction>& prefer = hints.prefer_instruction;
  size_t start = 0;
  bool explicit_start = false;
  if (prefer.has_value()) {
    if (*prefer == Instruction::kTma && hints.disable_tma) {
      return absl::InvalidArgumentError(
          "prefer_instruction=tma conflicts with disable_tma=true: drop one of them");
    }
    while (start < chain.size() && FamilyRank(chain[start].instruction) < FamilyRank(*prefer)) {
      ++start;
    }
    explicit_start = start < chain.size() && chain[start].instruction == *prefer;
    if (!explicit_start) {
      const std::string name = InstructionName(*prefer);
      if (hints.fallback == FallbackMode::kError) {
        return absl::InvalidArgumentError(absl::StrCat(
            "prefer_instruction=", name, " cannot be honoured for ", op, ": it has no ", name,
            " lowering (accepted are ", FamilyNames(chain),
            "). Drop prefer_instruction, or annotate fallback=auto"));
      }
      log.push_back(absl::StrCat(name, " rejected: ", op, " has no ", name,
                                 " lowering; falling back"));
    }
  }
  // Every path tried and why it did not fit, for the error when none does.
  std::vector<std::string> tried;
  for (size_t i = start; i < chain.size(); ++i) {
    const PathOption& option = chain[i];
    const std::vector<std::string> why = option.check();
    const bool preferred = i == start && explicit_start;
    if (why.empty()) {
      log.push_back(absl::StrCat("path ", option.name, preferred ? " (preferred)" : ""));
      return i;
    }
    const std::string reasons = absl::StrJoin(why, "; ");
    if (preferred && hints.fallback == FallbackMode::kError) {
      return absl::InvalidArgumentError(absl::StrCat(
          "prefer_instruction=", InstructionName(*prefer), " cannot be honoured for this ", op,
          " on ", target.ArchName(), ": ", reasons,
          ". Fix the constraint, drop prefer_instruction, or annotate fallback=auto"));
    }
    tried.push_back(absl::StrCat(option.name, ": ", reasons));
    if (i + 1 == chain.size()) {
      return absl::InvalidArgumentError(absl::StrCat("no lowering path fits this ", op,
                                                     " and launch: ", absl::StrJoin(tried, " | ")));
    }
    log.push_back(absl::StrCat(option.name, " rejected: ", reasons, "; falling back"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("no lowering path of ", op, " is left to try after prefer_instruction=",
                   prefer.has_value() ? InstructionName(*prefer) : "none"));
}

std::optional<EvictionPolicy> ChooseL2Policy(const std::optional<EvictionPolicy>& requested,
                                             const Target& target, const std::string& accesses,
                                             std::vector<std::string>& log) {
  if (!requested.has_value()) return std::nullopt;
  if (!target.HasL2CacheHints()) {
    log.push_back(absl::StrCat("eviction policy of ", accesses, " ignored: ", target.ArchName(),
                               " has no L2 cache hints (sm_80+)"));
    return std::nullopt;
  }
  if (*requested == EvictionPolicy::kEvictNormal) {
    log.push_back(absl::StrCat("evict_normal on ", accesses,
                               " is the default L2 priority: no policy emitted"));
    return std::nullopt;
  }
  log.push_back(absl::StrCat("L2 ", EvictionPolicyName(*requested), " on ", accesses,
                             " via createpolicy"));
  return requested;
}

int WidestVector(int element_bytes, bool contiguous, const std::string& not_contiguous,
                 absl::Span<const VectorConstraint> constraints, std::string* limit) {
  limit->clear();
  if (!contiguous) {
    *limit = not_contiguous;
    return 1;
  }
  int v = std::max(1, 16 / element_bytes);
  while (v > 1) {
    const VectorConstraint* stop = nullptr;
    for (const VectorConstraint& c : constraints) {
      if (c.value % v != 0) {
        stop = &c;
        break;
      }
    }
    if (stop == nullptr) break;
    // "C=3" when the name ends in '=', else "inner extent 60".
    *limit = absl::StrCat(stop->name, stop->name.back() == '=' ? "" : " ", stop->value);
    v /= 2;
  }
  return v;
}

absl::StatusOr<int> ChooseVectorWidth(const ResolvedHints& hints, int legal, int element_bytes,
                                      const std::string& limit, const std::string& what,
                                      std::vector<std::string>& log) {
  if (!hints.coalesced_width.has_value()) {
    log.push_back(absl::StrCat("vector width ", legal, " element(s) (", legal * element_bytes,
                               " B)", what,
                               limit.empty() ? "" : absl::StrCat(", limited by ", limit)));
    return legal;
  }
  const int width = *hints.coalesced_width;
  if (legal % width != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "coalesced_width=", width, " does not divide the widest aligned vector", what, " here, ",
        legal, " element(s)", limit.empty() ? "" : absl::StrCat(" (limited by ", limit, ")"),
        "; use a divisor of ", legal));
  }
  log.push_back(absl::StrCat("vector width ", width, " element(s) (", width * element_bytes,
                             " B)", what, " (coalesced_width; ", legal, " allowed)"));
  return width;
}

absl::StatusOr<LoopLayout> ChooseLoopLayout(const ResolvedHints& hints, int threads,
                                            int64_t vectors_per_row) {
  if (hints.loop_layout.has_value()) {
    const LoopLayout& layout = *hints.loop_layout;
    if (layout.rows * layout.cols != threads) {
      return absl::InvalidArgumentError(absl::StrCat(
          "loop_layout ", LoopLayoutName(layout), " arranges ", layout.rows * layout.cols,
          " threads but the launch has ", threads, "; give ROWSxCOLS with ROWS*COLS = threads"));
    }
    return layout;
  }
  int cols = 1;
  while (cols * 2 <= threads && cols * 2 <= vectors_per_row && threads % (cols * 2) == 0) {
    cols *= 2;
  }
  return LoopLayout{threads / cols, cols};
}

std::optional<double> MeanWarpLoadSectors(
    const std::vector<std::vector<std::optional<int64_t>>>& loads) {
  double total = 0;
  int counted = 0;
  std::vector<int64_t> sectors;
  for (const std::vector<std::optional<int64_t>>& instruction : loads) {
    sectors.clear();
    for (const std::optional<int64_t>& at : instruction) {
      // Rounded down, negative offsets included.
      if (at.has_value()) sectors.push_back(*at >= 0 ? *at / kSectorBytes : -1 - (-1 - *at) / kSectorBytes);
    }
    if (sectors.empty()) continue;
    std::sort(sectors.begin(), sectors.end());
    total += static_cast<double>(std::unique(sectors.begin(), sectors.end()) - sectors.begin());
    ++counted;
  }
  return counted > 0 ? std::optional<double>(total / counted) : std::nullopt;
}

int64_t ResidentCtasPerSm(const Target& target, int threads, int64_t dynamic_shared,
                          int registers) {
  int64_t per_sm =
      std::min<int64_t>(kMaxResidentCtasPerSm, target.MaxThreadsPerSm() / std::max(threads, 1));
  if (registers > 0) {
    const int64_t per_warp = RoundUp(int64_t{registers} * kWarpLanes, kRegisterUnit);
    per_sm = std::min(per_sm, kRegistersPerSm / (per_warp * CeilDiv(threads, kWarpLanes)));
  }
  if (dynamic_shared > 0) {
    per_sm = std::min<int64_t>(per_sm,
                               target.MaxSharedBytesPerSm() / (dynamic_shared + kReservedShared));
  }
  return std::max<int64_t>(per_sm, 1);
}

void CheckSharedFit(int64_t bytes, int ctas_per_sm, const Target& target,
                    std::vector<std::string>& why) {
  const int64_t limit = target.MaxSharedBytesPerBlock() - kReservedShared;
  if (bytes > limit) {
    why.push_back(absl::StrCat(bytes, " B of shared memory (tile x stages) exceeds the ", limit,
                               " B a block may use on ", target.ArchName()));
  }
  if (ctas_per_sm > 0 && bytes * ctas_per_sm > target.MaxSharedBytesPerSm()) {
    why.push_back(absl::StrCat(ctas_per_sm, " CTAs per SM x ", bytes, " B exceeds the ",
                               target.MaxSharedBytesPerSm(), " B of shared memory per SM"));
  }
}

}  // namespace tiletune

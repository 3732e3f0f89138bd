#include "compiler/ir/hints.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "compiler/base/status_macros.h"

namespace tiletune {

std::string EvictionPolicyName(EvictionPolicy policy) {
  switch (policy) {
    case EvictionPolicy::kEvictNormal: return "evict_normal";
    case EvictionPolicy::kEvictFirst: return "evict_first";
    case EvictionPolicy::kEvictLast: return "evict_last";
  }
  return "unknown";
}

absl::StatusOr<EvictionPolicy> ParseEvictionPolicy(absl::string_view name) {
  for (EvictionPolicy p :
       {EvictionPolicy::kEvictNormal, EvictionPolicy::kEvictFirst, EvictionPolicy::kEvictLast}) {
    if (name == EvictionPolicyName(p)) return p;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown eviction_policy '", name, "': accepted are evict_normal, evict_first, evict_last"));
}

std::string InstructionName(Instruction instruction) {
  switch (instruction) {
    case Instruction::kTma: return "tma";
    case Instruction::kCpAsync: return "cp_async";
    case Instruction::kSync: return "sync";
  }
  return "unknown";
}

absl::StatusOr<Instruction> ParseInstruction(absl::string_view name) {
  for (Instruction i : {Instruction::kTma, Instruction::kCpAsync, Instruction::kSync}) {
    if (name == InstructionName(i)) return i;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown prefer_instruction '", name, "': accepted are tma, cp_async, sync"));
}

std::string FallbackModeName(FallbackMode mode) {
  return mode == FallbackMode::kAuto ? "auto" : "error";
}

absl::StatusOr<FallbackMode> ParseFallbackMode(absl::string_view name) {
  if (name == "auto") return FallbackMode::kAuto;
  if (name == "error") return FallbackMode::kError;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown fallback '", name, "': accepted are error, auto"));
}

std::string LoopLayoutName(const LoopLayout& layout) {
  return absl::StrCat(layout.rows, "x", layout.cols);
}

absl::StatusOr<LoopLayout> ParseLoopLayout(absl::string_view text) {
  std::vector<absl::string_view> parts = absl::StrSplit(text, 'x');
  LoopLayout layout;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &layout.rows) ||
      !absl::SimpleAtoi(parts[1], &layout.cols) || layout.rows <= 0 || layout.cols <= 0 ||
      layout.rows > 1024 || layout.cols > 1024 || layout.rows * layout.cols > 1024) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid loop_layout '", text,
        "': expected ROWSxCOLS thread counts, e.g. 8x32, with ROWS*COLS <= 1024"));
  }
  return layout;
}

namespace {

constexpr char kEvictionSuffix[] = "_eviction_policy";

absl::StatusOr<int> ParseCoalescedWidth(absl::string_view text) {
  int width = 0;
  if (!absl::SimpleAtoi(text, &width) || width < 1 || width > 16 || (width & (width - 1)) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid coalesced_width '", text, "': accepted are 1, 2, 4, 8, 16 (elements)"));
  }
  return width;
}

absl::StatusOr<bool> ParseBool(absl::string_view key, absl::string_view text) {
  if (text == "true" || text == "1" || text == "True") return true;
  if (text == "false" || text == "0" || text == "False") return false;
  return absl::InvalidArgumentError(
      absl::StrCat("invalid ", key, " '", text, "': accepted are true, false"));
}

std::vector<std::string> AcceptedKeys(const HintScope& scope) {
  std::vector<std::string> keys = {"coalesced_width",    "disable_tma", "eviction_policy",
                                   "prefer_instruction", "loop_layout", "fallback"};
  for (const std::string& operand : scope.eviction_operands) {
    keys.push_back(absl::StrCat(operand, kEvictionSuffix));
  }
  for (const auto& [key, values] : scope.choices) keys.push_back(key);
  return keys;
}

// Sets the field `key` names in `resolved` from `value`.
absl::Status ApplyAnnotation(const HintScope& scope, const std::string& key,
                             const std::string& value, ResolvedHints& resolved) {
  if (key == "coalesced_width") {
    TT_ASSIGN_OR_RETURN(resolved.coalesced_width, ParseCoalescedWidth(value));
  } else if (key == "disable_tma") {
    TT_ASSIGN_OR_RETURN(resolved.disable_tma, ParseBool(key, value));
  } else if (key == "eviction_policy") {
    TT_ASSIGN_OR_RETURN(resolved.eviction_policy, ParseEvictionPolicy(value));
  } else if (key == "prefer_instruction") {
    TT_ASSIGN_OR_RETURN(resolved.prefer_instruction, ParseInstruction(value));
  } else if (key == "loop_layout") {
    TT_ASSIGN_OR_RETURN(resolved.loop_layout, ParseLoopLayout(value));
  } else if (key == "fallback") {
    TT_ASSIGN_OR_RETURN(resolved.fallback, ParseFallbackMode(value));
  } else {
    for (const std::string& operand : scope.eviction_operands) {
      if (key == absl::StrCat(operand, kEvictionSuffix)) {
        TT_ASSIGN_OR_RETURN(resolved.operand_eviction[operand], ParseEvictionPolicy(value));
        return absl::OkStatus();
      }
    }
    auto choice = scope.choices.find(key);
    if (choice != scope.choices.end()) {
      const std::vector<std::string>& accepted = choice->second;
      if (std::find(accepted.begin(), accepted.end(), value) == accepted.end()) {
        return absl::InvalidArgumentError(absl::StrCat("invalid ", scope.op, " ", key, " '", value,
                                                       "': accepted are ",
                                                       absl::StrJoin(accepted, ", ")));
      }
      resolved.choices[key] = value;
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(absl::StrCat("unknown ", scope.op, " annotation '", key,
                                                   "': accepted keys are ",
                                                   absl::StrJoin(AcceptedKeys(scope), ", ")));
  }
  return absl::OkStatus();
}

void AppendInts(std::string& key, std::initializer_list<int64_t> values) {
  for (int64_t v : values) key.append(reinterpret_cast<const char*>(&v), sizeof(v));
}

}  // namespace

std::optional<EvictionPolicy> ResolvedHints::EvictionFor(const std::string& operand) const {
  auto it = operand_eviction.find(operand);
  return it != operand_eviction.end() ? std::optional<EvictionPolicy>(it->second)
                                      : eviction_policy;
}

absl::StatusOr<ResolvedHints> ResolveHints(const Hints& hints, const HintScope& scope) {
  ResolvedHints resolved;
  if (hints.coalesced_width.has_value()) {
    TT_ASSIGN_OR_RETURN(resolved.coalesced_width,
                        ParseCoalescedWidth(absl::StrCat(*hints.coalesced_width)));
  }
  resolved.disable_tma = hints.disable_tma;
  resolved.eviction_policy = hints.eviction_policy;
  resolved.prefer_instruction = hints.prefer_instruction;
  if (hints.loop_layout.has_value()) {
    TT_ASSIGN_OR_RETURN(resolved.loop_layout,
                        ParseLoopLayout(LoopLayoutName(*hints.loop_layout)));
  }
  for (const auto& [key, value] : hints.annotations) {
    TT_RETURN_IF_ERROR(ApplyAnnotation(scope, key, value, resolved));
  }
  return resolved;
}

std::string HintsToString(const ResolvedHints& hints) {
  std::vector<std::string> parts;
  if (hints.coalesced_width) parts.push_back(absl::StrCat("coalesced_width=", *hints.coalesced_width));
  if (hints.disable_tma) parts.push_back("disable_tma=true");
  if (hints.eviction_policy) {
    parts.push_back(absl::StrCat("eviction_policy=", EvictionPolicyName(*hints.eviction_policy)));
  }
  if (hints.prefer_instruction) {
    parts.push_back(
        absl::StrCat("prefer_instruction=", InstructionName(*hints.prefer_instruction)));
  }
  if (hints.loop_layout) parts.push_back(absl::StrCat("loop_layout=", LoopLayoutName(*hints.loop_layout)));
  if (hints.fallback != FallbackMode::kError) parts.push_back("fallback=auto");
  for (const auto& [operand, policy] : hints.operand_eviction) {
    if (hints.eviction_policy == policy) continue;
    parts.push_back(absl::StrCat(operand, kEvictionSuffix, "=", EvictionPolicyName(policy)));
  }
  for (const auto& [key, value] : hints.choices) parts.push_back(absl::StrCat(key, "=", value));
  return absl::StrJoin(parts, ",");
}

Hints MergeHints(const Hints& base, const Hints& mine) {
  Hints merged = base;
  if (mine.coalesced_width) merged.coalesced_width = mine.coalesced_width;
  if (mine.disable_tma) merged.disable_tma = true;
  if (mine.eviction_policy) merged.eviction_policy = mine.eviction_policy;
  if (mine.prefer_instruction) merged.prefer_instruction = mine.prefer_instruction;
  if (mine.loop_layout) merged.loop_layout = mine.loop_layout;
  for (const auto& [key, value] : mine.annotations) merged.annotations[key] = value;
  return merged;
}

void AppendHintsKey(const Hints& h, std::string& key) {
  key.push_back(h.coalesced_width ? static_cast<char>(*h.coalesced_width) : -1);
  key.push_back(h.disable_tma);
  key.push_back(h.eviction_policy ? static_cast<char>(*h.eviction_policy) : -1);
  key.push_back(h.prefer_instruction ? static_cast<char>(*h.prefer_instruction) : -1);
  key.push_back(h.loop_layout.has_value());
  if (h.loop_layout) AppendInts(key, {h.loop_layout->rows, h.loop_layout->cols});
  AppendInts(key, {static_cast<int64_t>(h.annotations.size())});
  for (const auto& [k, v] : h.annotations) {
    AppendInts(key, {static_cast<int64_t>(k.size()), static_cast<int64_t>(v.size())});
    key.append(k).append(v);
  }
}

}  // namespace tiletune

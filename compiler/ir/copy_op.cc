#include "compiler/ir/copy_op.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
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
      layout.rows * layout.cols > 1024) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid loop_layout '", text,
        "': expected ROWSxCOLS thread counts, e.g. 8x32, with ROWS*COLS <= 1024"));
  }
  return layout;
}

namespace {

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

}  // namespace

absl::StatusOr<ResolvedHints> ResolveHints(const CopyHints& hints) {
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
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown annotation '", key,
          "': accepted keys are coalesced_width, disable_tma, eviction_policy, "
          "prefer_instruction, loop_layout, fallback"));
    }
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
  return absl::StrJoin(parts, ",");
}

std::vector<int64_t> SqueezedExtents(const Region& region) {
  std::vector<int64_t> squeezed;
  for (int64_t e : region.extents) {
    if (e != 1) squeezed.push_back(e);
  }
  if (squeezed.empty()) squeezed.push_back(1);
  return squeezed;
}

absl::Status ValidateCopyOp(const CopyOp& op) {
  TT_RETURN_IF_ERROR(ValidateRegion(op.src));
  TT_RETURN_IF_ERROR(ValidateRegion(op.dst));
  if (op.src.buffer.dtype != op.dst.buffer.dtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        "copy from ", DataTypeName(op.src.buffer.dtype), " buffer ", op.src.buffer.name, " to ",
        DataTypeName(op.dst.buffer.dtype), " buffer ", op.dst.buffer.name,
        ": copy moves bits and needs one dtype on both sides"));
  }
  if (SqueezedExtents(op.src) != SqueezedExtents(op.dst)) {
    return absl::InvalidArgumentError(absl::StrCat("copy from ", RegionToString(op.src), " to ",
                                                   RegionToString(op.dst),
                                                   ": extents differ (unit dimensions aside)"));
  }
  return ResolveHints(op.hints).status();
}

}  // namespace tiletune

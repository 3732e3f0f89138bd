// The `copy` tile operator and its lowering hints.
//
// copy(src, dst, *, coalesced_width, disable_tma, eviction_policy, prefer_instruction,
//      annotations, loop_layout) copies a region to a region of equal extents (unit
// dimensions aside). Hints steer lowering; `annotations` take precedence over the
// individual keywords; `fallback` (an annotation) says what to do when
// `prefer_instruction` cannot be honoured: "error" (the default) or "auto".
//
//   CopyOp op{Region::Whole(src), Region::Whole(dst)};
//   op.hints.prefer_instruction = Instruction::kTma;
//   op.hints.annotations["eviction_policy"] = "evict_first";
//   TT_ASSIGN_OR_RETURN(ResolvedHints hints, ResolveHints(op.hints));
#ifndef COMPILER_IR_COPY_OP_H_
#define COMPILER_IR_COPY_OP_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/ir/buffer.h"

namespace tiletune {

enum class EvictionPolicy { kEvictNormal, kEvictFirst, kEvictLast };
enum class Instruction { kTma, kCpAsync, kSync };
enum class FallbackMode { kError, kAuto };

std::string EvictionPolicyName(EvictionPolicy policy);  // "evict_first", ...
absl::StatusOr<EvictionPolicy> ParseEvictionPolicy(absl::string_view name);
std::string InstructionName(Instruction instruction);  // "tma", "cp_async", "sync"
absl::StatusOr<Instruction> ParseInstruction(absl::string_view name);
std::string FallbackModeName(FallbackMode mode);  // "error", "auto"
absl::StatusOr<FallbackMode> ParseFallbackMode(absl::string_view name);

// Which thread moves which elements on the SIMT path: the CTA's threads arranged as
// `rows` x `cols` over the tile's rows and vectors-per-row. Thread t takes row t / cols and
// vector t % cols, then steps by `rows` rows and `cols` vectors. Written "8x32".
struct LoopLayout {
  int rows = 0;
  int cols = 0;
  bool operator==(const LoopLayout& other) const {
    return rows == other.rows && cols == other.cols;
  }
};
std::string LoopLayoutName(const LoopLayout& layout);
absl::StatusOr<LoopLayout> ParseLoopLayout(absl::string_view text);

struct CopyHints {
  // Elements per vector access; must divide the widest access alignment allows.
  std::optional<int> coalesced_width;
  // Never lower through TMA (tensor or bulk), even when shapes and scopes qualify.
  bool disable_tma = false;
  // L2 eviction priority of the generated loads and stores, on every path.
  std::optional<EvictionPolicy> eviction_policy;
  // Instruction family to lower to: tma, cp_async or sync.
  std::optional<Instruction> prefer_instruction;
  // Hint name -> value; wins over the keywords above. Keys: coalesced_width, disable_tma,
  // eviction_policy, prefer_instruction, loop_layout, fallback.
  std::map<std::string, std::string> annotations;
  // Thread layout for the SIMT path.
  std::optional<LoopLayout> loop_layout;
};

// Hints after applying annotations, each value parsed and range-checked.
struct ResolvedHints {
  std::optional<int> coalesced_width;
  bool disable_tma = false;
  std::optional<EvictionPolicy> eviction_policy;
  std::optional<Instruction> prefer_instruction;
  std::optional<LoopLayout> loop_layout;
  FallbackMode fallback = FallbackMode::kError;
};

// Applies annotations over keywords. InvalidArgument names an unknown annotation key or
// a bad value with what is accepted.
absl::StatusOr<ResolvedHints> ResolveHints(const CopyHints& hints);

// Canonical text of the hints, e.g. "prefer_instruction=tma,eviction_policy=evict_first";
// empty when no hint is set.
std::string HintsToString(const ResolvedHints& hints);

struct CopyOp {
  Region src;
  Region dst;
  CopyHints hints;
};

// Both regions valid, same dtype, and equal extents once unit dimensions are dropped.
absl::Status ValidateCopyOp(const CopyOp& op);

// Extents with unit dimensions dropped (at least one dimension is kept).
std::vector<int64_t> SqueezedExtents(const Region& region);

}  // namespace tiletune

#endif  // COMPILER_IR_COPY_OP_H_

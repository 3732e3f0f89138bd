// Lowering hints: what every tile operator accepts besides its operands (DESIGN.md, copy).
//
//   coalesced_width     elements per vector access
//   disable_tma         never lower through TMA
//   eviction_policy     L2 eviction priority of the generated loads and stores
//   prefer_instruction  tma, cp_async or sync
//   annotations         hint name -> value; wins over the keywords
//   loop_layout         which thread moves which elements on the SIMT path
//
// Annotations also take `fallback` (what to do when prefer_instruction cannot be
// honoured: "error", the default, or "auto"), `<operand>_eviction_policy` for each
// operand an operator names in its HintScope (im2col: img_eviction_policy,
// col_eviction_policy), which overrides eviction_policy for that operand's accesses, and
// the operator's own choices, each a key with a fixed set of values (im2col: img_prefetch=
// ahead|all, staged_gather=table|phase|row_phase), which make a decision its lowering would
// otherwise take itself.
//
//   Hints hints;
//   hints.prefer_instruction = Instruction::kTma;
//   hints.annotations["eviction_policy"] = "evict_first";
//   TT_ASSIGN_OR_RETURN(ResolvedHints resolved, ResolveHints(hints, HintScope{"copy"}));
#ifndef COMPILER_IR_HINTS_H_
#define COMPILER_IR_HINTS_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

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

struct Hints {
  // Elements per vector access; must divide the widest access alignment allows.
  std::optional<int> coalesced_width;
  // Never lower through TMA (tensor or bulk), even when shapes and scopes qualify.
  bool disable_tma = false;
  // L2 eviction priority of the generated loads and stores, on every path.
  std::optional<EvictionPolicy> eviction_policy;
  // Instruction family to lower to: tma, cp_async or sync.
  std::optional<Instruction> prefer_instruction;
  // Hint name -> value; wins over the keywords above. Keys: coalesced_width, disable_tma,
  // eviction_policy, prefer_instruction, loop_layout, fallback, and the operator's
  // <operand>_eviction_policy keys.
  std::map<std::string, std::string> annotations;
  // Thread layout for the SIMT path.
  std::optional<LoopLayout> loop_layout;
};

// What an operator accepts beyond the common hints.
struct HintScope {
  // The operator's name, for messages ("copy").
  std::string op;
  // Operands whose accesses take an L2 policy of their own through the
  // `<operand>_eviction_policy` annotation (im2col: "img", "col"); none for copy.
  std::vector<std::string> eviction_operands;
  // The operator's own choices: annotation key -> its accepted values (im2col:
  // {"img_prefetch", {"ahead", "all"}}).
  std::map<std::string, std::vector<std::string>> choices;
  // Choices that name a kernel form for one problem's geometry: a tuning record keeps them
  // for its own problem, and its variant applied to another problem drops them, leaving
  // the choice to that problem's lowering.
  std::vector<std::string> problem_bound;
};

// Hints after applying annotations, each value parsed and range-checked.
struct ResolvedHints {
  std::optional<int> coalesced_width;
  bool disable_tma = false;
  std::optional<EvictionPolicy> eviction_policy;
  std::optional<Instruction> prefer_instruction;
  std::optional<LoopLayout> loop_layout;
  FallbackMode fallback = FallbackMode::kError;
  // The `<operand>_eviction_policy` annotations given, by operand.
  std::map<std::string, EvictionPolicy> operand_eviction;
  // The operator's choices given (key -> value), each value one its HintScope accepts.
  std::map<std::string, std::string> choices;

  // The L2 priority `operand`'s accesses ask for: its own annotation, else
  // eviction_policy.
  std::optional<EvictionPolicy> EvictionFor(const std::string& operand) const;
};

// Applies annotations over keywords. InvalidArgument names an unknown annotation key
// (listing the accepted ones) or a bad value with what is accepted.
absl::StatusOr<ResolvedHints> ResolveHints(const Hints& hints, const HintScope& scope);

// Canonical text of the hints, e.g. "prefer_instruction=tma,eviction_policy=evict_first";
// an operand's policy is listed only where it differs from eviction_policy, the operator's
// choices last; empty when no hint is set.
std::string HintsToString(const ResolvedHints& hints);

// `mine` over `base`: each keyword `mine` sets, and every annotation of `mine`, wins.
Hints MergeHints(const Hints& base, const Hints& mine);

// Appends an unambiguous binary encoding of every hint to `key` (cache keys): an absent
// optional writes its own marker, strings are length-prefixed.
void AppendHintsKey(const Hints& hints, std::string& key);

}  // namespace tiletune

#endif  // COMPILER_IR_HINTS_H_

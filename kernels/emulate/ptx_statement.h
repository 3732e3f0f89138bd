// One inline PTX statement of a generated kernel, parsed for the host emulator: its
// instruction and operands, with %N naming the asm statement's operands.
//
//   TT_ASSIGN_OR_RETURN(PtxStatement s, ParsePtxStatement("ld.global.nc.v4.u32 {%0, %1, %2, %3},
//   [%4];")); s.opcode == "ld.global.nc.v4.u32"; s.operands[0].registers == {0, 1, 2, 3}
//
// The emulator knows the statements tiletune's snippets and emitters write; a statement
// it cannot parse is an error, never a silent no-op.
#ifndef KERNELS_EMULATE_PTX_STATEMENT_H_
#define KERNELS_EMULATE_PTX_STATEMENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tiletune {

struct PtxOperand {
  enum class Kind {
    kRegister,   // %N
    kVector,     // {%A, %B, ...}
    kAddress,    // [%N] or a tensor address [%N, {%A, %B, ...}]
    kImmediate,  // 16
    kSpecial,    // %tid.y, %nsmid
    kSink,       // _
  };
  Kind kind = Kind::kRegister;
  // The operand numbers: one for a register or an address's base, several for a vector.
  std::vector<int> registers;
  // A tensor address's coordinates (operand numbers), innermost first.
  std::vector<int> coordinates;
  int64_t immediate = 0;
  std::string special;
};

struct PtxStatement {
  // The instruction with its modifiers ("cp.async.cg.shared.global"); for the mbarrier wait
  // loop (try_wait and a branch back) the try_wait instruction.
  std::string opcode;
  std::vector<PtxOperand> operands;
  // True for `{ .reg .pred p; L: mbarrier.try_wait.parity ... p, [bar], parity; @!p bra L; }`:
  // a wait until the barrier's phase of that parity has completed.
  bool wait_loop = false;

  bool HasModifier(absl::string_view modifier) const;
};

// Parses an asm template (C string contents: %% still doubled, %= still present).
// InvalidArgument naming the text when it is not one instruction this parser reads.
absl::StatusOr<PtxStatement> ParsePtxStatement(absl::string_view text);

}  // namespace tiletune

#endif  // KERNELS_EMULATE_PTX_STATEMENT_H_

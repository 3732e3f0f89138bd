#include "kernels/emulate/ptx_statement.h"

#include <cctype>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "compiler/base/status_macros.h"

namespace tiletune {
namespace {

absl::Status Unreadable(absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("the host emulator cannot read PTX '", text, "': ", why));
}

// Splits at commas outside [] and {}.
std::vector<std::string> SplitOperands(absl::string_view text) {
  std::vector<std::string> parts;
  int depth = 0;
  std::string current;
  for (char c : text) {
    if (c == '[' || c == '{') ++depth;
    if (c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      parts.emplace_back(absl::StripAsciiWhitespace(current));
      current.clear();
      continue;
    }
    current.push_back(c);
  }
  if (!absl::StripAsciiWhitespace(current).empty()) {
    parts.emplace_back(absl::StripAsciiWhitespace(current));
  }
  return parts;
}

absl::StatusOr<int> RegisterNumber(absl::string_view text, absl::string_view whole) {
  text = absl::StripAsciiWhitespace(text);
  int n = 0;
  if (!absl::ConsumePrefix(&text, "%") || !absl::SimpleAtoi(text, &n) || n < 0) {
    return Unreadable(whole, absl::StrCat("'", text, "' is not an operand %N"));
  }
  return n;
}

absl::StatusOr<std::vector<int>> RegisterList(absl::string_view text, absl::string_view whole) {
  std::vector<int> registers;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    TT_ASSIGN_OR_RETURN(int n, RegisterNumber(part, whole));
    registers.push_back(n);
  }
  return registers;
}

absl::StatusOr<PtxOperand> ParseOperand(absl::string_view text, absl::string_view whole) {
  PtxOperand operand;
  if (text == "_") {
    operand.kind = PtxOperand::Kind::kSink;
  } else if (absl::ConsumePrefix(&text, "{") && absl::ConsumeSuffix(&text, "}")) {
    operand.kind = PtxOperand::Kind::kVector;
    TT_ASSIGN_OR_RETURN(operand.registers, RegisterList(text, whole));
  } else if (absl::ConsumePrefix(&text, "[") && absl::ConsumeSuffix(&text, "]")) {
    operand.kind = PtxOperand::Kind::kAddress;
    const size_t brace = text.find('{');
    const absl::string_view base = brace == absl::string_view::npos ? text : text.substr(0, brace);
    TT_ASSIGN_OR_RETURN(
        int n, RegisterNumber(absl::StripSuffix(absl::StripAsciiWhitespace(base), ","), whole));
    operand.registers = {n};
    if (brace != absl::string_view::npos) {
      absl::string_view coordinates = text.substr(brace + 1);
      if (!absl::ConsumeSuffix(&coordinates, "}")) return Unreadable(whole, "unclosed coordinates");
      TT_ASSIGN_OR_RETURN(operand.coordinates, RegisterList(coordinates, whole));
    }
  } else if (absl::StartsWith(text, "%") && text.size() > 1 &&
             !std::isdigit(static_cast<unsigned char>(text[1]))) {
    operand.kind = PtxOperand::Kind::kSpecial;
    operand.special = std::string(text.substr(1));
  } else if (absl::StartsWith(text, "%")) {
    TT_ASSIGN_OR_RETURN(int n, RegisterNumber(text, whole));
    operand.registers = {n};
  } else if (absl::SimpleAtoi(text, &operand.immediate)) {
    operand.kind = PtxOperand::Kind::kImmediate;
  } else if (double fraction = 0; absl::SimpleAtod(text, &fraction)) {
    operand.kind = PtxOperand::Kind::kImmediate;  // createpolicy's fraction: not used
  } else {
    return Unreadable(whole, absl::StrCat("operand '", text, "'"));
  }
  return operand;
}

absl::StatusOr<PtxStatement> ParseInstruction(absl::string_view instruction,
                                              absl::string_view whole) {
  instruction = absl::StripAsciiWhitespace(instruction);
  if (!absl::ConsumeSuffix(&instruction, ";")) return Unreadable(whole, "no ';'");
  PtxStatement statement;
  const size_t space = instruction.find_first_of(" \t\n");
  statement.opcode = std::string(instruction.substr(0, space));
  if (space == absl::string_view::npos) return statement;
  for (const std::string& part : SplitOperands(instruction.substr(space + 1))) {
    TT_ASSIGN_OR_RETURN(PtxOperand operand, ParseOperand(part, whole));
    statement.operands.push_back(std::move(operand));
  }
  return statement;
}

}  // namespace

bool PtxStatement::HasModifier(absl::string_view modifier) const {
  for (absl::string_view part : absl::StrSplit(opcode, '.')) {
    if (part == modifier) return true;
  }
  return false;
}

absl::StatusOr<PtxStatement> ParsePtxStatement(absl::string_view text) {
  const std::string plain = absl::StrReplaceAll(text, {{"%%", "%"}});
  if (absl::StrContains(plain, "mbarrier.try_wait")) {
    // The wait loop: the try_wait line, whose first operand is the loop's predicate.
    for (absl::string_view line : absl::StrSplit(plain, '\n')) {
      line = absl::StripAsciiWhitespace(line);
      if (!absl::StartsWith(line, "mbarrier.try_wait")) continue;
      const size_t comma = line.find(',');
      if (comma == absl::string_view::npos) break;
      const size_t space = line.find(' ');
      TT_ASSIGN_OR_RETURN(
          PtxStatement statement,
          ParseInstruction(absl::StrCat(line.substr(0, space), " ", line.substr(comma + 1)), text));
      statement.wait_loop = true;
      return statement;
    }
    return Unreadable(text, "a try_wait outside the wait loop the snippets write");
  }
  if (absl::StrContains(plain, "{\n") || absl::StrContains(plain, ".reg")) {
    return Unreadable(text, "a block of several instructions");
  }
  return ParseInstruction(plain, text);
}

}  // namespace tiletune

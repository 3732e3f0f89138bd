#include "compiler/ops/registry.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/base/abbreviate.h"
#include "compiler/base/status_macros.h"
#include "compiler/ops/candidates.h"
#include "compiler/target/target.h"
#include "compiler/tuning_db/tuning_db.h"
#include "google/protobuf/util/message_differencer.h"

namespace tiletune {

absl::Status TileOpRegistry::Register(std::shared_ptr<const TileOpDefinition> definition) {
  if (definition == nullptr) return absl::InvalidArgumentError("cannot register a null operator");
  for (const auto& existing : definitions_) {
    if (existing->name() == definition->name()) {
      return absl::AlreadyExistsError(
          absl::StrCat("tile operator '", definition->name(), "' is already registered"));
    }
  }
  definitions_.push_back(std::move(definition));
  return absl::OkStatus();
}

absl::StatusOr<const TileOpDefinition*> TileOpRegistry::Find(absl::string_view name) const {
  for (const auto& definition : definitions_) {
    if (definition->name() == name) return definition.get();
  }
  return absl::NotFoundError(absl::StrCat("unknown tile operator '", name, "': accepted are ",
                                          Names().empty() ? "none" : Names()));
}

std::vector<const TileOpDefinition*> TileOpRegistry::All() const {
  std::vector<const TileOpDefinition*> all;
  for (const auto& definition : definitions_) all.push_back(definition.get());
  return all;
}

std::string TileOpRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& definition : definitions_) names.push_back(definition->name());
  return absl::StrJoin(names, ", ");
}

absl::StatusOr<const TileOpDefinition*> TileOpRegistry::For(const TileOp& op) const {
  return Find(op.op_name());
}

absl::StatusOr<const TileOpDefinition*> TileOpRegistry::For(
    const tuning::Problem& problem) const {
  const std::string name = tuning::OperatorName(problem);
  if (name.empty()) return absl::InvalidArgumentError("the problem names no operator");
  return Find(name);
}

std::string TileOpRegistry::SpecSyntax() const {
  std::vector<std::string> forms;
  for (const auto& definition : definitions_) {
    forms.push_back(absl::StrCat(definition->name(), ":", definition->SpecSyntax()));
  }
  return absl::StrJoin(forms, " or ");
}

absl::StatusOr<std::unique_ptr<TileOp>> TileOpRegistry::ParseSpec(absl::string_view spec) const {
  const size_t colon = spec.find(':');
  const absl::string_view name = spec.substr(0, colon);
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("problem '", Printable(spec, 80), "': ", Printable(why, 200), "; expected ",
                     SpecSyntax()));
  };
  if (std::optional<std::string> odd = OddCharacter(spec)) return bad(absl::StrCat("it holds ", *odd));
  if (colon == absl::string_view::npos) return bad("no ':' after the operator");
  absl::StatusOr<const TileOpDefinition*> definition = Find(name);
  if (!definition.ok()) return bad(definition.status().message());
  absl::StatusOr<std::unique_ptr<TileOp>> op = (*definition)->ParseSpec(spec.substr(colon + 1));
  if (!op.ok()) return bad(op.status().message());
  return op;
}

absl::StatusOr<std::string> TileOpRegistry::FormatSpec(const TileOp& op) const {
  TT_ASSIGN_OR_RETURN(const TileOpDefinition* definition, For(op));
  TT_ASSIGN_OR_RETURN(std::string spec, definition->FormatSpec(op));
  return absl::StrCat(definition->name(), ":", spec);
}

absl::StatusOr<std::unique_ptr<TileOp>> TileOpRegistry::FromProblem(
    const tuning::Problem& problem) const {
  TT_ASSIGN_OR_RETURN(const TileOpDefinition* definition, For(problem));
  return definition->FromProblem(problem);
}

std::string TileOpRegistry::DescribeProblem(const tuning::Problem& problem) const {
  absl::StatusOr<const TileOpDefinition*> definition = For(problem);
  if (!definition.ok()) return tuning::ProblemKey(problem);
  absl::StatusOr<std::unique_ptr<TileOp>> op = (*definition)->FromProblem(problem);
  if (!op.ok()) return tuning::ProblemKey(problem);
  return (*definition)->Describe(**op);
}

namespace {

// A winner's hints and launch must lower for its problem on its architecture, through the
// same lowering the library and the tuner use: a record that would not (threads 99999999,
// 1000 stages, an unknown annotation: edited or corrupted) is refused when it is read,
// naming the field, instead of being skipped when it is used. Records of schema 1 stored
// no launch and are not checked.
absl::Status CheckWinnerLowers(const TileOpDefinition& definition, const TileOp& op,
                               const tuning::TuningRecord& record) {
  const tuning::Lowering& stored = record.winner().lowering();
  if (stored.tile().empty() || stored.threads() == 0) return absl::OkStatus();
  const tuning::DeviceIdentity& device = record.device();
  absl::StatusOr<Target> target =
      Target::Parse(Target::ArchNameForDevice(device.cc_major(), device.cc_minor()));
  if (!target.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("device: ", target.status().message()));
  }
  // The kernel the record timed is the one its lowering names: a winner that now lowers to
  // another path or form (a pixel-row launch on channel-row columns, say) would run a
  // kernel nobody timed.
  return LowerVariant(definition, op, record.winner(), *target, "winner").status();
}

}  // namespace

tuning::RecordValidator TileOpRegistry::RecordValidator() const {
  std::shared_ptr<const TileOpRegistry> ops(new TileOpRegistry(*this));
  return [ops](const tuning::TuningRecord& record) -> absl::Status {
    TT_ASSIGN_OR_RETURN(const TileOpDefinition* definition, ops->For(record.problem()));
    absl::StatusOr<std::unique_ptr<TileOp>> op = definition->FromProblem(record.problem());
    if (!op.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("problem: not a valid ", definition->name(), ": ", op.status().message()));
    }
    TT_ASSIGN_OR_RETURN(tuning::Problem canonical, definition->ToProblem(**op));
    if (!google::protobuf::util::MessageDifferencer::Equals(canonical, record.problem())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "problem is not in canonical form (every list written out); write it as ",
          tuning::ProblemKey(canonical)));
    }
    if (absl::Status status = definition->CheckLowering(record.winner().lowering());
        !status.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("winner.", status.message()));
    }
    TT_RETURN_IF_ERROR(CheckWinnerLowers(*definition, **op, record));
    for (int i = 0; i < record.candidates_size(); ++i) {
      const tuning::Lowering& lowering = record.candidates(i).variant().lowering();
      if (lowering.path().empty()) continue;  // failed before lowering
      absl::Status status = definition->CheckLowering(lowering);
      if (!status.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("candidates[", i, "].", status.message()));
      }
    }
    return absl::OkStatus();
  };
}

}  // namespace tiletune

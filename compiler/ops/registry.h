// The tile-operator registry: which operators exist, by name.
//
//   TileOpRegistry ops;
//   TT_RETURN_IF_ERROR(RegisterBuiltinTileOps(ops));        // builtin_ops.h, explicit
//   TT_ASSIGN_OR_RETURN(const TileOpDefinition* d, ops.Find("im2col"));
//   TT_ASSIGN_OR_RETURN(std::unique_ptr<TileOp> op, ops.ParseSpec("im2col:f16:64,56,56,64:k=3:p=1"));
//
// Registration is explicit and happens before use; after that the registry is read-only
// and thread-safe. There are no static registrations.
#ifndef COMPILER_OPS_REGISTRY_H_
#define COMPILER_OPS_REGISTRY_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/ir/tile_op.h"
#include "compiler/ops/tile_op_definition.h"
#include "compiler/tuning_db/tuning_db.h"
#include "compiler/tuning_db/tuning_db.pb.h"

namespace tiletune {

class TileOpRegistry {
 public:
  TileOpRegistry() = default;
  // Not copyable or movable: definitions found here are used by address.
  TileOpRegistry(TileOpRegistry&&) = delete;
  TileOpRegistry& operator=(const TileOpRegistry&) = delete;
  TileOpRegistry& operator=(TileOpRegistry&&) = delete;

  // AlreadyExists for a name registered before.
  absl::Status Register(std::shared_ptr<const TileOpDefinition> definition);

  // The definition called `name`; NotFound listing the registered names.
  absl::StatusOr<const TileOpDefinition*> Find(absl::string_view name) const;
  // Every definition, in registration order.
  std::vector<const TileOpDefinition*> All() const;
  // "copy, im2col".
  std::string Names() const;

  // The definition of `op`'s operator.
  absl::StatusOr<const TileOpDefinition*> For(const TileOp& op) const;
  // The definition of a database problem's operator.
  absl::StatusOr<const TileOpDefinition*> For(const tuning::Problem& problem) const;

  // A problem spec "<op>:<the operator's own syntax>"; InvalidArgument naming the spec,
  // what is wrong and the accepted forms.
  absl::StatusOr<std::unique_ptr<TileOp>> ParseSpec(absl::string_view spec) const;
  // "copy:DTYPE:D0,D1,... | im2col:DTYPE:N,H,W,C[:k=..]...".
  std::string SpecSyntax() const;
  // The spec "<op>:..." that ParseSpec reads back as `op` (hints left out); Unimplemented
  // where the operator's grammar cannot express it.
  absl::StatusOr<std::string> FormatSpec(const TileOp& op) const;

  // The op a database problem describes.
  absl::StatusOr<std::unique_ptr<TileOp>> FromProblem(const tuning::Problem& problem) const;
  // "copy f16 [8192, 8192]" for a problem, or why it cannot be read.
  std::string DescribeProblem(const tuning::Problem& problem) const;

  // What the tuning database's readers and writers check beyond the schema: a record's
  // problem is a valid problem of a registered operator in canonical form, and every
  // variant it holds names one of that operator's paths. It keeps its own snapshot of
  // the operators registered so far, so it may outlive the registry.
  tuning::RecordValidator RecordValidator() const;

 private:
  TileOpRegistry(const TileOpRegistry&) = default;  // the validator's snapshot

  std::vector<std::shared_ptr<const TileOpDefinition>> definitions_;
};

}  // namespace tiletune

#endif  // COMPILER_OPS_REGISTRY_H_

// The device codegen registry: which codegen builds kernels for which target.
//
//   DeviceCodegenRegistry registry;
//   TT_RETURN_IF_ERROR(RegisterBuiltinCudaCodegens(registry, BuiltinTileOps()));  // explicit
//   TT_RETURN_IF_ERROR(registry.RegisterLazy("rocm", LoadRocmCodegens));  // on first use
//   TT_ASSIGN_OR_RETURN(auto codegen, registry.Resolve(target));
//
// Rules. Register: a name already registered is AlreadyExists unless `override` is true,
// which replaces it in place. RegisterLazy: the loader runs once, on the first query of
// its target kind, under the registry's lock, so concurrent first users wait for it and
// it never runs twice; the codegens it returns are registered for the kind; if it fails,
// that query and every later one for the kind report its error. AllowedForTarget: names, in registration order, whose SupportsTarget holds.
// Resolve: the first of those; NotFound listing every registered codegen and its kind
// when none matches. Everything is thread-safe. There are no static registrations:
// codegens exist when someone registers them.
#ifndef COMPILER_BACKEND_REGISTRY_H_
#define COMPILER_BACKEND_REGISTRY_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "compiler/backend/device_codegen.h"
#include "compiler/target/target.h"

namespace tiletune {

class DeviceCodegenRegistry {
 public:
  // Produces the codegens of one target kind.
  using Loader = std::function<absl::StatusOr<std::vector<std::shared_ptr<const DeviceCodegen>>>()>;

  absl::Status Register(const std::string& target_kind,
                        std::shared_ptr<const DeviceCodegen> codegen, bool override = false);
  // AlreadyExists if a loader for the kind is pending or has run.
  absl::Status RegisterLazy(const std::string& target_kind, Loader loader);

  absl::StatusOr<std::vector<std::string>> AllowedForTarget(const Target& target);
  absl::StatusOr<std::shared_ptr<const DeviceCodegen>> Resolve(const Target& target);
  // The codegen called `name`, if registered (runs no loader).
  absl::StatusOr<std::shared_ptr<const DeviceCodegen>> Get(const std::string& name) const;

  // How often each kind's loader has run (tests check the at-most-once rule).
  int LoaderRuns(const std::string& target_kind) const;

 private:
  struct Entry {
    std::string kind;
    std::shared_ptr<const DeviceCodegen> codegen;
  };
  struct LazyKind {
    Loader loader;
    bool ran = false;
    absl::Status result;
    int runs = 0;
  };

  absl::Status RegisterLocked(const std::string& target_kind,
                              std::shared_ptr<const DeviceCodegen> codegen, bool override)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Runs the kind's pending loader, if any; returns its (remembered) result.
  absl::Status EnsureLoadedLocked(const std::string& target_kind)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  std::vector<std::string> AllowedLocked(const Target& target) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  mutable absl::Mutex mutex_;
  std::vector<Entry> entries_ ABSL_GUARDED_BY(mutex_);
  absl::flat_hash_map<std::string, LazyKind> lazy_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace tiletune

#endif  // COMPILER_BACKEND_REGISTRY_H_

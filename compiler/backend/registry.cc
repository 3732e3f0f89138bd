#include "compiler/backend/registry.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/base/status_macros.h"

namespace tiletune {

absl::Status DeviceCodegenRegistry::Register(const std::string& target_kind,
                                             std::shared_ptr<const DeviceCodegen> codegen,
                                             bool override) {
  absl::MutexLock lock(&mutex_);
  return RegisterLocked(target_kind, std::move(codegen), override);
}

absl::Status DeviceCodegenRegistry::RegisterLocked(const std::string& target_kind,
                                                   std::shared_ptr<const DeviceCodegen> codegen,
                                                   bool override) {
  if (codegen == nullptr) return absl::InvalidArgumentError("cannot register a null codegen");
  std::string name = codegen->name();
  if (name.empty()) return absl::InvalidArgumentError("a device codegen needs a name");
  for (Entry& entry : entries_) {
    if (entry.codegen->name() != name) continue;
    if (!override) {
      return absl::AlreadyExistsError(absl::StrCat(
          "device codegen '", name, "' is already registered for kind '", entry.kind,
          "'; pass override=true to replace it"));
    }
    entry = Entry{target_kind, std::move(codegen)};
    return absl::OkStatus();
  }
  entries_.push_back(Entry{target_kind, std::move(codegen)});
  return absl::OkStatus();
}

absl::Status DeviceCodegenRegistry::RegisterLazy(const std::string& target_kind, Loader loader) {
  if (!loader) return absl::InvalidArgumentError("cannot register an empty loader");
  absl::MutexLock lock(&mutex_);
  if (lazy_.contains(target_kind)) {
    return absl::AlreadyExistsError(
        absl::StrCat("a lazy loader for kind '", target_kind, "' is already registered"));
  }
  lazy_[target_kind].loader = std::move(loader);
  return absl::OkStatus();
}

absl::Status DeviceCodegenRegistry::EnsureLoadedLocked(const std::string& target_kind) {
  auto it = lazy_.find(target_kind);
  if (it == lazy_.end()) return absl::OkStatus();
  LazyKind& lazy = it->second;
  if (lazy.ran) return lazy.result;
  lazy.ran = true;
  ++lazy.runs;
  auto codegens = lazy.loader();
  if (!codegens.ok()) {
    lazy.result = absl::Status(codegens.status().code(),
                               absl::StrCat("loading device codegens for kind '", target_kind,
                                            "' failed: ", codegens.status().message()));
    return lazy.result;
  }
  for (auto& codegen : *codegens) {
    absl::Status registered = RegisterLocked(target_kind, std::move(codegen), false);
    if (!registered.ok()) {
      lazy.result = absl::Status(registered.code(),
                                 absl::StrCat("loading device codegens for kind '", target_kind,
                                              "': ", registered.message()));
      return lazy.result;
    }
  }
  return lazy.result;
}

std::vector<std::string> DeviceCodegenRegistry::AllowedLocked(const Target& target) const {
  std::vector<std::string> names;
  for (const Entry& entry : entries_) {
    if (entry.kind == target.kind() && entry.codegen->SupportsTarget(target)) {
      names.push_back(entry.codegen->name());
    }
  }
  return names;
}

absl::StatusOr<std::vector<std::string>> DeviceCodegenRegistry::AllowedForTarget(
    const Target& target) {
  absl::MutexLock lock(&mutex_);
  TT_RETURN_IF_ERROR(EnsureLoadedLocked(target.kind()));
  return AllowedLocked(target);
}

absl::StatusOr<std::shared_ptr<const DeviceCodegen>> DeviceCodegenRegistry::Resolve(
    const Target& target) {
  absl::MutexLock lock(&mutex_);
  TT_RETURN_IF_ERROR(EnsureLoadedLocked(target.kind()));
  for (const Entry& entry : entries_) {
    if (entry.kind == target.kind() && entry.codegen->SupportsTarget(target)) {
      return entry.codegen;
    }
  }
  std::vector<std::string> registered;
  for (const Entry& entry : entries_) {
    registered.push_back(absl::StrCat(entry.codegen->name(), " (", entry.kind, ")"));
  }
  for (const auto& [kind, lazy] : lazy_) {
    if (!lazy.ran) registered.push_back(absl::StrCat("lazy loader for ", kind, " (not loaded)"));
  }
  return absl::NotFoundError(absl::StrCat(
      "no device codegen supports ", target.ToString(), "; registered: ",
      registered.empty() ? std::string("none") : absl::StrJoin(registered, ", ")));
}

absl::StatusOr<std::shared_ptr<const DeviceCodegen>> DeviceCodegenRegistry::Get(
    const std::string& name) const {
  absl::MutexLock lock(&mutex_);
  for (const Entry& entry : entries_) {
    if (entry.codegen->name() == name) return entry.codegen;
  }
  return absl::NotFoundError(absl::StrCat("no device codegen named '", name, "'"));
}

int DeviceCodegenRegistry::LoaderRuns(const std::string& target_kind) const {
  absl::MutexLock lock(&mutex_);
  auto it = lazy_.find(target_kind);
  return it == lazy_.end() ? 0 : it->second.runs;
}

}  // namespace tiletune

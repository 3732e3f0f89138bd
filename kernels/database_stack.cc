#include "kernels/database_stack.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/base/version.h"

namespace tiletune {
namespace {

bool IsDatabaseFile(absl::string_view name) {
  return !absl::StartsWith(name, ".") &&
         (absl::EndsWith(name, ".txtpb") || absl::EndsWith(name, ".textproto") ||
          absl::EndsWith(name, ".pb"));
}

// The database files of `folder`, by name, with `last` (a file name) moved to the end.
std::vector<std::string> FolderFiles(const std::string& folder, const std::string& last) {
  std::vector<std::string> names;
  DIR* dir = ::opendir(folder.c_str());
  if (dir == nullptr) return names;
  while (const struct dirent* entry = ::readdir(dir)) {
    if (IsDatabaseFile(entry->d_name)) names.push_back(entry->d_name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
    return std::make_pair(a == last, a) < std::make_pair(b == last, b);
  });
  std::vector<std::string> paths;
  for (const std::string& name : names) paths.push_back(absl::StrCat(folder, "/", name));
  return paths;
}

// Whether two paths name one file (so it is read once).
bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

class Loader {
 public:
  explicit Loader(const DatabaseStackOptions& options) : options_(options) {
    read_.semantics = options.validator;
    read_.notes = &notes_;
  }

  void Report(std::string message) {
    if (options_.print) std::fprintf(stderr, "tiletune: %s\n", message.c_str());
    stack_.messages.push_back(std::move(message));
  }

  // A database that did not read: reported, left out, the first kept as the status.
  void LeaveOut(const absl::Status& status, absl::string_view what) {
    if (stack_.status.ok()) stack_.status = status;
    Report(absl::StrCat("not using ", what, ": ", status.message(),
                        "; the other databases still serve"));
  }

  void Add(DatabaseLayer::Kind kind, std::string origin, tuning::TuningDatabase database,
           bool check_version) {
    for (const std::string& note : notes_) Report(absl::StrCat("note: ", note));
    notes_.clear();
    if (check_version) NoteOtherVersions(origin, database);
    stack_.layers.push_back(DatabaseLayer{kind, std::move(origin), std::move(database)});
  }

  // Reads the file at `path` into the stack; a missing file is left out silently when
  // `quiet_if_missing`.
  void AddFile(DatabaseLayer::Kind kind, const std::string& path, bool quiet_if_missing) {
    for (const DatabaseLayer& layer : stack_.layers) {
      if (layer.kind != DatabaseLayer::Kind::kBaked && SameFile(layer.origin, path)) return;
    }
    absl::StatusOr<tuning::TuningDatabase> database = tuning::ReadTuningDatabase(path, read_);
    if (!database.ok()) {
      notes_.clear();
      if (absl::IsNotFound(database.status()) && quiet_if_missing) return;
      LeaveOut(database.status(), absl::StrCat("tuning database ", path));
      return;
    }
    Add(kind, path, *std::move(database), /*check_version=*/true);
  }

  // A database made by another tiletune: said once, with what is still used.
  void NoteOtherVersions(const std::string& origin, const tuning::TuningDatabase& database) {
    std::map<std::string, int> versions;
    for (const tuning::TuningRecord& record : database.records()) {
      const std::string& version = record.provenance().tool_version();
      if (!version.empty() && version != kVersionTag) ++versions[version];
    }
    if (versions.empty()) return;
    std::vector<std::string> counts;
    for (const auto& [version, count] : versions) {
      counts.push_back(absl::StrCat(count, " by ", version));
    }
    Report(absl::StrCat("note: ", origin, ": records made by another tiletune (",
                        absl::StrJoin(counts, ", "), "; this is ", kVersionTag,
                        "); they are still used, and tuning again refreshes them"));
  }

  DatabaseStack Finish() { return std::move(stack_); }

  tuning::ReadOptions& read() { return read_; }

 private:
  const DatabaseStackOptions& options_;
  tuning::ReadOptions read_;
  std::vector<std::string> notes_;
  DatabaseStack stack_;
};

}  // namespace

std::string DefaultUserDirectory() {
  if (const char* dir = std::getenv("TILETUNE_DB_DIR"); dir != nullptr && *dir != '\0') return dir;
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg != nullptr && *xdg != '\0') {
    return absl::StrCat(xdg, "/tiletune");
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return absl::StrCat(home, "/.local/share/tiletune");
  }
  return "";
}

DatabaseStack LoadDatabaseStack(const DatabaseStackOptions& options) {
  Loader loader(options);
  for (const PrebuiltKernelSet* set : options.baked) {
    absl::StatusOr<tuning::TuningDatabase> parsed = tuning::ParseTuningDatabase(
        set->database_text, tuning::DatabaseFormat::kText, set->name, loader.read());
    if (!parsed.ok()) {
      loader.LeaveOut(parsed.status(), absl::StrCat("the kernels baked as ", set->name));
      continue;
    }
    loader.Add(DatabaseLayer::Kind::kBaked, absl::StrCat(set->name, " (baked)"),
               *std::move(parsed), /*check_version=*/false);
  }
  for (const std::string& path : options.listed) {
    loader.AddFile(DatabaseLayer::Kind::kListed, path, /*quiet_if_missing=*/false);
  }
  if (!options.user_directory.empty()) {
    for (const std::string& path : FolderFiles(options.user_directory, kTunedOnMissFile)) {
      loader.AddFile(DatabaseLayer::Kind::kUserFolder, path, /*quiet_if_missing=*/true);
    }
  }
  if (!options.tuned_on_miss_database.empty()) {
    loader.AddFile(DatabaseLayer::Kind::kUserFolder, options.tuned_on_miss_database,
                   /*quiet_if_missing=*/true);
  }
  for (const ShippedDatabase& shipped : options.builtin) {
    absl::StatusOr<tuning::TuningDatabase> parsed = tuning::ParseTuningDatabase(
        shipped.text, tuning::DatabaseFormat::kText, shipped.origin, loader.read());
    if (!parsed.ok()) {
      // A broken built-in database costs tuned kernels, never the library.
      loader.LeaveOut(parsed.status(), absl::StrCat("the built-in tuning database ", shipped.origin));
      continue;
    }
    // Built-in records ship with this release: their versions were checked when they were
    // (library_test), so they are not noted.
    loader.Add(DatabaseLayer::Kind::kBuiltIn, absl::StrCat(shipped.origin, " (built in)"),
               *std::move(parsed), /*check_version=*/false);
  }
  return loader.Finish();
}

std::string DescribeStack(const DatabaseStack& stack) {
  std::vector<std::string> origins;
  for (const DatabaseLayer& layer : stack.layers) origins.push_back(layer.origin);
  return origins.empty() ? "no tuning database" : absl::StrJoin(origins, ", ");
}

}  // namespace tiletune

#include "compiler/cuda/caching_compilation_provider.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "compiler/base/sha256.h"
#include "compiler/base/status_macros.h"

namespace tiletune {
namespace {

constexpr absl::string_view kMagic = "tiletune-kernel-cache v1";

absl::Status MakeDirectories(const std::string& path) {
  // Creates each prefix ending at a '/', then the whole path.
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    std::string prefix = path.substr(0, slash);
    if (mkdir(prefix.c_str(), 0755) != 0) {
      if (errno != EEXIST) {
        return absl::PermissionDeniedError(
            absl::StrCat("cannot create cache folder ", prefix, ": ", std::strerror(errno)));
      }
      // Something is there already: it must be a folder (a file there used to turn the
      // disk cache off without a word).
      struct stat info;
      if (stat(prefix.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
        return absl::FailedPreconditionError(
            absl::StrCat("cache folder ", prefix, " exists and is not a folder"));
      }
    }
    if (slash == std::string::npos) return absl::OkStatus();
  }
}

}  // namespace

std::string DefaultCacheDirectory() {
  if (const char* dir = std::getenv("TILETUNE_CACHE_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return absl::StrCat(xdg, "/tiletune/kernels");
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return absl::StrCat(home, "/.cache/tiletune/kernels");
  }
  return "";
}

CachingCompilationProvider::CachingCompilationProvider(Options options)
    : inner_(std::move(options.inner)), disk_directory_(std::move(options.disk_directory)) {}

absl::StatusOr<std::unique_ptr<CachingCompilationProvider>> CachingCompilationProvider::Create(
    Options options) {
  if (options.inner == nullptr) {
    return absl::InvalidArgumentError("CachingCompilationProvider needs an inner provider");
  }
  if (!options.disk_directory.empty()) {
    TT_RETURN_IF_ERROR(MakeDirectories(options.disk_directory));
  }
  return std::unique_ptr<CachingCompilationProvider>(
      new CachingCompilationProvider(std::move(options)));
}

std::string CachingCompilationProvider::Name() const {
  return absl::StrCat("cached-", inner_->Name());
}

std::string CachingCompilationProvider::CompilerName() const { return inner_->CompilerName(); }

CachingCompilationProvider::Stats CachingCompilationProvider::stats() const {
  absl::MutexLock lock(&mutex_);
  return stats_;
}

std::string CachingCompilationProvider::Key(absl::string_view kind, const CudaSource& source,
                                             const CompileOptions& options) const {
  // Length-prefixed fields, so no two different inputs serialise alike.
  std::string material;
  for (absl::string_view field :
       {kind, absl::string_view(options.arch), absl::string_view(options.line_info ? "1" : "0"),
        absl::string_view(inner_->Name()), absl::string_view(source.text)}) {
    absl::StrAppend(&material, field.size(), ":", field, ";");
  }
  for (const std::string& flag : options.extra_flags) {
    absl::StrAppend(&material, flag.size(), ":", flag, ";");
  }
  return Sha256Hex(material);
}

std::string CachingCompilationProvider::EntryPath(absl::string_view key) const {
  return absl::StrCat(disk_directory_, "/", key, ".entry");
}

absl::StatusOr<CachingCompilationProvider::Entry> CachingCompilationProvider::ReadDiskEntry(
    absl::string_view key) {
  std::ifstream in(EntryPath(key), std::ios::binary);
  if (!in) return absl::NotFoundError("no entry");
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string data = buffer.str();
  // Header: magic, key, payload size, log size, payload sha256; one per line; then a blank
  // line, the payload and the log.
  auto corrupt = [&](absl::string_view why) {
    return absl::DataLossError(absl::StrCat("cache entry ", EntryPath(key), ": ", why));
  };
  size_t header_end = data.find("\n\n");
  if (header_end == std::string::npos) return corrupt("no header");
  std::vector<std::string> lines = absl::StrSplit(data.substr(0, header_end), '\n');
  if (lines.size() != 5 || lines[0] != kMagic) return corrupt("bad header");
  if (lines[1] != absl::StrCat("key ", key)) return corrupt("key mismatch");
  size_t payload_size = 0, log_size = 0;
  if (!absl::StartsWith(lines[2], "payload ") ||
      !absl::SimpleAtoi(lines[2].substr(8), &payload_size) ||
      !absl::StartsWith(lines[3], "log ") || !absl::SimpleAtoi(lines[3].substr(4), &log_size)) {
    return corrupt("bad sizes");
  }
  size_t body = header_end + 2;
  if (data.size() != body + payload_size + log_size) return corrupt("truncated or padded");
  Entry entry{data.substr(body, payload_size), data.substr(body + payload_size, log_size)};
  if (lines[4] != absl::StrCat("sha256 ", Sha256Hex(entry.payload))) {
    return corrupt("payload hash mismatch");
  }
  return entry;
}

void CachingCompilationProvider::WriteDiskEntry(absl::string_view key, const Entry& entry) {
  static std::atomic<uint64_t> counter{0};
  std::string final_path = EntryPath(key);
  std::string temp_path = absl::StrCat(final_path, ".tmp.", getpid(), ".", counter++);
  bool written = false;
  {
    std::ofstream out(temp_path, std::ios::binary | std::ios::trunc);
    if (out) {
      out << kMagic << "\nkey " << key << "\npayload " << entry.payload.size() << "\nlog "
          << entry.log.size() << "\nsha256 " << Sha256Hex(entry.payload) << "\n\n"
          << entry.payload << entry.log;
      out.flush();
      written = static_cast<bool>(out);
    }
  }
  if (!written || std::rename(temp_path.c_str(), final_path.c_str()) != 0) {
    std::remove(temp_path.c_str());
    absl::MutexLock lock(&mutex_);
    ++stats_.write_failures;
  }
}

template <typename Compiled>
absl::StatusOr<CachingCompilationProvider::Entry> CachingCompilationProvider::Lookup(
    absl::string_view kind, const CudaSource& source, const CompileOptions& options,
    absl::StatusOr<Compiled> (CompilationProvider::*compile)(const CudaSource&,
                                                              const CompileOptions&)) {
  std::string key = Key(kind, source, options);
  {
    absl::MutexLock lock(&mutex_);
    auto it = memory_.find(key);
    if (it != memory_.end()) {
      ++stats_.memory_hits;
      return it->second;
    }
  }
  if (!disk_directory_.empty()) {
    absl::StatusOr<Entry> from_disk = ReadDiskEntry(key);
    if (from_disk.ok()) {
      absl::MutexLock lock(&mutex_);
      ++stats_.disk_hits;
      memory_.emplace(key, *from_disk);
      return *std::move(from_disk);
    }
    if (absl::IsDataLoss(from_disk.status())) {
      absl::MutexLock lock(&mutex_);
      ++stats_.corrupt_entries;
    }
  }
  TT_ASSIGN_OR_RETURN(Compiled compiled, (inner_.get()->*compile)(source, options));
  Entry entry;
  if constexpr (std::is_same_v<Compiled, Ptx>) {
    entry = Entry{std::move(compiled.text), std::move(compiled.log)};
  } else {
    entry = Entry{std::move(compiled.bytes), std::move(compiled.log)};
  }
  if (!disk_directory_.empty()) WriteDiskEntry(key, entry);
  absl::MutexLock lock(&mutex_);
  ++stats_.misses;
  memory_.emplace(key, entry);
  return entry;
}

absl::StatusOr<Ptx> CachingCompilationProvider::CompileToPtx(const CudaSource& source,
                                                             const CompileOptions& options) {
  TT_ASSIGN_OR_RETURN(Entry entry,
                      Lookup<Ptx>("ptx", source, options, &CompilationProvider::CompileToPtx));
  return Ptx{std::move(entry.payload), options.arch, std::move(entry.log)};
}

absl::StatusOr<Cubin> CachingCompilationProvider::CompileToCubin(const CudaSource& source,
                                                                 const CompileOptions& options) {
  TT_ASSIGN_OR_RETURN(Entry entry, Lookup<Cubin>("cubin", source, options,
                                                 &CompilationProvider::CompileToCubin));
  return Cubin{std::move(entry.payload), options.arch, std::move(entry.log)};
}

}  // namespace tiletune

#include "compiler/cuda/caching_compilation_provider.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
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

// Whether this user may trust `folder` with compiled kernels: a world-writable folder owned
// by someone else could hold planted entries.
absl::Status CheckTrusted(const std::string& folder) {
  struct stat info;
  if (::stat(folder.c_str(), &info) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot stat cache folder ", folder, ": ", std::strerror(errno)));
  }
  if ((info.st_mode & S_IWOTH) != 0 && info.st_uid != ::geteuid()) {
    return absl::PermissionDeniedError(absl::StrCat(
        "cache folder ", folder, " is writable by everyone and owned by user ", info.st_uid,
        ", not this user (", ::geteuid(), "), so its entries cannot be trusted"));
  }
  return absl::OkStatus();
}

// The bytes of a cache entry: a regular file of at most kMaxCacheEntryBytes, opened
// without following a link or blocking. NotFound when there is none; DataLoss for
// anything else that is not such a file.
absl::StatusOr<std::string> ReadEntryFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return absl::NotFoundError("no entry");
    return absl::DataLossError(absl::StrCat("cannot open: ", std::strerror(errno)));
  }
  struct stat info;
  std::string data;
  absl::Status status;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    status = absl::DataLossError("not a regular file");
  } else if (info.st_size > kMaxCacheEntryBytes) {
    status = absl::DataLossError(absl::StrCat(info.st_size, " bytes, more than the ",
                                              kMaxCacheEntryBytes, " an entry may hold"));
  } else {
    data.resize(static_cast<size_t>(info.st_size));
    size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = ::read(fd, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    // A file that grew after the fstat is not what the header will claim.
    char extra;
    if (done != data.size() || ::read(fd, &extra, 1) != 0) status = absl::DataLossError("changed while read");
  }
  ::close(fd);
  if (!status.ok()) return status;
  return data;
}

// The SM number of an architecture name: 90 for "sm_90a", "sm_90" or "compute_90"; 0 when
// it names none.
int SmNumber(absl::string_view arch) {
  absl::ConsumePrefix(&arch, "sm_") || absl::ConsumePrefix(&arch, "compute_");
  while (!arch.empty() && !absl::ascii_isdigit(arch.back())) arch.remove_suffix(1);
  int sm = 0;
  return absl::SimpleAtoi(arch, &sm) ? sm : 0;
}

// Whether `payload` is what a compile of `kind` for `arch` produces: an ELF CUBIN for
// CUDA (EM_CUDA) of that SM, or PTX whose .target names it.
absl::Status CheckPayload(absl::string_view kind, absl::string_view arch, absl::string_view payload) {
  const int sm = SmNumber(arch);
  if (kind == "cubin") {
    constexpr uint16_t kEmCuda = 190;
    if (payload.size() < 64 || payload.substr(0, 4) != "\x7f" "ELF" || payload[4] != 2) {
      return absl::DataLossError("payload is not a 64-bit ELF file");
    }
    auto u16 = [&](size_t at) {
      return static_cast<uint16_t>(static_cast<uint8_t>(payload[at]) |
                                   static_cast<uint8_t>(payload[at + 1]) << 8);
    };
    if (u16(18) != kEmCuda) return absl::DataLossError("payload is an ELF file, but not a CUBIN");
    const uint32_t flags = u16(48) | uint32_t{u16(50)} << 16;
    const int abi_version = static_cast<uint8_t>(payload[8]);
    const int elf_sm = abi_version >= 8 ? (flags >> 8) & 0xff : flags & 0xff;
    if (sm != 0 && elf_sm != sm) {
      return absl::DataLossError(absl::StrCat("payload is a CUBIN for sm_", elf_sm, ", not ", arch));
    }
    return absl::OkStatus();
  }
  // PTX: text with a .version and a .target of this SM.
  const size_t target = payload.find("\n.target ");
  if (payload.find(".version ") == absl::string_view::npos || target == absl::string_view::npos) {
    return absl::DataLossError("payload is not PTX (no .version and .target)");
  }
  absl::string_view named = payload.substr(target + 9);
  named = named.substr(0, named.find_first_of(",\n \t"));
  if (sm != 0 && SmNumber(named) != sm) {
    return absl::DataLossError(absl::StrCat("payload is PTX for ", named, ", not ", arch));
  }
  return absl::OkStatus();
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
    : inner_(std::move(options.inner)),
      disk_directory_(std::move(options.disk_directory)),
      quiet_(options.quiet) {}

absl::StatusOr<std::unique_ptr<CachingCompilationProvider>> CachingCompilationProvider::Create(
    Options options) {
  if (options.inner == nullptr) {
    return absl::InvalidArgumentError("CachingCompilationProvider needs an inner provider");
  }
  std::unique_ptr<CachingCompilationProvider> provider(
      new CachingCompilationProvider(std::move(options)));
  if (!provider->disk_directory_.empty()) {
    absl::Status usable = MakeDirectories(provider->disk_directory_);
    if (usable.ok()) usable = CheckTrusted(provider->disk_directory_);
    absl::MutexLock lock(&provider->mutex_);
    if (usable.ok()) {
      provider->disk_enabled_ = true;
    } else {
      provider->DisableDisk(usable);
    }
  }
  return provider;
}

void CachingCompilationProvider::DisableDisk(const absl::Status& why) {
  if (!disk_enabled_ && !disk_status_.ok()) return;
  disk_enabled_ = false;
  disk_status_ = why;
  if (!quiet_) {
    std::fprintf(stderr,
                 "tiletune: warning: compile cache %s is not used (%s); kernels are compiled "
                 "in memory only (set TILETUNE_CACHE_DIR to a folder of your own)\n",
                 disk_directory_.c_str(), std::string(why.message()).c_str());
  }
}

absl::Status CachingCompilationProvider::disk_status() const {
  absl::MutexLock lock(&mutex_);
  return disk_status_;
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
  // The provider's name is held here: a view of the temporary would dangle inside the loop.
  const std::string provider = inner_->Name();
  std::string material;
  for (absl::string_view field :
       {kind, absl::string_view(options.arch), absl::string_view(options.line_info ? "1" : "0"),
        absl::string_view(provider), absl::string_view(source.text)}) {
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
    absl::string_view key, absl::string_view kind, absl::string_view arch) {
  TT_ASSIGN_OR_RETURN(std::string data, ReadEntryFile(EntryPath(key)));
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
  if (absl::Status what = CheckPayload(kind, arch, entry.payload); !what.ok()) {
    return corrupt(what.message());
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
    const int error = errno;
    std::remove(temp_path.c_str());
    absl::MutexLock lock(&mutex_);
    ++stats_.write_failures;
    DisableDisk(absl::UnavailableError(
        absl::StrCat("cannot write ", temp_path, ": ", std::strerror(error))));
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
  bool disk = false;
  {
    absl::MutexLock lock(&mutex_);
    disk = disk_enabled_;
  }
  if (disk) {
    absl::StatusOr<Entry> from_disk = ReadDiskEntry(key, kind, options.arch);
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
  if (disk) WriteDiskEntry(key, entry);
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

// A CompilationProvider that remembers results in memory and, optionally, on disk.
//
// Entries are keyed by the SHA-256 of (output kind, architecture, options, the inner
// provider's Name() with its version, source text). Disk entries are written atomically
// (temporary file + rename) and carry their key, size and payload hash. A disk entry is
// read only when it is a regular file of at most kMaxCacheEntryBytes (opened without
// following a link or blocking, so a FIFO or a link to /dev/zero is skipped), and used
// only when its key, sizes and hash match and its payload is what it claims: an ELF CUBIN
// of the requested architecture, or PTX whose .target is that architecture. Anything
// else is counted as corrupt, recompiled and rewritten, never trusted. Compile errors are
// not cached.
//
// The disk folder is used only when it is a folder this user can trust: not world-
// writable unless owned by this user. A folder that cannot be created or trusted, or a
// write that fails, costs a warning on stderr (once per provider) and the disk cache,
// never the compile. Thread-safe.
//
//   CachingCompilationProvider::Options options;
//   options.inner = std::move(nvrtc);
//   options.disk_directory = DefaultCacheDirectory();
//   TT_ASSIGN_OR_RETURN(auto cached, CachingCompilationProvider::Create(std::move(options)));
#ifndef COMPILER_CUDA_CACHING_COMPILATION_PROVIDER_H_
#define COMPILER_CUDA_CACHING_COMPILATION_PROVIDER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "compiler/cuda/compilation_provider.h"

namespace tiletune {

// Largest disk entry read back; larger ones are recompiled.
inline constexpr int64_t kMaxCacheEntryBytes = int64_t{64} << 20;

// $TILETUNE_CACHE_DIR, else $XDG_CACHE_HOME/tiletune/kernels, else
// $HOME/.cache/tiletune/kernels; empty when none of these can be formed.
std::string DefaultCacheDirectory();

class CachingCompilationProvider : public CompilationProvider {
 public:
  struct Options {
    // The provider that compiles on a miss. Required.
    std::unique_ptr<CompilationProvider> inner;
    // Folder for on-disk entries, created if missing; empty keeps the cache in memory only.
    std::string disk_directory;
    // Stay quiet about an unusable disk cache (disk_status() still says why).
    bool quiet = false;
  };

  struct Stats {
    int64_t memory_hits = 0;
    int64_t disk_hits = 0;
    int64_t misses = 0;
    // Disk entries found damaged (wrong key, size or hash) and recompiled.
    int64_t corrupt_entries = 0;
    // Disk writes that failed; the result was still returned.
    int64_t write_failures = 0;
  };

  static absl::StatusOr<std::unique_ptr<CachingCompilationProvider>> Create(Options options);

  std::string Name() const override;
  std::string CompilerName() const override;
  absl::Status CheckArch(absl::string_view arch) const override { return inner_->CheckArch(arch); }
  absl::StatusOr<Ptx> CompileToPtx(const CudaSource& source,
                                   const CompileOptions& options) override;
  absl::StatusOr<Cubin> CompileToCubin(const CudaSource& source,
                                       const CompileOptions& options) override;

  Stats stats() const;

  // OK when entries are kept on disk (or none was asked for); otherwise why they are not.
  absl::Status disk_status() const;

  // The cache key for a compile; exposed for tests and for tools that inspect the cache.
  std::string Key(absl::string_view kind, const CudaSource& source,
                  const CompileOptions& options) const;

 private:
  struct Entry {
    std::string payload;
    std::string log;
  };

  explicit CachingCompilationProvider(Options options);

  template <typename Compiled>
  absl::StatusOr<Entry> Lookup(absl::string_view kind, const CudaSource& source,
                               const CompileOptions& options,
                               absl::StatusOr<Compiled> (CompilationProvider::*compile)(
                                   const CudaSource&, const CompileOptions&));

  std::string EntryPath(absl::string_view key) const;
  absl::StatusOr<Entry> ReadDiskEntry(absl::string_view key, absl::string_view kind,
                                      absl::string_view arch);
  void WriteDiskEntry(absl::string_view key, const Entry& entry);

  // Turns the disk cache off for `why`, with one warning unless quiet.
  void DisableDisk(const absl::Status& why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  std::unique_ptr<CompilationProvider> inner_;
  std::string disk_directory_;
  bool quiet_ = false;
  absl::Status disk_status_ ABSL_GUARDED_BY(mutex_);
  bool disk_enabled_ ABSL_GUARDED_BY(mutex_) = false;
  mutable absl::Mutex mutex_;
  absl::flat_hash_map<std::string, Entry> memory_ ABSL_GUARDED_BY(mutex_);
  Stats stats_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace tiletune

#endif  // COMPILER_CUDA_CACHING_COMPILATION_PROVIDER_H_

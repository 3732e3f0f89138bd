// The library users link: tuned tile-operator kernels on device buffers.
//
//   // Once: reads $TILETUNE_DB (or options.database_path) if set.
//   TT_ASSIGN_OR_RETURN(std::unique_ptr<Library> library, Library::Create({}));
//   // Per call: resolves and compiles the first time a problem is seen on a device,
//   // then only launches.
//   CopyOp copy(Region::Whole(src), Region::Whole(dst));
//   TT_RETURN_IF_ERROR(library->Launch(copy, src_ptr, dst_ptr, stream));
//   Im2colOp im2col = Im2colOp::Dense(DataType::kF16, geometry);
//   TT_RETURN_IF_ERROR(library->Launch(im2col, img_ptr, col_ptr, stream));
//
// Or through the process-wide instance: tiletune::Launch(op, input, output, stream).
//
// Any registered tile operator runs through Launch: `input` and `output` point at the
// op's whole input and output buffers (copy: src and dst; im2col: the image and the
// [N*OH*OW, KH*KW*C] column matrix), 16-byte aligned, not overlapping. A copy's region
// offsets are kernel arguments: slicing one buffer at many offsets runs one kernel per
// offset alignment. Compiled kernels are cached per device, at most
// LibraryOptions::max_kernels of them, the least recently used evicted first (stats()
// counts hits, builds and evictions); an eviction waits for the device to finish before
// it unloads the kernel's module. It runs on the
// device of the calling thread's current CUDA context (device 0's primary context when
// none is current), so each GPU of a mixed host resolves its own tuned variant. A
// missing, unreadable, corrupt or foreign-version database is reported
// (database_status(), and once on stderr) and the library works on through the fallback
// chain. Thread-safe.
#ifndef KERNELS_LIBRARY_H_
#define KERNELS_LIBRARY_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "compiler/backend/registry.h"
#include "compiler/backend/tuned_resolver.h"
#include "compiler/cuda/compilation_provider.h"
#include "compiler/ir/tile_op.h"
#include "compiler/ops/registry.h"
#include "cuda.h"

namespace tiletune {

struct LibraryOptions {
  // Tuning database to read; empty means $TILETUNE_DB; empty again means none.
  std::string database_path;
  // Compile-cache folder; empty means DefaultCacheDirectory() (memory only if that is
  // empty too).
  std::string cache_directory;
  // 0: quiet; 1: one stderr line per newly resolved problem, with its resolution level.
  int verbosity = 0;
  // The tile operators; null means the built-in ones (compiler/ops/builtin_ops.h). Must
  // outlive the library.
  const TileOpRegistry* ops = nullptr;
  // Codegen registry; null means a private one with the built-in CUDA codegens.
  std::shared_ptr<DeviceCodegenRegistry> registry;
  // Loaded kernels kept per device; the least recently launched goes first beyond it.
  size_t max_kernels = 256;
};

// Kernel-cache counters, over all devices.
struct LibraryStats {
  // Launches and inspections that found their kernel cached.
  int64_t hits = 0;
  // Kernels resolved, compiled (or read from the compile cache) and loaded.
  int64_t builds = 0;
  // Kernels dropped for max_kernels.
  int64_t evictions = 0;
  // Kernels loaded now.
  int64_t cached = 0;
};

// What a cached problem launches.
struct LaunchInfo {
  ResolutionLevel level = ResolutionLevel::kHeuristic;
  std::string resolution_detail;
  std::string codegen;
  // Name of the loaded kernel function that Launch runs.
  std::string kernel_name;
  // The operator's path and form names ("simt_im2col", "staged").
  std::string path;
  std::string form;
  LaunchParams launch;
};

class Library {
 public:
  static absl::StatusOr<std::unique_ptr<Library>> Create(LibraryOptions options);
  ~Library();

  // Runs `op` (any registered operator) from `input` to `output` on `stream`.
  absl::Status Launch(const TileOp& op, CUdeviceptr input, CUdeviceptr output, CUstream stream);

  // How `op` resolves and what it launches on the current device (compiling it if it was
  // not cached yet).
  absl::StatusOr<LaunchInfo> Inspect(const TileOp& op);

  // OK when a database was loaded or none was asked for; otherwise why it was not used.
  const absl::Status& database_status() const { return database_status_; }
  size_t database_records() const { return resolver_->record_count(); }

  LibraryStats stats() const;

 private:
  struct Device;
  struct Entry;

  Library(LibraryOptions options, absl::Status database_status,
          std::unique_ptr<TunedResolver> resolver, std::unique_ptr<CompilationProvider> compiler);
  absl::StatusOr<Device*> CurrentDevice();
  // The cached entry for `op` on `device`, resolved, compiled and loaded on first use.
  // Shared: an eviction while another thread launches it keeps it alive.
  absl::StatusOr<std::shared_ptr<Entry>> Lookup(Device& device, const TileOpDefinition& definition,
                                                const TileOp& op);
  absl::StatusOr<std::unique_ptr<Entry>> Build(Device& device, const TileOp& op);

  LibraryOptions options_;
  absl::Status database_status_;
  std::unique_ptr<TunedResolver> resolver_;
  std::unique_ptr<CompilationProvider> compiler_;
  mutable absl::Mutex mutex_;
  absl::flat_hash_map<int, std::unique_ptr<Device>> devices_ ABSL_GUARDED_BY(mutex_);
  // Counters, without a lock on the launch path.
  std::atomic<int64_t> hits_{0};
  std::atomic<int64_t> builds_{0};
  std::atomic<int64_t> evictions_{0};
};

// Launch through a process-wide Library created with default options on first use.
absl::Status Launch(const TileOp& op, CUdeviceptr input, CUdeviceptr output, CUstream stream);

}  // namespace tiletune

#endif  // KERNELS_LIBRARY_H_

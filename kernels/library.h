// The library users link: tuned copies on device buffers.
//
//   // Once: reads $TILETUNE_DB (or options.database_path) if set.
//   TT_ASSIGN_OR_RETURN(std::unique_ptr<Library> library, Library::Create({}));
//   // Per call: resolves and compiles the first time a problem is seen on a device,
//   // then only launches.
//   TT_RETURN_IF_ERROR(library->Copy(op, src_ptr, dst_ptr, stream));
//
// Or through the process-wide instance: tiletune::Copy(op, src_ptr, dst_ptr, stream).
// tiletune::Im2col(op, img_ptr, col_ptr, stream) writes the whole [N*OH*OW, KH*KW*C]
// column matrix of an NHWC image the same way.
//
// Copy runs on the device of the calling thread's current CUDA context (device 0's
// primary context when none is current), so each GPU of a mixed host resolves its own
// tuned variant. `src` and `dst` point at the op's whole buffers, 16-byte aligned, not
// overlapping. A missing, unreadable, corrupt or foreign-version database is reported
// (database_status(), and once on stderr) and the library works on through the
// fallback chain. Thread-safe.
#ifndef KERNELS_LIBRARY_H_
#define KERNELS_LIBRARY_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "autotune/tuning_db.pb.h"
#include "compiler/backend/registry.h"
#include "compiler/backend/tuned_resolver.h"
#include "compiler/cuda/compilation_provider.h"
#include "compiler/ir/copy_op.h"
#include "cuda.h"
#include "compiler/ir/im2col_op.h"
#include "kernels/copy_kernel.h"
#include "kernels/im2col_kernel.h"
#include "kernels/runtime/runtime.h"

namespace tiletune {

struct LibraryOptions {
  // Tuning database to read; empty means $TILETUNE_DB; empty again means none.
  std::string database_path;
  // Compile-cache folder; empty means DefaultCacheDirectory() (memory only if that is
  // empty too).
  std::string cache_directory;
  // 0: quiet; 1: one stderr line per newly resolved problem, with its resolution level.
  int verbosity = 0;
  // Codegen registry; null means a private one with the built-in CUDA codegens.
  std::shared_ptr<DeviceCodegenRegistry> registry;
};

// What a cached problem launches.
struct LaunchInfo {
  ResolutionLevel level;
  std::string resolution_detail;
  std::string codegen;
  // Name of the loaded kernel function that Copy launches.
  std::string kernel_name;
  LoweringPath path;
  LaunchParams launch;
};

class Library {
 public:
  static absl::StatusOr<std::unique_ptr<Library>> Create(LibraryOptions options);
  ~Library();

  absl::Status Copy(const CopyOp& op, CUdeviceptr src, CUdeviceptr dst, CUstream stream);
  // `img` points at the op's image, `col` at an M x K row-major column matrix.
  absl::Status Im2col(const Im2colOp& op, CUdeviceptr img, CUdeviceptr col, CUstream stream);

  // How `op` resolves and what it launches on the current device (compiling it if it was
  // not cached yet).
  absl::StatusOr<LaunchInfo> Inspect(const CopyOp& op);
  absl::StatusOr<LaunchInfo> Inspect(const Im2colOp& op);

  // OK when a database was loaded or none was asked for; otherwise why it was not used.
  const absl::Status& database_status() const { return database_status_; }
  size_t database_records() const { return resolver_->record_count(); }

 private:
  struct Device;
  struct Entry;

  Library(LibraryOptions options, absl::Status database_status,
          std::unique_ptr<TunedResolver> resolver, std::unique_ptr<CompilationProvider> compiler);
  absl::StatusOr<Device*> CurrentDevice();
  absl::StatusOr<Entry*> Lookup(Device& device, const CopyOp& op);
  absl::StatusOr<Entry*> Lookup(Device& device, const Im2colOp& op);
  // Returns the cached entry for `key`, or builds one with `make` and caches it.
  absl::StatusOr<Entry*> FindOrBuild(Device& device, absl::string_view key,
                                     const std::function<absl::StatusOr<std::unique_ptr<Entry>>()>& make);

  LibraryOptions options_;
  absl::Status database_status_;
  std::unique_ptr<TunedResolver> resolver_;
  std::unique_ptr<CompilationProvider> compiler_;
  absl::Mutex mutex_;
  absl::flat_hash_map<int, std::unique_ptr<Device>> devices_ ABSL_GUARDED_BY(mutex_);
};

// Copy and Im2col through a process-wide Library created with default options on first
// use.
absl::Status Copy(const CopyOp& op, CUdeviceptr src, CUdeviceptr dst, CUstream stream);
absl::Status Im2col(const Im2colOp& op, CUdeviceptr img, CUdeviceptr col, CUstream stream);

}  // namespace tiletune

#endif  // KERNELS_LIBRARY_H_

#include "kernels/library.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "autotune/tuning_db.h"
#include "compiler/backend/cuda_codegens.h"
#include "compiler/base/status_macros.h"
#include "compiler/cuda/caching_compilation_provider.h"
#include "compiler/cuda/nvrtc_compilation_provider.h"
#include "kernels/op_key.h"
#include "kernels/runtime/driver_api.h"

namespace tiletune {

struct Library::Entry {
  LaunchInfo info;
  // One of the two is set.
  std::unique_ptr<CopyKernel> kernel;
  std::unique_ptr<Im2colKernel> im2col;
  // CopyKernel::Launch caches tensor maps: one launching thread at a time.
  absl::Mutex launch_mutex;
};

struct Library::Device {
  std::unique_ptr<Context> context;
  autotune::DeviceIdentity identity;
  absl::Mutex mutex;
  absl::flat_hash_map<std::string, std::unique_ptr<Entry>> entries ABSL_GUARDED_BY(mutex);
};

Library::Library(LibraryOptions options, absl::Status database_status,
                 std::unique_ptr<TunedResolver> resolver,
                 std::unique_ptr<CompilationProvider> compiler)
    : options_(std::move(options)),
      database_status_(std::move(database_status)),
      resolver_(std::move(resolver)),
      compiler_(std::move(compiler)) {}

Library::~Library() = default;

absl::StatusOr<std::unique_ptr<Library>> Library::Create(LibraryOptions options) {
  if (options.registry == nullptr) {
    options.registry = std::make_shared<DeviceCodegenRegistry>();
    TT_RETURN_IF_ERROR(RegisterBuiltinCudaCodegens(*options.registry));
  }
  std::string path = options.database_path;
  if (path.empty()) {
    if (const char* env = std::getenv("TILETUNE_DB")) path = env;
  }
  TunedResolver::Options resolver_options;
  resolver_options.registry = options.registry.get();
  absl::Status database_status = absl::OkStatus();
  if (!path.empty()) {
    absl::StatusOr<autotune::TuningDatabase> database = autotune::ReadTuningDatabase(path);
    if (database.ok()) {
      resolver_options.databases.push_back(*std::move(database));
    } else {
      database_status = database.status();
      std::fprintf(stderr,
                   "tiletune: not using tuning database %s: %s; falling back to nearest "
                   "records and built-in heuristics\n",
                   path.c_str(), std::string(database_status.message()).c_str());
    }
  }
  TT_ASSIGN_OR_RETURN(auto resolver, TunedResolver::Create(std::move(resolver_options)));
  TT_ASSIGN_OR_RETURN(auto nvrtc, NvrtcCompilationProvider::Create());
  CachingCompilationProvider::Options cache;
  cache.inner = std::move(nvrtc);
  cache.disk_directory =
      options.cache_directory.empty() ? DefaultCacheDirectory() : options.cache_directory;
  auto compiler = CachingCompilationProvider::Create(std::move(cache));
  if (!compiler.ok()) {
    // An unwritable cache folder costs compile time, not correctness.
    CachingCompilationProvider::Options memory_only;
    TT_ASSIGN_OR_RETURN(memory_only.inner, NvrtcCompilationProvider::Create());
    compiler = CachingCompilationProvider::Create(std::move(memory_only));
  }
  TT_RETURN_IF_ERROR(compiler.status());
  return std::unique_ptr<Library>(new Library(std::move(options), std::move(database_status),
                                              std::move(resolver), *std::move(compiler)));
}

absl::StatusOr<Library::Device*> Library::CurrentDevice() {
  TT_ASSIGN_OR_RETURN(const DriverApi* cu, LoadDriver());
  CUcontext current = nullptr;
  TT_RETURN_IF_ERROR(ToStatus(cu->cuCtxGetCurrent(&current), "cuCtxGetCurrent"));
  int ordinal = 0;
  if (current != nullptr) {
    CUdevice device = 0;
    TT_RETURN_IF_ERROR(ToStatus(cu->cuCtxGetDevice(&device), "cuCtxGetDevice"));
    ordinal = static_cast<int>(device);
  }
  absl::MutexLock lock(&mutex_);
  auto it = devices_.find(ordinal);
  if (it != devices_.end()) return it->second.get();
  auto device = std::make_unique<Device>();
  TT_ASSIGN_OR_RETURN(device->context, Context::Create(ordinal));
  const DeviceInfo& info = device->context->info();
  device->identity.set_name(info.name);
  device->identity.set_cc_major(info.cc_major);
  device->identity.set_cc_minor(info.cc_minor);
  device->identity.set_sm_count(info.sm_count);
  device->identity.set_uuid(info.uuid);
  Device* raw = device.get();
  devices_.emplace(ordinal, std::move(device));
  return raw;
}

absl::StatusOr<Library::Entry*> Library::FindOrBuild(
    Device& device, absl::string_view key,
    const std::function<absl::StatusOr<std::unique_ptr<Entry>>()>& make) {
  {
    absl::MutexLock lock(&device.mutex);
    auto it = device.entries.find(key);
    if (it != device.entries.end()) return it->second.get();
  }
  std::string owned(key);  // `key` may be the caller's reusable buffer
  // Resolve and compile outside the lock; a racing thread may do the same work once.
  TT_ASSIGN_OR_RETURN(std::unique_ptr<Entry> entry, make());
  if (options_.verbosity >= 1) {
    std::fprintf(stderr, "tiletune: %s on %s: %s\n",
                 ResolutionLevelName(entry->info.level).c_str(), device.identity.name().c_str(),
                 entry->info.resolution_detail.c_str());
  }
  absl::MutexLock lock(&device.mutex);
  auto [it, inserted] = device.entries.emplace(std::move(owned), std::move(entry));
  return it->second.get();
}

absl::StatusOr<Library::Entry*> Library::Lookup(Device& device, const CopyOp& op) {
  thread_local std::string key;
  CopyOpKey(op, key);
  return FindOrBuild(device, key, [&]() -> absl::StatusOr<std::unique_ptr<Entry>> {
    TT_ASSIGN_OR_RETURN(Resolution resolution, resolver_->Resolve(device.identity, op));
    TT_ASSIGN_OR_RETURN(BuiltKernel built,
                        resolution.codegen->BuildWithoutCompile(resolution.request));
    auto entry = std::make_unique<Entry>();
    TT_ASSIGN_OR_RETURN(entry->kernel,
                        CopyKernel::Create(*device.context, built.lowered, *compiler_));
    const LoweredCopy& lowered = entry->kernel->lowered();
    entry->info = LaunchInfo{resolution.level,     resolution.detail, resolution.codegen->name(),
                             lowered.kernel_name, lowered.path,      lowered.launch};
    return entry;
  });
}

absl::StatusOr<Library::Entry*> Library::Lookup(Device& device, const Im2colOp& op) {
  thread_local std::string key;
  Im2colOpKey(op, key);
  return FindOrBuild(device, key, [&]() -> absl::StatusOr<std::unique_ptr<Entry>> {
    TT_ASSIGN_OR_RETURN(Im2colResolution resolution,
                        resolver_->ResolveIm2col(device.identity, op));
    TT_ASSIGN_OR_RETURN(BuiltIm2col built,
                        resolution.codegen->BuildIm2colWithoutCompile(resolution.request));
    auto entry = std::make_unique<Entry>();
    TT_ASSIGN_OR_RETURN(entry->im2col,
                        Im2colKernel::Create(*device.context, built.lowered, *compiler_));
    const LoweredIm2col& lowered = entry->im2col->lowered();
    entry->info = LaunchInfo{resolution.level,     resolution.detail, resolution.codegen->name(),
                             lowered.kernel_name, lowered.path,      lowered.launch};
    return entry;
  });
}

absl::Status Library::Copy(const CopyOp& op, CUdeviceptr src, CUdeviceptr dst, CUstream stream) {
  TT_ASSIGN_OR_RETURN(Device * device, CurrentDevice());
  TT_ASSIGN_OR_RETURN(Entry * entry, Lookup(*device, op));
  absl::MutexLock lock(&entry->launch_mutex);
  return entry->kernel->Launch(src, dst, stream);
}

absl::Status Library::Im2col(const Im2colOp& op, CUdeviceptr img, CUdeviceptr col,
                             CUstream stream) {
  TT_ASSIGN_OR_RETURN(Device * device, CurrentDevice());
  TT_ASSIGN_OR_RETURN(Entry * entry, Lookup(*device, op));
  absl::MutexLock lock(&entry->launch_mutex);
  return entry->im2col->Launch(img, col, stream);
}

absl::StatusOr<LaunchInfo> Library::Inspect(const CopyOp& op) {
  TT_ASSIGN_OR_RETURN(Device * device, CurrentDevice());
  TT_ASSIGN_OR_RETURN(Entry * entry, Lookup(*device, op));
  return entry->info;
}

absl::StatusOr<LaunchInfo> Library::Inspect(const Im2colOp& op) {
  TT_ASSIGN_OR_RETURN(Device * device, CurrentDevice());
  TT_ASSIGN_OR_RETURN(Entry * entry, Lookup(*device, op));
  return entry->info;
}

namespace {

absl::StatusOr<Library*> DefaultLibrary() {
  static const absl::StatusOr<std::unique_ptr<Library>>* const library =
      new absl::StatusOr<std::unique_ptr<Library>>(Library::Create({}));
  if (!library->ok()) return library->status();
  return library->value().get();
}

}  // namespace

absl::Status Copy(const CopyOp& op, CUdeviceptr src, CUdeviceptr dst, CUstream stream) {
  TT_ASSIGN_OR_RETURN(Library * library, DefaultLibrary());
  return library->Copy(op, src, dst, stream);
}

absl::Status Im2col(const Im2colOp& op, CUdeviceptr img, CUdeviceptr col, CUstream stream) {
  TT_ASSIGN_OR_RETURN(Library * library, DefaultLibrary());
  return library->Im2col(op, img, col, stream);
}

}  // namespace tiletune

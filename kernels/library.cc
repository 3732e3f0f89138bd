#include "kernels/library.h"

#include <cstdio>
#include <cstdlib>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include <algorithm>
#include <chrono>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "compiler/backend/cuda/cuda_codegens.h"
#include "compiler/base/status_macros.h"
#include "compiler/cuda/caching_compilation_provider.h"
#include "compiler/cuda/nvrtc_compilation_provider.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/ops/candidates.h"
#include "compiler/tuning_db/append.h"
#include "compiler/tuning_db/tuning_db.h"
#include "kernels/runtime/driver_api.h"
#include "kernels/runtime/runtime.h"
#include "kernels/builtin_cost_models.h"
#include "kernels/database_stack.h"
#include "kernels/miss_recorder.h"
#include "kernels/prebuilt.h"
#include "kernels/tile_kernel.h"
#include "kernels/measure.h"
#include "kernels/tune_on_miss.h"

namespace tiletune {

struct Library::Entry {
  LaunchInfo info;
  std::unique_ptr<TileKernel> kernel;
  // TileKernel::Launch caches tensor maps: one launching thread at a time.
  absl::Mutex launch_mutex;
  // Tuning on a miss under way: the candidates compile in the background while `kernel`
  // (the resolver's choice, whose source is kernel_source) runs; the first launch after
  // they are in measures them (Library::FinishMiss). Set before the entry is published.
  std::unique_ptr<MissTuner> tuner;
  std::string kernel_source;
  // Not OK when tuning found that `kernel` gives wrong results: every launch then fails
  // with it.
  absl::Status broken;
};

struct Library::Device {
  using Lru = std::list<std::pair<std::string, std::shared_ptr<Entry>>>;
  std::unique_ptr<Context> context;
  tuning::DeviceIdentity identity;
  // The baked CUBINs of this device's architecture, loaded when the device was first
  // used (LibraryOptions::preload_baked); kernels share them. Written before the device
  // is published, read-only after.
  absl::flat_hash_map<const PrebuiltKernelImage*, std::shared_ptr<const Module>> baked;
  absl::Mutex mutex;
  // Most recently used first.
  Lru lru ABSL_GUARDED_BY(mutex);
  absl::flat_hash_map<std::string, Lru::iterator> entries ABSL_GUARDED_BY(mutex);
  // Entries a tuning on a miss replaced, kept loaded for the library's life: a CUDA graph
  // captured before the swap still launches their kernels.
  std::vector<std::shared_ptr<Entry>> retired ABSL_GUARDED_BY(mutex);
  // Tuning on a miss measures one problem at a time on this device (timings must not
  // overlap), with the compare kernel made on the first.
  absl::Mutex tune_mutex;
  std::unique_ptr<DeviceCheck> check ABSL_GUARDED_BY(tune_mutex);
  // What tuning on a miss found, by cache key: each problem's winner, and the problems
  // whose resolved kernel gave wrong results (never launched again).
  absl::Mutex tuned_mutex;
  absl::flat_hash_map<std::string, Trial> tuned ABSL_GUARDED_BY(tuned_mutex);
  absl::flat_hash_map<std::string, absl::Status> broken ABSL_GUARDED_BY(tuned_mutex);
};

// The JIT, created on first use: a library whose kernels are all baked never loads NVRTC.
class Library::LazyJit final : public CompilationProvider {
 public:
  void Configure(bool enabled, std::string cache_directory) {
    enabled_ = enabled;
    cache_directory_ = std::move(cache_directory);
  }
  std::string Name() const override { return "nvrtc (loaded on first use)"; }
  absl::StatusOr<Ptx> CompileToPtx(const CudaSource& source,
                                   const CompileOptions& options) override {
    TT_ASSIGN_OR_RETURN(CompilationProvider * inner, Inner());
    return inner->CompileToPtx(source, options);
  }
  absl::StatusOr<Cubin> CompileToCubin(const CudaSource& source,
                                       const CompileOptions& options) override {
    TT_ASSIGN_OR_RETURN(CompilationProvider * inner, Inner());
    return inner->CompileToCubin(source, options);
  }

 private:
  absl::StatusOr<CompilationProvider*> Inner() {
    if (!enabled_) {
      return absl::UnimplementedError(
          absl::StrCat("compiling ", "needs the JIT, which is off (LibraryOptions::jit, TILETUNE_JIT=0)"));
    }
    absl::MutexLock lock(&mutex_);
    if (inner_ != nullptr) return inner_.get();
    if (!made_.ok()) return made_;  // NVRTC failed to load once: the same answer.
    absl::StatusOr<std::unique_ptr<NvrtcCompilationProvider>> nvrtc =
        NvrtcCompilationProvider::Create();
    if (!nvrtc.ok()) {
      made_ = nvrtc.status();
      return made_;
    }
    CachingCompilationProvider::Options cache;
    cache.inner = *std::move(nvrtc);
    cache.disk_directory = cache_directory_.empty() ? DefaultCacheDirectory() : cache_directory_;
    // An unusable cache folder costs compile time and one warning, not correctness.
    auto compiler = CachingCompilationProvider::Create(std::move(cache));
    TT_RETURN_IF_ERROR(compiler.status());
    inner_ = *std::move(compiler);
    return inner_.get();
  }

  bool enabled_ = true;
  std::string cache_directory_;
  absl::Mutex mutex_;
  absl::Status made_ ABSL_GUARDED_BY(mutex_);
  std::unique_ptr<CompilationProvider> inner_ ABSL_GUARDED_BY(mutex_);
};

Library::Library(LibraryOptions options, absl::Status database_status,
                 std::string database_origin, std::unique_ptr<TunedResolver> resolver,
                 std::unique_ptr<LazyJit> jit)
    : options_(std::move(options)),
      database_status_(std::move(database_status)),
      database_origin_(std::move(database_origin)),
      resolver_(std::move(resolver)),
      jit_(std::move(jit)),
      work_(options_.tune_on_miss_ms > 0 && options_.jit ? std::make_unique<WorkQueue>()
                                                          : nullptr) {}

const PrebuiltKernelImage* Library::FindPrebuilt(const BuiltKernel& built) const {
  if (prebuilt_.empty()) return nullptr;
  auto it = prebuilt_.find(built.source.text);
  if (it == prebuilt_.end()) return nullptr;
  const Target& target = built.lowered->target;
  const std::string arch = target.ArchName();
  // The CUBIN for the target; else PTX, which runs on its virtual architecture and every
  // newer one: the newest not newer than the target.
  const PrebuiltKernelImage* best = nullptr;
  int best_arch = 0;
  for (const PrebuiltKernelImage* image : it->second) {
    if (arch == image->arch) return image;
    int virtual_arch = 0;
    absl::string_view name = image->arch;
    if (absl::ConsumePrefix(&name, "compute_") &&
        absl::SimpleAtoi(name, &virtual_arch) && virtual_arch <= target.arch() &&
        virtual_arch > best_arch) {
      best = image;
      best_arch = virtual_arch;
    }
  }
  return best;
}

absl::StatusOr<Resolution> Library::Resolve(const tuning::DeviceIdentity& device,
                                            const TileOp& op) const {
  TT_ASSIGN_OR_RETURN(Resolution resolution, resolver_->Resolve(device, op));
  if (misses_ != nullptr && (resolution.level != ResolutionLevel::kExact || resolution.stale)) {
    absl::StatusOr<std::string> spec = options_.ops->FormatSpec(op);
    if (spec.ok()) {
      misses_->Record(*spec, absl::StrCat(ResolutionLevelName(resolution.level), " on ",
                                          device.name(), ": ", resolution.detail));
    } else {
      misses_->Record(absl::StrCat("# ", (*options_.ops->For(op))->Describe(op)),
                      absl::StrCat("not a spec: ", spec.status().message()));
    }
  }
  return resolution;
}

absl::StatusOr<std::vector<TunedResolver::NearbyEstimate>> Library::Estimates(
    const TileOp& op, const tuning::DeviceIdentity& device) const {
  return resolver_->NearbyEstimates(device, op);
}

absl::StatusOr<Explanation> Library::Explain(const TileOp& op,
                                             const tuning::DeviceIdentity& device) const {
  TT_ASSIGN_OR_RETURN(Resolution resolution, Resolve(device, op));
  return ExplanationOf(resolution);
}

absl::StatusOr<std::vector<Explanation>> Library::Alternatives(
    const TileOp& op, const tuning::DeviceIdentity& device, int count) const {
  if (count < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("asked for ", count, " alternatives; accepted is 1 or more"));
  }
  TT_ASSIGN_OR_RETURN(std::vector<Resolution> resolutions,
                      resolver_->Alternatives(device, op, static_cast<size_t>(count)));
  std::vector<Explanation> out;
  for (const Resolution& resolution : resolutions) out.push_back(ExplanationOf(resolution));
  return out;
}

Explanation Library::ExplanationOf(const Resolution& resolution) const {
  const BuiltKernel& built = resolution.built;
  Explanation out;
  out.level = resolution.level;
  out.detail = resolution.detail;
  out.database = resolution.origin;
  const PrebuiltKernelImage* image = FindPrebuilt(built);
  out.prebuilt = image != nullptr;
  if (image != nullptr) out.prebuilt_arch = image->arch;
  out.kernel_name = built.lowered->kernel_name;
  out.hints = resolution.request.op->hints;
  out.launch = built.lowered->launch;
  out.num_tiles = built.lowered->num_tiles;
  out.shared_bytes = built.lowered->shared_bytes;
  out.variant = tuning::DescribeVariant(VariantOf(out.hints, *built.lowered, ""));
  out.chosen_by_model = resolution.chosen_by_model;
  return out;
}

namespace {

// A 0/1 switch in environment variable `name`: none when unset or empty; InvalidArgument
// naming the value and `accepted` otherwise.
absl::StatusOr<std::optional<bool>> SwitchFromEnvironment(const char* name,
                                                          absl::string_view accepted) {
  const char* env = std::getenv(name);
  if (env == nullptr || *env == '\0') return std::optional<bool>();
  const std::string value(env);
  if (value != "0" && value != "1") {
    return absl::InvalidArgumentError(
        absl::StrCat(name, "='", value.substr(0, 40), "': accepted are ", accepted));
  }
  return std::optional<bool>(value == "1");
}

// The stack LibraryOptions (and the environment) ask for.
absl::StatusOr<DatabaseStackOptions> StackOptions(LibraryOptions& options) {
  DatabaseStackOptions stack;
  stack.baked = options.prebuilt != nullptr ? *options.prebuilt : PrebuiltKernelSets();
  stack.listed = options.databases;
  if (stack.listed.empty()) {
    if (const char* env = std::getenv("TILETUNE_DB"); env != nullptr && *env != '\0') {
      stack.listed = absl::StrSplit(env, ':', absl::SkipEmpty());
    }
  }
  if (!options.user_directory.has_value()) options.user_directory = DefaultUserDirectory();
  stack.user_directory = *options.user_directory;
  if (options.tune_on_miss_database.empty() && !stack.user_directory.empty()) {
    options.tune_on_miss_database = absl::StrCat(stack.user_directory, "/", kTunedOnMissFile);
  }
  stack.tuned_on_miss_database = options.tune_on_miss_database;
  TT_ASSIGN_OR_RETURN(std::optional<bool> builtin,
                      SwitchFromEnvironment("TILETUNE_BUILTIN_DB",
                                            "0 (leave the built-in databases out) and 1"));
  if (builtin.has_value() && !*builtin) options.builtin = false;
  if (options.builtin) {
    if (options.shipped.has_value()) {
      stack.builtin = *std::move(options.shipped);
      options.shipped.reset();
    } else {
      stack.builtin = ShippedDatabases();
    }
  }
  stack.validator = options.ops->RecordValidator();
  return stack;
}

}  // namespace

Library::~Library() = default;

absl::StatusOr<std::unique_ptr<Library>> Library::Create(LibraryOptions options) {
  if (options.ops == nullptr) options.ops = &BuiltinTileOps();
  if (options.registry == nullptr) {
    options.registry = std::make_shared<DeviceCodegenRegistry>();
    TT_RETURN_IF_ERROR(RegisterBuiltinCudaCodegens(*options.registry, *options.ops));
  }
  if (options.tune_on_miss_ms < 0) {
    options.tune_on_miss_ms = 0;
    if (const char* env = std::getenv("TILETUNE_TUNE_ON_MISS"); env != nullptr && *env != 0) {
      int ms = kDefaultTuneOnMissMs;
      if (std::string(env) != "on" && (!absl::SimpleAtoi(env, &ms) || ms < 0 || ms > 600000)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "TILETUNE_TUNE_ON_MISS='", std::string(env).substr(0, 40),
            "': expected the milliseconds to spend timing a missed problem, 0 to 600000, or "
            "'on' for ", kDefaultTuneOnMissMs));
      }
      options.tune_on_miss_ms = ms;
    }
  }
  TT_ASSIGN_OR_RETURN(std::optional<bool> cost_model,
                      SwitchFromEnvironment("TILETUNE_COST_MODEL",
                                            "1 (run the variant of the nearby records the built-in "
                                            "cost model predicts fastest) and 0 (the nearest "
                                            "record's)"));
  if (cost_model.has_value()) options.cost_model = *cost_model;
  if (options.jit) {
    if (const char* env = std::getenv("TILETUNE_JIT"); env != nullptr && std::string(env) == "0") {
      options.jit = false;
    }
  }
  TT_ASSIGN_OR_RETURN(DatabaseStackOptions stack_options, StackOptions(options));
  DatabaseStack stack = LoadDatabaseStack(stack_options);
  TunedResolver::Options resolver_options;
  resolver_options.registry = options.registry.get();
  resolver_options.ops = options.ops;
  for (DatabaseLayer& layer : stack.layers) {
    resolver_options.origins.push_back(layer.origin);
    resolver_options.databases.push_back(std::move(layer.database));
  }
  // The built-in models: for selection when asked, else for reports (Estimates), which
  // go without them rather than fail the library.
  absl::StatusOr<std::vector<GpuCostModel>> models = BuiltinCostModels();
  if (options.cost_model && !models.ok()) return models.status();
  if (models.ok()) resolver_options.cost_models = *std::move(models);
  if (options.cost_model_file.empty()) {
    if (const char* env = std::getenv("TILETUNE_COST_MODEL_FILE")) options.cost_model_file = env;
  }
  if (!options.cost_model_file.empty()) {
    // The file's model answers for its GPU first.
    TT_ASSIGN_OR_RETURN(GpuCostModel file, CostModelFromFile(options.cost_model_file));
    resolver_options.cost_models.insert(resolver_options.cost_models.begin(), std::move(file));
  }
  resolver_options.select_by_model = options.cost_model;
  resolver_options.model_margin = options.cost_model_margin;
  // Kernels baked into the program, by their source.
  absl::flat_hash_map<absl::string_view, std::vector<const PrebuiltKernelImage*>> images;
  for (const PrebuiltKernelSet* set : stack_options.baked) {
    for (size_t i = 0; i < set->image_count; ++i) {
      images[set->images[i].source].push_back(&set->images[i]);
    }
  }
  absl::Status database_status = stack.status;
  const std::string origin = DescribeStack(stack);
  std::string misses = options.record_misses;
  if (misses.empty() && options.record_misses_from_environment) {
    if (const char* env = std::getenv("TILETUNE_RECORD_MISSES")) misses = env;
  }
  TT_ASSIGN_OR_RETURN(auto resolver, TunedResolver::Create(std::move(resolver_options)));
  auto library = std::unique_ptr<Library>(
      new Library(std::move(options), std::move(database_status), std::move(origin),
                  std::move(resolver), std::make_unique<LazyJit>()));
  library->prebuilt_ = std::move(images);
  if (!misses.empty()) library->misses_ = std::make_unique<MissRecorder>(misses);
  library->jit_->Configure(library->options_.jit, library->options_.cache_directory);
  return library;
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
  return DeviceFor(ordinal);
}

absl::StatusOr<Library::Device*> Library::DeviceFor(int ordinal) {
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
  if (options_.preload_baked) {
    const std::string arch = info.ArchName();
    for (const auto& [source, images] : prebuilt_) {
      for (const PrebuiltKernelImage* image : images) {
        if (arch != image->arch) continue;
        // One that does not load is loaded again on its problem's first call, which then
        // reports why.
        absl::StatusOr<std::unique_ptr<Module>> module = Module::Load(
            *device->context,
            absl::string_view(reinterpret_cast<const char*>(image->cubin), image->cubin_size));
        if (module.ok() && (*module)->LoadFunction(image->kernel_name).ok()) {
          device->baked.emplace(image, *std::move(module));
        }
      }
    }
  }
  Device* raw = device.get();
  devices_.emplace(ordinal, std::move(device));
  return raw;
}

absl::StatusOr<std::unique_ptr<Library::Entry>> Library::Build(Device& device, const TileOp& op) {
  const auto start = std::chrono::steady_clock::now();
  TT_ASSIGN_OR_RETURN(const TileOpDefinition* definition, options_.ops->For(op));
  TT_ASSIGN_OR_RETURN(Resolution resolution, Resolve(device.identity, op));
  bool tune = options_.jit && options_.tune_on_miss_ms > 0 &&
              (resolution.level != ResolutionLevel::kExact || resolution.stale);
  bool tuned_before = false;
  if (tune) {
    std::string key;
    definition->AppendKey(op, key);
    // A return after an eviction finds the winner, or that the kernel was wrong.
    absl::MutexLock tuned_lock(&device.tuned_mutex);
    if (auto wrong = device.broken.find(key); wrong != device.broken.end()) return wrong->second;
    auto known = device.tuned.find(key);
    if (known != device.tuned.end()) {
      std::unique_ptr<TileOp> resolved = op.Clone();
      resolved->hints = known->second.hints;
      resolution.request =
          CodegenRequest{std::move(resolved), known->second.launch, resolution.request.target};
      TT_ASSIGN_OR_RETURN(resolution.built,
                          resolution.codegen->BuildWithoutCompile(resolution.request));
      resolution.detail = "tuned on an earlier miss in this process";
      tuned_before = true;
      tune = false;
    }
  }
  auto entry = std::make_unique<Entry>();
  BuiltKernel& built = resolution.built;
  const PrebuiltKernelImage* image = FindPrebuilt(built);
  std::string baked_failure;
  if (image != nullptr) {
    absl::StatusOr<std::unique_ptr<TileKernel>> loaded;
    if (auto preloaded = device.baked.find(image); preloaded != device.baked.end()) {
      loaded = TileKernel::CreateFromModule(*device.context, built.lowered, built.source.text,
                                            preloaded->second);
    } else {
      Cubin cubin;
      cubin.bytes.assign(reinterpret_cast<const char*>(image->cubin), image->cubin_size);
      cubin.arch = image->arch;
      loaded = TileKernel::CreateFromCubin(*device.context, built.lowered, built.source.text, cubin);
    }
    if (loaded.ok()) {
      entry->kernel = *std::move(loaded);
    } else if (!options_.jit || absl::string_view(image->arch).substr(0, 8) != "compute_") {
      return loaded.status();
    } else {
      // The driver refused the baked PTX (e.g. a PTX version newer than it reads): the
      // JIT compiles the same kernel instead.
      baked_failure = absl::StrCat("; the baked ", image->arch, " PTX did not load (",
                                   loaded.status().message(), "), compiled instead");
      std::fprintf(stderr, "tiletune: %s%s\n", definition->Describe(op).c_str(),
                   baked_failure.c_str());
      image = nullptr;
    }
  }
  if (entry->kernel != nullptr) {
    // Loaded from the baked image.
  } else if (!options_.jit) {
    return absl::UnimplementedError(absl::StrCat(
        definition->Describe(op), " on ", device.identity.name(), ": no kernel baked for it (",
        ResolutionLevelName(resolution.level), " resolution: ", resolution.detail,
        ") and the JIT is off (LibraryOptions::jit, TILETUNE_JIT=0)"));
  } else {
    TT_ASSIGN_OR_RETURN(entry->kernel, TileKernel::Create(*device.context, *definition,
                                                          built.lowered, *jit_));
  }
  entry->info.prebuilt = image != nullptr;
  const LoweredTileKernel& lowered = entry->kernel->lowered();
  const bool prebuilt = entry->info.prebuilt;
  entry->info = LaunchInfo{resolution.level,
                           absl::StrCat(resolution.detail, baked_failure),
                           resolution.codegen->name(),
                           lowered.kernel_name,
                           lowered.path_name,
                           lowered.form_name,
                           lowered.launch};
  entry->info.prebuilt = prebuilt;
  entry->info.database = resolution.origin;
  if (image != nullptr) entry->info.prebuilt_arch = image->arch;
  entry->info.tuned_on_miss = tuned_before;
  if (tune) {
    // The candidates are listed and compiled in the background from now (after the kernel
    // that launches meanwhile, which they would slow), with the reference; the first launch
    // once they are in measures them.
    entry->kernel_source = resolution.built.source.text;
    const TunedResolver* resolver = resolver_.get();
    const size_t nearby = static_cast<size_t>(std::max(1, options_.tune_on_miss_candidates));
    const size_t searched = static_cast<size_t>(std::max(0, options_.tune_on_miss_searched));
    MissTuner::AlternativesMaker make = [resolver, identity = device.identity,
                                         listed = std::shared_ptr<TileOp>(op.Clone()), nearby,
                                         searched] {
      return resolver->Alternatives(identity, *listed, nearby, searched);
    };
    entry->tuner = std::make_unique<MissTuner>(*definition, op, std::move(make),
                                               std::move(resolution), *jit_, *work_);
  }
  entry->info.first_call_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return entry;
}

absl::StatusOr<std::shared_ptr<Library::Entry>> Library::FinishMiss(
    Device& device, const TileOpDefinition& definition, const TileOp& op,
    std::shared_ptr<Entry> entry, CUstream stream) {
  // Nothing is measured while a graph is being captured on the launching stream, or on a
  // blocking stream (which the legacy stream reports): synchronizing would end the
  // capture. The kernel that runs meanwhile is captured, and a later launch measures.
  const DriverApi& cu = device.context->api();
  for (CUstream asked : {stream, CU_STREAM_LEGACY}) {
    if (asked == nullptr) continue;
    CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
    if (cu.cuStreamIsCapturing(asked, &capture) != CUDA_SUCCESS ||
        capture != CU_STREAM_CAPTURE_STATUS_NONE) {
      return entry;
    }
  }
  if (!entry->tuner->Claim()) return entry;  // Another thread finishes it.
  if (absl::Status listed = entry->tuner->listing_status(); !listed.ok()) {
    std::fprintf(stderr, "tiletune: %s is not tuned on its miss: %s\n",
                 definition.Describe(op).c_str(),
                 std::string(listed.message()).substr(0, 300).c_str());
    return entry;
  }
  const auto start = std::chrono::steady_clock::now();
  absl::MutexLock tune_lock(&device.tune_mutex);  // Timings must not overlap.
  if (device.check == nullptr) {
    absl::StatusOr<std::unique_ptr<DeviceCheck>> check =
        DeviceCheck::Create(*device.context, *jit_);
    if (!check.ok()) {
      std::fprintf(stderr, "tiletune: %s is not tuned on its miss: no compare kernel (%s)\n",
                   definition.Describe(op).c_str(), std::string(check.status().message()).c_str());
      return entry;
    }
    device.check = *std::move(check);
  }
  absl::StatusOr<MissTuning> tuned =
      entry->tuner->Finish(*device.context, options_.tune_on_miss_ms, device.check.get());
  if (absl::IsAborted(tuned.status())) return tuned.status();  // The context faulted.
  std::string key;
  definition.AppendKey(op, key);
  auto replacement = std::make_shared<Entry>();
  if (!tuned.ok()) {
    if (!entry->tuner->GaveWrongResult(entry->kernel_source)) {
      // The kernel running meanwhile goes on; only the tuning is lost.
      std::fprintf(stderr, "tiletune: tuning %s on a miss failed (%s); launching the %s choice\n",
                   definition.Describe(op).c_str(),
                   std::string(tuned.status().message()).substr(0, 300).c_str(),
                   ResolutionLevelName(entry->info.level).c_str());
      return entry;
    }
    // The kernel running meanwhile gave wrong results and no other verified: it must not
    // run again, in this entry or one built after an eviction.
    replacement->broken = absl::DataLossError(absl::StrCat(
        definition.Describe(op), ": the resolved kernel ", entry->info.kernel_name,
        " gave wrong results when tuning on its miss checked it, and no other variant "
        "verified: ", tuned.status().message()));
    replacement->info = entry->info;
    absl::MutexLock tuned_lock(&device.tuned_mutex);
    device.broken.emplace(key, replacement->broken);
  } else {
    {
      absl::MutexLock tuned_lock(&device.tuned_mutex);
      device.tuned.emplace(key, Trial{tuned->resolution.request.op->hints,
                                      tuned->resolution.request.launch});
    }
    *tuned->record.mutable_device() = device.identity;
    if (!options_.tune_on_miss_database.empty()) {
      absl::StatusOr<int> appended = tuning::AppendTuningRecords(
          options_.tune_on_miss_database, {tuned->record}, options_.ops->RecordValidator());
      if (!appended.ok()) {
        // The kernel is good; only the next process loses it.
        std::fprintf(stderr, "tiletune: the variant tuned for %s is not saved: %s\n",
                     definition.Describe(op).c_str(),
                     std::string(appended.status().message()).c_str());
      }
    }
    replacement->kernel = std::move(tuned->kernel);
    const LoweredTileKernel& lowered = replacement->kernel->lowered();
    replacement->info = LaunchInfo{tuned->resolution.level, tuned->detail,
                                   tuned->resolution.codegen->name(), lowered.kernel_name,
                                   lowered.path_name, lowered.form_name, lowered.launch};
    replacement->info.tuned_on_miss = true;
    replacement->info.first_call_ms = entry->info.first_call_ms;
  }
  replacement->info.tuning_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  {
    absl::MutexLock lock(&device.mutex);
    auto it = device.entries.find(key);
    if (it != device.entries.end() && it->second->second == entry) {
      it->second->second = replacement;
    } else {
      // Evicted meanwhile: the replacement serves this call only, and its kernel may be
      // in flight when the call returns.
      device.retired.push_back(replacement);
    }
    // Its kernel may still run, or be in a captured graph: it stays loaded.
    device.retired.push_back(std::move(entry));
  }
  if (!replacement->broken.ok()) return replacement->broken;
  return replacement;
}

absl::StatusOr<std::shared_ptr<Library::Entry>> Library::Lookup(
    Device& device, const TileOpDefinition& definition, const TileOp& op) {
  // The key is written into a reused per-thread buffer: nothing is allocated per call.
  thread_local std::string key;
  key.clear();
  definition.AppendKey(op, key);
  {
    absl::MutexLock lock(&device.mutex);
    auto it = device.entries.find(key);
    if (it != device.entries.end()) {
      device.lru.splice(device.lru.begin(), device.lru, it->second);
      hits_.fetch_add(1, std::memory_order_relaxed);
      return it->second->second;
    }
  }
  std::string owned = key;
  // Resolve and compile outside the lock; a racing thread may do the same work once.
  TT_ASSIGN_OR_RETURN(std::unique_ptr<Entry> built, Build(device, op));
  std::shared_ptr<Entry> entry = std::move(built);
  if (options_.verbosity >= 1) {
    std::fprintf(stderr, "tiletune: %s on %s: %s\n",
                 ResolutionLevelName(entry->info.level).c_str(), device.identity.name().c_str(),
                 entry->info.resolution_detail.c_str());
  }
  // Entries dropped here (evicted, or ours when a racing thread won) are released after
  // the lock: unloading a module must not stall every other lookup.
  std::vector<std::shared_ptr<Entry>> dropped;
  int64_t evicted = 0;
  {
    absl::MutexLock lock(&device.mutex);
    auto it = device.entries.find(owned);
    if (it != device.entries.end()) {
      dropped.push_back(std::move(entry));
      entry = it->second->second;  // A racing thread's; ours goes.
    } else {
      device.lru.emplace_front(owned, entry);
      device.entries.emplace(std::move(owned), device.lru.begin());
      const size_t limit = std::max<size_t>(1, options_.max_kernels);
      while (device.lru.size() > limit) {
        dropped.push_back(std::move(device.lru.back().second));
        device.entries.erase(device.lru.back().first);
        device.lru.pop_back();
        ++evicted;
      }
    }
  }
  if (!dropped.empty()) {
    // An evicted kernel may still run on a caller's stream: let the device finish before
    // its module is unloaded (evictions are rare: the cache holds max_kernels).
    (void)device.context->Synchronize();
    dropped.clear();
  }
  builds_.fetch_add(1, std::memory_order_relaxed);
  evictions_.fetch_add(evicted, std::memory_order_relaxed);
  return entry;
}

absl::StatusOr<std::shared_ptr<Library::Entry>> Library::EntryToLaunch(
    Device& device, const TileOpDefinition& definition, const TileOp& op, CUstream stream) {
  TT_ASSIGN_OR_RETURN(std::shared_ptr<Entry> entry, Lookup(device, definition, op));
  if (entry->tuner != nullptr && entry->tuner->ready()) {
    TT_ASSIGN_OR_RETURN(entry, FinishMiss(device, definition, op, std::move(entry), stream));
  }
  if (!entry->broken.ok()) return entry->broken;
  return entry;
}

absl::Status Library::Launch(const TileOp& op, CUdeviceptr input, CUdeviceptr output,
                             CUstream stream) {
  TT_ASSIGN_OR_RETURN(Device * device, CurrentDevice());
  TT_ASSIGN_OR_RETURN(const TileOpDefinition* definition, options_.ops->For(op));
  TT_ASSIGN_OR_RETURN(std::shared_ptr<Entry> entry,
                      EntryToLaunch(*device, *definition, op, stream));
  // A miss validated the whole op; a hit shares its key with a valid op, so only what
  // the key leaves out, the regions' places, is checked here.
  TT_ASSIGN_OR_RETURN(RegionOffsets offsets, definition->Offsets(op));
  if (entry->kernel->lowered().item_table) {
    return absl::InvalidArgumentError(absl::StrCat(
        definition->Describe(op), " copies items listed in a device table: launch it with "
        "Library::LaunchItems(op, input, output, table, count, stream)"));
  }
  absl::MutexLock lock(&entry->launch_mutex);
  return entry->kernel->Launch(input, output, offsets, stream);
}

absl::Status Library::LaunchItems(const TileOp& op, CUdeviceptr input, CUdeviceptr output,
                                  CUdeviceptr table, int64_t count, CUstream stream) {
  TT_ASSIGN_OR_RETURN(Device * device, CurrentDevice());
  TT_ASSIGN_OR_RETURN(const TileOpDefinition* definition, options_.ops->For(op));
  TT_ASSIGN_OR_RETURN(std::shared_ptr<Entry> entry,
                      EntryToLaunch(*device, *definition, op, stream));
  TT_ASSIGN_OR_RETURN(RegionOffsets offsets, definition->Offsets(op));
  if (!entry->kernel->lowered().item_table) {
    return absl::InvalidArgumentError(absl::StrCat(
        definition->Describe(op), " takes no item table: launch it with Library::Launch"));
  }
  const ItemArgs items{table, count};
  absl::MutexLock lock(&entry->launch_mutex);
  return entry->kernel->Launch(input, output, offsets, stream, &items);
}

absl::StatusOr<KernelImage> Library::Prepare(const TileOp& op, int ordinal, bool jit) {
  const auto start = std::chrono::steady_clock::now();
  TT_ASSIGN_OR_RETURN(Device * device, DeviceFor(ordinal));
  TT_ASSIGN_OR_RETURN(const TileOpDefinition* definition, options_.ops->For(op));
  TT_ASSIGN_OR_RETURN(Resolution resolution, Resolve(device->identity, op));
  const BuiltKernel& built = resolution.built;
  KernelImage image;
  image.lowered = built.lowered;
  image.sm_count = device->context->info().sm_count;
  if (const PrebuiltKernelImage* baked = FindPrebuilt(built)) {
    image.cubin.assign(reinterpret_cast<const char*>(baked->cubin), baked->cubin_size);
    image.info.prebuilt = true;
    image.info.prebuilt_arch = baked->arch;
  } else if (!jit || !options_.jit) {
    return absl::UnimplementedError(absl::StrCat(
        definition->Describe(op), " on ", device->identity.name(), ": no kernel baked for it (",
        ResolutionLevelName(resolution.level), " resolution: ", resolution.detail,
        ") and the JIT is off"));
  } else {
    CompileOptions options;
    options.arch = built.lowered->target.ArchName();
    TT_ASSIGN_OR_RETURN(Cubin cubin, jit_->CompileToCubin(built.source, options));
    image.cubin = std::move(cubin.bytes);
  }
  const bool prebuilt = image.info.prebuilt;
  const std::string prebuilt_arch = image.info.prebuilt_arch;
  image.info = LaunchInfo{resolution.level,          resolution.detail,
                          resolution.codegen->name(), built.lowered->kernel_name,
                          built.lowered->path_name,   built.lowered->form_name,
                          built.lowered->launch};
  image.info.prebuilt = prebuilt;
  image.info.prebuilt_arch = prebuilt_arch;
  image.info.database = resolution.origin;
  TT_ASSIGN_OR_RETURN(image.offsets, definition->Offsets(op));
  image.info.first_call_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return image;
}

absl::StatusOr<LaunchInfo> Library::Inspect(const TileOp& op) {
  TT_ASSIGN_OR_RETURN(Device * device, CurrentDevice());
  TT_ASSIGN_OR_RETURN(const TileOpDefinition* definition, options_.ops->For(op));
  TT_ASSIGN_OR_RETURN(std::shared_ptr<Entry> entry, Lookup(*device, *definition, op));
  if (!entry->broken.ok()) return entry->broken;
  LaunchInfo info = entry->info;
  info.tuning_pending = entry->tuner != nullptr && !entry->tuner->claimed();
  info.tuning_ready = entry->tuner != nullptr && entry->tuner->ready();
  return info;
}

LibraryStats Library::stats() const {
  LibraryStats out;
  out.hits = hits_.load(std::memory_order_relaxed);
  out.builds = builds_.load(std::memory_order_relaxed);
  out.evictions = evictions_.load(std::memory_order_relaxed);
  absl::MutexLock lock(&mutex_);
  for (const auto& [ordinal, device] : devices_) {
    absl::MutexLock device_lock(&device->mutex);
    out.cached += static_cast<int64_t>(device->lru.size());
  }
  return out;
}

absl::StatusOr<Library*> DefaultLibrary() {
  static const absl::StatusOr<std::unique_ptr<Library>>* const library =
      new absl::StatusOr<std::unique_ptr<Library>>(Library::Create({}));
  if (!library->ok()) return library->status();
  return library->value().get();
}

absl::Status Launch(const TileOp& op, CUdeviceptr input, CUdeviceptr output, CUstream stream) {
  TT_ASSIGN_OR_RETURN(Library * library, DefaultLibrary());
  return library->Launch(op, input, output, stream);
}

}  // namespace tiletune

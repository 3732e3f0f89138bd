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
#include <optional>
#include <string>
#include <vector>

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
#include "kernels/prebuilt.h"
#include "kernels/shipped_databases.h"

namespace tiletune {

class MissRecorder;     // kernels/miss_recorder.h
class MissTuner;        // kernels/tune_on_miss.h
class WorkQueue;        // kernels/measure.h

// The timing budget of tuning on a miss when it is turned on without one.
inline constexpr int kDefaultTuneOnMissMs = 100;

struct LibraryOptions {
  // The databases are stacked (kernels/database_stack.h): baked kernels, then these, then
  // the user database folder, then the built-in databases; the first that holds a
  // problem's record answers (a lower one's, where that record is stale and the lower one
  // current: kernels/README.md).
  //
  // Tuning databases stacked over the user folder and the built-in ones, first wins; empty
  // means $TILETUNE_DB (':'-separated paths).
  std::vector<std::string> databases;
  // The user database folder, read automatically (every *.txtpb, *.textproto, *.pb in
  // it); nullopt means DefaultUserDirectory() ($TILETUNE_DB_DIR, else
  // $XDG_DATA_HOME/tiletune, else ~/.local/share/tiletune); "" means none.
  std::optional<std::string> user_directory;
  // Read the built-in databases under the others. False (or $TILETUNE_BUILTIN_DB=0)
  // leaves them out.
  bool builtin = true;
  // The built-in databases, taken by the library at Create; none means ShippedDatabases()
  // (kernels/shipped_databases.h: the H200 database tuned on autotune/suites/).
  std::optional<std::vector<ShippedDatabase>> shipped;
  // Choose among nearby records' variants with the built-in cost model of the GPU
  // (kernels/builtin_cost_models.h), where one is built in: a problem with no exact record
  // runs the kernel the model predicts fastest among the nearby records' variants (and, for
  // a model with trees, the operator's search space; compiler/backend/tuned_resolver.h), and
  // tuning on a miss measures them fastest predicted first. Off (the default, unless
  // $TILETUNE_COST_MODEL=1): the nearest record's variant, which measured faster on the
  // held-out suites with the H200 model as fitted (autotune/README.md).
  bool cost_model = false;
  // A cost model file (`autotune fit -o`, e.g. one fitted with --trees) that answers for
  // its GPU before the built-in models, in selection (cost_model) and in Estimates; empty
  // means $TILETUNE_COST_MODEL_FILE, empty again, none. A file that does not read fails
  // Library::Create, whether or not the library selects by a model: it was asked for.
  std::string cost_model_file;
  // With cost_model: how much faster than the nearest record's variant the model must
  // predict a kernel to run it instead (TunedResolver::Options::model_margin; 0.1: 10%).
  double cost_model_margin = 0;
  // Append each problem that resolves without an exact record, once, to this suite file
  // (kernels/miss_recorder.h); empty means $TILETUNE_RECORD_MISSES (unless
  // record_misses_from_environment is false); empty again, off.
  std::string record_misses;
  bool record_misses_from_environment = true;
  // Tune on a miss: the first launch of a problem with no exact record launches the
  // resolver's choice as without tuning, and starts listing and compiling up to
  // tune_on_miss_candidates variants (the nearest records', the heuristic, that choice)
  // and tune_on_miss_searched of the cost model's in the background, on one worker per
  // hardware thread for the whole library. The first
  // launch after they are in (not while a graph capture is detected) verifies each
  // bit-exact, times them for about this many milliseconds, launches the fastest from
  // then on and appends it to tune_on_miss_database, so the next process finds it exact.
  // 0 is off;
  // -1 (the default) means $TILETUNE_TUNE_ON_MISS: milliseconds, or "on" for
  // kDefaultTuneOnMissMs; unset, off.
  int tune_on_miss_ms = -1;
  int tune_on_miss_candidates = 6;
  // And up to this many of the operator's search space, the first as the GPU's cost model
  // ranks them (the built-in one or cost_model_file; none on a GPU with no model).
  int tune_on_miss_searched = 4;
  // Where records tuned on a miss are appended (under a lock, safe with other processes);
  // later processes read them back whether or not they tune on a miss. Empty means
  // <user folder>/tuned_on_miss.txtpb (none without a user folder).
  std::string tune_on_miss_database;
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
  // Loaded kernels kept per device; the least recently launched goes first beyond it, and
  // is unloaded: a CUDA graph that captured it must not be replayed after that (keep this
  // above the problems a program's graphs hold; kernels tuning on a miss replaced stay).
  size_t max_kernels = 256;
  // Compile with NVRTC what is not baked into the program (kernels/tiletune_kernels.bzl).
  // Off (or TILETUNE_JIT=0): a problem with no baked kernel is Unimplemented, naming it;
  // NVRTC is never loaded. On, NVRTC is still loaded only when something needs compiling.
  bool jit = true;
  // Load every baked CUBIN of a device's architecture (one module and its function each)
  // when the library first uses the device, so a baked problem's first call loads nothing;
  // off, each is loaded on its problem's first call.
  bool preload_baked = true;
  // The baked kernel sets to use; null means every one linked in (PrebuiltKernelSets()).
  const std::vector<const PrebuiltKernelSet*>* prebuilt = nullptr;
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
  // Host time of the first call: resolving, compiling or reading the compile cache, and
  // loading (with tuning on a miss, starting its compiles in the background).
  double first_call_ms = 0;
  // Whether this problem was tuned on its miss (resolution_detail then says what was
  // measured), and the host time of the call that measured the candidates.
  bool tuned_on_miss = false;
  double tuning_ms = 0;
  // Tuning on a miss is under way (Inspect): the kernel described here runs until a
  // launch measures the candidates, the first launch once they are compiled and their
  // reference made (tuning_ready). Inspect itself never measures.
  bool tuning_pending = false;
  bool tuning_ready = false;
  // Whether the kernel came baked into the program (no compiling), and the architecture
  // of the baked image: "sm_90a" (a CUBIN) or "compute_90" (PTX the driver compiled).
  bool prebuilt = false;
  std::string prebuilt_arch;
  // The database whose record answered (Explanation::database).
  std::string database;
};

// A resolved kernel, compiled (or baked) but not loaded: what a Plan (kernels/tiletune.h)
// loads into its own context.
struct KernelImage {
  LaunchInfo info;
  std::shared_ptr<const LoweredTileKernel> lowered;
  std::string cubin;
  RegionOffsets offsets;
  int sm_count = 0;
};

// How a problem resolves for a device, without one (Library::Explain).
struct Explanation {
  ResolutionLevel level = ResolutionLevel::kHeuristic;
  std::string detail;
  // The database whose record answered: a file, "//pkg:kernels (baked)" or
  // "kernels/tuned/h200.txtpb (built in)"; empty for the heuristic.
  std::string database;
  // A baked kernel serves it: launching needs no compiler. Its image's architecture:
  // "sm_90a" (a CUBIN) or "compute_90" (PTX the driver compiles on load).
  bool prebuilt = false;
  std::string prebuilt_arch;
  std::string kernel_name;
  // What it launches: the hints it lowers with (the record's, fitted to the problem), the
  // launch parameters, its tiles (the grid's CTAs, unless the
  // launch is persistent: ctas_per_sm) and each CTA's dynamic shared memory.
  Hints hints;
  LaunchParams launch;
  int64_t num_tiles = 0;
  int64_t shared_bytes = 0;
  // The same as a database describes a variant (tuning::DescribeVariant): path, form, tile,
  // threads, vector width and hints of the kernel as fitted to this problem.
  std::string variant;
  // The library's cost model chose it (LibraryOptions::cost_model, with a model of the GPU).
  bool chosen_by_model = false;
};

class Library {
 public:
  static absl::StatusOr<std::unique_ptr<Library>> Create(LibraryOptions options);
  ~Library();

  // Runs `op` (any registered operator) from `input` to `output` on `stream`.
  absl::Status Launch(const TileOp& op, CUdeviceptr input, CUdeviceptr output, CUstream stream);
  // Runs an operator whose items a launch lists (batch_copy): the first `count` entries of
  // the device item table at `table` (8-byte aligned; entries as the operator defines
  // them), between the pools at `input` and `output`. Launch refuses such an operator, and
  // this one the others.
  absl::Status LaunchItems(const TileOp& op, CUdeviceptr input, CUdeviceptr output,
                           CUdeviceptr table, int64_t count, CUstream stream);

  // How `op` resolves and what it launches on the current device (compiling it if it was
  // not cached yet; it starts tuning on a miss, and never measures).
  absl::StatusOr<LaunchInfo> Inspect(const TileOp& op);

  // `op` resolved for device `ordinal` and its kernel compiled (or found baked), not
  // loaded; with `jit` false (or LibraryOptions::jit false) a problem nothing baked
  // serves is Unimplemented, naming it. Not cached: each call resolves again (tuning on a
  // miss does not apply).
  absl::StatusOr<KernelImage> Prepare(const TileOp& op, int ordinal, bool jit);

  // How `op` resolves on a GPU of `device` (name and compute capability) and whether a
  // baked kernel serves it; needs no GPU and compiles nothing.
  absl::StatusOr<Explanation> Explain(const TileOp& op, const tuning::DeviceIdentity& device) const;
  // Up to `count` kernels the library chooses among for `op` on a GPU of `device`: the
  // exact record's variant, the nearby records' variants fitted to `op` (fastest predicted
  // first where the library selects by a cost model, nearest first otherwise) and the
  // operator's heuristic, each kernel once (TunedResolver::Alternatives). What Explain
  // answers is among them when `count` reaches past the records it weighs (a model with
  // trees also weighs the operator's search space, which is not listed here). A tuner
  // measures them so that a corpus holds what a selection among them launches
  // (`autotune replay`). InvalidArgument for a count below 1.
  absl::StatusOr<std::vector<Explanation>> Alternatives(const TileOp& op,
                                                        const tuning::DeviceIdentity& device,
                                                        int count) const;
  // The variants of the nearest records the library weighs for `op` on a GPU of `device`
  // (name, compute capability and SM count), each with the prediction of the GPU's
  // built-in cost model where one is built in, whether or not it selects by it
  // (LibraryOptions::cost_model); needs no GPU.
  absl::StatusOr<std::vector<TunedResolver::NearbyEstimate>> Estimates(
      const TileOp& op, const tuning::DeviceIdentity& device) const;

  // OK when every database asked for was loaded; otherwise why the first one left out
  // was (the others still serve).
  const absl::Status& database_status() const { return database_status_; }
  // What was loaded, highest precedence first: "/a.txtpb, //x:k (baked),
  // kernels/tuned/h200.txtpb (built in)".
  const std::string& database_origin() const { return database_origin_; }
  // Records in use (a record shadowed by a higher database's of the same key not counted).
  size_t database_records() const { return resolver_->record_count(); }

  LibraryStats stats() const;

 private:
  struct Device;
  struct Entry;
  class LazyJit;

  Library(LibraryOptions options, absl::Status database_status, std::string database_origin,
          std::unique_ptr<TunedResolver> resolver, std::unique_ptr<LazyJit> jit);
  // The baked image of `built`'s kernel, if one is linked in: the CUBIN for its target, or
  // else the PTX of the newest virtual architecture not newer than the target.
  const PrebuiltKernelImage* FindPrebuilt(const BuiltKernel& built) const;
  // What Explain says of a resolution.
  Explanation ExplanationOf(const Resolution& resolution) const;
  absl::StatusOr<Device*> CurrentDevice();
  absl::StatusOr<Device*> DeviceFor(int ordinal);
  // The cached entry for `op` on `device`, resolved, compiled and loaded on first use.
  // Shared: an eviction while another thread launches it keeps it alive.
  absl::StatusOr<std::shared_ptr<Entry>> Lookup(Device& device, const TileOpDefinition& definition,
                                                const TileOp& op);
  absl::StatusOr<std::unique_ptr<Entry>> Build(Device& device, const TileOp& op);
  // Lookup for a launch on `stream`: the first launch after a tuning on a miss has its
  // candidates in measures them (FinishMiss); a kernel found wrong is its error.
  absl::StatusOr<std::shared_ptr<Entry>> EntryToLaunch(Device& device,
                                                       const TileOpDefinition& definition,
                                                       const TileOp& op, CUstream stream);
  // resolver_->Resolve, recording a problem that had no exact record, or only a stale one (record_misses).
  absl::StatusOr<Resolution> Resolve(const tuning::DeviceIdentity& device, const TileOp& op) const;
  // Measures the candidates of `entry`'s tuning on a miss, whose compiles are in, unless
  // `stream` or a blocking stream is capturing a graph, or another thread does it: the
  // entry that launches from now on (the winner's, which replaces `entry` in the cache;
  // `entry` itself otherwise), or the DataLoss error every later launch gets when the
  // kernel `entry` ran gave wrong results and no other verified. The winner's record is
  // appended to tune_on_miss_database.
  absl::StatusOr<std::shared_ptr<Entry>> FinishMiss(Device& device,
                                                    const TileOpDefinition& definition,
                                                    const TileOp& op, std::shared_ptr<Entry> entry,
                                                    CUstream stream);

  LibraryOptions options_;
  absl::Status database_status_;
  std::string database_origin_;
  std::unique_ptr<TunedResolver> resolver_;
  std::unique_ptr<LazyJit> jit_;
  // Null unless misses are recorded.
  std::unique_ptr<MissRecorder> misses_;
  // The background work of tuning on a miss (compiles, references), when it is on;
  // destroyed (its workers joined) before jit_, which its compiles use.
  std::unique_ptr<WorkQueue> work_;
  // Baked kernel images by their kernel's CUDA source (views of the embedded text): the
  // CUBINs and PTX of one kernel share an entry.
  absl::flat_hash_map<absl::string_view, std::vector<const PrebuiltKernelImage*>> prebuilt_;
  mutable absl::Mutex mutex_;
  absl::flat_hash_map<int, std::unique_ptr<Device>> devices_ ABSL_GUARDED_BY(mutex_);
  // Counters, without a lock on the launch path.
  std::atomic<int64_t> hits_{0};
  std::atomic<int64_t> builds_{0};
  std::atomic<int64_t> evictions_{0};
};

// The process-wide Library, created with default options on first use.
absl::StatusOr<Library*> DefaultLibrary();

// Launch through a process-wide Library created with default options on first use.
absl::Status Launch(const TileOp& op, CUdeviceptr input, CUdeviceptr output, CUstream stream);

}  // namespace tiletune

#endif  // KERNELS_LIBRARY_H_

// bazel run //autotune                      tune the default suite for the local GPU
// bazel run //autotune -- --dry_run         compile and list the search space, no GPU
// bazel run //autotune -- merge A B -o OUT  merge tuning databases (autotune/merge_command.h)
//
// Flags: --problems="copy:f16:8192,8192;..." --output=PATH (.txtpb text, else binary)
// --devices=0,1 --shard=i/n (or from Slurm / Kubernetes) --target=sm_90a (dry run)
// --samples=N --cost_model=FILE|none --library_alternatives=N --report --simulate=SPEC (a
// simulated GPU, for tests). A run writes the database after every problem, so an
// interrupted run resumes where it stopped. Exit codes: 0 done, 1 failure, 2 bad flags,
// 3 no GPU.
//
// Each problem is tuned in a child process (a worker): a variant that faults the GPU
// poisons the process's CUDA context for good, so the worker reports it and exits, and the
// next worker runs without it. The supervisor also kills a worker whose variant makes no
// progress for --hang_seconds and records that variant as a hang.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "autotune/command_line.h"
#include "autotune/cuda_tuning_device.h"
#include "autotune/database_tools.h"
#include "autotune/evaluate.h"
#include "autotune/fit_command.h"
#include "autotune/merge_command.h"
#include "autotune/rank_command.h"
#include "autotune/replay_command.h"
#include "autotune/report.h"
#include "autotune/shard.h"
#include "autotune/simulated_device.h"
#include "autotune/suite.h"
#include "autotune/tuner.h"
#include "autotune/tuning_task.h"
#include "compiler/base/abbreviate.h"
#include "compiler/base/command_line.h"
#include "compiler/backend/tuned_resolver.h"
#include "compiler/base/status_macros.h"
#include "compiler/cuda/caching_compilation_provider.h"
#include "compiler/cuda/nvrtc_compilation_provider.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/ops/candidates.h"
#include "compiler/tuning_db/append.h"
#include "compiler/tuning_db/atomic_file.h"
#include "compiler/tuning_db/file_lock.h"
#include "compiler/tuning_db/measurement.h"
#include "compiler/tuning_db/tuning_db.h"
#include "kernels/library.h"
#include "kernels/runtime/runtime.h"
#include "kernels/builtin_cost_models.h"

ABSL_FLAG(std::string, problems, "", "';'-separated problem list (autotune/suite.h); empty: default suite");
ABSL_FLAG(std::string, suite, "", "A suite file: one problem spec per line, '#' comments.");
ABSL_FLAG(std::string, output, "tuning_db.txtpb", "Database to write (and resume from).");
ABSL_FLAG(std::string, devices, "0", "Comma-separated CUDA device ordinals to tune on.");
ABSL_FLAG(std::string, shard, "", "Tune slice i of n of the problems (i/n); default from env.");
ABSL_FLAG(bool, dry_run, false, "Build and compile the search space without a GPU.");
ABSL_FLAG(std::string, target, "sm_90a", "Target for --dry_run.");
ABSL_FLAG(int, samples, 5, "Samples per variant in the first measurement pass.");
ABSL_FLAG(std::string, cost_model, "",
          "A cost model (autotune fit -o), 'none', or empty for the GPU's built-in one.");
ABSL_FLAG(int, model_top_k, 0, "Candidates measured per search phase; 0: the model's own k.");
ABSL_FLAG(int, library_alternatives, 0, "Kernels the library chooses among, measured per problem.");
ABSL_FLAG(bool, report, true, "Write a Markdown report and SVG chart next to the database.");
ABSL_FLAG(int, hang_seconds, 60, "A variant running this long without progress is a hang.");
ABSL_FLAG(std::string, simulate, "",
          "Tune on a simulated GPU (for tests): seed=N,noise=F,fault=F,hang=F,wrong=F,name=..");
// `autotune evaluate` only.
ABSL_FLAG(std::string, database, "",
          "evaluate: the database under evaluation (default $TILETUNE_DB, else built in)");
ABSL_FLAG(std::string, tuned, "", "evaluate: the per-problem tuning to write and resume");
ABSL_FLAG(int, tune_on_miss, 0, "evaluate: tune on a miss with this budget (ms); 0 is off");
ABSL_FLAG(int, rounds, 15, "evaluate: timed rounds per problem");
// Internal: a worker process tunes one problem on one device (see RunWorker).
ABSL_FLAG(int, worker_problem, -1, "internal");
ABSL_FLAG(int, worker_device, 0, "internal");
ABSL_FLAG(std::string, worker_result, "", "internal");
ABSL_FLAG(std::string, worker_faults, "", "internal");
ABSL_FLAG(int, worker_parent, 0, "internal");

namespace tiletune {
namespace autotune {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kFaultExit = 42;
constexpr int kSkippedExit = 43;

int Fail(int code, const absl::Status& status) {
  std::fprintf(stderr, "autotune: %s\n", BoundedMessage(status.message()).c_str());
  return code;
}

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

std::string OutputPath() { return UserPath(absl::GetFlag(FLAGS_output)); }

// NVRTC behind the compile cache. NVRTC that cannot be loaded is an error naming the
// paths tried; a cache folder that cannot be used costs one warning (the cache says why)
// and compiling goes on in memory.
absl::StatusOr<std::unique_ptr<CompilationProvider>> MakeCompiler() {
  if (!absl::GetFlag(FLAGS_simulate).empty()) {
    return std::unique_ptr<CompilationProvider>(new SimulatedCompilationProvider());
  }
  TT_ASSIGN_OR_RETURN(auto nvrtc, NvrtcCompilationProvider::Create());
  CachingCompilationProvider::Options options;
  options.inner = std::move(nvrtc);
  options.disk_directory = DefaultCacheDirectory();
  TT_ASSIGN_OR_RETURN(auto cached, CachingCompilationProvider::Create(std::move(options)));
  return std::unique_ptr<CompilationProvider>(std::move(cached));
}

// The full space of a problem: the first phase's trials, then every hint set of it at
// every launch of the second.
std::vector<Trial> FullSpace(const TuningTask& task) {
  std::vector<Trial> trials = task.space.first;
  std::map<std::string, const Hints*> hint_sets;
  for (const Trial& trial : task.space.first) {
    std::string key;
    AppendHintsKey(trial.hints, key);
    hint_sets.emplace(key, &trial.hints);
  }
  for (const auto& [key, hints] : hint_sets) {
    for (const LaunchParams& launch : task.space.launches) trials.push_back({*hints, launch});
  }
  return trials;
}

int DryRun(const TileOpRegistry& ops, const std::vector<SuiteProblem>& problems) {
  absl::StatusOr<Target> target = Target::Parse(absl::GetFlag(FLAGS_target));
  if (!target.ok()) return Fail(2, target.status());
  absl::StatusOr<std::unique_ptr<CompilationProvider>> made = MakeCompiler();
  if (!made.ok()) return Fail(1, made.status());
  std::unique_ptr<CompilationProvider> compiler = *std::move(made);
  if (absl::Status arch = compiler->CheckArch(target->ArchName()); !arch.ok()) {
    return Fail(2, absl::InvalidArgumentError(absl::StrCat("--target: ", arch.message())));
  }
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  size_t done = 0;
  int failed_problems = 0;
  for (const SuiteProblem& problem : problems) {
    auto start = Clock::now();
    std::fprintf(stderr, "autotune: dry run %zu of %zu: %s\n", ++done, problems.size(),
                 DescribeProblem(ops, *problem).c_str());
    absl::StatusOr<TuningTask> task = MakeTask(ops, *problem, *target);
    if (!task.ok()) return Fail(1, task.status());
    absl::StatusOr<CandidateSet> set =
        BuildCandidates(*task->definition, *task->op, *target, FullSpace(*task));
    if (!set.ok()) return Fail(1, set.status());
    std::atomic<size_t> next{0};
    std::atomic<int> errors{0};
    CompileOptions options;
    options.arch = target->ArchName();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&] {
        for (size_t i = next++; i < set->candidates.size(); i = next++) {
          if (!compiler->CompileToCubin(set->candidates[i].source, options).ok()) ++errors;
        }
      });
    }
    for (auto& thread : pool) thread.join();
    std::map<std::string, int> per_path;
    for (const Candidate& c : set->candidates) {
      ++per_path[c.lowered->form_name.empty()
                     ? c.lowered->path_name
                     : absl::StrCat(c.lowered->path_name, "/", c.lowered->form_name)];
    }
    std::printf("%s on %s: %d combinations, %d pruned, %d duplicates, %zu distinct kernels "
                "(%s), %d compile errors, %.1f s\n",
                task->description.c_str(), target->ArchName().c_str(), set->enumerated,
                set->pruned, set->duplicates, set->candidates.size(),
                absl::StrJoin(per_path, ", ", absl::PairFormatter(" ")).c_str(), errors.load(),
                Seconds(start));
    std::fflush(stdout);
    if (errors.load() > 0) ++failed_problems;
  }
  if (failed_problems > 0) {
    std::fprintf(stderr, "autotune: dry run: %d problem(s) had variants that do not compile\n",
                 failed_problems);
    return 1;
  }
  return 0;
}

std::string ReadSelfPath() {
  char buffer[4096] = {};
  ssize_t n = readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  return n > 0 ? std::string(buffer, n) : std::string("autotune");
}

// Runs `args` as a child process with this environment and returns its exit code. When
// `pending_path` names the same variant for longer than `hang_seconds` the child is
// killed, the variant is appended to `faults_path` as a hang, and kFaultExit returned.
int Spawn(const std::vector<std::string>& args, const std::string& pending_path,
          const std::string& faults_path, int hang_seconds) {
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::remove(pending_path.c_str());
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) return -1;
  std::string last;
  auto since = Clock::now();
  while (true) {
    int status = 0;
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (done < 0) return -1;
    absl::StatusOr<std::string> pending = tuning::ReadFileToString(pending_path);
    std::string current(absl::StripAsciiWhitespace(pending.ok() ? *pending : ""));
    if (current != last) {
      last = current;
      since = Clock::now();
    } else if (!current.empty() && Seconds(since) > hang_seconds) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      std::ofstream(faults_path, std::ios::app)
          << current << "\tno progress for " << hang_seconds << " s: killed as a hang\n";
      std::fprintf(stderr, "\nautotune: variant %s hung for %d s; killed\n",
                   current.substr(0, 12).c_str(), hang_seconds);
      return kFaultExit;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// The device a worker tunes on: the simulated one, or the GPU of --worker_device (whose
// context `context` keeps).
absl::StatusOr<std::unique_ptr<TuningDevice>> MakeDevice(std::unique_ptr<Context>& context,
                                                         CompilationProvider& compiler) {
  const std::string simulate = absl::GetFlag(FLAGS_simulate);
  if (!simulate.empty()) {
    TT_ASSIGN_OR_RETURN(SimulatedDeviceOptions options, ParseSimulation(simulate));
    return std::unique_ptr<TuningDevice>(new SimulatedDevice(std::move(options)));
  }
  TT_ASSIGN_OR_RETURN(context, Context::Create(absl::GetFlag(FLAGS_worker_device)));
  TT_ASSIGN_OR_RETURN(auto device, CudaTuningDevice::Create(*context, compiler));
  return std::unique_ptr<TuningDevice>(std::move(device));
}

std::map<std::string, std::string> ReadFaults(const std::string& faults_path) {
  std::map<std::string, std::string> faulted;
  if (absl::StatusOr<std::string> lines = tuning::ReadFileToString(faults_path); lines.ok()) {
    for (absl::string_view line : absl::StrSplit(*lines, '\n', absl::SkipEmpty())) {
      std::vector<std::string> parts = absl::StrSplit(line, absl::MaxSplits('\t', 1));
      if (parts.size() == 2) faulted[parts[0]] = parts[1];
    }
  }
  return faulted;
}

// Whether the database at the output path already holds a record for `probe`.
bool AlreadyTuned(const TileOpRegistry& ops, const tuning::TuningRecord& probe) {
  tuning::ReadOptions read;
  read.semantics = ops.RecordValidator();
  absl::StatusOr<tuning::TuningDatabase> existing = tuning::ReadTuningDatabase(OutputPath(), read);
  if (!existing.ok()) return false;
  for (const tuning::TuningRecord& r : existing->records()) {
    if (tuning::RecordKey(r) == tuning::RecordKey(probe)) return true;
  }
  return false;
}

void AddProvenance(int samples, tuning::TuningRecord& record) {
  const std::string suite = absl::GetFlag(FLAGS_suite);
  *record.mutable_provenance() = tuning::ProvenanceHere(
      absl::StrCat("autotune ",
                   suite.empty() ? absl::StrCat("--problems=", absl::GetFlag(FLAGS_problems))
                                 : absl::StrCat("--suite=", suite),
                   " --samples=", samples,
                   absl::GetFlag(FLAGS_cost_model).empty()
                       ? ""
                       : absl::StrCat(" --cost_model=", absl::GetFlag(FLAGS_cost_model)),
                   absl::GetFlag(FLAGS_library_alternatives) > 0
                       ? absl::StrCat(" --library_alternatives=",
                                      absl::GetFlag(FLAGS_library_alternatives))
                       : ""));
}

// The cost model --cost_model names: a file; "none"; or, empty, the built-in model of
// `device`'s GPU model (name and compute capability) where one ships, else none.
// InvalidArgument naming the flag and the file when it does not read or is not a model of
// this tiletune's terms.
absl::StatusOr<std::optional<CostModel>> ReadCostModel(const tuning::DeviceIdentity* device) {
  const std::string flag = absl::GetFlag(FLAGS_cost_model);
  if (flag == "none") return std::optional<CostModel>();
  if (flag.empty()) {
    if (device == nullptr) return std::optional<CostModel>();
    TT_ASSIGN_OR_RETURN(std::vector<GpuCostModel> builtin, BuiltinCostModels());
    const GpuCostModel* mine = CostModelFor(builtin, *device);
    return mine != nullptr ? std::optional<CostModel>(mine->model) : std::optional<CostModel>();
  }
  absl::StatusOr<CostModel> model = ReadCostModelFile(UserPath(flag));
  if (!model.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--cost_model: ", model.status().message()));
  }
  return std::optional<CostModel>(*std::move(model));
}

// The library whose choices a tuning measures: the databases it reads (TILETUNE_DB, the
// user folder, the built-in ones) and its transfer. Null when it cannot be created (the
// tuning goes on without).
std::shared_ptr<Library> ChoosingLibrary() {
  LibraryOptions options;
  // Asking is no miss of the user's program: the tuner's problems are not recorded.
  options.record_misses_from_environment = false;
  options.tune_on_miss_ms = 0;
  absl::StatusOr<std::unique_ptr<Library>> made = Library::Create(std::move(options));
  if (!made.ok()) {
    std::fprintf(stderr, "autotune: the library's choices are not measured: %s\n",
                 BoundedMessage(made.status().message()).c_str());
    return nullptr;
  }
  return *std::move(made);
}

// What `library` would launch for each task's problem on `device`.
std::function<std::optional<LibraryChoice>(const TuningTask&)> LibraryChoices(
    std::shared_ptr<Library> library, const tuning::DeviceIdentity& device) {
  if (library == nullptr) return nullptr;
  return [library, device](const TuningTask& task) -> std::optional<LibraryChoice> {
    absl::StatusOr<Explanation> explained = library->Explain(*task.op, device);
    if (!explained.ok()) return std::nullopt;
    return LibraryChoice{Trial{explained->hints, explained->launch},
                         ResolutionLevelName(explained->level)};
  };
}

// Up to `count` kernels `library` chooses among for each task's problem on `device`
// (--library_alternatives); null for a count of 0.
std::function<std::vector<LibraryChoice>(const TuningTask&)> LibraryAlternatives(
    std::shared_ptr<Library> library, const tuning::DeviceIdentity& device, int count) {
  if (library == nullptr || count <= 0) return nullptr;
  return [library, device, count](const TuningTask& task) {
    std::vector<LibraryChoice> out;
    absl::StatusOr<std::vector<Explanation>> alternatives =
        library->Alternatives(*task.op, device, count);
    if (!alternatives.ok()) return out;
    for (const Explanation& alternative : *alternatives) {
      out.push_back(LibraryChoice{Trial{alternative.hints, alternative.launch},
                                  ResolutionLevelName(alternative.level)});
    }
    return out;
  };
}

std::string SummaryLine(const TuningTask& task, const tuning::TuningRecord& record,
                        const TuneStats& stats, size_t faults) {
  const tuning::Statistics& s = record.winner_statistics();
  // "0.98 of memcpy, 2.41x cudnnIm2Col": against the size-matched ceiling and the library
  // call the problem replaces; the DRAM fraction without baselines.
  std::string against = record.size_matched_ceiling_gbps() > 0
                            ? absl::StrFormat("%5.3f of memcpy", record.fraction_of_size_matched_ceiling())
                            : absl::StrFormat("%5.3f of DRAM", s.fraction_of_ceiling());
  for (const tuning::Baseline& b : record.baselines()) {
    if (b.name() != "cudaMemcpy") {
      absl::StrAppend(&against, ", ", b.has_statistics() ? absl::StrFormat("%.2fx %s", b.speedup(), b.name())
                                                         : absl::StrCat("no ", b.name()));
    }
  }
  return absl::StrFormat(
      "%-44s %-11s %8.1f us %7.0f GB/s %s | %d combos, %d pruned, %d dup, "
      "%d compiled (%.1f s), %d verified, %d failed, %zu faults, %d measured (%.1f s), "
      "regret %.2f%%%s%s",
      task.description, record.winner().lowering().path(), s.median_us(), s.gbps(),
      against, stats.enumerated, stats.pruned, stats.duplicates, stats.compiled,
      stats.compile_seconds, stats.verified, stats.failed_verification, faults, stats.measured,
      stats.gpu_seconds, 100 * stats.regret,
      stats.model_skipped > 0
          ? absl::StrCat(", ", stats.model_skipped, " skipped by the cost model").c_str()
          : "",
      stats.library_over_winner > 0
          ? absl::StrFormat(", library's choice (%s) %.3fx", stats.library_level,
                            stats.library_over_winner).c_str()
          : "");
}

// Tunes problem --worker_problem on --worker_device and writes the record to
// --worker_result. Exit 0: done; kFaultExit: a variant faulted the GPU (appended to
// --worker_faults, which the next worker reads); kSkippedExit: already in the database.
int RunWorker(const TileOpRegistry& ops, const std::vector<SuiteProblem>& mine) {
  // A worker dies with its supervisor (a kill -9 of it included): no orphan keeps a GPU.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != absl::GetFlag(FLAGS_worker_parent)) {
    return Fail(1, absl::AbortedError("the supervisor that started this worker is gone"));
  }
  const size_t k = static_cast<size_t>(absl::GetFlag(FLAGS_worker_problem));
  if (k >= mine.size()) return Fail(2, absl::InvalidArgumentError("worker problem out of range"));
  const std::string result_path = absl::GetFlag(FLAGS_worker_result);
  const std::string faults_path = absl::GetFlag(FLAGS_worker_faults);
  absl::StatusOr<std::unique_ptr<CompilationProvider>> made = MakeCompiler();
  if (!made.ok()) return Fail(1, made.status());
  std::unique_ptr<CompilationProvider> compiler = *std::move(made);
  std::unique_ptr<Context> context;
  absl::StatusOr<std::unique_ptr<TuningDevice>> device = MakeDevice(context, *compiler);
  if (!device.ok()) return Fail(1, device.status());
  const tuning::DeviceIdentity identity = (*device)->Identity();
  absl::StatusOr<Target> target = Target::Parse((*device)->ArchName());
  if (!target.ok()) return Fail(1, target.status());
  absl::StatusOr<TuningTask> task = MakeTask(ops, *mine[k], *target);
  if (!task.ok()) return Fail(1, task.status());
  tuning::TuningRecord probe;
  *probe.mutable_device() = identity;
  *probe.mutable_problem() = task->problem;
  if (AlreadyTuned(ops, probe)) {
    std::fprintf(stderr, "autotune: %s already tuned on %s; skipped\n", task->description.c_str(),
                 identity.name().c_str());
    return kSkippedExit;
  }
  std::map<std::string, std::string> faulted = ReadFaults(faults_path);
  absl::StatusOr<double> ceiling = (*device)->MeasureCeiling();
  const std::string label = absl::StrFormat("[%d/%d] %s", k + 1, mine.size(), task->description);
  if (faulted.empty()) {
    std::fprintf(stderr, "autotune: %s on %s (%s), DRAM ceiling %.0f GB/s (device copy)\n",
                 label.c_str(), identity.name().c_str(), (*device)->ArchName().c_str(),
                 ceiling.ok() ? *ceiling : 0.0);
  }
  Tuner::Options options;
  options.samples = absl::GetFlag(FLAGS_samples);
  options.ceiling_gbps = ceiling.ok() ? *ceiling : 0;
  absl::StatusOr<std::optional<CostModel>> cost_model = ReadCostModel(&identity);
  if (!cost_model.ok()) return Fail(2, cost_model.status());
  if (cost_model->has_value()) {
    options.cost_model = &**cost_model;
    options.model_top_k = absl::GetFlag(FLAGS_model_top_k);
    options.gpu = DeviceConstantsFor(*target, identity.sm_count() > 0 ? identity.sm_count() : 132);
  }
  std::shared_ptr<Library> library = ChoosingLibrary();
  options.library_choice = LibraryChoices(library, identity);
  options.library_alternatives =
      LibraryAlternatives(library, identity, absl::GetFlag(FLAGS_library_alternatives));
  options.progress = [&](const std::string& line) {
    std::fprintf(stderr, "\r\033[K%s | %s", label.c_str(), line.c_str());
    std::fflush(stderr);
  };
  // The supervisor reads this to name a variant that hangs.
  const std::string pending_path = faults_path + ".pending";
  options.before_launch = [&](const std::string& sha) {
    std::ofstream(pending_path, std::ios::trunc) << sha << "\n";
  };
  Tuner tuner(**device, *compiler, options);
  const size_t known = faulted.size();
  TuneStats stats;
  absl::StatusOr<tuning::TuningRecord> record = tuner.Tune(*task, &faulted, &stats);
  std::fprintf(stderr, "\n");
  if (absl::IsAborted(record.status()) && faulted.size() > known) {
    std::ofstream faults(faults_path, std::ios::app);
    for (const auto& [sha, why] : faulted) {
      faults << sha << "\t" << absl::StrReplaceAll(why, {{"\n", " "}, {"\t", " "}}) << "\n";
    }
    std::fprintf(stderr, "autotune: %s\n", BoundedMessage(record.status().message()).c_str());
    return kFaultExit;
  }
  if (!record.ok()) return Fail(1, record.status());
  *record->mutable_device() = identity;
  AddProvenance(options.samples, *record);
  absl::Status written = tuning::WriteFileAtomically(
      result_path + ".summary", SummaryLine(*task, *record, stats, faulted.size()));
  if (written.ok()) written = tuning::WriteFileAtomically(result_path, record->SerializeAsString());
  if (!written.ok()) return Fail(1, written);
  return 0;
}

// What the supervisor shares between its device threads.
struct Supervision {
  std::mutex mutex;  // Guards database, the output file, summary and the console.
  // The records of the output: those there when the run started, and each tuned since.
  tuning::TuningDatabase database;
  // A device or a pipe (/dev/null): the database is written once, at the end.
  bool stream_output = false;
  // This run's private folder for its workers' files.
  std::string scratch;
  std::vector<std::string> summary;
  std::atomic<size_t> next{0};
  std::atomic<int> failures{0};
};

// Tunes problem `k` in worker processes on device `ordinal` until it is done or a worker
// fails other than by a fault; adds the record to the database and writes it.
void SuperviseProblem(const TileOpRegistry& ops, const std::vector<SuiteProblem>& mine, size_t k,
                      int ordinal, const Shard& shard, const std::string& path, Supervision& s) {
  const std::string label =
      absl::StrFormat("[%d/%d] %s", k + 1, mine.size(), DescribeProblem(ops, *mine[k]));
  const std::string base = absl::StrCat(s.scratch, "/worker", ordinal, "_", k);
  const std::string result_path = base + ".pb", faults_path = base + ".faults";
  std::remove(faults_path.c_str());
  int code = -1;
  for (int attempt = 0; attempt < 16; ++attempt) {
    std::remove(result_path.c_str());
    std::vector<std::string> args = {ReadSelfPath()};
    // The worker reads the same problem list, so that problem k is the same problem.
    if (!absl::GetFlag(FLAGS_problems).empty()) {
      args.push_back(absl::StrCat("--problems=", absl::GetFlag(FLAGS_problems)));
    }
    if (!absl::GetFlag(FLAGS_suite).empty()) {
      args.push_back(absl::StrCat("--suite=", UserPath(absl::GetFlag(FLAGS_suite))));
    }
    if (!absl::GetFlag(FLAGS_simulate).empty()) {
      args.push_back(absl::StrCat("--simulate=", absl::GetFlag(FLAGS_simulate)));
    }
    const std::string model = absl::GetFlag(FLAGS_cost_model);
    if (!model.empty()) {
      args.push_back(
          absl::StrCat("--cost_model=", model == "none" ? model : UserPath(model)));
    }
    args.push_back(absl::StrCat("--model_top_k=", absl::GetFlag(FLAGS_model_top_k)));
    args.push_back(
        absl::StrCat("--library_alternatives=", absl::GetFlag(FLAGS_library_alternatives)));
    args.insert(args.end(), {absl::StrCat("--shard=", FormatShard(shard)),
                                     absl::StrCat("--samples=", absl::GetFlag(FLAGS_samples)),

                                     absl::StrCat("--output=", path),
                                     absl::StrCat("--worker_problem=", k),
                                     absl::StrCat("--worker_device=", ordinal),
                                     absl::StrCat("--worker_result=", result_path),
                                     absl::StrCat("--worker_faults=", faults_path),
                                     absl::StrCat("--worker_parent=", ::getpid())});
    code = Spawn(args, faults_path + ".pending", faults_path, absl::GetFlag(FLAGS_hang_seconds));
    if (code != kFaultExit) break;
    std::lock_guard<std::mutex> lock(s.mutex);
    std::fprintf(stderr, "autotune: %s: a variant faulted the GPU; retrying without it\n",
                 label.c_str());
  }
  std::lock_guard<std::mutex> lock(s.mutex);
  if (code == kSkippedExit) return;
  absl::StatusOr<std::string> bytes = tuning::ReadFileToString(result_path);
  tuning::TuningRecord record;
  if (code != 0 || !bytes.ok() || !record.ParseFromString(*bytes)) {
    std::fprintf(stderr, "autotune: %s failed (worker exit code %d)\n", label.c_str(), code);
    ++s.failures;
    return;
  }
  // A record the database would reject is reported and its file kept for inspection;
  // it never reaches the database the earlier problems were written to.
  if (absl::Status valid = ops.RecordValidator()(record); !valid.ok()) {
    std::fprintf(stderr, "autotune: %s: the worker's record is invalid (kept in %s): %s\n",
                 label.c_str(), result_path.c_str(), BoundedMessage(valid.message()).c_str());
    ++s.failures;
    return;
  }
  // Merged into the file under its write lock, with whatever else reached it meanwhile
  // (an append, a merge): never last-writer-wins.
  if (!s.stream_output) {
    absl::StatusOr<int> written = tuning::AppendTuningRecords(path, {record}, ops.RecordValidator());
    if (!written.ok()) {
      std::fprintf(stderr, "autotune: %s: not written (kept in %s): %s\n", label.c_str(),
                   result_path.c_str(), BoundedMessage(written.status().message()).c_str());
      ++s.failures;
      return;
    }
  }
  *s.database.add_records() = record;
  std::remove(result_path.c_str());
  std::remove(faults_path.c_str());
  std::remove((faults_path + ".pending").c_str());
  absl::StatusOr<std::string> line = tuning::ReadFileToString(result_path + ".summary");
  if (line.ok()) {
    s.summary.push_back(*line);
    // Progress as each problem finishes, so an interrupted run's log shows what was done.
    std::fprintf(stderr, "autotune: done %zu of %zu: %s\n", s.summary.size(), mine.size(),
                 line->c_str());
  }
  std::remove((result_path + ".summary").c_str());
}

absl::StatusOr<std::vector<int>> ParseDevices() {
  std::vector<int> devices;
  for (absl::string_view d : absl::StrSplit(absl::GetFlag(FLAGS_devices), ',')) {
    int ordinal = 0;
    if (!absl::SimpleAtoi(d, &ordinal) || ordinal < 0 || ordinal > 1023) {
      return absl::InvalidArgumentError(
          absl::StrCat("--devices: '", Printable(d, 40),
                       "' is not a device ordinal (0 to 1023); e.g. --devices=0,1"));
    }
    if (std::find(devices.begin(), devices.end(), ordinal) != devices.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--devices: device ", ordinal, " is listed twice; name each device once"));
    }
    devices.push_back(ordinal);
  }
  return devices;
}

// What is at the output, checked before anything is tuned: its folder must exist, and a
// folder, block device or socket there is refused (a device or a pipe is written through).
absl::StatusOr<tuning::OutputKind> CheckOutput(const std::string& path) {
  TT_ASSIGN_OR_RETURN(tuning::OutputKind kind, tuning::ClassifyOutput(path));
  if (kind == tuning::OutputKind::kNew) {
    const size_t slash = path.rfind('/');
    const std::string folder = slash == std::string::npos ? "." : path.substr(0, std::max<size_t>(slash, 1));
    struct stat info;
    if (::stat(folder.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--output=", Abbreviate(path), ": the folder ", Abbreviate(folder),
          " does not exist; create it first"));
    }
  }
  return kind;
}

// The run lock of `path` (compiler/tuning_db/file_lock.h), waited for with a message when
// another run holds it, and then described for the next waiter.
absl::StatusOr<std::unique_ptr<tuning::FileLock>> HoldRunLock(const std::string& path) {
  const std::string lock_path = tuning::RunLockPath(path);
  TT_ASSIGN_OR_RETURN(std::unique_ptr<tuning::FileLock> lock,
                      tuning::FileLock::TryAcquire(lock_path));
  if (lock == nullptr) {
    const std::string holder = tuning::HolderOf(lock_path);
    std::fprintf(stderr,
                 "autotune: another tuning run writes %s (%s); waiting for it to finish, then "
                 "resuming from what it wrote\n",
                 path.c_str(), holder.empty() ? "its lock is held" : holder.c_str());
    TT_ASSIGN_OR_RETURN(lock, tuning::FileLock::Acquire(lock_path));
  }
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  lock->Describe(absl::StrCat("autotune, pid ", ::getpid(), " on ", host, ", since ",
                              absl::FormatTime("%Y-%m-%d %H:%M:%S", absl::Now(),
                                               absl::LocalTimeZone())));
  return lock;
}

// The output's records, read to resume a run (none when there is no file yet).
absl::Status Resume(const TileOpRegistry& ops, const std::string& path,
                    tuning::TuningDatabase& database) {
  tuning::ReadOptions read;
  read.semantics = ops.RecordValidator();
  std::vector<std::string> notes;
  read.notes = &notes;
  absl::StatusOr<tuning::TuningDatabase> existing = tuning::ReadTuningDatabase(path, read);
  for (const std::string& note : notes) std::fprintf(stderr, "autotune: note: %s\n", note.c_str());
  if (absl::IsNotFound(existing.status())) return absl::OkStatus();
  TT_RETURN_IF_ERROR(existing.status());
  database = *std::move(existing);
  if (absl::StatusOr<std::string> bytes = tuning::ReadFileToString(path, tuning::kMaxDatabaseBytes);
      bytes.ok()) {
    if (absl::Status fresh = CheckReport(path, *bytes); !fresh.ok()) {
      std::fprintf(stderr, "autotune: note: %s\n", BoundedMessage(fresh.message()).c_str());
    }
  }
  std::fprintf(stderr, "autotune: resuming %s (%d records)\n", path.c_str(),
               database.records_size());
  return absl::OkStatus();
}

// A private folder for this run's worker files (records, faults, progress), so that runs
// never read or delete each other's.
absl::StatusOr<std::string> MakeScratchFolder() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = absl::StrCat(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp",
                                     "/tiletune-autotune-XXXXXX");
  if (::mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("cannot create a folder for the workers' files (",
                                            pattern, "): ", std::strerror(errno),
                                            "; set TMPDIR to a writable folder"));
  }
  return pattern;
}

// The report of the database file at `path` as it is now, written beside it under its
// write lock (so it describes the bytes it names).
absl::Status WriteReportOfFile(const TileOpRegistry& ops, const std::string& path) {
  TT_ASSIGN_OR_RETURN(std::unique_ptr<tuning::FileLock> lock,
                      tuning::FileLock::Acquire(tuning::WriteLockPath(path)));
  TT_ASSIGN_OR_RETURN(std::string bytes, tuning::ReadFileToString(path, tuning::kMaxDatabaseBytes));
  tuning::ReadOptions read;
  read.semantics = ops.RecordValidator();
  TT_ASSIGN_OR_RETURN(tuning::TuningDatabase database,
                      tuning::ParseTuningDatabase(bytes, tuning::FormatForPath(path), path, read));
  return WriteReport(database, bytes, path, ops);
}

// Tunes `mine` into the database at `path` (resumed if it exists), in worker processes on
// the --devices; with `report`, writes the report beside it.
int Supervise(const TileOpRegistry& ops, const std::vector<SuiteProblem>& mine,
              const Shard& shard, const std::string& path, bool report) {
  absl::StatusOr<std::vector<int>> devices = ParseDevices();
  if (!devices.ok()) return Fail(2, devices.status());
  if (absl::GetFlag(FLAGS_simulate).empty()) {
    absl::StatusOr<int> count = DeviceCount();
    if (!count.ok() || *count == 0) {
      return Fail(3, absl::UnavailableError(absl::StrCat(
                         "no GPU to tune on (",
                         count.ok() ? "the driver sees none" : count.status().message(),
                         "); use --dry_run to compile the search space without one")));
    }
  }
  absl::StatusOr<tuning::OutputKind> kind = CheckOutput(path);
  if (!kind.ok()) return Fail(2, kind.status());
  Supervision s;
  s.stream_output = *kind == tuning::OutputKind::kStream;
  s.database.set_schema_version(tuning::kCurrentSchemaVersion);
  // One tuning run at a time per output: a second one waits here, then resumes what the
  // first wrote.
  std::unique_ptr<tuning::FileLock> run_lock;
  if (!s.stream_output) {
    absl::StatusOr<std::unique_ptr<tuning::FileLock>> locked = HoldRunLock(path);
    if (!locked.ok()) return Fail(1, locked.status());
    run_lock = *std::move(locked);
    absl::Status resumed = Resume(ops, path, s.database);
    if (!resumed.ok()) return Fail(1, resumed);
  }
  absl::StatusOr<std::string> scratch = MakeScratchFolder();
  if (!scratch.ok()) return Fail(1, scratch.status());
  s.scratch = *scratch;
  auto run_start = Clock::now();
  std::vector<std::thread> threads;
  for (int ordinal : *devices) {
    threads.emplace_back([&, ordinal] {
      for (size_t k = s.next++; k < mine.size(); k = s.next++) {
        SuperviseProblem(ops, mine, k, ordinal, shard, path, s);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  ::rmdir(s.scratch.c_str());  // Left when it keeps a worker's record for inspection.
  if (s.stream_output) {
    absl::Status written = tuning::WriteTuningDatabase(s.database, path, ops.RecordValidator());
    if (!written.ok()) {
      std::fprintf(stderr, "autotune: %s\n", BoundedMessage(written.message()).c_str());
      ++s.failures;
    }
  } else if (report && s.database.records_size() > 0) {
    absl::Status reported = WriteReportOfFile(ops, path);
    if (!reported.ok()) {
      std::fprintf(stderr, "autotune: the report was not written: %s\n",
                   BoundedMessage(reported.message()).c_str());
      ++s.failures;
    }
  }
  std::printf("autotune: %zu problem(s) in %.1f s -> %s\n", mine.size(), Seconds(run_start),
              path.c_str());
  for (const std::string& line : s.summary) std::printf("  %s\n", line.c_str());
  return s.failures > 0 ? 1 : 0;
}

// The problems of --problems, --suite (not both) or the default suite.
absl::StatusOr<std::vector<SuiteProblem>> LoadProblems(const TileOpRegistry& ops) {
  const std::string specs = absl::GetFlag(FLAGS_problems);
  const std::string suite = absl::GetFlag(FLAGS_suite);
  if (!specs.empty() && !suite.empty()) {
    return absl::InvalidArgumentError("--problems and --suite are exclusive; give one");
  }
  if (!suite.empty()) {
    absl::StatusOr<std::string> text =
        tuning::ReadFileToString(UserPath(suite), int64_t{16} << 20);
    if (!text.ok()) return absl::InvalidArgumentError(absl::StrCat("--suite: ", text.status().message()));
    return ParseSuiteFile(ops, *text, suite);
  }
  if (!specs.empty()) return ParseProblems(ops, specs);
  return DefaultSuite(ops);
}

// `autotune evaluate`: tunes each problem alone into --tuned (resumable, in workers like
// any tuning), then measures what the library launches against those winners.
int RunEvaluate(const TileOpRegistry& ops, const std::vector<SuiteProblem>& problems,
                const Shard& shard, const std::string& prefix) {
  std::string tuned = absl::GetFlag(FLAGS_tuned);
  tuned = tuned.empty() ? prefix + ".tuned.txtpb" : UserPath(tuned);
  // What the evaluation needs is checked before anything is tuned: the database under
  // evaluation reads, and the reports' folder exists.
  if (const std::string database = UserPath(absl::GetFlag(FLAGS_database)); !database.empty()) {
    tuning::ReadOptions read;
    read.semantics = ops.RecordValidator();
    absl::Status readable = tuning::ReadTuningDatabase(database, read).status();
    if (!readable.ok()) return Fail(2, absl::InvalidArgumentError(absl::StrCat("--database: ", readable.message())));
  }
  for (const std::string& report : {prefix + ".md", prefix + ".csv"}) {
    absl::StatusOr<tuning::OutputKind> kind = CheckOutput(report);
    if (!kind.ok()) return Fail(2, kind.status());
  }
  const int tuning = Supervise(ops, problems, shard, tuned, /*report=*/false);
  if (tuning == 2 || tuning == 3) return tuning;
  std::fprintf(stderr, "autotune evaluate: each of %zu problem(s) tuned alone in %s%s\n",
               problems.size(), tuned.c_str(), tuning == 0 ? "" : " (some failed)");
  absl::StatusOr<std::vector<int>> devices = ParseDevices();
  if (!devices.ok()) return Fail(2, devices.status());
  EvaluationOptions options;
  options.database = UserPath(absl::GetFlag(FLAGS_database));
  options.tuned_database = tuned;
  options.tune_on_miss_ms = absl::GetFlag(FLAGS_tune_on_miss);
  options.tune_on_miss_database = prefix + ".tuned_on_miss.txtpb";
  options.device = devices->front();
  options.rounds = absl::GetFlag(FLAGS_rounds);
  options.progress = [](const std::string& line) {
    std::fprintf(stderr, "autotune evaluate: %s\n", line.c_str());
  };
  std::string gpu;
  options.gpu = &gpu;
  absl::StatusOr<std::vector<EvaluationRow>> rows = Evaluate(ops, problems, options);
  if (!rows.ok()) return Fail(1, rows.status());
  const std::string title = absl::StrCat(
      "autotune evaluate: ",
      options.database.empty() ? "the built-in database (or $TILETUNE_DB)" : options.database,
      options.tune_on_miss_ms > 0 ? absl::StrCat(", tuning on a miss (", options.tune_on_miss_ms,
                                                 " ms)")
                                  : "",
      ", against a tuning of each problem alone", gpu.empty() ? "" : absl::StrCat(", on ", gpu));
  const std::string markdown = EvaluationMarkdown(*rows, title);
  absl::Status written = tuning::WriteFilesAtomically(
      {{prefix + ".md", markdown}, {prefix + ".csv", EvaluationCsv(*rows)}});
  std::fputs(markdown.c_str(), stdout);
  if (!written.ok()) return Fail(1, written);
  std::printf("\nautotune evaluate: wrote %s.md and %s.csv\n", prefix.c_str(), prefix.c_str());
  const EvaluationSummary summary = Summarize(*rows);
  return summary.failed > 0 || tuning != 0 ? 1 : 0;
}

// The flags `autotune evaluate` takes.
const std::vector<FlagSpec>& EvaluateFlags() {
  using T = FlagType;
  static const std::vector<FlagSpec>* const flags = new std::vector<FlagSpec>{
      {"suite", T::kString, "FILE: the problems, one spec per line (e.g. autotune/suites/heldout.txt)"},
      {"problems", T::kString, "SPECS: or the problems as a ';'-separated list"},
      {"database", T::kString, "PATH: the database under evaluation, alone, read before "
                               "anything is tuned (default: the built-in databases and "
                               "$TILETUNE_DB; never the user folder)"},
      {"output", T::kString, "PREFIX: writes PREFIX.md and PREFIX.csv (default evaluation)", 'o'},
      {"tuned", T::kString, "PATH: the per-problem tuning, written and resumed (default "
                            "PREFIX.tuned.txtpb)"},
      {"tune_on_miss", T::kInt, "MS: the library tunes each miss with this budget, 0 to 600000 "
                                "(default 0: off)", 0, 0, 600000},
      {"rounds", T::kInt, "N: timed rounds per problem, 1 to 1000 (default 15)", 0, 1, 1000},
      {"devices", T::kString, "N,...: CUDA devices; tuning uses all, the evaluation the first"},
      {"samples", T::kInt, "N: samples per variant when tuning, 1 to 1000 (default 5)", 0, 1, 1000},
      {"cost_model", T::kString, "FILE|none: the cost model the per-problem tuning prunes with "
                                 "(as autotune's --cost_model); none measures every candidate, "
                                 "so that --tuned is a corpus for autotune replay"},
      {"library_alternatives", T::kInt, "N: the per-problem tuning also measures up to N of the "
                                        "kernels the library chooses among (as autotune's), 0 "
                                        "to 64 (default 0)", 0, 0, 64},
      {"hang_seconds", T::kInt, "S: a variant running this long without progress is a hang, 1 "
                                "to 86400 (default 60)", 0, 1, 86400},
  };
  return *flags;
}

// The flags autotune takes (the worker_* ones are between the supervisor and its workers).
const std::vector<FlagSpec>& Flags() {
  using T = FlagType;
  static const std::vector<FlagSpec>* const flags = new std::vector<FlagSpec>{
      {"problems", T::kString, "SPECS: ';'-separated problems (below); default: the built-in suite"},
      {"suite", T::kString, "FILE: problems from a file, one spec per line, '#' comments (e.g. "
                            "autotune/suites/h200_shipped.txt)"},
      {"output", T::kString, "PATH: the database to write and resume from (.txtpb text, else "
                             "binary; default tuning_db.txtpb)", 'o'},
      {"devices", T::kString, "0,1,...: CUDA device ordinals to tune on (default 0)"},
      {"shard", T::kString, "i/n: tune slice i of n of the problems (default: from the "
                            "environment)"},
      {"dry_run", T::kBool, "build and compile the search space through NVRTC; no GPU needed"},
      {"target", T::kString, "sm_XY: the target of --dry_run (default sm_90a)"},
      {"samples", T::kInt, "N: samples per variant in the first measurement pass, 1 to 1000 "
                           "(default 5)", 0, 1, 1000},
      {"cost_model", T::kString, "FILE|none: a cost model (autotune fit -o); each search phase "
                                 "measures the model's --model_top_k best estimated candidates, "
                                 "the library's choice and the operator's heuristic choice. "
                                 "Default: the built-in model of the GPU tuned on, where one "
                                 "ships (kernels/tuned/); none measures every candidate"},
      {"model_top_k", T::kInt, "K: with a cost model, candidates measured per search phase, 0 "
                               "to 100000 (default 0: the k the model's fit found for the "
                               "operator)", 0, 0, 100000},
      {"library_alternatives", T::kInt, "N: also measure up to N of the kernels the library "
                                        "chooses among for each problem (nearby records' "
                                        "variants, the heuristic's), so that with "
                                        "--cost_model=none the tuning holds what any selection "
                                        "would launch (autotune replay); 0 to 64 (default 0)",
       0, 0, 64},
      {"report", T::kBool, "write a Markdown report and SVG chart next to the database "
                           "(default true)"},
      {"hang_seconds", T::kInt, "S: a variant running this long without progress is a hang, 1 "
                                "to 86400 (default 60)", 0, 1, 86400},
      {"simulate", T::kString, "seed=N,noise=F,fault=F,hang=F,wrong=F,name=...: a simulated "
                               "GPU, for tests"},
      {"worker_problem", T::kInt, "", 0, -1, 1 << 30},
      {"worker_device", T::kInt, "", 0, 0, 1023},
      {"worker_result", T::kString, ""},
      {"worker_faults", T::kString, ""},
      {"worker_parent", T::kInt, "", 0, 0, 1 << 30},
  };
  return *flags;
}

constexpr char kExitCodes[] =
    "\nexit codes: 0 done; 1 a problem failed or a file could not be written; 2 usage error; "
    "3 no GPU\n";

std::string Usage(const TileOpRegistry& ops) {
  return absl::StrCat(
      "usage: autotune [--problems=SPECS | --suite=FILE] [--output=PATH] [flags]   tune on this "
      "machine's GPUs\n"
      "       autotune --dry_run [--target=sm_90a] [flags]           compile the search space, "
      "no GPU\n"
      "       autotune merge INPUT... -o OUTPUT [--report]          merge tuning databases\n"
      "       autotune evaluate --suite=FILE [--database=PATH]      the library against "
      "per-problem tuning\n"
      "       autotune diff A B                                     what changed between two "
      "databases\n"
      "       autotune export DB [--format=csv|json]                a database as CSV or JSON\n"
      "       autotune fit CORPUS... [-o MODEL]                     fit the cost model to "
      "tunings' measurements\n"
      "       autotune rank SPEC... [--cost_model=FILE]             the cost model's ranking "
      "of a problem's candidates\n"
      "       autotune replay CORPUS... [--cost_model=FILE]         the library's selections "
      "timed by a corpus, no GPU\n"
      "(each subcommand takes --help)\n"
      "\nflags:\n",
      FlagHelp(Flags()),
      "\nproblems: ", ops.SpecSyntax(),
      "\n  e.g. --problems='copy:f16:8192,8192;copy:u8:src=300x4097[0:300,3:4000];"
      "im2col:f16:64,56,56,64:k=3:p=1'\n"
      "\nenvironment:\n",
      EnvironmentHelp(), kExitCodes);
}

std::string EvaluateUsage(const TileOpRegistry& ops) {
  return absl::StrCat(
      "usage: autotune evaluate (--suite=FILE | --problems=SPECS) [--database=PATH] "
      "[--output=PREFIX] [flags]\n"
      "\nTunes each problem alone (into --tuned, resumable), then measures what the library "
      "launches\nfor it (the database under evaluation, else the library's stack; with "
      "--tune_on_miss, tuning\neach miss) against that tuning's winner, both checked "
      "bit-exact and timed in one harness\n(interleaved rounds, rotated buffers, batched "
      "launches). Prints and writes PREFIX.md and\nPREFIX.csv: per problem the level, "
      "variant and reason, both times and their ratio; the\ngeomean and worst ratio.\n"
      "\nflags:\n",
      FlagHelp(EvaluateFlags()), "\nproblems: ", ops.SpecSyntax(), "\n\nenvironment:\n",
      EnvironmentHelp(),
      "\nexit codes: 0 done; 1 a problem was not measured or a file not written; 2 usage "
      "error; 3 no GPU\n");
}

int Main(int argc, char** argv, bool evaluate) {
  // Progress reaches a log file as it happens, not at exit.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const TileOpRegistry& ops = BuiltinTileOps();
  const std::vector<std::string> args(argv + (evaluate ? 2 : 1), argv + argc);
  absl::StatusOr<CommandLine> command_line =
      ParseAutotuneFlags(args, evaluate ? EvaluateFlags() : Flags());
  if (!command_line.ok()) return Fail(2, command_line.status());
  if (command_line->help()) {
    std::fputs(evaluate ? EvaluateUsage(ops).c_str() : Usage(ops).c_str(), stdout);
    return 0;
  }
  if (command_line->version()) {
    std::printf("%s\n", VersionLine(evaluate ? "autotune evaluate" : "autotune").c_str());
    return 0;
  }
  absl::StatusOr<std::vector<SuiteProblem>> parsed = LoadProblems(ops);
  if (!parsed.ok()) return Fail(absl::IsInternal(parsed.status()) ? 1 : 2, parsed.status());
  std::vector<std::string> repeats;
  std::vector<SuiteProblem> problems = UniqueProblems(ops, *std::move(parsed), &repeats);
  // Workers re-read the suite and drop the same repeats, so indices agree; only the
  // supervisor says so.
  if (!repeats.empty() && absl::GetFlag(FLAGS_worker_problem) < 0) {
    const size_t shown = std::min<size_t>(repeats.size(), 5);
    std::fprintf(stderr, "autotune: %zu problem(s) given more than once run once: %s%s\n",
                 repeats.size(),
                 Printable(absl::StrJoin(repeats.begin(), repeats.begin() + shown, ", "), 400)
                     .c_str(),
                 repeats.size() > shown
                     ? absl::StrCat(" and ", repeats.size() - shown, " more").c_str()
                     : "");
  }
  if (absl::Status devices = ParseDevices().status(); !devices.ok()) return Fail(2, devices);
  if (absl::Status model = ReadCostModel(nullptr).status(); !model.ok()) return Fail(2, model);
  if (!absl::GetFlag(FLAGS_simulate).empty()) {
    if (absl::Status valid = ParseSimulation(absl::GetFlag(FLAGS_simulate)).status(); !valid.ok()) {
      return Fail(2, valid);
    }
  }
  absl::StatusOr<Shard> shard = ResolveShard(absl::GetFlag(FLAGS_shard), ProcessEnvironment());
  if (!shard.ok()) return Fail(2, shard.status());
  std::vector<SuiteProblem> mine;
  for (size_t k : ShardIndices(problems.size(), *shard)) mine.push_back(problems[k]);
  if (shard->count > 1) {
    std::fprintf(stderr, "autotune: shard %s (%s): %zu of %zu problems\n",
                 FormatShard(*shard).c_str(), shard->source.c_str(), mine.size(), problems.size());
  }
  if (evaluate) {
    return RunEvaluate(ops, mine, *shard,
                       UserPath(command_line->Has("output") ? absl::GetFlag(FLAGS_output)
                                                            : "evaluation"));
  }
  if (absl::GetFlag(FLAGS_dry_run)) return DryRun(ops, mine);
  if (command_line->Has("target")) {
    return Fail(2, absl::InvalidArgumentError(
                       "--target applies to --dry_run; a tuning run compiles for its GPU"));
  }
  if (absl::GetFlag(FLAGS_worker_problem) >= 0) return RunWorker(ops, mine);
  return Supervise(ops, mine, *shard, OutputPath(), absl::GetFlag(FLAGS_report));
}

}  // namespace
}  // namespace autotune
}  // namespace tiletune

int main(int argc, char** argv) {
  const std::string command = argc >= 2 ? argv[1] : "";
  const std::vector<std::string> rest(argv + std::min(argc, 2), argv + argc);
  if (command == "merge") return tiletune::autotune::RunMergeCommand(rest, stdout, stderr);
  if (command == "diff") return tiletune::autotune::RunDiffCommand(rest, stdout, stderr);
  if (command == "export") return tiletune::autotune::RunExportCommand(rest, stdout, stderr);
  if (command == "fit") return tiletune::autotune::RunFitCommand(rest, stdout, stderr);
  if (command == "rank") return tiletune::autotune::RunRankCommand(rest, stdout, stderr);
  if (command == "replay") return tiletune::autotune::RunReplayCommand(rest, stdout, stderr);
  const bool evaluate = argc >= 2 && std::string(argv[1]) == "evaluate";
  return tiletune::autotune::Main(argc, argv, evaluate);
}

// bazel run //autotune                      tune the default suite for the local GPU
// bazel run //autotune -- --dry_run         compile and list the search space, no GPU
// bazel run //autotune -- merge A B -o OUT  merge tuning databases (autotune/merge_command.h)
//
// Flags: --problems="copy:f16:8192,8192;..." --output=PATH (.txtpb text, else binary)
// --devices=0,1 --shard=i/n (or from Slurm / Kubernetes) --target=sm_90a (dry run)
// --samples=N --report. A run writes the database after every problem, so an
// interrupted run resumes where it stopped. Exit codes: 0 done, 1 failure, 2 bad flags,
// 3 no GPU.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "autotune/copy_search_space.h"
#include "autotune/copy_tuner.h"
#include "autotune/merge_command.h"
#include "autotune/report.h"
#include "autotune/shard.h"
#include "autotune/suite.h"
#include "autotune/tuning_db.h"
#include "compiler/backend/tuning_conversion.h"
#include "compiler/cuda/caching_compilation_provider.h"
#include "compiler/cuda/nvrtc_compilation_provider.h"
#include "kernels/runtime/runtime.h"

ABSL_FLAG(std::string, problems, "", "';'-separated copy:DTYPE:SHAPE list; empty: default suite");
ABSL_FLAG(std::string, output, "tuning_db.txtpb", "Database to write (and resume from).");
ABSL_FLAG(std::string, devices, "0", "Comma-separated CUDA device ordinals to tune on.");
ABSL_FLAG(std::string, shard, "", "Tune slice i of n of the problems (i/n); default from env.");
ABSL_FLAG(bool, dry_run, false, "Build and compile the search space without a GPU.");
ABSL_FLAG(std::string, target, "sm_90a", "Target for --dry_run.");
ABSL_FLAG(int, samples, 5, "Samples per variant in the first measurement pass.");
ABSL_FLAG(bool, report, true, "Write a Markdown report and SVG chart next to the database.");

namespace tiletune {
namespace autotune {
namespace {

using Clock = std::chrono::steady_clock;

int Fail(int code, const absl::Status& status) {
  std::fprintf(stderr, "autotune: %s\n", std::string(status.message()).c_str());
  return code;
}

std::string OutputPath() {
  std::string path = absl::GetFlag(FLAGS_output);
  const char* cwd = std::getenv("BUILD_WORKING_DIRECTORY");  // Set by `bazel run`.
  if (!path.empty() && path[0] != '/' && cwd != nullptr) path = absl::StrCat(cwd, "/", path);
  return path;
}

std::unique_ptr<CompilationProvider> MakeCompiler(std::string* version) {
  auto nvrtc = NvrtcCompilationProvider::Create();
  if (!nvrtc.ok()) return nullptr;
  *version = (*nvrtc)->Name();
  CachingCompilationProvider::Options options;
  options.inner = *std::move(nvrtc);
  options.disk_directory = DefaultCacheDirectory();
  auto cached = CachingCompilationProvider::Create(std::move(options));
  return cached.ok() ? *std::move(cached) : nullptr;
}

int DryRun(const std::vector<CopyOp>& problems) {
  absl::StatusOr<Target> target = Target::Parse(absl::GetFlag(FLAGS_target));
  if (!target.ok()) return Fail(2, target.status());
  std::string version;
  std::unique_ptr<CompilationProvider> compiler = MakeCompiler(&version);
  if (compiler == nullptr) return Fail(1, absl::UnavailableError("NVRTC cannot be loaded"));
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (const CopyOp& op : problems) {
    auto start = Clock::now();
    auto space = BuildCopySearchSpace(op, *target);
    if (!space.ok()) return Fail(1, space.status());
    std::atomic<size_t> next{0};
    std::atomic<int> errors{0};
    CompileOptions options;
    options.arch = target->ArchName();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&] {
        for (size_t i = next++; i < space->candidates.size(); i = next++) {
          if (!compiler->CompileToCubin(space->candidates[i].source, options).ok()) ++errors;
        }
      });
    }
    for (auto& thread : pool) thread.join();
    std::map<std::string, int> per_path;
    for (const CopyCandidate& c : space->candidates) ++per_path[LoweringPathName(c.lowered.path)];
    std::printf("%s on %s: %d combinations, %d pruned, %d duplicates, %zu distinct kernels "
                "(%s), %d compile errors, %.1f s\n",
                DescribeProblem(op).c_str(), target->ArchName().c_str(), space->enumerated,
                space->pruned, space->duplicates, space->candidates.size(),
                absl::StrJoin(per_path, ", ", absl::PairFormatter(" ")).c_str(), errors.load(),
                std::chrono::duration<double>(Clock::now() - start).count());
  }
  return 0;
}

int Main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  std::vector<CopyOp> problems = DefaultCopySuite();
  if (!absl::GetFlag(FLAGS_problems).empty()) {
    auto parsed = ParseProblems(absl::GetFlag(FLAGS_problems));
    if (!parsed.ok()) return Fail(2, parsed.status());
    problems = *std::move(parsed);
  }
  absl::StatusOr<Shard> shard = ResolveShard(absl::GetFlag(FLAGS_shard), ProcessEnvironment());
  if (!shard.ok()) return Fail(2, shard.status());
  std::vector<CopyOp> mine;
  for (size_t k : ShardIndices(problems.size(), *shard)) mine.push_back(problems[k]);
  if (shard->count > 1) {
    std::fprintf(stderr, "autotune: shard %s (%s): %zu of %zu problems\n",
                 FormatShard(*shard).c_str(), shard->source.c_str(), mine.size(), problems.size());
  }
  if (absl::GetFlag(FLAGS_dry_run)) return DryRun(mine);

  std::vector<int> devices;
  for (absl::string_view d : absl::StrSplit(absl::GetFlag(FLAGS_devices), ',')) {
    int ordinal = 0;
    if (!absl::SimpleAtoi(d, &ordinal) || ordinal < 0) {
      return Fail(2, absl::InvalidArgumentError(absl::StrCat(
                         "--devices: '", d, "' is not a device ordinal; e.g. --devices=0,1")));
    }
    devices.push_back(ordinal);
  }
  absl::StatusOr<int> count = DeviceCount();
  if (!count.ok() || *count == 0) {
    return Fail(3, absl::UnavailableError(absl::StrCat(
                       "no GPU to tune on (", count.ok() ? "the driver sees none" : count.status().message(),
                       "); use --dry_run to compile the search space without one")));
  }
  std::string path = OutputPath();
  TuningDatabase database;
  absl::StatusOr<TuningDatabase> existing = ReadTuningDatabase(path);
  if (existing.ok()) {
    database = *std::move(existing);
    std::fprintf(stderr, "autotune: resuming %s (%d records)\n", path.c_str(),
                 database.records_size());
  } else if (!absl::IsNotFound(existing.status())) {
    return Fail(1, existing.status());
  }
  std::string nvrtc_version;
  std::unique_ptr<CompilationProvider> compiler = MakeCompiler(&nvrtc_version);
  if (compiler == nullptr) return Fail(1, absl::UnavailableError("NVRTC cannot be loaded"));

  std::mutex mutex;  // Guards database, the output file and the console.
  std::atomic<size_t> next{0};
  std::atomic<int> failures{0};
  auto run_start = Clock::now();
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  std::string command_line;
  for (int i = 0; i < argc; ++i) absl::StrAppend(&command_line, i ? " " : "", argv[i]);
  std::vector<std::string> summary;

  auto worker = [&](int ordinal) {
    auto context = Context::Create(ordinal);
    if (!context.ok()) {
      std::lock_guard<std::mutex> lock(mutex);
      std::fprintf(stderr, "autotune: device %d: %s\n", ordinal,
                   std::string(context.status().message()).c_str());
      ++failures;
      return;
    }
    DeviceIdentity identity = IdentifyDevice(**context, nvrtc_version);
    absl::StatusOr<double> ceiling = MeasureDramCeiling(**context);
    {
      std::lock_guard<std::mutex> lock(mutex);
      std::fprintf(stderr, "autotune: device %d: %s (%s), DRAM ceiling %.0f GB/s (device copy)\n",
                   ordinal, identity.name().c_str(), (*context)->info().ArchName().c_str(),
                   ceiling.ok() ? *ceiling : 0.0);
    }
    CopyTuner::Options options;
    options.samples = absl::GetFlag(FLAGS_samples);
    options.ceiling_gbps = ceiling.ok() ? *ceiling : 0;
    for (size_t k = next++; k < mine.size(); k = next++) {
      const CopyOp& op = mine[k];
      TuningRecord probe;
      *probe.mutable_device() = identity;
      *probe.mutable_problem() = ProblemFromCopyOp(op);
      std::string key = RecordKey(probe);
      {
        std::lock_guard<std::mutex> lock(mutex);
        bool done = false;
        for (const TuningRecord& r : database.records()) done = done || RecordKey(r) == key;
        if (done) {
          std::fprintf(stderr, "autotune: %s already tuned on %s; skipped\n",
                       DescribeProblem(op).c_str(), identity.name().c_str());
          continue;
        }
      }
      std::string label = absl::StrFormat("[%d/%d] %s", k + 1, mine.size(), DescribeProblem(op));
      options.progress = [&](const std::string& line) {
        std::lock_guard<std::mutex> lock(mutex);
        std::fprintf(stderr, "\r\033[K%s | %s", label.c_str(), line.c_str());
        std::fflush(stderr);
      };
      CopyTuner tuner(**context, *compiler, options);
      std::map<std::string, std::string> faulted;
      TuneStats stats;
      absl::StatusOr<TuningRecord> record;
      for (int attempt = 0; attempt < 8; ++attempt) {
        record = tuner.Tune(op, &faulted, &stats);
        if (!absl::IsAborted(record.status())) break;
        std::lock_guard<std::mutex> lock(mutex);
        std::fprintf(stderr, "\nautotune: %s; resetting the context and going on\n",
                     std::string(record.status().message()).c_str());
        absl::Status reset = (*context)->ResetAfterFault();
        if (!reset.ok()) {
          record = reset;
          break;
        }
      }
      std::lock_guard<std::mutex> lock(mutex);
      std::fprintf(stderr, "\n");
      if (!record.ok()) {
        std::fprintf(stderr, "autotune: %s failed: %s\n", label.c_str(),
                     std::string(record.status().message()).c_str());
        ++failures;
        continue;
      }
      *record->mutable_device() = identity;
      Provenance* provenance = record->mutable_provenance();
      provenance->set_tool_version("tiletune 0.1");
      provenance->set_host(host);
      provenance->set_unix_time_s(static_cast<int64_t>(std::time(nullptr)));
      provenance->set_command_line(command_line);
      *database.add_records() = *record;
      absl::Status written = WriteTuningDatabase(database, path);
      if (!written.ok()) {
        std::fprintf(stderr, "autotune: %s\n", std::string(written.message()).c_str());
        ++failures;
      }
      const Statistics& s = record->winner_statistics();
      summary.push_back(absl::StrFormat(
          "%-28s %-10s %8.1f us %7.0f GB/s %5.3f of ceiling | %d combos, %d pruned, %d dup, "
          "%d compiled (%.1f s), %d verified, %d failed, %d faults, %d measured (%.1f s)",
          DescribeProblem(op), record->winner().lowering().path(), s.median_us(), s.gbps(),
          s.fraction_of_ceiling(), stats.enumerated, stats.pruned, stats.duplicates,
          stats.compiled, stats.compile_seconds, stats.verified, stats.failed_verification,
          stats.faults, stats.measured, stats.gpu_seconds));
    }
  };
  std::vector<std::thread> threads;
  for (int ordinal : devices) threads.emplace_back(worker, ordinal);
  for (auto& thread : threads) thread.join();

  if (absl::GetFlag(FLAGS_report) && database.records_size() > 0) {
    absl::Status reported = WriteReport(database, path);
    if (!reported.ok()) std::fprintf(stderr, "autotune: %s\n", std::string(reported.message()).c_str());
  }
  std::printf("autotune: %zu problem(s) in %.1f s -> %s\n", mine.size(),
              std::chrono::duration<double>(Clock::now() - run_start).count(), path.c_str());
  for (const std::string& line : summary) std::printf("  %s\n", line.c_str());
  return failures > 0 ? 1 : 0;
}

}  // namespace
}  // namespace autotune
}  // namespace tiletune

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "merge") {
    const std::vector<std::string> args(argv + 2, argv + argc);
    return tiletune::autotune::RunMergeCommand(args, stdout, stderr);
  }
  return tiletune::autotune::Main(argc, argv);
}

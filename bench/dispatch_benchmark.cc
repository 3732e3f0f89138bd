// Host cost of one tiletune::Library::Launch and one Plan::Execute (kernels/tiletune.h) of a
// copy on a cached problem, alone and from 8 threads, against a bare
// cuLaunchKernel of the same kernel with the same arguments. Only the calls are timed:
// the stream is drained between batches outside the timed region, so the GPU queue
// never fills and the numbers are host overhead, not kernel time. An iteration is a batch
// of 64 calls; the us_per_call counter is the figure to compare.
//
// The first call of a problem: one Library::Launch (resolve, load, launch) of a problem
// new to a library that has already served another, so the context, the driver and the
// library's own start are not in it; for a kernel baked in at build time (:bench_kernels,
// the JIT off), for one compiled by NVRTC into an empty compile cache, and for one read
// from a warm compile cache. Library creation (databases parsed) is timed on its own.
//
//   bench/dispatch_benchmark --benchmark_counters_tabular=true
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "bench/bench_util.h"
#include "compiler/base/status_macros.h"
#include "benchmark/benchmark.h"
#include "compiler/backend/tuned_resolver.h"
#include "compiler/ops/copy/copy_definition.h"
#include "compiler/ops/copy/copy_lowering.h"
#include "compiler/ops/copy/copy_op.h"
#include "compiler/ops/im2col/im2col_op.h"
#include "kernels/prebuilt.h"
#include "kernels/tile_kernel.h"
#include "kernels/example/example_problems.h"
#include "kernels/library.h"
#include "kernels/tiletune.h"
#include "kernels/runtime/driver_api.h"

namespace tiletune {
namespace {

constexpr int kBatch = 64;

CopyOp SmallCopy() {
  Buffer src = Buffer::RowMajor("src", DataType::kF16, Scope::kGlobal, {4, 1024});
  Buffer dst = Buffer::RowMajor("dst", DataType::kF16, Scope::kGlobal, {4, 1024});
  return CopyOp{Region::Whole(src), Region::Whole(dst)};
}

struct Setup {
  std::unique_ptr<Library> library;
  // The slim API's plan of the same copy (SIMT, like the bare kernel: two arguments).
  std::unique_ptr<Plan> plan;
  std::unique_ptr<TileKernel> bare;
  DeviceBuffer src, dst;
};

absl::StatusOr<Setup*> GetSetup() {
  static absl::StatusOr<Setup*>* const setup = [] {
    auto make = []() -> absl::StatusOr<Setup*> {
      TT_ASSIGN_OR_RETURN(BenchEnv * env, GetBenchEnv());
      auto s = std::make_unique<Setup>();
      LibraryOptions options;
      // No database: the heuristic level, quietly.
      options.builtin = false;
      options.user_directory = "";
      TT_ASSIGN_OR_RETURN(s->library, Library::Create(options));
      CopyOp op = SmallCopy();
      TT_ASSIGN_OR_RETURN(LaunchInfo info, s->library->Inspect(op));
      // The same kernel, built directly.
      op.hints.prefer_instruction = Instruction::kSync;
      TT_ASSIGN_OR_RETURN(Target target, Target::Parse(env->context->info().ArchName()));
      TT_ASSIGN_OR_RETURN(LoweredCopy lowered, LowerCopy(op, target, info.launch));
      TT_ASSIGN_OR_RETURN(s->bare,
                          TileKernel::Create(*env->context, CopyDefinition(),
                                             std::make_shared<const LoweredCopy>(lowered),
                                             *env->compiler));
      if (s->bare->kernel().name() != info.kernel_name) {
        return absl::InternalError("bare and library kernels differ");
      }
      CopyDesc desc;
      desc.dtype = DType::kF16;
      desc.src.shape = {4, 1024};
      desc.hints.prefer_instruction = "sync";
      TT_RETURN_IF_ERROR(env->context->Activate());
      TT_ASSIGN_OR_RETURN(Plan plan, Plan::Create(desc));
      s->plan = std::make_unique<Plan>(std::move(plan));
      size_t bytes = 4 * 1024 * 2;
      TT_ASSIGN_OR_RETURN(s->src, DeviceBuffer::Allocate(*env->context, bytes));
      TT_ASSIGN_OR_RETURN(s->dst, DeviceBuffer::Allocate(*env->context, bytes));
      return s.release();
    };
    return new absl::StatusOr<Setup*>(make());
  }();
  return *setup;
}

template <typename Call>
void TimeCalls(benchmark::State& state, Call call) {
  auto env = GetBenchEnv();
  auto setup = GetSetup();
  if (!env.ok() || !setup.ok()) {
    state.SkipWithError(std::string((env.ok() ? setup.status() : env.status()).message()).c_str());
    return;
  }
  // Threads beyond the first launch on streams of their own: one shared stream would
  // measure the driver's per-stream lock, not the caller's.
  std::unique_ptr<Stream> own;
  if (state.thread_index() > 0) {
    if (!(*env)->context->Activate().ok()) {
      state.SkipWithError("cannot make the context current");
      return;
    }
    auto made = Stream::Create(*(*env)->context);
    if (!made.ok()) {
      state.SkipWithError(std::string(made.status().message()).c_str());
      return;
    }
    own = *std::move(made);
  }
  const Stream& mine = own != nullptr ? *own : *(*env)->stream;
  CUstream stream = mine.get();
  double seconds = 0;
  for (auto _ : state) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kBatch; ++i) {
      if (!call(**setup, stream)) {
        state.SkipWithError("launch failed");
        return;
      }
    }
    auto stop = std::chrono::steady_clock::now();
    // An iteration is the batch: its manual time is what the run spends, so Google
    // Benchmark's iteration count (and the wall time) stays bounded.
    double batch = std::chrono::duration<double>(stop - start).count();
    state.SetIterationTime(batch);
    seconds += batch;
    if (!mine.Synchronize().ok()) {
      state.SkipWithError("stream synchronisation failed");
      return;
    }
  }
  // Per thread, averaged over threads (a multi-threaded run reports one thread's cost).
  state.counters["us_per_call"] = benchmark::Counter(
      seconds * 1e6 / (static_cast<double>(state.iterations()) * kBatch),
      benchmark::Counter::kAvgThreads);
}

void BM_BareCuLaunchKernel(benchmark::State& state) {
  const DriverApi* cu = *LoadDriver();
  TimeCalls(state, [cu](Setup& s, CUstream stream) {
    CUdeviceptr src = s.src.ptr(), dst = s.dst.ptr();
    void* args[] = {&src, &dst};
    const LoweredTileKernel& l = s.bare->lowered();
    return cu->cuLaunchKernel(s.bare->kernel().function(), static_cast<unsigned>(s.bare->grid()), 1,
                              1, l.launch.threads, 1, 1, l.shared_bytes, stream, args,
                              nullptr) == CUDA_SUCCESS;
  });
}

void BM_LibraryCopy(benchmark::State& state) {
  CopyOp op = SmallCopy();
  TimeCalls(state, [&op](Setup& s, CUstream stream) {
    return s.library->Launch(op, s.src.ptr(), s.dst.ptr(), stream).ok();
  });
}

// Plan::Execute: no lock, so threads sharing one plan should each pay what one pays.
void BM_PlanExecute(benchmark::State& state) {
  TimeCalls(state, [](Setup& s, CUstream stream) {
    return s.plan->Execute(s.src.ptr(), s.dst.ptr(), stream).ok();
  });
}

// The problems baked into this binary by :bench_kernels, by argument: 0 the dense copy,
// 1 the im2col layer.
std::unique_ptr<TileOp> BakedProblem(int index) {
  if (index == 0) return std::make_unique<CopyOp>(DenseCopy(8192, 8192));
  return std::make_unique<Im2colOp>(Layer1());
}

// How the first call finds its kernel.
enum class FirstCall { kBaked, kNvrtcEmptyCache, kWarmCompileCache };

void TimeFirstCalls(benchmark::State& state, FirstCall how) {
  auto env = GetBenchEnv();
  if (!env.ok()) {
    state.SkipWithError(std::string(env.status().message()).c_str());
    return;
  }
  const std::unique_ptr<TileOp> op = BakedProblem(static_cast<int>(state.range(0)));
  // The warm-up problem (baked too): the library's device and context exist before the
  // timed call.
  const std::unique_ptr<TileOp> warm = BakedProblem(1 - static_cast<int>(state.range(0)));
  // Each kernel's operands: the largest of the two problems, allocated once.
  auto src = DeviceBuffer::Allocate(*(*env)->context, size_t{256} << 20);
  auto dst = DeviceBuffer::Allocate(*(*env)->context, size_t{256} << 20);
  if (!src.ok() || !dst.ok()) {
    state.SkipWithError("cannot allocate the operands");
    return;
  }
  const std::string scratch = absl::StrCat(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp",
                                           "/tiletune_first_call_", getpid());
  double seconds = 0, create_seconds = 0, warm_seconds = 0;
  int64_t round = 0;
  for (auto _ : state) {
    LibraryOptions options;
    options.jit = how != FirstCall::kBaked;
    // Compiled kernels are not baked ones: with the JIT on they are the ones these use.
    static const std::vector<const PrebuiltKernelSet*> none;
    if (how != FirstCall::kBaked) options.prebuilt = &none;
    options.cache_directory = how == FirstCall::kNvrtcEmptyCache
                                  ? absl::StrCat(scratch, "/empty", round++)
                                  : absl::StrCat(scratch, "/warm");
    const auto create = std::chrono::steady_clock::now();
    auto library = Library::Create(options);
    create_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - create).count();
    const auto warm_start = std::chrono::steady_clock::now();
    if (!library.ok() || !(*library)->Launch(*warm, src->ptr(), dst->ptr(), (*env)->stream->get()).ok()) {
      state.SkipWithError("the library or its warm-up launch failed");
      return;
    }
    warm_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - warm_start).count();
    if (!(*env)->stream->Synchronize().ok()) {
      state.SkipWithError("the warm-up launch failed");
      return;
    }
    if (how == FirstCall::kWarmCompileCache && round++ == 0) {
      // Fills the compile cache with the timed kernel; a library of its own loads it.
      auto filler = Library::Create(options);
      if (!filler.ok() || !(*filler)->Launch(*op, src->ptr(), dst->ptr(), (*env)->stream->get()).ok()) {
        state.SkipWithError("cannot fill the compile cache");
        return;
      }
      (void)(*env)->stream->Synchronize();
    }
    const auto start = std::chrono::steady_clock::now();
    const absl::Status launched = (*library)->Launch(*op, src->ptr(), dst->ptr(), (*env)->stream->get());
    const double call = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!launched.ok()) {
      state.SkipWithError(std::string(launched.message()).c_str());
      return;
    }
    state.SetIterationTime(call);
    seconds += call;
    if (!(*env)->stream->Synchronize().ok()) {
      state.SkipWithError("stream synchronisation failed");
      return;
    }
  }
  state.counters["first_call_us"] = seconds * 1e6 / static_cast<double>(state.iterations());
  state.counters["library_create_ms"] = create_seconds * 1e3 / static_cast<double>(state.iterations());
  // The library's first launch of all (the warm-up problem): the device's first use, with
  // the baked modules loaded then (LibraryOptions::preload_baked).
  state.counters["library_first_launch_us"] =
      warm_seconds * 1e6 / static_cast<double>(state.iterations());
  std::filesystem::remove_all(scratch);
}

void BM_FirstCallBaked(benchmark::State& state) { TimeFirstCalls(state, FirstCall::kBaked); }

// The parts of a baked first call: resolving (Library::Explain: the record, the lowering,
// the source that finds the image) and loading the image's module and function.
void BM_BakedResolve(benchmark::State& state) {
  const std::unique_ptr<TileOp> op = BakedProblem(static_cast<int>(state.range(0)));
  auto env = GetBenchEnv();
  auto library = Library::Create({});
  if (!env.ok() || !library.ok()) {
    state.SkipWithError("no library");
    return;
  }
  const DeviceInfo& info = (*env)->context->info();
  tuning::DeviceIdentity device;
  device.set_name(info.name);
  device.set_cc_major(info.cc_major);
  device.set_cc_minor(info.cc_minor);
  device.set_sm_count(info.sm_count);
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<Explanation> explained = (*library)->Explain(*op, device);
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (!explained.ok() || !explained->prebuilt) {
      state.SkipWithError("the problem does not resolve to a baked kernel");
      return;
    }
  }
}

void BM_BakedModuleLoad(benchmark::State& state) {
  auto env = GetBenchEnv();
  const std::vector<const PrebuiltKernelSet*> sets = PrebuiltKernelSets();
  if (!env.ok() || sets.empty()) {
    state.SkipWithError("no GPU or no baked set");
    return;
  }
  const PrebuiltKernelImage& image = sets[0]->images[state.range(0) == 0 ? 0 : 2];
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    auto module = Module::Load(*(*env)->context,
                               absl::string_view(reinterpret_cast<const char*>(image.cubin), image.cubin_size));
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (!module.ok()) {
      state.SkipWithError(std::string(module.status().message()).c_str());
      return;
    }
  }
  state.SetLabel(image.arch);
}
void BM_FirstCallNvrtc(benchmark::State& state) {
  TimeFirstCalls(state, FirstCall::kNvrtcEmptyCache);
}
void BM_FirstCallCompileCache(benchmark::State& state) {
  TimeFirstCalls(state, FirstCall::kWarmCompileCache);
}

BENCHMARK(BM_BareCuLaunchKernel)->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(0.5);
BENCHMARK(BM_LibraryCopy)->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(0.5);
BENCHMARK(BM_PlanExecute)->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(0.5);
BENCHMARK(BM_BareCuLaunchKernel)->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(0.5)->Threads(8);
BENCHMARK(BM_PlanExecute)->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(0.5)->Threads(8);
BENCHMARK(BM_BakedResolve)->Arg(0)->Arg(1)->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(50);
BENCHMARK(BM_BakedModuleLoad)->Arg(0)->Arg(1)->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(20);
BENCHMARK(BM_FirstCallBaked)->Arg(0)->Arg(1)->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(20);
BENCHMARK(BM_FirstCallCompileCache)->Arg(0)->Arg(1)->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(10);
BENCHMARK(BM_FirstCallNvrtc)->Arg(0)->Arg(1)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace tiletune

BENCHMARK_MAIN();

// Copy variants against cudaMemcpyAsync device-to-device on the same buffers, in the same
// run. Counters: GB/s counting bytes read plus written, cudaMemcpy's GB/s measured right
// after the variant, and their ratio.
//
//   bazel run //bench:copy_benchmark -- --benchmark_counters_tabular=true
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "bench/bench_util.h"
#include "benchmark/benchmark.h"
#include "compiler/ir/buffer.h"
#include "compiler/ops/copy/copy_definition.h"
#include "compiler/ops/copy/copy_lowering.h"
#include "compiler/ops/copy/copy_op.h"
#include "kernels/tile_kernel.h"

namespace tiletune {
namespace {

struct Variant {
  std::string name;
  Instruction instruction;
  std::vector<int64_t> tile;
  int threads;
  int stages;
  int ctas_per_sm;
  bool through_shared = true;
  std::optional<EvictionPolicy> eviction;
};

const std::vector<Variant>& Variants() {
  static const std::vector<Variant>* const variants = new std::vector<Variant>{
      {"simt_direct_8x1024_t256", Instruction::kSync, {8, 1024}, 256, 1, 0, false},
      {"simt_direct_16x1024_t256_p4", Instruction::kSync, {16, 1024}, 256, 1, 4, false},
      {"simt_direct_32x512_t512_p4", Instruction::kSync, {32, 512}, 512, 1, 4, false},
      {"simt_direct_8x1024_t256_evict_first", Instruction::kSync, {8, 1024}, 256, 1, 0, false,
       EvictionPolicy::kEvictFirst},
      {"simt_shared_32x256_t256", Instruction::kSync, {32, 256}, 256, 1, 0},
      {"cp_async_32x256_t256_s3_p2", Instruction::kCpAsync, {32, 256}, 256, 3, 2},
      {"tma_32x256_s4_p3", Instruction::kTma, {32, 256}, 32, 4, 3},
      {"tma_64x256_s3_p2", Instruction::kTma, {64, 256}, 32, 3, 2},
      {"tma_16x256_s8_p4", Instruction::kTma, {16, 256}, 32, 8, 4},
      {"bulk_32k_s4_p1", Instruction::kTma, {16384}, 32, 4, 1},
      {"bulk_16k_s4_p3", Instruction::kTma, {8192}, 32, 4, 3},
      {"bulk_32k_s3_p2", Instruction::kTma, {16384}, 32, 3, 2},
  };
  return *variants;
}

constexpr int64_t kCols = 8192;  // f16 elements per row: 16 KiB rows.

void BM_Copy(benchmark::State& state, const Variant& variant, int64_t mib) {
  auto env_or = GetBenchEnv();
  if (!env_or.ok()) {
    state.SkipWithError(std::string(env_or.status().message()).c_str());
    return;
  }
  BenchEnv& env = **env_or;
  int64_t rows = mib * 1024 * 1024 / (kCols * 2);
  Buffer src = Buffer::RowMajor("src", DataType::kF16, Scope::kGlobal, {rows, kCols});
  Buffer dst = Buffer::RowMajor("dst", DataType::kF16, Scope::kGlobal, {rows, kCols});
  CopyOp op{Region::Whole(src), Region::Whole(dst)};
  op.hints.prefer_instruction = variant.instruction;
  op.hints.eviction_policy = variant.eviction;
  LaunchParams launch;
  launch.tile = variant.tile;
  launch.threads = variant.threads;
  launch.stages = variant.stages;
  launch.ctas_per_sm = variant.ctas_per_sm;
  launch.through_shared = variant.through_shared;
  auto target = Target::Parse(env.context->info().ArchName());
  auto lowered = LowerCopy(op, *target, launch);
  if (!lowered.ok()) {
    state.SkipWithError(std::string(lowered.status().message()).c_str());
    return;
  }
  auto kernel = TileKernel::Create(*env.context, CopyDefinition(),
                                   std::make_shared<const LoweredCopy>(*lowered), *env.compiler);
  if (!kernel.ok()) {
    state.SkipWithError(std::string(kernel.status().message()).c_str());
    return;
  }
  size_t bytes = static_cast<size_t>(rows * kCols * 2);
  auto src_buffer = DeviceBuffer::Allocate(*env.context, bytes);
  auto dst_buffer = DeviceBuffer::Allocate(*env.context, bytes);
  if (!src_buffer.ok() || !dst_buffer.ok() || !src_buffer->Fill(0x5a).ok()) {
    state.SkipWithError("device allocation failed");
    return;
  }
  CUdeviceptr s = src_buffer->ptr(), d = dst_buffer->ptr();
  int batch = mib >= 1024 ? 4 : 16;
  CUstream stream = env.stream->get();
  std::vector<double> times;
  for (auto _ : state) {
    auto ms = TimeLaunches(env, [&] { return (*kernel)->Launch(s, d, stream); }, batch, 1);
    if (!ms.ok()) {
      state.SkipWithError(std::string(ms.status().message()).c_str());
      return;
    }
    state.SetIterationTime(*ms / 1e3);
    times.push_back(*ms);
  }
  std::sort(times.begin(), times.end());
  double kernel_ms = times[times.size() / 2];
  auto memcpy_ms = TimeMemcpy(env, d, s, bytes, batch, 9);
  if (!memcpy_ms.ok()) {
    state.SkipWithError(std::string(memcpy_ms.status().message()).c_str());
    return;
  }
  double moved = 2.0 * bytes;
  state.counters["GBps"] = GigabytesPerSecond(moved, kernel_ms);
  state.counters["memcpy_GBps"] = GigabytesPerSecond(moved, *memcpy_ms);
  state.counters["vs_memcpy"] = *memcpy_ms / kernel_ms;
  state.SetLabel((*kernel)->lowered().path_name);
}

void RegisterAll() {
  for (int64_t mib : {64, 256, 1024}) {
    for (const Variant& variant : Variants()) {
      benchmark::RegisterBenchmark(absl::StrCat("copy_f16/", mib, "MiB/", variant.name).c_str(),
                                   [variant, mib](benchmark::State& state) {
                                     BM_Copy(state, variant, mib);
                                   })
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond)
          ->MinTime(0.2);
    }
  }
}

}  // namespace
}  // namespace tiletune

int main(int argc, char** argv) {
  tiletune::RegisterAll();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

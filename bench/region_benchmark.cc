// Copies of dense tensors and of strided slices through the Library (what users call: the
// tuned kernel when $TILETUNE_DB has the problem, else the nearest record or the
// heuristic), against the CUDA runtime's answer for the same bytes, in the same run, on the
// same rotated buffers:
//   - dense tensors of 4 KiB to 1 GiB, any pitch and dtype: cudaMemcpyAsync of the bytes;
//   - strided slices (rows of 2000 to 32000 B at a larger pitch): cudaMemcpy2DAsync, and
//     cudaMemcpyAsync of the slice's bytes as the size-matched ceiling.
//
// Counters: GBps (reads plus writes of the copied bytes), base_GBps and vs_base (the
// baseline's time over ours: > 1 is faster than the baseline), ceiling_GBps and
// vs_ceiling for slices, all from eager launches (host overhead included: below a few MB
// both sides are bound by it); graph_GBps and graph_vs_base from CUDA graphs of the same
// launches (device time alone). The label is the resolution level and the path.
//
// Rotation: launches cycle over buffer sets carved from one allocation per side, enough
// to span 150 MB (2.5x the H200's L2) up to 4096 sets, so a launch rarely finds its input
// in L2 from the one before; the baselines run over the same sets.
//
//   TILETUNE_DB=tuned.txtpb bazel run //bench:region_benchmark -- \
//       --benchmark_counters_tabular=true
//   bazel run //bench:region_benchmark -- --problems   # the problem specs, for autotune
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "bench/bench_util.h"
#include "benchmark/benchmark.h"
#include "compiler/ir/buffer.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/ops/copy/copy_op.h"
#include "cuda_runtime_api.h"
#include "kernels/library.h"

namespace tiletune {
namespace {

struct Problem {
  // Short name for the table.
  std::string name;
  // The copy, as //autotune --problems takes it.
  std::string spec;
  // A strided slice: compared with cudaMemcpy2DAsync.
  bool slice = false;
};

// Dense tensors across sizes, dtypes and pitches (the odd ones the issue measured among
// them), then slices with rows of 2000 to 32000 bytes at larger pitches, then rows of 1 to
// 14 bytes at pitches up to twice the row.
const std::vector<Problem>& Problems() {
  static const std::vector<Problem>* const problems = new std::vector<Problem>{
      {"f32_4KiB", "copy:f32:1024"},
      {"u8_64KiB_odd", "copy:u8:255,257"},
      {"f16_1MiB", "copy:f16:512,1024"},
      {"f16_1000x1001", "copy:f16:1000,1001"},
      {"u8_2048x2048", "copy:u8:2048,2048"},
      {"bf16_4MiB_odd", "copy:bf16:1023,1025"},
      {"f8_4099x4097", "copy:f8e4m3:4099,4097"},
      {"f32_64x3x224x224", "copy:f32:64,3,224,224"},
      {"u8_64MiB_odd", "copy:u8:8191,8193"},
      {"f16_16384x16384", "copy:f16:16384,16384"},
      {"f32_1GiB_odd", "copy:f32:16383,16385"},
      {"f16_rows2000B_pitch4096B", "copy:f16:src=65536x2048[0:65536,0:1000]", true},
      {"f32_rows8000B_pitch8448B", "copy:f32:src=16384x2112[0:16384,16:2016]", true},
      {"u8_rows12345B_pitch16384B", "copy:u8:src=16384x16384[0:16384,7:12352]", true},
      {"f16_rows32000B_pitch32768B", "copy:f16:src=16384x16384[0:16384,0:16000]", true},
      {"bf16_rows30000B_pitch32768B_at6B", "copy:bf16:src=8192x16384[0:8192,3:15003]", true},
      // Rows narrower than a 16-B vector (the span form): RGBA to RGB, channels un-padded,
      // one of two interleaved planes, an odd pitch.
      {"u8_rows3B_pitch4B_rgba_to_rgb", "copy:u8:src=16777216x4[0:16777216,0:3]", true},
      {"u8_rows1B_pitch2B_at1B", "copy:u8:src=33554432x2[0:33554432,1:2]", true},
      {"u8_rows5B_pitch9B_at2B", "copy:u8:src=8388608x9[0:8388608,2:7]", true},
      {"f16_rows6B_pitch8B", "copy:f16:src=8388608x4[0:8388608,0:3]", true},
      {"f16_rows14B_pitch16B_at2B", "copy:f16:src=4194304x8[0:4194304,1:8]", true},
      {"f32_rows12B_pitch16B_at4B", "copy:f32:src=4194304x4[0:4194304,1:4]", true},
  };
  return *problems;
}

constexpr size_t kMaxSets = 4096;

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

absl::Status CudaStatus(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what, ": ", cudaGetErrorString(error)));
}

void BM_Region(benchmark::State& state, const Problem& problem) {
  auto skip = [&](const absl::Status& status) {
    state.SkipWithError(std::string(status.message()).c_str());
  };
  auto env_or = GetBenchEnv();
  if (!env_or.ok()) return skip(env_or.status());
  BenchEnv& env = **env_or;
  static Library* const library = [] {
    auto created = Library::Create({});
    return created.ok() ? created->release() : nullptr;
  }();
  if (library == nullptr) return skip(absl::InternalError("Library::Create failed"));
  auto parsed = BuiltinTileOps().ParseSpec(problem.spec);
  if (!parsed.ok()) return skip(parsed.status());
  const CopyOp& op = static_cast<const CopyOp&>(**parsed);
  const size_t element = DataTypeBytes(op.src.buffer.dtype);
  const size_t src_bytes = SpanBytes(op.src.buffer), dst_bytes = SpanBytes(op.dst.buffer);
  const size_t copied = static_cast<size_t>(op.src.NumElements()) * element;
  const size_t src_stride = RoundUp(src_bytes, 256), dst_stride = RoundUp(dst_bytes, 256);
  const size_t sets = RotationSets(src_stride + dst_stride, kMaxSets);
  auto src = DeviceBuffer::Allocate(*env.context, sets * src_stride);
  auto dst = DeviceBuffer::Allocate(*env.context, sets * dst_stride);
  if (!src.ok() || !dst.ok() || !src->Fill(0x5a).ok()) {
    return skip(absl::ResourceExhaustedError("device allocation failed"));
  }
  CUstream stream = env.stream->get();
  auto cuda_stream = reinterpret_cast<cudaStream_t>(stream);
  if (absl::Status active = env.context->Activate(); !active.ok()) return skip(active);
  auto info = library->Inspect(op);
  if (!info.ok()) return skip(info.status());

  size_t next = 0;
  auto ours = [&]() -> absl::Status {
    const size_t s = next++ % sets;
    return library->Launch(op, src->ptr() + s * src_stride, dst->ptr() + s * dst_stride, stream);
  };
  // The slice's rows: pitch and row bytes of a 2-D region (outer dimensions merged).
  const int rank = op.src.rank();
  const size_t row_bytes = op.src.extents[rank - 1] * element;
  const size_t rows = copied / row_bytes;
  const size_t src_pitch = rank >= 2 ? op.src.buffer.strides[rank - 2] * element : row_bytes;
  const size_t dst_pitch = rank >= 2 ? op.dst.buffer.strides[rank - 2] * element : row_bytes;
  const size_t src_start = op.src.BaseOffsetElements() * element;
  const size_t dst_start = op.dst.BaseOffsetElements() * element;
  auto base = [&]() -> absl::Status {
    const size_t s = next++ % sets;
    void* to = reinterpret_cast<void*>(dst->ptr() + s * dst_stride + dst_start);
    const void* from = reinterpret_cast<const void*>(src->ptr() + s * src_stride + src_start);
    return problem.slice
               ? CudaStatus(cudaMemcpy2DAsync(to, dst_pitch, from, src_pitch, row_bytes, rows,
                                            cudaMemcpyDeviceToDevice, cuda_stream),
                          "cudaMemcpy2DAsync")
               : CudaStatus(cudaMemcpyAsync(to, from, copied, cudaMemcpyDeviceToDevice, cuda_stream),
                          "cudaMemcpyAsync");
  };
  // The size-matched ceiling: cudaMemcpyAsync of the copied bytes, over the same sets.
  auto ceiling = [&]() -> absl::Status {
    const size_t s = next++ % sets;
    return CudaStatus(cudaMemcpyAsync(reinterpret_cast<void*>(dst->ptr() + s * dst_stride),
                                    reinterpret_cast<const void*>(src->ptr() + s * src_stride),
                                    copied, cudaMemcpyDeviceToDevice, cuda_stream),
                    "cudaMemcpyAsync");
  };
  const int batch = copied >= (size_t{256} << 20) ? 4 : copied >= (size_t{4} << 20) ? 16 : 64;
  std::vector<double> times;
  for (auto _ : state) {
    auto ms = TimeLaunches(env, ours, batch, 1);
    if (!ms.ok()) return skip(ms.status());
    state.SetIterationTime(*ms / 1e3);
    times.push_back(*ms);
  }
  std::sort(times.begin(), times.end());
  const double ours_ms = times[times.size() / 2];
  auto base_ms = TimeLaunches(env, base, batch, 9);
  if (!base_ms.ok()) return skip(base_ms.status());
  const double moved = 2.0 * static_cast<double>(copied);
  state.counters["MB"] = static_cast<double>(copied) / 1e6;
  state.counters["GBps"] = GigabytesPerSecond(moved, ours_ms);
  state.counters["base_GBps"] = GigabytesPerSecond(moved, *base_ms);
  state.counters["vs_base"] = *base_ms / ours_ms;
  if (problem.slice) {
    auto ceiling_ms = TimeLaunches(env, ceiling, batch, 9);
    if (!ceiling_ms.ok()) return skip(ceiling_ms.status());
    state.counters["ceiling_GBps"] = GigabytesPerSecond(moved, *ceiling_ms);
    state.counters["vs_ceiling"] = *ceiling_ms / ours_ms;
  }
  // Device time alone, from CUDA graphs of the same launches: what a graph-captured or
  // well-overlapped caller sees, where eager launches of a small copy measure the host.
  auto ours_graph = TimeGraph(env, ours, batch, 9);
  if (!ours_graph.ok()) return skip(ours_graph.status());
  auto base_graph = TimeGraph(env, base, batch, 9);
  if (!base_graph.ok()) return skip(base_graph.status());
  state.counters["graph_GBps"] = GigabytesPerSecond(moved, *ours_graph);
  state.counters["graph_vs_base"] = *base_graph / *ours_graph;
  state.counters["sets"] = static_cast<double>(sets);
  state.SetLabel(absl::StrCat(ResolutionLevelName(info->level), " ", info->path,
                              info->form.empty() ? "" : "/", info->form, " tile [",
                              absl::StrJoin(info->launch.tile, ","), "] t", info->launch.threads,
                              problem.slice ? " vs memcpy2D" : " vs memcpy"));
}

void RegisterAll() {
  for (const Problem& problem : Problems()) {
    benchmark::RegisterBenchmark(absl::StrCat("region/", problem.name).c_str(),
                                 [problem](benchmark::State& state) { BM_Region(state, problem); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond)
        ->Iterations(15);
  }
}

}  // namespace
}  // namespace tiletune

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--problems") == 0) {
      std::vector<std::string> specs;
      for (const auto& problem : tiletune::Problems()) specs.push_back(problem.spec);
      std::printf("%s\n", absl::StrJoin(specs, ";").c_str());
      return 0;
    }
  }
  tiletune::RegisterAll();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

#include "bench/bench_util.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/base/status_macros.h"
#include "compiler/cuda/caching_compilation_provider.h"
#include "compiler/cuda/nvrtc_compilation_provider.h"
#include "cuda_runtime_api.h"

namespace tiletune {
namespace {

absl::Status ToStatus(cudaError_t error, absl::string_view detail) {
  if (error == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(detail, ": ", cudaGetErrorName(error), ": ",
                                          cudaGetErrorString(error)));
}

absl::StatusOr<BenchEnv*> CreateEnv() {
  auto env = std::make_unique<BenchEnv>();
  TT_ASSIGN_OR_RETURN(env->context, Context::Create(0));
  TT_RETURN_IF_ERROR(ToStatus(cudaSetDevice(0), "cudaSetDevice"));
  TT_RETURN_IF_ERROR(ToStatus(cudaFree(nullptr), "initialising the CUDA runtime"));
  TT_ASSIGN_OR_RETURN(env->stream, Stream::Create(*env->context));
  TT_ASSIGN_OR_RETURN(auto nvrtc, NvrtcCompilationProvider::Create());
  CachingCompilationProvider::Options options;
  options.inner = std::move(nvrtc);
  options.disk_directory = DefaultCacheDirectory();
  TT_ASSIGN_OR_RETURN(env->compiler, CachingCompilationProvider::Create(std::move(options)));
  return env.release();
}

}  // namespace

absl::StatusOr<BenchEnv*> GetBenchEnv() {
  static const absl::StatusOr<BenchEnv*>* const env = new absl::StatusOr<BenchEnv*>(CreateEnv());
  return *env;
}

absl::StatusOr<double> TimeLaunches(BenchEnv& env, const std::function<absl::Status()>& launch,
                                    int batch, int samples) {
  TT_ASSIGN_OR_RETURN(auto start, Event::Create(*env.context));
  TT_ASSIGN_OR_RETURN(auto stop, Event::Create(*env.context));
  std::vector<double> times;
  for (int s = -1; s < samples; ++s) {
    TT_RETURN_IF_ERROR(start->Record(env.stream->get()));
    for (int i = 0; i < batch; ++i) TT_RETURN_IF_ERROR(launch());
    TT_RETURN_IF_ERROR(stop->Record(env.stream->get()));
    TT_RETURN_IF_ERROR(stop->Synchronize());
    TT_ASSIGN_OR_RETURN(float ms, stop->ElapsedSince(*start));
    if (s >= 0) times.push_back(ms / batch);  // Batch -1 is the warm-up.
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

size_t RotationSets(size_t bytes_per_set, size_t max_sets) {
  return std::clamp<size_t>(kRotationBytes / std::max<size_t>(bytes_per_set, 1) + 1, 2,
                            max_sets);
}

absl::StatusOr<RotatedPairs> AllocateRotatedPairs(BenchEnv& env, size_t input_bytes,
                                                  size_t output_bytes, uint8_t fill) {
  RotatedPairs pairs;
  const size_t sets = RotationSets(input_bytes + output_bytes);
  for (size_t s = 0; s < sets; ++s) {
    TT_ASSIGN_OR_RETURN(DeviceBuffer input, DeviceBuffer::Allocate(*env.context, input_bytes));
    TT_ASSIGN_OR_RETURN(DeviceBuffer output, DeviceBuffer::Allocate(*env.context, output_bytes));
    TT_RETURN_IF_ERROR(input.Fill(fill));
    pairs.inputs.push_back(std::move(input));
    pairs.outputs.push_back(std::move(output));
  }
  return pairs;
}

absl::StatusOr<double> TimeMemcpy(BenchEnv& env, CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                                  int batch, int samples) {
  auto stream = reinterpret_cast<cudaStream_t>(env.stream->get());
  return TimeLaunches(
      env,
      [&]() {
        return ToStatus(cudaMemcpyAsync(reinterpret_cast<void*>(dst),
                                        reinterpret_cast<const void*>(src), bytes,
                                        cudaMemcpyDeviceToDevice, stream),
                        "cudaMemcpyAsync");
      },
      batch, samples);
}

absl::StatusOr<double> TimeGraph(BenchEnv& env, const std::function<absl::Status()>& launch,
                                 int batch, int samples) {
  auto stream = reinterpret_cast<cudaStream_t>(env.stream->get());
  TT_RETURN_IF_ERROR(ToStatus(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed),
                              "cudaStreamBeginCapture"));
  absl::Status captured = absl::OkStatus();
  for (int i = 0; i < batch && captured.ok(); ++i) captured = launch();
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  TT_RETURN_IF_ERROR(captured);
  TT_RETURN_IF_ERROR(ToStatus(ended, "cudaStreamEndCapture"));
  cudaGraphExec_t exec = nullptr;
  absl::Status instantiated = ToStatus(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  cudaGraphDestroy(graph);
  TT_RETURN_IF_ERROR(instantiated);
  absl::StatusOr<double> ms = TimeLaunches(
      env, [&] { return ToStatus(cudaGraphLaunch(exec, stream), "cudaGraphLaunch"); }, 1, samples);
  cudaGraphExecDestroy(exec);
  if (!ms.ok()) return ms.status();
  return *ms / batch;
}

}  // namespace tiletune

// Shared plumbing for the GPU benchmarks: one device context, one compile provider, event
// timing of a batch of launches, and cudaMemcpyAsync as the baseline on the same buffers.
#ifndef BENCH_BENCH_UTIL_H_
#define BENCH_BENCH_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/cuda/compilation_provider.h"
#include "cuda.h"
#include "kernels/runtime/runtime.h"

namespace tiletune {

struct BenchEnv {
  std::unique_ptr<Context> context;
  std::unique_ptr<Stream> stream;
  std::unique_ptr<CompilationProvider> compiler;
};

// Device 0 with the CUDA runtime initialised on its primary context; the process-wide
// instance, created on first use. Unavailable without a GPU.
absl::StatusOr<BenchEnv*> GetBenchEnv();

// Milliseconds per call of `launch`, as the median of `samples` batches of `batch` calls
// each timed with events on the env's stream, after one warm-up batch.
absl::StatusOr<double> TimeLaunches(BenchEnv& env, const std::function<absl::Status()>& launch,
                                    int batch, int samples);

// Milliseconds per call of `launch` on the device alone: `batch` calls captured into one
// CUDA graph, launched `samples` times (after a warm-up) and timed as above, so the host's
// launch overhead drops out. For small copies, where eager launches measure the host.
absl::StatusOr<double> TimeGraph(BenchEnv& env, const std::function<absl::Status()>& launch,
                                 int batch, int samples);

// cudaMemcpyAsync device-to-device of `bytes` on the env's stream, timed as above.
absl::StatusOr<double> TimeMemcpy(BenchEnv& env, CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                                  int batch, int samples);

// Buffers a benchmark rotates launch by launch span at least kRotationBytes (2.5x the
// H200's L2), so no launch finds its input in L2 from the one before.
inline constexpr size_t kRotationBytes = size_t{150} << 20;

// How many sets of `bytes_per_set` to rotate: enough to span kRotationBytes, from 2 to
// `max_sets`.
size_t RotationSets(size_t bytes_per_set, size_t max_sets = 8);

// RotationSets(input_bytes + output_bytes) (input, output) pairs, inputs filled with
// `fill`; launch i uses pair i % size.
struct RotatedPairs {
  std::vector<DeviceBuffer> inputs, outputs;
  size_t size() const { return inputs.size(); }
};
absl::StatusOr<RotatedPairs> AllocateRotatedPairs(BenchEnv& env, size_t input_bytes,
                                                  size_t output_bytes, uint8_t fill);

// Read plus write bytes over milliseconds, in GB/s (1e9 bytes per second).
inline double GigabytesPerSecond(double bytes_moved, double ms) { return bytes_moved / ms / 1e6; }

}  // namespace tiletune

#endif  // BENCH_BENCH_UTIL_H_

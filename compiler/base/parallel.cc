#include "compiler/base/parallel.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace tiletune {

void ParallelFor(int64_t count, int64_t grain, absl::FunctionRef<void(int64_t, int64_t)> body) {
  if (count <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t hardware = std::max<int64_t>(std::thread::hardware_concurrency(), 1);
  // Pieces of at least `grain`: no more of them than whole grains fit.
  const int64_t workers = std::min({hardware, int64_t{kMaxParallelWorkers}, count / grain});
  if (workers <= 1) {
    body(0, count);
    return;
  }
  const int64_t piece = (count + workers - 1) / workers;
  std::vector<std::thread> threads;
  threads.reserve(workers - 1);
  for (int64_t begin = piece; begin < count; begin += piece) {
    const int64_t end = std::min(count, begin + piece);
    threads.emplace_back([&body, begin, end] { body(begin, end); });
  }
  body(0, std::min(count, piece));
  for (std::thread& thread : threads) thread.join();
}

}  // namespace tiletune

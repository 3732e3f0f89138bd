// Host-side data parallelism for the CPU references and verification images, which a
// first call of tuning on a miss waits for: a range split into contiguous pieces, one
// thread each.
//
//   ParallelFor(rows, /*grain=*/64, [&](int64_t begin, int64_t end) {
//     for (int64_t r = begin; r < end; ++r) ...
//   });
#ifndef COMPILER_BASE_PARALLEL_H_
#define COMPILER_BASE_PARALLEL_H_

#include <cstdint>

#include "absl/functional/function_ref.h"

namespace tiletune {

// Threads ParallelFor uses at most (the caller's among them).
inline constexpr int kMaxParallelWorkers = 16;

// Runs body(begin, end) over [0, count) in contiguous pieces of at least `grain` items, on
// up to min(hardware threads, kMaxParallelWorkers) threads, the calling one among them;
// returns when every piece is done. One piece, and no thread is started. `body` must be
// safe to run concurrently on disjoint ranges.
void ParallelFor(int64_t count, int64_t grain, absl::FunctionRef<void(int64_t, int64_t)> body);

}  // namespace tiletune

#endif  // COMPILER_BASE_PARALLEL_H_

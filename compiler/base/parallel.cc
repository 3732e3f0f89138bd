#include "compiler/base/parallel.h"

#include <pthread.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace tiletune {
namespace {

struct Piece {
  absl::FunctionRef<void(int64_t, int64_t)>* body;
  int64_t begin = 0, end = 0;
};

void* RunPiece(void* arg) {
  const Piece& piece = *static_cast<const Piece*>(arg);
  (*piece.body)(piece.begin, piece.end);
  return nullptr;
}

}  // namespace

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
  const int64_t size = (count + workers - 1) / workers;
  std::vector<Piece> pieces;
  for (int64_t begin = 0; begin < count; begin += size) {
    pieces.push_back(Piece{&body, begin, std::min(count, begin + size)});
  }
  // pthreads, not std::thread: a thread that cannot be started (the process is out of
  // them) is an error code, and its piece runs here instead.
  std::vector<pthread_t> started(pieces.size());
  std::vector<bool> running(pieces.size(), false);
  for (size_t i = 1; i < pieces.size(); ++i) {
    running[i] = pthread_create(&started[i], nullptr, RunPiece, &pieces[i]) == 0;
  }
  RunPiece(&pieces[0]);
  for (size_t i = 1; i < pieces.size(); ++i) {
    if (!running[i]) RunPiece(&pieces[i]);
  }
  for (size_t i = 1; i < pieces.size(); ++i) {
    if (running[i]) pthread_join(started[i], nullptr);
  }
}

}  // namespace tiletune

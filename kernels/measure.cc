#include "kernels/measure.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/base/status_macros.h"
#include "compiler/tuning_db/measurement.h"

namespace tiletune {
namespace {

using Clock = std::chrono::steady_clock;

// The sets span this many L2s, up to kMaxSets, within a quarter of device memory.
constexpr double kL2Multiple = 3;
constexpr size_t kMaxSets = 64;
// A kernel keeps the tensor maps of this many buffer pairs: more sets would encode them
// again on every launch.
static_assert(kMaxSets <= TensorMapCache::kMaxPairs);

double MsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// Whether one launcher's every sample beats every sample of each other one: more rounds
// would not change which is fastest.
bool Separated(const std::vector<std::vector<double>>& samples) {
  for (const std::vector<double>& s : samples) {
    if (s.empty()) return false;
  }
  if (samples.size() < 2) return true;
  size_t best = 0;
  for (size_t i = 1; i < samples.size(); ++i) {
    if (tuning::Median(samples[i]) < tuning::Median(samples[best])) best = i;
  }
  const double slowest_best = *std::max_element(samples[best].begin(), samples[best].end());
  for (size_t i = 0; i < samples.size(); ++i) {
    if (i != best && *std::min_element(samples[i].begin(), samples[i].end()) <= slowest_best) {
      return false;
    }
  }
  return true;
}

}  // namespace

WorkQueue::WorkQueue(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int t = 0; t < threads; ++t) {
    workers_.emplace_back([this] {
      for (;;) {
        std::function<void()> job;
        {
          std::unique_lock<std::mutex> lock(mutex_);
          wake_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
          if (stopping_) return;
          job = std::move(jobs_.front());
          jobs_.pop_front();
        }
        job();
      }
    });
  }
}

WorkQueue::~WorkQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    jobs_.clear();
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void WorkQueue::Post(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(std::move(job));
  }
  wake_.notify_one();
}

struct StartedCompiles::Shared {
  mutable std::mutex mutex;
  std::condition_variable done;
  std::vector<std::optional<absl::StatusOr<Cubin>>> cubins;
  std::vector<double> in_ms;
  int finished = 0;
  Clock::time_point started;
};

StartedCompiles::StartedCompiles(WorkQueue& work, CompilationProvider& compiler,
                                 std::vector<CudaSource> sources, const CompileOptions& options)
    : shared_(std::make_shared<Shared>()) {
  shared_->cubins.resize(sources.size());
  shared_->in_ms.assign(sources.size(), 0);
  shared_->started = Clock::now();
  for (size_t i = 0; i < sources.size(); ++i) {
    // The state is shared, so that a compile can finish after its waiter is gone.
    work.Post([shared = shared_, i, source = std::move(sources[i]), options, &compiler] {
      absl::StatusOr<Cubin> cubin = compiler.CompileToCubin(source, options);
      std::lock_guard<std::mutex> lock(shared->mutex);
      shared->cubins[i] = std::move(cubin);
      shared->in_ms[i] = MsSince(shared->started);
      ++shared->finished;
      shared->done.notify_all();
    });
  }
}

std::vector<absl::StatusOr<Cubin>> StartedCompiles::Wait() {
  std::vector<absl::StatusOr<Cubin>> out;
  std::unique_lock<std::mutex> lock(shared_->mutex);
  shared_->done.wait(lock,
                     [&] { return shared_->finished == static_cast<int>(shared_->cubins.size()); });
  for (std::optional<absl::StatusOr<Cubin>>& cubin : shared_->cubins) out.push_back(*cubin);
  return out;
}

bool StartedCompiles::AllIn() const {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  return shared_->finished == static_cast<int>(shared_->cubins.size());
}

std::vector<double> StartedCompiles::in_ms() const {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  return shared_->in_ms;
}

std::vector<absl::StatusOr<Cubin>> CompileAll(CompilationProvider& compiler,
                                              const std::vector<CudaSource>& sources,
                                              const std::string& arch, int threads) {
  if (sources.empty()) return {};
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  WorkQueue work(static_cast<int>(std::min<size_t>(threads, sources.size())));
  CompileOptions options;
  options.arch = arch;
  return StartedCompiles(work, compiler, sources, options).Wait();
}

absl::StatusOr<std::unique_ptr<MeasureBench>> MeasureBench::Create(
    const Context& context, const TileOpDefinition& definition, const TileOp& op,
    std::mt19937_64& rng) {
  TT_ASSIGN_OR_RETURN(VerificationImages images, MakeVerificationImages(definition, op, rng));
  return Create(context, definition, op, std::move(images));
}

absl::StatusOr<std::unique_ptr<MeasureBench>> MeasureBench::Create(
    const Context& context, const TileOpDefinition& definition, const TileOp& op,
    VerificationImages images) {
  auto bench = std::unique_ptr<MeasureBench>(new MeasureBench(context, definition, op));
  bench->sizes_ = definition.Sizes(op);
  TT_ASSIGN_OR_RETURN(bench->offsets_, definition.Offsets(op));
  bench->images_ = std::move(images);
  const HostBytes& input = bench->images_.input;
  const HostBytes& expected = bench->images_.expected;
  TT_ASSIGN_OR_RETURN(bench->items_, UploadExampleItems(context, definition, op));
  const size_t per_set = input.size() + expected.size();
  const size_t wanted = static_cast<size_t>(std::ceil(
      kL2Multiple * static_cast<double>(context.info().l2_bytes) / static_cast<double>(per_set)));
  const size_t sets = std::max<size_t>(
      1, std::min({wanted, kMaxSets, context.info().memory_bytes / 4 / per_set}));
  for (size_t s = 0; s < sets; ++s) {
    absl::StatusOr<DeviceBuffer> in = DeviceBuffer::Allocate(context, input.size());
    absl::StatusOr<DeviceBuffer> out =
        in.ok() ? DeviceBuffer::Allocate(context, expected.size()) : in.status();
    if (!in.ok() || !out.ok()) {
      // Set 0 is needed; the rotation only shrinks when memory runs out.
      if (s == 0) return in.ok() ? out.status() : in.status();
      break;
    }
    // Set 0 from the host, the others from it on the device.
    TT_RETURN_IF_ERROR(s == 0 ? in->CopyFromHost(input.data(), input.size())
                              : in->CopyFrom(bench->in_.front()));
    bench->in_.push_back(*std::move(in));
    bench->out_.push_back(*std::move(out));
  }
  TT_ASSIGN_OR_RETURN(bench->start_, Event::Create(context));
  TT_ASSIGN_OR_RETURN(bench->stop_, Event::Create(context));
  return bench;
}

Launcher MeasureBench::LauncherFor(TileKernel& kernel) const {
  return [this, &kernel](CUdeviceptr input, CUdeviceptr output, CUstream stream) {
    return kernel.Launch(input, output, offsets_, stream, items_.get());
  };
}

std::pair<CUdeviceptr, CUdeviceptr> MeasureBench::Set(size_t s) const {
  return {in_[s].ptr() + kGuardBytes, out_[s].ptr() + kGuardBytes};
}

absl::Status MeasureBench::Verify(const Launcher& launch, const std::string& name,
                                  DeviceCheck* check) {
  DeviceBuffer& input = in_[0];
  DeviceBuffer& output = out_[0];
  if (input_dirty_) {
    TT_RETURN_IF_ERROR(input.CopyFromHost(images_.input.data(), images_.input.size()));
    input_dirty_ = false;
  }
  if (check != nullptr && expected_.ptr() == 0) {
    TT_ASSIGN_OR_RETURN(expected_, DeviceBuffer::Allocate(context_, images_.expected.size()));
    TT_RETURN_IF_ERROR(expected_.CopyFromHost(images_.expected.data(), images_.expected.size()));
    TT_ASSIGN_OR_RETURN(pristine_, DeviceBuffer::Allocate(context_, images_.input.size()));
    TT_RETURN_IF_ERROR(pristine_.CopyFromHost(images_.input.data(), images_.input.size()));
  }
  TT_RETURN_IF_ERROR(output.Fill(images_.poison));
  TT_RETURN_IF_ERROR(context_.Synchronize());
  TT_RETURN_IF_ERROR(launch(input.ptr() + kGuardBytes, output.ptr() + kGuardBytes, nullptr));
  TT_RETURN_IF_ERROR(context_.Synchronize());
  Mismatch out_diff, in_diff;
  if (check != nullptr) {
    TT_ASSIGN_OR_RETURN(out_diff,
                        check->Compare(output.ptr(), expected_.ptr(), expected_.size(), nullptr));
    TT_ASSIGN_OR_RETURN(in_diff,
                        check->Compare(input.ptr(), pristine_.ptr(), pristine_.size(), nullptr));
    if (out_diff.count == 0 && in_diff.count == 0) return absl::OkStatus();
  }
  // On the host: what differs, named.
  HostBytes got(images_.expected.size());
  TT_RETURN_IF_ERROR(output.CopyToHost(got.data(), got.size()));
  HostBytes input_after(images_.input.size());
  TT_RETURN_IF_ERROR(input.CopyToHost(input_after.data(), input_after.size()));
  absl::Status why = FirstMismatch(definition_, *op_, images_, got, input_after, name);
  if (why.ok() && check == nullptr) return why;
  input_dirty_ = true;
  if (!why.ok()) return why;
  return absl::DataLossError(absl::StrCat(
      name, ": the device comparison found ",
      in_diff.count > 0 ? absl::StrCat(in_diff.count, " input byte(s) changed, first at ", in_diff.first)
                        : absl::StrCat(out_diff.count, " output byte(s) differing, first at ",
                                       out_diff.first),
      "; the host comparison none"));
}

absl::StatusOr<double> MeasureBench::Batch(const Launcher& launch, int count, CUstream stream) {
  TT_RETURN_IF_ERROR(start_->Record(stream));
  for (int k = 0; k < count; ++k) {
    const auto [input, output] = Set(next_++ % in_.size());
    TT_RETURN_IF_ERROR(launch(input, output, stream));
  }
  TT_RETURN_IF_ERROR(stop_->Record(stream));
  TT_RETURN_IF_ERROR(stop_->Synchronize());
  TT_ASSIGN_OR_RETURN(float ms, stop_->ElapsedSince(*start_));
  return 1000.0 * ms / count;
}

absl::StatusOr<MeasureBench::Rounds> MeasureBench::Interleave(const std::vector<Launcher>& launchers,
                                                              const RoundOptions& options,
                                                              CUstream stream) {
  if (launchers.empty()) return absl::InvalidArgumentError("nothing to time");
  Rounds out;
  out.samples_us.resize(launchers.size());
  // Warm-up over every set (tensor maps, instruction caches, the sets' pages), then a
  // calibration batch each; the fastest sizes the batch.
  const int sets = static_cast<int>(in_.size());
  double fastest = 1e30;
  for (const Launcher& launch : launchers) {
    TT_RETURN_IF_ERROR(Batch(launch, sets, stream).status());
    TT_ASSIGN_OR_RETURN(double us, Batch(launch, std::min(sets, 4), stream));
    fastest = std::min(fastest, us);
  }
  out.batch = static_cast<int>(std::clamp(std::ceil(options.batch_us / std::max(fastest, 0.5)), 1.0,
                                          static_cast<double>(std::max(1, options.max_batch))));
  std::vector<size_t> order(launchers.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  const Clock::time_point timing = Clock::now();
  while (out.rounds < options.min_rounds ||
         (out.rounds < options.max_rounds && MsSince(timing) < options.budget_ms &&
          !(options.until_separated && Separated(out.samples_us)))) {
    for (size_t i : order) {
      TT_ASSIGN_OR_RETURN(double us, Batch(launchers[i], out.batch, stream));
      out.samples_us[i].push_back(us);
    }
    std::rotate(order.begin(), order.begin() + 1, order.end());
    ++out.rounds;
  }
  out.timing_ms = MsSince(timing);
  return out;
}

}  // namespace tiletune

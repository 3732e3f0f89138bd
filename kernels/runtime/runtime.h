// A thin, status-returning layer over the CUDA driver: device identity, the primary
// context, device memory, modules with their JIT log, kernels that check their argument
// count, streams and events.
//
//   TT_ASSIGN_OR_RETURN(std::unique_ptr<Context> context, Context::Create(/*ordinal=*/0));
//   TT_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, Module::Load(*context, cubin.bytes));
//   TT_ASSIGN_OR_RETURN(Kernel kernel, module->GetKernel("vector_copy", /*param_count=*/3));
//   TT_ASSIGN_OR_RETURN(DeviceBuffer src, DeviceBuffer::Allocate(*context, bytes));
//   ...
//   TT_RETURN_IF_ERROR(kernel.Launch({.grid = {blocks, 1, 1}, .block = {128, 1, 1}},
//                                    {&src_ptr, &dst_ptr, &n}));
//
// Threading: every call makes its context current on the calling thread first, so objects
// may be used from any thread. A Module must outlive the Kernels taken from it, and a
// Context must outlive everything created in it.
#ifndef KERNELS_RUNTIME_RUNTIME_H_
#define KERNELS_RUNTIME_RUNTIME_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "cuda.h"
#include "kernels/runtime/driver_api.h"

namespace tiletune {

// What identifies a GPU for tuning purposes, read from the driver.
struct DeviceInfo {
  int ordinal = 0;
  std::string name;          // "NVIDIA H200"
  std::string uuid;          // "GPU-xxxxxxxx-xxxx-..."
  int cc_major = 0;          // 9
  int cc_minor = 0;          // 0
  int sm_count = 0;          // 132
  int64_t l2_bytes = 0;      // 62914560
  int64_t memory_bytes = 0;  // total device memory
  int memory_bus_bits = 0;
  int max_shared_bytes_per_block_optin = 0;
  int driver_version = 0;    // 13000

  // "sm_90a" for 9.0 (architecture-specific features are available on the real part),
  // "sm_<major><minor>" otherwise.
  std::string ArchName() const;
};

// Number of devices the driver sees; Unavailable with no driver.
absl::StatusOr<int> DeviceCount();

// The primary context of one device. Retained on creation, released on destruction.
class Context {
 public:
  static absl::StatusOr<std::unique_ptr<Context>> Create(int ordinal);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // Makes this context current on the calling thread.
  absl::Status Activate() const;
  absl::Status Synchronize() const;
  const DeviceInfo& info() const { return info_; }
  const DriverApi& api() const { return *api_; }

 private:
  Context(const DriverApi* api, CUdevice device, CUcontext context, DeviceInfo info)
      : api_(api), device_(device), context_(context), info_(std::move(info)) {}

  const DriverApi* api_;
  CUdevice device_;
  CUcontext context_;
  DeviceInfo info_;
};

// An owned device allocation.
class DeviceBuffer {
 public:
  static absl::StatusOr<DeviceBuffer> Allocate(const Context& context, size_t bytes);
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  ~DeviceBuffer();

  CUdeviceptr ptr() const { return ptr_; }
  size_t size() const { return size_; }

  // Synchronous copies of `bytes` bytes at byte `offset` of the buffer; bounds checked.
  absl::Status CopyFromHost(const void* host, size_t bytes, size_t offset = 0);
  absl::Status CopyToHost(void* host, size_t bytes, size_t offset = 0) const;
  // A device-to-device copy of all of `other` (no larger than this buffer, on the same
  // context) to the start of this one, complete when it returns.
  absl::Status CopyFrom(const DeviceBuffer& other);
  // Sets every byte to `value`, complete when it returns.
  absl::Status Fill(uint8_t value);

 private:
  DeviceBuffer(const Context* context, CUdeviceptr ptr, size_t size)
      : context_(context), ptr_(ptr), size_(size) {}
  void Reset();

  const Context* context_ = nullptr;
  CUdeviceptr ptr_ = 0;
  size_t size_ = 0;
};

class Stream {
 public:
  static absl::StatusOr<std::unique_ptr<Stream>> Create(const Context& context);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  CUstream get() const { return stream_; }
  absl::Status Synchronize() const;

 private:
  Stream(const Context* context, CUstream stream) : context_(context), stream_(stream) {}
  const Context* context_;
  CUstream stream_;
};

class Event {
 public:
  static absl::StatusOr<std::unique_ptr<Event>> Create(const Context& context);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  absl::Status Record(CUstream stream) const;
  absl::Status Synchronize() const;
  // Milliseconds between `start` and this event; both must have completed.
  absl::StatusOr<float> ElapsedSince(const Event& start) const;

 private:
  Event(const Context* context, CUevent event) : context_(context), event_(event) {}
  const Context* context_;
  CUevent event_;
};

struct LaunchConfig {
  std::array<unsigned, 3> grid = {1, 1, 1};
  std::array<unsigned, 3> block = {1, 1, 1};
  unsigned dynamic_shared_bytes = 0;
  // Null launches on the legacy default stream.
  CUstream stream = nullptr;
};

// A kernel function of a loaded Module. Cheap to copy; valid while its Module lives.
class Kernel {
 public:
  const std::string& name() const { return name_; }
  int param_count() const { return param_count_; }
  CUfunction function() const { return function_; }

  // Launches with one pointer per parameter; InvalidArgument if the count differs from
  // the kernel's. Raises the kernel's dynamic shared memory limit the first time a launch
  // asks for more than any earlier one.
  absl::Status Launch(const LaunchConfig& config, absl::Span<void* const> args) const;

 private:
  friend class Module;
  Kernel(const Context* context, CUfunction function, std::string name, int param_count)
      : context_(context), function_(function), name_(std::move(name)),
        param_count_(param_count),
        dynamic_shared_limit_(std::make_shared<std::atomic<unsigned>>(0)) {}

  const Context* context_;
  CUfunction function_;
  std::string name_;
  int param_count_;
  // The dynamic shared memory limit set on the function so far; shared by copies.
  std::shared_ptr<std::atomic<unsigned>> dynamic_shared_limit_;
};

class Module {
 public:
  // Loads a CUBIN or PTX image (PTX is compiled by the driver's JIT). Load errors carry
  // the JIT's error log.
  static absl::StatusOr<std::unique_ptr<Module>> Load(const Context& context,
                                                      absl::string_view image);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // Finds `name` (an extern "C" symbol). `param_count` is the count the caller will pass;
  // where the driver can report the kernel's own count (cuFuncGetParamInfo) a mismatch is
  // InvalidArgument here, before any launch.
  absl::StatusOr<Kernel> GetKernel(absl::string_view name, int param_count) const;
  // Looks `name` up now: a driver that loads modules lazily (CUDA_MODULE_LOADING=LAZY, the
  // default) loads the function's code here rather than at its first GetKernel or launch.
  absl::Status LoadFunction(absl::string_view name) const;

  // The JIT's informational log from loading (empty for most CUBINs).
  const std::string& info_log() const { return info_log_; }

 private:
  Module(const Context* context, CUmodule module, std::string info_log)
      : context_(context), module_(module), info_log_(std::move(info_log)) {}
  const Context* context_;
  CUmodule module_;
  std::string info_log_;
};

}  // namespace tiletune

#endif  // KERNELS_RUNTIME_RUNTIME_H_

#include "kernels/runtime/runtime.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "compiler/base/status_macros.h"
#include "compiler/target/target.h"
#include "kernels/runtime/driver_api.h"

namespace tiletune {
namespace {

absl::StatusOr<int> Attribute(const DriverApi& cu, CUdevice device, CUdevice_attribute attr,
                              absl::string_view what) {
  int value = 0;
  TT_RETURN_IF_ERROR(ToStatus(cu.cuDeviceGetAttribute(&value, attr, device),
                              absl::StrCat("cuDeviceGetAttribute(", what, ")")));
  return value;
}

std::string FormatUuid(const CUuuid& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  return absl::StrFormat(
      "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
      b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

}  // namespace

std::string DeviceInfo::ArchName() const {
  return Target::ArchNameForDevice(cc_major, cc_minor);
}

absl::StatusOr<int> DeviceCount() {
  TT_ASSIGN_OR_RETURN(const DriverApi* cu, LoadDriver());
  int count = 0;
  TT_RETURN_IF_ERROR(ToStatus(cu->cuDeviceGetCount(&count), "cuDeviceGetCount"));
  return count;
}

absl::StatusOr<std::unique_ptr<Context>> Context::Create(int ordinal) {
  TT_ASSIGN_OR_RETURN(const DriverApi* cu, LoadDriver());
  TT_ASSIGN_OR_RETURN(int count, DeviceCount());
  if (ordinal < 0 || ordinal >= count) {
    return absl::InvalidArgumentError(absl::StrCat("device ordinal ", ordinal,
                                                   " out of range: this machine has ", count,
                                                   " CUDA device(s), 0..", count - 1));
  }
  CUdevice device = 0;
  TT_RETURN_IF_ERROR(ToStatus(cu->cuDeviceGet(&device, ordinal), "cuDeviceGet"));
  DeviceInfo info;
  info.ordinal = ordinal;
  info.driver_version = cu->driver_version;
  char name[256] = {};
  TT_RETURN_IF_ERROR(ToStatus(cu->cuDeviceGetName(name, sizeof(name), device), "cuDeviceGetName"));
  info.name = name;
  CUuuid uuid = {};
  TT_RETURN_IF_ERROR(ToStatus(cu->cuDeviceGetUuid(&uuid, device), "cuDeviceGetUuid"));
  info.uuid = FormatUuid(uuid);
  TT_ASSIGN_OR_RETURN(info.cc_major,
                      Attribute(*cu, device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "cc"));
  TT_ASSIGN_OR_RETURN(info.cc_minor,
                      Attribute(*cu, device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "cc"));
  TT_ASSIGN_OR_RETURN(info.sm_count,
                      Attribute(*cu, device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "SMs"));
  TT_ASSIGN_OR_RETURN(info.l2_bytes,
                      Attribute(*cu, device, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2 size"));
  TT_ASSIGN_OR_RETURN(info.memory_bus_bits,
                      Attribute(*cu, device, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, "bus"));
  TT_ASSIGN_OR_RETURN(
      info.max_shared_bytes_per_block_optin,
      Attribute(*cu, device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "smem"));
  size_t total = 0;
  TT_RETURN_IF_ERROR(ToStatus(cu->cuDeviceTotalMem(&total, device), "cuDeviceTotalMem"));
  info.memory_bytes = static_cast<int64_t>(total);

  CUcontext context = nullptr;
  TT_RETURN_IF_ERROR(
      ToStatus(cu->cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain"));
  return std::unique_ptr<Context>(new Context(cu, device, context, std::move(info)));
}

Context::~Context() { api_->cuDevicePrimaryCtxRelease(device_); }

absl::Status Context::Activate() const {
  return ToStatus(api_->cuCtxSetCurrent(context_), "cuCtxSetCurrent");
}

absl::Status Context::Synchronize() const {
  TT_RETURN_IF_ERROR(Activate());
  return ToStatus(api_->cuCtxSynchronize(), "cuCtxSynchronize");
}

absl::StatusOr<DeviceBuffer> DeviceBuffer::Allocate(const Context& context, size_t bytes) {
  TT_RETURN_IF_ERROR(context.Activate());
  CUdeviceptr ptr = 0;
  if (bytes > 0) {
    TT_RETURN_IF_ERROR(ToStatus(context.api().cuMemAlloc(&ptr, bytes),
                                absl::StrCat("cuMemAlloc(", bytes, " bytes)")));
  }
  return DeviceBuffer(&context, ptr, bytes);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : context_(other.context_), ptr_(other.ptr_), size_(other.size_) {
  other.context_ = nullptr;
  other.ptr_ = 0;
  other.size_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    Reset();
    std::swap(context_, other.context_);
    std::swap(ptr_, other.ptr_);
    std::swap(size_, other.size_);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { Reset(); }

void DeviceBuffer::Reset() {
  if (ptr_ != 0 && context_ != nullptr && context_->Activate().ok()) {
    context_->api().cuMemFree(ptr_);
  }
  context_ = nullptr;
  ptr_ = 0;
  size_ = 0;
}

absl::Status DeviceBuffer::CopyFromHost(const void* host, size_t bytes, size_t offset) {
  if (offset > size_ || bytes > size_ - offset) {
    return absl::OutOfRangeError(absl::StrCat("copy of ", bytes, " bytes at offset ", offset,
                                              " overruns a ", size_, "-byte device buffer"));
  }
  if (bytes == 0) return absl::OkStatus();
  TT_RETURN_IF_ERROR(context_->Activate());
  return ToStatus(context_->api().cuMemcpyHtoD(ptr_ + offset, host, bytes), "cuMemcpyHtoD");
}

absl::Status DeviceBuffer::CopyToHost(void* host, size_t bytes, size_t offset) const {
  if (offset > size_ || bytes > size_ - offset) {
    return absl::OutOfRangeError(absl::StrCat("copy of ", bytes, " bytes at offset ", offset,
                                              " overruns a ", size_, "-byte device buffer"));
  }
  if (bytes == 0) return absl::OkStatus();
  TT_RETURN_IF_ERROR(context_->Activate());
  return ToStatus(context_->api().cuMemcpyDtoH(host, ptr_ + offset, bytes), "cuMemcpyDtoH");
}

absl::Status DeviceBuffer::CopyFrom(const DeviceBuffer& other) {
  if (other.size_ > size_) {
    return absl::OutOfRangeError(absl::StrCat("copy of a ", other.size_,
                                              "-byte device buffer overruns a ", size_,
                                              "-byte one"));
  }
  if (other.context_ != context_) {
    return absl::InvalidArgumentError("a device-to-device copy between buffers of two contexts");
  }
  if (other.size_ == 0) return absl::OkStatus();
  TT_RETURN_IF_ERROR(context_->Activate());
  TT_RETURN_IF_ERROR(
      ToStatus(context_->api().cuMemcpyDtoD(ptr_, other.ptr_, other.size_), "cuMemcpyDtoD"));
  // Device-to-device copies do not wait for the host: work on other streams must see it.
  return context_->Synchronize();
}

absl::Status DeviceBuffer::Fill(uint8_t value) {
  if (size_ == 0) return absl::OkStatus();
  TT_RETURN_IF_ERROR(context_->Activate());
  TT_RETURN_IF_ERROR(ToStatus(context_->api().cuMemsetD8(ptr_, value, size_), "cuMemsetD8"));
  // A memset of device memory may return before it is done, on the legacy stream, which
  // work on non-blocking streams does not wait for: finish it, as CopyFrom does.
  return context_->Synchronize();
}

absl::StatusOr<std::unique_ptr<Stream>> Stream::Create(const Context& context) {
  TT_RETURN_IF_ERROR(context.Activate());
  CUstream stream = nullptr;
  TT_RETURN_IF_ERROR(ToStatus(context.api().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
                              "cuStreamCreate"));
  return std::unique_ptr<Stream>(new Stream(&context, stream));
}

Stream::~Stream() {
  if (context_->Activate().ok()) context_->api().cuStreamDestroy(stream_);
}

absl::Status Stream::Synchronize() const {
  TT_RETURN_IF_ERROR(context_->Activate());
  return ToStatus(context_->api().cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

absl::StatusOr<std::unique_ptr<Event>> Event::Create(const Context& context) {
  TT_RETURN_IF_ERROR(context.Activate());
  CUevent event = nullptr;
  TT_RETURN_IF_ERROR(ToStatus(context.api().cuEventCreate(&event, CU_EVENT_DEFAULT),
                              "cuEventCreate"));
  return std::unique_ptr<Event>(new Event(&context, event));
}

Event::~Event() {
  if (context_->Activate().ok()) context_->api().cuEventDestroy(event_);
}

absl::Status Event::Record(CUstream stream) const {
  TT_RETURN_IF_ERROR(context_->Activate());
  return ToStatus(context_->api().cuEventRecord(event_, stream), "cuEventRecord");
}

absl::Status Event::Synchronize() const {
  TT_RETURN_IF_ERROR(context_->Activate());
  return ToStatus(context_->api().cuEventSynchronize(event_), "cuEventSynchronize");
}

absl::StatusOr<float> Event::ElapsedSince(const Event& start) const {
  TT_RETURN_IF_ERROR(context_->Activate());
  float ms = 0;
  TT_RETURN_IF_ERROR(
      ToStatus(context_->api().cuEventElapsedTime(&ms, start.event_, event_), "cuEventElapsedTime"));
  return ms;
}

absl::Status Kernel::Launch(const LaunchConfig& config, absl::Span<void* const> args) const {
  if (static_cast<int>(args.size()) != param_count_) {
    return absl::InvalidArgumentError(absl::StrCat("kernel ", name_, " takes ", param_count_,
                                                   " arguments; launch passed ", args.size()));
  }
  TT_RETURN_IF_ERROR(context_->Activate());
  const DriverApi& cu = context_->api();
  // Dynamic shared memory beyond the default needs the kernel's limit raised (static
  // shared memory counts against the same 48 KiB), once per new high-water mark.
  if (config.dynamic_shared_bytes > dynamic_shared_limit_->load()) {
    TT_RETURN_IF_ERROR(ToStatus(
        cu.cuFuncSetAttribute(function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                              static_cast<int>(config.dynamic_shared_bytes)),
        absl::StrCat("raising ", name_, "'s dynamic shared memory to ",
                     config.dynamic_shared_bytes, " bytes")));
    *dynamic_shared_limit_ = config.dynamic_shared_bytes;
  }
  const CUresult result =
      cu.cuLaunchKernel(function_, config.grid[0], config.grid[1], config.grid[2],
                        config.block[0], config.block[1], config.block[2],
                        config.dynamic_shared_bytes, config.stream,
                        const_cast<void**>(args.data()), nullptr);
  // The hot path: the message is formatted only when there is an error to report.
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  return ToStatus(result, absl::StrCat("cuLaunchKernel(", name_, ", grid ", config.grid[0], "x",
                                       config.grid[1], "x", config.grid[2], ", block ",
                                       config.block[0], "x", config.block[1], "x",
                                       config.block[2], ", ", config.dynamic_shared_bytes,
                                       " B shared)"));
}

absl::StatusOr<std::unique_ptr<Module>> Module::Load(const Context& context,
                                                     absl::string_view image) {
  TT_RETURN_IF_ERROR(context.Activate());
  // PTX images must be NUL-terminated; a copy guarantees it for either kind.
  std::string owned(image);
  constexpr size_t kLogSize = 16 * 1024;
  std::vector<char> error_log(kLogSize, '\0');
  std::vector<char> info_log(kLogSize, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error_log.data(), reinterpret_cast<void*>(kLogSize), info_log.data(),
                    reinterpret_cast<void*>(kLogSize)};
  CUmodule module = nullptr;
  CUresult result = context.api().cuModuleLoadDataEx(&module, owned.c_str(), 4, options, values);
  if (result != CUDA_SUCCESS) {
    return ToStatus(result, absl::StrCat("cuModuleLoadDataEx on ", context.info().name, " (",
                                         context.info().ArchName(), "); JIT log: ",
                                         error_log.data()));
  }
  return std::unique_ptr<Module>(new Module(&context, module, info_log.data()));
}

Module::~Module() {
  if (context_->Activate().ok()) context_->api().cuModuleUnload(module_);
}

absl::Status Module::LoadFunction(absl::string_view name) const {
  TT_RETURN_IF_ERROR(context_->Activate());
  const std::string symbol(name);
  CUfunction function = nullptr;
  return ToStatus(context_->api().cuModuleGetFunction(&function, module_, symbol.c_str()),
                  absl::StrCat("cuModuleGetFunction(", symbol, ")"));
}

absl::StatusOr<Kernel> Module::GetKernel(absl::string_view name, int param_count) const {
  TT_RETURN_IF_ERROR(context_->Activate());
  const DriverApi& cu = context_->api();
  std::string symbol(name);
  CUfunction function = nullptr;
  TT_RETURN_IF_ERROR(ToStatus(cu.cuModuleGetFunction(&function, module_, symbol.c_str()),
                              absl::StrCat("cuModuleGetFunction(", symbol, ")")));
  if (cu.cuFuncGetParamInfo != nullptr) {
    int actual = 0;
    size_t offset = 0, size = 0;
    while (cu.cuFuncGetParamInfo(function, actual, &offset, &size) == CUDA_SUCCESS) ++actual;
    if (actual != param_count) {
      return absl::InvalidArgumentError(absl::StrCat("kernel ", symbol, " has ", actual,
                                                     " parameters; caller declared ",
                                                     param_count));
    }
  }
  return Kernel(context_, function, std::move(symbol), param_count);
}

}  // namespace tiletune

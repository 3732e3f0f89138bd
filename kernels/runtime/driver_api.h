// The CUDA driver API, loaded at run time through one table of function pointers.
//
// Nothing in tiletune links libcuda: binaries build and tests run on machines without a
// GPU, where LoadDriver() returns Unavailable and GPU tests skip. The library is found as
// $TILETUNE_CUDA_DRIVER_LIBRARY, else libcuda.so.1 through the dynamic loader. Entry
// points are resolved by the versioned names cuda.h maps them to, so each pointer has
// exactly the ABI of its declaration in cuda.h.
//
//   TT_ASSIGN_OR_RETURN(const DriverApi* cu, LoadDriver());
//   int count = 0;
//   TT_RETURN_IF_ERROR(ToStatus(cu->cuDeviceGetCount(&count), "cuDeviceGetCount"));
#ifndef KERNELS_RUNTIME_DRIVER_API_H_
#define KERNELS_RUNTIME_DRIVER_API_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cuda.h"

namespace tiletune {

#define TT_DRIVER_FUNCTIONS(X)   \
  X(cuGetErrorName)              \
  X(cuGetErrorString)            \
  X(cuInit)                      \
  X(cuDriverGetVersion)          \
  X(cuDeviceGetCount)            \
  X(cuDeviceGet)                 \
  X(cuDeviceGetName)             \
  X(cuDeviceGetAttribute)        \
  X(cuDeviceGetUuid)             \
  X(cuDeviceTotalMem)            \
  X(cuDevicePrimaryCtxRetain)    \
  X(cuDevicePrimaryCtxRelease)   \
  X(cuCtxSetCurrent)             \
  X(cuCtxGetCurrent)             \
  X(cuCtxPushCurrent)            \
  X(cuCtxPopCurrent)             \
  X(cuStreamGetCtx)              \
  X(cuCtxGetDevice)              \
  X(cuCtxSynchronize)            \
  X(cuModuleLoadDataEx)          \
  X(cuModuleUnload)              \
  X(cuModuleGetFunction)         \
  X(cuFuncGetAttribute)          \
  X(cuFuncSetAttribute)          \
  X(cuLaunchKernel)              \
  X(cuMemAlloc)                  \
  X(cuMemFree)                   \
  X(cuMemcpyHtoD)                \
  X(cuMemcpyDtoH)                \
  X(cuMemcpyDtoD)                \
  X(cuMemcpyDtoDAsync)           \
  X(cuMemsetD8)                  \
  X(cuMemsetD8Async)             \
  X(cuStreamCreate)              \
  X(cuStreamDestroy)             \
  X(cuStreamSynchronize)         \
  X(cuStreamIsCapturing)         \
  X(cuEventCreate)               \
  X(cuEventDestroy)              \
  X(cuEventRecord)               \
  X(cuEventSynchronize)          \
  X(cuEventElapsedTime)          \
  X(cuTensorMapEncodeTiled)      \
  X(cuTensorMapEncodeIm2col)

// Entry points that older drivers may lack; null when absent.
#define TT_OPTIONAL_DRIVER_FUNCTIONS(X) X(cuFuncGetParamInfo)

// Immutable once loaded; safe to share across threads.
struct DriverApi {
#define TT_DECLARE_DRIVER_POINTER(name) decltype(&::name) name = nullptr;
  TT_DRIVER_FUNCTIONS(TT_DECLARE_DRIVER_POINTER)
  TT_OPTIONAL_DRIVER_FUNCTIONS(TT_DECLARE_DRIVER_POINTER)
#undef TT_DECLARE_DRIVER_POINTER

  // Where the library was loaded from, and the driver's CUDA version (e.g. 13000).
  std::string library_path;
  int driver_version = 0;
};

// Loads and initialises the driver once per process (thread-safe). Unavailable when no
// driver library can be loaded, cuInit fails, or the driver is older than the CUDA
// version tiletune was built for.
absl::StatusOr<const DriverApi*> LoadDriver();

// Converts a driver result into a status carrying `detail`, the error's name and its
// description. CUDA_SUCCESS gives OK. Codes: no device or driver -> Unavailable; bad
// arguments -> InvalidArgument; out of memory -> ResourceExhausted; faults that poison
// the context (illegal address, launch failure, timeout) -> Aborted; others -> Internal.
absl::Status ToStatus(CUresult result, absl::string_view detail);

}  // namespace tiletune

#endif  // KERNELS_RUNTIME_DRIVER_API_H_

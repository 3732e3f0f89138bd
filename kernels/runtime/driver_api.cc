#include "kernels/runtime/driver_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "compiler/base/status_macros.h"

namespace tiletune {
namespace {

absl::StatusOr<DriverApi> Load() {
  DriverApi api;
  const char* override_path = std::getenv("TILETUNE_CUDA_DRIVER_LIBRARY");
  api.library_path = override_path != nullptr ? override_path : "libcuda.so.1";
  void* handle = dlopen(api.library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return absl::UnavailableError(absl::StrCat("no CUDA driver: cannot load ", api.library_path,
                                               " (", dlerror(),
                                               "); this machine has no usable NVIDIA GPU"));
  }
  // A library without the driver's oldest entry point is not a CUDA driver at all (a
  // mistyped TILETUNE_CUDA_DRIVER_LIBRARY), not an old one.
  if (dlsym(handle, "cuInit") == nullptr) {
    return absl::UnavailableError(absl::StrCat(
        api.library_path, " is not a CUDA driver (it exports no cuInit)",
        override_path != nullptr ? "; TILETUNE_CUDA_DRIVER_LIBRARY names the NVIDIA driver "
                                   "library, libcuda.so.1, or is left unset"
                                 : ""));
  }
  // Each entry point is looked up by the name its declaration in cuda.h resolves to after
  // macro expansion (cuMemAlloc -> cuMemAlloc_v2), so the pointer has exactly the ABI of
  // that declaration. (cuGetProcAddress would return the newest ABI for the CUDA version,
  // which differs where cuda.h keeps an older name: cuCtxSynchronize in CUDA 13.)
  auto resolve = [&](const char* symbol, void** slot, bool required) -> absl::Status {
    *slot = dlsym(handle, symbol);
    if (*slot != nullptr || !required) return absl::OkStatus();
    return absl::UnavailableError(absl::StrCat("the CUDA driver at ", api.library_path,
                                               " does not export ", symbol,
                                               ": it is older than CUDA ", CUDA_VERSION / 1000,
                                               "; update the driver"));
  };
#define TT_EXPANDED_NAME(name) TT_STRINGIFY(name)
#define TT_STRINGIFY(name) #name
#define TT_RESOLVE_REQUIRED(name) \
  TT_RETURN_IF_ERROR(resolve(TT_EXPANDED_NAME(name), reinterpret_cast<void**>(&api.name), true));
#define TT_RESOLVE_OPTIONAL(name) \
  TT_RETURN_IF_ERROR(resolve(TT_EXPANDED_NAME(name), reinterpret_cast<void**>(&api.name), false));
  TT_DRIVER_FUNCTIONS(TT_RESOLVE_REQUIRED)
  TT_OPTIONAL_DRIVER_FUNCTIONS(TT_RESOLVE_OPTIONAL)
#undef TT_RESOLVE_REQUIRED
#undef TT_RESOLVE_OPTIONAL
#undef TT_STRINGIFY
#undef TT_EXPANDED_NAME

  CUresult init = api.cuInit(0);
  if (init != CUDA_SUCCESS) {
    const char* name = "unknown";
    api.cuGetErrorName(init, &name);
    return absl::UnavailableError(absl::StrCat("cuInit failed: ", name,
                                               "; no usable NVIDIA GPU on this machine"));
  }
  if (api.cuDriverGetVersion(&api.driver_version) != CUDA_SUCCESS) {
    return absl::UnavailableError("cuDriverGetVersion failed");
  }
  return api;
}

}  // namespace

absl::StatusOr<const DriverApi*> LoadDriver() {
  // Loaded once; the library stays open for the life of the process.
  static const absl::StatusOr<DriverApi>* const loaded = new absl::StatusOr<DriverApi>(Load());
  if (!loaded->ok()) return loaded->status();
  return &loaded->value();
}

absl::Status ToStatus(CUresult result, absl::string_view detail) {
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  const char* name = nullptr;
  const char* description = nullptr;
  absl::StatusOr<const DriverApi*> api = LoadDriver();
  if (api.ok()) {
    (*api)->cuGetErrorName(result, &name);
    (*api)->cuGetErrorString(result, &description);
  }
  std::string message =
      absl::StrCat(detail, ": ", name != nullptr ? name : "CUresult",
                   " (", static_cast<int>(result), ")",
                   description != nullptr ? absl::StrCat(": ", description) : "");
  switch (result) {
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_STUB_LIBRARY:
      return absl::UnavailableError(message);
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_INVALID_HANDLE:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_NOT_FOUND:
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
      return absl::InvalidArgumentError(message);
    case CUDA_ERROR_OUT_OF_MEMORY:
      return absl::ResourceExhaustedError(message);
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
      return absl::AbortedError(message);
    default:
      return absl::InternalError(message);
  }
}

}  // namespace tiletune

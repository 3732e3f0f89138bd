#include "compiler/cuda/nvrtc_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "compiler/base/status_macros.h"

namespace tiletune {
namespace {

constexpr const char* kLibraryName = "libnvrtc.so.13";

std::vector<std::string> CandidatePaths() {
  std::vector<std::string> paths;
  // A library named explicitly is the only one tried: falling back to another would hide
  // that the one asked for is missing.
  if (const char* explicit_path = std::getenv("TILETUNE_NVRTC_LIBRARY");
      explicit_path != nullptr && *explicit_path != '\0') {
    return {explicit_path};
  }
  if (const char* cuda_path = std::getenv("CUDA_PATH")) {
    paths.push_back(absl::StrCat(cuda_path, "/lib64/", kLibraryName));
  }
  paths.push_back(absl::StrCat("/usr/local/cuda/lib64/", kLibraryName));
  paths.push_back(kLibraryName);
  return paths;
}

template <typename Fn>
absl::Status Resolve(void* handle, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
  if (fn == nullptr) {
    return absl::UnavailableError(absl::StrCat("NVRTC library lacks symbol ", name));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<NvrtcApi> LoadNvrtcFrom(const std::vector<std::string>& paths) {
  NvrtcApi api;
  void* handle = nullptr;
  std::vector<std::string> tried;
  for (const std::string& path : paths) {
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      api.library_path = path;
      break;
    }
    tried.push_back(absl::StrCat(path, " (", dlerror(), ")"));
  }
  if (handle == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("NVRTC not found; tried: ", absl::StrJoin(tried, "; "),
                     ". Install the CUDA 13 toolkit, or set CUDA_PATH or TILETUNE_NVRTC_LIBRARY"));
  }
  TT_RETURN_IF_ERROR(Resolve(handle, "nvrtcGetErrorString", api.nvrtcGetErrorString));
  TT_RETURN_IF_ERROR(Resolve(handle, "nvrtcVersion", api.nvrtcVersion));
  TT_RETURN_IF_ERROR(Resolve(handle, "nvrtcGetNumSupportedArchs", api.nvrtcGetNumSupportedArchs));
  TT_RETURN_IF_ERROR(Resolve(handle, "nvrtcGetSupportedArchs", api.nvrtcGetSupportedArchs));
  TT_RETURN_IF_ERROR(Resolve(handle, "nvrtcCreateProgram", api.nvrtcCreateProgram));
  TT_RETURN_IF_ERROR(Resolve(handle, "nvrtcDestroyProgram", api.nvrtcDestroyProgram));
  TT_RETURN_IF_ERROR(Resolve(handle, "nvrtcCompileProgram", api.nvrtcCompileProgram));
  TT_RETURN_IF_ERROR(Resolve(handle, "nvrtcGetPTXSize", api.nvrtcGetPTXSize));
  TT_RETURN_IF_ERROR(Resolve(handle, "nvrtcGetPTX", api.nvrtcGetPTX));
  TT_RETURN_IF_ERROR(Resolve(handle, "nvrtcGetCUBINSize", api.nvrtcGetCUBINSize));
  TT_RETURN_IF_ERROR(Resolve(handle, "nvrtcGetCUBIN", api.nvrtcGetCUBIN));
  TT_RETURN_IF_ERROR(Resolve(handle, "nvrtcGetProgramLogSize", api.nvrtcGetProgramLogSize));
  TT_RETURN_IF_ERROR(Resolve(handle, "nvrtcGetProgramLog", api.nvrtcGetProgramLog));

  TT_RETURN_IF_ERROR(ToStatus(api.nvrtcVersion(&api.version_major, &api.version_minor),
                              "nvrtcVersion"));
  int num_archs = 0;
  TT_RETURN_IF_ERROR(ToStatus(api.nvrtcGetNumSupportedArchs(&num_archs),
                              "nvrtcGetNumSupportedArchs"));
  api.supported_archs.resize(num_archs);
  TT_RETURN_IF_ERROR(ToStatus(api.nvrtcGetSupportedArchs(api.supported_archs.data()),
                              "nvrtcGetSupportedArchs"));
  return api;
}

absl::StatusOr<const NvrtcApi*> LoadNvrtc() {
  // Loaded once; the handle stays open for the life of the process.
  static const absl::StatusOr<NvrtcApi>* const loaded = new absl::StatusOr<NvrtcApi>(LoadNvrtcFrom(CandidatePaths()));
  if (!loaded->ok()) return loaded->status();
  return &loaded->value();
}

absl::Status ToStatus(nvrtcResult result, absl::string_view detail) {
  if (result == NVRTC_SUCCESS) return absl::OkStatus();
  absl::StatusOr<const NvrtcApi*> api = LoadNvrtc();
  std::string what = api.ok() ? (*api)->nvrtcGetErrorString(result)
                              : absl::StrCat("nvrtcResult ", static_cast<int>(result));
  std::string message = absl::StrCat(detail, ": ", what);
  switch (result) {
    case NVRTC_ERROR_OUT_OF_MEMORY:
      return absl::ResourceExhaustedError(message);
    case NVRTC_ERROR_INVALID_INPUT:
    case NVRTC_ERROR_INVALID_PROGRAM:
    case NVRTC_ERROR_INVALID_OPTION:
    case NVRTC_ERROR_COMPILATION:
    case NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID:
      return absl::InvalidArgumentError(message);
    default:
      return absl::InternalError(message);
  }
}

}  // namespace tiletune

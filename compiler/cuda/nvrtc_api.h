// NVRTC, loaded at run time through one table of function pointers.
//
// Loading at run time keeps every binary free of a link-time dependency on the CUDA
// toolkit's shared libraries: the same binary runs on a development machine and on the
// GPU machine, and finds NVRTC at $TILETUNE_NVRTC_LIBRARY when that is set (and nowhere
// else), otherwise in (first match wins) $CUDA_PATH/lib64, /usr/local/cuda/lib64, then the
// dynamic loader's search path.
//
//   TT_ASSIGN_OR_RETURN(const NvrtcApi* nvrtc, LoadNvrtc());
//   TT_RETURN_IF_ERROR(ToStatus(nvrtc->nvrtcVersion(&major, &minor), "nvrtcVersion"));
#ifndef COMPILER_CUDA_NVRTC_API_H_
#define COMPILER_CUDA_NVRTC_API_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nvrtc.h"

namespace tiletune {

// The NVRTC entry points tiletune uses. Immutable once loaded; safe to share across threads.
struct NvrtcApi {
  decltype(&::nvrtcGetErrorString) nvrtcGetErrorString = nullptr;
  decltype(&::nvrtcVersion) nvrtcVersion = nullptr;
  decltype(&::nvrtcGetNumSupportedArchs) nvrtcGetNumSupportedArchs = nullptr;
  decltype(&::nvrtcGetSupportedArchs) nvrtcGetSupportedArchs = nullptr;
  decltype(&::nvrtcCreateProgram) nvrtcCreateProgram = nullptr;
  decltype(&::nvrtcDestroyProgram) nvrtcDestroyProgram = nullptr;
  decltype(&::nvrtcCompileProgram) nvrtcCompileProgram = nullptr;
  decltype(&::nvrtcGetPTXSize) nvrtcGetPTXSize = nullptr;
  decltype(&::nvrtcGetPTX) nvrtcGetPTX = nullptr;
  decltype(&::nvrtcGetCUBINSize) nvrtcGetCUBINSize = nullptr;
  decltype(&::nvrtcGetCUBIN) nvrtcGetCUBIN = nullptr;
  decltype(&::nvrtcGetProgramLogSize) nvrtcGetProgramLogSize = nullptr;
  decltype(&::nvrtcGetProgramLog) nvrtcGetProgramLog = nullptr;

  // The path the library was loaded from, and its version.
  std::string library_path;
  int version_major = 0;
  int version_minor = 0;
  // Real architectures this NVRTC can compile for, e.g. {75, 80, 86, 89, 90, 100, ...}.
  std::vector<int> supported_archs;
};

// Loads NVRTC once per process (thread-safe) and returns the shared table. Returns
// Unavailable, naming every path tried, when no usable library is found.
absl::StatusOr<const NvrtcApi*> LoadNvrtc();

// Loads the first usable library of `paths` (LoadNvrtc's list: $TILETUNE_NVRTC_LIBRARY
// alone when set, else $CUDA_PATH/lib64, /usr/local/cuda/lib64, the loader path);
// Unavailable naming every path tried and why each failed otherwise.
absl::StatusOr<NvrtcApi> LoadNvrtcFrom(const std::vector<std::string>& paths);

// Converts an NVRTC result into a status whose message carries `detail` and NVRTC's own
// description. NVRTC_SUCCESS gives OK.
absl::Status ToStatus(nvrtcResult result, absl::string_view detail);

}  // namespace tiletune

#endif  // COMPILER_CUDA_NVRTC_API_H_

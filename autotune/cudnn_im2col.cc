#include "autotune/cudnn_im2col.h"

#include <dlfcn.h>

#include <cstdlib>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/base/status_macros.h"
#include "cudnn.h"

namespace tiletune {
namespace autotune {
namespace {

// The entry points used, resolved from the loaded library.
struct CudnnApi {
  decltype(&cudnnGetErrorString) GetErrorString = nullptr;
  decltype(&cudnnCreate) Create = nullptr;
  decltype(&cudnnDestroy) Destroy = nullptr;
  decltype(&cudnnSetStream) SetStream = nullptr;
  decltype(&cudnnCreateTensorDescriptor) CreateTensorDescriptor = nullptr;
  decltype(&cudnnDestroyTensorDescriptor) DestroyTensorDescriptor = nullptr;
  decltype(&cudnnSetTensor4dDescriptor) SetTensor4dDescriptor = nullptr;
  decltype(&cudnnCreateFilterDescriptor) CreateFilterDescriptor = nullptr;
  decltype(&cudnnDestroyFilterDescriptor) DestroyFilterDescriptor = nullptr;
  decltype(&cudnnSetFilter4dDescriptor) SetFilter4dDescriptor = nullptr;
  decltype(&cudnnCreateConvolutionDescriptor) CreateConvolutionDescriptor = nullptr;
  decltype(&cudnnDestroyConvolutionDescriptor) DestroyConvolutionDescriptor = nullptr;
  decltype(&cudnnSetConvolution2dDescriptor) SetConvolution2dDescriptor = nullptr;
  decltype(&cudnnIm2Col) Im2Col = nullptr;
};

absl::StatusOr<const CudnnApi*> LoadCudnn() {
  static std::once_flag once;
  static absl::StatusOr<CudnnApi>* loaded = nullptr;
  std::call_once(once, [] {
    const char* override_path = std::getenv("TILETUNE_CUDNN");
    const std::string path =
        override_path != nullptr && *override_path != '\0' ? override_path : "libcudnn.so.9";
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* error = dlerror();
      loaded = new absl::StatusOr<CudnnApi>(absl::UnavailableError(
          absl::StrCat("cuDNN could not be loaded (", path, "): ", error ? error : "unknown error",
                       "; put its lib/ folder on LD_LIBRARY_PATH")));
      return;
    }
    CudnnApi api;
    std::string missing;
    auto resolve = [&](auto* slot, const char* symbol) {
      *slot = reinterpret_cast<std::remove_reference_t<decltype(*slot)>>(dlsym(handle, symbol));
      if (*slot == nullptr) absl::StrAppend(&missing, missing.empty() ? "" : ", ", symbol);
    };
    resolve(&api.GetErrorString, "cudnnGetErrorString");
    resolve(&api.Create, "cudnnCreate");
    resolve(&api.Destroy, "cudnnDestroy");
    resolve(&api.SetStream, "cudnnSetStream");
    resolve(&api.CreateTensorDescriptor, "cudnnCreateTensorDescriptor");
    resolve(&api.DestroyTensorDescriptor, "cudnnDestroyTensorDescriptor");
    resolve(&api.SetTensor4dDescriptor, "cudnnSetTensor4dDescriptor");
    resolve(&api.CreateFilterDescriptor, "cudnnCreateFilterDescriptor");
    resolve(&api.DestroyFilterDescriptor, "cudnnDestroyFilterDescriptor");
    resolve(&api.SetFilter4dDescriptor, "cudnnSetFilter4dDescriptor");
    resolve(&api.CreateConvolutionDescriptor, "cudnnCreateConvolutionDescriptor");
    resolve(&api.DestroyConvolutionDescriptor, "cudnnDestroyConvolutionDescriptor");
    resolve(&api.SetConvolution2dDescriptor, "cudnnSetConvolution2dDescriptor");
    resolve(&api.Im2Col, "cudnnIm2Col");
    if (!missing.empty()) {
      loaded = new absl::StatusOr<CudnnApi>(absl::UnavailableError(
          absl::StrCat(path, " lacks ", missing, " (cuDNN 9 with the legacy API is needed)")));
      return;
    }
    loaded = new absl::StatusOr<CudnnApi>(api);
  });
  if (!loaded->ok()) return loaded->status();
  return &**loaded;
}

absl::StatusOr<cudnnDataType_t> CudnnType(DataType dtype) {
  switch (dtype) {
    case DataType::kF64: return CUDNN_DATA_DOUBLE;
    case DataType::kF32: return CUDNN_DATA_FLOAT;
    case DataType::kF16: return CUDNN_DATA_HALF;
    case DataType::kBF16: return CUDNN_DATA_BFLOAT16;
    case DataType::kF8E4M3: return CUDNN_DATA_FP8_E4M3;
    case DataType::kI32: return CUDNN_DATA_INT32;
    case DataType::kI8: return CUDNN_DATA_INT8;
    case DataType::kU8: return CUDNN_DATA_UINT8;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("no cuDNN data type for ", DataTypeName(dtype)));
}

}  // namespace

struct CudnnIm2col::State {
  const CudnnApi* api = nullptr;
  cudnnHandle_t handle = nullptr;
  cudnnTensorDescriptor_t x = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;

  absl::Status Check(cudnnStatus_t status, const char* call) const {
    if (status == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
    return absl::InternalError(absl::StrCat(call, ": ", api->GetErrorString(status)));
  }
  ~State() {
    if (conv != nullptr) api->DestroyConvolutionDescriptor(conv);
    if (w != nullptr) api->DestroyFilterDescriptor(w);
    if (x != nullptr) api->DestroyTensorDescriptor(x);
    if (handle != nullptr) api->Destroy(handle);
  }
};

CudnnIm2col::CudnnIm2col(std::unique_ptr<State> state) : state_(std::move(state)) {}
CudnnIm2col::~CudnnIm2col() = default;

absl::StatusOr<std::unique_ptr<CudnnIm2col>> CudnnIm2col::Create(DataType dtype,
                                                                 const Im2colGeometry& g) {
  for (int64_t value : {g.n, g.h, g.w, g.c, g.kh, g.kw, g.sh, g.sw, g.dh, g.dw, g.ph, g.pw}) {
    if (value > std::numeric_limits<int>::max()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cuDNN takes int sizes; ", Im2colGeometryToString(g), " has ", value));
    }
  }
  TT_ASSIGN_OR_RETURN(cudnnDataType_t type, CudnnType(dtype));
  auto state = std::make_unique<State>();
  TT_ASSIGN_OR_RETURN(state->api, LoadCudnn());
  const CudnnApi& api = *state->api;
  TT_RETURN_IF_ERROR(state->Check(api.Create(&state->handle), "cudnnCreate"));
  TT_RETURN_IF_ERROR(state->Check(api.SetStream(state->handle, nullptr), "cudnnSetStream"));
  TT_RETURN_IF_ERROR(
      state->Check(api.CreateTensorDescriptor(&state->x), "cudnnCreateTensorDescriptor"));
  TT_RETURN_IF_ERROR(
      state->Check(api.CreateFilterDescriptor(&state->w), "cudnnCreateFilterDescriptor"));
  TT_RETURN_IF_ERROR(state->Check(api.CreateConvolutionDescriptor(&state->conv),
                                  "cudnnCreateConvolutionDescriptor"));
  auto i = [](int64_t v) { return static_cast<int>(v); };
  TT_RETURN_IF_ERROR(state->Check(api.SetTensor4dDescriptor(state->x, CUDNN_TENSOR_NCHW, type,
                                                            i(g.n), i(g.c), i(g.h), i(g.w)),
                                  "cudnnSetTensor4dDescriptor"));
  // One output channel: im2col does not depend on it.
  TT_RETURN_IF_ERROR(state->Check(api.SetFilter4dDescriptor(state->w, type, CUDNN_TENSOR_NCHW,
                                                            /*k=*/1, i(g.c), i(g.kh), i(g.kw)),
                                  "cudnnSetFilter4dDescriptor"));
  const cudnnDataType_t compute =
      dtype == DataType::kF64 ? CUDNN_DATA_DOUBLE
      : (dtype == DataType::kI8 || dtype == DataType::kU8 || dtype == DataType::kI32)
          ? CUDNN_DATA_INT32
          : CUDNN_DATA_FLOAT;
  TT_RETURN_IF_ERROR(state->Check(
      api.SetConvolution2dDescriptor(state->conv, i(g.ph), i(g.pw), i(g.sh), i(g.sw), i(g.dh),
                                     i(g.dw), CUDNN_CROSS_CORRELATION, compute),
      "cudnnSetConvolution2dDescriptor"));
  return std::unique_ptr<CudnnIm2col>(new CudnnIm2col(std::move(state)));
}

absl::Status CudnnIm2col::Run(uint64_t img, uint64_t col) {
  return state_->Check(
      state_->api->Im2Col(state_->handle, state_->x, reinterpret_cast<const void*>(img), state_->w,
                          state_->conv, reinterpret_cast<void*>(col)),
      "cudnnIm2Col");
}

}  // namespace autotune
}  // namespace tiletune

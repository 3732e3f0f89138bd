#include "kernels/im2col_kernel.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "compiler/base/status_macros.h"
#include "compiler/codegen/im2col_emitter.h"
#include "kernels/copy_kernel.h"
#include "kernels/runtime/driver_api.h"

namespace tiletune {

absl::StatusOr<CUtensorMap> EncodeIm2colTensorMap(const DriverApi& cu,
                                                  const Im2colTensorMapSpec& spec,
                                                  CUdeviceptr img) {
  CUtensorMapDataType type;
  switch (spec.element_bytes) {
    case 1: type = CU_TENSOR_MAP_DATA_TYPE_UINT8; break;
    case 2: type = CU_TENSOR_MAP_DATA_TYPE_UINT16; break;
    case 4: type = CU_TENSOR_MAP_DATA_TYPE_UINT32; break;
    case 8: type = CU_TENSOR_MAP_DATA_TYPE_UINT64; break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("no TMA element type of ", spec.element_bytes, " bytes"));
  }
  if (img % 16 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TMA image address 0x", absl::Hex(img), " is not 16-byte aligned; align the buffer"));
  }
  if (spec.dims.size() != 4 || spec.strides_bytes.size() != 3 || spec.lower_corner.size() != 2 ||
      spec.upper_corner.size() != 2 || spec.element_strides.size() != 4) {
    return absl::InvalidArgumentError("im2col tensor map spec is not rank 4 (NHWC)");
  }
  std::vector<cuuint64_t> dims(spec.dims.begin(), spec.dims.end());
  std::vector<cuuint64_t> strides(spec.strides_bytes.begin(), spec.strides_bytes.end());
  std::vector<int> lower(spec.lower_corner.begin(), spec.lower_corner.end());
  std::vector<int> upper(spec.upper_corner.begin(), spec.upper_corner.end());
  std::vector<cuuint32_t> element_strides(spec.element_strides.begin(),
                                          spec.element_strides.end());
  CUtensorMap map;
  TT_RETURN_IF_ERROR(ToStatus(
      cu.cuTensorMapEncodeIm2col(&map, type, static_cast<cuuint32_t>(dims.size()),
                                 reinterpret_cast<void*>(img), dims.data(), strides.data(),
                                 lower.data(), upper.data(), spec.channels_per_pixel,
                                 spec.pixels_per_column, element_strides.data(),
                                 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                 CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
      absl::StrCat("cuTensorMapEncodeIm2col (corners lower ", lower[0], ",", lower[1], " upper ",
                   upper[0], ",", upper[1], ", ", spec.channels_per_pixel, " channels x ",
                   spec.pixels_per_column, " pixels)")));
  return map;
}

Im2colKernel::Im2colKernel(const Context& context, LoweredIm2col lowered, std::string source,
                           std::unique_ptr<Module> module, Kernel kernel)
    : context_(context),
      lowered_(std::move(lowered)),
      source_(std::move(source)),
      module_(std::move(module)),
      kernel_(std::move(kernel)),
      grid_(Im2colGridSize(lowered_, context.info().sm_count)) {}

absl::StatusOr<std::unique_ptr<Im2colKernel>> Im2colKernel::Create(const Context& context,
                                                                   const LoweredIm2col& lowered,
                                                                   CompilationProvider& compiler) {
  CudaSource source = EmitIm2colKernel(lowered);
  CompileOptions options;
  options.arch = lowered.target.ArchName();
  TT_ASSIGN_OR_RETURN(Cubin cubin, compiler.CompileToCubin(source, options));
  return CreateFromCubin(context, lowered, std::move(source.text), cubin);
}

absl::StatusOr<std::unique_ptr<Im2colKernel>> Im2colKernel::CreateFromCubin(
    const Context& context, const LoweredIm2col& lowered, std::string source, const Cubin& cubin) {
  TT_ASSIGN_OR_RETURN(LoadedTileKernel loaded,
                      LoadTileKernel(context, lowered.target, cubin, lowered.kernel_name,
                                     lowered.param_count()));
  return std::unique_ptr<Im2colKernel>(new Im2colKernel(context, lowered, std::move(source),
                                                        std::move(loaded.module),
                                                        std::move(loaded.kernel)));
}

absl::Status Im2colKernel::Launch(CUdeviceptr img, CUdeviceptr col, CUstream stream) {
  TT_RETURN_IF_ERROR(CheckTileBuffersAligned("im2col", "img", img, "col", col));
  std::vector<CUtensorMap> none;
  std::vector<CUtensorMap>* maps = &none;
  if (lowered_.img_map.has_value() || lowered_.col_map.has_value()) {
    TT_ASSIGN_OR_RETURN(maps, maps_.Get(img, col, [&]() -> absl::StatusOr<std::vector<CUtensorMap>> {
      std::vector<CUtensorMap> encoded;
      if (lowered_.img_map) {
        TT_ASSIGN_OR_RETURN(CUtensorMap map,
                            EncodeIm2colTensorMap(context_.api(), *lowered_.img_map, img));
        encoded.push_back(map);
      }
      if (lowered_.col_map) {
        TT_ASSIGN_OR_RETURN(CUtensorMap map,
                            EncodeTensorMap(context_.api(), *lowered_.col_map, col));
        encoded.push_back(map);
      }
      return encoded;
    }));
  }
  return LaunchTileKernel(kernel_, grid_, lowered_.launch.threads, lowered_.shared_bytes, stream,
                          img, col, *maps);
}

}  // namespace tiletune

#include "kernels/copy_kernel.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "compiler/base/status_macros.h"
#include "compiler/codegen/copy_emitter.h"
#include "kernels/runtime/driver_api.h"

namespace tiletune {

absl::StatusOr<CUtensorMap> EncodeTensorMap(const DriverApi& cu, const TensorMapSpec& spec,
                                            CUdeviceptr buffer) {
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
  CUdeviceptr base = buffer + spec.base_offset_bytes;
  if (base % 16 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TMA base address 0x", absl::Hex(base), " is not 16-byte aligned; align the buffer"));
  }
  std::vector<cuuint64_t> dims(spec.dims.begin(), spec.dims.end());
  std::vector<cuuint64_t> strides(spec.strides_bytes.begin(), spec.strides_bytes.end());
  std::vector<cuuint32_t> box(spec.box.begin(), spec.box.end());
  std::vector<cuuint32_t> element_strides(spec.dims.size(), 1);
  CUtensorMap map;
  TT_RETURN_IF_ERROR(ToStatus(
      cu.cuTensorMapEncodeTiled(&map, type, static_cast<cuuint32_t>(dims.size()),
                                reinterpret_cast<void*>(base), dims.data(),
                                strides.empty() ? nullptr : strides.data(), box.data(),
                                element_strides.data(), CU_TENSOR_MAP_INTERLEAVE_NONE,
                                CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
      "cuTensorMapEncodeTiled"));
  return map;
}

absl::StatusOr<std::vector<CUtensorMap>*> TensorMapCache::Get(CUdeviceptr first,
                                                              CUdeviceptr second,
                                                              const Encoder& encode) {
  for (size_t i = entries_.size(); i-- > 0;) {
    if (entries_[i].first == first && entries_[i].second == second) {
      if (i + 1 != entries_.size()) {
        Entry hit = std::move(entries_[i]);
        entries_.erase(entries_.begin() + i);
        entries_.push_back(std::move(hit));
      }
      return &entries_.back().maps;
    }
  }
  TT_ASSIGN_OR_RETURN(std::vector<CUtensorMap> maps, encode());
  if (entries_.size() == kMaxPairs) entries_.erase(entries_.begin());
  entries_.push_back(Entry{first, second, std::move(maps)});
  return &entries_.back().maps;
}

absl::Status LaunchTileKernel(const Kernel& kernel, int64_t grid, int threads,
                              int64_t shared_bytes, CUstream stream, CUdeviceptr first,
                              CUdeviceptr second, std::vector<CUtensorMap>& maps) {
  absl::InlinedVector<void*, 4> args = {&first, &second};  // no allocation per launch
  for (CUtensorMap& map : maps) args.push_back(&map);
  LaunchConfig config;
  config.grid = {static_cast<unsigned>(grid), 1, 1};
  config.block = {static_cast<unsigned>(threads), 1, 1};
  config.dynamic_shared_bytes = static_cast<unsigned>(shared_bytes);
  config.stream = stream;
  return kernel.Launch(config, args);
}

CopyKernel::CopyKernel(const Context& context, LoweredCopy lowered, std::string source,
                       std::unique_ptr<Module> module, Kernel kernel)
    : context_(context),
      lowered_(std::move(lowered)),
      source_(std::move(source)),
      module_(std::move(module)),
      kernel_(std::move(kernel)),
      grid_(CopyGridSize(lowered_, context.info().sm_count)) {}

absl::StatusOr<std::unique_ptr<CopyKernel>> CopyKernel::Create(const Context& context,
                                                               const LoweredCopy& lowered,
                                                               CompilationProvider& compiler) {
  CudaSource source = EmitCopyKernel(lowered);
  CompileOptions options;
  options.arch = lowered.target.ArchName();
  TT_ASSIGN_OR_RETURN(Cubin cubin, compiler.CompileToCubin(source, options));
  return CreateFromCubin(context, lowered, std::move(source.text), cubin);
}

absl::StatusOr<LoadedTileKernel> LoadTileKernel(const Context& context, const Target& target,
                                                const Cubin& cubin, const std::string& name,
                                                int param_count) {
  if (target.arch() != context.info().cc_major * 10 + context.info().cc_minor) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel lowered for ", target.ArchName(), " cannot run on ",
                     context.info().name, " (", context.info().ArchName(), ")"));
  }
  TT_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, Module::Load(context, cubin.bytes));
  TT_ASSIGN_OR_RETURN(Kernel kernel, module->GetKernel(name, param_count));
  return LoadedTileKernel{std::move(module), std::move(kernel)};
}

absl::Status CheckTileBuffersAligned(const std::string& op, const std::string& first_name,
                                     CUdeviceptr first, const std::string& second_name,
                                     CUdeviceptr second) {
  if (first % 16 == 0 && second % 16 == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(op, " buffers must be 16-byte aligned; got ",
                                                 first_name, " 0x", absl::Hex(first), ", ",
                                                 second_name, " 0x", absl::Hex(second)));
}

absl::StatusOr<std::unique_ptr<CopyKernel>> CopyKernel::CreateFromCubin(
    const Context& context, const LoweredCopy& lowered, std::string source, const Cubin& cubin) {
  TT_ASSIGN_OR_RETURN(LoadedTileKernel loaded,
                      LoadTileKernel(context, lowered.target, cubin, lowered.kernel_name,
                                     lowered.param_count()));
  return std::unique_ptr<CopyKernel>(new CopyKernel(context, lowered, std::move(source),
                                                    std::move(loaded.module),
                                                    std::move(loaded.kernel)));
}

absl::Status CopyKernel::Launch(CUdeviceptr src, CUdeviceptr dst, CUstream stream) {
  TT_RETURN_IF_ERROR(CheckTileBuffersAligned("copy", "src", src, "dst", dst));
  std::vector<CUtensorMap> none;
  std::vector<CUtensorMap>* maps = &none;
  if (!lowered_.tensor_maps.empty()) {
    TT_ASSIGN_OR_RETURN(maps, maps_.Get(src, dst, [&]() -> absl::StatusOr<std::vector<CUtensorMap>> {
      std::vector<CUtensorMap> encoded;
      for (const TensorMapSpec& spec : lowered_.tensor_maps) {
        CUdeviceptr buffer = spec.operand == TensorMapSpec::Operand::kSrc ? src : dst;
        TT_ASSIGN_OR_RETURN(CUtensorMap map, EncodeTensorMap(context_.api(), spec, buffer));
        encoded.push_back(map);
      }
      return encoded;
    }));
  }
  return LaunchTileKernel(kernel_, grid_, lowered_.launch.threads, lowered_.shared_bytes, stream,
                          src, dst, *maps);
}

}  // namespace tiletune

#include "kernels/tile_kernel.h"

#include <algorithm>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/base/status_macros.h"
#include "kernels/runtime/driver_api.h"

namespace tiletune {
namespace {

absl::StatusOr<CUtensorMapDataType> ElementType(int element_bytes) {
  switch (element_bytes) {
    case 1: return CU_TENSOR_MAP_DATA_TYPE_UINT8;
    case 2: return CU_TENSOR_MAP_DATA_TYPE_UINT16;
    case 4: return CU_TENSOR_MAP_DATA_TYPE_UINT32;
    case 8: return CU_TENSOR_MAP_DATA_TYPE_UINT64;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("no TMA element type of ", element_bytes, " bytes"));
  }
}

// InvalidArgument unless the lowering's target is the architecture of the context's device.
absl::Status CheckArchitecture(const Context& context, const LoweredTileKernel& lowered) {
  const Target& target = lowered.target;
  if (target.arch() != context.info().cc_major * 10 + context.info().cc_minor) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel lowered for ", target.ArchName(), " cannot run on ",
                     context.info().name, " (", context.info().ArchName(), ")"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CUtensorMap> EncodeTensorMap(const DriverApi& cu, const TensorMapSpec& spec,
                                            CUdeviceptr buffer) {
  TT_ASSIGN_OR_RETURN(CUtensorMapDataType type, ElementType(spec.element_bytes));
  const CUdeviceptr base = buffer + spec.base_offset_bytes;
  if (base % 16 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TMA base address 0x", absl::Hex(base), " is not 16-byte aligned; align the buffer"));
  }
  std::vector<cuuint64_t> dims(spec.dims.begin(), spec.dims.end());
  std::vector<cuuint64_t> strides(spec.strides_bytes.begin(), spec.strides_bytes.end());
  std::vector<cuuint32_t> element_strides(spec.element_strides.begin(),
                                          spec.element_strides.end());
  if (element_strides.empty()) element_strides.assign(dims.size(), 1);
  const cuuint32_t rank = static_cast<cuuint32_t>(dims.size());
  CUtensorMap map;
  if (!spec.im2col.has_value()) {
    std::vector<cuuint32_t> box(spec.box.begin(), spec.box.end());
    TT_RETURN_IF_ERROR(ToStatus(
        cu.cuTensorMapEncodeTiled(&map, type, rank, reinterpret_cast<void*>(base), dims.data(),
                                  strides.empty() ? nullptr : strides.data(), box.data(),
                                  element_strides.data(), CU_TENSOR_MAP_INTERLEAVE_NONE,
                                  CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
        "cuTensorMapEncodeTiled"));
    return map;
  }
  const TensorMapSpec::Im2colBox& window = *spec.im2col;
  if (rank != 4 || strides.size() != 3 || window.lower_corner.size() != 2 ||
      window.upper_corner.size() != 2 || element_strides.size() != 4) {
    return absl::InvalidArgumentError("im2col tensor map spec is not rank 4 (NHWC)");
  }
  std::vector<int> lower(window.lower_corner.begin(), window.lower_corner.end());
  std::vector<int> upper(window.upper_corner.begin(), window.upper_corner.end());
  TT_RETURN_IF_ERROR(ToStatus(
      cu.cuTensorMapEncodeIm2col(&map, type, rank, reinterpret_cast<void*>(base), dims.data(),
                                 strides.data(), lower.data(), upper.data(),
                                 window.channels_per_pixel, window.pixels_per_column,
                                 element_strides.data(), CU_TENSOR_MAP_INTERLEAVE_NONE,
                                 CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
      absl::StrCat("cuTensorMapEncodeIm2col (corners lower ", lower[0], ",", lower[1], " upper ",
                   upper[0], ",", upper[1], ", ", window.channels_per_pixel, " channels x ",
                   window.pixels_per_column, " pixels)")));
  return map;
}

absl::Status CheckTileOperands(const LoweredTileKernel& lowered, CUdeviceptr input_start,
                               CUdeviceptr output_start) {
  std::vector<std::string> faults;
  for (const auto& [name, address, align] :
       {std::tuple{&lowered.input_name, input_start, lowered.input_align},
        std::tuple{&lowered.output_name, output_start, lowered.output_align}}) {
    if (align > 1 && address % align != 0) {
      faults.push_back(absl::StrCat(*name, " starts at 0x", absl::Hex(address), ", not a multiple of ",
                                    align, " B"));
    }
  }
  const int relative = lowered.relative_align;
  if (relative > 1 && (output_start - input_start) % relative != 0) {
    faults.push_back(absl::StrCat(lowered.output_name, " starts ",
                                  static_cast<int64_t>(output_start - input_start), " B from ",
                                  lowered.input_name, ", not a multiple of ", relative, " B"));
  }
  if (!faults.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        lowered.op, " kernel ", lowered.kernel_name, " (path ", lowered.path_name,
        lowered.form_name.empty() ? "" : absl::StrCat(", ", lowered.form_name, " form"),
        "): ", absl::StrJoin(faults, "; "),
        "; align the buffers (cudaMalloc gives 256 B) or use a kernel lowered for these "
        "offsets"));
  }
  if (lowered.input_span_bytes > 0 && lowered.output_span_bytes > 0) {
    const CUdeviceptr input_end = input_start + lowered.input_span_bytes;
    const CUdeviceptr output_end = output_start + lowered.output_span_bytes;
    if (input_start < output_end && output_start < input_end) {
      return absl::InvalidArgumentError(absl::StrCat(
          lowered.op, " ", lowered.input_name, " [0x", absl::Hex(input_start), ", 0x",
          absl::Hex(input_end), ") overlaps ", lowered.output_name, " [0x",
          absl::Hex(output_start), ", 0x", absl::Hex(output_end),
          "); tile kernels need operands that do not overlap"));
    }
  }
  return absl::OkStatus();
}

std::vector<CUtensorMap>* TensorMapCache::Find(CUdeviceptr first, CUdeviceptr second) {
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
  return nullptr;
}

std::vector<CUtensorMap>* TensorMapCache::Insert(CUdeviceptr first, CUdeviceptr second,
                                                 std::vector<CUtensorMap> maps) {
  if (entries_.size() == kMaxPairs) entries_.erase(entries_.begin());
  entries_.push_back(Entry{first, second, std::move(maps)});
  return &entries_.back().maps;
}

TileKernel::TileKernel(const Context& context, std::shared_ptr<const LoweredTileKernel> lowered,
                       std::string source, std::shared_ptr<const Module> module, Kernel kernel)
    : context_(context),
      lowered_(std::move(lowered)),
      source_(std::move(source)),
      module_(std::move(module)),
      kernel_(std::move(kernel)),
      grid_(lowered_->GridSize(context.info().sm_count)) {}

absl::StatusOr<std::unique_ptr<TileKernel>> TileKernel::Create(
    const Context& context, const TileOpDefinition& definition,
    std::shared_ptr<const LoweredTileKernel> lowered, CompilationProvider& compiler) {
  CudaSource source = definition.Emit(*lowered);
  CompileOptions options;
  options.arch = lowered->target.ArchName();
  TT_ASSIGN_OR_RETURN(Cubin cubin, compiler.CompileToCubin(source, options));
  return CreateFromCubin(context, std::move(lowered), std::move(source.text), cubin);
}

absl::StatusOr<std::unique_ptr<TileKernel>> TileKernel::CreateFromCubin(
    const Context& context, std::shared_ptr<const LoweredTileKernel> lowered, std::string source,
    const Cubin& cubin) {
  TT_RETURN_IF_ERROR(CheckArchitecture(context, *lowered));
  TT_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, Module::Load(context, cubin.bytes));
  return CreateFromModule(context, std::move(lowered), std::move(source), std::move(module));
}

absl::StatusOr<std::unique_ptr<TileKernel>> TileKernel::CreateFromModule(
    const Context& context, std::shared_ptr<const LoweredTileKernel> lowered, std::string source,
    std::shared_ptr<const Module> module) {
  TT_RETURN_IF_ERROR(CheckArchitecture(context, *lowered));
  TT_ASSIGN_OR_RETURN(Kernel kernel,
                      module->GetKernel(lowered->kernel_name, lowered->param_count()));
  return std::unique_ptr<TileKernel>(new TileKernel(context, std::move(lowered),
                                                    std::move(source), std::move(module),
                                                    std::move(kernel)));
}

absl::Status TileKernel::Launch(CUdeviceptr input, CUdeviceptr output, CUstream stream,
                                const ItemArgs* items) {
  return Launch(input, output,
                RegionOffsets{lowered_->input_offset_bytes, lowered_->output_offset_bytes},
                stream, items);
}

absl::Status CheckItemArgs(const ItemArgs& items) {
  if (items.count < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("item count ", items.count, ": accepted is 0 or more"));
  }
  if (items.count > 0 && (items.table == 0 || items.table % 8 != 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "item table at 0x", absl::Hex(items.table), ": it must be a device address, 8-byte "
        "aligned"));
  }
  return absl::OkStatus();
}

absl::Status TileKernel::Launch(CUdeviceptr input_buffer, CUdeviceptr output_buffer,
                                const RegionOffsets& offsets, CUstream stream,
                                const ItemArgs* items) {
  CUdeviceptr input = input_buffer + offsets.input_bytes;
  CUdeviceptr output = output_buffer + offsets.output_bytes;
  TT_RETURN_IF_ERROR(CheckTileOperands(*lowered_, input, output));
  absl::InlinedVector<void*, 6> args = {&input, &output};  // no allocation per launch
  ItemArgs run;
  int64_t grid = grid_;
  if (lowered_->item_table) {
    if (items == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          lowered_->kernel_name, " copies items listed in a device table: give the table "
          "and its count (Library::LaunchItems)"));
    }
    run = *items;
    TT_RETURN_IF_ERROR(CheckItemArgs(run));
    if (run.count == 0) return absl::OkStatus();
    grid = lowered_->GridSizeForItems(context_.info().sm_count, run.count);
    args.push_back(&run.table);
    args.push_back(&run.count);
  } else if (items != nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(lowered_->kernel_name, " takes no item table"));
  }
  if (!lowered_->tensor_maps.empty()) {
    TT_ASSIGN_OR_RETURN(
        std::vector<CUtensorMap>* maps,
        maps_.Get(input, output, [&]() -> absl::StatusOr<std::vector<CUtensorMap>> {
          std::vector<CUtensorMap> encoded;
          for (const TensorMapSpec& spec : lowered_->tensor_maps) {
            const CUdeviceptr buffer =
                spec.operand == TensorMapSpec::Operand::kInput ? input : output;
            TT_ASSIGN_OR_RETURN(CUtensorMap map, EncodeTensorMap(context_.api(), spec, buffer));
            encoded.push_back(map);
          }
          return encoded;
        }));
    for (CUtensorMap& map : *maps) args.push_back(&map);
  }
  LaunchConfig config;
  config.grid = {static_cast<unsigned>(grid), 1, 1};
  config.block = {static_cast<unsigned>(lowered_->launch.threads), 1, 1};
  config.dynamic_shared_bytes = static_cast<unsigned>(lowered_->shared_bytes);
  config.stream = stream;
  return kernel_.Launch(config, args);
}

}  // namespace tiletune

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/base/status_macros.h"
#include "compiler/ir/buffer.h"
#include "compiler/ir/hints.h"
#include "compiler/ops/batch_copy/batch_copy_op.h"
#include "compiler/ops/col2im/col2im_op.h"
#include "compiler/ops/copy/copy_op.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/ops/im2col/conv_spec.h"
#include "compiler/ops/im2col/im2col_op.h"
#include "kernels/library.h"
#include "kernels/runtime/driver_api.h"
#include "kernels/tile_kernel.h"
#include "kernels/tiletune.h"

namespace tiletune {

struct Plan::Impl {
  const DriverApi* cu = nullptr;
  CUcontext context = nullptr;
  // Set when the plan retained device 0's primary context (none was current).
  bool retained_primary = false;
  CUdevice device = 0;
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  std::shared_ptr<const LoweredTileKernel> lowered;
  RegionOffsets offsets;
  unsigned grid = 0;
  int sm_count = 0;
  unsigned block = 0;
  unsigned shared = 0;
  PlanInfo info;

  ~Impl() {
    if (cu == nullptr) return;
    if (module != nullptr && cu->cuCtxPushCurrent(context) == CUDA_SUCCESS) {
      // A launch may still be queued on a caller's stream: let it finish first.
      cu->cuCtxSynchronize();
      cu->cuModuleUnload(module);
      CUcontext popped = nullptr;
      cu->cuCtxPopCurrent(&popped);
    }
    if (retained_primary) cu->cuDevicePrimaryCtxRelease(device);
  }
};

namespace {

// Makes `context` current for a scope when it is not, and restores the caller's after.
class ScopedContext {
 public:
  ScopedContext(const DriverApi& cu, CUcontext context) : cu_(cu) {
    CUcontext current = nullptr;
    status_ = cu.cuCtxGetCurrent(&current);
    if (status_ == CUDA_SUCCESS && current != context) {
      status_ = cu.cuCtxPushCurrent(context);
      pushed_ = status_ == CUDA_SUCCESS;
    }
  }
  ~ScopedContext() {
    if (pushed_) {
      CUcontext popped = nullptr;
      cu_.cuCtxPopCurrent(&popped);
    }
  }
  CUresult status() const { return status_; }

 private:
  const DriverApi& cu_;
  CUresult status_ = CUDA_SUCCESS;
  bool pushed_ = false;
};

DataType ToDataType(DType dtype) {
  switch (dtype) {
    case DType::kF64: return DataType::kF64;
    case DType::kF32: return DataType::kF32;
    case DType::kF16: return DataType::kF16;
    case DType::kBF16: return DataType::kBF16;
    case DType::kF8E4M3: return DataType::kF8E4M3;
    case DType::kI32: return DataType::kI32;
    case DType::kI8: return DataType::kI8;
    case DType::kU8: return DataType::kU8;
  }
  return DataType::kU8;
}

absl::StatusOr<Hints> ToHints(const HintsDesc& desc) {
  Hints hints;
  if (desc.coalesced_width < 0) {
    return absl::InvalidArgumentError(absl::StrCat("hints.coalesced_width is ",
                                                   desc.coalesced_width, "; give 0 (unset) or "
                                                   "the elements per vector access"));
  }
  if (desc.coalesced_width > 0) hints.coalesced_width = desc.coalesced_width;
  hints.disable_tma = desc.disable_tma;
  if (!desc.eviction_policy.empty()) {
    TT_ASSIGN_OR_RETURN(EvictionPolicy policy, ParseEvictionPolicy(desc.eviction_policy));
    hints.eviction_policy = policy;
  }
  if (!desc.prefer_instruction.empty()) {
    TT_ASSIGN_OR_RETURN(Instruction instruction, ParseInstruction(desc.prefer_instruction));
    hints.prefer_instruction = instruction;
  }
  return hints;
}

absl::StatusOr<Region> ToRegion(const RegionDesc& desc, const char* name, DataType dtype,
                                const std::vector<int64_t>* default_extents) {
  std::vector<int64_t> shape = desc.shape;
  if (shape.empty()) {
    if (default_extents == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(name, ".shape is empty; give the buffer's "
                                                     "shape (rank 1 to 5)"));
    }
    shape = *default_extents;
  }
  Buffer buffer = Buffer::RowMajor(name, dtype, Scope::kGlobal, shape);
  if (absl::Status valid = ValidateBuffer(buffer); !valid.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ".shape: ", valid.message()));
  }
  std::vector<int64_t> offsets = desc.offsets;
  if (offsets.empty()) offsets.assign(shape.size(), 0);
  std::vector<int64_t> extents = desc.extents;
  if (extents.empty()) {
    if (offsets.size() != shape.size()) {
      return absl::InvalidArgumentError(absl::StrCat(name, ".offsets has ", offsets.size(),
                                                     " entries for a rank-", shape.size(),
                                                     " buffer"));
    }
    for (size_t d = 0; d < shape.size(); ++d) extents.push_back(shape[d] - offsets[d]);
  }
  Region region = Region::Box(buffer, offsets, extents);
  if (absl::Status valid = ValidateRegion(region); !valid.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", valid.message()));
  }
  return region;
}

Im2colGeometry ToGeometry(const ConvDesc& desc) {
  Im2colGeometry g;
  g.n = desc.n;
  g.h = desc.h;
  g.w = desc.w;
  g.c = desc.c;
  g.kh = desc.kh;
  g.kw = desc.kw;
  g.sh = desc.stride_h;
  g.sw = desc.stride_w;
  g.dh = desc.dilation_h;
  g.dw = desc.dilation_w;
  g.ph = desc.pad_h;
  g.pw = desc.pad_w;
  return g;
}

// The operator over `desc`: its image buffer and column order follow the layout.
template <typename Op>
absl::StatusOr<Op> ConvOp(const ConvDesc& desc) {
  const Im2colGeometry g = ToGeometry(desc);
  Op op = Op::Dense(ToDataType(desc.dtype), g);
  if (desc.layout != Layout::kNhwc && desc.layout != Layout::kNchw) {
    return absl::InvalidArgumentError(absl::StrCat(
        "layout ", static_cast<int>(desc.layout), ": accepted are kNhwc (0) and kNchw (1)"));
  }
  const ConvLayout layout = desc.layout == Layout::kNchw ? ConvLayout::kNchw : ConvLayout::kNhwc;
  // Extents are checked by the operator's validation; strides of invalid ones are not used.
  if (ValidateConvGeometry(g, Op::Name()).ok()) {
    op.img = ConvImage("img", op.img.dtype, g, layout);
  }
  op.order = ConvColumnOrder(layout);
  TT_ASSIGN_OR_RETURN(op.hints, ToHints(desc.hints));
  return op;
}

absl::StatusOr<Plan::Impl*> MakeImpl(const TileOp& op, const PlanOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  // A bad descriptor is the caller's to fix whether or not there is a GPU: said first.
  TT_ASSIGN_OR_RETURN(const TileOpDefinition* definition, BuiltinTileOps().For(op));
  TT_RETURN_IF_ERROR(definition->Validate(op));
  TT_ASSIGN_OR_RETURN(const DriverApi* cu, LoadDriver());
  auto impl = std::make_unique<Plan::Impl>();
  impl->cu = cu;
  TT_RETURN_IF_ERROR(ToStatus(cu->cuCtxGetCurrent(&impl->context), "cuCtxGetCurrent"));
  if (impl->context == nullptr) {
    TT_RETURN_IF_ERROR(ToStatus(cu->cuDeviceGet(&impl->device, 0), "cuDeviceGet(0)"));
    TT_RETURN_IF_ERROR(ToStatus(cu->cuDevicePrimaryCtxRetain(&impl->context, impl->device),
                                "cuDevicePrimaryCtxRetain"));
    impl->retained_primary = true;
  }
  impl->cu = cu;
  KernelImage image;
  {
    ScopedContext scope(*cu, impl->context);
    TT_RETURN_IF_ERROR(ToStatus(scope.status(), "making the plan's context current"));
    if (!impl->retained_primary) {
      TT_RETURN_IF_ERROR(ToStatus(cu->cuCtxGetDevice(&impl->device), "cuCtxGetDevice"));
    }
    TT_ASSIGN_OR_RETURN(Library * library, DefaultLibrary());
    TT_ASSIGN_OR_RETURN(image, library->Prepare(op, static_cast<int>(impl->device), options.jit));
    // The library may have made its own context current on this thread; ours again.
    TT_RETURN_IF_ERROR(ToStatus(cu->cuCtxSetCurrent(impl->context), "cuCtxSetCurrent"));
    TT_RETURN_IF_ERROR(ToStatus(cu->cuModuleLoadDataEx(&impl->module, image.cubin.data(), 0,
                                                       nullptr, nullptr),
                                absl::StrCat("loading ", image.info.kernel_name)));
    TT_RETURN_IF_ERROR(ToStatus(
        cu->cuModuleGetFunction(&impl->function, impl->module, image.info.kernel_name.c_str()),
        absl::StrCat("cuModuleGetFunction(", image.info.kernel_name, ")")));
    impl->lowered = image.lowered;
    impl->shared = static_cast<unsigned>(image.lowered->shared_bytes);
    if (impl->shared > 48 * 1024) {
      TT_RETURN_IF_ERROR(ToStatus(
          cu->cuFuncSetAttribute(impl->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                 static_cast<int>(impl->shared)),
          "raising the kernel's dynamic shared memory"));
    }
  }
  impl->offsets = image.offsets;
  impl->grid = static_cast<unsigned>(image.lowered->GridSize(image.sm_count));
  impl->sm_count = image.sm_count;
  impl->block = static_cast<unsigned>(image.lowered->launch.threads);
  impl->info.level = ResolutionLevelName(image.info.level);
  impl->info.detail = image.info.resolution_detail;
  impl->info.kernel_name = image.info.kernel_name;
  impl->info.prebuilt = image.info.prebuilt;
  impl->info.prebuilt_arch = image.info.prebuilt_arch;
  impl->info.create_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return impl.release();
}

}  // namespace

absl::StatusOr<Plan> Plan::Create(const CopyDesc& desc, const PlanOptions& options) {
  const DataType dtype = ToDataType(desc.dtype);
  TT_ASSIGN_OR_RETURN(Region src, ToRegion(desc.src, "src", dtype, nullptr));
  TT_ASSIGN_OR_RETURN(Region dst, ToRegion(desc.dst, "dst", dtype, &src.extents));
  CopyOp op{std::move(src), std::move(dst)};
  TT_ASSIGN_OR_RETURN(op.hints, ToHints(desc.hints));
  TT_ASSIGN_OR_RETURN(Impl * impl, MakeImpl(op, options));
  return Plan(std::shared_ptr<const Impl>(impl));
}

absl::StatusOr<Plan> Plan::Create(const Im2colDesc& desc, const PlanOptions& options) {
  TT_ASSIGN_OR_RETURN(Im2colOp op, ConvOp<Im2colOp>(desc));
  TT_ASSIGN_OR_RETURN(Impl * impl, MakeImpl(op, options));
  return Plan(std::shared_ptr<const Impl>(impl));
}

absl::StatusOr<Plan> Plan::Create(const Col2imDesc& desc, const PlanOptions& options) {
  TT_ASSIGN_OR_RETURN(Col2imOp op, ConvOp<Col2imOp>(desc));
  TT_ASSIGN_OR_RETURN(Impl * impl, MakeImpl(op, options));
  return Plan(std::shared_ptr<const Impl>(impl));
}

absl::StatusOr<Plan> Plan::Create(const BatchCopyDesc& desc, const PlanOptions& options) {
  BatchCopyOp op;
  op.element_type = ToDataType(desc.dtype);
  op.form = desc.regions ? BatchForm::kRegions : BatchForm::kBlocks;
  op.count = desc.count;
  op.item = desc.item;
  op.src_items = desc.src_items > 0 ? desc.src_items : desc.count;
  op.dst_items = desc.dst_items > 0 ? desc.dst_items : desc.count;
  if (desc.src_items < 0 || desc.dst_items < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "src_items ", desc.src_items, ", dst_items ", desc.dst_items,
        ": give the pools' items, or 0 for count"));
  }
  TT_ASSIGN_OR_RETURN(op.hints, ToHints(desc.hints));
  TT_ASSIGN_OR_RETURN(Impl * impl, MakeImpl(op, options));
  return Plan(std::shared_ptr<const Impl>(impl));
}

absl::Status Plan::Execute(CUdeviceptr input, CUdeviceptr output, CUstream stream) const {
  if (impl_->lowered->item_table) {
    return absl::InvalidArgumentError(absl::StrCat(
        impl_->info.kernel_name, " copies items listed in a device table: execute it with "
        "ExecuteItems (tt_plan_execute_items)"));
  }
  return Launch(input, output, nullptr, stream);
}

absl::Status Plan::ExecuteItems(CUdeviceptr input, CUdeviceptr output, CUdeviceptr table,
                                int64_t count, CUstream stream) const {
  if (!impl_->lowered->item_table) {
    return absl::InvalidArgumentError(absl::StrCat(
        impl_->info.kernel_name, " takes no item table: execute it with Execute"));
  }
  const ItemArgs items{table, count};
  TT_RETURN_IF_ERROR(CheckItemArgs(items));
  if (count == 0) return absl::OkStatus();
  return Launch(input, output, &items, stream);
}

absl::Status Plan::Launch(CUdeviceptr input, CUdeviceptr output, const ItemArgs* items,
                          CUstream stream) const {
  const Impl& p = *impl_;
  const DriverApi& cu = *p.cu;
  // The legacy and per-thread default streams are the null stream by another name: they
  // belong to whatever context is current at the launch, ours.
  if (stream != nullptr && stream != CU_STREAM_LEGACY && stream != CU_STREAM_PER_THREAD) {
    CUcontext owner = nullptr;
    const CUresult got = cu.cuStreamGetCtx(stream, &owner);
    if (got != CUDA_SUCCESS) return ToStatus(got, "cuStreamGetCtx");
    if (owner != p.context) {
      CUdevice device = -1;
      {
        ScopedContext scope(cu, owner);
        cu.cuCtxGetDevice(&device);
      }
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: the stream belongs to context %p (device %d), the plan to context %p (device "
          "%d); execute on a stream of the plan's context, or make a plan in the stream's",
          p.info.kernel_name, static_cast<void*>(owner), device,
          static_cast<void*>(p.context), p.device));
    }
  }
  CUdeviceptr in = input + p.offsets.input_bytes;
  CUdeviceptr out = output + p.offsets.output_bytes;
  TT_RETURN_IF_ERROR(CheckTileOperands(*p.lowered, in, out));
  absl::InlinedVector<CUtensorMap, 2> maps;
  absl::InlinedVector<void*, 6> args = {&in, &out};
  ItemArgs run;
  unsigned grid = p.grid;
  if (items != nullptr) {
    run = *items;
    grid = static_cast<unsigned>(p.lowered->GridSizeForItems(p.sm_count, run.count));
    args.push_back(&run.table);
    args.push_back(&run.count);
  }
  if (!p.lowered->tensor_maps.empty()) {
    maps.reserve(p.lowered->tensor_maps.size());
    for (const TensorMapSpec& spec : p.lowered->tensor_maps) {
      const CUdeviceptr buffer = spec.operand == TensorMapSpec::Operand::kInput ? in : out;
      TT_ASSIGN_OR_RETURN(CUtensorMap map, EncodeTensorMap(cu, spec, buffer));
      maps.push_back(map);
    }
    for (CUtensorMap& map : maps) args.push_back(&map);
  }
  ScopedContext scope(cu, p.context);
  if (scope.status() != CUDA_SUCCESS) return ToStatus(scope.status(), "cuCtxPushCurrent");
  const CUresult result = cu.cuLaunchKernel(p.function, grid, 1, 1, p.block, 1, 1, p.shared,
                                            stream, args.data(), nullptr);
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  return ToStatus(result, absl::StrCat("cuLaunchKernel(", p.info.kernel_name, ")"));
}

const PlanInfo& Plan::info() const { return impl_->info; }

CUcontext Plan::context() const { return impl_->context; }

}  // namespace tiletune

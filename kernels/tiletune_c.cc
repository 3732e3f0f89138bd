// The C API over the slim Plan API: descriptors checked and converted, Status turned into
// a code and a thread-local message, plans behind an opaque handle.
#include "kernels/tiletune_c.h"

#include <exception>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "compiler/base/abbreviate.h"
#include "compiler/base/version.h"
#include "kernels/tiletune.h"

struct tt_plan {
  tiletune::Plan plan;
  std::string prebuilt;
};

namespace {

thread_local std::string last_error;

tt_status Fail(tt_status code, std::string message) {
  last_error = tiletune::BoundedMessage(message);
  return code;
}

tt_status FromStatus(const absl::Status& status) {
  if (status.ok()) {
    last_error.clear();
    return TT_OK;
  }
  const std::string message(status.message());
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kFailedPrecondition:
      return Fail(TT_INVALID_ARGUMENT, message);
    case absl::StatusCode::kUnavailable:
      return Fail(TT_NO_GPU, message);
    case absl::StatusCode::kUnimplemented:
      return Fail(TT_UNIMPLEMENTED, message);
    case absl::StatusCode::kResourceExhausted:
      return Fail(TT_OUT_OF_MEMORY, message);
    default:
      return Fail(TT_INTERNAL, message);
  }
}

// TT_OK when `function` has a plan and both device addresses; else why not, as its error.
tt_status CheckExecute(const char* function, const tt_plan* plan, uint64_t input,
                       uint64_t output) {
  if (plan == nullptr) return Fail(TT_INVALID_ARGUMENT, absl::StrCat(function, ": plan is NULL"));
  if (input == 0 || output == 0) {
    return Fail(TT_INVALID_ARGUMENT, absl::StrCat(function, ": ", input == 0 ? "input" : "output",
                                                  " is a null device address"));
  }
  return TT_OK;
}

absl::StatusOr<tiletune::DType> ToDType(int dtype) {
  switch (dtype) {
    case TT_F64: return tiletune::DType::kF64;
    case TT_F32: return tiletune::DType::kF32;
    case TT_F16: return tiletune::DType::kF16;
    case TT_BF16: return tiletune::DType::kBF16;
    case TT_F8E4M3: return tiletune::DType::kF8E4M3;
    case TT_I32: return tiletune::DType::kI32;
    case TT_I8: return tiletune::DType::kI8;
    case TT_U8: return tiletune::DType::kU8;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "dtype ", dtype, " is not a tt_dtype; accepted are TT_F64 (0) to TT_U8 (7)"));
}

absl::StatusOr<tiletune::RegionDesc> ToRegion(const tt_region& region, const char* name,
                                              bool may_be_empty) {
  if (region.rank == 0 && may_be_empty) return tiletune::RegionDesc{};
  if (region.rank < 1 || region.rank > TT_MAX_RANK) {
    return absl::InvalidArgumentError(absl::StrCat(name, ".rank is ", region.rank,
                                                   "; accepted are 1 to ", TT_MAX_RANK));
  }
  tiletune::RegionDesc out;
  bool any_offset = false, any_extent = false;
  for (int d = 0; d < region.rank; ++d) {
    any_offset |= region.offsets[d] != 0;
    any_extent |= region.extents[d] != 0;
  }
  out.shape.assign(region.shape, region.shape + region.rank);
  if (any_offset) out.offsets.assign(region.offsets, region.offsets + region.rank);
  if (any_extent) out.extents.assign(region.extents, region.extents + region.rank);
  return out;
}

template <typename Desc>
absl::StatusOr<Desc> ToConv(const tt_conv_desc& c) {
  Desc desc;
  absl::StatusOr<tiletune::DType> dtype = ToDType(c.dtype);
  if (!dtype.ok()) return dtype.status();
  desc.dtype = *dtype;
  desc.n = c.n;
  desc.h = c.h;
  desc.w = c.w;
  desc.c = c.c;
  desc.kh = c.kh;
  desc.kw = c.kw;
  desc.stride_h = c.stride_h;
  desc.stride_w = c.stride_w;
  desc.dilation_h = c.dilation_h;
  desc.dilation_w = c.dilation_w;
  desc.pad_h = c.pad_h;
  desc.pad_w = c.pad_w;
  switch (c.layout) {
    case TT_LAYOUT_NHWC: desc.layout = tiletune::Layout::kNhwc; break;
    case TT_LAYOUT_NCHW: desc.layout = tiletune::Layout::kNchw; break;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "layout ", static_cast<int>(c.layout),
          ": accepted are TT_LAYOUT_NHWC (0) and TT_LAYOUT_NCHW (1)"));
  }
  return desc;
}

tt_status Emit(absl::StatusOr<tiletune::Plan> made, tt_plan** plan) {
  if (!made.ok()) return FromStatus(made.status());
  tt_plan* handle = new (std::nothrow) tt_plan{*std::move(made), ""};
  if (handle == nullptr) return Fail(TT_OUT_OF_MEMORY, "no memory for a plan");
  handle->prebuilt = handle->plan.info().prebuilt ? "1" : "0";
  *plan = handle;
  last_error.clear();
  return TT_OK;
}

// Every entry point: a null argument is named, and no exception crosses into C.
template <typename F>
tt_status Guarded(F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Fail(TT_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception& e) {
    return Fail(TT_INTERNAL, absl::StrCat("internal error: ", e.what()));
  } catch (...) {
    return Fail(TT_INTERNAL, "internal error: an unknown exception");
  }
}

// tt_plan_create_im2col and _col2im: the same descriptor, another operator.
template <typename Desc>
tt_status CreateConv(const char* function, const tt_conv_desc* desc, tt_plan** plan) {
  return Guarded([&] {
    if (desc == nullptr || plan == nullptr) {
      return Fail(TT_INVALID_ARGUMENT,
                  absl::StrCat(function, ": desc and plan must not be NULL"));
    }
    *plan = nullptr;
    absl::StatusOr<Desc> conv = ToConv<Desc>(*desc);
    if (!conv.ok()) return FromStatus(conv.status());
    return Emit(tiletune::Plan::Create(*conv), plan);
  });
}

}  // namespace

extern "C" {

const char* tt_version(void) { return tiletune::kVersionTag; }

int tt_abi_version(void) { return TT_ABI_VERSION; }

const char* tt_last_error(void) { return last_error.c_str(); }

tt_status tt_plan_create_copy(const tt_copy_desc* desc, tt_plan** plan) {
  return Guarded([&] {
    if (desc == nullptr || plan == nullptr) {
      return Fail(TT_INVALID_ARGUMENT, "tt_plan_create_copy: desc and plan must not be NULL");
    }
    *plan = nullptr;
    tiletune::CopyDesc copy;
    absl::StatusOr<tiletune::DType> dtype = ToDType(desc->dtype);
    if (!dtype.ok()) return FromStatus(dtype.status());
    copy.dtype = *dtype;
    absl::StatusOr<tiletune::RegionDesc> src = ToRegion(desc->src, "src", false);
    if (!src.ok()) return FromStatus(src.status());
    absl::StatusOr<tiletune::RegionDesc> dst = ToRegion(desc->dst, "dst", true);
    if (!dst.ok()) return FromStatus(dst.status());
    copy.src = *std::move(src);
    copy.dst = *std::move(dst);
    return Emit(tiletune::Plan::Create(copy), plan);
  });
}

tt_status tt_plan_create_im2col(const tt_conv_desc* desc, tt_plan** plan) {
  return CreateConv<tiletune::Im2colDesc>("tt_plan_create_im2col", desc, plan);
}

tt_status tt_plan_create_col2im(const tt_conv_desc* desc, tt_plan** plan) {
  return CreateConv<tiletune::Col2imDesc>("tt_plan_create_col2im", desc, plan);
}

tt_status tt_plan_create_batch_copy(const tt_batch_copy_desc* desc, tt_plan** plan) {
  return Guarded([&] {
    if (desc == nullptr || plan == nullptr) {
      return Fail(TT_INVALID_ARGUMENT,
                  "tt_plan_create_batch_copy: desc and plan must not be NULL");
    }
    *plan = nullptr;
    tiletune::BatchCopyDesc batch;
    absl::StatusOr<tiletune::DType> dtype = ToDType(desc->dtype);
    if (!dtype.ok()) return FromStatus(dtype.status());
    if (desc->regions != 0 && desc->regions != 1) {
      return Fail(TT_INVALID_ARGUMENT, absl::StrCat("regions is ", desc->regions,
                                                    "; accepted are 0 (blocks) and 1"));
    }
    batch.dtype = *dtype;
    batch.regions = desc->regions == 1;
    batch.count = desc->count;
    batch.item = desc->item;
    batch.src_items = desc->src_items;
    batch.dst_items = desc->dst_items;
    return Emit(tiletune::Plan::Create(batch), plan);
  });
}

tt_status tt_plan_execute_items(const tt_plan* plan, uint64_t input, uint64_t output,
                                uint64_t table, int64_t count, void* stream) {
  return Guarded([&] {
    if (tt_status bad = CheckExecute("tt_plan_execute_items", plan, input, output); bad != TT_OK) {
      return bad;
    }
    return FromStatus(plan->plan.ExecuteItems(
        static_cast<CUdeviceptr>(input), static_cast<CUdeviceptr>(output),
        static_cast<CUdeviceptr>(table), count, static_cast<CUstream>(stream)));
  });
}

tt_status tt_plan_execute(const tt_plan* plan, uint64_t input, uint64_t output, void* stream) {
  return Guarded([&] {
    if (tt_status bad = CheckExecute("tt_plan_execute", plan, input, output); bad != TT_OK) {
      return bad;
    }
    return FromStatus(plan->plan.Execute(static_cast<CUdeviceptr>(input),
                                         static_cast<CUdeviceptr>(output),
                                         static_cast<CUstream>(stream)));
  });
}

const char* tt_plan_info(const tt_plan* plan, const char* key) {
  if (plan == nullptr || key == nullptr) return nullptr;
  const tiletune::PlanInfo& info = plan->plan.info();
  const std::string k(key);
  if (k == "level") return info.level.c_str();
  if (k == "detail") return info.detail.c_str();
  if (k == "kernel") return info.kernel_name.c_str();
  if (k == "prebuilt") return plan->prebuilt.c_str();
  return nullptr;
}

void* tt_plan_context(const tt_plan* plan) {
  return plan == nullptr ? nullptr : static_cast<void*>(plan->plan.context());
}

void tt_plan_destroy(tt_plan* plan) { delete plan; }

}  // extern "C"

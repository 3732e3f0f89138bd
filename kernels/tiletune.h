// tiletune's slim public API: plain descriptors in, a plan out, and a launch that costs
// one driver call. No protobuf, no IR: fill a descriptor, make a Plan once (it resolves
// the tuned variant and loads its kernel: baked into the program by the tiletune_kernels
// rule, else compiled once), then Execute it as often as needed, from any thread.
//
//   tiletune::CopyDesc copy;
//   copy.dtype = tiletune::DType::kF16;
//   copy.src = {{4096, 4096}, {0, 48}, {4096, 4000}};   // buffer shape, offsets, extents
//   copy.dst = {{4096, 4000}};                          // a whole buffer
//   absl::StatusOr<tiletune::Plan> plan = tiletune::Plan::Create(copy);
//   if (!plan.ok()) ...;
//   absl::Status done = plan->Execute(src_ptr, dst_ptr, stream);
//
// A Plan is bound to the CUDA context current when it is made (device 0's primary context
// when none is): Execute accepts streams of that context only (another device's or
// context's stream is InvalidArgument, naming both), and the null stream. It never changes
// the calling thread's current context: where the plan's context is not current it is
// pushed for the launch and popped after. Execute takes no lock, so threads share one plan
// freely, and it can be captured into a CUDA graph; a TMA kernel encodes its tensor maps on
// each call (a few small allocations), a SIMT kernel allocates nothing. Create compiles
// and loads, so make plans before capturing. The context must outlive the plan, whose
// destruction waits for the context's work before unloading the kernel. Pointers are the op's whole input and output
// buffers (copy: src, dst; im2col: the NHWC image, the column matrix; col2im: the column
// matrix, the image), aligned as the tuned kernel needs (16 bytes always suffices).
#ifndef KERNELS_TILETUNE_H_
#define KERNELS_TILETUNE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cuda.h"

namespace tiletune {

enum class DType { kF64, kF32, kF16, kBF16, kF8E4M3, kI32, kI8, kU8 };

// A region of a dense row-major buffer.
struct RegionDesc {
  // The whole buffer's shape, outermost first (rank 1 to 5).
  std::vector<int64_t> shape;
  // Where the region starts; empty means all zeros.
  std::vector<int64_t> offsets;
  // The region's extents; empty means the whole buffer from `offsets`.
  std::vector<int64_t> extents;
};

// Lowering hints (DESIGN.md); unset fields leave the choice to the tuned variant.
struct HintsDesc {
  int coalesced_width = 0;          // elements per vector access; 0: unset
  bool disable_tma = false;
  std::string eviction_policy;      // "", "evict_normal", "evict_first", "evict_last"
  std::string prefer_instruction;   // "", "tma", "cp_async", "sync"
};

// Copies src's region into dst's (same extents). dst.shape empty: a dense buffer of the
// region's extents.
struct CopyDesc {
  DType dtype = DType::kF16;
  RegionDesc src;
  RegionDesc dst;
  HintsDesc hints;
};

// The image's and the column matrix's layout. kNhwc: a dense NHWC image and columns
// [N*OH*OW, KH*KW*C], (kh, kw, c) with c fastest. kNchw: a dense NCHW image and columns
// [N, C*KH*KW, OH*OW], (c, kh, kw) with kw fastest: exactly PyTorch's F.unfold output and
// F.fold input (col2im then sums each pixel's taps in F.fold's order).
enum class Layout { kNhwc, kNchw };

// im2col of a dense image into its column matrix, or (Col2imDesc) the image summed back
// from such a matrix; n, h, w, c are the image's extents whatever the layout.
struct ConvDesc {
  DType dtype = DType::kF16;
  int64_t n = 1, h = 1, w = 1, c = 1;
  int64_t kh = 1, kw = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t pad_h = 0, pad_w = 0;
  Layout layout = Layout::kNhwc;
  HintsDesc hints;
};
struct Im2colDesc : ConvDesc {};
struct Col2imDesc : ConvDesc {};

// Many items in one launch (compiler/ops/batch_copy/batch_copy_op.h), listed at execution
// in a device table: blocks, int64 pairs (source item, destination item) of `item`
// elements each between pools of src_items and dst_items items (vLLM's block mapping);
// regions (`regions` true), int64 triples (source element offset, destination element
// offset, elements), items of up to `item` elements. `count` is the count tuning measures;
// ExecuteItems passes its own.
struct BatchCopyDesc {
  DType dtype = DType::kF16;
  bool regions = false;
  int64_t count = 0;
  int64_t item = 0;
  int64_t src_items = 0;  // 0: count
  int64_t dst_items = 0;  // 0: count
  HintsDesc hints;
};

struct PlanOptions {
  // Compile what no baked kernel serves (NVRTC, loaded on first need). Off: such a
  // problem is Unimplemented, naming it.
  bool jit = true;
};

// What a plan runs, for logs and tests.
struct PlanInfo {
  // "exact", "nearest" or "heuristic", and why.
  std::string level;
  std::string detail;
  std::string kernel_name;
  // Served by a kernel baked into the program (nothing was compiled by tiletune), and
  // the image's architecture: "sm_90a" (a CUBIN) or "compute_90" (PTX, which the driver
  // compiled for a newer GPU).
  bool prebuilt = false;
  std::string prebuilt_arch;
  // Host time Create took.
  double create_ms = 0;
};

struct ItemArgs;  // kernels/tile_kernel.h

class Plan {
 public:
  // Each resolves the problem for the current context's device and loads its kernel
  // there. InvalidArgument naming the field for a bad descriptor.
  static absl::StatusOr<Plan> Create(const CopyDesc& desc, const PlanOptions& options = {});
  static absl::StatusOr<Plan> Create(const Im2colDesc& desc, const PlanOptions& options = {});
  static absl::StatusOr<Plan> Create(const Col2imDesc& desc, const PlanOptions& options = {});
  static absl::StatusOr<Plan> Create(const BatchCopyDesc& desc, const PlanOptions& options = {});

  // Launches on `stream` (of the plan's context, or null). Thread-safe, lock-free. A
  // batch_copy plan is refused (it needs its item table: ExecuteItems).
  absl::Status Execute(CUdeviceptr input, CUdeviceptr output, CUstream stream) const;
  // A batch_copy plan: the first `count` entries of the device item table at `table`
  // (8-byte aligned), between the pools at `input` and `output`; count 0 launches nothing.
  // Refused for the other plans.
  absl::Status ExecuteItems(CUdeviceptr input, CUdeviceptr output, CUdeviceptr table,
                            int64_t count, CUstream stream) const;

  const PlanInfo& info() const;
  // The context the plan is bound to.
  CUcontext context() const;

  struct Impl;

 private:
  explicit Plan(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  absl::Status Launch(CUdeviceptr input, CUdeviceptr output, const ItemArgs* items,
                      CUstream stream) const;
  std::shared_ptr<const Impl> impl_;
};

}  // namespace tiletune

#endif  // KERNELS_TILETUNE_H_

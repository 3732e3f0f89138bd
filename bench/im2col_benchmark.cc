// im2col variants on ResNet-50-like f16 layers (and four with narrow channels), and the
// built-in heuristic's launch (variant "heuristic"), against cudnnIm2Col on the same problem and
// cudaMemcpy of the same traffic, in the same run.
//
// Bytes moved, for every counter: the image read once plus the column matrix written once,
// img_bytes + col_bytes. cudaMemcpy is timed copying (img_bytes + col_bytes) / 2 bytes, so
// its reads plus writes are the same traffic. Counters: GBps (this variant), cudnn_GBps,
// vs_cudnn (cuDNN's time / ours: above 1 we are faster), memcpy_GBps, vs_memcpy.
//
// cuDNN's layout. cudnnIm2Col takes an NCHW image (we give it one of the same shape and
// bytes) and, per its documentation, writes the GEMM A matrix of N*OH*OW rows and
// C*KH*KW columns, fully packed; the columns are expected in (c, kh, kw) order, c slowest,
// where tiletune's are (kh, kw, c), c fastest (NHWC). The set-up checks this on a small
// asymmetric case against the CPU reference, trying the candidate layouts, and every
// benchmark's label names the layout found ("cudnn=[M,(c,kh,kw)]" for the expected one).
// Either way both sides read the same image bytes and write the same column bytes.
//
// Buffers: `sets` (image, column) pairs spanning at least 150 MB, rotated launch by launch
// for ours and cuDNN's alike, so no launch finds its image in L2 from the one before.
//
//   bazel run //bench:im2col_benchmark -- --benchmark_counters_tabular=true
//   (cuDNN must be loadable: put python3's nvidia.cudnn lib/ folder on LD_LIBRARY_PATH.)
//
// Hand-edited kernels: --variant_source=LAYER/VARIANT=FILE (repeatable) also times FILE, an
// edited copy of the CUDA source `compiler --emit=cuda` writes for that benchmark's
// lowering, in its place: compiled by NVRTC as the emitted source is, launched with the same
// grid, threads, shared memory and buffers, checked bit-exact against the CPU reference
// (fresh random image, poisoned columns) before it is timed, and registered as
// im2col_f16/LAYER/VARIANT@FILE beside the generated one, cuDNN in the same run:
//
//   compiler --op=im2col --dtype=f16 --shape=32,224,224,3 --kernel=7 --stride=2 --pad=3 \
//       --tile=112,147 --threads=512 --emit=cuda > stem.cu   # the heuristic's launch
//   im2col_benchmark --variant_source=n32_c3_224x224_k7_s2_p3/heuristic=stem_edited.cu \
//       --benchmark_filter=n32_c3_224x224_k7_s2_p3/heuristic
//
// --ablation_source=LAYER/VARIANT=FILE does the same for a kernel that is wrong on purpose
// (a part removed to see what it costs): it is not checked, and registered as
// LAYER/VARIANT@ablation:FILE so that its time is never taken for a kernel's.
//
// Either flag may change the edited kernel's launch, for a kernel built another way than the
// lowering's (a persistent grid, another thread count, more shared memory): after
// LAYER/VARIANT, comma-separated KEY:VALUE pairs, threads:N (a multiple of 32, 32 to 1024),
// ctas_per_sm:N (0: one CTA per tile, as lowered; 1 to 32: a persistent grid of N CTAs per SM,
// the kernel looping over the tiles itself) and shared_bytes:N (dynamic shared memory, 0 to
// 232448). The benchmark is then registered as LAYER/VARIANT,PAIRS@FILE:
//
//   im2col_benchmark
//       --variant_source=n32_c3_224x224_k7_s2_p3/heuristic,ctas_per_sm:4,shared_bytes:24192=p.cu
//   (one command line)
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "bench/bench_util.h"
#include "benchmark/benchmark.h"
#include "compiler/base/status_macros.h"
#include "compiler/ops/im2col/im2col_definition.h"
#include "compiler/ops/im2col/im2col_lowering.h"
#include "compiler/ops/im2col/im2col_op.h"
#include "compiler/ops/im2col/im2col_search_space.h"
#include "cuda_runtime_api.h"
#include "cudnn.h"
#include "kernels/tile_kernel.h"
#include "kernels/verify.h"

namespace tiletune {
namespace {

absl::Status CudnnStatus(cudnnStatus_t status, absl::string_view what) {
  if (status == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what, ": ", cudnnGetErrorString(status)));
}

absl::Status CudaStatus(cudaError_t error, absl::string_view what) {
  if (error == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what, ": ", cudaGetErrorString(error)));
}

struct Layer {
  std::string name;
  int64_t n, h, w, c, kernel, stride, pad;
  Im2colGeometry Geometry() const {
    Im2colGeometry g;
    g.n = n;
    g.h = h;
    g.w = w;
    g.c = c;
    g.kh = g.kw = kernel;
    g.sh = g.sw = stride;
    g.ph = g.pw = pad;
    return g;
  }
};

const std::vector<Layer>& Layers() {
  static const std::vector<Layer>* const layers = new std::vector<Layer>{
      {"n64_c64_56x56_k3_s1_p1", 64, 56, 56, 64, 3, 1, 1},
      {"n64_c256_14x14_k3_s1_p1", 64, 14, 14, 256, 3, 1, 1},
      {"n64_c128_56x56_k3_s2_p1", 64, 56, 56, 128, 3, 2, 1},
      {"n32_c3_224x224_k7_s2_p3", 32, 224, 224, 3, 7, 2, 3},
      // Narrow channels beyond the suite (C x 2 B below 16 B): where the built-in heuristic
      // takes tiles of whole (output) rows.
      {"n64_c3_227x227_k11_s4_p0", 64, 227, 227, 3, 11, 4, 0},
      {"n64_c3_224x224_k3_s2_p1", 64, 224, 224, 3, 3, 2, 1},
      {"n16_c4_96x96_k3_s1_p1", 16, 96, 96, 4, 3, 1, 1},
      {"n8_c1_128x128_k5_s1_p2", 8, 128, 128, 1, 5, 1, 2},
  };
  return *layers;
}

struct Variant {
  std::string name;
  Instruction instruction;
  std::vector<int64_t> tile;
  int threads;
  int stages;
  int ctas_per_sm;
  // Image loads evict_last, column stores evict_first.
  bool split_eviction = false;
  // The launch and hints of the built-in heuristic (what Library runs with no record);
  // the fields above are then unused.
  bool heuristic = false;
  // disable_tma: the staged form then fills its input boxes with the threads' loads
  // instead of bulk copies.
  bool disable_tma = false;
  // eviction_policy=evict_first on every access (the shipped database's stem winner).
  bool evict_first = false;
  // im2col's own choices (img_prefetch, staged_gather) as annotations, over the
  // heuristic's hints too; those not given are the lowering's.
  std::map<std::string, std::string> choices;
};

const std::vector<Variant>& Variants() {
  static const std::vector<Variant>* const variants = new std::vector<Variant>{
      {"simt_64x64_t128", Instruction::kSync, {64, 64}, 128, 1, 0},
      {"simt_128x64_t256", Instruction::kSync, {128, 64}, 256, 1, 0},
      {"simt_32x128_t256_p4", Instruction::kSync, {32, 128}, 256, 1, 4},
      {"simt_128x64_t256_imglast_colfirst", Instruction::kSync, {128, 64}, 256, 1, 0, true},
      {"tma_128x64_s2", Instruction::kTma, {128, 64}, 32, 2, 0},
      {"tma_128x64_s4_p3", Instruction::kTma, {128, 64}, 32, 4, 3},
      {"tma_256x64_s3_p2", Instruction::kTma, {256, 64}, 32, 3, 2},
      {"tma_128x128_s3_p2_imglast_colfirst", Instruction::kTma, {128, 128}, 32, 3, 2, true},
      // Tiles of whole rows (block_K = K, written 0 here): the flat SIMT form; with
      // block_M a multiple of OW (written -1 for OW, -2 for 2 OW) it stages its input.
      {"simt_rows64_t256", Instruction::kSync, {64, 0}, 256, 1, 0},
      {"simt_rows32_t128_p8", Instruction::kSync, {32, 0}, 128, 1, 8},
      {"simt_rows64_t256_imglast_colfirst", Instruction::kSync, {64, 0}, 256, 1, 0, true},
      {"simt_orow1_t256", Instruction::kSync, {-1, 0}, 256, 1, 0},
      {"simt_orow2_t512", Instruction::kSync, {-2, 0}, 512, 1, 0},
      {"simt_orow1_t256_imglast_colfirst", Instruction::kSync, {-1, 0}, 256, 1, 0, true},
      {"simt_orow1_t128_imglast_colfirst", Instruction::kSync, {-1, 0}, 128, 1, 0, true},
      {"simt_orow1_t512_imglast_colfirst", Instruction::kSync, {-1, 0}, 512, 1, 0, true},
      {"simt_orow2_t512_imglast_colfirst", Instruction::kSync, {-2, 0}, 512, 1, 0, true},
      {"simt_orow4_t512_imglast_colfirst", Instruction::kSync, {-4, 0}, 512, 1, 0, true},
      {"simt_orow1_t256_p6_imglast_colfirst", Instruction::kSync, {-1, 0}, 256, 1, 6, true},
      {"simt_orow1_t256_imglast_colfirst_loads", Instruction::kSync, {-1, 0}, 256, 1, 0, true,
       false, true},
      {"simt_orow1_t512_imglast_colfirst_loads", Instruction::kSync, {-1, 0}, 512, 1, 0, true,
       false, true},
      {"simt_orow2_t512_imglast_colfirst_loads", Instruction::kSync, {-2, 0}, 512, 1, 0, true,
       false, true},
      {"simt_orow1_t256_evict_first", Instruction::kSync, {-1, 0}, 256, 1, 0, false, false,
       false, true},
      {"heuristic", Instruction::kSync, {}, 0, 0, 0, false, true},
      // The heuristic's launch with each way of bringing the image into L2 (bulk fill) and
      // each gather of the staged form.
      {"heuristic_table_ahead", Instruction::kSync, {}, 0, 0, 0, false, true, false, false,
       {{"img_prefetch", "ahead"}, {"staged_gather", "table"}}},
      {"heuristic_table_all", Instruction::kSync, {}, 0, 0, 0, false, true, false, false,
       {{"img_prefetch", "all"}, {"staged_gather", "table"}}},
      {"heuristic_phase_ahead", Instruction::kSync, {}, 0, 0, 0, false, true, false, false,
       {{"img_prefetch", "ahead"}, {"staged_gather", "phase"}}},
      {"heuristic_phase_all", Instruction::kSync, {}, 0, 0, 0, false, true, false, false,
       {{"img_prefetch", "all"}, {"staged_gather", "phase"}}},
      // The staged form at each output row's own phase (one row a tile), one CTA a tile and
      // persistent grids, which build the gather table once per CTA rather than per row;
      // skipped where the lowering does not take it.
      {"simt_orow1_t256_row_phase", Instruction::kSync, {-1, 0}, 256, 1, 0, false, false, false,
       false, {{"img_prefetch", "ahead"}, {"staged_gather", "row_phase"}}},
      {"simt_orow1_t256_p2_row_phase", Instruction::kSync, {-1, 0}, 256, 1, 2, false, false,
       false, false, {{"img_prefetch", "ahead"}, {"staged_gather", "row_phase"}}},
      {"simt_orow1_t256_p4_row_phase", Instruction::kSync, {-1, 0}, 256, 1, 4, false, false,
       false, false, {{"img_prefetch", "ahead"}, {"staged_gather", "row_phase"}}},
      {"simt_orow1_t512_p2_row_phase", Instruction::kSync, {-1, 0}, 512, 1, 2, false, false,
       false, false, {{"img_prefetch", "ahead"}, {"staged_gather", "row_phase"}}},
      {"simt_orow1_t256_p4_row_phase_loads", Instruction::kSync, {-1, 0}, 256, 1, 4, false,
       false, true, false, {{"staged_gather", "row_phase"}}},
  };
  return *variants;
}

// cuDNN descriptors for one problem, NCHW image, cross-correlation (no kernel flip).
class CudnnIm2col {
 public:
  static absl::StatusOr<std::unique_ptr<CudnnIm2col>> Create(cudnnHandle_t handle,
                                                             const Im2colGeometry& g,
                                                             cudnnTensorFormat_t format) {
    auto im2col = std::unique_ptr<CudnnIm2col>(new CudnnIm2col(handle));
    TT_RETURN_IF_ERROR(CudnnStatus(cudnnCreateTensorDescriptor(&im2col->x_), "tensor desc"));
    TT_RETURN_IF_ERROR(CudnnStatus(cudnnCreateFilterDescriptor(&im2col->w_), "filter desc"));
    TT_RETURN_IF_ERROR(
        CudnnStatus(cudnnCreateConvolutionDescriptor(&im2col->conv_), "convolution desc"));
    TT_RETURN_IF_ERROR(CudnnStatus(
        cudnnSetTensor4dDescriptor(im2col->x_, format, CUDNN_DATA_HALF, static_cast<int>(g.n),
                                   static_cast<int>(g.c), static_cast<int>(g.h),
                                   static_cast<int>(g.w)),
        "cudnnSetTensor4dDescriptor"));
    TT_RETURN_IF_ERROR(CudnnStatus(
        cudnnSetFilter4dDescriptor(im2col->w_, CUDNN_DATA_HALF, format, /*k=*/64,
                                   static_cast<int>(g.c), static_cast<int>(g.kh),
                                   static_cast<int>(g.kw)),
        "cudnnSetFilter4dDescriptor"));
    TT_RETURN_IF_ERROR(CudnnStatus(
        cudnnSetConvolution2dDescriptor(im2col->conv_, static_cast<int>(g.ph),
                                        static_cast<int>(g.pw), static_cast<int>(g.sh),
                                        static_cast<int>(g.sw), static_cast<int>(g.dh),
                                        static_cast<int>(g.dw), CUDNN_CROSS_CORRELATION,
                                        CUDNN_DATA_FLOAT),
        "cudnnSetConvolution2dDescriptor"));
    return im2col;
  }
  ~CudnnIm2col() {
    if (conv_) cudnnDestroyConvolutionDescriptor(conv_);
    if (w_) cudnnDestroyFilterDescriptor(w_);
    if (x_) cudnnDestroyTensorDescriptor(x_);
  }
  absl::Status Run(CUdeviceptr img, CUdeviceptr col) const {
    return CudnnStatus(cudnnIm2Col(handle_, x_, reinterpret_cast<const void*>(img), w_, conv_,
                                   reinterpret_cast<void*>(col)),
                       "cudnnIm2Col");
  }

 private:
  explicit CudnnIm2col(cudnnHandle_t handle) : handle_(handle) {}
  cudnnHandle_t handle_;
  cudnnTensorDescriptor_t x_ = nullptr;
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
};

// Column matrix element (m, kh, kw, c) of the reference, for an NHWC host image.
uint16_t Reference(const Im2colGeometry& g, const std::vector<uint16_t>& nhwc, int64_t m,
                   int64_t kh, int64_t kw, int64_t c) {
  int64_t ohw = g.OH() * g.OW();
  int64_t n = m / ohw, oh = m % ohw / g.OW(), ow = m % g.OW();
  int64_t ih = oh * g.sh - g.ph + kh * g.dh, iw = ow * g.sw - g.pw + kw * g.dw;
  if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w) return 0;
  return nhwc[((n * g.h + ih) * g.w + iw) * g.c + c];
}

// Runs cudnnIm2Col on a small asymmetric case and names the layout it wrote.
absl::StatusOr<std::string> CheckCudnnLayout(cudnnHandle_t handle, const Context& context,
                                             cudnnTensorFormat_t format) {
  Im2colGeometry g;
  g.n = 2;
  g.h = 5;
  g.w = 6;
  g.c = 3;
  g.kh = 3;
  g.kw = 2;
  g.sh = 2;
  g.sw = 1;
  g.ph = 1;
  g.pw = 0;
  const int64_t m_count = g.M(), taps = g.kh * g.kw;
  std::mt19937 rng(7);
  std::vector<uint16_t> nhwc(g.n * g.h * g.w * g.c), device_image(nhwc.size());
  for (uint16_t& v : nhwc) v = static_cast<uint16_t>(1 + rng() % 30000);  // Never zero.
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t h = 0; h < g.h; ++h)
      for (int64_t w = 0; w < g.w; ++w)
        for (int64_t c = 0; c < g.c; ++c) {
          int64_t nchw = ((n * g.c + c) * g.h + h) * g.w + w;
          int64_t src = ((n * g.h + h) * g.w + w) * g.c + c;
          device_image[format == CUDNN_TENSOR_NCHW ? nchw : src] = nhwc[src];
        }
  TT_ASSIGN_OR_RETURN(auto im2col, CudnnIm2col::Create(handle, g, format));
  size_t col_elements = static_cast<size_t>(m_count * g.K());
  TT_ASSIGN_OR_RETURN(DeviceBuffer img, DeviceBuffer::Allocate(context, device_image.size() * 2));
  TT_ASSIGN_OR_RETURN(DeviceBuffer col, DeviceBuffer::Allocate(context, col_elements * 2));
  TT_RETURN_IF_ERROR(img.CopyFromHost(device_image.data(), device_image.size() * 2));
  TT_RETURN_IF_ERROR(col.Fill(0xff));
  TT_RETURN_IF_ERROR(im2col->Run(img.ptr(), col.ptr()));
  TT_RETURN_IF_ERROR(CudaStatus(cudaDeviceSynchronize(), "cudnnIm2Col"));
  std::vector<uint16_t> got(col_elements);
  TT_RETURN_IF_ERROR(col.CopyToHost(got.data(), got.size() * 2));
  // Candidate layouts: index of element (m, kh, kw, c).
  struct Candidate {
    std::string name;
    std::function<int64_t(int64_t, int64_t, int64_t, int64_t)> index;
  };
  const int64_t K = g.K(), ohw = g.OH() * g.OW();
  std::vector<Candidate> candidates = {
      {"[M,(c,kh,kw)]",
       [&](int64_t m, int64_t kh, int64_t kw, int64_t c) { return m * K + (c * taps + kh * g.kw + kw); }},
      {"[M,(kh,kw,c)]",
       [&](int64_t m, int64_t kh, int64_t kw, int64_t c) { return m * K + (kh * g.kw + kw) * g.c + c; }},
      {"[(c,kh,kw),M]",
       [&](int64_t m, int64_t kh, int64_t kw, int64_t c) { return (c * taps + kh * g.kw + kw) * m_count + m; }},
      {"[N,(c,kh,kw),OH*OW]",
       [&](int64_t m, int64_t kh, int64_t kw, int64_t c) {
         return (m / ohw * K + c * taps + kh * g.kw + kw) * ohw + m % ohw;
       }},
  };
  for (const Candidate& candidate : candidates) {
    bool match = true;
    for (int64_t m = 0; m < m_count && match; ++m)
      for (int64_t kh = 0; kh < g.kh && match; ++kh)
        for (int64_t kw = 0; kw < g.kw && match; ++kw)
          for (int64_t c = 0; c < g.c && match; ++c)
            match = got[candidate.index(m, kh, kw, c)] == Reference(g, nhwc, m, kh, kw, c);
    if (match) return candidate.name;
  }
  return std::string("unrecognised");
}

struct CudnnEnv {
  cudnnHandle_t handle = nullptr;
  // The layout cudnnIm2Col wrote for an NCHW image in the set-up check.
  std::string layout;
};

absl::StatusOr<CudnnEnv*> GetCudnn(BenchEnv& env) {
  static absl::StatusOr<CudnnEnv*>* const cudnn = [&env] {
    auto make = [&env]() -> absl::StatusOr<CudnnEnv*> {
      auto result = std::make_unique<CudnnEnv>();
      TT_RETURN_IF_ERROR(CudnnStatus(cudnnCreate(&result->handle), "cudnnCreate"));
      TT_RETURN_IF_ERROR(CudnnStatus(
          cudnnSetStream(result->handle, reinterpret_cast<cudaStream_t>(env.stream->get())),
          "cudnnSetStream"));
      TT_ASSIGN_OR_RETURN(result->layout,
                          CheckCudnnLayout(result->handle, *env.context, CUDNN_TENSOR_NCHW));
      std::cerr << "cudnnIm2Col (cuDNN " << cudnnGetVersion() << ") on an NCHW image writes "
                << result->layout << "; tiletune writes [M,(kh,kw,c)]\n";
      // For information: what it does with an NHWC descriptor.
      absl::StatusOr<std::string> nhwc =
          CheckCudnnLayout(result->handle, *env.context, CUDNN_TENSOR_NHWC);
      std::cerr << "cudnnIm2Col with an NHWC descriptor: "
                << (nhwc.ok() ? *nhwc : std::string(nhwc.status().message())) << "\n";
      return result.release();
    };
    return new absl::StatusOr<CudnnEnv*>(make());
  }();
  return *cudnn;
}

// A hand-edited kernel timed in place of a benchmark's emitted one (--variant_source), or
// an ablation, wrong on purpose and not checked (--ablation_source).
struct SourceOverride {
  std::string layer;
  std::string variant;
  std::string path;
  std::string text;
  bool ablation = false;
  // The edited kernel's launch where it differs from the lowering's; `launch` as given
  // ("threads:448,ctas_per_sm:4"), "" when none is.
  std::optional<int> threads;
  std::optional<int> ctas_per_sm;
  std::optional<int64_t> shared_bytes;
  std::string launch;
};

// The largest dynamic shared memory a CTA may ask for on sm_90 (227 KiB).
constexpr int64_t kMaxDynamicSharedBytes = 232448;

void BM_Im2col(benchmark::State& state, const Layer& layer, const Variant& variant,
               const SourceOverride* edited = nullptr) {
  auto skip = [&](const absl::Status& status) {
    state.SkipWithError(std::string(status.message()).c_str());
  };
  auto env_or = GetBenchEnv();
  if (!env_or.ok()) return skip(env_or.status());
  BenchEnv& env = **env_or;
  Im2colGeometry g = layer.Geometry();
  Im2colOp op = Im2colOp::Dense(DataType::kF16, g);
  op.hints.prefer_instruction = variant.instruction;
  op.hints.disable_tma = variant.disable_tma;
  if (variant.evict_first) op.hints.eviction_policy = EvictionPolicy::kEvictFirst;
  if (variant.split_eviction) {
    op.hints.annotations = {{"img_eviction_policy", "evict_last"},
                            {"col_eviction_policy", "evict_first"}};
  }
  auto target = Target::Parse(env.context->info().ArchName());
  if (!target.ok()) return skip(target.status());
  LaunchParams launch;
  if (variant.heuristic) {
    const Trial trial = Im2colHeuristic(op, *target);
    op.hints = trial.hints;
    launch = trial.launch;
  } else {
    launch.tile = variant.tile;
    if (launch.tile[1] == 0) launch.tile[1] = g.K();
    if (launch.tile[0] < 0) launch.tile[0] = -launch.tile[0] * g.OW();
    launch.threads = variant.threads;
    launch.stages = variant.stages;
    launch.ctas_per_sm = variant.ctas_per_sm;
  }
  for (const auto& [key, value] : variant.choices) op.hints.annotations[key] = value;
  auto lowered = LowerIm2col(op, *target, launch);
  if (!lowered.ok()) return skip(lowered.status());
  if (auto gather = variant.choices.find("staged_gather");
      gather != variant.choices.end() && gather->second == "row_phase" && !lowered->box.row_phase) {
    return skip(absl::FailedPreconditionError(
        "staged_gather=row_phase not taken for this layer (see the lowering's decision log)"));
  }
  if (edited != nullptr) {
    if (edited->threads) lowered->launch.threads = *edited->threads;
    if (edited->ctas_per_sm) lowered->launch.ctas_per_sm = *edited->ctas_per_sm;
    if (edited->shared_bytes) lowered->shared_bytes = *edited->shared_bytes;
    absl::Status launch_ok = ValidateLaunchParams(lowered->launch, *target);
    if (!launch_ok.ok()) {
      return skip(absl::InvalidArgumentError(absl::StrCat(
          edited->path, " launched with ", edited->launch, ": ", launch_ok.message())));
    }
  }
  auto shared_lowered = std::make_shared<const LoweredIm2col>(*lowered);
  absl::StatusOr<std::unique_ptr<TileKernel>> kernel;
  if (edited == nullptr) {
    kernel = TileKernel::Create(*env.context, Im2colDefinition(), shared_lowered, *env.compiler);
  } else {
    CompileOptions options;
    options.arch = lowered->target.ArchName();
    absl::StatusOr<Cubin> cubin = env.compiler->CompileToCubin(
        CudaSource{lowered->kernel_name, edited->text}, options);
    if (!cubin.ok()) {
      return skip(absl::InvalidArgumentError(
          absl::StrCat(edited->path, " does not compile: ", cubin.status().message())));
    }
    kernel = TileKernel::CreateFromCubin(*env.context, shared_lowered, edited->text, *cubin);
    if (kernel.ok() && !edited->ablation) {
      std::mt19937_64 rng(0x5eed);
      absl::Status verified = VerifyTileKernel(*env.context, **kernel, Im2colDefinition(), op, rng);
      if (!verified.ok()) {
        return skip(absl::DataLossError(absl::StrCat(
            edited->path, " is not bit-exact with the CPU reference: ", verified.message())));
      }
    }
  }
  if (!kernel.ok()) return skip(kernel.status());

  const size_t img_bytes = static_cast<size_t>(g.n * g.h * g.w * g.c * 2);
  const size_t col_bytes = static_cast<size_t>(g.M() * g.K() * 2);
  const size_t memcpy_bytes = (img_bytes + col_bytes) / 2 / 16 * 16;
  // (image, column) pairs rotated launch by launch, ours and cuDNN's alike.
  auto pairs = AllocateRotatedPairs(env, img_bytes, col_bytes, 0x3c);
  if (!pairs.ok()) return skip(pairs.status());
  const size_t sets = pairs->size();
  auto scratch_src = DeviceBuffer::Allocate(*env.context, memcpy_bytes);
  auto scratch_dst = DeviceBuffer::Allocate(*env.context, memcpy_bytes);
  if (!scratch_src.ok() || !scratch_dst.ok() || !scratch_src->Fill(0x3c).ok()) {
    return skip(absl::ResourceExhaustedError("device allocation failed"));
  }
  CUstream stream = env.stream->get();
  size_t next = 0;
  auto ours = [&] {
    const size_t s = next++ % sets;
    return (*kernel)->Launch(pairs->inputs[s].ptr(), pairs->outputs[s].ptr(), stream);
  };
  const int batch = 8;
  std::vector<double> times;
  for (auto _ : state) {
    auto ms = TimeLaunches(env, ours, batch, 1);
    if (!ms.ok()) return skip(ms.status());
    state.SetIterationTime(*ms / 1e3);
    times.push_back(*ms);
  }
  std::sort(times.begin(), times.end());
  const double kernel_ms = times[times.size() / 2];
  const double moved = static_cast<double>(img_bytes + col_bytes);
  state.counters["GBps"] = GigabytesPerSecond(moved, kernel_ms);

  auto memcpy_ms = TimeMemcpy(env, scratch_dst->ptr(), scratch_src->ptr(), memcpy_bytes, batch, 9);
  if (!memcpy_ms.ok()) return skip(memcpy_ms.status());
  state.counters["memcpy_GBps"] = GigabytesPerSecond(2.0 * memcpy_bytes, *memcpy_ms);
  state.counters["vs_memcpy"] = *memcpy_ms * moved / (2.0 * memcpy_bytes) / kernel_ms;

  std::string label = (*kernel)->lowered().path_name;
  if (!(*kernel)->lowered().form_name.empty()) {
    absl::StrAppend(&label, "/", (*kernel)->lowered().form_name);
  }
  if (lowered->box.bulk_fill) absl::StrAppend(&label, "/bulk");
  if (edited != nullptr) {
    absl::StrAppend(&label, edited->ablation ? " ablation (not checked)" : " edited (bit-exact)");
    if (!edited->launch.empty()) {
      absl::StrAppend(&label, " grid ", (*kernel)->grid(), " t", lowered->launch.threads, " smem ",
                      lowered->shared_bytes);
    }
  }
  if (variant.heuristic) {
    absl::StrAppend(&label, " ", launch.tile[0], "x", launch.tile[1], " t", launch.threads);
  }
  auto cudnn = GetCudnn(env);
  if (cudnn.ok()) {
    auto im2col = CudnnIm2col::Create((*cudnn)->handle, g, CUDNN_TENSOR_NCHW);
    absl::StatusOr<double> cudnn_ms =
        im2col.ok() ? TimeLaunches(env,
                                   [&] {
                                     const size_t s = next++ % sets;
                                     return (*im2col)->Run(pairs->inputs[s].ptr(),
                                                           pairs->outputs[s].ptr());
                                   },
                                   batch, 9)
                    : absl::StatusOr<double>(im2col.status());
    if (cudnn_ms.ok()) {
      state.counters["cudnn_GBps"] = GigabytesPerSecond(moved, *cudnn_ms);
      state.counters["vs_cudnn"] = *cudnn_ms / kernel_ms;
      absl::StrAppend(&label, " cudnn=", (*cudnn)->layout);
    } else {
      absl::StrAppend(&label, " cudnn failed: ", cudnn_ms.status().message());
    }
  } else {
    absl::StrAppend(&label, " no cudnn: ", cudnn.status().message());
  }
  state.counters["sets"] = static_cast<double>(sets);
  state.SetLabel(label);
}

// Takes every --variant_source=LAYER/VARIANT=FILE and --ablation_source=LAYER/VARIANT=FILE
// out of argv and reads its file.
absl::StatusOr<std::vector<SourceOverride>> TakeSourceOverrides(int& argc, char** argv) {
  std::vector<SourceOverride> overrides;
  std::vector<std::string> layers, variants;
  for (const Layer& layer : Layers()) layers.push_back(layer.name);
  for (const Variant& variant : Variants()) variants.push_back(variant.name);
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    const bool ablation = absl::ConsumePrefix(&arg, "--ablation_source=");
    if (!ablation && !absl::ConsumePrefix(&arg, "--variant_source=")) {
      argv[kept++] = argv[i];
      continue;
    }
    const std::string flag = ablation ? "--ablation_source" : "--variant_source";
    std::vector<std::string> name_path = absl::StrSplit(arg, absl::MaxSplits('=', 1));
    // LAYER/VARIANT, then the launch's KEY:VALUE pairs.
    std::vector<std::string> parts =
        name_path.size() == 2 ? absl::StrSplit(name_path[0], ',') : std::vector<std::string>{};
    std::vector<std::string> layer_variant =
        parts.empty() ? std::vector<std::string>{}
                      : absl::StrSplit(parts[0], absl::MaxSplits('/', 1));
    if (layer_variant.size() != 2 || name_path[1].empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          flag, "=", arg,
          ": expected LAYER/VARIANT=FILE or LAYER/VARIANT,KEY:VALUE,...=FILE, e.g. ", flag,
          "=n32_c3_224x224_k7_s2_p3/heuristic=stem.cu"));
    }
    SourceOverride edited;
    for (size_t p = 1; p < parts.size(); ++p) {
      std::vector<std::string> key_value = absl::StrSplit(parts[p], absl::MaxSplits(':', 1));
      int64_t value = 0;
      if (key_value.size() != 2 || !absl::SimpleAtoi(key_value[1], &value)) {
        return absl::InvalidArgumentError(absl::StrCat(
            flag, ": launch '", parts[p], "' in '", name_path[0],
            "': expected KEY:VALUE with an integer value, e.g. threads:448"));
      }
      const std::string& key = key_value[0];
      if (key == "threads") {
        if (value < 32 || value > 1024 || value % 32 != 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              flag, ": threads:", value, ": accepted are multiples of 32 from 32 to 1024"));
        }
        edited.threads = static_cast<int>(value);
      } else if (key == "ctas_per_sm") {
        if (value < 0 || value > 32) {
          return absl::InvalidArgumentError(
              absl::StrCat(flag, ": ctas_per_sm:", value,
                           ": accepted are 0 (one CTA per tile) to 32 (a persistent grid of that "
                           "many CTAs per SM)"));
        }
        edited.ctas_per_sm = static_cast<int>(value);
      } else if (key == "shared_bytes") {
        if (value < 0 || value > kMaxDynamicSharedBytes) {
          return absl::InvalidArgumentError(absl::StrCat(flag, ": shared_bytes:", value,
                                                         ": accepted are 0 to ",
                                                         kMaxDynamicSharedBytes));
        }
        edited.shared_bytes = value;
      } else {
        return absl::InvalidArgumentError(absl::StrCat(
            flag, ": unknown launch key '", key, "' in '", name_path[0],
            "'; accepted are threads, ctas_per_sm, shared_bytes"));
      }
      absl::StrAppend(&edited.launch, edited.launch.empty() ? "" : ",", parts[p]);
    }
    if (std::find(layers.begin(), layers.end(), layer_variant[0]) == layers.end()) {
      return absl::InvalidArgumentError(absl::StrCat(flag, ": unknown layer '", layer_variant[0],
                                                     "'; the layers are ",
                                                     absl::StrJoin(layers, ", ")));
    }
    if (std::find(variants.begin(), variants.end(), layer_variant[1]) == variants.end()) {
      return absl::InvalidArgumentError(absl::StrCat(flag, ": unknown variant '",
                                                     layer_variant[1], "'; the variants are ",
                                                     absl::StrJoin(variants, ", ")));
    }
    std::ifstream file(name_path[1], std::ios::binary);
    std::stringstream text;
    text << file.rdbuf();
    if (!file || text.str().empty()) {
      return absl::NotFoundError(
          absl::StrCat(flag, ": cannot read '", name_path[1], "' (or it is empty)"));
    }
    edited.layer = layer_variant[0];
    edited.variant = layer_variant[1];
    edited.path = name_path[1];
    edited.text = text.str();
    edited.ablation = ablation;
    overrides.push_back(std::move(edited));
  }
  argc = kept;
  return overrides;
}

void RegisterAll(const std::vector<SourceOverride>& overrides) {
  for (const Layer& layer : Layers()) {
    for (const Variant& variant : Variants()) {
      // Whole-row tiles only where rows are short.
      if (!variant.heuristic && variant.tile[1] == 0 && layer.Geometry().K() > 1024) continue;
      const std::string name = absl::StrCat("im2col_f16/", layer.name, "/", variant.name);
      benchmark::RegisterBenchmark(name.c_str(),
                                   [layer, variant](benchmark::State& state) {
                                     BM_Im2col(state, layer, variant);
                                   })
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond)
          ->MinTime(0.2);
      for (const SourceOverride& edited : overrides) {
        if (edited.layer != layer.name || edited.variant != variant.name) continue;
        benchmark::RegisterBenchmark(
            absl::StrCat(name, edited.launch.empty() ? "" : ",", edited.launch,
                         edited.ablation ? "@ablation:" : "@", edited.path)
                .c_str(),
            [layer, variant, &edited](benchmark::State& state) {
              BM_Im2col(state, layer, variant, &edited);
            })
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond)
            ->MinTime(0.2);
      }
    }
  }
}

}  // namespace
}  // namespace tiletune

int main(int argc, char** argv) {
  // Outlives the benchmarks, which refer to its entries.
  static absl::StatusOr<std::vector<tiletune::SourceOverride>> overrides =
      tiletune::TakeSourceOverrides(argc, argv);
  if (!overrides.ok()) {
    std::cerr << "im2col_benchmark: " << overrides.status().message() << "\n";
    return 2;
  }
  tiletune::RegisterAll(*overrides);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

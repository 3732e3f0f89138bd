// col2im variants on the ResNet-50-like f16 layers of the default suite, and F.fold of
// patches (NCHW: the planes form against the patches form), against a size-matched
// bandwidth ceiling (cudaMemcpy of the same traffic), in the same run, on rotated buffers. PyTorch F.fold is measured by bench/fold_baseline.py from the same
// device call (this binary stays torch-free); that script also joins the two outputs.
//
// Bytes moved, for every counter: the column matrix read once plus the image written
// once, col_bytes + img_bytes. cudaMemcpy is timed copying (col_bytes + img_bytes) / 2
// bytes, so its reads plus writes are the same traffic. Counters: GBps (this variant),
// memcpy_GBps, vs_memcpy (memcpy's time / ours, i.e. the fraction of the ceiling).
//
// Rotation: launches cycle over enough (col, img) buffer sets to span 150 MB (2.5x the
// H200's L2) so no launch finds its input in L2 from the one before.
//
//   bazel run //bench:col2im_benchmark -- --benchmark_counters_tabular=true \
//       --benchmark_out=col2im.json --benchmark_out_format=json
//   python3 bench/fold_baseline.py --join col2im.json
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "bench/bench_util.h"
#include "benchmark/benchmark.h"
#include "compiler/ops/col2im/col2im_definition.h"
#include "compiler/ops/col2im/col2im_lowering.h"
#include "compiler/ops/col2im/col2im_op.h"
#include "compiler/ops/col2im/col2im_search_space.h"
#include "compiler/ops/im2col/conv_spec.h"
#include "kernels/tile_kernel.h"

namespace tiletune {
namespace {

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

// The four ResNet-50-like layers of the default suite (the same as im2col's).
const std::vector<Layer>& Layers() {
  static const std::vector<Layer>* const layers = new std::vector<Layer>{
      {"n64_c64_56x56_k3_s1_p1", 64, 56, 56, 64, 3, 1, 1},
      {"n64_c256_14x14_k3_s1_p1", 64, 14, 14, 256, 3, 1, 1},
      {"n64_c128_56x56_k3_s2_p1", 64, 56, 56, 128, 3, 2, 1},
      {"n32_c3_224x224_k7_s2_p3", 32, 224, 224, 3, 7, 2, 3},
  };
  return *layers;
}

struct Variant {
  std::string name;
  // tile_w 0 means the image's width.
  int64_t tile_h, tile_w;
  int threads;
  bool staged;
  int ctas_per_sm;
  bool stream_columns;  // col_eviction_policy=evict_first
  int stages = 1;       // >= 2 with staged: the swept form (TMA on sm_90)
  bool disable_tma = false;  // the swept form through cp.async
};

const std::vector<Variant>& Variants() {
  static const std::vector<Variant>* const variants = new std::vector<Variant>{
      {"direct_1x16_t128", 1, 16, 128, false, 0, false},
      {"direct_1x32_t256", 1, 32, 256, false, 0, false},
      {"direct_1x32_t256_colfirst", 1, 32, 256, false, 0, true},
      {"direct_2x32_t512", 2, 32, 512, false, 0, false},
      {"staged_1xW_t256", 1, 0, 256, true, 0, false},
      {"staged_2xW_t256", 2, 0, 256, true, 0, false},
      {"staged_2x112_t128", 2, 112, 128, true, 0, false},
      {"staged_2xW_t256_colfirst", 2, 0, 256, true, 0, true},
      {"staged_4xW_t256", 4, 0, 256, true, 0, false},
      {"staged_4x64_t256", 4, 64, 256, true, 0, false},
      {"staged_8x32_t256", 8, 32, 256, true, 0, false},
      {"swept_4xW_t256_s2", 4, 0, 256, true, 0, false, 2},
      {"swept_8xW_t256_s2", 8, 0, 256, true, 0, false, 2},
      {"swept_8xW_t256_s2_colfirst", 8, 0, 256, true, 0, true, 2},
      {"swept_8xW_t256_s3", 8, 0, 256, true, 0, false, 3},
      {"swept_8xW_t128_s2", 8, 0, 128, true, 0, false, 2},
      {"swept_16xW_t256_s2", 16, 0, 256, true, 0, false, 2},
      {"swept_16x112_t128_s2", 16, 112, 128, true, 0, false, 2},
      {"swept_8x112_t128_s3", 8, 112, 128, true, 0, false, 3},
      {"swept_16x64_t128_s3", 16, 64, 128, true, 0, false, 3},
      {"swept_8xW_t256_s2_persist4", 8, 0, 256, true, 4, false, 2},
      // Two bands of rows per tile (448 = 2 x 224 threads on the stem's 224-pixel rows) and a
      // persistent grid whose producer runs ahead across tiles.
      {"swept_8xW_t448_s4_persist1", 8, 0, 448, true, 1, false, 4},
      {"swept_8xW_t448_s5_persist1", 8, 0, 448, true, 1, false, 5},
      {"swept_8xW_t448_s6_persist1", 8, 0, 448, true, 1, false, 6},
      {"swept_8xW_t512_s5_persist1", 8, 0, 512, true, 1, false, 5},
      {"swept_8xW_t256_s5_persist1", 8, 0, 256, true, 1, false, 5},
      {"swept_8xW_t896_s5_persist1", 8, 0, 896, true, 1, false, 5},
      {"swept_8xW_t896_s4_persist1", 8, 0, 896, true, 1, false, 4},
      {"swept_8xW_t896_s6_persist1", 8, 0, 896, true, 1, false, 6},
      {"swept_16xW_t896_s5_persist1", 16, 0, 896, true, 1, false, 5},
      {"swept_8xW_t448_s3_persist2", 8, 0, 448, true, 2, false, 3},
      {"swept_8xW_t448_s5", 8, 0, 448, true, 0, false, 5},
      {"swept_8xW_t448_s5_persist1_colfirst", 8, 0, 448, true, 1, true, 5},
      {"swept_cp_async_8xW_t256_s2", 8, 0, 256, true, 0, false, 2, true},
      {"swept_cp_async_16xW_t256_s2", 16, 0, 256, true, 0, false, 2, true},
      {"swept_cp_async_8x112_t128_s3", 8, 112, 128, true, 0, false, 3, true},
  };
  return *variants;
}

// Times `op` at `launch` against cudaMemcpy of the same traffic, in the same run, on rotated
// buffers; the counters and label of every benchmark here.
void MeasureCol2im(benchmark::State& state, const Col2imOp& op, const LaunchParams& launch) {
  auto skip = [&](const absl::Status& status) {
    state.SkipWithError(std::string(status.message()).c_str());
  };
  auto env_or = GetBenchEnv();
  if (!env_or.ok()) return skip(env_or.status());
  BenchEnv& env = **env_or;
  auto target = Target::Parse(env.context->info().ArchName());
  if (!target.ok()) return skip(target.status());
  auto lowered = LowerCol2im(op, *target, launch);
  if (!lowered.ok()) return skip(lowered.status());
  auto kernel = TileKernel::Create(*env.context, Col2imDefinition(),
                                   std::make_shared<const LoweredCol2im>(*lowered), *env.compiler);
  if (!kernel.ok()) return skip(kernel.status());

  const size_t col_bytes = static_cast<size_t>(Col2imColumnBytes(op));
  const size_t img_bytes = SpanBytes(op.img);
  auto pairs = AllocateRotatedPairs(env, col_bytes, img_bytes, 0x3c);
  if (!pairs.ok()) return skip(pairs.status());
  const size_t sets = pairs->size();
  const size_t memcpy_bytes = (col_bytes + img_bytes) / 2 / 16 * 16;
  auto scratch_src = DeviceBuffer::Allocate(*env.context, memcpy_bytes);
  auto scratch_dst = DeviceBuffer::Allocate(*env.context, memcpy_bytes);
  if (!scratch_src.ok() || !scratch_dst.ok() || !scratch_src->Fill(0x3c).ok()) {
    return skip(absl::ResourceExhaustedError("device allocation failed"));
  }
  CUstream stream = env.stream->get();
  size_t next = 0;
  auto launch_one = [&] {
    const size_t s = next++ % sets;
    return (*kernel)->Launch(pairs->inputs[s].ptr(), pairs->outputs[s].ptr(), stream);
  };
  const int batch = 8;
  std::vector<double> times;
  for (auto _ : state) {
    auto ms = TimeLaunches(env, launch_one, batch, 1);
    if (!ms.ok()) return skip(ms.status());
    state.SetIterationTime(*ms / 1e3);
    times.push_back(*ms);
  }
  std::sort(times.begin(), times.end());
  const double kernel_ms = times[times.size() / 2];
  const double moved = static_cast<double>(col_bytes + img_bytes);
  state.counters["GBps"] = GigabytesPerSecond(moved, kernel_ms);
  auto memcpy_ms = TimeMemcpy(env, scratch_dst->ptr(), scratch_src->ptr(), memcpy_bytes, batch, 9);
  if (!memcpy_ms.ok()) return skip(memcpy_ms.status());
  state.counters["memcpy_GBps"] = GigabytesPerSecond(2.0 * memcpy_bytes, *memcpy_ms);
  state.counters["vs_memcpy"] = *memcpy_ms * moved / (2.0 * memcpy_bytes) / kernel_ms;
  state.counters["sets"] = static_cast<double>(sets);
  state.SetLabel(absl::StrCat((*kernel)->lowered().path_name, "/",
                              (*kernel)->lowered().form_name));
}

void BM_Col2im(benchmark::State& state, const Layer& layer, const Variant& variant) {
  const Im2colGeometry g = layer.Geometry();
  Col2imOp op = Col2imOp::Dense(DataType::kF16, g);
  if (variant.stream_columns) op.hints.annotations["col_eviction_policy"] = "evict_first";
  op.hints.disable_tma = variant.disable_tma;
  LaunchParams launch;
  launch.tile = {variant.tile_h, variant.tile_w == 0 ? g.w : variant.tile_w};
  launch.threads = variant.threads;
  launch.through_shared = variant.staged;
  launch.ctas_per_sm = variant.ctas_per_sm;
  launch.stages = variant.stages;
  MeasureCol2im(state, op, launch);
}

// F.fold of patches (kernel = stride: a ViT's 16x16 and 14x14, ConvNeXt's 4x4, a UNet's
// k2 s2 up-sampling), NCHW: the planes form at the heuristic's launch against the patches
// form at tiles of 1, 2, 4 and 8 kernel rows (every window row where the stage stays under
// 48 KB, else half of them).
struct Fold {
  std::string name;
  DataType dtype;
  int64_t n, h, w, c, kernel;
};

const std::vector<Fold>& Folds() {
  static const std::vector<Fold>* const folds = new std::vector<Fold>{
      {"vit_b16_f16_n32", DataType::kF16, 32, 224, 224, 3, 16},
      {"vit_b16_f32_n32", DataType::kF32, 32, 224, 224, 3, 16},
      {"vit_h14_bf16_n32", DataType::kBF16, 32, 224, 224, 3, 14},
      {"convnext_k4_f16_n32", DataType::kF16, 32, 224, 224, 3, 4},
      {"unet_k2_f16_n32_c128", DataType::kF16, 32, 64, 64, 128, 2},
  };
  return *folds;
}

void BM_Fold(benchmark::State& state, const Fold& fold, int64_t rows, int threads) {
  Im2colGeometry g;
  g.n = fold.n;
  g.h = fold.h;
  g.w = fold.w;
  g.c = fold.c;
  g.kh = g.kw = g.sh = g.sw = fold.kernel;
  Col2imOp op = Col2imOp::Dense(fold.dtype, g);
  op.img.strides = NchwStrides(g);
  op.order = ColumnOrder::kChannelRows;
  LaunchParams launch;
  if (rows == 0) {
    auto env = GetBenchEnv();
    if (!env.ok()) return state.SkipWithError(std::string(env.status().message()).c_str());
    auto target = Target::Parse((*env)->context->info().ArchName());
    if (!target.ok()) return state.SkipWithError(std::string(target.status().message()).c_str());
    const Trial trial = Col2imHeuristic(op, *target);
    op.hints = trial.hints;
    launch = trial.launch;
  } else {
    op.hints.prefer_instruction = Instruction::kSync;
    op.hints.annotations[kCol2imPlanesGatherKey] = "patches";
    const int64_t oh = g.OH(), stage = rows * g.kw * oh * g.OW() * DataTypeBytes(fold.dtype);
    launch.tile = {rows, stage > (48 << 10) ? (oh + 1) / 2 : oh};
    launch.threads = threads;
  }
  MeasureCol2im(state, op, launch);
}

void RegisterAll() {
  for (const Fold& fold : Folds()) {
    const std::vector<std::pair<int64_t, int>> variants = {
        {0, 0}, {1, 128}, {1, 256}, {2, 256}, {4, 256}, {8, 256}};
    for (const auto& [rows, threads] : variants) {
      if (rows > fold.kernel) continue;
      benchmark::RegisterBenchmark(
          absl::StrCat("fold/", fold.name, "/",
                       rows == 0 ? std::string("planes_heuristic")
                                 : absl::StrCat("patches_", rows, "rows_t", threads))
              .c_str(),
          [fold, rows = rows, threads = threads](benchmark::State& state) {
            BM_Fold(state, fold, rows, threads);
          })
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond)
          ->MinTime(0.1);
    }
  }
  for (const Layer& layer : Layers()) {
    for (const Variant& variant : Variants()) {
      benchmark::RegisterBenchmark(
          absl::StrCat("col2im_f16/", layer.name, "/", variant.name).c_str(),
          [layer, variant](benchmark::State& state) { BM_Col2im(state, layer, variant); })
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond)
          ->MinTime(0.1);
    }
  }
}

}  // namespace
}  // namespace tiletune

int main(int argc, char** argv) {
  tiletune::RegisterAll();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

// batch_copy against what users do today, in one run on rotated buffers (each launch on a
// set of pools the previous launches did not touch, the sets together 2.5x the L2):
//
//   items    N items of S bytes each (random places in a source and a destination pool,
//            regions form; with --uniform also the blocks form) through Library::LaunchItems,
//            against a loop of N cudaMemcpyAsync, one cudaMemcpyBatchAsync of the N, and the
//            ceiling: one cudaMemcpyAsync of the N*S bytes.
//   mixed    the same with sizes drawn from 4 to 256 KiB.
//   paged_kv blocks of 16 tokens x 8 heads x 128 f16 (32 KiB) by a random block table,
//            against a vLLM-style kernel written here (one CTA per block pair, its threads
//            striding over the block's f16 elements, as vLLM's copy_blocks does).
//
// Times are event-timed medians of batches on one stream (bench_util.h). The Library
// resolves with the databases it finds (TILETUNE_DB for a tuning of these problems).
//   batch_copy_benchmark [--quick]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "bench/bench_util.h"
#include "compiler/base/status_macros.h"
#include "compiler/ops/batch_copy/batch_copy_op.h"
#include "cuda_runtime_api.h"
#include "kernels/library.h"

namespace tiletune {
namespace {

absl::Status Check(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what, ": ", cudaGetErrorString(error)));
}

// One set of pools and the tables and pointer lists of one batch over them.
struct PoolSet {
  DeviceBuffer src, dst, table;
  std::vector<void*> src_ptrs, dst_ptrs;
};

struct Row {
  std::string name;
  double total_bytes = 0;
  double ours_ms = 0, loop_ms = 0, batch_ms = 0, ceiling_ms = 0, vllm_ms = 0;
  std::string level;
};

void Print(const Row& r) {
  auto gbps = [&](double ms) { return ms > 0 ? 2 * r.total_bytes / ms / 1e6 : 0.0; };
  std::printf("%-34s %9.1f %9.3f %9.3f %9.3f %9.3f %9.3f | %6.0f %6.2f %6.2f %6.2f %6.2f  %s\n",
              r.name.c_str(), r.total_bytes / 1e6, r.ours_ms * 1e3, r.loop_ms * 1e3,
              r.batch_ms * 1e3, r.ceiling_ms * 1e3, r.vllm_ms * 1e3, gbps(r.ours_ms),
              r.loop_ms > 0 ? r.loop_ms / r.ours_ms : 0, r.batch_ms > 0 ? r.batch_ms / r.ours_ms : 0,
              r.ceiling_ms > 0 ? r.ceiling_ms / r.ours_ms : 0,
              r.vllm_ms > 0 ? r.vllm_ms / r.ours_ms : 0, r.level.c_str());
}

// Items of `sizes` bytes placed at random, non-overlapping places in pools of
// `pool_bytes`, in `sets` rotation sets. Offsets are 16-byte multiples (what allocators
// give tensors).
absl::StatusOr<std::vector<PoolSet>> MakeSets(BenchEnv& env, const std::vector<int64_t>& sizes,
                                              int64_t pool_bytes, size_t sets, bool blocks,
                                              int64_t block_bytes) {
  std::mt19937_64 rng(42);
  std::vector<PoolSet> out;
  for (size_t s = 0; s < sets; ++s) {
    PoolSet set;
    TT_ASSIGN_OR_RETURN(set.src, DeviceBuffer::Allocate(*env.context, pool_bytes));
    TT_ASSIGN_OR_RETURN(set.dst, DeviceBuffer::Allocate(*env.context, pool_bytes));
    TT_RETURN_IF_ERROR(set.src.Fill(0x3c));
    // Slots of the largest size, shuffled, for sources and destinations apart.
    const int64_t slot = blocks ? block_bytes : *std::max_element(sizes.begin(), sizes.end());
    const int64_t slots = pool_bytes / slot;
    std::vector<int64_t> from(slots), to(slots);
    for (int64_t i = 0; i < slots; ++i) from[i] = to[i] = i;
    std::shuffle(from.begin(), from.end(), rng);
    std::shuffle(to.begin(), to.end(), rng);
    std::vector<int64_t> table;
    for (size_t i = 0; i < sizes.size(); ++i) {
      const int64_t src_at = from[i % slots] * slot, dst_at = to[i] * slot;
      if (blocks) {
        table.insert(table.end(), {from[i % slots], to[i]});
      } else {
        table.insert(table.end(), {src_at, dst_at, sizes[i]});  // u8 elements: bytes
      }
      set.src_ptrs.push_back(reinterpret_cast<void*>(set.src.ptr() + src_at));
      set.dst_ptrs.push_back(reinterpret_cast<void*>(set.dst.ptr() + dst_at));
    }
    TT_ASSIGN_OR_RETURN(set.table, DeviceBuffer::Allocate(*env.context, table.size() * 8));
    TT_RETURN_IF_ERROR(set.table.CopyFromHost(table.data(), table.size() * 8));
    out.push_back(std::move(set));
  }
  return out;
}

// Runs f(set) over the sets in turn, timed per call.
absl::StatusOr<double> Rotated(BenchEnv& env, std::vector<PoolSet>& sets,
                               const std::function<absl::Status(PoolSet&)>& f, int batch) {
  size_t next = 0;
  return TimeLaunches(env, [&]() { return f(sets[next++ % sets.size()]); }, batch, 7);
}

absl::Status Baselines(BenchEnv& env, std::vector<PoolSet>& sets, const std::vector<int64_t>& sizes,
                       Row& row, int batch) {
  auto stream = reinterpret_cast<cudaStream_t>(env.stream->get());
  std::vector<size_t> byte_sizes(sizes.begin(), sizes.end());
  TT_ASSIGN_OR_RETURN(row.loop_ms, Rotated(env, sets, [&](PoolSet& s) {
    for (size_t i = 0; i < sizes.size(); ++i) {
      TT_RETURN_IF_ERROR(Check(cudaMemcpyAsync(s.dst_ptrs[i], s.src_ptrs[i], byte_sizes[i],
                                               cudaMemcpyDeviceToDevice, stream),
                               "cudaMemcpyAsync"));
    }
    return absl::OkStatus();
  }, std::max(1, batch / 4)));
  cudaMemcpyAttributes attributes = {};
  attributes.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  attributes.srcLocHint.type = cudaMemLocationTypeDevice;
  attributes.dstLocHint.type = cudaMemLocationTypeDevice;
  size_t attribute_index = 0;
  absl::StatusOr<double> batched = Rotated(env, sets, [&](PoolSet& s) {
    return Check(cudaMemcpyBatchAsync(s.dst_ptrs.data(), s.src_ptrs.data(), byte_sizes.data(),
                                      byte_sizes.size(), &attributes, &attribute_index, 1, stream),
                 "cudaMemcpyBatchAsync");
  }, batch);
  if (batched.ok()) {
    row.batch_ms = *batched;
  } else {
    std::fprintf(stderr, "cudaMemcpyBatchAsync: %s\n", std::string(batched.status().message()).c_str());
  }
  TT_ASSIGN_OR_RETURN(row.ceiling_ms, Rotated(env, sets, [&](PoolSet& s) {
    return Check(cudaMemcpyAsync(reinterpret_cast<void*>(s.dst.ptr()),
                                 reinterpret_cast<const void*>(s.src.ptr()),
                                 static_cast<size_t>(row.total_bytes), cudaMemcpyDeviceToDevice,
                                 stream),
                 "cudaMemcpyAsync");
  }, batch));
  return absl::OkStatus();
}

absl::StatusOr<std::string> Level(Library& library, const BatchCopyOp& op) {
  TT_ASSIGN_OR_RETURN(LaunchInfo info, library.Inspect(op));
  return ResolutionLevelName(info.level);
}

absl::Status Items(BenchEnv& env, Library& library, const std::string& name,
                   const std::vector<int64_t>& sizes, bool blocks) {
  Row row;
  row.name = name;
  for (int64_t s : sizes) row.total_bytes += s;
  const int64_t largest = *std::max_element(sizes.begin(), sizes.end());
  const int64_t pool = largest * static_cast<int64_t>(sizes.size());
  const size_t sets = RotationSets(2 * pool, 16);
  TT_ASSIGN_OR_RETURN(std::vector<PoolSet> pools, MakeSets(env, sizes, pool, sets, blocks, largest));
  BatchCopyOp op;
  op.element_type = blocks ? DataType::kF16 : DataType::kU8;
  op.form = blocks ? BatchForm::kBlocks : BatchForm::kRegions;
  op.count = static_cast<int64_t>(sizes.size());
  op.item = blocks ? largest / 2 : largest;
  op.src_items = op.dst_items = op.count;
  const int batch = 20;
  CUstream stream = env.stream->get();
  TT_ASSIGN_OR_RETURN(row.ours_ms, Rotated(env, pools, [&](PoolSet& s) {
    return library.LaunchItems(op, s.src.ptr(), s.dst.ptr(), s.table.ptr(), op.count, stream);
  }, batch));
  TT_ASSIGN_OR_RETURN(row.level, Level(library, op));
  TT_RETURN_IF_ERROR(Baselines(env, pools, sizes, row, batch));
  Print(row);
  return absl::OkStatus();
}

// vLLM's copy_blocks pattern: one CTA per (src, dst) block pair; threads stride over the
// block's elements, one f16 each.
constexpr char kVllmStyle[] = R"(
extern "C" __global__ void vllm_style_copy_blocks(const unsigned short* __restrict__ src,
                                                  unsigned short* __restrict__ dst,
                                                  const long long* __restrict__ mapping,
                                                  int numel_per_block) {
  const long long pair = blockIdx.x;
  const long long from = mapping[2 * pair] * numel_per_block;
  const long long to = mapping[2 * pair + 1] * numel_per_block;
  for (int i = threadIdx.x; i < numel_per_block; i += blockDim.x) dst[to + i] = src[from + i];
}
)";

absl::Status PagedKv(BenchEnv& env, Library& library, int64_t pairs, int64_t pool_blocks) {
  constexpr int64_t kBlockElems = 16 * 8 * 128;
  const int64_t block_bytes = kBlockElems * 2;
  Row row;
  row.name = absl::StrCat("paged_kv ", pairs, " of ", pool_blocks, " blocks");
  row.total_bytes = static_cast<double>(pairs * block_bytes);
  const size_t sets = RotationSets(2 * pool_blocks * block_bytes, 16);
  std::vector<int64_t> sizes(pairs, block_bytes);
  TT_ASSIGN_OR_RETURN(std::vector<PoolSet> pools,
                      MakeSets(env, sizes, pool_blocks * block_bytes, sets, true, block_bytes));
  BatchCopyOp op;
  op.element_type = DataType::kF16;
  op.count = pairs;
  op.item = kBlockElems;
  op.src_items = op.dst_items = pool_blocks;
  CUstream stream = env.stream->get();
  TT_ASSIGN_OR_RETURN(row.ours_ms, Rotated(env, pools, [&](PoolSet& s) {
    return library.LaunchItems(op, s.src.ptr(), s.dst.ptr(), s.table.ptr(), pairs, stream);
  }, 20));
  TT_ASSIGN_OR_RETURN(row.level, Level(library, op));
  TT_ASSIGN_OR_RETURN(Cubin cubin, env.compiler->CompileToCubin(
                                       CudaSource{"vllm_style", kVllmStyle},
                                       CompileOptions{.arch = env.context->info().ArchName()}));
  TT_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, Module::Load(*env.context, cubin.bytes));
  TT_ASSIGN_OR_RETURN(Kernel kernel, module->GetKernel("vllm_style_copy_blocks", 4));
  int numel = static_cast<int>(kBlockElems);
  TT_ASSIGN_OR_RETURN(row.vllm_ms, Rotated(env, pools, [&](PoolSet& s) {
    CUdeviceptr src = s.src.ptr(), dst = s.dst.ptr(), table = s.table.ptr();
    return kernel.Launch({.grid = {static_cast<unsigned>(pairs), 1, 1},
                          .block = {static_cast<unsigned>(std::min<int64_t>(1024, kBlockElems)), 1, 1},
                          .stream = stream},
                         {&src, &dst, &table, &numel});
  }, 20));
  TT_RETURN_IF_ERROR(Baselines(env, pools, sizes, row, 20));
  Print(row);
  return absl::OkStatus();
}

absl::Status Run(bool quick) {
  TT_ASSIGN_OR_RETURN(BenchEnv * env, GetBenchEnv());
  LibraryOptions options;
  options.user_directory = "";
  TT_ASSIGN_OR_RETURN(std::unique_ptr<Library> library, Library::Create(options));
  TT_RETURN_IF_ERROR(env->context->Activate());
  std::printf("%-34s %9s %9s %9s %9s %9s %9s | %6s %6s %6s %6s %6s  %s\n", "case", "MB",
              "ours us", "loop us", "batch us", "ceil us", "vllm us", "GB/s", "xloop", "xbatch",
              "ofceil", "xvllm", "level");
  const std::vector<int64_t> kib = quick ? std::vector<int64_t>{16, 256}
                                         : std::vector<int64_t>{4, 16, 64, 256};
  for (int64_t k : kib) {
    std::vector<int64_t> sizes(1000, k * 1024);
    TT_RETURN_IF_ERROR(Items(*env, *library, absl::StrCat("items 1000 x ", k, " KiB"), sizes, false));
    TT_RETURN_IF_ERROR(
        Items(*env, *library, absl::StrCat("blocks 1000 x ", k, " KiB"), sizes, true));
  }
  std::mt19937_64 rng(7);
  for (int64_t n : {1000, 4000}) {
    std::vector<int64_t> sizes(n);
    for (int64_t& s : sizes) s = 16 * std::uniform_int_distribution<int64_t>(256, 16384)(rng);
    TT_RETURN_IF_ERROR(Items(*env, *library, absl::StrCat("mixed ", n, " x 4-256 KiB"), sizes, false));
  }
  for (int64_t pairs : {64, 512, 2048}) {
    TT_RETURN_IF_ERROR(PagedKv(*env, *library, pairs, 8192));
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace tiletune

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  absl::Status status = tiletune::Run(quick);
  if (!status.ok()) {
    std::fprintf(stderr, "batch_copy_benchmark: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}

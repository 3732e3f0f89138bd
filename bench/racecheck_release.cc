// A minimal reproducer of what compute-sanitizer's racecheck reports on col2im's TMA sweep
// (tt_col2im_swept): a double-buffered pipeline in which thread 0 fills a shared buffer,
// every thread reads it (lanes read each other's elements), and the buffer is released to
// the producer through an mbarrier ("empty") before the next fill.
//
// The release is one of:
//   warp     __syncwarp, then lane 0 arrives (empty counts one arrival per warp): the
//            release col2im's sweep uses.
//   thread   every thread arrives for its own reads (empty counts every thread).
//   nosync   lane 0 arrives with no __syncwarp: a real race, kept as racecheck's control.
// and the fill is a 1-D bulk copy (cp.async.bulk, the async proxy, as in col2im) or, with
// --fill=stores, thread 0's ordinary shared-memory stores.
//
// Why `warp` is correct. PTX's bar.warp.sync orders the memory accesses of the threads
// taking part in it: each lane's read of the buffer happens before everything lane 0 does
// after the barrier. Lane 0's mbarrier.arrive has release semantics at CTA scope (the
// default .release.cta), and the producer's mbarrier.try_wait that observes the phase
// completing has acquire semantics, so every lane's read happens before the producer's
// next fill of that buffer. That is the same chain `thread` builds with one release per
// thread, with the warp barrier standing in for 31 of them.
//
// What racecheck shows (bench/sanitize_on_device.sh runs every combination): `warp` gets
// the same shared-memory errors as `nosync` (which adds warnings of its own about warp-level
// programming), and `thread` is clean. racecheck sees the __syncwarp but does not carry its
// ordering into the mbarrier release, so as far as the errors go it cannot tell the correct
// release from the broken one. The program checks the sums bit-exact in every mode.
//
//   racecheck_release --release=warp --fill=bulk [--blocks=132 --rows=256]
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "compiler/base/command_line.h"
#include "compiler/base/status_macros.h"
#include "compiler/cuda/nvrtc_compilation_provider.h"
#include "kernels/runtime/runtime.h"

namespace tiletune {
namespace {

constexpr uint32_t kThreads = 128;

// kRelease: 0 warp, 1 thread, 2 nosync. kBulkFill: the fill is a bulk copy.
constexpr absl::string_view kSource = R"(
typedef unsigned int u32;
typedef unsigned long long u64;
constexpr u32 kThreads = 128, kBuffers = 2, kRowBytes = kThreads * 4;

__device__ __forceinline__ u32 smem(const void* p) {
  return static_cast<u32>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void bar_init(u64* bar, u32 count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(smem(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void bar_arrive(u64* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(smem(bar)) : "memory");
}
__device__ __forceinline__ void bar_expect_tx(u64* bar, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
               :: "r"(smem(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void bar_wait(u64* bar, u32 parity) {
  asm volatile(
      "{\n"
      "  .reg .pred done;\n"
      "WAIT_%=:\n"
      "  mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "  @!done bra WAIT_%=;\n"
      "}\n" :: "r"(smem(bar)), "r"(parity) : "memory");
}

extern "C" __global__ void __launch_bounds__(kThreads)
release_pipeline(const float* __restrict__ rows, float* __restrict__ sums, u32 num_rows) {
  __shared__ __align__(128) float stage[kBuffers][kThreads];
  __shared__ __align__(8) u64 full[kBuffers];   // the fill landed
  __shared__ __align__(8) u64 empty[kBuffers];  // every reader is done with the buffer
  if (threadIdx.x == 0) {
    for (u32 b = 0; b < kBuffers; ++b) {
      bar_init(&full[b], 1);
      bar_init(&empty[b], kRelease == 1 ? kThreads : kThreads / 32);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  const float* mine = rows + u64(blockIdx.x) * num_rows * kThreads;
  auto produce = [&](u32 g) {  // row g into buffer g % kBuffers
    const u32 b = g % kBuffers;
    if (g >= kBuffers) bar_wait(&empty[b], (g / kBuffers - 1) & 1);
    if (kBulkFill) {
      bar_expect_tx(&full[b], kRowBytes);
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
          :: "r"(smem(stage[b])), "l"(mine + u64(g) * kThreads), "r"(kRowBytes), "r"(smem(&full[b]))
          : "memory");
    } else {
      for (u32 i = 0; i < kThreads; ++i) stage[b][i] = mine[u64(g) * kThreads + i];
      bar_arrive(&full[b]);
    }
  };
  if (threadIdx.x == 0) {
    for (u32 g = 0; g + 1 < kBuffers && g < num_rows; ++g) produce(g);
  }
  float acc = 0.0f;
#pragma unroll 1
  for (u32 s = 0; s < num_rows; ++s) {
    if (threadIdx.x == 0 && s + kBuffers - 1 < num_rows) produce(s + kBuffers - 1);
    const u32 b = s % kBuffers;
    bar_wait(&full[b], s / kBuffers & 1);
    // Another lane's element (and, for lanes 0-6 and 32-38, another warp's): the reads a
    // release must cover are not only a thread's own.
    acc = acc * 0.5f + stage[b][(threadIdx.x + 7 * s) % kThreads];
    if (kRelease == 0) {
      __syncwarp();
      if (threadIdx.x % 32 == 0) bar_arrive(&empty[b]);
    } else if (kRelease == 1) {
      bar_arrive(&empty[b]);
    } else {
      if (threadIdx.x % 32 == 0) bar_arrive(&empty[b]);
    }
  }
  sums[u64(blockIdx.x) * kThreads + threadIdx.x] = acc;
}
)";

absl::Status Run(absl::string_view release, absl::string_view fill, uint32_t blocks,
                 uint32_t num_rows) {
  int release_code;
  if (release == "warp") {
    release_code = 0;
  } else if (release == "thread") {
    release_code = 1;
  } else if (release == "nosync") {
    release_code = 2;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--release=", release, ": accepted are warp, thread and nosync"));
  }
  if (fill != "bulk" && fill != "stores") {
    return absl::InvalidArgumentError(
        absl::StrCat("--fill=", fill, ": accepted are bulk and stores"));
  }
  TT_ASSIGN_OR_RETURN(std::unique_ptr<Context> context, Context::Create(0));
  if (context->info().cc_major < 9) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the bulk copy and mbarrier transaction counts need sm_90 or newer; device 0 is ",
        context->info().ArchName()));
  }
  TT_ASSIGN_OR_RETURN(auto nvrtc, NvrtcCompilationProvider::Create());
  const std::string text =
      absl::StrCat("constexpr unsigned kRelease = ", release_code, ";\nconstexpr bool kBulkFill = ",
                   fill == "bulk" ? "true" : "false", ";\n", kSource);
  TT_ASSIGN_OR_RETURN(Cubin cubin,
                      nvrtc->CompileToCubin(CudaSource{"release_pipeline", text},
                                            CompileOptions{.arch = context->info().ArchName(),
                                                           .line_info = true}));
  TT_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, Module::Load(*context, cubin.bytes));
  TT_ASSIGN_OR_RETURN(Kernel kernel, module->GetKernel("release_pipeline", 3));

  const size_t count = size_t{blocks} * num_rows * kThreads;
  std::vector<float> rows(count);
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (float& v : rows) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = static_cast<float>(static_cast<int>(state >> 40) % 2048 - 1024) / 64.0f;
  }
  TT_ASSIGN_OR_RETURN(DeviceBuffer d_rows, DeviceBuffer::Allocate(*context, count * 4));
  TT_ASSIGN_OR_RETURN(DeviceBuffer d_sums,
                      DeviceBuffer::Allocate(*context, size_t{blocks} * kThreads * 4));
  TT_RETURN_IF_ERROR(d_rows.CopyFromHost(rows.data(), count * 4));
  TT_RETURN_IF_ERROR(d_sums.Fill(0xff));  // poisoned: NaN where a thread never stores
  CUdeviceptr rows_ptr = d_rows.ptr(), sums_ptr = d_sums.ptr();
  TT_RETURN_IF_ERROR(kernel.Launch({.grid = {blocks, 1, 1}, .block = {kThreads, 1, 1}},
                                   {&rows_ptr, &sums_ptr, &num_rows}));
  TT_RETURN_IF_ERROR(context->Synchronize());
  std::vector<float> sums(size_t{blocks} * kThreads);
  TT_RETURN_IF_ERROR(d_sums.CopyToHost(sums.data(), sums.size() * 4));

  size_t mismatches = 0;
  for (uint32_t block = 0; block < blocks; ++block) {
    for (uint32_t t = 0; t < kThreads; ++t) {
      float acc = 0.0f;
      for (uint32_t s = 0; s < num_rows; ++s) {
        acc = acc * 0.5f + rows[(size_t{block} * num_rows + s) * kThreads + (t + 7 * s) % kThreads];
      }
      const float got = sums[size_t{block} * kThreads + t];
      if (std::memcmp(&acc, &got, 4) != 0) ++mismatches;
    }
  }
  std::printf("release=%s fill=%s blocks=%u rows=%u: %zu of %zu sums differ from the CPU's\n",
              std::string(release).c_str(), std::string(fill).c_str(), blocks, num_rows,
              mismatches, sums.size());
  if (mismatches != 0) return absl::InternalError("sums differ");
  return absl::OkStatus();
}

}  // namespace
}  // namespace tiletune

int main(int argc, char** argv) {
  const std::vector<tiletune::FlagSpec> specs = {
      {"release", tiletune::FlagType::kString, "warp|thread|nosync: the release (default warp)"},
      {"fill", tiletune::FlagType::kString, "bulk|stores: how the buffer is filled (default bulk)"},
      {"blocks", tiletune::FlagType::kInt, "N: CTAs, each with its own rows (default 132)", 0,
       1, 1 << 16},
      {"rows", tiletune::FlagType::kInt, "N: rows each CTA sums (default 256)", 0, 1, 1 << 16}};
  absl::StatusOr<tiletune::CommandLine> line =
      tiletune::ParseCommandLine(std::vector<std::string>(argv + 1, argv + argc), specs);
  if (!line.ok()) {
    std::fprintf(stderr, "racecheck_release: %s\n", std::string(line.status().message()).c_str());
    return 2;
  }
  if (line->help()) {
    std::printf("racecheck_release: the mbarrier release of col2im's TMA sweep, for racecheck\n%s",
                tiletune::FlagHelp(specs).c_str());
    return 0;
  }
  absl::Status status = tiletune::Run(line->String("release", "warp"), line->String("fill", "bulk"),
                                      static_cast<uint32_t>(line->Int("blocks", 132)),
                                      static_cast<uint32_t>(line->Int("rows", 256)));
  if (!status.ok()) {
    std::fprintf(stderr, "racecheck_release: %s\n", std::string(status.message()).c_str());
    return absl::IsInvalidArgument(status) ? 2 : 1;
  }
  return 0;
}

#include "kernels/emulate/host_emulator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/ops/candidates.h"
#include "compiler/target/target.h"
#include "gtest/gtest.h"
#include "kernels/emulate/emulated_grid.h"
#include "kernels/emulate/host_source.h"

namespace tiletune {
namespace {

TEST(HalfTest, ConvertsAsPtxCvtDoes) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const bool nan = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
    const uint16_t back = FloatToHalf(HalfToFloat(static_cast<uint16_t>(h)));
    EXPECT_EQ(back, nan ? 0x7fffu : h) << "half 0x" << std::hex << h;
  }
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00u);      // a tie: to even
  EXPECT_EQ(FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02u);  // a tie: to even
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)), 0x0000u);             // a subnormal tie
  EXPECT_EQ(FloatToHalf(3 * std::ldexp(1.0f, -25)), 0x0002u);
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7bffu);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00u);
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000u);
}

TEST(HostSourceTest, RewritesAsmSharedMemoryAndTheKernel) {
  const std::string cuda = R"(
typedef unsigned char u8;
__device__ __forceinline__ u32 tt_ld(const u8* p) {
  u32 v;
  asm volatile("ld.global.nc.u32 %0, [%1];" : "=r"(v) : "l"(p));  // asm in a comment: asm(
  return v;
}
extern "C" __global__ void __launch_bounds__(128) tt_k(const u8* __restrict__ src, u8* dst) {
  extern __shared__ __align__(16) u8 tt_smem[];
  __shared__ __align__(8) u64 tt_bar[2];
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
)";
  absl::StatusOr<std::string> host = HostKernelText(cuda, "tt_k", "entry_7");
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_NE(host->find("tt_emu_operand tt_emu_ops[] = {tt_emu_out(v), tt_emu_in(p)}"), std::string::npos)
      << *host;
  EXPECT_NE(host->find("// asm in a comment: asm("), std::string::npos) << *host;
  EXPECT_NE(host->find("u8* const tt_smem = tt_emu_dynamic_shared<u8>()"), std::string::npos) << *host;
  EXPECT_NE(host->find("auto& tt_bar = tt_emu_static_shared<u64[2]>(8)"), std::string::npos) << *host;
  EXPECT_NE(host->find("run_asm(\"fence.proxy.async.shared::cta;\", 0, 0, 0)"), std::string::npos) << *host;
  EXPECT_NE(host->find("extern \"C\" void entry_7(void** args)"), std::string::npos) << *host;
  EXPECT_NE(host->find("tt_k(*reinterpret_cast<const u8**>(args[0]), *reinterpret_cast<u8**>(args[1]))"),
            std::string::npos) << *host;
  EXPECT_EQ(host->find("extern \"C\" __global__"), std::string::npos) << *host;
  EXPECT_FALSE(HostKernelText("asm volatile(\"x;\" : \"=r\"(v)", "k", "e").ok());
  EXPECT_FALSE(HostKernelText("__global__ void other() {}", "k", "e").ok());
}

// A hand-written kernel of `threads` threads over 64 B of input and output.
std::unique_ptr<HostEmulator> HandKernel(const std::string& body, int threads, int64_t shared_bytes) {
  auto lowered = std::make_shared<LoweredTileKernel>();
  lowered->kernel_name = "tt_hand";
  lowered->launch.threads = threads;
  lowered->num_tiles = 1;
  lowered->shared_bytes = shared_bytes;
  const std::string source = absl::StrCat(R"(
typedef unsigned char u8;
typedef unsigned int u32;
typedef unsigned long long u64;
__device__ __forceinline__ u32 tt_smem_addr(const void* p) { return static_cast<u32>(__cvta_generic_to_shared(p)); }
extern "C" __global__ void tt_hand(const u8* __restrict__ src, u8* __restrict__ dst) {
  extern __shared__ __align__(16) u8 tt_smem[];
)", body, "}\n");
  absl::StatusOr<std::unique_ptr<HostEmulator>> emulator =
      HostEmulator::Create({HostKernel{lowered, source}}, {});
  EXPECT_TRUE(emulator.ok()) << emulator.status();
  return emulator.ok() ? *std::move(emulator) : nullptr;
}

// Runs the hand kernel over fresh input; returns its status and leaves the output in `out`.
absl::Status RunHand(const HostEmulator& emulator, std::vector<uint8_t>& in, std::vector<uint8_t>& out) {
  alignas(256) static uint8_t input[256];
  alignas(256) static uint8_t output[256];
  for (int i = 0; i < 64; ++i) input[i] = static_cast<uint8_t>(i * 7 + 1);
  std::memset(output, 0xee, sizeof(output));
  const absl::Status status = emulator.Launch(
      0, input, output, RegionOffsets{}, nullptr,
      {{"src", reinterpret_cast<uint64_t>(input), reinterpret_cast<uint64_t>(input) + 64},
       {"dst", reinterpret_cast<uint64_t>(output), reinterpret_cast<uint64_t>(output) + 64}},
      /*seed=*/1);
  in.assign(input, input + 64);
  out.assign(output, output + 64);
  return status;
}

constexpr char kCpAsyncCopy[] = R"(
  const u32 t = threadIdx.x;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(tt_smem_addr(tt_smem + 16 * t)), "l"(src + 16 * t), "r"(16u) : "memory");
  asm volatile("cp.async.commit_group;" ::: "memory");
  WAIT
  __syncthreads();
  for (int i = 0; i < 16; ++i) dst[16 * t + i] = tt_smem[16 * ((t + 1) % 4) + i];
)";

TEST(HostEmulatorTest, CopiesLandWhenTheKernelWaits) {
  std::vector<uint8_t> in, out;
  const std::string wait = "asm volatile(\"cp.async.wait_group %0;\" :: \"n\"(0) : \"memory\");";
  std::unique_ptr<HostEmulator> waits =
      HandKernel(absl::StrReplaceAll(kCpAsyncCopy, {{"WAIT", wait}}), 4, 64);
  ASSERT_NE(waits, nullptr);
  ASSERT_TRUE(RunHand(*waits, in, out).ok());
  // Each thread writes the next thread's 16 bytes, which reached shared memory by its copy.
  std::vector<uint8_t> rotated(in.begin() + 16, in.end());
  rotated.insert(rotated.end(), in.begin(), in.begin() + 16);
  EXPECT_EQ(out, rotated);
  // Without the wait, the other threads' copies have not landed: the kernel reads garbage.
  std::unique_ptr<HostEmulator> races = HandKernel(absl::StrReplaceAll(kCpAsyncCopy, {{"WAIT", ""}}), 4, 64);
  ASSERT_NE(races, nullptr);
  ASSERT_TRUE(RunHand(*races, in, out).ok());
  EXPECT_NE(out, rotated);
}

TEST(HostEmulatorTest, ReportsDeadlocksAndAccessesOutsideTheBuffers) {
  std::vector<uint8_t> in, out;
  std::unique_ptr<HostEmulator> deadlock =
      HandKernel("if (threadIdx.x == 0) { __syncwarp(); } else { __syncthreads(); }", 2, 16);
  ASSERT_NE(deadlock, nullptr);
  const absl::Status hang = RunHand(*deadlock, in, out);
  EXPECT_EQ(hang.code(), absl::StatusCode::kDeadlineExceeded) << hang;
  EXPECT_NE(hang.message().find("thread 1 at __syncthreads"), std::string::npos) << hang;

  std::unique_ptr<HostEmulator> overread = HandKernel(R"(
  u32 v;
  asm volatile("ld.global.nc.u32 %0, [%1];" : "=r"(v) : "l"(src + 64));
  dst[0] = v;
)", 1, 16);
  ASSERT_NE(overread, nullptr);
  const absl::Status outside = RunHand(*overread, in, out);
  EXPECT_EQ(outside.code(), absl::StatusCode::kFailedPrecondition) << outside;
  EXPECT_NE(outside.message().find("ld.global of 4 B"), std::string::npos) << outside;
  EXPECT_NE(outside.message().find("outside every buffer"), std::string::npos) << outside;
}

// Problems of every operator and layout, small enough to emulate thread by thread.
const std::vector<std::string>& Problems() {
  static const std::vector<std::string>* const problems = new std::vector<std::string>{
      "copy:f16:96,200",
      "copy:u8:src=300x4097[0:300,3:4000]",
      "copy:u8:src=2000x4[0:2000,0:3]",
      "im2col:f16:2,12,12,64:k=3:p=1",
      "im2col:f32:2,20,20,3:k=7:s=2:p=3",
      "im2col:bf16:2,32,32,3:k=16:s=16:layout=nchw",
      "im2col:f16:2,10,10,32:k=3:p=1:layout=nchw",
      "col2im:bf16:2,12,12,64:k=3:p=1",
      "col2im:f32:2,16,16,8:k=4:s=2:p=1",
      "col2im:f16:2,10,10,32:k=3:p=1:layout=nchw",
      "batch_copy:f16:40:2048:src=64",
  };
  return *problems;
}

// Every kernel of each problem's first search phase, its heuristic and a sample of its
// second phase's launches, on Hopper (TMA paths), Ampere (cp.async) and Turing (neither), run on the CPU and compared bit-exact with the reference.
TEST(HostEmulatorTest, EverySearchedKernelMatchesItsReference) {
  const TileOpRegistry& ops = BuiltinTileOps();
  int verified = 0;
  std::map<std::string, int> paths;
  for (const char* arch : {"sm_90a", "sm_80", "sm_75"}) {
    const Target target = *Target::Parse(arch);
    for (const std::string& spec : Problems()) {
      SCOPED_TRACE(absl::StrCat(arch, " ", spec));
      absl::StatusOr<std::unique_ptr<TileOp>> op = ops.ParseSpec(spec);
      ASSERT_TRUE(op.ok()) << op.status();
      const TileOpDefinition& definition = **ops.For(**op);
      const SearchSpace space = definition.Search(**op, target);
      const Trial heuristic = definition.Heuristic(**op, target);
      std::vector<Trial> trials = space.first;
      trials.push_back(heuristic);
      // And second-phase launches (tiles, threads, stages) with the heuristic's hints,
      // spread over the list.
      constexpr size_t kLaunches = 12;
      const size_t step = std::max<size_t>(1, space.launches.size() / kLaunches);
      for (size_t i = 0; i < space.launches.size(); i += step) {
        trials.push_back(Trial{heuristic.hints, space.launches[i]});
      }
      absl::StatusOr<CandidateSet> set = BuildCandidates(definition, **op, target, trials);
      ASSERT_TRUE(set.ok()) << set.status();
      std::vector<HostKernel> kernels;
      for (const Candidate& c : set->candidates) kernels.push_back({c.lowered, c.source.text});
      absl::StatusOr<std::unique_ptr<HostEmulator>> emulator = HostEmulator::Create(kernels, {});
      ASSERT_TRUE(emulator.ok()) << emulator.status();
      std::mt19937_64 rng(std::hash<std::string>()(spec));
      for (int i = 0; i < (*emulator)->size(); ++i) {
        const LoweredTileKernel& k = (*emulator)->lowered(i);
        const absl::Status status = (*emulator)->Verify(i, definition, **op, rng);
        EXPECT_TRUE(status.ok()) << LaunchSummary(k.path_name, k.form_name, k.launch) << ": " << status;
        ++verified;
        ++paths[absl::StrCat(k.path_name, "/", k.form_name)];
      }
    }
  }
  std::vector<std::string> seen;
  for (const auto& [path, n] : paths) seen.push_back(absl::StrCat(path, " ", n));
  std::cout << verified << " kernels verified on the CPU: " << absl::StrJoin(seen, ", ") << "\n";
}

}  // namespace
}  // namespace tiletune

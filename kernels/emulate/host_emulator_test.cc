#include "kernels/emulate/host_emulator.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
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

namespace tiletune {
namespace {

// A hand-written kernel of `threads` threads over 64 B of input and output.
std::unique_ptr<HostEmulator> HandKernel(const std::string& body, int threads,
                                         int64_t shared_bytes) {
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
)",
                                          body, "}\n");
  absl::StatusOr<std::unique_ptr<HostEmulator>> emulator =
      HostEmulator::Create({HostKernel{lowered, source}}, {});
  EXPECT_TRUE(emulator.ok()) << emulator.status();
  return emulator.ok() ? *std::move(emulator) : nullptr;
}

// Runs the hand kernel over fresh input; returns its status and leaves the output in `out`.
absl::Status RunHand(const HostEmulator& emulator, std::vector<uint8_t>& in,
                     std::vector<uint8_t>& out) {
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
  WAIT_BEFORE
  __syncthreads();
  for (int i = 0; i < 16; ++i) dst[16 * t + i] = tt_smem[16 * ((t + 1) % 4) + i];
  WAIT_AFTER
)";

TEST(HostEmulatorTest, CopiesLandWhenTheKernelWaits) {
  std::vector<uint8_t> in, out;
  const std::string wait = "asm volatile(\"cp.async.wait_group %0;\" :: \"n\"(0) : \"memory\");";
  std::unique_ptr<HostEmulator> waits = HandKernel(
      absl::StrReplaceAll(kCpAsyncCopy, {{"WAIT_BEFORE", wait}, {"WAIT_AFTER", ""}}), 4, 64);
  ASSERT_NE(waits, nullptr);
  ASSERT_TRUE(RunHand(*waits, in, out).ok());
  // Each thread writes the next thread's 16 bytes, which reached shared memory by its copy.
  std::vector<uint8_t> rotated(in.begin() + 16, in.end());
  rotated.insert(rotated.end(), in.begin(), in.begin() + 16);
  EXPECT_EQ(out, rotated);
  // Waiting only after reading, the kernel reads shared memory the copies have not reached.
  std::unique_ptr<HostEmulator> races = HandKernel(
      absl::StrReplaceAll(kCpAsyncCopy, {{"WAIT_BEFORE", ""}, {"WAIT_AFTER", wait}}), 4, 64);
  ASSERT_NE(races, nullptr);
  ASSERT_TRUE(RunHand(*races, in, out).ok());
  EXPECT_NE(out, rotated);
}

// A register move (the emitters keep a base opaque with one) passes its value through.
TEST(HostEmulatorTest, MovesRegisters) {
  std::vector<uint8_t> in, out;
  std::unique_ptr<HostEmulator> moves = HandKernel(R"(
  u64 a;
  asm("mov.b64 %0, %1;" : "=l"(a) : "l"(reinterpret_cast<u64>(src) + 8));
  u32 b;
  asm("mov.b32 %0, %1;" : "=r"(b) : "r"(u32(threadIdx.x) + 5u));
  dst[threadIdx.x] = reinterpret_cast<const u8*>(a)[threadIdx.x] + u8(b);
)",
                                                   4, 16);
  ASSERT_NE(moves, nullptr);
  ASSERT_TRUE(RunHand(*moves, in, out).ok());
  for (int t = 0; t < 4; ++t) EXPECT_EQ(out[t], static_cast<uint8_t>(in[8 + t] + t + 5)) << t;
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
)",
                                                      1, 16);
  ASSERT_NE(overread, nullptr);
  const absl::Status outside = RunHand(*overread, in, out);
  EXPECT_EQ(outside.code(), absl::StatusCode::kFailedPrecondition) << outside;
  EXPECT_NE(outside.message().find("ld.global of 4 B"), std::string::npos) << outside;
  EXPECT_NE(outside.message().find("outside every buffer"), std::string::npos) << outside;
}

TEST(HostEmulatorTest, RefusesUncommittedCopiesAndMisalignedVectors) {
  std::vector<uint8_t> in, out;
  // wait_group waits for committed groups only: this copy is never waited for.
  std::unique_ptr<HostEmulator> uncommitted = HandKernel(R"(
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(tt_smem_addr(tt_smem)), "l"(src), "r"(16u) : "memory");
  asm volatile("cp.async.wait_group %0;" :: "n"(0) : "memory");
)",
                                                         1, 16);
  ASSERT_NE(uncommitted, nullptr);
  const absl::Status lost = RunHand(*uncommitted, in, out);
  EXPECT_NE(lost.message().find("never waited for"), std::string::npos) << lost;

  std::unique_ptr<HostEmulator> misaligned = HandKernel(R"(
  u32 a, b;
  asm volatile("ld.global.nc.v2.u32 {%0, %1}, [%2];" : "=r"(a), "=r"(b) : "l"(src + 4));
  dst[0] = a + b;
)",
                                                        1, 16);
  ASSERT_NE(misaligned, nullptr);
  const absl::Status fault = RunHand(*misaligned, in, out);
  EXPECT_NE(fault.message().find("not 8-byte aligned"), std::string::npos) << fault;
}

// Problems of every operator and layout, small enough to emulate thread by thread.
const std::vector<std::string>& Problems() {
  static const std::vector<std::string>* const problems = new std::vector<std::string>{
      "copy:f16:96,200",
      "copy:u8:src=300x4097[0:300,3:4000]",
      "copy:u8:src=2000x4[0:2000,0:3]",
      // The shifted form's last slot ends at the buffer's last byte: its aligned loads
      // read past the buffer unless they keep inside the copy's span.
      "copy:u8:src=91x238[5:91,0:237]:dst=86x238[0:86,0:237]",
      "im2col:f16:2,12,12,64:k=3:p=1",
      "im2col:f32:2,20,20,3:k=7:s=2:p=3",
      "im2col:bf16:2,32,32,3:k=16:s=16:layout=nchw",
      "im2col:f16:2,10,10,32:k=3:p=1:layout=nchw",
      "col2im:bf16:2,12,12,64:k=3:p=1",
      "col2im:f32:2,16,16,8:k=4:s=2:p=1",
      "col2im:f16:2,10,10,32:k=3:p=1:layout=nchw",
      "col2im:bf16:2,32,32,3:k=16:s=16:layout=nchw",
      "col2im:f32:2,15,16,4:k=3x2:s=2:d=2:p=1:layout=nchw",
      "batch_copy:f16:40:2048:src=64",
  };
  return *problems;
}

// Verifies every kernel of `spec`'s first search phase and its heuristic (plus
// `launches` of its second phase's launches, with the heuristic's hints) on `arch`.
// Returns how many it verified, counting them by path and form into `paths`.
int VerifySearchedKernels(const std::string& spec, const std::string& arch, size_t launches,
                          std::map<std::string, int>& paths) {
  SCOPED_TRACE(absl::StrCat(arch, " ", spec));
  const TileOpRegistry& ops = BuiltinTileOps();
  const Target target = *Target::Parse(arch);
  absl::StatusOr<std::unique_ptr<TileOp>> op = ops.ParseSpec(spec);
  EXPECT_TRUE(op.ok()) << op.status();
  if (!op.ok()) return 0;
  const TileOpDefinition& definition = **ops.For(**op);
  const SearchSpace space = definition.Search(**op, target);
  const Trial heuristic = definition.Heuristic(**op, target);
  std::vector<Trial> trials = space.first;
  trials.push_back(heuristic);
  const size_t step = std::max<size_t>(1, space.launches.size() / std::max<size_t>(1, launches));
  for (size_t i = 0; launches > 0 && i < space.launches.size(); i += step) {
    trials.push_back(Trial{heuristic.hints, space.launches[i]});
  }
  absl::StatusOr<CandidateSet> set = BuildCandidates(definition, **op, target, trials);
  EXPECT_TRUE(set.ok()) << set.status();
  if (!set.ok()) return 0;
  std::vector<HostKernel> kernels;
  for (const Candidate& c : set->candidates) kernels.push_back({c.lowered, c.source.text});
  absl::StatusOr<std::unique_ptr<HostEmulator>> emulator = HostEmulator::Create(kernels, {});
  EXPECT_TRUE(emulator.ok()) << emulator.status();
  if (!emulator.ok()) return 0;
  std::mt19937_64 rng(std::hash<std::string>()(spec));
  for (int i = 0; i < (*emulator)->size(); ++i) {
    const LoweredTileKernel& k = (*emulator)->lowered(i);
    const absl::Status status = (*emulator)->Verify(i, definition, **op, rng);
    EXPECT_TRUE(status.ok()) << LaunchSummary(k.path_name, k.form_name, k.launch) << ": " << status;
    ++paths[absl::StrCat(k.path_name, "/", k.form_name)];
  }
  return (*emulator)->size();
}

std::string Summary(int verified, const std::map<std::string, int>& paths) {
  std::vector<std::string> seen;
  for (const auto& [path, n] : paths) seen.push_back(absl::StrCat(path, " ", n));
  return absl::StrCat(verified, " kernels verified on the CPU: ", absl::StrJoin(seen, ", "));
}

// Every kernel of each problem's first search phase, its heuristic and a sample of its
// second phase's launches, on Hopper (TMA paths), Ampere (cp.async) and Turing (neither), run on
// the CPU and compared bit-exact with the reference.
TEST(HostEmulatorTest, EverySearchedKernelMatchesItsReference) {
  int verified = 0;
  std::map<std::string, int> paths;
  for (const char* arch : {"sm_90a", "sm_80", "sm_75"}) {
    for (const std::string& spec : Problems()) {
      verified += VerifySearchedKernels(spec, arch, /*launches=*/12, paths);
    }
  }
  std::cout << Summary(verified, paths) << "\n";
}

// A random problem of a random operator, small enough to emulate: geometry, dtype, layout,
// region offsets and pitches drawn widely, so that tails, padding, odd channel counts and
// misaligned rows occur. It may be invalid (the caller skips those).
std::string RandomProblem(std::mt19937_64& rng) {
  auto pick = [&](std::initializer_list<int> values) {
    return *(values.begin() + rng() % values.size());
  };
  auto in = [&](int lo, int hi) {
    return lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  const char* floats[] = {"f16", "bf16", "f32"};
  switch (rng() % 5) {
    case 0: {  // a dense copy
      const char* types[] = {"u8", "f16", "f32", "f64"};
      std::vector<std::string> dims;
      for (int d = in(1, 3); d > 0; --d) dims.push_back(std::to_string(in(1, d == 1 ? 700 : 40)));
      return absl::StrCat("copy:", types[rng() % 4], ":", absl::StrJoin(dims, ","));
    }
    case 1: {  // regions of two buffers
      const char* types[] = {"u8", "f16", "f32"};
      const int rows = in(1, 200), cols = in(1, 300);
      const int src_pitch = cols + in(0, 40), dst_pitch = cols + pick({0, 0, 1, 8, 33});
      const int r0 = in(0, 5), c0 = in(0, src_pitch - cols), d0 = in(0, dst_pitch - cols);
      return absl::StrCat("copy:", types[rng() % 3], ":src=", rows + r0, "x", src_pitch, "[", r0,
                          ":", rows + r0, ",", c0, ":", c0 + cols, "]:dst=", rows, "x", dst_pitch,
                          "[0:", rows, ",", d0, ":", d0 + cols, "]");
    }
    case 2:
    case 3: {  // im2col or col2im
      const bool fold = rng() % 2 == 0;
      const int k = pick({1, 2, 3, 3, 4, 5, 7}), s = pick({1, 1, 2, 3}), d = pick({1, 1, 1, 2});
      const bool patchify = rng() % 5 == 0;
      const int kh = patchify ? pick({2, 4, 8}) : k, kw = patchify ? kh : pick({k, k, 1, 3});
      const std::string window = patchify ? absl::StrCat(":k=", kh, ":s=", kh)
                                          : absl::StrCat(":k=", kh, "x", kw, ":s=", s, ":d=", d,
                                                         ":p=", in(0, 2), "x", in(0, 2));
      const std::string type = !fold && rng() % 4 == 0 ? "u8" : floats[rng() % 3];
      return absl::StrCat(fold ? "col2im:" : "im2col:", type, ":", in(1, 3), ",", in(1, 20), ",",
                          in(1, 20), ",", pick({1, 2, 3, 4, 5, 8, 16, 24, 64}), window,
                          rng() % 2 == 0 ? ":layout=nchw" : "");
    }
    default: {  // many small copies in one launch
      const int item = pick({8, 24, 256, 1000, 4096});
      return absl::StrCat("batch_copy:", floats[rng() % 3], ":", in(1, 40), ":", item,
                          ":src=", in(40, 60), ":dst=", in(40, 60),
                          rng() % 2 == 0 ? ":regions" : "");
    }
  }
}

// Random problems (a fixed seed here; TILETUNE_EMULATE_PROBLEMS and TILETUNE_EMULATE_SEED
// run more, or others, by hand), each verified on a random architecture.
TEST(HostEmulatorTest, RandomProblemsMatchTheirReferences) {
  const char* count_env = std::getenv("TILETUNE_EMULATE_PROBLEMS");
  const char* seed_env = std::getenv("TILETUNE_EMULATE_SEED");
  const int problems = count_env != nullptr ? std::atoi(count_env) : 10;
  std::mt19937_64 rng(seed_env != nullptr ? std::strtoull(seed_env, nullptr, 10) : 2026);
  const TileOpRegistry& ops = BuiltinTileOps();
  int verified = 0, drawn = 0;
  std::map<std::string, int> paths;
  while (drawn < problems) {
    const std::string spec = RandomProblem(rng);
    const char* arch = rng() % 2 == 0 ? "sm_90a" : "sm_80";
    absl::StatusOr<std::unique_ptr<TileOp>> op = ops.ParseSpec(spec);
    if (!op.ok()) continue;
    const OperandSizes sizes = (*ops.For(**op))->Sizes(**op);
    if (sizes.input_bytes > (size_t{1} << 20) || sizes.output_bytes > (size_t{1} << 21)) continue;
    ++drawn;
    verified += VerifySearchedKernels(spec, arch, /*launches=*/4, paths);
  }
  std::cout << Summary(verified, paths) << "\n";
}

}  // namespace
}  // namespace tiletune

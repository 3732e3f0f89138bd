#include "kernels/emulate/host_source.h"

#include <string>

#include "gtest/gtest.h"

namespace tiletune {
namespace {

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
  EXPECT_NE(host->find("tt_emu_operand tt_emu_ops[] = {tt_emu_out(v), tt_emu_in(p)}"),
            std::string::npos)
      << *host;
  EXPECT_NE(host->find("// asm in a comment: asm("), std::string::npos) << *host;
  EXPECT_NE(host->find("u8* const tt_smem = tt_emu_dynamic_shared<u8>()"), std::string::npos)
      << *host;
  EXPECT_NE(host->find("auto& tt_bar = tt_emu_static_shared<u64[2]>(8)"), std::string::npos)
      << *host;
  EXPECT_NE(host->find("run_asm(\"fence.proxy.async.shared::cta;\", 0, 0, 0)"), std::string::npos)
      << *host;
  EXPECT_NE(host->find("extern \"C\" void entry_7(void** args)"), std::string::npos) << *host;
  EXPECT_NE(
      host->find("tt_k(*reinterpret_cast<const u8**>(args[0]), *reinterpret_cast<u8**>(args[1]))"),
      std::string::npos)
      << *host;
  EXPECT_EQ(host->find("extern \"C\" __global__"), std::string::npos) << *host;
  EXPECT_NE(host->find("extern \"C\" int entry_7_params() { return 2; }"), std::string::npos)
      << *host;
}

TEST(HostSourceTest, RefusesWhatItCannotRewrite) {
  EXPECT_FALSE(HostKernelText("asm volatile(\"x;\" : \"=r\"(v)", "k", "e").ok());  // unbalanced
  EXPECT_FALSE(HostKernelText("__global__ void other() {}", "k", "e").ok());
  EXPECT_FALSE(HostKernelText("#define X 1\n__global__ void k() {}", "k", "e").ok());
  EXPECT_FALSE(HostKernelText("__global__ void k() { __asm__(\"x;\"); }", "k", "e").ok());
  EXPECT_FALSE(
      HostKernelText("__global__ void k(u32 v) { asm(\"x %0;\" : \"+r\"(v)); }", "k", "e").ok());
}

}  // namespace
}  // namespace tiletune

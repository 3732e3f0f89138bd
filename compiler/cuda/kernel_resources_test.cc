#include "compiler/cuda/kernel_resources.h"

#include "gtest/gtest.h"

namespace tiletune {
namespace {

TEST(KernelResourcesTest, ReadsPtxasVerboseLog) {
  const char* log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'tt_copy_sync_simt' for 'sm_90a'\n"
      "ptxas info    : Function properties for tt_copy_sync_simt\n"
      "    0 bytes stack frame, 24 bytes spill stores, 24 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 16 bytes smem, 384 bytes cmem[0]\n";
  auto r = ParsePtxasLog(log);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->registers, 255);
  EXPECT_EQ(r->spill_bytes, 24);
  EXPECT_EQ(r->static_shared, 16);
  EXPECT_FALSE(ParsePtxasLog("ptxas info    : 0 bytes gmem\n").ok());
}

TEST(KernelResourcesTest, ResidentCtasTakeTheTightestLimit) {
  KernelResources r;
  r.registers = 255;  // 256 a thread once allocated: one CTA of 256 threads
  EXPECT_EQ(ResidentCtas(r, 256, 16502), 1);
  r.registers = 40;   // 10 Ki a CTA: 6
  EXPECT_EQ(ResidentCtas(r, 256, 0), 6);
  r.registers = 32;   // 8 Ki a CTA: 8, which the threads allow too
  EXPECT_EQ(ResidentCtas(r, 256, 0), 8);
  r.registers = 64;   // 16 Ki a CTA: 4
  EXPECT_EQ(ResidentCtas(r, 256, 16502), 4);
  r.registers = 32;   // 8 by threads, but 64 KiB of shared memory each: 3
  EXPECT_EQ(ResidentCtas(r, 256, 65536), 3);
  r.registers = 16;   // 32 CTAs of 32 threads at most
  EXPECT_EQ(ResidentCtas(r, 32, 0), 32);
}

}  // namespace
}  // namespace tiletune

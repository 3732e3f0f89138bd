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

}  // namespace
}  // namespace tiletune

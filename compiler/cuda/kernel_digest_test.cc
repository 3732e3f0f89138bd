#include "compiler/cuda/kernel_digest.h"

#include "gtest/gtest.h"

namespace tiletune {
namespace {

TEST(KernelDigestTest, CommentsAndLayoutAreNotCode) {
  const char* kernel =
      "// tiletune copy kernel (generated)\n"
      "extern \"C\" __global__ void k(int* p) {\n"
      "  /* the first element */ p[0] = 1;  // one\n"
      "}\n";
  EXPECT_EQ(KernelCode(kernel), "extern \"C\" __global__ void k(int* p) { p[0] = 1; }");
  const char* reworded =
      "// tiletune copy kernel (generated; do not edit)\n\n"
      "extern \"C\"   __global__ void k(int* p)\n{\n"
      "  p[0] = 1;\n"
      "}\n";
  EXPECT_EQ(KernelDigest(kernel), KernelDigest(reworded));
  EXPECT_EQ(KernelDigest(kernel).size(), 64u);
}

TEST(KernelDigestTest, AnyCodeChangeIsAnotherKernel) {
  const char* kernel = "__global__ void k(int* p) { p[0] = 1; }";
  EXPECT_NE(KernelDigest(kernel), KernelDigest("__global__ void k(int* p) { p[0] = 2; }"));
  EXPECT_NE(KernelDigest(kernel), KernelDigest("__global__ void k(int *p) { p[0]=1; }"));
}

TEST(KernelDigestTest, LiteralsAreKeptWhole) {
  // "//" and spaces inside a string, an escaped quote, and a character literal.
  const char* asm_text = "asm(\"mov.u32 %0,  %%nsmid; // x\" : \"=r\"(v)); char q = '\"';";
  EXPECT_EQ(KernelCode(asm_text), asm_text);
  EXPECT_EQ(KernelCode("s = \"a\\\"  b\"; // c"), "s = \"a\\\"  b\";");
}

}  // namespace
}  // namespace tiletune

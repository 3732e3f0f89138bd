#include "kernels/emulate/ptx_statement.h"

#include "gtest/gtest.h"

namespace tiletune {
namespace {

TEST(PtxStatementTest, ReadsAVectorLoad) {
  absl::StatusOr<PtxStatement> s =
      ParsePtxStatement("ld.global.nc.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->opcode, "ld.global.nc.L2::cache_hint.v4.u32");
  EXPECT_TRUE(s->HasModifier("L2::cache_hint"));
  EXPECT_TRUE(s->HasModifier("v4"));
  EXPECT_FALSE(s->HasModifier("v2"));
  ASSERT_EQ(s->operands.size(), 3u);
  EXPECT_EQ(s->operands[0].kind, PtxOperand::Kind::kVector);
  EXPECT_EQ(s->operands[0].registers, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(s->operands[1].kind, PtxOperand::Kind::kAddress);
  EXPECT_EQ(s->operands[1].registers, std::vector<int>{4});
  EXPECT_EQ(s->operands[2].registers, std::vector<int>{5});
}

TEST(PtxStatementTest, ReadsTensorAddressesImmediatesAndSpecials) {
  absl::StatusOr<PtxStatement> s = ParsePtxStatement(
      "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes "
      "[%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8};");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->operands.size(), 4u);
  EXPECT_EQ(s->operands[1].registers, std::vector<int>{1});
  EXPECT_EQ(s->operands[1].coordinates, (std::vector<int>{2, 3, 4, 5}));
  EXPECT_EQ(s->operands[3].registers, (std::vector<int>{7, 8}));

  absl::StatusOr<PtxStatement> copy =
      ParsePtxStatement("cp.async.cg.shared.global [%0], [%1], 16, %2;");
  ASSERT_TRUE(copy.ok()) << copy.status();
  EXPECT_EQ(copy->operands[2].kind, PtxOperand::Kind::kImmediate);
  EXPECT_EQ(copy->operands[2].immediate, 16);

  absl::StatusOr<PtxStatement> mov = ParsePtxStatement("mov.u32 %0, %%tid.y;");
  ASSERT_TRUE(mov.ok()) << mov.status();
  EXPECT_EQ(mov->operands[1].kind, PtxOperand::Kind::kSpecial);
  EXPECT_EQ(mov->operands[1].special, "tid.y");

  absl::StatusOr<PtxStatement> arrive =
      ParsePtxStatement("mbarrier.arrive.shared::cta.b64 _, [%0];");
  ASSERT_TRUE(arrive.ok()) << arrive.status();
  EXPECT_EQ(arrive->operands[0].kind, PtxOperand::Kind::kSink);
}

TEST(PtxStatementTest, ReadsTheMbarrierWaitLoop) {
  absl::StatusOr<PtxStatement> s = ParsePtxStatement(
      "{\n  .reg .pred done;\nTT_WAIT_%=:\n  mbarrier.try_wait.parity.shared::cta.b64 done, [%0], "
      "%1;\n  @!done bra TT_WAIT_%=;\n}\n");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(s->wait_loop);
  ASSERT_EQ(s->operands.size(), 2u);
  EXPECT_EQ(s->operands[0].kind, PtxOperand::Kind::kAddress);
  EXPECT_EQ(s->operands[1].registers, std::vector<int>{1});
}

TEST(PtxStatementTest, RefusesWhatItCannotRead) {
  EXPECT_FALSE(ParsePtxStatement("add.u32 %0, %1, %2").ok());  // no ';'
  EXPECT_FALSE(ParsePtxStatement("{\n .reg .u32 r;\n add.u32 r, %1, %2;\n}").ok());
  EXPECT_FALSE(ParsePtxStatement("ld.global.u32 %0, [%x];").ok());
}

}  // namespace
}  // namespace tiletune

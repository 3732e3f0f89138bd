// The `//compiler` command for --op=im2col: plans, CUDA and PTX, per-axis window flags, and
// one clear line with exit code 2 for bad input.
#include <sstream>
#include <string>
#include <vector>

#include "compiler/compiler_cli.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Result {
  int code;
  std::string out;
  std::string err;
};

Result RunCli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int code = RunCompilerCli(args, out, err);
  return {code, out.str(), err.str()};
}

const std::vector<std::string> kValid = {
    "--op=im2col", "--dtype=f16",  "--shape=64,56,56,64", "--kernel=3",    "--stride=1",
    "--dilation=1", "--pad=1",     "--tile=128,64",       "--target=sm_90a"};

std::vector<std::string> With(std::vector<std::string> args, const std::string& flag) {
  std::string name = flag.substr(0, flag.find('='));
  for (std::string& arg : args) {
    if (arg.substr(0, arg.find('=')) == name) {
      arg = flag;
      return args;
    }
  }
  args.push_back(flag);
  return args;
}

TEST(CompilerCliIm2colTest, PlanCudaAndPtx) {
  Result plan = RunCli(kValid);
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_THAT(plan.out, HasSubstr("path        tma_im2col"));
  EXPECT_THAT(plan.out, HasSubstr("columns     [200704, 576]"));
  EXPECT_THAT(plan.out, HasSubstr("box corners lower (h, w) = (-1, -1), upper (h, w) = (-1, -1)"));

  Result cuda = RunCli(With(kValid, "--emit=cuda"));
  ASSERT_EQ(cuda.code, 0) << cuda.err;
  EXPECT_THAT(cuda.out, HasSubstr("extern \"C\" __global__ void __launch_bounds__(kThreads) "
                                  "tt_im2col_tma_im2col("));

  Result ptx = RunCli(With(With(kValid, "--emit=ptx"), "--stages=2"));
  ASSERT_EQ(ptx.code, 0) << ptx.err;
  EXPECT_THAT(ptx.out, HasSubstr("cp.async.bulk.tensor.4d.shared::cluster.global.im2col"));

  Result simt = RunCli(With(With(kValid, "--target=sm_80"), "--emit=ptx"));
  ASSERT_EQ(simt.code, 0) << simt.err;
  EXPECT_THAT(simt.out, HasSubstr("ld.global.nc.v4.u32"));
}

TEST(CompilerCliIm2colTest, PerAxisWindowAndHints) {
  std::vector<std::string> args = With(With(With(With(kValid, "--kernel=3,5"), "--stride=2,1"),
                                            "--dilation=1,2"),
                                       "--pad=2,0");
  args = With(args, "--annotations=img_eviction_policy=evict_last,col_eviction_policy=evict_first");
  Result r = RunCli(args);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("window      kernel 3x5, stride 2x1, dilation 1x2, pad 2x0"));
  // OH = (56 + 4 - 3) / 2 + 1 = 29, OW = (56 - 9) + 1 = 48; corners (-2, 0) and (0, -8).
  EXPECT_THAT(r.out, HasSubstr("-> output 29x48"));
  EXPECT_THAT(r.out, HasSubstr("box corners lower (h, w) = (-2, 0), upper (h, w) = (0, -8)"));
  EXPECT_THAT(r.out, HasSubstr("l2 policy   image evict_last, columns evict_first"));

  Result sync = RunCli(With(args, "--prefer_instruction=sync"));
  ASSERT_EQ(sync.code, 0) << sync.err;
  EXPECT_THAT(sync.out, HasSubstr("- path simt_im2col (preferred)"));
}

TEST(CompilerCliIm2colTest, BadInputsGiveOneClearLineAndExitCode2) {
  struct Bad {
    std::vector<std::string> args;
    std::string needle;
  };
  std::vector<Bad> bad = {
      {With(kValid, "--op=conv"), "--op=conv: accepted are copy, im2col"},
      {With(kValid, "--shape=64,56,56"), "four values N,H,W,C"},
      {With(kValid, "--kernel=3,3,3"), "one value for both axes or two"},
      {With(kValid, "--kernel=0"), "--kernel=0: '0' is not an integer from 1"},
      {With(kValid, "--stride=a"), "--stride=a"},
      {With(kValid, "--pad=-1"), "--pad=-1"},
      {With(kValid, "--pad=3"), "ph=3 with kh=3 and dh=1: the pad must be smaller"},
      {With(kValid, "--dilation=30"), "output h is 0"},
      {With(kValid, "--src_shape=1,2"), "--src_shape applies to --op=copy only"},
      {With(kValid, "--through_shared=false"), "--through_shared applies to --op=copy, --op=col2im only"},
      {With(kValid, "--tile=128"), "give two extents, block_M"},
      {With(kValid, "--prefer_instruction=cp_async"), "no cp_async lowering"},
      {With(With(kValid, "--target=sm_80"), "--prefer_instruction=tma"),
       "prefer_instruction=tma cannot be honoured for this im2col on sm_80"},
      {With(With(kValid, "--shape=1,8,8,6"), "--prefer_instruction=tma"), "no channel box fits"},
      {With(kValid, "--annotations=swizzle=128"), "unknown im2col annotation 'swizzle'"},
      {With(kValid, "--annotations=img_eviction_policy=evict_often"), "evict_often"},
      {{"--op=im2col", "--shape=1,8,8,8", "--tile=64,8"}, "--kernel is required"},
      {{"--op=im2col", "--kernel=3", "--tile=64,8"}, "--shape is required"},
      {{"--op=copy", "--shape=64,64", "--tile=64,64", "--kernel=3"},
       "--kernel applies to --op=im2col, --op=col2im only"},
  };
  for (const Bad& b : bad) {
    Result r = RunCli(b.args);
    EXPECT_EQ(r.code, 2) << b.needle << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(b.needle));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_THAT(r.out, Not(HasSubstr("kernel ")));
  }
}

TEST(CompilerCliIm2colTest, CopyIsUnchanged) {
  Result r = RunCli({"--op=copy", "--dtype=f16", "--shape=8192,8192", "--tile=128,128",
                     "--target=sm_90a", "--prefer_instruction=tma"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("path        tma"));
  Result d = RunCli({"--shape=64,64", "--tile=64,64"});
  ASSERT_EQ(d.code, 0) << d.err;  // --op defaults to copy.
}

TEST(CompilerCliCol2imTest, SameWindowFlagsBothForms) {
  const std::vector<std::string> col2im = {"--op=col2im",  "--dtype=f16", "--shape=32,224,224,3",
                                           "--kernel=7",   "--stride=2",  "--pad=3",
                                           "--tile=2,224", "--target=sm_90a"};
  Result staged = RunCli(col2im);
  ASSERT_EQ(staged.code, 0) << staged.err;
  EXPECT_THAT(staged.out, HasSubstr("path        simt_col2im (staged form)"));
  EXPECT_THAT(staged.out, HasSubstr("order       kh ascending, then kw"));
  Result direct = RunCli(With(With(col2im, "--through_shared=false"), "--emit=ptx"));
  ASSERT_EQ(direct.code, 0) << direct.err;
  EXPECT_THAT(direct.out, HasSubstr(".entry tt_col2im_direct("));
  Result u8 = RunCli(With(col2im, "--dtype=u8"));
  EXPECT_EQ(u8.code, 2);
  EXPECT_THAT(u8.err, HasSubstr("accepted are f32, f16, bf16"));
}

}  // namespace
}  // namespace tiletune

#include "compiler/compiler_cli.h"

#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

using ::testing::HasSubstr;

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

const std::vector<std::string> kValid = {"--op=copy", "--dtype=f16", "--shape=8192,8192",
                                         "--tile=128,128", "--target=sm_90a"};

std::vector<std::string> With(std::vector<std::string> args, const std::string& flag) {
  // Replaces a flag of the same name, or appends.
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

TEST(CompilerCliTest, PlanShowsPathAndDecisions) {
  Result r = RunCli(With(With(kValid, "--prefer_instruction=tma"), "--eviction_policy=evict_first"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("path        tma"));
  EXPECT_THAT(r.out, HasSubstr("l2 policy   evict_first"));
  EXPECT_THAT(r.out, HasSubstr("path tma (preferred)"));
  EXPECT_TRUE(r.err.empty());
}

TEST(CompilerCliTest, EmitsCudaAndPtx) {
  Result cuda = RunCli(With(kValid, "--emit=cuda"));
  ASSERT_EQ(cuda.code, 0) << cuda.err;
  EXPECT_THAT(cuda.out, HasSubstr("extern \"C\" __global__ void"));
  Result ptx = RunCli(With(With(kValid, "--emit=ptx"), "--prefer_instruction=tma"));
  ASSERT_EQ(ptx.code, 0) << ptx.err;
  EXPECT_THAT(ptx.out, HasSubstr(".target sm_90a"));
  EXPECT_THAT(ptx.out, HasSubstr("cp.async.bulk.tensor.2d"));
  Result sm80 = RunCli(With(With(kValid, "--emit=ptx"), "--target=sm_80"));
  ASSERT_EQ(sm80.code, 0) << sm80.err;
  EXPECT_THAT(sm80.out, HasSubstr("cp.async.cg.shared.global"));
}

TEST(CompilerCliTest, AutoFallbackIsLoggedAndExplicitFailureIsAnError) {
  Result fallback = RunCli(With(With(kValid, "--target=sm_80"), "--annotations=prefer_instruction=tma,fallback=auto"));
  ASSERT_EQ(fallback.code, 0) << fallback.err;
  EXPECT_THAT(fallback.out, HasSubstr("tma rejected: sm_80 has no TMA (sm_90+); falling back"));
  EXPECT_THAT(fallback.out, HasSubstr("path        cp_async"));
  Result strict = RunCli(With(With(kValid, "--target=sm_80"), "--prefer_instruction=tma"));
  EXPECT_EQ(strict.code, 2);
  EXPECT_THAT(strict.err, HasSubstr("prefer_instruction=tma cannot be honoured"));
  EXPECT_THAT(strict.err, HasSubstr("sm_80 has no TMA"));
}

struct BadInput {
  // Flags set (replacing a flag of the same name) on top of kValid.
  std::vector<std::string> changes;
  std::string message;
  // Arguments appended verbatim after the changes.
  std::vector<std::string> extra = {};
};

TEST(CompilerCliTest, BadInputsGiveOneClearLineAndExitCode2) {
  std::vector<BadInput> cases = {
      {{"--op=gemm"}, "--op=gemm: accepted are copy, im2col"},
      {{"--dtype=f12"}, "unknown dtype 'f12'"},
      {{"--dtype="}, "--dtype is empty"},
      {{"--shape=0,8"}, "'0' is not an integer from 1"},
      {{"--shape=8,-4"}, "'-4' is not an integer"},
      {{"--shape=a,b"}, "'a' is not an integer"},
      {{"--shape=1,2,3,4,5,6"}, "give 1 to 5 comma-separated integers"},
      {{"--shape=8192,,8"}, "'' is not an integer"},
      {{"--tile=0,128"}, "--tile=0,128"},
      {{"--tile=1,2,3"}, "has rank 3 but the copy [67108864] has rank 1"},
      {{"--target=sm_91"}, "unknown target 'sm_91'"},
      {{"--target=gfx90a"}, "accepted are sm_70"},
      {{"--emit=sass"}, "--emit=sass: accepted are plan, cuda, ptx"},
      {{"--threads=48"}, "threads=48: accepted are multiples of 32"},
      {{"--threads=2048"}, "--threads=2048: expected an integer from 32 to 1024"},
      {{"--stages=0"}, "--stages=0: expected an integer from 1 to 8"},
      {{"--stages=9"}, "--stages=9"},
      {{"--ctas_per_sm=-1"}, "--ctas_per_sm=-1"},
      {{"--ctas_per_sm=16", "--threads=256"}, "exceeds the 2048 threads"},
      {{"--through_shared=maybe"}, "--through_shared=maybe: accepted are true and false"},
      {{"--coalesced_width=3"}, "accepted are 1, 2, 4, 8, 16"},
      {{"--coalesced_width=16", "--prefer_instruction=sync"}, "coalesced_width=16 does not divide"},
      {{"--disable_tma=yes"}, "--disable_tma=yes: accepted are true and false"},
      {{"--eviction_policy=evict_later"}, "unknown eviction_policy 'evict_later'"},
      {{"--prefer_instruction=wgmma"}, "unknown prefer_instruction 'wgmma'"},
      {{"--prefer_instruction=tma", "--disable_tma"}, "conflicts with disable_tma"},
      {{"--prefer_instruction=cp_async", "--target=sm_75"}, "sm_75 has no cp.async"},
      {{"--prefer_instruction=tma", "--tile=128,100"}, "is not a multiple of 16 B"},
      {{"--prefer_instruction=tma", "--tile=512,128"}, "a TMA box dimension is at most 256"},
      {{"--prefer_instruction=sync", "--stages=2"}, "sync_simt is not pipelined"},
      {{"--prefer_instruction=sync", "--tile=256,512"}, "vector accesses per thread exceeds 64"},
      {{"--loop_layout=8x8", "--prefer_instruction=sync"}, "arranges 64 threads but the launch has 128"},
      {{"--loop_layout=8-16"}, "invalid loop_layout '8-16'"},
      {{"--annotations=swizzle=128B"}, "unknown copy annotation 'swizzle'"},
      {{"--annotations=fallback"}, "is not key=value"},
      {{"--annotations=fallback=maybe"}, "unknown fallback 'maybe'"},
      {{"--bogus=1"}, "unknown flag --bogus"},
      {{}, "unexpected argument 'positional'", {"positional"}},
      {{}, "given twice", {"--shape=4,4"}},
      {{}, "unexpected argument 'x'", {"--", "x"}},
      {{"--src_shape=100,100"}, "leaves buffer src"},
      {{"--dst_offset=1"}, "--dst_shape and --dst_offset need 2 values"},
      {{"--prefer_instruction=tma", "--stages=8", "--tile=256,256"}, "exceeds the"},
  };
  int count = 0;
  for (const BadInput& c : cases) {
    std::vector<std::string> args = kValid;
    for (const std::string& change : c.changes) args = With(args, change);
    args.insert(args.end(), c.extra.begin(), c.extra.end());
    std::string what = c.changes.empty() ? c.extra[0] : c.changes[0];
    Result r = RunCli(args);
    EXPECT_EQ(r.code, 2) << what << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.message)) << what;
    EXPECT_TRUE(r.out.empty()) << what;
    std::vector<std::string> lines = absl::StrSplit(r.err, '\n', absl::SkipEmpty());
    EXPECT_EQ(lines.size(), 1u) << r.err;
    EXPECT_EQ(r.err.rfind("compiler: ", 0), 0u) << r.err;
    ++count;
  }
  EXPECT_GE(count, 30);
}

TEST(CompilerCliTest, OneDimensionalTileFlattensContiguousCopies) {
  Result r = RunCli(With(With(kValid, "--tile=16384"), "--prefer_instruction=tma"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("path        bulk_1d"));
  EXPECT_THAT(r.out, HasSubstr("merged 8192 x 8192 (contiguous in src and dst)"));
  Result slice = RunCli(With(With(kValid, "--tile=16384"), "--src_shape=8192,8200"));
  EXPECT_EQ(slice.code, 2);
  EXPECT_THAT(slice.err, HasSubstr("tile [16384] has rank 1 but the copy [8192, 8192] has rank 2"));
}

// Issue 17's reproductions: sizes whose products wrap int64 are usage errors, not
// kernels of 0 or negative tiles or negative offsets.
TEST(CompilerCliTest, SizesThatOverflowAreRefused) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--op=copy", "--dtype=f16", "--shape=1099511627776,1099511627776", "--tile=128,128"},
           {"--op=copy", "--dtype=f16", "--shape=4294967297,4294967296", "--tile=1,2"},
           {"--op=copy", "--dtype=f16", "--shape=4,4", "--src_shape=1099511627776,1099511627776",
            "--src_offset=1099511627000,1099511627000", "--tile=4,4", "--emit=cuda"},
           {"--problem=copy:f16:17179869184,17179869184", "--tile=128,128"}}) {
    Result r = RunCli(args);
    EXPECT_EQ(r.code, 2) << args[2] << "\n" << r.out;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_THAT(r.err, HasSubstr("2^")) << r.err;
  }
}

TEST(CompilerCliTest, DuplicateAnnotationKeysAreRefused) {
  Result r = RunCli(With(kValid, "--annotations=fallback=error,fallback=auto"));
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("key 'fallback' is given twice ('error' and 'auto')"));
}

TEST(CompilerCliTest, ProblemSpecsDescribeRegions) {
  Result r = RunCli({"--problem=copy:f16:src=4096x4096[0:4096,48:4048]:dst=4096x4000",
                     "--tile=8,1024", "--threads=256"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("extents     [4096, 4000]"));
  Result odd = RunCli({"--problem=copy:u8:src=300x4097[0:300,3:4000]", "--tile=4,4096",
                       "--threads=256", "--through_shared=false", "--prefer_instruction=sync"});
  ASSERT_EQ(odd.code, 0) << odd.err;
  EXPECT_THAT(odd.out, HasSubstr("path        sync_simt (shifted form)"));
  Result both = RunCli({"--problem=copy:f16:64,64", "--dtype=f16", "--tile=64"});
  EXPECT_EQ(both.code, 2);
  EXPECT_THAT(both.err, HasSubstr("--problem describes the op; drop --dtype"));
  Result bad = RunCli({"--problem=copy:f16:src=64x64[0:65,0:64]", "--tile=64"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_THAT(bad.err, HasSubstr("slice '0:65' of dimension 0 is empty or outside the buffer"));
}

}  // namespace
}  // namespace tiletune

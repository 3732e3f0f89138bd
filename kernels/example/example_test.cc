// The tiletune_kernels rule end to end without a GPU, with NVRTC made unloadable: the baked
// set is linked in, its problems resolve exact to embedded kernels (and, on a newer GPU, to
// their PTX), the library never loads NVRTC for them, and
// the build-time tool refuses a corrupt database, a database for another architecture
// and a problem the database lacks, naming each.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "compiler/base/sha256.h"
#include "compiler/cuda/nvrtc_api.h"
#include "compiler/ops/copy/copy_op.h"
#include "compiler/ops/im2col/im2col_op.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/example/example_problems.h"
#include "kernels/library.h"
#include "kernels/prebuilt.h"

namespace tiletune {
namespace {

using ::testing::HasSubstr;

tuning::DeviceIdentity H200() {
  tuning::DeviceIdentity device;
  device.set_name("NVIDIA H200");
  device.set_cc_major(9);
  device.set_cc_minor(0);
  return device;
}

// NVRTC is unloadable in this whole process (and in the tool it runs): the baked problems
// must not need it. LoadNvrtc tries $TILETUNE_NVRTC_LIBRARY alone when it is set.
const bool kNvrtcUnloadable =
    setenv("TILETUNE_NVRTC_LIBRARY", "/nonexistent/libnvrtc.so.13", /*overwrite=*/1) == 0;

bool NvrtcIsMapped() {
  std::ifstream maps("/proc/self/maps");
  std::stringstream text;
  text << maps.rdbuf();
  return text.str().find("libnvrtc") != std::string::npos;
}

TEST(ExampleTest, NvrtcCannotBeLoadedHere) {
  ASSERT_TRUE(kNvrtcUnloadable);
  absl::StatusOr<const NvrtcApi*> nvrtc = LoadNvrtc();
  ASSERT_FALSE(nvrtc.ok());
  EXPECT_THAT(nvrtc.status().message(), HasSubstr("/nonexistent/libnvrtc.so.13"));
  EXPECT_FALSE(NvrtcIsMapped());
}

TEST(ExampleTest, TheRuleBakedTheProblemsItWasGiven) {
  const std::vector<const PrebuiltKernelSet*> sets = PrebuiltKernelSets();
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_STREQ(sets[0]->name, "//kernels/example:resnet_kernels");
  // Each kernel twice: a CUBIN for sm_90a, and PTX for compute_90 (newer GPUs).
  ASSERT_EQ(sets[0]->image_count, 6u);
  int cubins = 0, ptx = 0;
  for (size_t i = 0; i < sets[0]->image_count; ++i) {
    const PrebuiltKernelImage& image = sets[0]->images[i];
    EXPECT_GT(image.cubin_size, 1000u);
    // The kernel's source, which the library finds it by, and its digest.
    EXPECT_THAT(image.source, HasSubstr("extern \"C\" __global__"));
    EXPECT_EQ(Sha256Hex(image.source), image.source_sha256);
    // Its entry point, which the source defines.
    EXPECT_THAT(image.kernel_name, ::testing::StartsWith("tt_"));
    EXPECT_THAT(image.source, HasSubstr(std::string(image.kernel_name) + "("));
    const std::string bytes(reinterpret_cast<const char*>(image.cubin), image.cubin_size);
    if (std::string(image.arch) == "sm_90a") {
      ++cubins;
      // An ELF image, as NVRTC wrote it.
      EXPECT_EQ(bytes.substr(0, 4), "\x7f" "ELF");
    } else {
      ++ptx;
      EXPECT_STREQ(image.arch, "compute_90");
      EXPECT_THAT(bytes, HasSubstr(".target sm_90\n"));
      EXPECT_EQ(bytes.back(), '\0') << "PTX reaches the driver as a C string";
      // The same kernel as the CUBIN before it.
      EXPECT_STREQ(image.source_sha256, sets[0]->images[i - 1].source_sha256);
      EXPECT_STREQ(image.source, sets[0]->images[i - 1].source);
    }
  }
  EXPECT_EQ(cubins, 3);
  EXPECT_EQ(ptx, 3);
}

// On a newer GPU (sm_100) the baked records stand in for its own (an older architecture
// with the same data-movement features), the kernels come out the same, and their PTX
// serves them: still no NVRTC.
TEST(ExampleTest, ANewerGpuRunsTheBakedPtx) {
  LibraryOptions options;
  options.user_directory = "";
  options.jit = false;
  auto library = Library::Create(options);
  ASSERT_TRUE(library.ok()) << library.status();
  tuning::DeviceIdentity b200;
  b200.set_name("NVIDIA B200");
  b200.set_cc_major(10);
  b200.set_cc_minor(0);
  for (const TileOp* op : std::vector<const TileOp*>{new CopyOp(DenseCopy(8192, 8192)),
                                                     new Im2colOp(Layer1())}) {
    std::unique_ptr<const TileOp> owned(op);
    auto on_h200 = (*library)->Explain(*op, H200());
    auto on_b200 = (*library)->Explain(*op, b200);
    ASSERT_TRUE(on_h200.ok() && on_b200.ok());
    EXPECT_EQ(on_h200->prebuilt_arch, "sm_90a");
    EXPECT_EQ(on_b200->level, ResolutionLevel::kNearest) << on_b200->detail;
    EXPECT_THAT(on_b200->detail, HasSubstr("older architecture sm_90"));
    EXPECT_TRUE(on_b200->prebuilt) << on_b200->detail;
    EXPECT_EQ(on_b200->prebuilt_arch, "compute_90");
    EXPECT_EQ(on_b200->kernel_name, on_h200->kernel_name);
  }
  EXPECT_FALSE(NvrtcIsMapped());
}

TEST(ExampleTest, BakedProblemsResolveExactWithoutNvrtc) {
  ASSERT_FALSE(NvrtcIsMapped());
  LibraryOptions options;
  options.user_directory = "";
  options.jit = false;
  auto library = Library::Create(options);
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_THAT((*library)->database_origin(), HasSubstr("//kernels/example:resnet_kernels (baked)"));
  Buffer big = Buffer::RowMajor("src", DataType::kF16, Scope::kGlobal, {8192, 8192});
  Buffer sliced = Buffer::RowMajor("dst", DataType::kF16, Scope::kGlobal, {8192, 8186});
  const CopyOp slice{Region::Box(big, {0, 3}, {8192, 8186}), Region::Whole(sliced)};
  for (const TileOp* op : std::vector<const TileOp*>{new CopyOp(DenseCopy(8192, 8192)),
                                                     new Im2colOp(Layer1()), new CopyOp(slice)}) {
    std::unique_ptr<const TileOp> owned(op);
    auto explained = (*library)->Explain(*op, H200());
    ASSERT_TRUE(explained.ok()) << explained.status();
    EXPECT_EQ(explained->level, ResolutionLevel::kExact) << explained->detail;
    EXPECT_TRUE(explained->prebuilt) << explained->detail;
    EXPECT_EQ(explained->prebuilt_arch, "sm_90a");
  }
  // Another board of the architecture (an H100 for these H200 records): the same records
  // answer, at distance 0, so the same baked CUBINs serve it.
  tuning::DeviceIdentity h100 = H200();
  h100.set_name("NVIDIA H100 80GB HBM3");
  for (const TileOp* op : std::vector<const TileOp*>{new CopyOp(DenseCopy(8192, 8192)),
                                                     new Im2colOp(Layer1()), new CopyOp(slice)}) {
    std::unique_ptr<const TileOp> owned(op);
    auto on_h200 = (*library)->Explain(*op, H200());
    auto on_h100 = (*library)->Explain(*op, h100);
    ASSERT_TRUE(on_h200.ok() && on_h100.ok());
    EXPECT_EQ(on_h100->level, ResolutionLevel::kNearest) << on_h100->detail;
    EXPECT_THAT(on_h100->detail, HasSubstr("distance 0.00"));
    EXPECT_TRUE(on_h100->prebuilt) << on_h100->detail;
    EXPECT_EQ(on_h100->prebuilt_arch, "sm_90a");
    EXPECT_EQ(on_h100->kernel_name, on_h200->kernel_name);
  }
  // Off the baked list: resolved (nearest), but nothing baked serves it.
  auto other = (*library)->Explain(DenseCopy(1000, 1000), H200());
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_FALSE(other->prebuilt);
  // Nothing above needed the compiler.
  EXPECT_FALSE(NvrtcIsMapped());
}

// Runs the rule's tool as a build would; returns its exit code and stderr.
std::pair<int, std::string> Bake(const std::string& arguments) {
  const std::string err = absl::StrCat(::testing::TempDir(), "/bake.err");
  const std::string command =
      absl::StrCat("kernels/bake ", arguments, " --name=//t:k --output=", ::testing::TempDir(),
                   "/out.cc 2>", err);
  const int status = std::system(command.c_str());
  std::ifstream in(err);
  std::stringstream text;
  text << in.rdbuf();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

TEST(ExampleTest, TheToolRefusesBadDatabasesNamingTheFault) {
  const std::string corrupt = absl::StrCat(::testing::TempDir(), "/corrupt.txtpb");
  std::ofstream(corrupt) << "records { device { name: ";
  auto [code, err] = Bake(absl::StrCat("--database=", corrupt, " --targets=sm_90a"));
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("corrupt.txtpb"));

  std::tie(code, err) =
      Bake("--database=kernels/tuned/h200.txtpb --targets=sm_80 --problems=copy:f16:8192,8192");
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("is for sm_90a (NVIDIA H200), not one of the targets sm_80"));

  std::tie(code, err) =
      Bake("--database=kernels/tuned/h200.txtpb --targets=sm_90a --problems=copy:f16:1000,1000");
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("copy:f16:1000,1000 has no record in kernels/tuned/h200.txtpb"));

  std::tie(code, err) = Bake(
      "--database=kernels/tuned/h200.txtpb --targets=sm_90a --problems=copy:f16:8192,8192 "
      "--ptx=maybe");
  EXPECT_EQ(code, 2);
  EXPECT_THAT(err, HasSubstr("--ptx=maybe: accepted are true and false"));

  std::tie(code, err) = Bake("--database=kernels/tuned/h200.txtpb --targets=sm_91");
  EXPECT_EQ(code, 2);
  EXPECT_THAT(err, HasSubstr("sm_91"));

  // --help and --version exit 0 (--help used to exit 2).
  std::tie(code, err) = Bake("--help");
  EXPECT_EQ(code, 0);
  std::tie(code, err) = Bake("--version");
  EXPECT_EQ(code, 0);
}

// Issue 34: a newline in --name or --database became code in the generated source.
TEST(ExampleTest, NamesAndPathsCannotBreakOutOfTheGeneratedComment) {
  const std::string link = absl::StrCat(::testing::TempDir(), "/db\nint injected = 1;\\.txtpb");
  ASSERT_EQ(symlink(absl::StrCat(getenv("TEST_SRCDIR"), "/", getenv("TEST_WORKSPACE"),
                                 "/kernels/tuned/h200.txtpb").c_str(), link.c_str()), 0);
  const std::string out = absl::StrCat(::testing::TempDir(), "/escaped.cc");
  const std::string command = absl::StrCat(
      "env -u TILETUNE_NVRTC_LIBRARY kernels/bake '--database=", link, "' --targets=sm_90a --problems=copy:f16:8192,8192 ",
      "--output=", out, " '--name=x\nint also_injected = 2;\\'");
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  for (absl::string_view line : absl::StrSplit(text.str(), '\n')) {
    EXPECT_FALSE(absl::StartsWith(line, "int ")) << line;
  }
  EXPECT_THAT(text.str(), HasSubstr("for x?int also_injected = 2;? from"));
}

}  // namespace
}  // namespace tiletune

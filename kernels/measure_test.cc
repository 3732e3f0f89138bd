// What of the measurement harness runs without a GPU: compiles started in parallel and
// waited for, or released unwaited; the compile threads a caller stopped waiting for
// are joined once finished and at the end, never leaked.
#include "kernels/measure.h"

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

TEST(PendingCompilesTest, FinishedThreadsAreJoinedOnTheNextAdoptAndTheRestAtTheEnd) {
  std::atomic<bool> release{false};
  std::atomic<int> ran{0};
  {
    PendingCompiles pending;
    std::atomic<bool> first_done{false};
    pending.Adopt(std::thread([&] {
                    ++ran;
                    first_done = true;
                  }),
                  [&] { return first_done.load(); });
    pending.Adopt(std::thread([&] {
                    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
                    ++ran;
                  }),
                  [&] { return release.load(); });
    while (!first_done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    // The first has finished: adopting a third joins it; the second still runs.
    pending.Adopt(std::thread([&] { ++ran; }), [] { return false; });
    EXPECT_EQ(pending.size(), 2u);
    release = true;
  }  // Joins the second and third.
  EXPECT_EQ(ran.load(), 3);
}

// Compiles "fast" at once and "slow" only once released; counts what it compiled.
class GatedCompiler : public CompilationProvider {
 public:
  std::string Name() const override { return "gated"; }
  absl::StatusOr<Ptx> CompileToPtx(const CudaSource&, const CompileOptions&) override {
    return absl::UnimplementedError("no PTX");
  }
  absl::StatusOr<Cubin> CompileToCubin(const CudaSource& source,
                                       const CompileOptions& options) override {
    if (source.name == "slow") {
      while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (source.name == "bad") return absl::InvalidArgumentError("bad: syntax error");
    ++compiled;
    return Cubin{source.text, options.arch, ""};
  }
  std::atomic<bool> release{false};
  std::atomic<int> compiled{0};
};

std::vector<CudaSource> Sources(const std::vector<std::string>& names) {
  std::vector<CudaSource> sources;
  for (const std::string& name : names) sources.push_back({name, "text of " + name});
  return sources;
}

TEST(StartedCompilesTest, WaitGivesEveryResultInOrder) {
  GatedCompiler compiler;
  compiler.release = true;
  CompileOptions options;
  options.arch = "sm_90a";
  StartedCompiles compiles(compiler, Sources({"a", "bad", "slow"}), options);
  std::vector<absl::StatusOr<Cubin>> cubins = compiles.Wait();
  ASSERT_EQ(cubins.size(), 3u);
  ASSERT_TRUE(cubins[0].ok());
  EXPECT_EQ(cubins[0]->bytes, "text of a");
  EXPECT_EQ(cubins[0]->arch, "sm_90a");
  EXPECT_TRUE(absl::IsInvalidArgument(cubins[1].status()));
  ASSERT_TRUE(cubins[2].ok());
  EXPECT_EQ(cubins[2]->bytes, "text of slow");
  for (double ms : compiles.in_ms()) EXPECT_GT(ms, 0);
}

TEST(StartedCompilesTest, ReleaseHandsWhatStillCompilesToPendingWhichFinishesIt) {
  GatedCompiler compiler;
  std::atomic<bool> stop{false};  // before `pending`, whose threads read it until joined
  PendingCompiles pending;
  {
    StartedCompiles compiles(compiler, Sources({"fast", "slow"}), CompileOptions{});
    while (compiler.compiled < 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_FALSE(compiles.AllIn());
    EXPECT_EQ(compiles.in_ms()[1], 0);
    compiles.Release(pending);
  }  // Gone unwaited: the slow compile's thread is the pending one's now (the fast one's
     // was joined as the slow one was adopted).
  EXPECT_EQ(pending.size(), 1u);
  compiler.release = true;
  while (compiler.compiled < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // It finished into the compiler; adopting another joins both.
  pending.Adopt(std::thread([&] {
                  while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
                }),
                [&] { return stop.load(); });
  EXPECT_EQ(pending.size(), 1u);
  stop = true;
}

TEST(StartedCompilesTest, AllInOnceEveryCompileIs) {
  GatedCompiler compiler;
  StartedCompiles compiles(compiler, Sources({"a", "slow"}), CompileOptions{});
  EXPECT_FALSE(compiles.AllIn());
  compiler.release = true;
  while (!compiles.AllIn()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(compiles.Wait().size(), 2u);
}

TEST(StartedCompilesTest, CompileAllKeepsTheSourcesOrder) {
  GatedCompiler compiler;
  compiler.release = true;
  std::vector<absl::StatusOr<Cubin>> cubins =
      CompileAll(compiler, Sources({"x", "bad", "y", "z"}), "sm_80", 2);
  ASSERT_EQ(cubins.size(), 4u);
  EXPECT_EQ(cubins[0]->bytes, "text of x");
  EXPECT_FALSE(cubins[1].ok());
  EXPECT_EQ(cubins[3]->bytes, "text of z");
  EXPECT_EQ(cubins[3]->arch, "sm_80");
  EXPECT_TRUE(CompileAll(compiler, {}, "sm_80", 0).empty());
}

}  // namespace
}  // namespace tiletune

// What of the measurement harness runs without a GPU: the work queue that runs background
// jobs on a fixed set of threads, and compiles posted to it and waited for (or left to
// finish after their waiter is gone).
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

TEST(WorkQueueTest, RunsEveryJobOnItsWorkersAndDropsWhatIsQueuedAtTheEnd) {
  std::atomic<int> ran{0};
  {
    WorkQueue work(2);
    EXPECT_EQ(work.threads(), 2);
    for (int i = 0; i < 50; ++i) work.Post([&] { ++ran; });
    while (ran < 50) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(ran.load(), 50);
  // At the end, running jobs finish and queued ones are dropped.
  std::atomic<bool> release{false};
  std::atomic<int> started{0}, dropped_ran{0};
  std::thread releaser;
  {
    WorkQueue work(1);
    work.Post([&] {
      ++started;
      while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
    work.Post([&] { ++dropped_ran; });
    while (started < 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    releaser = std::thread([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      release = true;
    });
  }  // Waits for the running job, which the releaser lets finish.
  releaser.join();
  EXPECT_EQ(dropped_ran.load(), 0);
  EXPECT_TRUE(release.load());
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
  WorkQueue work(2);
  StartedCompiles compiles(work, compiler, Sources({"a", "bad", "slow"}), options);
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

TEST(StartedCompilesTest, AllInOnceEveryCompileIsAndTheResultsOutliveTheWaiter) {
  GatedCompiler compiler;
  WorkQueue work(1);
  {
    StartedCompiles compiles(work, compiler, Sources({"a", "slow", "b"}), CompileOptions{});
    while (compiler.compiled < 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_FALSE(compiles.AllIn());
    EXPECT_GT(compiles.in_ms()[0], 0);
    EXPECT_EQ(compiles.in_ms()[1], 0);
  }  // Gone unwaited: the queue still compiles the rest into the compiler.
  compiler.release = true;
  while (compiler.compiled < 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  StartedCompiles again(work, compiler, Sources({"c"}), CompileOptions{});
  EXPECT_EQ(again.Wait().size(), 1u);
  EXPECT_TRUE(again.AllIn());
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

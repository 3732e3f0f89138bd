#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "compiler/backend/cuda/cuda_codegens.h"
#include "compiler/backend/registry.h"
#include "compiler/backend/tuned_resolver.h"
#include "compiler/cuda/kernel_digest.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/ops/copy/copy_lowering.h"
#include "compiler/ops/copy/copy_op.h"
#include "compiler/ops/im2col/im2col_lowering.h"
#include "compiler/ops/im2col/im2col_op.h"
#include "compiler/ops/registry.h"
#include "compiler/tuning_db/tuning_db.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using ::testing::Not;

class FakeCodegen : public DeviceCodegen {
 public:
  FakeCodegen(std::string name, int min_arch) : name_(std::move(name)), min_arch_(min_arch) {}
  std::string name() const override { return name_; }
  bool SupportsTarget(const Target& target) const override { return target.arch() >= min_arch_; }
  absl::StatusOr<BuiltKernel> BuildWithoutCompile(const CodegenRequest&) const override {
    return absl::UnimplementedError("fake");
  }
  absl::StatusOr<BuiltKernel> Build(const CodegenRequest&, CompilationProvider&) const override {
    return absl::UnimplementedError("fake");
  }

 private:
  std::string name_;
  int min_arch_;
};

Target T(const char* arch) { return *Target::Parse(arch); }

TEST(RegistryTest, DuplicateNamesNeedOverride) {
  DeviceCodegenRegistry registry;
  ASSERT_TRUE(registry.Register("cuda", std::make_shared<FakeCodegen>("a", 70)).ok());
  absl::Status again = registry.Register("cuda", std::make_shared<FakeCodegen>("a", 90));
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(again.message(), HasSubstr("override=true"));
  // Override replaces in place: the new predicate applies.
  ASSERT_TRUE(registry.Register("cuda", std::make_shared<FakeCodegen>("a", 90), true).ok());
  EXPECT_THAT(*registry.AllowedForTarget(T("sm_80")), ElementsAre());
  EXPECT_THAT(*registry.AllowedForTarget(T("sm_90a")), ElementsAre("a"));
  EXPECT_FALSE(registry.Register("cuda", nullptr).ok());
}

TEST(RegistryTest, ResolveTakesTheFirstMatchAndListsRegisteredOnFailure) {
  DeviceCodegenRegistry registry;
  ASSERT_TRUE(registry.Register("cuda", std::make_shared<FakeCodegen>("new", 90)).ok());
  ASSERT_TRUE(registry.Register("cuda", std::make_shared<FakeCodegen>("old", 70)).ok());
  EXPECT_EQ((*registry.Resolve(T("sm_90a")))->name(), "new");
  EXPECT_EQ((*registry.Resolve(T("sm_80")))->name(), "old");
  EXPECT_THAT(*registry.AllowedForTarget(T("sm_90a")), ElementsAre("new", "old"));
  DeviceCodegenRegistry narrow;
  ASSERT_TRUE(narrow.Register("cuda", std::make_shared<FakeCodegen>("hopper_only", 90)).ok());
  auto none = narrow.Resolve(T("sm_80"));
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(none.status().message(), HasSubstr("no device codegen supports cuda -arch=sm_80"));
  EXPECT_THAT(none.status().message(), HasSubstr("hopper_only (cuda)"));
  EXPECT_EQ(narrow.Get("missing").status().code(), absl::StatusCode::kNotFound);
}

TEST(RegistryTest, LazyLoaderRunsOnceUnderConcurrency) {
  DeviceCodegenRegistry registry;
  std::atomic<int> calls{0};
  ASSERT_TRUE(registry
                  .RegisterLazy("cuda",
                                [&]() -> absl::StatusOr<std::vector<std::shared_ptr<const DeviceCodegen>>> {
                                  ++calls;
                                  std::this_thread::sleep_for(std::chrono::milliseconds(20));
                                  return BuiltinCudaCodegens(BuiltinTileOps());
                                })
                  .ok());
  EXPECT_EQ(calls, 0);  // Nothing runs at registration.
  std::vector<std::thread> threads;
  std::atomic<int> resolved{0};
  for (int i = 0; i < 16; ++i) {
    threads.emplace_back([&] {
      auto codegen = registry.Resolve(T("sm_90a"));
      if (codegen.ok() && (*codegen)->name() == "cuda.tma") ++resolved;
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(registry.LoaderRuns("cuda"), 1);
  EXPECT_EQ(resolved, 16);
  EXPECT_EQ(registry.RegisterLazy("cuda", [] { return BuiltinCudaCodegens(BuiltinTileOps()); }).code(),
            absl::StatusCode::kAlreadyExists);
}

TEST(RegistryTest, LazyLoaderFailureIsReportedEveryTime) {
  DeviceCodegenRegistry registry;
  int calls = 0;
  ASSERT_TRUE(registry
                  .RegisterLazy("rocm",
                                [&]() -> absl::StatusOr<std::vector<std::shared_ptr<const DeviceCodegen>>> {
                                  ++calls;
                                  return absl::UnavailableError("libamdhip64.so not found");
                                })
                  .ok());
  ASSERT_TRUE(registry.Register("cuda", std::make_shared<FakeCodegen>("c", 70)).ok());
  // Another kind's query does not trigger it.
  EXPECT_TRUE(registry.Resolve(T("sm_80")).ok());
  EXPECT_EQ(calls, 0);

  DeviceCodegenRegistry failing;
  ASSERT_TRUE(failing
                  .RegisterLazy("cuda",
                                [&]() -> absl::StatusOr<std::vector<std::shared_ptr<const DeviceCodegen>>> {
                                  ++calls;
                                  return absl::UnavailableError("plugin.so not found");
                                })
                  .ok());
  for (int i = 0; i < 3; ++i) {
    auto resolved = failing.Resolve(T("sm_90a"));
    EXPECT_EQ(resolved.status().code(), absl::StatusCode::kUnavailable);
    EXPECT_THAT(resolved.status().message(),
                HasSubstr("loading device codegens for kind 'cuda' failed: plugin.so not found"));
  }
  EXPECT_EQ(calls, 1);
}

TEST(CudaCodegensTest, PredicatesCoverTheFamilies) {
  DeviceCodegenRegistry registry;
  ASSERT_TRUE(RegisterBuiltinCudaCodegens(registry, BuiltinTileOps()).ok());
  struct Case {
    const char* arch;
    const char* codegen;
  };
  for (const Case& c :
       {Case{"sm_70", "cuda.simt"}, Case{"sm_75", "cuda.simt"}, Case{"sm_80", "cuda.cp_async"},
        Case{"sm_86", "cuda.cp_async"}, Case{"sm_87", "cuda.cp_async"},
        Case{"sm_88", "cuda.cp_async"}, Case{"sm_89", "cuda.cp_async"},
        Case{"sm_90", "cuda.tma"}, Case{"sm_90a", "cuda.tma"}, Case{"sm_100a", "cuda.tma"},
        Case{"sm_103a", "cuda.tma"}, Case{"sm_110", "cuda.tma"}, Case{"sm_120", "cuda.tma"},
        Case{"sm_121", "cuda.tma"}}) {
    auto codegen = registry.Resolve(T(c.arch));
    ASSERT_TRUE(codegen.ok()) << c.arch;
    EXPECT_EQ((*codegen)->name(), c.codegen) << c.arch;
  }
  // Every architecture tiletune knows resolves (issue 38: sm_120 did not).
  for (const std::string& arch : Target::KnownArchs()) {
    EXPECT_TRUE(registry.Resolve(T(arch.c_str())).ok()) << arch;
  }
}

TEST(CudaCodegensTest, BuildWithoutCompileEmitsTheLoweredKernelOfAnyOperator) {
  auto codegens = BuiltinCudaCodegens(BuiltinTileOps());
  Buffer b = Buffer::RowMajor("x", DataType::kF16, Scope::kGlobal, {256, 256});
  CodegenRequest request{std::make_shared<CopyOp>(Region::Whole(b), Region::Whole(b)), {},
                         T("sm_90a")};
  request.launch.tile = {32, 64};
  request.launch.stages = 2;
  request.launch.threads = 32;
  auto built = codegens[0]->BuildWithoutCompile(request);
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_EQ(built->lowered->path_name, "tma");
  EXPECT_EQ(built->lowered->instruction, Instruction::kTma);
  EXPECT_THAT(built->source.text, HasSubstr("tt_copy_tma"));
  EXPECT_FALSE(built->cubin.has_value());
  // The Ampere codegen refuses a target outside its family.
  EXPECT_FALSE(codegens[1]->BuildWithoutCompile(request).ok());
  // On its own family it builds the same op, but never a TMA path.
  request.target = T("sm_80");
  auto ampere = codegens[1]->BuildWithoutCompile(request);
  ASSERT_TRUE(ampere.ok()) << ampere.status();
  EXPECT_EQ(ampere->lowered->path_name, "cp_async");
  // im2col through the same interface.
  Im2colGeometry g;
  g.n = 2;
  g.h = g.w = 8;
  g.c = 16;
  g.kh = g.kw = 3;
  g.ph = g.pw = 1;
  CodegenRequest im2col{std::make_shared<Im2colOp>(Im2colOp::Dense(DataType::kF16, g)), {},
                        T("sm_80")};
  im2col.launch.tile = {64, 16};
  auto simt = codegens[1]->BuildWithoutCompile(im2col);
  ASSERT_TRUE(simt.ok()) << simt.status();
  EXPECT_EQ(simt->lowered->path_name, "simt_im2col");
  EXPECT_EQ(simt->lowered->form_name, "row");
  EXPECT_THAT(simt->source.text, HasSubstr("tt_im2col_simt_im2col"));
}

tuning::DeviceIdentity H200() {
  tuning::DeviceIdentity device;
  device.set_name("NVIDIA H200");
  device.set_cc_major(9);
  device.set_cc_minor(0);
  return device;
}

CopyOp Op(std::vector<int64_t> shape) {
  Buffer src = Buffer::RowMajor("src", DataType::kF16, Scope::kGlobal, shape);
  Buffer dst = Buffer::RowMajor("dst", DataType::kF16, Scope::kGlobal, shape);
  return CopyOp{Region::Whole(src), Region::Whole(dst)};
}

tuning::TuningRecord Record(const tuning::DeviceIdentity& device, const CopyOp& op,
                              const std::string& instruction, std::vector<int64_t> tile,
                              int threads, int stages) {
  tuning::TuningRecord record;
  *record.mutable_device() = device;
  *record.mutable_problem() = *BuiltinTileOps().Find("copy").value()->ToProblem(op);
  tuning::Variant* v = record.mutable_winner();
  v->mutable_hints()->set_prefer_instruction(instruction);
  for (int64_t t : tile) v->mutable_lowering()->add_tile(t);
  v->mutable_lowering()->set_threads(threads);
  v->mutable_lowering()->set_stages(stages);
  v->mutable_lowering()->set_through_shared(true);
  v->mutable_lowering()->set_path(instruction == "tma" ? "tma" : "cp_async");
  record.mutable_winner_statistics()->set_median_us(10);
  record.mutable_winner_statistics()->set_sample_count(5);
  return record;
}

// An H200 record of the problem `spec` names (any operator's spec syntax), its winner
// `path`'s `form` at `tile` and `threads`; a test sets the hints it needs on the winner.
tuning::TuningRecord SpecRecord(const std::string& spec, const std::string& path,
                                const std::string& form, std::vector<int64_t> tile,
                                int threads) {
  std::unique_ptr<TileOp> op = *BuiltinTileOps().ParseSpec(spec);
  tuning::TuningRecord record;
  *record.mutable_device() = H200();
  *record.mutable_problem() = *(*BuiltinTileOps().For(*op))->ToProblem(*op);
  tuning::Variant* v = record.mutable_winner();
  v->mutable_lowering()->set_path(path);
  v->mutable_lowering()->set_form(form);
  for (int64_t t : tile) v->mutable_lowering()->add_tile(t);
  v->mutable_lowering()->set_threads(threads);
  record.mutable_winner_statistics()->set_median_us(10);
  record.mutable_winner_statistics()->set_sample_count(5);
  return record;
}

class TunedResolverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(RegisterBuiltinCudaCodegens(registry_, BuiltinTileOps()).ok());
  }
  std::unique_ptr<TunedResolver> Make(std::vector<tuning::TuningRecord> records) {
    tuning::TuningDatabase db;
    for (auto& r : records) *db.add_records() = r;
    TunedResolver::Options options;
    options.registry = &registry_;
    options.ops = &BuiltinTileOps();
    options.databases = {db};
    return std::move(TunedResolver::Create(std::move(options))).value();
  }
  DeviceCodegenRegistry registry_;
};

TEST_F(TunedResolverTest, ExactRecordWins) {
  auto resolver = Make({Record(H200(), Op({4096, 4096}), "tma", {64, 128}, 32, 3)});
  auto r = resolver->Resolve(H200(), Op({4096, 4096}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->level, ResolutionLevel::kExact);
  EXPECT_EQ(r->codegen->name(), "cuda.tma");
  EXPECT_THAT(r->request.launch.tile, ElementsAre(64, 128));
  EXPECT_EQ(*r->request.op->hints.prefer_instruction, Instruction::kTma);
  EXPECT_THAT(r->detail, HasSubstr("exact: record"));
}

TEST_F(TunedResolverTest, NearestProblemOnTheSameArchitecture) {
  tuning::DeviceIdentity other_board = H200();
  other_board.set_name("NVIDIA H100 80GB HBM3");  // Same sm_90: usable at level 2.
  auto resolver = Make({Record(other_board, Op({1024, 1024}), "cp_async", {32, 64}, 128, 2),
                        Record(other_board, Op({8192, 8192}), "tma", {64, 128}, 32, 3)});
  auto r = resolver->Resolve(H200(), Op({6000, 8000}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->level, ResolutionLevel::kNearest);
  EXPECT_THAT(r->request.launch.tile, ElementsAre(64, 128));  // The 8192^2 record is nearer.
  EXPECT_THAT(r->detail, HasSubstr("no exact record"));
}

// A record for a copy of `op` whose winner is a direct SIMT launch of `tile` (lowers for
// any copy of the same merged rank): the resolver's choice shows in the tile it returns.
tuning::TuningRecord SimtRecord(const CopyOp& op, std::vector<int64_t> tile, int threads) {
  tuning::TuningRecord record = Record(H200(), op, "sync", std::move(tile), threads, 1);
  record.mutable_winner()->mutable_lowering()->set_through_shared(false);
  record.mutable_winner()->mutable_lowering()->set_path("sync_simt");
  return record;
}

CopyOp Slice(DataType dtype, std::vector<int64_t> buffer, std::vector<int64_t> offsets,
             std::vector<int64_t> extents) {
  Buffer src = Buffer::RowMajor("src", dtype, Scope::kGlobal, buffer);
  Buffer dst = Buffer::RowMajor("dst", dtype, Scope::kGlobal, extents);
  return CopyOp{Region::Box(src, offsets, extents), Region::Whole(dst)};
}

// Transfer follows what decides speed, not the raw shape (issue 13): an unseen odd-pitch
// slice takes the record of another odd-pitch slice over a same-sized aligned one; a small
// (launch-bound) copy takes the small record; a dense tensor of another shape takes the
// dense record of similar size, whatever its rank.
TEST_F(TunedResolverTest, NearestRecordsAreChosenByTheFeaturesThatDecideSpeed) {
  const CopyOp aligned = Slice(DataType::kF16, {8192, 8192}, {0, 0}, {8192, 8000});
  const CopyOp odd = Slice(DataType::kF16, {8192, 8192}, {0, 3}, {8192, 8001});
  const CopyOp small = Op({64, 512});
  const CopyOp dense = Op({16384, 16384});
  auto resolver = Make({SimtRecord(aligned, {8, 1000}, 256), SimtRecord(odd, {4, 2048}, 128),
                        SimtRecord(small, {4096}, 64), SimtRecord(dense, {8192}, 512)});
  auto pick = [&](const CopyOp& op) {
    auto r = resolver->Resolve(H200(), op);
    EXPECT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->level, ResolutionLevel::kNearest) << r->detail;
    return r->request.launch.threads;
  };
  // Another odd-start slice of another size: the odd record (128 threads).
  EXPECT_EQ(pick(Slice(DataType::kF16, {6000, 7000}, {5, 1}, {5000, 6501})), 128);
  // An aligned slice: the aligned record (256).
  EXPECT_EQ(pick(Slice(DataType::kF16, {6000, 7000}, {5, 8}, {5000, 6400})), 256);
  // A small dense copy of another rank: the small record (64).
  EXPECT_EQ(pick(Op({8, 16, 256})), 64);
  // A large dense tensor of rank 3: the large dense record (512).
  EXPECT_EQ(pick(Op({64, 1024, 2048})), 512);
  auto r = resolver->Resolve(H200(), Op({8, 16, 256}));
  EXPECT_THAT(r->detail, HasSubstr("nearest usable of 4 record(s)"));
}

// A dtype of the same element size transfers (behind the op's own dtype at equal
// features); another size never does. A GPU of another name with the same compute
// capability gets the H200's records as nearest, never as exact.
TEST_F(TunedResolverTest, TransferCrossesDtypesOfOneSizeAndDeviceNamesOfOneArchitecture) {
  const CopyOp f16 = Slice(DataType::kF16, {4096, 4096}, {0, 0}, {4096, 4096});
  auto resolver = Make({SimtRecord(f16, {8, 1024}, 256)});
  auto bf16 = resolver->Resolve(H200(), Slice(DataType::kBF16, {4096, 4096}, {0, 0}, {4096, 4096}));
  ASSERT_TRUE(bf16.ok()) << bf16.status();
  EXPECT_EQ(bf16->level, ResolutionLevel::kNearest) << bf16->detail;
  EXPECT_EQ(bf16->request.launch.threads, 256);
  EXPECT_THAT(bf16->detail, HasSubstr("distance 0.50"));
  auto f32 = resolver->Resolve(H200(), Slice(DataType::kF32, {4096, 4096}, {0, 0}, {4096, 4096}));
  ASSERT_TRUE(f32.ok()) << f32.status();
  EXPECT_EQ(f32->level, ResolutionLevel::kHeuristic) << f32->detail;

  tuning::DeviceIdentity h100 = H200();
  h100.set_name("NVIDIA H100 80GB HBM3");
  auto other = resolver->Resolve(h100, f16);
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(other->level, ResolutionLevel::kNearest) << other->detail;
  EXPECT_THAT(other->detail, HasSubstr("no exact record"));
  EXPECT_THAT(other->detail, HasSubstr("distance 0.00"));
  // The same problem's record keeps its width on the other board, though a further record
  // moves wider vectors there: its tuning measured the wider ones on this very problem.
  tuning::TuningRecord narrow = SimtRecord(f16, {8, 1024}, 256);
  narrow.mutable_winner()->mutable_hints()->set_coalesced_width(4);
  narrow.mutable_winner()->mutable_lowering()->set_vector_bytes(8);
  const tuning::TuningRecord wide =
      SimtRecord(Slice(DataType::kF16, {2048, 8192}, {0, 0}, {2048, 8192}), {8, 1024}, 256);
  auto kept = Make({narrow, wide})->Resolve(h100, f16);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(kept->level, ResolutionLevel::kNearest) << kept->detail;
  EXPECT_EQ(kept->built.lowered->vector_bytes, 8) << kept->detail;
  EXPECT_THAT(kept->detail, HasSubstr("distance 0.00"));
}

// Alternatives for tuning on a miss: the exact record's variant first, then the nearest
// records' in rank order, then the heuristic, no kernel twice, at most max_count.
TEST_F(TunedResolverTest, AlternativesAreDistinctAndRankedExactNearestHeuristic) {
  const CopyOp target = Slice(DataType::kF16, {8192, 8192}, {0, 0}, {8192, 8000});
  const CopyOp near = Slice(DataType::kF16, {8000, 8192}, {0, 0}, {8000, 8000});
  const CopyOp far = Slice(DataType::kF16, {64, 512}, {0, 0}, {64, 500});
  auto resolver = Make({SimtRecord(target, {8, 1000}, 256), SimtRecord(near, {4, 2000}, 128),
                        SimtRecord(far, {2, 256}, 64),
                        // Same variant as `target`'s: no second kernel.
                        SimtRecord(Slice(DataType::kF16, {8192, 8192}, {0, 0}, {8000, 8000}),
                                   {8, 1000}, 256)});
  auto all = resolver->Alternatives(H200(), target, 10);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 4u);
  EXPECT_EQ((*all)[0].level, ResolutionLevel::kExact);
  EXPECT_EQ((*all)[0].request.launch.threads, 256);
  EXPECT_EQ((*all)[1].level, ResolutionLevel::kNearest);
  EXPECT_EQ((*all)[1].request.launch.threads, 128);
  EXPECT_EQ((*all)[2].request.launch.threads, 64);
  EXPECT_EQ((*all)[3].level, ResolutionLevel::kHeuristic);
  auto two = resolver->Alternatives(H200(), target, 2);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->size(), 2u);
  // No records at all: the heuristic alone.
  auto none = Make({})->Alternatives(H200(), target, 5);
  ASSERT_TRUE(none.ok());
  ASSERT_EQ(none->size(), 1u);
  EXPECT_EQ((*none)[0].level, ResolutionLevel::kHeuristic);
}

// A GPU newer than every record (sm_100) takes the records of the newest older
// architecture with the same data-movement features (sm_90: TMA, cp.async, L2 hints);
// sm_80 records never stand in for an sm_90 GPU, which has TMA they were not tuned with.
TEST_F(TunedResolverTest, ANewerArchitectureTakesAnOlderOneWithTheSameFeatures) {
  tuning::DeviceIdentity b200;
  b200.set_name("NVIDIA B200");
  b200.set_cc_major(10);
  b200.set_cc_minor(0);
  tuning::DeviceIdentity a100;
  a100.set_name("NVIDIA A100");
  a100.set_cc_major(8);
  a100.set_cc_minor(0);
  const CopyOp op = Op({4096, 4096});
  auto resolver = Make({SimtRecord(op, {8, 1024}, 256), Record(a100, op, "sync", {4, 512}, 64, 1)});
  auto newer = resolver->Resolve(b200, op);
  ASSERT_TRUE(newer.ok()) << newer.status();
  EXPECT_EQ(newer->level, ResolutionLevel::kNearest) << newer->detail;
  EXPECT_EQ(newer->request.launch.threads, 256);
  EXPECT_EQ(newer->request.target.ArchName(), "sm_100a");
  EXPECT_THAT(newer->detail, HasSubstr("tuned on the older architecture sm_90"));
  auto alternatives = resolver->Alternatives(b200, op, 4);
  ASSERT_TRUE(alternatives.ok()) << alternatives.status();
  EXPECT_EQ((*alternatives)[0].request.launch.threads, 256);
  EXPECT_THAT((*alternatives)[0].detail, HasSubstr("older architecture sm_90"));

  // An H100 with only the A100's record: the heuristic, not the record.
  auto only_a100 = Make({Record(a100, op, "sync", {4, 512}, 64, 1)});
  auto hopper = only_a100->Resolve(H200(), op);
  ASSERT_TRUE(hopper.ok()) << hopper.status();
  EXPECT_EQ(hopper->level, ResolutionLevel::kHeuristic) << hopper->detail;
  // The A100's own records still serve another sm_80 board.
  tuning::DeviceIdentity a30 = a100;
  a30.set_name("NVIDIA A30");
  auto ampere = only_a100->Resolve(a30, op);
  ASSERT_TRUE(ampere.ok()) << ampere.status();
  EXPECT_EQ(ampere->level, ResolutionLevel::kNearest) << ampere->detail;
  EXPECT_THAT(ampere->detail, Not(HasSubstr("older architecture")));
}

// A tile far wider than the problem's rows (a [*, 2048] tile over rows of 11 elements)
// shrinks to cover the rows, and its rows grow by what the width gave up.
TEST_F(TunedResolverTest, TransferredTilesWiderThanTheRowsAreFittedToThem) {
  auto resolver =
      Make({SimtRecord(Slice(DataType::kF32, {4096, 4096}, {0, 3}, {4096, 4000}), {8, 2048}, 256)});
  auto r = resolver->Resolve(H200(), Slice(DataType::kF32, {400000, 12}, {0, 1}, {400000, 11}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->level, ResolutionLevel::kNearest) << r->detail;
  EXPECT_THAT(r->request.launch.tile, ElementsAre(1024, 16));
  EXPECT_THAT(r->detail, HasSubstr("tile fitted to 1024x16"));
  // A tile that already fits is kept as tuned.
  auto wide = resolver->Resolve(H200(), Slice(DataType::kF32, {5000, 4000}, {0, 1}, {5000, 3000}));
  ASSERT_TRUE(wide.ok()) << wide.status();
  EXPECT_THAT(wide->request.launch.tile, ElementsAre(8, 2048));
}

// A tile of a few rows, each part of the record's long rows ([8, 1024] over rows of 8186),
// over a copy of rows shorter than its width but within 4x of it (a crop of 223 of 227 px):
// it covers the rows with a power of two and keeps its 8 rows a CTA, rather than taking
// [1, 37, 223] to keep its elements. Rows far shorter, or too few for the record's threads
// to each move a vector, fit as before.
TEST_F(TunedResolverTest, ATileOfPartRowsKeepsItsRowsOverShorterOnes) {
  auto resolver = Make(
      {SimtRecord(Slice(DataType::kBF16, {8192, 8192}, {0, 3}, {8192, 8186}), {8, 1024}, 256)});
  auto crop = resolver->Resolve(
      H200(), Slice(DataType::kBF16, {16, 64, 227, 227}, {0, 0, 2, 2}, {16, 64, 223, 223}));
  ASSERT_TRUE(crop.ok()) << crop.status();
  EXPECT_THAT(crop->request.launch.tile, ElementsAre(1, 8, 256)) << crop->detail;
  auto rows = resolver->Resolve(H200(), Slice(DataType::kBF16, {65536, 520}, {0, 3}, {65536, 480}));
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(rows->request.launch.tile, ElementsAre(8, 512)) << rows->detail;
  // Rows of 11: the tile takes as many rows as keep its elements.
  auto narrow = resolver->Resolve(H200(), Slice(DataType::kBF16, {400000, 12}, {0, 1}, {400000, 11}));
  ASSERT_TRUE(narrow.ok()) << narrow.status();
  EXPECT_THAT(narrow->request.launch.tile, ElementsAre(512, 16)) << narrow->detail;
  // 16-byte vectors: 4 rows of 400 bytes are 100 vectors for 256 threads.
  auto bytes = Make({SimtRecord(Slice(DataType::kU8, {16384, 4097}, {0, 0}, {16384, 4096}),
                                {4, 2048}, 256)});
  auto wide = bytes->Resolve(H200(), Slice(DataType::kU8, {100000, 512}, {0, 0}, {100000, 400}));
  ASSERT_TRUE(wide.ok()) << wide.status();
  EXPECT_THAT(wide->request.launch.tile, ElementsAre(16, 512)) << wide->detail;
}

// A thread layout tuned for a 2-D tile is not carried onto the 1-D tile it is fitted to
// (8x32 over one row would leave 7 of 8 warps without work): the lowering picks one.
TEST_F(TunedResolverTest, AFittedTileLeavesTheRecordsThreadLayoutBehind) {
  tuning::TuningRecord record =
      SimtRecord(Slice(DataType::kF16, {4096, 4096}, {0, 3}, {4096, 4000}), {8, 2048}, 256);
  record.mutable_winner()->mutable_hints()->set_loop_layout("8x32");
  auto resolver = Make({record});
  auto fitted = resolver->Resolve(H200(), Op({8, 1048579}));
  ASSERT_TRUE(fitted.ok()) << fitted.status();
  EXPECT_THAT(fitted->request.launch.tile, ElementsAre(16384));
  EXPECT_FALSE(fitted->request.op->hints.loop_layout.has_value());
  EXPECT_THAT(fitted->detail, HasSubstr("its thread layout left to the lowering"));
  // A tile used as tuned keeps its layout.
  auto kept = resolver->Resolve(H200(), Slice(DataType::kF16, {2048, 4096}, {0, 1}, {2048, 4001}));
  ASSERT_TRUE(kept.ok()) << kept.status();
  ASSERT_TRUE(kept->request.op->hints.loop_layout.has_value());
}

// A record names the kernel it timed by its digest: where today's kernel differs, the
// record still answers and the resolution says it is stale.
TEST_F(TunedResolverTest, ARecordOfAnotherKernelIsStale) {
  const CopyOp op = Op({512, 512});
  tuning::TuningRecord record = Record(H200(), op, "tma", {32, 64}, 32, 2);
  auto unnamed = Make({record})->Resolve(H200(), op);
  ASSERT_TRUE(unnamed.ok()) << unnamed.status();
  EXPECT_FALSE(unnamed->stale);  // no digest: nothing to compare
  record.mutable_winner()->set_source_sha256(KernelDigest(unnamed->built.source.text));
  auto current = Make({record})->Resolve(H200(), op);
  ASSERT_TRUE(current.ok()) << current.status();
  EXPECT_EQ(current->level, ResolutionLevel::kExact);
  EXPECT_FALSE(current->stale) << current->detail;
  record.mutable_winner()->set_source_sha256(std::string(64, 'a'));
  auto stale = Make({record})->Resolve(H200(), op);
  ASSERT_TRUE(stale.ok()) << stale.status();
  EXPECT_EQ(stale->level, ResolutionLevel::kExact);
  EXPECT_TRUE(stale->stale);
  EXPECT_THAT(stale->detail, HasSubstr("digest aaaaaaaaaaaa then"));
}

// A problem tuned again into a lower database (tuning on a miss writes to the user's
// folder, below the databases TILETUNE_DB lists) answers from there while the record above
// it is stale; a current record above still shadows it, and where every record is stale
// the highest one answers, stale.
TEST_F(TunedResolverTest, AStaleRecordGivesWayToACurrentOneBelowIt) {
  const CopyOp op = Op({512, 512});
  tuning::TuningRecord above = Record(H200(), op, "tma", {32, 64}, 32, 2);
  tuning::TuningRecord below = Record(H200(), op, "cp_async", {64, 64}, 128, 2);
  auto Stacked = [&](const tuning::TuningRecord& upper, const tuning::TuningRecord& lower) {
    tuning::TuningDatabase high, low;
    *high.add_records() = upper;
    *low.add_records() = lower;
    TunedResolver::Options options;
    options.registry = &registry_;
    options.ops = &BuiltinTileOps();
    options.databases = {high, low};
    options.origins = {"listed.txtpb", "user.txtpb"};
    return std::move(TunedResolver::Create(std::move(options))).value();
  };
  auto Digest = [&](const tuning::TuningRecord& record) {
    auto r = Make({record})->Resolve(H200(), op);
    EXPECT_TRUE(r.ok()) << r.status();
    return KernelDigest(r->built.source.text);
  };
  below.mutable_winner()->set_source_sha256(Digest(below));
  const std::string above_digest = Digest(above);
  above.mutable_winner()->set_source_sha256(std::string(64, 'a'));

  auto r = Stacked(above, below)->Resolve(H200(), op);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->level, ResolutionLevel::kExact);
  EXPECT_FALSE(r->stale) << r->detail;
  EXPECT_EQ(r->origin, "user.txtpb");
  EXPECT_THAT(r->request.launch.tile, ElementsAre(64, 64));
  EXPECT_THAT(r->detail, HasSubstr("below listed.txtpb whose record of this problem timed a "
                                   "kernel that has changed since"));
  auto alternatives = Stacked(above, below)->Alternatives(H200(), op, 1, 0);
  ASSERT_TRUE(alternatives.ok()) << alternatives.status();
  ASSERT_FALSE(alternatives->empty());
  EXPECT_THAT((*alternatives)[0].request.launch.tile, ElementsAre(64, 64));

  above.mutable_winner()->set_source_sha256(above_digest);
  auto current = Stacked(above, below)->Resolve(H200(), op);
  ASSERT_TRUE(current.ok()) << current.status();
  EXPECT_EQ(current->origin, "listed.txtpb");
  EXPECT_THAT(current->request.launch.tile, ElementsAre(32, 64));

  // A record above that no longer lowers (here: 33 threads) gives way too.
  tuning::TuningRecord broken = Record(H200(), op, "tma", {32, 64}, 33, 2);
  auto unlowered = Stacked(broken, below)->Resolve(H200(), op);
  ASSERT_TRUE(unlowered.ok()) << unlowered.status();
  EXPECT_EQ(unlowered->level, ResolutionLevel::kExact);
  EXPECT_EQ(unlowered->origin, "user.txtpb");
  EXPECT_THAT(unlowered->detail, HasSubstr("whose record of this problem does not lower"));

  above.mutable_winner()->set_source_sha256(std::string(64, 'a'));
  tuning::TuningRecord undigested = below;
  undigested.mutable_winner()->clear_source_sha256();
  below.mutable_winner()->set_source_sha256(std::string(64, 'b'));
  // Every record stale, or below it none known to be current: the highest answers, stale.
  for (const tuning::TuningRecord& lower : {below, undigested}) {
    auto both = Stacked(above, lower)->Resolve(H200(), op);
    ASSERT_TRUE(both.ok()) << both.status();
    EXPECT_TRUE(both->stale);
    EXPECT_EQ(both->origin, "listed.txtpb");
  }
}

// A record's simt_addressing names the kernel form it timed for its own problem: exact
// resolution keeps it; another problem's lowering chooses its own.
TEST_F(TunedResolverTest, AddressingStaysWithTheRecordsOwnProblem) {
  const CopyOp own = Slice(DataType::kF16, {4096, 4096}, {0, 3}, {4096, 4000});
  tuning::TuningRecord record = SimtRecord(own, {8, 1024}, 256);
  (*record.mutable_winner()->mutable_hints()->mutable_annotations())["simt_addressing"] = "per_slot";
  auto resolver = Make({record});
  auto exact = resolver->Resolve(H200(), own);
  ASSERT_TRUE(exact.ok()) << exact.status();
  EXPECT_EQ(exact->level, ResolutionLevel::kExact);
  EXPECT_EQ(exact->request.op->hints.annotations.at("simt_addressing"), "per_slot");
  const auto* lowered = dynamic_cast<const LoweredCopy*>(exact->built.lowered.get());
  ASSERT_NE(lowered, nullptr);
  EXPECT_EQ(lowered->addressing, SimtAddressing::kPerSlot);
  // A slice whose rows the record's tile does not divide (16-B vectors: no slot form).
  auto other = resolver->Resolve(H200(), Slice(DataType::kF16, {2048, 4096}, {0, 0}, {2048, 4000}));
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(other->level, ResolutionLevel::kNearest);
  EXPECT_EQ(other->request.op->hints.annotations.count("simt_addressing"), 0u);
  EXPECT_THAT(other->detail, HasSubstr("simt_addressing left to the lowering"));
  lowered = dynamic_cast<const LoweredCopy*>(other->built.lowered.get());
  ASSERT_NE(lowered, nullptr);
  EXPECT_EQ(lowered->addressing, SimtAddressing::kTileOrigin);
}

// A slice's 2-D tile transferred to a dense tensor (one merged dimension) is fitted to
// one dimension of as many elements, not used to tile the tensor's rows unmerged.
TEST_F(TunedResolverTest, TransferredTilesAreFittedToTheMergedRank) {
  auto resolver =
      Make({SimtRecord(Slice(DataType::kF16, {4096, 4096}, {0, 3}, {4096, 4000}), {8, 2048}, 256)});
  auto r = resolver->Resolve(H200(), Op({8, 1048579}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->level, ResolutionLevel::kNearest) << r->detail;
  EXPECT_THAT(r->request.launch.tile, ElementsAre(16384));
  EXPECT_EQ(r->request.launch.threads, 256);
  EXPECT_THAT(r->detail, HasSubstr("tile fitted to 16384"));
  // A tile of the right rank is used as stored.
  auto same = resolver->Resolve(H200(), Slice(DataType::kF16, {2048, 4096}, {0, 1}, {2048, 4001}));
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_THAT(same->request.launch.tile, ElementsAre(8, 2048));
}

// The vector width a record was tuned with stays with its problem: exact resolution keeps
// it, a transfer lets the new problem's alignments choose.
TEST_F(TunedResolverTest, TransferDropsTheRecordsVectorWidth) {
  const CopyOp odd = Slice(DataType::kF16, {4096, 4096}, {0, 1}, {4096, 4001});
  tuning::TuningRecord record = SimtRecord(odd, {8, 2048}, 256);
  record.mutable_winner()->mutable_hints()->set_coalesced_width(1);
  auto resolver = Make({record});
  auto exact = resolver->Resolve(H200(), odd);
  ASSERT_TRUE(exact.ok()) << exact.status();
  EXPECT_EQ(exact->level, ResolutionLevel::kExact);
  EXPECT_EQ(exact->request.op->hints.coalesced_width, 1);
  auto near = resolver->Resolve(H200(), Slice(DataType::kF16, {4096, 4096}, {0, 0}, {4096, 4000}));
  ASSERT_TRUE(near.ok()) << near.status();
  EXPECT_EQ(near->level, ResolutionLevel::kNearest);
  EXPECT_FALSE(near->request.op->hints.coalesced_width.has_value());
  // A problem whose own alignments allow no wider vector (an odd pitch again) keeps the
  // record's choice: plain 2-byte accesses, which the tuner preferred to the shifted form.
  auto other_odd =
      resolver->Resolve(H200(), Slice(DataType::kF16, {3000, 3001}, {0, 3}, {3000, 2990}));
  ASSERT_TRUE(other_odd.ok()) << other_odd.status();
  EXPECT_EQ(other_odd->level, ResolutionLevel::kNearest);
  EXPECT_EQ(other_odd->request.op->hints.coalesced_width, 1);
  EXPECT_EQ(other_odd->built.lowered->form_name, "") << other_odd->detail;
}

// A kernel that gathers its input element by element (col2im's planes form, PyTorch's
// fold layout) stores vectors only; a narrower width than its problem allowed was chosen
// for how its loads coalesce, and transfers. One its own image width forced gives way to
// the widest the new image's rows allow, not to vectors straddling them.
TEST_F(TunedResolverTest, AGatheringKernelKeepsTheWidthItChose) {
  auto planes_record = [](const std::string& spec, int width, std::vector<int64_t> tile) {
    tuning::TuningRecord record = SpecRecord(spec, "simt_col2im", "planes", tile, 128);
    record.mutable_winner()->mutable_hints()->set_prefer_instruction("sync");
    record.mutable_winner()->mutable_hints()->set_coalesced_width(width);
    return record;
  };
  auto resolve = [&](const tuning::TuningRecord& record, const std::string& spec) {
    auto r = Make({record})->Resolve(H200(), **BuiltinTileOps().ParseSpec(spec));
    EXPECT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->level, ResolutionLevel::kNearest) << r->detail;
    EXPECT_TRUE(r->built.lowered->gather_reads.has_value()) << r->detail;
    return *std::move(r);
  };
  // 56 f16 pixels a row allow 16-byte vectors; the record chose 8-byte ones.
  const tuning::TuningRecord chose =
      planes_record("col2im:f16:32,56,56,64:k=3:p=1:layout=nchw", 4, {36, 56});
  Resolution kept = resolve(chose, "col2im:f16:16,40,40,96:k=3:p=1:layout=nchw");
  EXPECT_EQ(kept.request.op->hints.coalesced_width, 4);
  EXPECT_EQ(kept.built.lowered->vector_bytes, 8);
  // A further record whose kernel would move wider vectors here does not take over from a
  // kernel summing gathered reads (NearestUsable): its narrower width was chosen.
  const tuning::TuningRecord wider =
      planes_record("col2im:f16:32,224,224,3:k=7:s=2:p=3:layout=nchw", 8, {4, 224});
  auto both = Make({chose, wider})
                  ->Resolve(H200(), **BuiltinTileOps().ParseSpec(
                                        "col2im:f16:16,40,40,96:k=3:p=1:layout=nchw"));
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_EQ(both->built.lowered->vector_bytes, 8) << both->detail;
  EXPECT_THAT(both->detail, HasSubstr("nearest usable of 2"));
  auto wider_alone = Make({wider})->Resolve(
      H200(), **BuiltinTileOps().ParseSpec("col2im:f16:16,40,40,96:k=3:p=1:layout=nchw"));
  ASSERT_TRUE(wider_alone.ok()) << wider_alone.status();
  EXPECT_GT(wider_alone->built.lowered->vector_bytes, 8) << "the test needs a wider record";
  // 14 f16 pixels (28 bytes) a row allow no wider than 4-byte vectors; 28 pixels allow 8.
  const tuning::TuningRecord forced =
      planes_record("col2im:f16:32,14,14,256:k=3:p=1:layout=nchw", 2, {76, 14});
  Resolution widened = resolve(forced, "col2im:f16:32,28,28,128:k=3:p=1:layout=nchw");
  EXPECT_EQ(widened.request.op->hints.coalesced_width, 4);
  EXPECT_EQ(widened.built.lowered->vector_bytes, 8);
  EXPECT_THAT(widened.detail, HasSubstr("coalesced_width=4 for this problem"));
  // 24 pixels (48 bytes) a row would allow 16-byte vectors: a summing kernel widens by one
  // doubling, to 8-byte ones.
  Resolution doubled = resolve(forced, "col2im:bf16:32,24,24,192:k=3:p=1:layout=nchw");
  EXPECT_EQ(doubled.request.op->hints.coalesced_width, 4) << doubled.detail;
  EXPECT_EQ(doubled.built.lowered->vector_bytes, 8) << doubled.detail;
  // A 3x3 fold sums up to 9 reads a pixel; patches that do not overlap read one: the width
  // chosen for the sums does not carry, and the lowering takes the widest. Windows that
  // still overlap keep it (a 4x4 stride-2 fold: up to 2x2 reads).
  Resolution patches = resolve(chose, "col2im:f16:16,224,224,3:k=16:s=16:layout=nchw");
  EXPECT_EQ(patches.request.op->hints.coalesced_width, std::nullopt) << patches.detail;
  EXPECT_EQ(patches.built.lowered->vector_bytes, 16);
  EXPECT_EQ(patches.built.lowered->gather_reads, 1);
  EXPECT_THAT(patches.detail, HasSubstr("coalesced_width left to the lowering"));
  Resolution up = resolve(chose, "col2im:f16:32,64,64,64:k=4:s=2:p=1:layout=nchw");
  EXPECT_EQ(up.request.op->hints.coalesced_width, 4);
  EXPECT_EQ(up.built.lowered->gather_reads, 4);
  // The other way, a patchify's choice carries to windows that read more a pixel (a 7x7
  // stride-2 fold: up to 4x4 reads).
  const tuning::TuningRecord patchify =
      planes_record("col2im:f16:32,224,224,3:k=16:s=16:layout=nchw", 4, {4, 224});
  Resolution stem = resolve(patchify, "col2im:f16:32,224,224,3:k=7:s=2:p=3:layout=nchw");
  EXPECT_EQ(stem.request.op->hints.coalesced_width, 4);
  EXPECT_EQ(stem.built.lowered->gather_reads, 16);
  // A kernel moving vectors both ways takes the widest the problem allows instead
  // (TransferDropsTheRecordsVectorWidth).
}

// batch_copy's two forms are two kernels: a regions problem takes a regions record even
// where a blocks record's sizes are nearer, one of its own element size first, else one of
// another size with its chunk's bytes; a blocks record only where no regions record is.
TEST_F(TunedResolverTest, ABatchCopyTakesARecordOfItsOwnForm) {
  const tuning::TuningRecord blocks = SpecRecord(
      "batch_copy:f16:128:16384:src=16384:dst=16384", "sync_simt", "blocks", {16384}, 128);
  const tuning::TuningRecord regions =
      SpecRecord("batch_copy:bf16:1200:8192:src=1200:dst=1200:regions", "sync_simt",
                 "regions", {2048}, 256);
  const tuning::TuningRecord u8_regions =
      SpecRecord("batch_copy:u8:1000:32768:src=1000:dst=1000:regions", "sync_simt", "regions",
                 {4096}, 128);
  const std::string spec = "batch_copy:f16:114:16384:src=114:dst=114:regions";
  auto r = Make({blocks, regions, u8_regions})
               ->Resolve(H200(), **BuiltinTileOps().ParseSpec(spec));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->level, ResolutionLevel::kNearest);
  EXPECT_EQ(r->built.lowered->form_name, "regions");
  EXPECT_EQ(r->request.launch.threads, 256) << r->detail;
  EXPECT_THAT(r->request.launch.tile, ElementsAre(2048)) << r->detail;
  // Without a 2-byte regions record, the u8 one answers with its 4 KiB chunks (2048
  // elements here), not the blocks record's one chunk an item.
  auto other_size =
      Make({blocks, u8_regions})->Resolve(H200(), **BuiltinTileOps().ParseSpec(spec));
  ASSERT_TRUE(other_size.ok()) << other_size.status();
  EXPECT_EQ(other_size->built.lowered->form_name, "regions");
  EXPECT_EQ(other_size->request.launch.threads, 128) << other_size->detail;
  EXPECT_THAT(other_size->request.launch.tile, ElementsAre(2048)) << other_size->detail;
  EXPECT_THAT(other_size->detail, HasSubstr("of this operator and architecture"));
  // With no regions record at all, the blocks record (its whole-item chunk kept whole).
  auto alone = Make({blocks})->Resolve(H200(), **BuiltinTileOps().ParseSpec(spec));
  ASSERT_TRUE(alone.ok()) << alone.status();
  EXPECT_EQ(alone->built.lowered->form_name, "regions");
  EXPECT_EQ(alone->request.launch.threads, 128) << alone->detail;
  EXPECT_THAT(alone->request.launch.tile, ElementsAre(16384)) << alone->detail;
  // And a blocks problem keeps the blocks record over a regions one of nearer sizes.
  auto b = Make({blocks, regions})
               ->Resolve(H200(), **BuiltinTileOps().ParseSpec(
                                     "batch_copy:bf16:1000:8192:src=1000:dst=1000"));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->built.lowered->form_name, "blocks");
  EXPECT_EQ(b->request.launch.threads, 128) << b->detail;
}

// A fold whose windows tile the NCHW image exactly takes a record of that geometry (its
// patches kernel, 8-byte vectors on 76-wide rows) over a planes record whose sizes are
// nearer and whose kernel moves 16-byte ones there: that record is of another
// TransferFamily, so it does not take over for its width.
TEST_F(TunedResolverTest, ExactPatchesGeometryTakesAPatchesRecord) {
  const tuning::TuningRecord planes = SpecRecord(
      "col2im:f16:32,64,64,64:k=4:s=2:p=1:layout=nchw", "simt_col2im", "planes", {32, 64}, 128);
  tuning::TuningRecord patches = SpecRecord("col2im:bf16:32,224,224,3:k=4:s=4:layout=nchw",
                                            "simt_col2im", "patches", {1, 56}, 256);
  (*patches.mutable_winner()->mutable_hints()->mutable_annotations())["planes_gather"] =
      "patches";
  auto resolver = Make({planes, patches});
  auto fold = resolver->Resolve(
      H200(), **BuiltinTileOps().ParseSpec("col2im:f16:32,76,76,16:k=4:s=4:layout=nchw"));
  ASSERT_TRUE(fold.ok()) << fold.status();
  EXPECT_EQ(fold->level, ResolutionLevel::kNearest);
  EXPECT_EQ(fold->built.lowered->form_name, "patches") << fold->detail;
  EXPECT_THAT(fold->detail, HasSubstr("nearest usable")) << fold->detail;
}

// A shared-gather record's tile halves in whole planes, then in bands of output rows (the
// operator's HalveTile): one plane of a 128x128 layer's 3x3 taps, on a 54x54 image of 192
// planes, spreads its 192 tiles unevenly over 132 SMs and halves to two bands of 27 rows,
// not to 8 of the plane's 9 taps, whose tiles would stage two planes' windows each.
TEST_F(TunedResolverTest, ASharedGatherTileHalvesInWholePlanesAndRows) {
  tuning::TuningRecord shared =
      SpecRecord("im2col:bf16:8,128,128,64:k=3:p=1:layout=nchw", "simt_im2col",
                 "planes_shared", {9, 16384}, 512);
  (*shared.mutable_winner()->mutable_hints()->mutable_annotations())["planes_gather"] =
      "shared_runs";
  auto r = Make({shared})->Resolve(
      H200(), **BuiltinTileOps().ParseSpec("im2col:bf16:8,54,54,24:k=3:p=1:layout=nchw"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->level, ResolutionLevel::kNearest) << r->detail;
  EXPECT_EQ(r->built.lowered->form_name, "planes_shared") << r->detail;
  EXPECT_THAT(r->request.launch.tile, ElementsAre(9, 27 * 54)) << r->detail;
  EXPECT_THAT(r->detail, HasSubstr("9x2916 halved 1x")) << r->detail;
}

// A dense tensor of odd total size is one aligned run with a ragged end: it transfers
// from dense records, not from slices whose every row starts misaligned.
TEST_F(TunedResolverTest, AnOddSizedDenseTensorTakesADenseRecord) {
  auto resolver = Make({SimtRecord(Op({16384, 4096}), {8192}, 128),
                        SimtRecord(Slice(DataType::kF16, {8191, 8193}, {0, 1}, {8191, 8191}),
                                   {8, 2048}, 256)});
  auto r = resolver->Resolve(H200(), Op({4099, 4097}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->level, ResolutionLevel::kNearest);
  EXPECT_EQ(r->request.launch.threads, 128) << r->detail;
  EXPECT_THAT(r->request.launch.tile, ElementsAre(8192));
}

TEST_F(TunedResolverTest, HeuristicWhenNothingApplies) {
  tuning::DeviceIdentity ampere;
  ampere.set_name("NVIDIA A100");
  ampere.set_cc_major(8);
  auto resolver = Make({Record(ampere, Op({1024, 1024}), "cp_async", {32, 64}, 128, 2)});
  auto r = resolver->Resolve(H200(), Op({1000, 1000}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->level, ResolutionLevel::kHeuristic);
  EXPECT_THAT(r->detail, HasSubstr("no record of this operator, element size and architecture"));
  EXPECT_EQ(r->codegen->name(), "cuda.tma");
  EXPECT_TRUE(r->codegen->BuildWithoutCompile(r->request).ok());
}

TEST_F(TunedResolverTest, UnusableExactRecordFallsThrough) {
  // A stored tile that cannot lower for this problem (box > 256 for TMA).
  auto resolver = Make({Record(H200(), Op({4096, 4096}), "tma", {64, 512}, 32, 3)});
  auto r = resolver->Resolve(H200(), Op({4096, 4096}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->level, ResolutionLevel::kHeuristic);
  EXPECT_THAT(r->detail, HasSubstr("exact record unusable"));
}

TEST_F(TunedResolverTest, ExplicitHintsWinOverTunedOnes) {
  auto resolver = Make({Record(H200(), Op({4096, 4096}), "tma", {64, 128}, 32, 3)});
  CopyOp op = Op({4096, 4096});
  op.hints.eviction_policy = EvictionPolicy::kEvictFirst;
  auto r = resolver->Resolve(H200(), op);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r->request.op->hints.eviction_policy, EvictionPolicy::kEvictFirst);
  EXPECT_EQ(*r->request.op->hints.prefer_instruction, Instruction::kTma);
}

Im2colOp Conv(int64_t n, int64_t hw, int64_t c) {
  Im2colGeometry g;
  g.n = n;
  g.h = g.w = hw;
  g.c = c;
  g.kh = g.kw = 3;
  g.ph = g.pw = 1;
  return Im2colOp::Dense(DataType::kF16, g);
}

TEST_F(TunedResolverTest, Im2colExactRecordAndHeuristic) {
  tuning::TuningRecord record;
  *record.mutable_device() = H200();
  *record.mutable_problem() = *BuiltinTileOps().Find("im2col").value()->ToProblem(Conv(8, 28, 64));
  tuning::Variant* v = record.mutable_winner();
  v->mutable_hints()->set_prefer_instruction("tma");
  v->mutable_lowering()->set_path("tma_im2col");
  v->mutable_lowering()->add_tile(128);
  v->mutable_lowering()->add_tile(64);
  v->mutable_lowering()->set_threads(128);
  v->mutable_lowering()->set_stages(2);
  record.mutable_winner_statistics()->set_median_us(3);
  record.mutable_winner_statistics()->set_sample_count(5);
  auto resolver = Make({record});
  auto exact = resolver->Resolve(H200(), Conv(8, 28, 64));
  ASSERT_TRUE(exact.ok()) << exact.status();
  EXPECT_EQ(exact->level, ResolutionLevel::kExact);
  EXPECT_THAT(exact->request.launch.tile, ElementsAre(128, 64));
  auto built = exact->codegen->BuildWithoutCompile(exact->request);
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_EQ(built->lowered->path_name, "tma_im2col");
  // The resolution carries the kernel it lowered: callers need not lower it again.
  ASSERT_NE(exact->built.lowered, nullptr);
  EXPECT_EQ(exact->built.source.text, built->source.text);
  EXPECT_EQ(exact->built.lowered->kernel_name, built->lowered->kernel_name);

  auto heuristic = resolver->Resolve(H200(), Conv(2, 17, 3));  // Other rank-4 shape, C=3.
  ASSERT_TRUE(heuristic.ok()) << heuristic.status();
  auto simt = heuristic->codegen->BuildWithoutCompile(heuristic->request);
  ASSERT_TRUE(simt.ok()) << simt.status();
  EXPECT_EQ(simt->lowered->path_name, "simt_im2col");
  if (heuristic->level == ResolutionLevel::kHeuristic) {
    const auto& lowered = static_cast<const LoweredIm2col&>(*simt->lowered);
    EXPECT_EQ(*lowered.img_policy, EvictionPolicy::kEvictLast);
    EXPECT_EQ(*lowered.col_policy, EvictionPolicy::kEvictFirst);
  }
}

// The stem's staged record (whole output rows of whole matrix rows: 112x147) transfers to
// another C=3 layer as whole rows of that layer (one output row of 320, K = 108): the
// staged form, where its numbers as stored would only make the flat one.
TEST_F(TunedResolverTest, AnIm2colTileOfWholeRowsTransfersAsWholeRows) {
  Im2colGeometry stem;
  stem.n = 32, stem.h = stem.w = 224, stem.c = 3, stem.kh = stem.kw = 7;
  stem.sh = stem.sw = 2, stem.ph = stem.pw = 3;
  tuning::TuningRecord record;
  *record.mutable_device() = H200();
  *record.mutable_problem() = *BuiltinTileOps().Find("im2col").value()->ToProblem(
      Im2colOp::Dense(DataType::kF16, stem));
  tuning::Variant* v = record.mutable_winner();
  v->mutable_hints()->set_prefer_instruction("sync");
  v->mutable_lowering()->set_path("simt_im2col");
  v->mutable_lowering()->set_form("staged");
  v->mutable_lowering()->add_tile(112);
  v->mutable_lowering()->add_tile(147);
  v->mutable_lowering()->set_threads(256);
  record.mutable_winner_statistics()->set_median_us(36);
  record.mutable_winner_statistics()->set_sample_count(5);
  auto resolver = Make({record});
  Im2colGeometry yolo;
  yolo.n = 16, yolo.h = yolo.w = 640, yolo.c = 3, yolo.kh = yolo.kw = 6;
  yolo.sh = yolo.sw = 2, yolo.ph = yolo.pw = 2;
  auto r = resolver->Resolve(H200(), Im2colOp::Dense(DataType::kF16, yolo));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->level, ResolutionLevel::kNearest) << r->detail;
  EXPECT_THAT(r->request.launch.tile, ElementsAre(320, 108));
  EXPECT_EQ(r->built.lowered->form_name, "staged") << r->detail;
  // One output row of a long 1-D signal (OW 3199) would make 8 tiles of the whole
  // matrix, where the record had 3584: block_M stays as tuned (229 tiles, enough).
  Im2colGeometry audio;
  audio.n = 8, audio.h = 1, audio.w = 16000, audio.c = 1, audio.kh = 1, audio.kw = 10;
  audio.sh = 1, audio.sw = 5;
  record.mutable_winner()->mutable_lowering()->set_tile(1, 147);
  record.mutable_winner()->mutable_lowering()->set_tile(0, 112);
  auto signal = Make({record})->Resolve(H200(), Im2colOp::Dense(DataType::kF16, audio));
  ASSERT_TRUE(signal.ok()) << signal.status();
  EXPECT_THAT(signal->request.launch.tile, ElementsAre(112, 10)) << signal->detail;
  // Whole matrix rows but not whole output rows: fewer rows of a longer K, within four
  // times the tuned tile's elements (40 rows of 147 are 54 of YOLO's K = 108 at most;
  // the record's 40 stay).
  record.mutable_winner()->mutable_lowering()->set_tile(0, 40);
  auto rows = Make({record})->Resolve(H200(), Im2colOp::Dense(DataType::kF16, yolo));
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(rows->request.launch.tile, ElementsAre(40, 108)) << rows->detail;
  Im2colGeometry wide = yolo;
  wide.c = 64;  // K = 2304: 4 x 40 x 147 / 2304 = 10 rows.
  auto longer = Make({record})->Resolve(H200(), Im2colOp::Dense(DataType::kF16, wide));
  ASSERT_TRUE(longer.ok()) << longer.status();
  EXPECT_THAT(longer->request.launch.tile, ElementsAre(10, 2304)) << longer->detail;
  record.mutable_winner()->mutable_lowering()->set_tile(0, 112);
  // A tile that is not whole rows is used as tuned.
  record.mutable_winner()->mutable_lowering()->set_tile(1, 64);
  record.mutable_winner()->mutable_lowering()->set_form("flat");
  auto partial = Make({record})->Resolve(H200(), Im2colOp::Dense(DataType::kF16, yolo));
  ASSERT_TRUE(partial.ok()) << partial.status();
  EXPECT_THAT(partial->request.launch.tile, ElementsAre(112, 64));
}

// Where the nearest record's kernel moves narrower vectors here than a record a little
// further does, that one answers: the 16x16 patchify's
// vectors along a kernel row (16 B there) get 4 B on a 14x14 patchify, where the stem's
// staged form still stores 16 B. Without such a record, the operator's heuristic answers
// where it moves wider vectors than the narrowed nearest; a nearest that was as narrow on
// its own problem answers as it is.
TEST_F(TunedResolverTest, ARecordWhoseVectorsNarrowHereGivesWayToOneThatKeepsThem) {
  auto conv = [](int64_t k, int64_t s, int64_t p) {
    Im2colGeometry g;
    g.n = 32, g.h = g.w = 224, g.c = 3, g.kh = g.kw = k, g.sh = g.sw = s, g.ph = g.pw = p;
    return Im2colOp::Dense(DataType::kF16, g);
  };
  auto record = [](const Im2colOp& op, const std::string& form, std::vector<int64_t> tile,
                   bool window) {
    tuning::TuningRecord r;
    *r.mutable_device() = H200();
    *r.mutable_problem() = *BuiltinTileOps().Find("im2col").value()->ToProblem(op);
    tuning::Variant* v = r.mutable_winner();
    v->mutable_hints()->set_prefer_instruction("sync");
    if (window) (*v->mutable_hints()->mutable_annotations())["row_vector"] = "window_row";
    v->mutable_lowering()->set_path("simt_im2col");
    v->mutable_lowering()->set_form(form);
    for (int64_t t : tile) v->mutable_lowering()->add_tile(t);
    v->mutable_lowering()->set_threads(256);
    v->mutable_lowering()->set_vector_bytes(16);
    r.mutable_winner_statistics()->set_median_us(10);
    r.mutable_winner_statistics()->set_sample_count(5);
    return r;
  };
  const tuning::TuningRecord patchify = record(conv(16, 16, 0), "row", {32, 128}, true);
  const tuning::TuningRecord stem = record(conv(7, 2, 3), "staged", {112, 147}, false);
  auto alone = Make({patchify})->Resolve(H200(), conv(14, 14, 0));
  ASSERT_TRUE(alone.ok()) << alone.status();
  EXPECT_EQ(alone->level, ResolutionLevel::kHeuristic) << alone->detail;
  EXPECT_EQ(alone->built.lowered->vector_bytes, 16) << alone->detail;
  EXPECT_THAT(alone->detail, StartsWith("no exact record; heuristic: "));
  EXPECT_THAT(alone->detail, HasSubstr("moves 4-byte vectors here against 16 on its own "
                                       "problem; the heuristic's moves 16-byte ones"));

  auto r = Make({patchify, stem})->Resolve(H200(), conv(14, 14, 0));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->level, ResolutionLevel::kNearest);
  EXPECT_EQ(r->built.lowered->form_name, "staged") << r->detail;
  EXPECT_EQ(r->built.lowered->vector_bytes, 16);
  EXPECT_THAT(r->detail, HasSubstr("moves 4-byte vectors here against 16 on its own problem; "
                                   "this one, 16-byte ones"));
  // A further record whose kernel narrows as much does not take over: the heuristic does.
  auto other_batch = [&](int64_t n) {
    Im2colOp op = conv(16, 16, 0);
    op.geometry.n = n;
    op.img = Im2colOp::Dense(DataType::kF16, op.geometry).img;
    return op;
  };
  auto same = Make({patchify, record(other_batch(64), "row", {32, 128}, true)})
                  ->Resolve(H200(), conv(14, 14, 0));
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(same->level, ResolutionLevel::kHeuristic) << same->detail;
  EXPECT_THAT(same->detail, HasSubstr("the nearest of 2 record(s)"));
  EXPECT_THAT(same->detail, HasSubstr("and none of the 1 after it moves wider ones"));
  // The 32x32 patchify keeps the 16-B vectors along its kernel rows: the nearest answers.
  auto wide = Make({patchify, stem})->Resolve(H200(), conv(32, 32, 0));
  ASSERT_TRUE(wide.ok()) << wide.status();
  EXPECT_EQ(wide->built.lowered->form_name, "row") << wide->detail;
  EXPECT_EQ(wide->built.lowered->vector_bytes, 16);
  EXPECT_THAT(wide->detail, HasSubstr("nearest usable of 2"));
  // A nearest record whose kernel moved 4-byte vectors on its own problem too (a 14x14
  // patchify of another batch) gives way all the same to a further one that moves 16-byte
  // ones here: its width was its problem's row length, not a choice this problem needs.
  auto other14 = [&](int64_t n) {
    Im2colOp op = conv(14, 14, 0);
    op.geometry.n = n;
    op.img = Im2colOp::Dense(DataType::kF16, op.geometry).img;
    return op;
  };
  tuning::TuningRecord patchify14 = record(other14(64), "row", {32, 128}, true);
  patchify14.mutable_winner()->mutable_lowering()->set_vector_bytes(4);
  auto alone14 = Make({patchify14})->Resolve(H200(), conv(14, 14, 0));
  ASSERT_TRUE(alone14.ok()) << alone14.status();
  EXPECT_EQ(alone14->level, ResolutionLevel::kNearest) << alone14->detail;
  EXPECT_EQ(alone14->built.lowered->vector_bytes, 4) << alone14->detail;
  auto wider = Make({patchify14, stem})->Resolve(H200(), conv(14, 14, 0));
  ASSERT_TRUE(wider.ok()) << wider.status();
  EXPECT_EQ(wider->built.lowered->form_name, "staged") << wider->detail;
  EXPECT_EQ(wider->built.lowered->vector_bytes, 16);
  EXPECT_THAT(wider->detail, HasSubstr("moves 4-byte vectors here; this one, 16-byte ones"));
  // A further record whose own kernel moved narrower vectors than it would here does not
  // take over: its tuning measured nothing at that width.
  tuning::TuningRecord narrow_stem = stem;
  narrow_stem.mutable_winner()->mutable_lowering()->set_vector_bytes(4);
  auto unmeasured = Make({patchify14, narrow_stem})->Resolve(H200(), conv(14, 14, 0));
  ASSERT_TRUE(unmeasured.ok()) << unmeasured.status();
  EXPECT_EQ(unmeasured->built.lowered->form_name, "row") << unmeasured->detail;
  EXPECT_EQ(unmeasured->built.lowered->vector_bytes, 4) << unmeasured->detail;
}

// A nearest record whose vectors narrow here answers all the same where the heuristic's
// kernel moves no wider ones: rows of 3 f16 at a pitch of 7 (too sparse for the span
// form) get 2-byte vectors either way.
TEST_F(TunedResolverTest, ANarrowedRecordAnswersWhereTheHeuristicIsNoWider) {
  const CopyOp narrow_rows = Slice(DataType::kF16, {1 << 20, 7}, {0, 0}, {1 << 20, 3});
  auto heuristic = Make({})->Resolve(H200(), narrow_rows);
  ASSERT_TRUE(heuristic.ok()) << heuristic.status();
  ASSERT_EQ(heuristic->level, ResolutionLevel::kHeuristic);
  tuning::TuningRecord dense =
      SimtRecord(Slice(DataType::kF16, {4096, 4096}, {0, 0}, {4096, 4096}), {8, 1024}, 256);
  dense.mutable_winner()->mutable_lowering()->set_vector_bytes(16);
  auto r = Make({dense})->Resolve(H200(), narrow_rows);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_LT(r->built.lowered->vector_bytes, 16) << r->detail;  // it narrowed here
  ASSERT_LE(heuristic->built.lowered->vector_bytes, r->built.lowered->vector_bytes)
      << heuristic->detail;
  EXPECT_EQ(r->level, ResolutionLevel::kNearest) << r->detail;
  EXPECT_THAT(r->detail, HasSubstr("nearest usable of 1"));
}

// A record's tile that reached past its own problem (4096 over 1024 elements) transfers
// as the 1024 its one CTA moved: 13 CTAs of a 12289-element copy, not 4.
TEST_F(TunedResolverTest, ATransferredTileIsWhatEachOfTheRecordsCtasDid) {
  auto small = [](int64_t n) {
    Buffer src = Buffer::RowMajor("src", DataType::kF32, Scope::kGlobal, {n});
    Buffer dst = Buffer::RowMajor("dst", DataType::kF32, Scope::kGlobal, {n});
    return CopyOp{Region::Whole(src), Region::Whole(dst)};
  };
  auto resolver = Make({SimtRecord(small(1024), {4096}, 32)});
  auto r = resolver->Resolve(H200(), small(12289));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->level, ResolutionLevel::kNearest) << r->detail;
  EXPECT_THAT(r->request.launch.tile, ElementsAre(1024));
  EXPECT_EQ(r->built.lowered->num_tiles, 13);
  EXPECT_THAT(r->detail, HasSubstr("tile fitted to 1024"));
  // A tile only wider than the record's rows (64 over rows of 8, of a large problem) keeps
  // its shape on wide rows.
  auto narrow = Make({SimtRecord(Slice(DataType::kF64, {65536, 9}, {0, 0}, {65536, 8}), {32, 64}, 256)});
  auto wide = narrow->Resolve(H200(), Slice(DataType::kF64, {3000, 3001}, {0, 0}, {3000, 2999}));
  ASSERT_TRUE(wide.ok()) << wide.status();
  EXPECT_THAT(wide->request.launch.tile, ElementsAre(32, 64)) << wide->detail;
  // Over rows of the same order (500 against the record's 250), what each CTA moved, 8
  // rows of 250, is kept: 4 rows of 500 (the tile's 2048 still covers them), not 32 of 512.
  auto short_rows =
      Make({SimtRecord(Slice(DataType::kU8, {40000, 301}, {0, 1}, {40000, 250}), {8, 2048}, 256)});
  const CopyOp rows_of_500 = Slice(DataType::kU8, {20000, 515}, {0, 3}, {20000, 500});
  auto twice = short_rows->Resolve(H200(), rows_of_500);
  ASSERT_TRUE(twice.ok()) << twice.status();
  EXPECT_THAT(twice->request.launch.tile, ElementsAre(4, 2048)) << twice->detail;
  // Over rows half the record's (125), the tile keeps its width only as many times the
  // rows as it was over the record's (8 x 128), so its CTAs idle no more of their lanes.
  auto half = short_rows->Resolve(H200(), Slice(DataType::kU8, {40000, 131}, {0, 3}, {40000, 128}));
  ASSERT_TRUE(half.ok()) << half.status();
  EXPECT_THAT(half->request.launch.tile, ElementsAre(8, 1024)) << half->detail;
  // A tile within the power of two covering the record's rows ([8, 1024] over rows of
  // 1000) is a tile of whole rows: over rows of 256 it is 32 of them, not 16 rows of a
  // 1024-wide tile three quarters idle.
  auto whole_rows =
      Make({SimtRecord(Slice(DataType::kF16, {1000, 1001}, {0, 0}, {1000, 1000}), {8, 1024}, 256)});
  auto quarter =
      whole_rows->Resolve(H200(), Slice(DataType::kF16, {65536, 260}, {0, 2}, {65536, 256}));
  ASSERT_TRUE(quarter.ok()) << quarter.status();
  EXPECT_THAT(quarter->request.launch.tile, ElementsAre(32, 256)) << quarter->detail;
  // 4000 B per CTA, read and written: 8 resident at 256 threads hold 31 KiB per SM, too
  // few to keep the memory busy; 16 at 128 threads.
  EXPECT_EQ(twice->request.launch.threads, 128) << twice->detail;
  EXPECT_THAT(twice->detail, HasSubstr("128 threads (the CTAs resident at 256 threads move 31 "
                                       "KiB per SM at once, twice as many at 128)"));
  // Those rows suit the span form on both sides, but the record's kernel took another
  // form (its tile, 2048 wide, is whole 16-B slots: the shifted form), so its tile
  // transferred as that kernel's, above. A record whose kernel took the span form keeps
  // its src span a tile, as whole rows; a coalesced_width asking for the row-by-row kernel
  // keeps the tile as tuned.
  tuning::TuningRecord spanned =
      SimtRecord(Slice(DataType::kU8, {40000, 301}, {0, 1}, {40000, 250}), {32, 250}, 128);
  spanned.mutable_winner()->mutable_lowering()->set_form("span");
  auto span = Make({spanned})->Resolve(H200(), rows_of_500);
  ASSERT_TRUE(span.ok()) << span.status();
  EXPECT_THAT(span->request.launch.tile, ElementsAre(16, 500)) << span->detail;
  EXPECT_TRUE(static_cast<const LoweredCopy&>(*span->built.lowered).span) << span->detail;
  // At a much wider pitch the record's span is 26.6 rows of 154 B: 32 of them (1.20x the
  // span), not 16 (0.60x).
  tuning::TuningRecord narrow_span =
      SimtRecord(Slice(DataType::kF16, {4194304, 8}, {0, 1}, {4194304, 7}), {256, 7}, 128);
  narrow_span.mutable_winner()->mutable_lowering()->set_form("span");
  auto wider_pitch = Make({narrow_span})
                         ->Resolve(H200(), Slice(DataType::kF16, {100000, 77}, {0, 6},
                                                 {100000, 68}));
  ASSERT_TRUE(wider_pitch.ok()) << wider_pitch.status();
  EXPECT_THAT(wider_pitch->request.launch.tile, ElementsAre(32, 68)) << wider_pitch->detail;
  spanned.mutable_winner()->mutable_hints()->set_coalesced_width(1);
  auto row_by_row = Make({spanned})->Resolve(H200(), rows_of_500);
  ASSERT_TRUE(row_by_row.ok()) << row_by_row.status();
  EXPECT_FALSE(static_cast<const LoweredCopy&>(*row_by_row->built.lowered).span);
  EXPECT_THAT(row_by_row->request.launch.tile, ElementsAre(32, 250)) << row_by_row->detail;
  // The same across ranks: 8 rows of 128 over a 4-D slice of rows of 224 (its last two
  // dimensions merged) is 4 rows (the power of two in 1024 / 224) of the tile's 512.
  auto rank2 =
      Make({SimtRecord(Slice(DataType::kI32, {16384, 130}, {0, 1}, {16384, 128}), {8, 512}, 256)});
  auto rank4 = rank2->Resolve(
      H200(), Slice(DataType::kI32, {16, 33, 33, 33, 7}, {0, 0, 0, 0, 0}, {16, 32, 32, 32, 7}));
  ASSERT_TRUE(rank4.ok()) << rank4.status();
  EXPECT_THAT(rank4->request.launch.tile, ElementsAre(1, 1, 4, 512)) << rank4->detail;
  // A tile no wider than the record's rows is not refitted: it fits this problem as tuned.
  auto narrow_tile =
      Make({SimtRecord(Slice(DataType::kU8, {40000, 301}, {0, 1}, {40000, 250}), {64, 128}, 256)});
  auto split = narrow_tile->Resolve(H200(), rows_of_500);
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_THAT(split->request.launch.tile, ElementsAre(64, 128)) << split->detail;
}

// A small problem given a large problem's tile is halved while it has half or less of two
// tiles per SM (256 here: the test records name no SM count, 128 is assumed), never past
// the count the record made of its own problem.
TEST_F(TunedResolverTest, ASmallProblemKeepsTheRecordsParallelism) {
  auto resolver = Make({SimtRecord(Op({16384, 16384}), {8192}, 256)});
  auto r = resolver->Resolve(H200(), Op({1024, 1024}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->request.launch.tile, ElementsAre(4096)) << r->detail;
  EXPECT_EQ(r->built.lowered->num_tiles, 256);
  EXPECT_THAT(r->detail, HasSubstr("8192 halved 1x: it made 128 tiles, the record 256 of its"));
  // A record of 4 tiles: a problem of 16 is parallel enough already.
  auto few = Make({SimtRecord(Op({4, 4096}), {4096}, 256)})->Resolve(H200(), Op({16, 4096}));
  ASSERT_TRUE(few.ok()) << few.status();
  EXPECT_THAT(few->request.launch.tile, ElementsAre(4096)) << few->detail;
}

// A transferred grid that would run two CTAs on some SMs and one on the others (150 tiles
// over 128) is halved to one that spreads more evenly (300: two or three on each), even
// past the tiles wanted; an even grid is kept.
TEST_F(TunedResolverTest, ATransferredGridIsSpreadEvenlyOverTheSms) {
  auto resolver = Make({SimtRecord(Op({16384, 16384}), {8192}, 256)});
  auto uneven = resolver->Resolve(H200(), Op({150, 8192}));
  ASSERT_TRUE(uneven.ok()) << uneven.status();
  EXPECT_THAT(uneven->request.launch.tile, ElementsAre(4096)) << uneven->detail;
  EXPECT_EQ(uneven->built.lowered->num_tiles, 300);
  EXPECT_THAT(uneven->detail,
              HasSubstr("its 150 tiles spread over 128 SMs at 0.59 of the busiest"));
  auto even = resolver->Resolve(H200(), Op({255, 8192}));
  ASSERT_TRUE(even.ok()) << even.status();
  EXPECT_THAT(even->request.launch.tile, ElementsAre(8192)) << even->detail;
}

// A transferred grid whose resident CTAs keep enough bytes in flight keeps the record's
// threads, however its tiles fall into waves (1100 tiles of 256 threads, 64 KiB each: 8
// per SM at once, 1024 on the assumed 128 SMs, then 76 more). A starved one (the slice
// rows test above) halves them, unless it is a persistent grid, which holds the CTAs it
// names.
TEST_F(TunedResolverTest, ThreadsHalveOnlyForBytesInFlight) {
  auto resolver = Make({SimtRecord(Op({16384, 16384}), {8192}, 256)});
  auto busy = resolver->Resolve(H200(), Op({1100, 8192}));
  ASSERT_TRUE(busy.ok()) << busy.status();
  EXPECT_EQ(busy->request.launch.threads, 256) << busy->detail;
  EXPECT_EQ(busy->built.lowered->num_tiles, 1100);
  const CopyOp rows_of_500 = Slice(DataType::kU8, {20000, 515}, {0, 3}, {20000, 500});
  tuning::TuningRecord starved =
      SimtRecord(Slice(DataType::kU8, {40000, 301}, {0, 1}, {40000, 250}), {8, 2048}, 256);
  auto halved = Make({starved})->Resolve(H200(), rows_of_500);
  ASSERT_TRUE(halved.ok()) << halved.status();
  EXPECT_EQ(halved->request.launch.threads, 128) << halved->detail;
  starved.mutable_winner()->mutable_lowering()->set_ctas_per_sm(2);
  auto held = Make({starved})->Resolve(H200(), rows_of_500);
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_EQ(held->request.launch.threads, 256) << held->detail;
  EXPECT_EQ(held->request.launch.ctas_per_sm, 2);
}

// A transferred tile that does not lower is halved until it does, before the record's
// tile is used as stored: a staged 16x16 s16 patchify record (14 whole output rows, K=768)
// fitted to AlexNet's 11x11 s4 (one output row of 55, K=363) is too much per thread, and
// 32 rows (the power of two below) lower (flat, whole matrix rows), where the stored
// 14x768 would cut K.
TEST_F(TunedResolverTest, ATransferredTileIsHalvedUntilItLowers) {
  Im2colGeometry patch;
  patch.n = 32, patch.h = patch.w = 224, patch.c = 3, patch.kh = patch.kw = 16;
  patch.sh = patch.sw = 16;
  tuning::TuningRecord record;
  *record.mutable_device() = H200();
  *record.mutable_problem() = *BuiltinTileOps().Find("im2col").value()->ToProblem(
      Im2colOp::Dense(DataType::kF16, patch));
  tuning::Variant* v = record.mutable_winner();
  v->mutable_lowering()->set_path("simt_im2col");
  v->mutable_lowering()->set_form("staged");
  v->mutable_lowering()->add_tile(14);
  v->mutable_lowering()->add_tile(768);
  v->mutable_lowering()->set_threads(256);
  record.mutable_winner_statistics()->set_median_us(20);
  record.mutable_winner_statistics()->set_sample_count(5);
  Im2colGeometry alexnet;
  alexnet.n = 64, alexnet.h = alexnet.w = 227, alexnet.c = 3, alexnet.kh = alexnet.kw = 11;
  alexnet.sh = alexnet.sw = 4;
  auto r = Make({record})->Resolve(H200(), Im2colOp::Dense(DataType::kF16, alexnet));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->level, ResolutionLevel::kNearest) << r->detail;
  EXPECT_THAT(r->request.launch.tile, ElementsAre(32, 363)) << r->detail;
  EXPECT_EQ(r->built.lowered->form_name, "flat") << r->detail;
  EXPECT_THAT(r->detail, HasSubstr("55x363 halved 1x: it did not lower"));
}

// A record's path that cannot keep its vector on this problem gives way: cp.async of an
// odd-sized dense tensor falls to 4-byte copies (it has no head_tail form), where the
// SIMT path's head_tail form keeps 16-byte ones.
TEST_F(TunedResolverTest, APathThatLosesItsVectorHereGivesWay) {
  auto dense = [](int64_t n) {
    Buffer src = Buffer::RowMajor("src", DataType::kF32, Scope::kGlobal, {n});
    Buffer dst = Buffer::RowMajor("dst", DataType::kF32, Scope::kGlobal, {n});
    return CopyOp{Region::Whole(src), Region::Whole(dst)};
  };
  tuning::TuningRecord record = Record(H200(), dense(16384), "cp_async", {4096}, 256, 1);
  record.mutable_winner()->mutable_lowering()->set_vector_bytes(16);
  record.mutable_winner()->mutable_hints()->set_loop_layout("8x32");
  auto resolver = Make({record});
  auto odd = resolver->Resolve(H200(), dense(12289));
  ASSERT_TRUE(odd.ok()) << odd.status();
  EXPECT_EQ(odd->level, ResolutionLevel::kNearest);
  EXPECT_EQ(odd->built.lowered->vector_bytes, 16) << odd->detail;
  EXPECT_EQ(odd->built.lowered->path_name, "sync_simt") << odd->detail;
  EXPECT_FALSE(odd->request.op->hints.loop_layout.has_value());
  EXPECT_THAT(odd->detail, HasSubstr("its cp_async path moves 4-byte vectors here"));
  // Where the path keeps its vector it stays.
  auto even = resolver->Resolve(H200(), dense(12288));
  ASSERT_TRUE(even.ok()) << even.status();
  EXPECT_EQ(even->built.lowered->path_name, "cp_async") << even->detail;
}

// The heuristic keeps a place among the alternatives when records would fill the list.
TEST_F(TunedResolverTest, AlternativesAlwaysHoldTheHeuristic) {
  const CopyOp target = Slice(DataType::kF16, {8192, 8192}, {0, 0}, {8192, 8000});
  auto resolver = Make({SimtRecord(Slice(DataType::kF16, {8000, 8192}, {0, 0}, {8000, 8000}),
                                   {4, 2000}, 128),
                        SimtRecord(Slice(DataType::kF16, {8100, 8192}, {0, 0}, {8100, 8000}),
                                   {8, 1000}, 64),
                        SimtRecord(Slice(DataType::kF16, {7900, 8192}, {0, 0}, {7900, 8000}),
                                   {2, 4000}, 32)});
  auto three = resolver->Alternatives(H200(), target, 3);
  ASSERT_TRUE(three.ok()) << three.status();
  ASSERT_EQ(three->size(), 3u);
  EXPECT_EQ((*three)[0].level, ResolutionLevel::kNearest);
  EXPECT_EQ((*three)[1].level, ResolutionLevel::kNearest);
  EXPECT_EQ((*three)[2].level, ResolutionLevel::kHeuristic);
  // Asked for one, the best guess alone.
  auto one = resolver->Alternatives(H200(), target, 1);
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].level, ResolutionLevel::kNearest);
}

}  // namespace
}  // namespace tiletune

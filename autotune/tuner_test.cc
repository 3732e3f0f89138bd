// The real tuner end to end (search spaces, lowering, emission, the evaluator, winner
// selection) on the simulated device: timings are deterministic functions of each
// candidate's source hash, so the expected winner is known; faults and wrong outputs are
// injected by the same hash.
#include "autotune/tuner.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "autotune/simulated_device.h"
#include "autotune/suite.h"
#include "autotune/tuning_task.h"
#include "compiler/backend/cost_model/cost_model.h"
#include "compiler/ops/candidates.h"
#include "compiler/ops/builtin_ops.h"
#include "compiler/tuning_db/tuning_db.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tiletune {
namespace autotune {
namespace {

using ::testing::HasSubstr;

// Distinct, deterministic times: 10 to 20 us by source hash.
double TimeOf(const std::string& sha) { return 10 + 10 * UnitHash(sha, 99); }

TuningTask Task(const std::string& spec) {
  auto problems = ParseProblems(BuiltinTileOps(), spec);
  EXPECT_TRUE(problems.ok()) << problems.status();
  auto task = MakeTask(BuiltinTileOps(), *(*problems)[0], *Target::Parse("sm_90a"));
  EXPECT_TRUE(task.ok()) << task.status();
  return *std::move(task);
}

SimulatedDeviceOptions Options() {
  SimulatedDeviceOptions options;
  options.time_us = [](const Candidate& c, const TuningTask&) { return TimeOf(c.source_sha256); };
  return options;
}

Tuner::Options TunerOptions() {
  Tuner::Options options;
  options.compile_threads = 2;
  return options;
}

// Tunes until no new variant faults (a fault makes the device unusable: a fresh one, as a
// new worker process would have, takes over), at most `attempts` times.
absl::StatusOr<tuning::TuningRecord> TuneToCompletion(const TuningTask& task,
                                                      const SimulatedDeviceOptions& options,
                                                      std::map<std::string, std::string>& faulted,
                                                      TuneStats& stats, int attempts = 20) {
  SimulatedCompilationProvider compiler;
  for (int attempt = 0; attempt < attempts; ++attempt) {
    SimulatedDevice device(options);
    Tuner tuner(device, compiler, TunerOptions());
    stats = TuneStats{};
    absl::StatusOr<tuning::TuningRecord> record = tuner.Tune(task, &faulted, &stats);
    if (!absl::IsAborted(record.status())) return record;
  }
  return absl::DeadlineExceededError("still faulting");
}

// A model estimating every kernel alike: a tuning with it measures the first k as listed.
absl::StatusOr<CostModel> FlatModel() {
  tuning::CostModel proto;
  proto.set_floor_us(1);
  proto.set_inflight_knot_bytes(4096);
  for (const std::string& term : CostTermNames()) {
    proto.add_terms(term);
    proto.add_coefficients(0);
  }
  return CostModel::FromProto(proto);
}

// Options that measure only `model`'s first choice per phase (and the anchors).
void MeasureTopOne(const CostModel& model, const TuningTask& task, Tuner::Options& options) {
  options.cost_model = &model;
  options.model_top_k = 1;
  options.gpu = DeviceConstantsFor(task.target, 132);
}

// One tuning of `task` on a fresh simulated device.
absl::StatusOr<tuning::TuningRecord> TuneOnce(const TuningTask& task,
                                              const SimulatedDeviceOptions& options,
                                              const Tuner::Options& tuner_options,
                                              TuneStats& stats) {
  SimulatedCompilationProvider compiler;
  SimulatedDevice device(options);
  Tuner tuner(device, compiler, tuner_options);
  std::map<std::string, std::string> faulted;
  return tuner.Tune(task, &faulted, &stats);
}

// The OK candidates of a record, the winner included, by source hash.
std::vector<std::string> MeasuredShas(const tuning::TuningRecord& record) {
  std::vector<std::string> shas = {record.winner().source_sha256()};
  for (const tuning::CandidateResult& c : record.candidates()) {
    if (c.status() == tuning::CandidateResult::OK) shas.push_back(c.variant().source_sha256());
  }
  return shas;
}

TEST(TunerTest, PicksTheFastestVerifiedCandidateOfBothPhases) {
  const TuningTask task = Task("copy:f16:1024,1024");
  std::map<std::string, std::string> faulted;
  TuneStats stats;
  auto record = TuneToCompletion(task, Options(), faulted, stats, 1);
  ASSERT_TRUE(record.ok()) << record.status();
  double best = std::numeric_limits<double>::max();
  for (const std::string& sha : MeasuredShas(*record)) best = std::min(best, TimeOf(sha));
  // The fastest, or one within the 1% noise band that uses fewer resources.
  const double winner = TimeOf(record->winner().source_sha256());
  EXPECT_LE(winner, best * 1.01);
  EXPECT_DOUBLE_EQ(record->winner_statistics().median_us(), winner);
  // Regret: the winner against the best of the fresh rounds, which hold the global best.
  EXPECT_NEAR(stats.regret, winner / best - 1, 1e-9);
  EXPECT_EQ(record->problem().copy().shape(1), 1024);
  EXPECT_GT(stats.measured, 50);
  EXPECT_EQ(stats.measured, stats.verified);
  EXPECT_EQ(stats.faults, 0);
  EXPECT_TRUE(stats.second_phase_error.empty());
  // Both phases ran: more distinct launches were measured than the first phase has.
  std::set<std::string> launches;
  for (const tuning::CandidateResult& c : record->candidates()) {
    if (c.status() != tuning::CandidateResult::OK) continue;
    const tuning::Lowering& l = c.variant().lowering();
    launches.insert(absl::StrCat(absl::StrJoin(l.tile(), ","), "/", l.threads(), "/", l.stages(),
                                 "/", l.ctas_per_sm(), "/", l.through_shared()));
  }
  EXPECT_GT(launches.size(), 10u);
  // The record is a valid database record.
  tuning::TuningDatabase database;
  *database.add_records() = *record;
  database.mutable_records(0)->mutable_device()->set_name("Simulated GPU");
  database.mutable_records(0)->mutable_device()->set_cc_major(9);
  database.set_schema_version(tuning::kCurrentSchemaVersion);
  EXPECT_TRUE(tuning::ValidateTuningDatabase(database, "tuned",
                                             BuiltinTileOps().RecordValidator())
                  .ok());
}

// The launch sweep covers the best hint set of each form of a leading path, not only of
// the path: an NCHW unfold's shared gather, fastest in the first phase at its own tiles,
// does not keep the element and span gathers (the planes form) from their launches.
TEST(TunerTest, EveryFormOfALeadingPathHasItsLaunchesSwept) {
  const TuningTask task = Task("im2col:f16:2,16,16,8:k=3:p=1:layout=nchw");
  SimulatedDeviceOptions options = Options();
  options.time_us = [](const Candidate& c, const TuningTask&) {
    return (c.lowered->form_name == "planes_shared" ? 5 : 10) + 5 * UnitHash(c.source_sha256, 99);
  };
  TuneStats stats;
  absl::StatusOr<tuning::TuningRecord> record = TuneOnce(task, options, TunerOptions(), stats);
  ASSERT_TRUE(record.ok()) << record.status();
  std::set<std::pair<std::string, std::string>> launches;  // (form, tile and threads)
  for (const tuning::CandidateResult& c : record->candidates()) {
    if (c.status() != tuning::CandidateResult::OK) continue;
    const tuning::Lowering& lowering = c.variant().lowering();
    launches.insert({lowering.form(), absl::StrCat(absl::StrJoin(lowering.tile(), "x"), "/",
                                                   lowering.threads())});
  }
  int planes = 0, shared = 0;
  for (const auto& [form, launch] : launches) (form == "planes" ? planes : shared) += 1;
  EXPECT_GE(shared, 5);
  EXPECT_GE(planes, 5) << "the planes form was measured at " << planes << " launch(es)";
}

TEST(TunerTest, WrongOutputsNeverWin) {
  const TuningTask task = Task("im2col:f16:2,16,16,8:k=3:p=1");
  SimulatedDeviceOptions options = Options();
  // The fastest third of the candidates compute wrong bytes.
  options.wrong = [](const Candidate& c) { return TimeOf(c.source_sha256) < 13.3; };
  std::map<std::string, std::string> faulted;
  TuneStats stats;
  auto record = TuneToCompletion(task, options, faulted, stats, 1);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_GE(TimeOf(record->winner().source_sha256()), 13.3);
  int wrong = 0;
  for (const tuning::CandidateResult& c : record->candidates()) {
    if (c.status() != tuning::CandidateResult::FAILED_VERIFICATION) continue;
    ++wrong;
    EXPECT_LT(TimeOf(c.variant().source_sha256()), 13.3);
    EXPECT_THAT(c.detail(), HasSubstr("wrong byte"));
  }
  EXPECT_GT(wrong, 0);
  EXPECT_EQ(wrong, stats.failed_verification);
  EXPECT_EQ(tuning::OperatorName(record->problem()), "im2col");
}

TEST(TunerTest, FaultsAreIsolatedRecordedAndSkipped) {
  const TuningTask task = Task("copy:u8:512,512");
  SimulatedDeviceOptions options = Options();
  options.faults = [](const Candidate& c) { return UnitHash(c.source_sha256, 5) < 0.04; };
  std::map<std::string, std::string> faulted;
  // The first attempt stops at the first fault and names it.
  {
    SimulatedCompilationProvider compiler;
    SimulatedDevice device(options);
    Tuner tuner(device, compiler, TunerOptions());
    TuneStats stats;
    auto aborted = tuner.Tune(task, &faulted, &stats);
    ASSERT_TRUE(absl::IsAborted(aborted.status())) << aborted.status();
    EXPECT_THAT(std::string(aborted.status().message()), HasSubstr("faulted the GPU"));
    ASSERT_EQ(faulted.size(), 1u);
    EXPECT_EQ(stats.faults, 1);
    EXPECT_EQ(device.measures(), 0);  // verification comes before any measurement
  }
  TuneStats stats;
  auto record = TuneToCompletion(task, options, faulted, stats);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_GT(faulted.size(), 1u);
  int recorded = 0;
  for (const tuning::CandidateResult& c : record->candidates()) {
    if (c.status() != tuning::CandidateResult::LAUNCH_FAULT) continue;
    ++recorded;
    EXPECT_TRUE(faulted.count(c.variant().source_sha256()));
    EXPECT_THAT(c.detail(), HasSubstr("CUDA_ERROR_ILLEGAL_ADDRESS"));
  }
  EXPECT_EQ(recorded, static_cast<int>(faulted.size()));
  EXPECT_FALSE(faulted.count(record->winner().source_sha256()));
}

TEST(TunerTest, RegretMeasuresTheWinnerAgainstFreshRounds) {
  const TuningTask task = Task("copy:f32:256,1000");
  SimulatedDeviceOptions options = Options();
  // Every candidate the same time, plus 20% noise: the pick is a coin toss among ties,
  // and fresh rounds say how much it cost.
  options.time_us = [](const Candidate&, const TuningTask&) { return 10.0; };
  options.noise = 0.2;
  std::map<std::string, std::string> faulted;
  TuneStats stats;
  auto record = TuneToCompletion(task, options, faulted, stats, 1);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_GE(stats.regret, 0);
  EXPECT_LT(stats.regret, 0.5);
  EXPECT_GT(record->winner_statistics().spread(), 0);
}

TEST(TunerTest, ASecondPhaseThatBuildsNothingIsReported) {
  TuningTask task = Task("copy:f16:256,256");
  LaunchParams impossible;
  impossible.tile = {8, 64};
  impossible.threads = 48;  // not a multiple of 32: nothing lowers
  task.space.launches = {impossible};
  std::map<std::string, std::string> faulted;
  TuneStats stats;
  auto record = TuneToCompletion(task, Options(), faulted, stats, 1);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_THAT(stats.second_phase_error, HasSubstr("threads=48"));
  bool reported = false;
  for (const tuning::CandidateResult& c : record->candidates()) {
    reported |= c.status() == tuning::CandidateResult::PRUNED &&
                c.detail().find("second phase built no candidates") != std::string::npos;
  }
  EXPECT_TRUE(reported);
}

TEST(TunerTest, NothingThatVerifiesIsAnError) {
  const TuningTask task = Task("copy:f16:64,64");
  SimulatedDeviceOptions options = Options();
  options.wrong = [](const Candidate&) { return true; };
  std::map<std::string, std::string> faulted;
  TuneStats stats;
  auto record = TuneToCompletion(task, options, faulted, stats, 1);
  EXPECT_TRUE(absl::IsFailedPrecondition(record.status())) << record.status();
  EXPECT_THAT(std::string(record.status().message()), HasSubstr("no variant of copy f16 [64, 64]"));
}

// What the library would launch is measured even outside the search space, and
// re-measured with the finalists however slow its first samples were: a tuning then never
// ends slower than the library it feeds.
TEST(TunerTest, TheLibrarysChoiceIsAlwaysAFinalist) {
  const TuningTask task = Task("copy:f16:1024,1024");
  Trial library = task.definition->Heuristic(*task.op, task.target);
  library.launch.threads = 96;  // no launch of the search space has 96 threads
  auto built = BuildCandidates(*task.definition, *task.op, task.target, {library});
  ASSERT_TRUE(built.ok()) << built.status();
  const std::string library_sha = built->candidates[0].source_sha256;
  SimulatedDeviceOptions options = Options();
  options.time_us = [&](const Candidate& c, const TuningTask&) {
    return c.source_sha256 == library_sha ? 30.0 : TimeOf(c.source_sha256);
  };
  for (bool with_model : {false, true}) {
    SCOPED_TRACE(with_model ? "with a cost model measuring its top 1" : "measuring everything");
    Tuner::Options tuner_options = TunerOptions();
    tuner_options.library_choice = [&](const TuningTask&) {
      return std::optional<LibraryChoice>(LibraryChoice{library, "nearest"});
    };
    const absl::StatusOr<CostModel> model = FlatModel();
    ASSERT_TRUE(model.ok()) << model.status();
    if (with_model) MeasureTopOne(*model, task, tuner_options);
    TuneStats stats;
    absl::StatusOr<tuning::TuningRecord> record = TuneOnce(task, options, tuner_options, stats);
    ASSERT_TRUE(record.ok()) << record.status();
    const std::vector<std::string> measured = MeasuredShas(*record);
    EXPECT_NE(std::find(measured.begin(), measured.end(), library_sha), measured.end());
    EXPECT_EQ(stats.library_level, "nearest");
    // Re-measured in the regret rounds: its time over the winner's.
    EXPECT_NEAR(stats.library_over_winner, 30.0 / TimeOf(record->winner().source_sha256()),
                1e-9);
    if (with_model) {
      EXPECT_GT(stats.model_skipped, 0);
    } else {
      EXPECT_EQ(stats.model_skipped, 0);
    }
  }
}

// Within the noise band of the fastest (1% here: the simulator's samples do not spread),
// the library's choice wins; beyond it, the fastest does.
TEST(TunerTest, TheLibrarysChoiceWinsATie) {
  const TuningTask task = Task("copy:f16:1024,1024");
  Trial library = task.definition->Heuristic(*task.op, task.target);
  // No launch of the search space has 320 threads; more than the fastest's 128, so the
  // tie-break by resources alone would not pick it.
  library.launch.threads = 320;
  auto built = BuildCandidates(*task.definition, *task.op, task.target, {library});
  ASSERT_TRUE(built.ok()) << built.status();
  const std::string library_sha = built->candidates[0].source_sha256;
  for (double over_fastest : {1.005, 1.03}) {
    SCOPED_TRACE(absl::StrCat("the library's choice at ", over_fastest, "x the fastest"));
    // Every other kernel at 10 to 20 us, one at 5 us, the library's choice just above it.
    std::string fastest;
    SimulatedDeviceOptions options = Options();
    options.time_us = [&](const Candidate& c, const TuningTask&) {
      if (c.source_sha256 == library_sha) return 5.0 * over_fastest;
      if (fastest.empty() && c.lowered->launch.threads == 128) fastest = c.source_sha256;
      return c.source_sha256 == fastest ? 5.0 : TimeOf(c.source_sha256);
    };
    Tuner::Options tuner_options = TunerOptions();
    tuner_options.compile_threads = 1;  // `fastest` is set by the first 128-thread kernel timed
    tuner_options.library_choice = [&](const TuningTask&) {
      return std::optional<LibraryChoice>(LibraryChoice{library, "nearest"});
    };
    TuneStats stats;
    absl::StatusOr<tuning::TuningRecord> record = TuneOnce(task, options, tuner_options, stats);
    ASSERT_TRUE(record.ok()) << record.status();
    ASSERT_FALSE(fastest.empty());
    EXPECT_EQ(record->winner().source_sha256(), over_fastest < 1.01 ? library_sha : fastest);
    EXPECT_NEAR(stats.library_over_winner, over_fastest < 1.01 ? 1.0 : over_fastest, 1e-9);
  }
}

// The library's alternatives outside the search space are measured whatever a cost model
// thinks of them, so that a corpus holds what any selection among them would launch; one
// may win.
TEST(TunerTest, TheLibrarysAlternativesAreMeasured) {
  const TuningTask task = Task("copy:f16:1024,1024");
  std::vector<Trial> alternatives;
  std::vector<std::string> shas;
  for (int threads : {96, 160, 224}) {  // no launch of the search space has these
    Trial trial = task.definition->Heuristic(*task.op, task.target);
    trial.launch.threads = threads;
    auto built = BuildCandidates(*task.definition, *task.op, task.target, {trial});
    ASSERT_TRUE(built.ok()) << built.status();
    alternatives.push_back(trial);
    shas.push_back(built->candidates[0].source_sha256);
  }
  SimulatedDeviceOptions options = Options();
  // The last alternative is the fastest kernel of all.
  options.time_us = [&](const Candidate& c, const TuningTask&) {
    return c.source_sha256 == shas.back() ? 1.0 : TimeOf(c.source_sha256);
  };
  for (bool with_model : {false, true}) {
    SCOPED_TRACE(with_model ? "with a cost model measuring its top 1" : "measuring everything");
    Tuner::Options tuner_options = TunerOptions();
    tuner_options.library_alternatives = [&](const TuningTask&) {
      std::vector<LibraryChoice> out;
      for (const Trial& trial : alternatives) out.push_back(LibraryChoice{trial, "nearest"});
      return out;
    };
    const absl::StatusOr<CostModel> model = FlatModel();
    ASSERT_TRUE(model.ok()) << model.status();
    if (with_model) MeasureTopOne(*model, task, tuner_options);
    TuneStats stats;
    absl::StatusOr<tuning::TuningRecord> record = TuneOnce(task, options, tuner_options, stats);
    ASSERT_TRUE(record.ok()) << record.status();
    const std::vector<std::string> measured = MeasuredShas(*record);
    for (const std::string& sha : shas) {
      EXPECT_NE(std::find(measured.begin(), measured.end(), sha), measured.end()) << sha;
    }
    EXPECT_EQ(record->winner().source_sha256(), shas.back());
  }
}

TEST(TunerTest, BaselinesAreMeasuredInterleavedWithTheWinnerAndRecorded) {
  std::map<std::string, std::string> faulted;
  TuneStats stats;
  SimulatedDeviceOptions options = Options();
  options.ceiling_gbps = 4000;
  const TuningTask copy = Task("copy:f16:1024,1024");
  auto record = TuneToCompletion(copy, options, faulted, stats, 1);
  ASSERT_TRUE(record.ok()) << record.status();
  // A copy has one baseline, cudaMemcpy of the same bytes: 2 us plus 4 MiB at 0.92 of
  // 4000 GB/s, the size-matched ceiling.
  ASSERT_EQ(record->baselines_size(), 1);
  const tuning::Baseline& memcpy = record->baselines(0);
  EXPECT_EQ(memcpy.name(), "cudaMemcpy");
  EXPECT_TRUE(memcpy.unavailable().empty());
  const double memcpy_us = 2 + 4.0 * 1024 * 1024 / (1e3 * 4000 * 0.92);
  EXPECT_NEAR(memcpy.statistics().median_us(), memcpy_us, 1e-9);
  EXPECT_EQ(memcpy.statistics().sample_count(), TunerOptions().rounds);
  const double winner_us = TimeOf(record->winner().source_sha256());
  EXPECT_NEAR(memcpy.speedup(), memcpy_us / winner_us, 1e-9);
  EXPECT_DOUBLE_EQ(record->vs_baseline(), memcpy.speedup());
  EXPECT_NEAR(record->size_matched_ceiling_gbps(), 4.0 * 1024 * 1024 / (1e3 * memcpy_us), 1e-6);
  EXPECT_DOUBLE_EQ(record->fraction_of_size_matched_ceiling(), memcpy.speedup());

  // im2col adds cudnnIm2Col, which vs_baseline then compares with.
  const TuningTask im2col = Task("im2col:f16:2,16,16,8:k=3:p=1");
  record = TuneToCompletion(im2col, options, faulted, stats, 1);
  ASSERT_TRUE(record.ok()) << record.status();
  ASSERT_EQ(record->baselines_size(), 2);
  EXPECT_EQ(record->baselines(1).name(), "cudnnIm2Col");
  EXPECT_GT(record->baselines(1).speedup(), record->baselines(0).speedup());
  EXPECT_DOUBLE_EQ(record->vs_baseline(), record->baselines(1).speedup());
  EXPECT_DOUBLE_EQ(record->fraction_of_size_matched_ceiling(), record->baselines(0).speedup());

  // Without cuDNN the record says why, and vs_baseline falls back to cudaMemcpy.
  options.library_baseline_unavailable = "cuDNN could not be loaded (libcudnn.so.9)";
  record = TuneToCompletion(im2col, options, faulted, stats, 1);
  ASSERT_TRUE(record.ok()) << record.status();
  ASSERT_EQ(record->baselines_size(), 2);
  EXPECT_FALSE(record->baselines(1).has_statistics());
  EXPECT_EQ(record->baselines(1).unavailable(), options.library_baseline_unavailable);
  EXPECT_DOUBLE_EQ(record->vs_baseline(), record->baselines(0).speedup());
  tuning::TuningDatabase database;
  *database.add_records() = *record;
  database.mutable_records(0)->mutable_device()->set_name("Simulated GPU");
  database.mutable_records(0)->mutable_device()->set_cc_major(9);
  database.set_schema_version(tuning::kCurrentSchemaVersion);
  const absl::Status valid =
      tuning::ValidateTuningDatabase(database, "tuned", BuiltinTileOps().RecordValidator());
  EXPECT_TRUE(valid.ok()) << valid;
  // A baseline with both statistics and a reason, or a negative speedup, is refused.
  database.mutable_records(0)->mutable_baselines(1)->mutable_statistics()->set_median_us(1);
  database.mutable_records(0)->mutable_baselines(0)->set_speedup(-1);
  const absl::Status invalid = tuning::ValidateTuningDatabase(database, "tuned");
  EXPECT_THAT(invalid.message(), HasSubstr("baselines[1] (cudnnIm2Col) must have statistics or "
                                           "say why it is unavailable, not both"));
  EXPECT_THAT(invalid.message(), HasSubstr("baselines[0].speedup is -1"));
}

TEST(SimulationSpecTest, ParsesAndRejects) {
  auto options = ParseSimulation("seed=3,noise=0.01,fault=0.1,name=Sim X");
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->seed, 3u);
  EXPECT_EQ(options->name, "Sim X");
  EXPECT_TRUE(options->faults != nullptr);
  EXPECT_TRUE(options->hangs == nullptr);
  for (const char* bad : {"fault=2", "noise=x", "seed=-1", "colour=red", "fault"}) {
    EXPECT_THAT(std::string(ParseSimulation(bad).status().message()), HasSubstr("--simulate"))
        << bad;
  }
}

}  // namespace
}  // namespace autotune
}  // namespace tiletune

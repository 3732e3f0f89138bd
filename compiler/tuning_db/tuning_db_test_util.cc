#include "compiler/tuning_db/tuning_db_test_util.h"

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/tuning_db/tuning_db.h"
#include "compiler/tuning_db/tuning_db.pb.h"

namespace tiletune {
namespace tuning {

Variant TestVariant(const std::string& path, int threads, int stages) {
  Variant variant;
  variant.mutable_lowering()->set_path(path);
  variant.mutable_lowering()->add_tile(64);
  variant.mutable_lowering()->add_tile(128);
  variant.mutable_lowering()->set_threads(threads);
  variant.mutable_lowering()->set_stages(stages);
  variant.mutable_lowering()->set_vector_bytes(16);
  variant.mutable_lowering()->set_through_shared(path != "sync_simt");
  variant.mutable_hints()->set_eviction_policy("evict_first");
  variant.set_source_sha256(std::string(64, path.empty() ? '0' : path[0]));
  return variant;
}

namespace {

Statistics TestStatistics(double median_us) {
  Statistics s;
  s.set_median_us(median_us);
  s.set_min_us(median_us * 0.98);
  s.set_spread(0.02);
  s.set_sample_count(50);
  s.set_gbps(1000.0 / median_us);
  s.set_ceiling_gbps(4000);
  s.set_fraction_of_ceiling(s.gbps() / 4000);
  return s;
}

DeviceIdentity TestDevice(const std::string& name) {
  DeviceIdentity device;
  device.set_name(name);
  device.set_cc_major(9);
  device.set_cc_minor(0);
  device.set_sm_count(132);
  device.set_l2_bytes(62914560);
  device.set_memory_bytes(150ll << 30);
  device.set_memory_bandwidth_class("hbm3e");
  device.set_driver_version("580.95.05");
  device.set_cuda_version(13000);
  device.set_nvrtc_version("13.0");
  device.set_uuid("GPU-00000000-1111-2222-3333-444444444444");
  return device;
}

void AddProvenance(TuningRecord* record) {
  record->mutable_provenance()->set_tool_version("tiletune test");
  record->mutable_provenance()->set_host("testhost");
  record->mutable_provenance()->set_unix_time_s(1796000000);
  record->mutable_provenance()->set_command_line("autotune --device=0");
}

}  // namespace

Problem TestCopyProblem(const std::string& dtype, const std::vector<int64_t>& shape) {
  Problem problem;
  problem.set_dtype(dtype);
  CopyProblem* copy = problem.mutable_copy();
  std::vector<int64_t> strides(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * shape[d + 1];
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    copy->add_shape(shape[d]);
    copy->add_src_strides(strides[d]);
    copy->add_src_offset(0);
    copy->add_dst_strides(strides[d]);
    copy->add_dst_offset(0);
  }
  return problem;
}

TuningRecord TestRecord(const std::string& device_name, const std::vector<int64_t>& shape,
                        double median_us, const std::string& winner_path) {
  TuningRecord record;
  *record.mutable_device() = TestDevice(device_name);
  *record.mutable_problem() = TestCopyProblem("f16", shape);
  *record.mutable_winner() = TestVariant(winner_path);
  *record.mutable_winner_statistics() = TestStatistics(median_us);
  CandidateResult* slower = record.add_candidates();
  *slower->mutable_variant() = TestVariant("sync_simt", 256);
  *slower->mutable_statistics() = TestStatistics(median_us * 1.5);
  slower->set_status(CandidateResult::OK);
  CandidateResult* failed = record.add_candidates();
  *failed->mutable_variant() = TestVariant("cp_async", 128, 3);
  failed->set_status(CandidateResult::COMPILE_ERROR);
  failed->set_detail("ptxas: error: too many resources requested");
  AddProvenance(&record);
  return record;
}

TuningRecord TestIm2colRecord(double median_us) {
  TuningRecord record;
  *record.mutable_device() = TestDevice("NVIDIA H200");
  Problem* problem = record.mutable_problem();
  problem->set_dtype("bf16");
  Im2colProblem* g = problem->mutable_im2col();
  g->set_n(8);
  g->set_h(56);
  g->set_w(56);
  g->set_c(64);
  g->set_kh(3);
  g->set_kw(3);
  g->set_sh(1);
  g->set_sw(1);
  g->set_dh(1);
  g->set_dw(1);
  g->set_ph(1);
  g->set_pw(1);
  for (int64_t stride : {56 * 56 * 64, 56 * 64, 64, 1}) g->add_img_strides(stride);
  *record.mutable_winner() = TestVariant("tma_im2col");
  *record.mutable_winner_statistics() = TestStatistics(median_us);
  CandidateResult* simt = record.add_candidates();
  *simt->mutable_variant() = TestVariant("simt_im2col");
  *simt->mutable_statistics() = TestStatistics(median_us * 2);
  simt->set_status(CandidateResult::OK);
  AddProvenance(&record);
  return record;
}

TuningDatabase TestDatabase(int copy_records) {
  TuningDatabase database;
  database.set_schema_version(kCurrentSchemaVersion);
  for (int i = 0; i < copy_records; ++i) {
    *database.add_records() = TestRecord("NVIDIA H200", {1024, 1024 * (i + 1)}, 10.0 + i);
  }
  *database.add_records() = TestIm2colRecord(7.5);
  database.set_record_count(database.records_size());
  database.set_records_sha256(RecordsSha256(database));
  return database;
}

}  // namespace tuning
}  // namespace tiletune

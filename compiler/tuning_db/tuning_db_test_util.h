// Valid tuning records and databases for tests.
//
//   TuningDatabase db = TestDatabase(3);                // three distinct copy problems
//   TuningRecord r = TestRecord("NVIDIA H200", {4096, 4096}, 12.5, "tma");
#ifndef COMPILER_TUNING_DB_TUNING_DB_TEST_UTIL_H_
#define COMPILER_TUNING_DB_TUNING_DB_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/tuning_db/tuning_db.pb.h"

namespace tiletune {
namespace tuning {

// A dense row-major copy problem of `shape`, in canonical form.
Problem TestCopyProblem(const std::string& dtype, const std::vector<int64_t>& shape);

// A variant on lowering `path` with the given launch shape.
Variant TestVariant(const std::string& path, int threads = 128, int stages = 1);

// A complete, valid copy record (sm_90, f16) whose winner lowers through `winner_path`
// in `median_us`, with two losing candidates (one OK, one COMPILE_ERROR) and provenance.
TuningRecord TestRecord(const std::string& device_name, const std::vector<int64_t>& shape,
                        double median_us, const std::string& winner_path = "tma");

// A complete, valid im2col record on "NVIDIA H200".
TuningRecord TestIm2colRecord(double median_us);

// A valid database (current schema, trailer set) of `copy_records` copy records
// with distinct shapes and one im2col record.
TuningDatabase TestDatabase(int copy_records);

}  // namespace tuning
}  // namespace tiletune

#endif  // COMPILER_TUNING_DB_TUNING_DB_TEST_UTIL_H_

// Runs the libFuzzer entry point of tuning_db_fuzz.cc over a deterministic corpus of
// mutated databases, so the fuzz target's checks run in every `bazel test`. The entry
// point traps (failing this test) when the reader crashes or accepts a database that does
// not round-trip.
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "compiler/tuning_db/tuning_db.h"
#include "compiler/tuning_db/tuning_db_test_util.h"
#include "gtest/gtest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace tiletune {
namespace tuning {
namespace {

int Fuzz(const std::string& bytes) {
  return LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

std::vector<std::string> Seeds() {
  const TuningDatabase database = TestDatabase(1);  // a copy and an im2col record
  return {*SerializeTuningDatabase(database, DatabaseFormat::kBinary),
          *SerializeTuningDatabase(database, DatabaseFormat::kText)};
}

bool Accepted(const std::string& bytes, DatabaseFormat format) {
  return ParseTuningDatabase(bytes, format, "seed").ok();
}

TEST(TuningDbFuzzTest, SeedsAreValidDatabases) {
  const std::vector<std::string> seeds = Seeds();
  EXPECT_TRUE(Accepted(seeds[0], DatabaseFormat::kBinary));
  EXPECT_TRUE(Accepted(seeds[1], DatabaseFormat::kText));
  for (const std::string& seed : seeds) Fuzz(seed);
}

TEST(TuningDbFuzzTest, Truncations) {
  for (const std::string& seed : Seeds()) {
    for (size_t size = 0; size <= seed.size(); ++size) Fuzz(seed.substr(0, size));
  }
}

TEST(TuningDbFuzzTest, BitFlipsAndByteChanges) {
  std::mt19937 generator(20261130);
  int accepted = 0, rejected = 0;
  for (const std::string& seed : Seeds()) {
    const DatabaseFormat format = seed[0] == '#' ? DatabaseFormat::kText : DatabaseFormat::kBinary;
    for (size_t i = 0; i < seed.size(); ++i) {
      std::string flipped = seed;
      flipped[i] = static_cast<char>(flipped[i] ^ (1 << (generator() % 8)));
      Fuzz(flipped);
      (Accepted(flipped, format) ? accepted : rejected) += 1;
    }
    for (int round = 0; round < 300; ++round) {
      std::string mutated = seed;
      const int changes = 1 + generator() % 4;
      for (int c = 0; c < changes; ++c) {
        const size_t at = generator() % mutated.size();
        switch (generator() % 4) {
          case 0:
            mutated[at] = static_cast<char>(generator());
            break;
          case 1:
            mutated.erase(at, 1 + generator() % 8);
            break;
          case 2:
            mutated.insert(at, mutated.substr(generator() % mutated.size(), 16));
            break;
          case 3:
            mutated.insert(at, 1, static_cast<char>(generator()));
            break;
        }
        if (mutated.empty()) mutated = "x";
      }
      Fuzz(mutated);
    }
  }
  // Some flips land in numbers or text and leave a valid database; most break it. Both
  // kinds must have been exercised for the corpus to mean anything.
  EXPECT_GT(accepted, 0);
  EXPECT_GT(rejected, accepted);
}

TEST(TuningDbFuzzTest, HostileInputs) {
  Fuzz("");
  Fuzz(std::string(1, '\0'));
  Fuzz(std::string(100000, '\xff'));
  Fuzz(std::string(100000, '{'));
  std::string nested;
  for (int i = 0; i < 200; ++i) nested += "records { device { ";
  Fuzz(nested);
  // A length prefix far beyond the input.
  Fuzz(std::string("\x12\xff\xff\xff\xff\x0f", 6));
  Fuzz("schema_version: 99999999999999999999\n");
  Fuzz("schema_version: 1 record_count: 18446744073709551615\n");
}

}  // namespace
}  // namespace tuning
}  // namespace tiletune

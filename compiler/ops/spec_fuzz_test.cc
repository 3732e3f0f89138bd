// spec_fuzz.cc's entry point over its corpus and over single-byte mutations of each
// corpus spec, in every `bazel test` (libFuzzer runs it for real in .ci/fuzz.sh).
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gtest/gtest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

void Feed(const std::string& input) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

TEST(SpecFuzzTest, CorpusAndMutationsNeverTrap) {
  const char* files[] = {"dense", "region", "region_open", "im2col", "col2im", "nested",
                         "long", "duplicate"};
  int ran = 0;
  for (const char* name : files) {
    std::ifstream in(std::string("compiler/ops/fuzz_corpus/") + name, std::ios::binary);
    ASSERT_TRUE(in) << name;
    const std::string spec((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    Feed(spec);
    // Every byte replaced by each of the characters the grammar gives meaning to.
    for (size_t i = 0; i < spec.size() && i < 64; ++i) {
      for (char c : std::string(":,[]x=-0918")) {
        std::string mutated = spec;
        mutated[i] = c;
        Feed(mutated);
        ++ran;
      }
      Feed(spec.substr(0, i));
    }
  }
  EXPECT_GT(ran, 1000);
}

}  // namespace

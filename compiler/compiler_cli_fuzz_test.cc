// Runs the compiler CLI's fuzz entry point over a deterministic corpus: valid copy and
// im2col command lines, each mutated by byte flips, truncations, duplications and
// splices. The entry point aborts (failing this test) on a crash, an unexpected exit code
// or a multi-line rejection.
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace tiletune {
namespace {

void RunInput(const std::string& input) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

TEST(CompilerCliFuzzTest, MutatedCommandLinesNeverCrash) {
  const std::vector<std::string> seeds = {
      "--op=copy\n--dtype=f16\n--shape=8192,8192\n--tile=128,128\n--target=sm_90a\n"
      "--prefer_instruction=tma\n--eviction_policy=evict_first",
      "--op=copy\n--dtype=u8\n--shape=77,150\n--tile=8,64\n--target=sm_80\n--stages=3\n"
      "--src_shape=80,160\n--src_offset=1,2\n--loop_layout=4x32",
      "--op=copy\n--dtype=bf16\n--shape=1000,48\n--tile=4096\n--target=sm_90a\n--ctas_per_sm=2",
      "--op=im2col\n--dtype=f16\n--shape=64,56,56,64\n--kernel=3\n--stride=1\n--dilation=1\n"
      "--pad=1\n--tile=128,64\n--target=sm_90a",
      "--op=im2col\n--dtype=f32\n--shape=2,11,10,48\n--kernel=3,2\n--stride=2,1\n"
      "--dilation=1,2\n--pad=1,1\n--tile=64,96\n--target=sm_75\n"
      "--annotations=img_eviction_policy=evict_last,col_eviction_policy=evict_first",
  };
  std::mt19937 rng(20261130);
  const std::string alphabet = "0123456789,=-x\n abcdefghijklmnopqrstuvwxyz_";
  int runs = 0;
  for (const std::string& seed : seeds) {
    RunInput(seed);
    for (int i = 0; i < 40000; ++i) {
      std::string input = seed;
      int edits = 1 + rng() % 4;
      for (int e = 0; e < edits && !input.empty(); ++e) {
        size_t at = rng() % input.size();
        switch (rng() % 5) {
          case 0: input[at] = alphabet[rng() % alphabet.size()]; break;
          case 1: input.resize(at); break;
          case 2: input.insert(at, input.substr(at, rng() % 12)); break;
          case 3: input.insert(at, std::to_string(rng())); break;
          default: input.insert(at, seeds[rng() % seeds.size()].substr(0, rng() % 40)); break;
        }
      }
      RunInput(input);
      ++runs;
    }
  }
  EXPECT_EQ(runs, 200000);
}

}  // namespace
}  // namespace tiletune

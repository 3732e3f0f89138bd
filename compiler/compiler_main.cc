// bazel run //compiler -- --op=copy --dtype=f16 --shape=8192,8192 --tile=128,128
//     --target=sm_90a --prefer_instruction=tma --eviction_policy=evict_first --emit=plan
#include <iostream>
#include <string>
#include <vector>

#include "compiler/compiler_cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return tiletune::RunCompilerCli(args, std::cout, std::cerr);
}

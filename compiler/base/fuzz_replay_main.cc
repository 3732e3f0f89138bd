// The main() of a tt_fuzz_binary built without libFuzzer (gcc): runs
// LLVMFuzzerTestOneInput once over each file named on the command line, or over each file
// of a named folder, the way a libFuzzer binary replays a corpus or a crash file.
//
//   bazel run //compiler/tuning_db:tuning_db_fuzz -- $PWD/compiler/tuning_db/fuzz_corpus
#include <dirent.h>
#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<std::string> Inputs(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) return {path};
  std::vector<std::string> files;
  if (DIR* dir = opendir(path.c_str())) {
    while (dirent* entry = readdir(dir)) {
      const std::string name = entry->d_name;
      if (name != "." && name != "..") files.push_back(path + "/" + name);
    }
    closedir(dir);
  }
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h" || arg == "-help=1") {
      std::printf(
          "usage: %s FILE_OR_FOLDER...\n\nRuns the fuzz target once over each file named, or "
          "over each file of each folder\nnamed (a corpus or a crash file), as a libFuzzer "
          "binary replays them. Built with\nclang (.ci/fuzz.sh) it is a libFuzzer binary "
          "instead, with its own flags (-help=1).\n\nexit codes: 0 every input ran; 2 an "
          "input could not be read\n",
          argv[0]);
      return 0;
    }
  }
  int ran = 0;
  for (int i = 1; i < argc; ++i) {
    for (const std::string& file : Inputs(argv[i])) {
      std::ifstream in(file, std::ios::binary);
      if (!in) {
        std::fprintf(stderr, "%s: cannot read %s\n", argv[0], file.c_str());
        return 2;
      }
      const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ++ran;
    }
  }
  std::fprintf(stderr, "%s: %d input(s) ran without a crash\n", argv[0], ran);
  return 0;
}

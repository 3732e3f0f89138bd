// A main() for tuning_db_fuzz when libFuzzer is not linked (gcc builds): runs
// LLVMFuzzerTestOneInput once over each file named on the command line, or over each file
// in a named folder, the way a libFuzzer binary replays a corpus.
//
//   bazel run //autotune:tuning_db_fuzz -- $PWD/corpus $PWD/crash-1234
#include <dirent.h>
#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/tuning_db/atomic_file.h"

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
  int ran = 0;
  for (int i = 1; i < argc; ++i) {
    for (const std::string& file : Inputs(argv[i])) {
      absl::StatusOr<std::string> bytes = tiletune::tuning::ReadFileToString(file);
      if (!bytes.ok()) {
        std::fprintf(stderr, "tuning_db_fuzz: %s\n", std::string(bytes.status().message()).c_str());
        return 2;
      }
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size());
      ++ran;
    }
  }
  std::printf("tuning_db_fuzz: %d inputs ran without a failure\n", ran);
  return 0;
}

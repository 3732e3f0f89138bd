#include "kernels/prebuilt.h"

#include <mutex>
#include <vector>

namespace tiletune {
namespace {

// Function-local so that registration from other translation units' static initializers
// never sees it unconstructed.
std::vector<const PrebuiltKernelSet*>& Registry(std::mutex** mutex) {
  static std::mutex* const lock = new std::mutex;
  static std::vector<const PrebuiltKernelSet*>* const sets =
      new std::vector<const PrebuiltKernelSet*>;
  *mutex = lock;
  return *sets;
}

}  // namespace

bool RegisterPrebuiltKernelSet(const PrebuiltKernelSet* set) {
  std::mutex* mutex = nullptr;
  std::vector<const PrebuiltKernelSet*>& sets = Registry(&mutex);
  std::lock_guard<std::mutex> lock(*mutex);
  sets.push_back(set);
  return true;
}

std::vector<const PrebuiltKernelSet*> PrebuiltKernelSets() {
  std::mutex* mutex = nullptr;
  std::vector<const PrebuiltKernelSet*>& sets = Registry(&mutex);
  std::lock_guard<std::mutex> lock(*mutex);
  return sets;
}

}  // namespace tiletune

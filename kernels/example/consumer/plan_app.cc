// A copy of a 4096 x 4000 slice of a 4096 x 4096 f16 buffer through the slim Plan API.
// Without a GPU it prints why on one line and exits 1.
#include <cstdio>

#include "absl/status/statusor.h"
#include "kernels/tiletune.h"

int main() {
  tiletune::CopyDesc copy;
  copy.dtype = tiletune::DType::kF16;
  copy.src = {{4096, 4096}, {0, 48}, {4096, 4000}};
  copy.dst = {{4096, 4000}};
  absl::StatusOr<tiletune::Plan> plan = tiletune::Plan::Create(copy);
  if (!plan.ok()) {
    std::fprintf(stderr, "plan_app: %s\n", std::string(plan.status().message()).c_str());
    return 1;
  }
  std::printf("plan_app: %s kernel %s (%s)\n", plan->info().level.c_str(),
              plan->info().kernel_name.c_str(), plan->info().detail.c_str());
  return 0;
}

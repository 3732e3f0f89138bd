#include "kernels/emulate/gpu_test_emulation.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "compiler/base/status_macros.h"
#include "kernels/emulate/host_emulator.h"
#include "kernels/runtime/gpu_test_util.h"

namespace tiletune {

bool EmulatingGpuTests() {
  const char* emulate = std::getenv("TILETUNE_EMULATE_GPU_TESTS");
  if (emulate == nullptr || std::strcmp(emulate, "1") != 0 || GpuRequired()) return false;
  static const bool no_gpu = absl::IsUnavailable(TestContext().status());
  return no_gpu;
}

absl::Status VerifyEmulated(const TileOpDefinition& definition,
                            std::shared_ptr<const LoweredTileKernel> lowered, const TileOp& op,
                            std::mt19937_64& rng, int runs) {
  std::string source = definition.Emit(*lowered).text;
  std::vector<HostKernel> kernels;
  kernels.push_back(HostKernel{std::move(lowered), std::move(source)});
  TT_ASSIGN_OR_RETURN(std::unique_ptr<HostEmulator> emulator,
                      HostEmulator::Create(std::move(kernels), {}));
  for (int run = 0; run < runs; ++run) TT_RETURN_IF_ERROR(emulator->Verify(0, definition, op, rng));
  return absl::OkStatus();
}

}  // namespace tiletune

#include "kernels/runtime/gpu_test_util.h"

#include <dlfcn.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "compiler/base/status_macros.h"
#include "kernels/runtime/runtime.h"

namespace tiletune {

absl::StatusOr<std::unique_ptr<Context>> TestContext() {
  int ordinal = 0;
  if (const char* chosen = std::getenv("TILETUNE_TEST_DEVICE")) {
    if (!absl::SimpleAtoi(chosen, &ordinal)) {
      return absl::InvalidArgumentError(
          absl::StrCat("TILETUNE_TEST_DEVICE='", chosen, "' is not a device ordinal"));
    }
  }
  TT_ASSIGN_OR_RETURN(int count, DeviceCount());
  if (count == 0) return absl::UnavailableError("the driver sees no CUDA device");
  return Context::Create(ordinal);
}

bool GpuRequired() {
  const char* required = std::getenv("TILETUNE_REQUIRE_GPU");
  return required != nullptr && std::string(required) == "1";
}

bool TestDriver::Load() {
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (cuda == nullptr) return false;
  auto get = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(cuda, name));
    return fn != nullptr;
  };
  return get(ctx_create, "cuCtxCreate_v2") && get(ctx_destroy, "cuCtxDestroy_v2") &&
         get(stream_create, "cuStreamCreate") && get(stream_destroy, "cuStreamDestroy_v2") &&
         get(begin_capture, "cuStreamBeginCapture_v2") && get(end_capture, "cuStreamEndCapture") &&
         get(instantiate, "cuGraphInstantiateWithFlags") && get(launch_graph, "cuGraphLaunch") &&
         get(destroy_graph, "cuGraphDestroy") && get(destroy_exec, "cuGraphExecDestroy");
}

}  // namespace tiletune

// The kernels of :baked_kernels are in this binary: the library resolves them without a GPU
// or a compiler (Explain), then launches one. Without a GPU the launch fails on one line
// and the program exits 1.
#include <cstdio>
#include <memory>

#include "absl/status/statusor.h"
#include "compiler/ir/buffer.h"
#include "compiler/ops/copy/copy_op.h"
#include "compiler/tuning_db/tuning_db.pb.h"
#include "kernels/library.h"

int main() {
  tiletune::LibraryOptions options;
  options.jit = false;  // Only what was baked.
  absl::StatusOr<std::unique_ptr<tiletune::Library>> library = tiletune::Library::Create(options);
  if (!library.ok()) {
    std::fprintf(stderr, "baked_app: %s\n", std::string(library.status().message()).c_str());
    return 1;
  }
  using tiletune::Buffer;
  const Buffer src = Buffer::RowMajor("src", tiletune::DataType::kF16, tiletune::Scope::kGlobal, {8192, 8192});
  const Buffer dst = Buffer::RowMajor("dst", tiletune::DataType::kF16, tiletune::Scope::kGlobal, {8192, 8192});
  const tiletune::CopyOp copy(tiletune::Region::Whole(src), tiletune::Region::Whole(dst));
  tiletune::tuning::DeviceIdentity h200;
  h200.set_name("NVIDIA H200");
  h200.set_cc_major(9);
  absl::StatusOr<tiletune::Explanation> explained = (*library)->Explain(copy, h200);
  if (!explained.ok() || !explained->prebuilt) {
    std::fprintf(stderr, "baked_app: copy f16 [8192, 8192] is not served by a baked kernel: %s\n",
                 explained.ok() ? explained->detail.c_str()
                                : std::string(explained.status().message()).c_str());
    return 2;
  }
  std::printf("baked_app: copy f16 [8192, 8192] on an H200: baked %s kernel %s\n",
              explained->prebuilt_arch.c_str(), explained->kernel_name.c_str());
  absl::Status launched = (*library)->Launch(copy, 0, 0, nullptr);
  if (!launched.ok()) {
    std::fprintf(stderr, "baked_app: %s\n", std::string(launched.message()).c_str());
    return 1;
  }
  return 0;
}

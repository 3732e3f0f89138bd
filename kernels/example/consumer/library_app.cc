// The full API: an op of the IR through tiletune::Library (what it resolves to for this
// GPU, then a launch). Without a GPU it prints why on one line and exits 1.
#include <cstdio>
#include <memory>

#include "absl/status/statusor.h"
#include "compiler/ir/buffer.h"
#include "compiler/ops/copy/copy_op.h"
#include "kernels/library.h"

int main() {
  using tiletune::Buffer;
  const Buffer src = Buffer::RowMajor("src", tiletune::DataType::kF16, tiletune::Scope::kGlobal, {300, 4097});
  const Buffer dst = Buffer::RowMajor("dst", tiletune::DataType::kF16, tiletune::Scope::kGlobal, {300, 3997});
  const tiletune::CopyOp copy(tiletune::Region::Box(src, {0, 3}, {300, 3997}),
                              tiletune::Region::Whole(dst));
  absl::StatusOr<tiletune::LaunchInfo> info = [&]() -> absl::StatusOr<tiletune::LaunchInfo> {
    absl::StatusOr<tiletune::Library*> library = tiletune::DefaultLibrary();
    if (!library.ok()) return library.status();
    return (*library)->Inspect(copy);
  }();
  if (!info.ok()) {
    std::fprintf(stderr, "library_app: %s\n", std::string(info.status().message()).c_str());
    return 1;
  }
  std::printf("library_app: %s kernel %s\n", info->codegen.c_str(), info->kernel_name.c_str());
  return 0;
}

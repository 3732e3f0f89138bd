// Generated CUDA kernels rewritten as host C++, for the host emulator (host_emulator.h).
//
//   std::string library = HostLibraryPrelude();
//   TT_ASSIGN_OR_RETURN(std::string kernel,
//                       HostKernelText(source.text, lowered.kernel_name, "tt_emu_entry_0"));
//   library += kernel;  // compiled with the host's C++ compiler into a shared library
//
// The rewrite is textual and knows the constructs tiletune's emitters use:
//   - every `asm [volatile] (template : outputs : inputs : clobbers)` becomes a call that
//     hands the template and operands to the emulator's PTX interpreter;
//   - `extern __shared__` arrays and static `__shared__` variables become references
//     into the block's emulated shared memory;
//   - the kernel keeps its body; an extern "C" entry `entry(void** args)` calls it with
//     the launch's argument pointers, as cuLaunchKernel would.
// Each kernel is wrapped in its own namespace, so one library holds many kernels.
#ifndef KERNELS_EMULATE_HOST_SOURCE_H_
#define KERNELS_EMULATE_HOST_SOURCE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tiletune {

// What a host kernel library starts with, once: the shared declarations (host_abi.h),
// CUDA's keywords and built-ins as host C++, and the helpers the rewritten asm and
// __shared__ declarations call.
std::string HostLibraryPrelude();

// `cuda` (one kernel's generated source) as host C++ in namespace `entry`_ns, with an
// extern "C" function `entry(void** args)` that runs kernel `kernel_name` for the current
// thread, and `entry_params()` returning how many arguments it takes. InvalidArgument
// naming what it cannot rewrite: an unbalanced asm statement, a read-write ('+') operand,
// asm spelled __asm__, a #define (kernels share a translation unit), a kernel it cannot
// find.
absl::StatusOr<std::string> HostKernelText(absl::string_view cuda, absl::string_view kernel_name,
                                           absl::string_view entry);

}  // namespace tiletune

#endif  // KERNELS_EMULATE_HOST_SOURCE_H_

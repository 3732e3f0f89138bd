// Kernels compiled at build time (the tiletune_kernels rule, kernels/tiletune_kernels.bzl)
// and linked into the program: each generated library registers one set, the records it
// was baked from and a CUBIN per kernel, from a static initializer. The library
// (kernels/library.h) resolves those records first and loads a registered CUBIN instead
// of compiling, so a baked problem needs no NVRTC, no file and no environment variable.
//
// This header is what generated code includes: plain data, no protobuf, no IR.
#ifndef KERNELS_PREBUILT_H_
#define KERNELS_PREBUILT_H_

#include <cstddef>
#include <vector>

namespace tiletune {

struct PrebuiltKernelImage {
  // The architecture the CUBIN is for ("sm_90a").
  const char* arch;
  // SHA-256 (hex) of the kernel's CUDA source, naming the kernel.
  const char* source_sha256;
  // The kernel's CUDA source: the library emits the source of its resolved variant and
  // loads the image of the same text (a hash-map lookup, no digest at run time).
  const char* source;
  // The kernel's entry point in the image ("tt_copy_cp_async").
  const char* kernel_name;
  const unsigned char* cubin;
  size_t cubin_size;
};

struct PrebuiltKernelSet {
  // The rule's name ("//kernels/example:resnet_kernels").
  const char* name;
  // The records baked, as a text-format tuning database.
  const char* database_text;
  const PrebuiltKernelImage* images;
  size_t image_count;
};

// Adds `set` (which must live for the program) to the registry; returns true so that a
// static initializer can call it.
bool RegisterPrebuiltKernelSet(const PrebuiltKernelSet* set);

// Every registered set, in registration order.
std::vector<const PrebuiltKernelSet*> PrebuiltKernelSets();

}  // namespace tiletune

#endif  // KERNELS_PREBUILT_H_

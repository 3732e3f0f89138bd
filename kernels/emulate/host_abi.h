// What a kernel compiled for the host emulator and the emulator share: the declarations
// below are compiled into both, the emulator's C++ and (as text, kHostAbiText) the prelude
// of every host kernel library. Plain C types only: the library is built by another
// compiler invocation than the emulator, and they meet through dlopen.
#ifndef KERNELS_EMULATE_HOST_ABI_H_
#define KERNELS_EMULATE_HOST_ABI_H_

#define TT_HOST_ABI_DECLARATIONS                                                          \
  enum tt_emu_scope { tt_emu_block, tt_emu_warp };                                        \
  struct tt_emu_dim3 {                                                                    \
    unsigned x, y, z;                                                                     \
  };                                                                                      \
  /* The running CUDA thread: threadIdx, blockIdx, blockDim, gridDim read this. */        \
  struct tt_emu_thread {                                                                  \
    tt_emu_dim3 thread_idx, block_idx, block_dim, grid_dim;                               \
  };                                                                                      \
  /* One operand of an inline PTX statement: an output's address and size, or an input's  \
     bits (pointers as addresses, floats as their bit pattern). */                        \
  struct tt_emu_operand {                                                                 \
    void* out;                                                                            \
    unsigned long long in;                                                                \
    int bytes;                                                                            \
  };                                                                                      \
  /* What the kernel calls in the emulator. */                                            \
  struct tt_emu_host {                                                                    \
    /* Runs one asm statement: its template as written, its operands, outputs first. */   \
    void (*run_asm)(const char* text, tt_emu_operand* operands, int outputs, int count);  \
    /* __syncthreads and __syncwarp. */                                                   \
    void (*sync)(tt_emu_scope scope);                                                     \
    /* The block's dynamic shared memory, and a static __shared__ variable's storage (the \
       same for every thread of the block: each declares them in the same order). */      \
    void* (*dynamic_shared)();                                                            \
    void* (*static_shared)(unsigned long long bytes, unsigned long long align);           \
    /* __cvta_generic_to_shared. */                                                       \
    unsigned (*shared_address)(const void* pointer);                                      \
  };                                                                                      \
  /* Each kernel's entry runs the kernel with the launch's argument pointers; its         \
     <entry>_params() says how many it takes. */

#define TT_HOST_ABI_STRINGIFY2(...) #__VA_ARGS__
#define TT_HOST_ABI_STRINGIFY(...) TT_HOST_ABI_STRINGIFY2(__VA_ARGS__)

namespace tiletune {
namespace host_abi {
TT_HOST_ABI_DECLARATIONS
}  // namespace host_abi

// The declarations above as text, for a host kernel library's prelude.
inline constexpr char kHostAbiText[] = TT_HOST_ABI_STRINGIFY(TT_HOST_ABI_DECLARATIONS);

// The symbols every host kernel library defines: the running thread (set before each
// switch to a thread) and the emulator's entry points (set once after loading).
inline constexpr char kCurrentThreadSymbol[] = "tt_emu_current";
inline constexpr char kHostApiSymbol[] = "tt_emu_host_api";

}  // namespace tiletune

#endif  // KERNELS_EMULATE_HOST_ABI_H_

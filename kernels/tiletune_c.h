/* tiletune's C API: the slim Plan API (kernels/tiletune.h) for C, Python (ctypes) and
 * any other language with a C foreign-function interface. Plain C, opaque handles, no
 * C++ type crosses it; every call returns a status code, and the message of the calling
 * thread's last failure is tt_last_error().
 *
 *   tt_copy_desc copy = {0};
 *   copy.dtype = TT_F16;
 *   copy.src.rank = 2;  copy.src.shape[0] = 4096;  copy.src.shape[1] = 4096;
 *   copy.dst.rank = 2;  copy.dst.shape[0] = 4096;  copy.dst.shape[1] = 4096;
 *   tt_plan* plan = NULL;
 *   if (tt_plan_create_copy(&copy, &plan) != TT_OK) fprintf(stderr, "%s\n", tt_last_error());
 *   tt_plan_execute(plan, src_ptr, dst_ptr, stream);   // CUdeviceptr values, a CUstream
 *   tt_plan_destroy(plan);
 *
 * A plan is bound to the CUDA context current on the thread that creates it (device 0's
 * primary context when none is); tt_plan_execute takes streams of that context or 0.
 * Plans are immutable: threads share one freely, and execution can be captured in a
 * CUDA graph. Shipped in libtiletune.so, which exports these symbols only. */
#ifndef KERNELS_TILETUNE_C_H_
#define KERNELS_TILETUNE_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when a struct below or a function's meaning changes. */
#define TT_ABI_VERSION 3

typedef enum {
  TT_OK = 0,
  TT_INVALID_ARGUMENT = 1, /* a bad descriptor, pointer or stream; the message names it */
  TT_NO_GPU = 2,           /* no CUDA driver or no usable GPU */
  TT_UNIMPLEMENTED = 3,    /* nothing serves this problem (e.g. compiling is off) */
  TT_OUT_OF_MEMORY = 4,
  TT_INTERNAL = 5          /* a failure inside tiletune or the driver */
} tt_status;

typedef enum {
  TT_F64 = 0,
  TT_F32 = 1,
  TT_F16 = 2,
  TT_BF16 = 3,
  TT_F8E4M3 = 4,
  TT_I32 = 5,
  TT_I8 = 6,
  TT_U8 = 7
} tt_dtype;

#define TT_MAX_RANK 5

/* A region of a dense row-major buffer: the whole buffer's shape (outermost first), where
 * the region starts, and its extents (all zero: the whole buffer from `offsets`). */
typedef struct {
  int32_t rank;
  int64_t shape[TT_MAX_RANK];
  int64_t offsets[TT_MAX_RANK];
  int64_t extents[TT_MAX_RANK];
} tt_region;

/* Copies src's region into dst's (the same extents); dst.rank 0: a dense buffer of the
 * region's extents. */
typedef struct {
  tt_dtype dtype;
  tt_region src;
  tt_region dst;
} tt_copy_desc;

/* The image's and the column matrix's layout: NHWC, columns [N*OH*OW, KH*KW*C]; NCHW,
 * columns [N, C*KH*KW, OH*OW], PyTorch's F.unfold output and F.fold input (col2im then sums
 * each pixel's taps in F.fold's order). */
typedef enum { TT_LAYOUT_NHWC = 0, TT_LAYOUT_NCHW = 1 } tt_layout;

/* im2col of a dense image into its column matrix, and col2im, its adjoint (the image
 * summed back from such a matrix); n, h, w, c are the image's extents in either layout. */
typedef struct {
  tt_dtype dtype;
  int64_t n, h, w, c;
  int64_t kh, kw;
  int64_t stride_h, stride_w;
  int64_t dilation_h, dilation_w;
  int64_t pad_h, pad_w;
  tt_layout layout;
} tt_conv_desc;

/* Many items in one launch, listed at execution in a device table of int64 entries:
 * blocks (regions 0), pairs (source item, destination item) of `item` elements each between
 * pools of src_items and dst_items items (0: count), the paged-KV block mapping; regions
 * (regions 1), triples (source element offset, destination element offset, elements), items
 * of up to `item` elements. `count` is the count tuning measures; tt_plan_execute_items
 * passes its own. Entries outside the pools are skipped; destinations must not overlap. */
typedef struct {
  tt_dtype dtype;
  int32_t regions;
  int64_t count;
  int64_t item;
  int64_t src_items;
  int64_t dst_items;
} tt_batch_copy_desc;

typedef struct tt_plan tt_plan;

/* "tiletune 0.3.0", and TT_ABI_VERSION of the library (compare with the header's). */
const char* tt_version(void);
int tt_abi_version(void);

/* The message of this thread's last failing call ("" when none failed). Valid until the
 * thread's next tiletune call. */
const char* tt_last_error(void);

tt_status tt_plan_create_copy(const tt_copy_desc* desc, tt_plan** plan);
tt_status tt_plan_create_im2col(const tt_conv_desc* desc, tt_plan** plan);
tt_status tt_plan_create_col2im(const tt_conv_desc* desc, tt_plan** plan);
tt_status tt_plan_create_batch_copy(const tt_batch_copy_desc* desc, tt_plan** plan);

/* Launches on `stream` (a CUstream of the plan's context, or NULL). `input` and `output`
 * are device addresses of the op's whole buffers (copy: src, dst; im2col: image, matrix;
 * col2im: matrix, image). */
tt_status tt_plan_execute(const tt_plan* plan, uint64_t input, uint64_t output, void* stream);

/* A batch_copy plan: the first `count` entries of the device item table at `table` (8-byte
 * aligned), between the pools at `input` and `output`; count 0 launches nothing.
 * tt_plan_execute refuses a batch_copy plan, and this call the others. */
tt_status tt_plan_execute_items(const tt_plan* plan, uint64_t input, uint64_t output,
                                uint64_t table, int64_t count, void* stream);

/* What a plan runs: "level" (exact, nearest or heuristic), "detail" (why), "kernel" (its
 * name), "prebuilt" ("1" when baked into the program). NULL for another key. Valid for
 * the plan's life. */
const char* tt_plan_info(const tt_plan* plan, const char* key);

/* The CUcontext the plan is bound to. */
void* tt_plan_context(const tt_plan* plan);

void tt_plan_destroy(tt_plan* plan);

#ifdef __cplusplus
}
#endif

#endif /* KERNELS_TILETUNE_C_H_ */

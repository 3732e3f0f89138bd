/* The C API compiled as C: the version, every argument
 * check and error message, and (on a machine with no GPU, as CI's) the no-GPU error. With
 * a GPU (TILETUNE_REQUIRE_GPU=1) a plan is made, described and executed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/tiletune_c.h"

static int failures = 0;

#define EXPECT(cond, ...)                                      \
  do {                                                         \
    if (!(cond)) {                                             \
      fprintf(stderr, "%s:%d: FAILED: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                            \
      fprintf(stderr, "\n");                                   \
      ++failures;                                              \
    }                                                          \
  } while (0)

static int contains(const char* text, const char* part) { return strstr(text, part) != NULL; }

int main(void) {
  EXPECT(strncmp(tt_version(), "tiletune ", 9) == 0, "version %s", tt_version());
  EXPECT(tt_abi_version() == TT_ABI_VERSION, "abi %d", tt_abi_version());
  EXPECT(strcmp(tt_last_error(), "") == 0, "no call failed yet: '%s'", tt_last_error());

  tt_plan* plan = (tt_plan*)0x1;
  EXPECT(tt_plan_create_copy(NULL, &plan) == TT_INVALID_ARGUMENT, "null desc");
  EXPECT(contains(tt_last_error(), "must not be NULL"), "%s", tt_last_error());

  tt_copy_desc copy;
  memset(&copy, 0, sizeof(copy));
  copy.dtype = (tt_dtype)42;
  copy.src.rank = 1;
  copy.src.shape[0] = 64;
  EXPECT(tt_plan_create_copy(&copy, &plan) == TT_INVALID_ARGUMENT, "bad dtype");
  EXPECT(contains(tt_last_error(), "dtype 42 is not a tt_dtype"), "%s", tt_last_error());
  EXPECT(plan == NULL, "a failed create leaves NULL");

  copy.dtype = TT_F16;
  copy.src.rank = 9;
  EXPECT(tt_plan_create_copy(&copy, &plan) == TT_INVALID_ARGUMENT, "bad rank");
  EXPECT(contains(tt_last_error(), "src.rank is 9; accepted are 1 to 5"), "%s", tt_last_error());

  copy.src.rank = 2;
  copy.src.shape[0] = 64;
  copy.src.shape[1] = -3;
  EXPECT(tt_plan_create_copy(&copy, &plan) == TT_INVALID_ARGUMENT, "negative extent");
  EXPECT(contains(tt_last_error(), "-3"), "names the value: %s", tt_last_error());

  tt_conv_desc conv;
  memset(&conv, 0, sizeof(conv));
  conv.dtype = TT_F16;
  conv.n = 1; conv.h = 8; conv.w = 8; conv.c = 16;
  conv.kh = 3; conv.kw = 3;
  conv.stride_h = conv.stride_w = 0;
  conv.dilation_h = conv.dilation_w = 1;
  EXPECT(tt_plan_create_im2col(&conv, &plan) == TT_INVALID_ARGUMENT, "stride 0");
  EXPECT(contains(tt_last_error(), "stride"), "%s", tt_last_error());
  conv.stride_h = conv.stride_w = 1;
  conv.layout = (tt_layout)5;
  EXPECT(tt_plan_create_col2im(&conv, &plan) == TT_INVALID_ARGUMENT, "layout 5");
  EXPECT(contains(tt_last_error(), "layout 5"), "%s", tt_last_error());
  conv.layout = TT_LAYOUT_NCHW;

  tt_batch_copy_desc batch;
  memset(&batch, 0, sizeof(batch));
  batch.dtype = TT_F16;
  batch.count = 10;
  batch.item = 16384;
  batch.regions = 2;
  EXPECT(tt_plan_create_batch_copy(&batch, &plan) == TT_INVALID_ARGUMENT, "regions 2");
  EXPECT(contains(tt_last_error(), "regions is 2"), "%s", tt_last_error());
  batch.regions = 0;
  batch.dst_items = 5;
  EXPECT(tt_plan_create_batch_copy(&batch, &plan) == TT_INVALID_ARGUMENT, "count over pool");
  EXPECT(contains(tt_last_error(), "count (items per launch) 10: accepted are 1 to 5"), "%s",
         tt_last_error());
  EXPECT(tt_plan_create_batch_copy(NULL, &plan) == TT_INVALID_ARGUMENT, "null batch desc");
  EXPECT(tt_plan_execute_items(NULL, 1, 1, 8, 1, NULL) == TT_INVALID_ARGUMENT, "null plan");

  EXPECT(tt_plan_execute(NULL, 1, 1, NULL) == TT_INVALID_ARGUMENT, "null plan");
  EXPECT(tt_plan_info(NULL, "level") == NULL, "info of null");

  /* A valid problem: a plan with a GPU, the no-GPU error without one. */
  copy.src.shape[1] = 64;
  tt_status made = tt_plan_create_copy(&copy, &plan);
  const char* require = getenv("TILETUNE_REQUIRE_GPU");
  if (made == TT_NO_GPU) {
    EXPECT(require == NULL || strcmp(require, "1") != 0, "a GPU was required: %s", tt_last_error());
    EXPECT(strlen(tt_last_error()) > 0, "the no-GPU error has a message");
    printf("no GPU: %s\n", tt_last_error());
  } else {
    EXPECT(made == TT_OK, "create: %d %s", (int)made, tt_last_error());
    if (made == TT_OK) {
      EXPECT(tt_plan_info(plan, "level") != NULL, "level");
      EXPECT(tt_plan_info(plan, "kernel") != NULL, "kernel");
      EXPECT(tt_plan_info(plan, "nonsense") == NULL, "unknown key");
      EXPECT(tt_plan_execute(plan, 0, 16, NULL) == TT_INVALID_ARGUMENT, "null input");
      EXPECT(contains(tt_last_error(), "input is a null device address"), "%s", tt_last_error());
      printf("plan: %s %s\n", tt_plan_info(plan, "level"), tt_plan_info(plan, "kernel"));
      tt_plan_destroy(plan);
    }
  }
  tt_plan_destroy(NULL);
  if (failures == 0) printf("tiletune_c_test: all checks passed\n");
  return failures == 0 ? 0 : 1;
}

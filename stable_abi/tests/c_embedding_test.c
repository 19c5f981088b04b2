/* A C99 program that embeds the runtime through the public headers only. Built with
 * -std=c99 -pedantic -Werror, it is also the compile test of every public header. */
#include <stdio.h>
#include <string.h>

#include "tessera/c/common.h"
#include "tessera/c/error.h"
#include "tessera/c/op.h"
#include "tessera/c/tensor.h"
#include "tessera/c/tessera.h"

static int failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

static int deleted = 0;
static void count_delete(void* data, void* context) {
  (void)data;
  *(int*)context += 1;
}

static tsr_string str(const char* s) {
  tsr_string out;
  out.data = s;
  out.size = strlen(s);
  return out;
}

/* Calling an op generically with a keyword argument (ABI 1.1): slice.Tensor(self, dim=0,
 * start=None, end=None, step=1) as slice(t, 1, step=2), skipping start and end; then the
 * same through a default placeholder and a view made without an op. */
static void keyword_call(void) {
  const int64_t sizes[2] = {2, 3};
  const tsr_device cpu = {TSR_DEVICE_CPU, 0};
  const float data[6] = {0, 1, 2, 3, 4, 5};
  const int64_t view_sizes[1] = {2}, view_strides[1] = {3};
  float out[4] = {0};
  const tsr_op* slice = NULL;
  tsr_stack* stack = NULL;
  tsr_tensor* t = NULL;
  tsr_tensor* result = NULL;
  tsr_tensor* column = NULL;

  CHECK(tsr_tensor_empty(sizes, 2, TSR_DTYPE_FLOAT32, cpu, &t) == NULL);
  CHECK(tsr_tensor_copy_from_host(t, data, sizeof data) == NULL);
  CHECK(tsr_op_find(str("slice.Tensor"), &slice) == NULL);
  CHECK(tsr_stack_create(&stack) == NULL);
  CHECK(tsr_stack_push_tensor(stack, t) == NULL);
  CHECK(tsr_stack_push_int(stack, 1) == NULL);
  CHECK(tsr_stack_name_next(stack, str("step")) == NULL);
  CHECK(tsr_stack_push_int(stack, 2) == NULL);
  CHECK(tsr_op_call(slice, stack) == NULL);
  CHECK(tsr_stack_get_tensor(stack, 0, &result) == NULL); /* borrowed from the stack */
  CHECK(tsr_tensor_copy_to_host(result, out, sizeof out) == NULL);
  CHECK(out[0] == 0 && out[1] == 2 && out[2] == 3 && out[3] == 5);

  tsr_stack_clear(stack);
  CHECK(tsr_stack_push_tensor(stack, t) == NULL);
  CHECK(tsr_stack_push_int(stack, 1) == NULL);
  CHECK(tsr_stack_push_int(stack, 1) == NULL);  /* start */
  CHECK(tsr_stack_push_default(stack) == NULL); /* end: its default, None */
  CHECK(tsr_stack_push_int(stack, 2) == NULL);  /* step */
  CHECK(tsr_op_call(slice, stack) == NULL);
  CHECK(tsr_stack_get_tensor(stack, 0, &result) == NULL);
  CHECK(tsr_tensor_numel(result) == 2);
  tsr_stack_release(stack);

  /* Column 2 as a view of the same memory: sizes [2], strides [3], storage offset 2. */
  CHECK(tsr_tensor_as_strided(t, view_sizes, view_strides, 1, 2, &column) == NULL);
  CHECK(tsr_tensor_copy_to_host(column, out, 2 * sizeof(float)) == NULL);
  CHECK(out[0] == 2 && out[1] == 5);
  tsr_tensor_release(column);
  tsr_tensor_release(t);
}

int main(void) {
  const int64_t sizes[2] = {2, 3};
  const tsr_device cpu = {TSR_DEVICE_CPU, 0};
  tsr_tensor* t = NULL;
  tsr_error* err = tsr_tensor_empty(sizes, 2, TSR_DTYPE_FLOAT32, cpu, &t);
  float in[6] = {1, 2, 3, 4, 5, 6};
  float out[6] = {0};
  float host[6] = {6, 5, 4, 3, 2, 1};
  const int64_t transposed_strides[2] = {1, 2};
  tsr_tensor* wrapped = NULL;
  tsr_string message;
  char text[256];
  size_t length;

  CHECK(err == NULL);
  CHECK(tsr_tensor_dim(t) == 2);
  CHECK(tsr_tensor_numel(t) == 6);
  CHECK(tsr_tensor_sizes(t)[1] == 3);
  CHECK(tsr_tensor_dtype(t) == TSR_DTYPE_FLOAT32);
  CHECK(tsr_tensor_is_contiguous(t));
  CHECK(tsr_tensor_copy_from_host(t, in, sizeof in) == NULL);
  CHECK(tsr_tensor_copy_to_host(t, out, sizeof out) == NULL);
  CHECK(memcmp(in, out, sizeof in) == 0);
  tsr_tensor_release(t);

  /* Wrapping host memory as a transposed (strided) view; the deleter runs once, at release. */
  CHECK(tsr_tensor_from_host_memory(host, sizeof host, sizes, transposed_strides, 2,
                                    TSR_DTYPE_FLOAT32, count_delete, &deleted, &wrapped) == NULL);
  CHECK(tsr_tensor_copy_to_host(wrapped, out, sizeof out) == NULL);
  CHECK(out[0] == 6 && out[1] == 4 && out[2] == 2 && out[3] == 5);
  tsr_tensor_retain(wrapped);
  tsr_tensor_release(wrapped);
  CHECK(deleted == 0);
  tsr_tensor_release(wrapped);
  CHECK(deleted == 1);

  /* Errors come back as values with a code and a message. */
  err = tsr_tensor_empty(sizes, 2, (tsr_dtype)42, cpu, &t);
  CHECK(tsr_error_code(err) == TSR_INVALID_ARGUMENT);
  message = tsr_error_message(err);
  length = message.size < sizeof text - 1 ? message.size : sizeof text - 1;
  memcpy(text, message.data, length); /* not NUL-terminated: copy before using str* */
  text[length] = '\0';
  CHECK(strstr(text, "got 42") != NULL);
  tsr_error_release(err);
  tsr_error_release(NULL);
  tsr_tensor_release(NULL);

  keyword_call();

  if (failures == 0) printf("c embedding: all checks passed\n");
  return failures == 0 ? 0 : 1;
}

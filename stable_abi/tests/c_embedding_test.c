/* A C99 program that embeds the runtime through the public headers only. Built with
 * -std=c99 -pedantic -Werror, it is also the compile test of every public header. */
#include <stdio.h>
#include <string.h>

#include "tessera/c/common.h"
#include "tessera/c/error.h"
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

  if (failures == 0) printf("c embedding: all checks passed\n");
  return failures == 0 ? 0 : 1;
}

/* The typed C calls of tessera/opset/calls.h, as a C99 application uses them (built with
 * -std=c99 -pedantic -Werror): each argument form (tensor, optional tensor, int, bool, Scalar,
 * optional Scalar, int list, optional int list, bool list, tensor list, optional dtype), one and
 * several returns, an out variant with its return dropped, and the errors a caller can make. */
#include <stdio.h>
#include <string.h>

#include "tessera/c/tessera.h"
#include "tessera/opset/calls.h"

static int failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

static const tsr_device kCpu = {TSR_DEVICE_CPU, 0};

/* A float32 CPU tensor of `ndim` sizes holding `data`. */
static tsr_tensor* floats(const int64_t* sizes, size_t ndim, const float* data, size_t n) {
  tsr_tensor* t = NULL;
  CHECK(tsr_tensor_empty(sizes, ndim, TSR_DTYPE_FLOAT32, kCpu, &t) == NULL);
  CHECK(tsr_tensor_copy_from_host(t, data, n * sizeof(float)) == NULL);
  return t;
}

/* The tensor's elements read back, compared with `expected`. */
static int holds(tsr_tensor* t, const float* expected, size_t n) {
  float got[16];
  if (t == NULL || n > 16 || (size_t)tsr_tensor_numel(t) != n) return 0;
  if (tsr_tensor_copy_to_host(t, got, n * sizeof(float)) != NULL) return 0;
  return memcmp(got, expected, n * sizeof(float)) == 0;
}

static tsr_scalar real(double d) {
  tsr_scalar s;
  memset(&s, 0, sizeof s);
  s.kind = TSR_SCALAR_DOUBLE;
  s.d = d;
  return s;
}

/* The message of `error` contains `text`; the error is released. */
static int says(tsr_error* error, const char* text) {
  tsr_string m;
  char buffer[512];
  size_t n;
  if (error == NULL) return 0;
  m = tsr_error_message(error);
  n = m.size < sizeof buffer - 1 ? m.size : sizeof buffer - 1;
  memcpy(buffer, m.data, n);
  buffer[n] = '\0';
  tsr_error_release(error);
  if (strstr(buffer, text) != NULL) return 1;
  fprintf(stderr, "expected an error saying '%s', got '%s'\n", text, buffer);
  return 0;
}

int main(void) {
  const int64_t sizes[2] = {2, 2};
  const float a_data[4] = {1, 2, 3, 4};
  const float b_data[4] = {10, 20, 30, 40};
  tsr_tensor* a = floats(sizes, 2, a_data, 4);
  tsr_tensor* b = floats(sizes, 2, b_data, 4);
  tsr_tensor* r = NULL;
  tsr_tensor* r2 = NULL;

  /* add.Tensor(self, other, *, alpha): a Scalar by value; twice, the second with the op
   * already found. */
  {
    const float expected[4] = {21, 42, 63, 84};
    int i;
    for (i = 0; i < 2; ++i) {
      CHECK(tsr_aten_add_Tensor(a, b, real(2), &r) == NULL);
      CHECK(holds(r, expected, 4));
      tsr_tensor_release(r);
      r = NULL;
    }
  }

  /* sum.dim_IntList(self, int[1]? dim, bool keepdim, *, ScalarType? dtype): an optional list
   * (NULL is None: every dim) and an optional dtype. */
  {
    const int64_t dim1 = 1;
    const float rows[2] = {3, 7}, all[1] = {10};
    const tsr_dtype f64 = TSR_DTYPE_FLOAT64;
    double total = 0;
    CHECK(tsr_aten_sum_dim_IntList(a, &dim1, 1, 0, NULL, &r) == NULL);
    CHECK(tsr_tensor_dim(r) == 1 && holds(r, rows, 2));
    tsr_tensor_release(r);
    CHECK(tsr_aten_sum_dim_IntList(a, NULL, 0, 0, NULL, &r) == NULL);
    CHECK(tsr_tensor_dim(r) == 0 && holds(r, all, 1));
    tsr_tensor_release(r);
    CHECK(tsr_aten_sum_dim_IntList(a, NULL, 0, 1, &f64, &r) == NULL);
    CHECK(tsr_tensor_dim(r) == 2 && tsr_tensor_dtype(r) == TSR_DTYPE_FLOAT64);
    CHECK(tsr_tensor_copy_to_host(r, &total, sizeof total) == NULL && total == 10);
    tsr_tensor_release(r);
  }

  /* max.dim: two returns. */
  {
    const float values[2] = {2, 4};
    int64_t indices[2] = {0, 0};
    CHECK(tsr_aten_max_dim(a, 1, 0, &r, &r2) == NULL);
    CHECK(holds(r, values, 2));
    CHECK(tsr_tensor_copy_to_host(r2, indices, sizeof indices) == NULL);
    CHECK(indices[0] == 1 && indices[1] == 1);
    tsr_tensor_release(r);
    tsr_tensor_release(r2);
  }

  /* clamp(self, Scalar? min, Scalar? max): an optional Scalar left None. */
  {
    const tsr_scalar max = real(2.5);
    const float expected[4] = {1, 2, 2.5f, 2.5f};
    CHECK(tsr_aten_clamp(a, NULL, &max, &r) == NULL);
    CHECK(holds(r, expected, 4));
    tsr_tensor_release(r);
  }

  /* cat(Tensor[] tensors, int dim): a tensor list. */
  {
    tsr_tensor* parts[2];
    const float expected[8] = {1, 2, 10, 20, 3, 4, 30, 40};
    parts[0] = a;
    parts[1] = b;
    CHECK(tsr_aten_cat(parts, 2, 1, &r) == NULL);
    CHECK(tsr_tensor_dim(r) == 2 && tsr_tensor_sizes(r)[1] == 4 && holds(r, expected, 8));
    tsr_tensor_release(r);
  }

  /* native_layer_norm_backward(..., bool[3] output_mask): a bool list; a masked-out gradient
   * comes back NULL (None). */
  {
    const int64_t last[1] = {2};
    const uint8_t mask[3] = {1, 0, 1};
    tsr_tensor *out = NULL, *mean = NULL, *rstd = NULL, *gw = NULL, *gb = NULL;
    CHECK(tsr_aten_native_layer_norm(a, last, 1, NULL, NULL, 1e-5, &out, &mean, &rstd) == NULL);
    CHECK(tsr_aten_native_layer_norm_backward(b, a, last, 1, mean, rstd, NULL, NULL, mask, 3, &r,
                                              &gw, &gb) == NULL);
    CHECK(r != NULL && tsr_tensor_dim(r) == 2 && gw == NULL && gb == NULL);
    tsr_tensor_release(r);
    tsr_tensor_release(out);
    tsr_tensor_release(mean);
    tsr_tensor_release(rstd);
  }

  /* add.out: written into `out`; its return dropped (NULL) and then taken. */
  {
    tsr_tensor* out = NULL;
    const float expected[4] = {11, 22, 33, 44};
    CHECK(tsr_tensor_empty(sizes, 2, TSR_DTYPE_FLOAT32, kCpu, &out) == NULL);
    CHECK(tsr_aten_add_out(a, b, real(1), out, NULL) == NULL);
    CHECK(holds(out, expected, 4));
    CHECK(tsr_aten_add_out(b, a, real(1), out, &r) == NULL);
    CHECK(holds(r, expected, 4) && tsr_tensor_data_ptr(r) == tsr_tensor_data_ptr(out));
    tsr_tensor_release(r);
    tsr_tensor_release(out);
  }

  /* Errors: the runtime's own, with every out-parameter NULL. */
  {
    const int64_t three[1] = {3};
    const float c_data[3] = {1, 2, 3};
    tsr_tensor* c = floats(three, 1, c_data, 3);
    r = a; /* not NULL before the call */
    CHECK(says(tsr_aten_add_Tensor(a, c, real(1), &r), "size"));
    CHECK(r == NULL);
    CHECK(says(tsr_aten_add_Tensor(a, NULL, real(1), &r), "expected a tensor, got NULL"));
    CHECK(r == NULL);
    r = a;
    r2 = b;
    CHECK(says(tsr_aten_max_dim(a, 5, 0, &r, &r2), "dim"));
    CHECK(r == NULL && r2 == NULL);
    tsr_tensor_release(c);
  }

  tsr_tensor_release(a);
  tsr_tensor_release(b);
  if (failures != 0) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("typed calls: all checks passed (op set %s)\n", TSR_ATEN_CALLS_OP_SET);
  return 0;
}

/* Typed C kernels of the SDK's test plugin (library_plugin_c.h). */
#include "library_plugin_c.h"

#include <stdlib.h>
#include <string.h>

static const tsr_runtime_api* api = NULL;

const int sdktest_probe_context = 42;

void sdktest_set_api(const tsr_runtime_api* runtime) { api = runtime; }

static tsr_error* sdktest_error(tsr_code code, const char* message) {
  tsr_string s;
  s.data = message;
  s.size = strlen(message);
  return api->error_create(code, s);
}

static double scalar_value(const tsr_scalar* s) {
  return s->kind == TSR_SCALAR_DOUBLE ? s->d : (double)s->i;
}

tsr_error* sdktest_probe(void* context, tsr_tensor* self, int64_t n, double x, int32_t flag,
                         tsr_dtype dtype, tsr_scalar s, tsr_device d, tsr_string name,
                         const int64_t* sizes, size_t sizes_count, const int64_t* maybe,
                         const tsr_scalar* opt, tsr_tensor* t, tsr_tensor** out) {
  double v[SDKTEST_PROBE_VALUES];
  const int64_t count = SDKTEST_PROBE_VALUES;
  double sum = 0;
  size_t i;
  tsr_error* err;
  for (i = 0; i < sizes_count; ++i) sum += (double)sizes[i];
  v[0] = context == (const void*)&sdktest_probe_context ? 1 : 0;
  v[1] = (double)n;
  v[2] = x;
  v[3] = flag;
  v[4] = dtype;
  v[5] = s.kind;
  v[6] = scalar_value(&s);
  v[7] = d.type;
  v[8] = d.index;
  v[9] = (double)name.size;
  v[10] = name.size > 0 ? (double)(unsigned char)name.data[0] : -1;
  v[11] = (double)sizes_count;
  v[12] = sum;
  v[13] = maybe != NULL ? (double)*maybe : -1;
  v[14] = opt != NULL ? scalar_value(opt) : -1;
  v[15] = t != NULL ? (double)api->tensor_numel(t) : -1;
  v[16] = (double)api->tensor_numel(self);
  err = api->tensor_empty(&count, 1, TSR_DTYPE_FLOAT64, d, out);
  if (err != NULL) return err;
  err = api->tensor_copy_from_host(*out, v, sizeof v);
  if (err != NULL) {
    api->tensor_release(*out);
    *out = NULL;
  }
  return err;
}

tsr_error* sdktest_add_out(void* context, tsr_tensor* self, tsr_tensor* other, tsr_scalar alpha,
                           tsr_tensor* out, tsr_tensor** result) {
  const int64_t n = api->tensor_numel(self), m = api->tensor_numel(other);
  float* a;
  float* b;
  tsr_error* err;
  int64_t i;
  (void)context;
  if (api->tensor_dtype(self) != TSR_DTYPE_FLOAT32 ||
      api->tensor_dtype(other) != TSR_DTYPE_FLOAT32 ||
      api->tensor_dtype(out) != TSR_DTYPE_FLOAT32 || (m != n && m != 1) ||
      api->tensor_numel(out) != n) {
    return sdktest_error(TSR_UNIMPLEMENTED, "sdktest add.out: float32 of one shape only");
  }
  a = (float*)malloc((size_t)(n + 1) * sizeof(float));
  b = (float*)malloc((size_t)(m + 1) * sizeof(float));
  err = a == NULL || b == NULL ? sdktest_error(TSR_RESOURCE_EXHAUSTED, "sdktest: out of memory")
                               : NULL;
  if (err == NULL) err = api->tensor_copy_to_host(self, a, (size_t)n * sizeof(float));
  if (err == NULL) err = api->tensor_copy_to_host(other, b, (size_t)m * sizeof(float));
  for (i = 0; err == NULL && i < n; ++i) a[i] += (float)scalar_value(&alpha) * b[m == 1 ? 0 : i];
  if (err == NULL) err = api->tensor_copy_from_host(out, a, (size_t)n * sizeof(float));
  free(a);
  free(b);
  if (err != NULL) return err;
  api->tensor_retain(out);
  *result = out;
  return NULL;
}

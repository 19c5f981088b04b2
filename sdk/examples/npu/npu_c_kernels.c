/* Typed C kernels of the sample NPU (npu_c_kernels.h). Like its C++ kernels, they reach the
 * device's memory only through the runtime's copies (tensor_copy_to_host/_from_host, which call
 * the device's copy functions), never by dereferencing a device pointer. */
#include "npu_c_kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const tsr_runtime_api* api = NULL;

void npu_c_kernels_init(const tsr_runtime_api* runtime) { api = runtime; }

static tsr_error* npu_error(tsr_code code, const char* message) {
  tsr_string s;
  s.data = message;
  s.size = strlen(message);
  return api->error_create(code, s);
}

static float scalar_as_float(const tsr_scalar* s) {
  return s->kind == TSR_SCALAR_DOUBLE ? (float)s->d : (float)s->i;
}

/* A NaN self stays NaN; a NaN bound becomes the result (PyTorch's clamp with both bounds; a
 * NaN bound alone is ignored, see npu_clamp_out). */
static float clamp_below(float x, float lo) {
  return isnan(x) ? x : (isnan(lo) || x < lo) ? lo : x;
}
static float clamp_above(float x, float hi) {
  return isnan(x) ? x : (isnan(hi) || x > hi) ? hi : x;
}

tsr_error* npu_clamp_out(void* context, tsr_tensor* self, const tsr_scalar* min,
                         const tsr_scalar* max, tsr_tensor* out, tsr_tensor** result) {
  const int64_t n = api->tensor_numel(self);
  const size_t nbytes = (size_t)n * sizeof(float);
  float* values;
  tsr_error* err;
  int64_t i;
  (void)context;
  /* The runtime has checked the arguments (min and max not both None) and resized `out` to
   * self's shape before this runs; the sample NPU computes float32 only. */
  if (api->tensor_dtype(self) != TSR_DTYPE_FLOAT32 || api->tensor_dtype(out) != TSR_DTYPE_FLOAT32) {
    return npu_error(TSR_UNIMPLEMENTED,
                     "npu clamp.out: not implemented for dtypes other than float32 (the sample "
                     "NPU computes float32 only)");
  }
  /* PyTorch fills NaN for a NaN bound only when both bounds are given: alone it is ignored. */
  if (min != NULL && max == NULL && isnan(scalar_as_float(min))) min = NULL;
  if (max != NULL && min == NULL && isnan(scalar_as_float(max))) max = NULL;
  values = (float*)malloc(nbytes > 0 ? nbytes : 1);
  if (values == NULL) return npu_error(TSR_RESOURCE_EXHAUSTED, "npu clamp.out: out of memory");
  err = api->tensor_copy_to_host(self, values, nbytes);
  for (i = 0; err == NULL && i < n; ++i) {
    if (min != NULL) values[i] = clamp_below(values[i], scalar_as_float(min));
    if (max != NULL) values[i] = clamp_above(values[i], scalar_as_float(max));
  }
  /* out may be self (clamp_, derived from this kernel) or a strided view: the copy handles it. */
  if (err == NULL) err = api->tensor_copy_from_host(out, values, nbytes);
  free(values);
  if (err != NULL) return err;
  api->tensor_retain(out); /* the return is a new reference to `out` */
  *result = out;
  return NULL;
}

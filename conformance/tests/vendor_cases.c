/* A cases library in plain C99 (tessera/conformance/cases.h) for the vendor plugin's own op
 * (vendor_plugin.cc):
 *
 *   vnd::scale_bias(Tensor self, Tensor bias, float scale=1) -> Tensor: self * scale + bias
 *
 * with samples, a host reference and error inputs, as a vendor writes one; and, in variants
 * (CASES_VARIANT), the mistakes the suite must refuse with a clear message:
 *   GOOD           the library
 *   MISSING_ENTRY  exports no tsr_conformance_cases
 *   WRONG_VERSION  built against the cases interface 2.0
 *   UNKNOWN_OP     names an op no plugin defines
 *   BAD_DTYPE      declares dtype bit 12, which names no tsr_dtype
 *   BAD_RESULT     its reference gives a result whose numel does not match its sizes
 *   CRASHES        its entry point dies of SIGSEGV */
#include <signal.h>
#include <string.h>

#include "tessera/conformance/cases.h"

#define GOOD 0
#define MISSING_ENTRY 1
#define WRONG_VERSION 2
#define UNKNOWN_OP 3
#define BAD_DTYPE 4
#define BAD_RESULT 5
#define CRASHES 6

#ifndef CASES_VARIANT
#error "define CASES_VARIANT"
#endif

static tsr_string str(const char* s) {
  tsr_string t;
  t.data = s;
  t.size = strlen(s);
  return t;
}

#define MAX_DIM 4
#define MAX_NUMEL 64

/* The shapes of the samples: self and bias, which broadcast. */
static const struct {
  int64_t self[MAX_DIM];
  size_t self_dim;
  int64_t bias[MAX_DIM];
  size_t bias_dim;
  double scale;
  int scale_given; /* 0: leave the defaulted argument out */
  const char* description;
} kSamples[] = {
    {{5}, 1, {5}, 1, 2.5, 1, "[5] with [5], scale 2.5"},
    {{4, 3}, 2, {3}, 1, -0.5, 1, "[4, 3] with [3], scale -0.5"},
    {{2, 1, 3}, 3, {4, 1}, 2, 1, 0, "[2, 1, 3] with [4, 1], default scale"},
    {{0}, 0, {0}, 0, 3, 1, "[] with [], scale 3"},
    {{0, 3}, 2, {3}, 1, 2, 1, "[0, 3] with [3], scale 2"},
};

static int32_t samples(void* context, const tsr_cases_host* host, tsr_cases_sink* sink,
                       int32_t dtype, uint64_t seed) {
  size_t i;
  (void)context;
  (void)seed; /* the suite's own generator draws the values */
  for (i = 0; i < sizeof kSamples / sizeof kSamples[0]; ++i) {
    host->sample(sink, str(kSamples[i].description));
    host->arg_random_tensor(sink, dtype, kSamples[i].self, kSamples[i].self_dim, NULL);
    host->arg_random_tensor(sink, dtype, kSamples[i].bias, kSamples[i].bias_dim, NULL);
    if (kSamples[i].scale_given) host->arg_double(sink, kSamples[i].scale);
  }
  { /* a bias given value by value, 0-dim */
    const double value = 0.25;
    tsr_cases_tensor bias;
    memset(&bias, 0, sizeof bias);
    bias.struct_size = sizeof bias;
    bias.dtype = dtype;
    bias.values = &value;
    bias.numel = 1;
    host->sample(sink, str("[3] with a 0-dim 0.25"));
    {
      const int64_t three = 3;
      host->arg_random_tensor(sink, dtype, &three, 1, NULL);
    }
    host->arg_tensor(sink, &bias);
  }
  return TSR_OK;
}

/* The host reference: self * scale + bias in double, bias broadcast with self. */
static int32_t reference(void* context, const tsr_cases_host* host, tsr_cases_sink* sink,
                         const tsr_cases_sample* sample) {
  const tsr_cases_tensor* self;
  const tsr_cases_tensor* bias;
  double scale = 1, out[MAX_NUMEL];
  int64_t sizes[MAX_DIM], index[MAX_DIM];
  size_t dim, d, n = 1, flat;
  tsr_cases_tensor result;
  (void)context;
  if (sample->num_args < 2 || sample->args[0]->kind != TSR_CASES_ARG_TENSOR ||
      sample->args[1]->kind != TSR_CASES_ARG_TENSOR) {
    host->message(sink, str("expected (Tensor self, Tensor bias, float scale=1)"));
    return TSR_INVALID_ARGUMENT;
  }
  self = sample->args[0]->tensors[0];
  bias = sample->args[1]->tensors[0];
  if (sample->num_args > 2) scale = sample->args[2]->d;
  dim = self->dim > bias->dim ? self->dim : bias->dim;
  for (d = 0; d < dim; ++d) { /* the broadcast shape */
    const int64_t a = d + self->dim >= dim ? self->sizes[d + self->dim - dim] : 1;
    const int64_t b = d + bias->dim >= dim ? bias->sizes[d + bias->dim - dim] : 1;
    sizes[d] = a == 1 ? b : a;
    n *= (size_t)sizes[d];
  }
  if (n > MAX_NUMEL) {
    host->message(sink, str("a sample larger than this reference handles"));
    return TSR_UNIMPLEMENTED; /* skipped, not failed */
  }
  for (flat = 0; flat < n; ++flat) {
    size_t rest = flat, s_off = 0, b_off = 0;
    for (d = dim; d-- > 0;) {
      index[d] = (int64_t)(rest % (size_t)sizes[d]);
      rest /= (size_t)sizes[d];
    }
    for (d = 0; d < self->dim; ++d) {
      const int64_t size = self->sizes[d];
      s_off = s_off * (size_t)size + (size == 1 ? 0 : (size_t)index[d + dim - self->dim]);
    }
    for (d = 0; d < bias->dim; ++d) {
      const int64_t size = bias->sizes[d];
      b_off = b_off * (size_t)size + (size == 1 ? 0 : (size_t)index[d + dim - bias->dim]);
    }
    out[flat] = self->values[s_off] * scale + bias->values[b_off];
  }
  memset(&result, 0, sizeof result);
  result.struct_size = sizeof result;
  result.dtype = self->dtype;
  result.sizes = sizes;
  result.dim = dim;
  result.values = out;
  result.numel = CASES_VARIANT == BAD_RESULT ? n + 1 : n;
  return host->result(sink, &result);
}

/* Inputs the op refuses: shapes that do not broadcast, two dtypes. */
static int32_t errors(void* context, const tsr_cases_host* host, tsr_cases_sink* sink,
                      uint64_t seed) {
  const int64_t three = 3, two = 2;
  (void)context;
  (void)seed;
  host->error_sample(sink, str("[3] with [2]: shapes that do not broadcast"), TSR_INVALID_ARGUMENT);
  host->arg_random_tensor(sink, TSR_DTYPE_FLOAT32, &three, 1, NULL);
  host->arg_random_tensor(sink, TSR_DTYPE_FLOAT32, &two, 1, NULL);
  host->error_sample(sink, str("float32 [3] with float64 [3]"), TSR_INVALID_ARGUMENT);
  host->arg_random_tensor(sink, TSR_DTYPE_FLOAT32, &three, 1, NULL);
  host->arg_random_tensor(sink, TSR_DTYPE_FLOAT64, &three, 1, NULL);
  return TSR_OK;
}

static const tsr_cases_op* const* ops(void) {
  static tsr_cases_op scale_bias;
  static const tsr_cases_op* list[1];
  memset(&scale_bias, 0, sizeof scale_bias);
  scale_bias.struct_size = sizeof scale_bias;
  scale_bias.name = str(CASES_VARIANT == UNKNOWN_OP ? "vnd::no_such_op" : "vnd::scale_bias");
  scale_bias.dtypes = (1u << TSR_DTYPE_FLOAT32) | (1u << TSR_DTYPE_FLOAT64);
  if (CASES_VARIANT == BAD_DTYPE) scale_bias.dtypes |= 1u << 12;
  scale_bias.elementwise = 1;
  scale_bias.samples = samples;
  scale_bias.reference = reference;
  scale_bias.errors = errors;
  list[0] = &scale_bias;
  return list;
}

#if CASES_VARIANT == MISSING_ENTRY
#define ENTRY tsr_conformance_cases_misspelled
#else
#define ENTRY tsr_conformance_cases
#endif

TSR_CASES_EXPORT const tsr_cases_library* ENTRY(const tsr_cases_host* host);

TSR_CASES_EXPORT const tsr_cases_library* ENTRY(const tsr_cases_host* host) {
  static tsr_cases_library library;
  if (CASES_VARIANT == CRASHES) raise(SIGSEGV);
  if (host->version_major != TSR_CASES_VERSION_MAJOR) return NULL;
  memset(&library, 0, sizeof library);
  library.struct_size = sizeof library;
  library.version_major = CASES_VARIANT == WRONG_VERSION ? 2 : TSR_CASES_VERSION_MAJOR;
  library.version_minor = TSR_CASES_VERSION_MINOR;
  library.name = str("vnd cases");
  library.ops = ops();
  library.num_ops = 1;
  return &library;
}

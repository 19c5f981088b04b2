/* A fake libcudnn for the host tests of dnn.cc (tests/dnn_test.cc): the entry points the CUDA
 * backend resolves, with cuDNN's signatures, computing on host memory. It convolves float32 and
 * float64 NCHW tensors of 4 or 5 dims as its descriptors describe them (strided input and
 * output, packed filter, padding, stride, dilation, groups; cross-correlation), so a wrong
 * mapping onto cuDNN's descriptors gives wrong numbers, not only wrong bookkeeping. It records
 * what it was asked (fake_cudnn_record) and fails the entry point FAKE_CUDNN_FAIL names, with
 * status 3 (CUDNN_STATUS_BAD_PARAM). Built twice: whole, and without cudnnAddTensor
 * (FAKE_CUDNN_PARTIAL). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fake_cudnn.h"

#define EXPORT __attribute__((visibility("default")))

enum { kSuccess = 0, kBadParam = 3, kMaxDims = 5 };

struct Desc {
  int kind; /* 1 tensor, 2 filter, 3 convolution */
  int data_type, nb_dims, dims[kMaxDims], strides[kMaxDims];
  int pad[3], stride[3], dilation[3], spatial, mode, compute_type, groups, math_type;
};

static struct FakeCudnnRecord record;

EXPORT struct FakeCudnnRecord* fake_cudnn_record(void) { return &record; }

static int Fails(const char* name) {
  const char* f = getenv("FAKE_CUDNN_FAIL");
  return f != NULL && strcmp(f, name) == 0;
}
#define FAIL_IF_ASKED(name) \
  if (Fails(name)) return kBadParam

EXPORT int cudnnCreate(void** handle) {
  FAIL_IF_ASKED("cudnnCreate");
  ++record.handles;
  *handle = malloc(1);
  return kSuccess;
}
EXPORT int cudnnSetStream(void* handle, void* stream) {
  (void)handle;
  record.stream = stream;
  return kSuccess;
}
EXPORT const char* cudnnGetErrorString(int status) {
  return status == kBadParam ? "CUDNN_STATUS_BAD_PARAM" : "CUDNN_STATUS_(fake)";
}

static int Create(void** out, int kind) {
  struct Desc* d = calloc(1, sizeof *d);
  d->kind = kind;
  d->groups = 1;
  ++record.live_descriptors;
  *out = d;
  return kSuccess;
}
static int Destroy(void* d) {
  if (d == NULL) return kBadParam;
  --record.live_descriptors;
  free(d);
  return kSuccess;
}
EXPORT int cudnnCreateTensorDescriptor(void** d) {
  FAIL_IF_ASKED("cudnnCreateTensorDescriptor");
  return Create(d, 1);
}
EXPORT int cudnnCreateFilterDescriptor(void** d) { return Create(d, 2); }
EXPORT int cudnnCreateConvolutionDescriptor(void** d) { return Create(d, 3); }
EXPORT int cudnnDestroyTensorDescriptor(void* d) { return Destroy(d); }
EXPORT int cudnnDestroyFilterDescriptor(void* d) { return Destroy(d); }
EXPORT int cudnnDestroyConvolutionDescriptor(void* d) { return Destroy(d); }

EXPORT int cudnnSetTensorNdDescriptor(void* desc, int data_type, int nb_dims, const int dims[],
                                      const int strides[]) {
  struct Desc* d = desc;
  if (nb_dims < 4 || nb_dims > kMaxDims) return kBadParam;
  d->data_type = data_type;
  d->nb_dims = nb_dims;
  for (int i = 0; i < nb_dims; ++i) {
    if (dims[i] <= 0 || strides[i] < 0) return kBadParam;
    d->dims[i] = dims[i];
    d->strides[i] = strides[i];
  }
  return kSuccess;
}
EXPORT int cudnnSetFilterNdDescriptor(void* desc, int data_type, int format, int nb_dims,
                                      const int dims[]) {
  struct Desc* d = desc;
  if (format != 0 || nb_dims < 4 || nb_dims > kMaxDims) return kBadParam;
  d->data_type = data_type;
  d->nb_dims = nb_dims;
  int stride = 1;
  for (int i = nb_dims; i-- > 0;) {
    d->dims[i] = dims[i];
    d->strides[i] = stride;
    stride *= dims[i];
  }
  return kSuccess;
}
EXPORT int cudnnSetConvolutionNdDescriptor(void* desc, int length, const int pad[],
                                           const int stride[], const int dilation[], int mode,
                                           int compute_type) {
  struct Desc* d = desc;
  if (length < 2 || length > 3) return kBadParam;
  d->spatial = length;
  for (int i = 0; i < length; ++i) {
    if (pad[i] < 0 || stride[i] <= 0 || dilation[i] <= 0) return kBadParam;
    d->pad[i] = pad[i];
    d->stride[i] = stride[i];
    d->dilation[i] = dilation[i];
  }
  d->mode = mode;
  d->compute_type = compute_type;
  return kSuccess;
}
EXPORT int cudnnSetConvolutionGroupCount(void* desc, int groups) {
  ((struct Desc*)desc)->groups = groups;
  return groups > 0 ? kSuccess : kBadParam;
}
EXPORT int cudnnSetConvolutionMathType(void* desc, int math_type) {
  ((struct Desc*)desc)->math_type = math_type;
  return kSuccess;
}

struct AlgoPerf {
  int algo, status;
  float time;
  size_t memory;
  int determinism, math_type, reserved[3];
};

/* Four choices, in this order: algo 3 "not supported"; algo 5, ranked under the default math
 * (TF32 for float32: a caller wanting FMA must skip it), 32 bytes of workspace; algo 7 and
 * algo 1, ranked under the descriptor's math type, with 64 and 0 bytes. */
static size_t Need(int algo) { return algo == 7 ? 64 : algo == 5 ? 32 : 0; }

EXPORT int cudnnGetConvolutionForwardAlgorithm_v7(void* handle, void* x, void* w, void* conv,
                                                  void* y, int requested, int* returned,
                                                  struct AlgoPerf* results) {
  (void)handle, (void)x, (void)w, (void)y;
  FAIL_IF_ASKED("cudnnGetConvolutionForwardAlgorithm_v7");
  if (requested < 4) return kBadParam;
  const int math = ((struct Desc*)conv)->math_type;
  const int algos[4] = {3, 5, 7, 1}, statuses[4] = {9 /* NOT_SUPPORTED */, 0, 0, 0};
  const int maths[4] = {math, 0 /* CUDNN_DEFAULT_MATH */, math, math};
  memset(results, 0, 4 * sizeof *results);
  for (int i = 0; i < 4; ++i) {
    results[i].algo = algos[i];
    results[i].status = statuses[i];
    results[i].math_type = maths[i];
    results[i].memory = Need(algos[i]);
  }
  *returned = 4;
  return kSuccess;
}
EXPORT int cudnnGetConvolutionForwardWorkspaceSize(void* handle, void* x, void* w, void* conv,
                                                   void* y, int algo, size_t* bytes) {
  (void)handle, (void)x, (void)w, (void)conv, (void)y;
  *bytes = Need(algo);
  return kSuccess;
}

static double Load(const struct Desc* d, const void* p, long i) {
  return d->data_type == 1 ? ((const double*)p)[i] : ((const float*)p)[i];
}
static void Store(const struct Desc* d, void* p, long i, double v) {
  if (d->data_type == 1) {
    ((double*)p)[i] = v;
  } else {
    ((float*)p)[i] = (float)v;
  }
}

EXPORT int cudnnConvolutionForward(void* handle, const void* alpha, void* xd, const void* x,
                                   void* wd, const void* w, void* convd, int algo,
                                   void* workspace, size_t workspace_bytes, const void* beta,
                                   void* yd, void* y) {
  (void)handle;
  FAIL_IF_ASKED("cudnnConvolutionForward");
  const struct Desc *X = xd, *W = wd, *C = convd, *Y = yd;
  const int n = X->nb_dims, s = n - 2;
  if (W->nb_dims != n || Y->nb_dims != n || C->spatial != s) return kBadParam;
  if (X->data_type != 0 && X->data_type != 1) return kBadParam; /* float32, float64 only */
  if (workspace_bytes < Need(algo) || (Need(algo) > 0 && workspace == NULL)) return kBadParam;
  if (workspace_bytes > 0) memset(workspace, 0xAB, workspace_bytes); /* a bad one shows */
  record.math_type = C->math_type;
  record.compute_type = C->compute_type;
  record.groups = C->groups;
  record.mode = C->mode;
  record.algo = algo;
  record.workspace = workspace;
  record.workspace_bytes = workspace_bytes;
  ++record.forward_calls;
  const double a = X->data_type == 1 ? *(const double*)alpha : *(const float*)alpha;
  const double b = X->data_type == 1 ? *(const double*)beta : *(const float*)beta;
  const int groups = C->groups, cout = Y->dims[1], cin_g = W->dims[1], cout_g = cout / groups;
  if (X->dims[1] != cin_g * groups || W->dims[0] != cout || Y->dims[0] != X->dims[0]) {
    return kBadParam;
  }
  int out_index[kMaxDims];
  long total = 1;
  for (int i = 0; i < n; ++i) total *= Y->dims[i];
  for (long e = 0; e < total; ++e) {
    long rest = e;
    for (int i = n; i-- > 0;) {
      out_index[i] = (int)(rest % Y->dims[i]);
      rest /= Y->dims[i];
    }
    const int batch = out_index[0], k = out_index[1], g = k / cout_g;
    double acc = 0;
    long taps = 1;
    for (int i = 0; i < s; ++i) taps *= W->dims[2 + i];
    for (int c = 0; c < cin_g; ++c) {
      for (long t = 0; t < taps; ++t) {
        long r = t, x_off = (long)batch * X->strides[0] + (long)(g * cin_g + c) * X->strides[1];
        long w_off = (long)k * W->strides[0] + (long)c * W->strides[1];
        int inside = 1;
        for (int i = s; i-- > 0;) {
          const int tap = (int)(r % W->dims[2 + i]);
          r /= W->dims[2 + i];
          const int pos = out_index[2 + i] * C->stride[i] - C->pad[i] + tap * C->dilation[i];
          if (pos < 0 || pos >= X->dims[2 + i]) inside = 0;
          x_off += (long)pos * X->strides[2 + i];
          w_off += (long)tap * W->strides[2 + i];
        }
        if (inside) acc += Load(X, x, x_off) * Load(W, w, w_off);
      }
    }
    long y_off = 0;
    for (int i = 0; i < n; ++i) y_off += (long)out_index[i] * Y->strides[i];
    Store(Y, y, y_off, a * acc + (b != 0 ? b * Load(Y, y, y_off) : 0));
  }
  return kSuccess;
}

#ifndef FAKE_CUDNN_PARTIAL
/* c = alpha * a + beta * c, a broadcast where its dims are 1. */
EXPORT int cudnnAddTensor(void* handle, const void* alpha, void* ad, const void* a,
                          const void* beta, void* cd, void* c) {
  (void)handle;
  const struct Desc *A = ad, *C = cd;
  if (A->nb_dims != C->nb_dims) return kBadParam;
  const double al = C->data_type == 1 ? *(const double*)alpha : *(const float*)alpha;
  const double be = C->data_type == 1 ? *(const double*)beta : *(const float*)beta;
  ++record.add_tensor_calls;
  long total = 1;
  for (int i = 0; i < C->nb_dims; ++i) total *= C->dims[i];
  for (long e = 0; e < total; ++e) {
    long rest = e, a_off = 0, c_off = 0;
    for (int i = C->nb_dims; i-- > 0;) {
      const int idx = (int)(rest % C->dims[i]);
      rest /= C->dims[i];
      if (A->dims[i] != 1 && A->dims[i] != C->dims[i]) return kBadParam;
      a_off += (long)(A->dims[i] == 1 ? 0 : idx) * A->strides[i];
      c_off += (long)idx * C->strides[i];
    }
    Store(C, c, c_off, al * Load(A, a, a_off) + be * Load(C, c, c_off));
  }
  return kSuccess;
}
#endif

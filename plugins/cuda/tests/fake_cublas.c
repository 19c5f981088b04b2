/* A stand-in for libcublas in the host tests (blas_test.cc): the entry points the CUDA backend
 * resolves, with cuBLAS's names and signatures, recording each call and computing the product on
 * host memory (column-major, as cuBLAS) for float32 and float64 data, so a test checks both the
 * arguments and that they multiply the right matrices. Built twice: with FAKE_CUBLAS_PARTIAL it
 * lacks cublasGemmStridedBatchedEx and cublasGetStatusString, as a library the loader refuses. */
#include <stddef.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

typedef struct {
  int creates, set_streams, gemm_calls, batched_calls;
  void* stream;
  int transa, transb, m, n, k, lda, ldb, ldc, batch, atype, btype, ctype, compute, algo;
  long long stride_a, stride_b, stride_c;
  double alpha, beta; /* read as float, or double for CUBLAS_COMPUTE_64F (70) */
  int status;         /* what the next calls return (0: success) */
} FakeCublasRecord;

static FakeCublasRecord record;

FAKE_EXPORT FakeCublasRecord* fake_cublas_record(void) { return &record; }

FAKE_EXPORT int cublasCreate_v2(void** handle) {
  ++record.creates;
  *handle = &record;
  return record.status;
}

FAKE_EXPORT int cublasDestroy_v2(void* handle) {
  (void)handle;
  return 0;
}

FAKE_EXPORT int cublasSetStream_v2(void* handle, void* stream) {
  (void)handle;
  ++record.set_streams;
  record.stream = stream;
  return record.status;
}

static double Load(const void* p, int type, long long i) {
  return type == 1 ? ((const double*)p)[i] : ((const float*)p)[i];
}

static void Compute(int transa, int transb, int m, int n, int k, const void* alpha, const void* a,
                    int atype, int lda, long long sa, const void* b, int ldb, long long sb,
                    const void* beta, void* c, int ldc, long long sc, int batch, int compute) {
  const double al = compute == 70 ? *(const double*)alpha : *(const float*)alpha;
  const double be = compute == 70 ? *(const double*)beta : *(const float*)beta;
  record.alpha = al;
  record.beta = be;
  if (atype != 0 && atype != 1) return; /* 16-bit data: recorded, not computed */
  for (int t = 0; t < batch; ++t) {
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < m; ++i) {
        double acc = 0;
        for (int l = 0; l < k; ++l) {
          const long long ia =
              t * sa + (transa == 0 ? i + (long long)l * lda : l + (long long)i * lda);
          const long long ib =
              t * sb + (transb == 0 ? l + (long long)j * ldb : j + (long long)l * ldb);
          acc += Load(a, atype, ia) * Load(b, atype, ib);
        }
        const long long ic = t * sc + i + (long long)j * ldc;
        double r = al * acc;
        if (be != 0) r += be * Load(c, atype, ic); /* beta = 0: C is not read (NaN ignored) */
        if (atype == 1) {
          ((double*)c)[ic] = r;
        } else {
          ((float*)c)[ic] = (float)r;
        }
      }
    }
  }
}

static void Note(int transa, int transb, int m, int n, int k, int atype, int lda, int btype,
                 int ldb, int ctype, int ldc, int compute, int algo) {
  record.transa = transa;
  record.transb = transb;
  record.m = m;
  record.n = n;
  record.k = k;
  record.atype = atype;
  record.lda = lda;
  record.btype = btype;
  record.ldb = ldb;
  record.ctype = ctype;
  record.ldc = ldc;
  record.compute = compute;
  record.algo = algo;
}

FAKE_EXPORT int cublasGemmEx(void* handle, int transa, int transb, int m, int n, int k,
                             const void* alpha, const void* a, int atype, int lda, const void* b,
                             int btype, int ldb, const void* beta, void* c, int ctype, int ldc,
                             int compute, int algo) {
  (void)handle;
  ++record.gemm_calls;
  Note(transa, transb, m, n, k, atype, lda, btype, ldb, ctype, ldc, compute, algo);
  record.batch = 1;
  record.stride_a = record.stride_b = record.stride_c = 0;
  if (record.status != 0) return record.status;
  Compute(transa, transb, m, n, k, alpha, a, atype, lda, 0, b, ldb, 0, beta, c, ldc, 0, 1, compute);
  return 0;
}

#ifndef FAKE_CUBLAS_PARTIAL
FAKE_EXPORT int cublasGemmStridedBatchedEx(void* handle, int transa, int transb, int m, int n,
                                           int k, const void* alpha, const void* a, int atype,
                                           int lda, long long stride_a, const void* b, int btype,
                                           int ldb, long long stride_b, const void* beta, void* c,
                                           int ctype, int ldc, long long stride_c, int batch,
                                           int compute, int algo) {
  (void)handle;
  ++record.batched_calls;
  Note(transa, transb, m, n, k, atype, lda, btype, ldb, ctype, ldc, compute, algo);
  record.batch = batch;
  record.stride_a = stride_a;
  record.stride_b = stride_b;
  record.stride_c = stride_c;
  if (record.status != 0) return record.status;
  Compute(transa, transb, m, n, k, alpha, a, atype, lda, stride_a, b, ldb, stride_b, beta, c, ldc,
          stride_c, batch, compute);
  return 0;
}

FAKE_EXPORT const char* cublasGetStatusString(int status) {
  return status == 13 ? "CUBLAS_STATUS_EXECUTION_FAILED (fake)" : "fake status";
}
#endif

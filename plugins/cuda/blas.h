// The CUDA backend's matrix products on cuBLAS, loaded at first use (Note [cuBLAS at first use]).
// Plain C++ (no toolkit): the loader, the TESSERA_GPU_BLAS knob and the mapping of a GemmProblem
// onto cublasGemmEx / cublasGemmStridedBatchedEx are tested on the host against a fake library
// (tests/blas_test.cc, tests/fake_cublas.c).
//
// Note [cuBLAS at first use]
// libtessera_cuda.so links the CUDA runtime statically and needs only the driver to load;
// linking cuBLAS would make every load need libcublas (and libcublasLt: ~600 MB) of a matching
// major version. So the plugin dlopen()s "libcublas.so.13", then "libcublas.so", at the first
// product, resolves the five or six entry points it calls into a BlasLibrary, and falls back to
// our tiled kernel (gemm.h) when the library or a symbol is missing, saying once in the log which
// path the products take. TESSERA_GPU_BLAS=auto|cublas|own forces a path; `cublas` without the
// library is an error naming what was searched. The types below are cuBLAS's public ones,
// declared here (values from cublas_api.h and library_types.h; linalg_ops.cc asserts them
// against the real headers where the toolkit is present) so that nothing needs the header.
//
// Layout: cuBLAS is column-major and ours row-major. A row-major M x N matrix with row stride ld
// is, in memory, the column-major N x M matrix (its transpose) with leading dimension ld. So a
// row-major C = A @ B is computed as the column-major C^T = B^T @ A^T: cuBLAS's first operand is
// our B and its second our A, each with op N when it is row-major (its memory already is the
// transpose cuBLAS wants) and op T when it is a transposed view (column-major memory). A column-
// major output (a transposed view) is computed directly as C = A @ B. An operand with any other
// strides (a slice with step, an expanded dimension) is copied to a contiguous buffer first; an
// output with other strides, dimensions beyond int, or K = 0 use the tiled kernel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gemm.h"
#include "vendor_library.h"

namespace tessera {
namespace gpu {

// cuBLAS's public types, as its ABI has them (enums are int; handles and streams pointers).
using cublas_status = int;
using cublas_handle = void*;
enum CublasOperation : int { kCublasOpN = 0, kCublasOpT = 1 };
enum CudaDataType : int { kCudaR32F = 0, kCudaR64F = 1, kCudaR16F = 2, kCudaR16BF = 14 };
enum CublasComputeType : int { kCublasCompute32F = 68, kCublasCompute64F = 70 };
inline constexpr int kCublasGemmDefault = -1;  // cublasGemmAlgo_t CUBLAS_GEMM_DEFAULT
inline constexpr cublas_status kCublasStatusSuccess = 0;

// The entry points, with cuBLAS's signatures (cublas_api.h).
using CublasCreateFn = cublas_status (*)(cublas_handle*);
using CublasDestroyFn = cublas_status (*)(cublas_handle);
using CublasSetStreamFn = cublas_status (*)(cublas_handle, void* stream);
using CublasGemmExFn = cublas_status (*)(cublas_handle, int transa, int transb, int m, int n, int k,
                                         const void* alpha, const void* a, int atype, int lda,
                                         const void* b, int btype, int ldb, const void* beta,
                                         void* c, int ctype, int ldc, int compute, int algo);
using CublasGemmStridedBatchedExFn =
    cublas_status (*)(cublas_handle, int transa, int transb, int m, int n, int k, const void* alpha,
                      const void* a, int atype, int lda, long long stride_a, const void* b,
                      int btype, int ldb, long long stride_b, const void* beta, void* c, int ctype,
                      int ldc, long long stride_c, int batch, int compute, int algo);
using CublasGetStatusStringFn = const char* (*)(cublas_status);

// BlasLibrary: a loaded libcublas and its entry points (get_status_string and destroy may be
// null: older libraries lack the first, and handles live as long as the process).
struct BlasLibrary {
  void* dl = nullptr;
  std::string path;  // the name dlopen() succeeded with
  CublasCreateFn create = nullptr;
  CublasDestroyFn destroy = nullptr;
  CublasSetStreamFn set_stream = nullptr;
  CublasGemmExFn gemm_ex = nullptr;
  CublasGemmStridedBatchedExFn gemm_strided_batched_ex = nullptr;
  CublasGetStatusStringFn get_status_string = nullptr;
};

// The names the CUDA backend tries, in order.
std::vector<std::string> DefaultCublasNames();

// LoadBlasLibrary dlopen()s the first of `names` that loads and resolves the entry points into
// *lib. false with *error naming every name tried and why it failed (dlerror's words, or the
// missing symbol).
bool LoadBlasLibrary(const std::vector<std::string>& names, BlasLibrary* lib, std::string* error);

// StatusText: "CUBLAS_STATUS_...: description" from the library when it can say, else the number.
std::string StatusText(const BlasLibrary& lib, cublas_status status);

// TESSERA_GPU_BLAS: which path the products take (kLibrary: cuBLAS or an error).
using BlasMode = LibraryMode;

// ParseBlasMode reads a value of TESSERA_GPU_BLAS (null or "" is auto). `has_blas` says whether
// the backend can use a BLAS library at all (CUDA: yes; HIP: no, and `cublas` is refused). false
// with *error naming the variable, the value found and the values expected.
bool ParseBlasMode(const char* value, bool has_blas, BlasMode* mode, std::string* error);

// BlasGemmCall: one cublasGemmEx (batch == 1) or cublasGemmStridedBatchedEx, in cuBLAS's terms.
struct BlasGemmCall {
  int transa = kCublasOpN, transb = kCublasOpN;
  int m = 0, n = 0, k = 0;
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  int lda = 0, ldb = 0, ldc = 0;
  long long stride_a = 0, stride_b = 0, stride_c = 0;
  int batch = 1;
  int data_type = kCudaR32F;  // A's, B's and C's
  int compute_type = kCublasCompute32F;
  // alpha and beta in the compute type's scalar: float, or double for kCublasCompute64F.
  float alpha_f = 1, beta_f = 0;
  double alpha_d = 1, beta_d = 0;
  const void* alpha() const;
  const void* beta() const;
};

// What PlanBlasGemm found.
enum class BlasPlan {
  kReady,        // *call is filled
  kCopyA,        // A's strides are none cuBLAS takes: copy it to a contiguous buffer, plan again
  kCopyB,        // the same for B (A is fine)
  kUseOwnKernel  // the output's layout, sizes beyond int, K = 0 or the dtype: *why says which
};

// PlanBlasGemm maps `p` (C = beta * C + alpha * A @ B, row-major strides in elements; p.self is
// ignored: the caller has put self into C when beta != 0) in `dtype` (a tsr_dtype) onto a cuBLAS
// call.
BlasPlan PlanBlasGemm(int32_t dtype, const GemmProblem& p, BlasGemmCall* call, std::string* why);

// RunBlasGemm queues `call` on `handle` (its stream already set) through `lib`; "" or the
// library's status text.
std::string RunBlasGemm(const BlasLibrary& lib, cublas_handle handle, const BlasGemmCall& call);

}  // namespace gpu
}  // namespace tessera

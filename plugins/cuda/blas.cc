// The cuBLAS loader, the TESSERA_GPU_BLAS knob and the mapping of a product onto cuBLAS
// (blas.h; Note [cuBLAS at first use]).
#include "blas.h"

#include <climits>

#include "tessera/c/common.h"
#include "vendor_library.h"

namespace tessera {
namespace gpu {

std::vector<std::string> DefaultCublasNames() { return {"libcublas.so.13", "libcublas.so"}; }

bool LoadBlasLibrary(const std::vector<std::string>& names, BlasLibrary* lib, std::string* error) {
  BlasLibrary l;
  l.dl = OpenLibrary(
      "cuBLAS", names,
      [&l](void* dl) -> const char* {
        if (!Resolve(dl, "cublasCreate_v2", &l.create)) return "cublasCreate_v2";
        if (!Resolve(dl, "cublasSetStream_v2", &l.set_stream)) return "cublasSetStream_v2";
        if (!Resolve(dl, "cublasGemmEx", &l.gemm_ex)) return "cublasGemmEx";
        if (!Resolve(dl, "cublasGemmStridedBatchedEx", &l.gemm_strided_batched_ex)) {
          return "cublasGemmStridedBatchedEx";
        }
        Resolve(dl, "cublasDestroy_v2", &l.destroy);
        Resolve(dl, "cublasGetStatusString", &l.get_status_string);
        return nullptr;
      },
      &l.path, error);
  if (l.dl == nullptr) return false;
  *lib = l;
  return true;
}

std::string StatusText(const BlasLibrary& lib, cublas_status status) {
  std::string text = "cuBLAS status " + std::to_string(status);
  if (lib.get_status_string != nullptr) {
    if (const char* s = lib.get_status_string(status); s != nullptr)
      text += " (" + std::string(s) + ")";
  }
  return text;
}

bool ParseBlasMode(const char* value, bool has_blas, BlasMode* mode, std::string* error) {
  static const LibraryKnob knob{
      "TESSERA_GPU_BLAS", "cublas",
      "this backend has no BLAS library; its products always run on the tiled kernel"};
  return ParseLibraryMode(knob, value, has_blas, mode, error);
}

const void* BlasGemmCall::alpha() const {
  return compute_type == kCublasCompute64F ? static_cast<const void*>(&alpha_d)
                                           : static_cast<const void*>(&alpha_f);
}

const void* BlasGemmCall::beta() const {
  return compute_type == kCublasCompute64F ? static_cast<const void*>(&beta_d)
                                           : static_cast<const void*>(&beta_f);
}

namespace {

bool FitsInt(int64_t v) { return v >= 0 && v <= INT_MAX; }

// How cuBLAS reads a rows x cols operand with strides (sr, sc) as op(stored) where the matrix
// cuBLAS multiplies is the operand itself (transposed = false) or its transpose (true): the
// stored column-major matrix is the operand's transpose when the operand is row-major (op N
// gives the transpose, op T the operand) and the operand itself when it is column-major. false
// when the strides are neither (or the leading dimension exceeds int).
bool OperandOp(int64_t rows, int64_t cols, int64_t sr, int64_t sc, bool transposed, int* op,
               int* ld) {
  if (sr < 0 || sc < 0) return false;
  const int64_t row_ld = rows <= 1 ? (cols > 1 ? cols : 1) : sr;
  if ((cols <= 1 || sc == 1) && row_ld >= (cols > 1 ? cols : 1) && FitsInt(row_ld)) {
    *op = transposed ? kCublasOpN : kCublasOpT;
    *ld = static_cast<int>(row_ld);
    return true;
  }
  const int64_t col_ld = cols <= 1 ? (rows > 1 ? rows : 1) : sc;
  if ((rows <= 1 || sr == 1) && col_ld >= (rows > 1 ? rows : 1) && FitsInt(col_ld)) {
    *op = transposed ? kCublasOpT : kCublasOpN;
    *ld = static_cast<int>(col_ld);
    return true;
  }
  return false;
}

}  // namespace

BlasPlan PlanBlasGemm(int32_t dtype, const GemmProblem& p, BlasGemmCall* call, std::string* why) {
  BlasGemmCall c;
  switch (dtype) {
    case TSR_DTYPE_FLOAT16:
      c.data_type = kCudaR16F;
      break;
    case TSR_DTYPE_BFLOAT16:
      c.data_type = kCudaR16BF;
      break;
    case TSR_DTYPE_FLOAT32:
      c.data_type = kCudaR32F;
      break;
    case TSR_DTYPE_FLOAT64:
      c.data_type = kCudaR64F;
      break;
    default:
      *why = "dtype without a cuBLAS product";
      return BlasPlan::kUseOwnKernel;
  }
  // PyTorch's choices: float32 in float32 (no TF32 unless asked), float16 and bfloat16
  // accumulating in float32, float64 in float64.
  c.compute_type = dtype == TSR_DTYPE_FLOAT64 ? kCublasCompute64F : kCublasCompute32F;
  c.alpha_f = static_cast<float>(p.alpha);
  c.beta_f = static_cast<float>(p.beta);
  c.alpha_d = p.alpha;
  c.beta_d = p.beta;
  if (p.k == 0) {
    *why = "K = 0";
    return BlasPlan::kUseOwnKernel;
  }
  if (!FitsInt(p.m) || !FitsInt(p.n) || !FitsInt(p.k) || !FitsInt(p.batch)) {
    *why = "sizes beyond int";
    return BlasPlan::kUseOwnKernel;
  }
  if (p.a_batch < 0 || p.b_batch < 0 || p.c_batch < 0) {
    *why = "negative batch strides";
    return BlasPlan::kUseOwnKernel;
  }
  // The output: row-major gives cuBLAS C^T (N x M) = B^T A^T, column-major C (M x N) = A B.
  int out_op = 0, ldc = 0;
  if (!OperandOp(p.m, p.n, p.c_row, p.c_col, false, &out_op, &ldc)) {
    *why = "the output's strides are neither row- nor column-major";
    return BlasPlan::kUseOwnKernel;
  }
  const bool row_major_out = out_op == kCublasOpT;  // its memory is C^T
  int op_a = 0, lda = 0, op_b = 0, ldb = 0;
  if (!OperandOp(p.m, p.k, p.a_row, p.a_col, row_major_out, &op_a, &lda)) return BlasPlan::kCopyA;
  if (!OperandOp(p.k, p.n, p.b_row, p.b_col, row_major_out, &op_b, &ldb)) return BlasPlan::kCopyB;
  c.ldc = ldc;
  c.c = p.c;
  c.stride_c = p.c_batch;
  c.k = static_cast<int>(p.k);
  c.batch = static_cast<int>(p.batch);
  if (row_major_out) {
    c.m = static_cast<int>(p.n);
    c.n = static_cast<int>(p.m);
    c.transa = op_b;
    c.a = p.b;
    c.lda = ldb;
    c.stride_a = p.b_batch;
    c.transb = op_a;
    c.b = p.a;
    c.ldb = lda;
    c.stride_b = p.a_batch;
  } else {
    c.m = static_cast<int>(p.m);
    c.n = static_cast<int>(p.n);
    c.transa = op_a;
    c.a = p.a;
    c.lda = lda;
    c.stride_a = p.a_batch;
    c.transb = op_b;
    c.b = p.b;
    c.ldb = ldb;
    c.stride_b = p.b_batch;
  }
  *call = c;
  return BlasPlan::kReady;
}

std::string RunBlasGemm(const BlasLibrary& lib, cublas_handle handle, const BlasGemmCall& c) {
  const cublas_status s =
      c.batch == 1
          ? lib.gemm_ex(handle, c.transa, c.transb, c.m, c.n, c.k, c.alpha(), c.a, c.data_type,
                        c.lda, c.b, c.data_type, c.ldb, c.beta(), c.c, c.data_type, c.ldc,
                        c.compute_type, kCublasGemmDefault)
          : lib.gemm_strided_batched_ex(handle, c.transa, c.transb, c.m, c.n, c.k, c.alpha(), c.a,
                                        c.data_type, c.lda, c.stride_a, c.b, c.data_type, c.ldb,
                                        c.stride_b, c.beta(), c.c, c.data_type, c.ldc, c.stride_c,
                                        c.batch, c.compute_type, kCublasGemmDefault);
  return s == kCublasStatusSuccess ? "" : StatusText(lib, s);
}

}  // namespace gpu
}  // namespace tessera

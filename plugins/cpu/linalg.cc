// Matrix products as out= kernels: mm, bmm, addmm. float32 in BLAS layouts runs on
// dnnl_sgemm; other float32 layouts and bfloat16 on oneDNN's matmul (primitives cached by
// shape, strides, dtype and attributes); every other dtype, and
// any case oneDNN refuses, on our own loop accumulating in float (double for float64, int64
// for integers).
#include <algorithm>
#include <optional>

#include "math.hpp"
#include "onednn.hpp"
#include "pointwise.hpp"

namespace tessera {
namespace cpu {
namespace {

// out (+)= alpha * a @ b over batches; a [B, M, K], b [B, K, N], out [B, M, N] (B may be
// absent). With `accumulate`, out already holds self and gets beta * out + alpha * a @ b.
bool gemm_onednn(const sdk::Tensor& a, const sdk::Tensor& b, const sdk::Tensor& out, double alpha,
                 double beta, bool accumulate) {
  const tsr_dtype dt = out.dtype();
  if (dt != TSR_DTYPE_FLOAT32 && dt != TSR_DTYPE_BFLOAT16) return false;
  const std::string key = "matmul:" + onednn::key_of(a) + "|" + onednn::key_of(b) + "|" +
                          onednn::key_of(out) + "|" + std::to_string(alpha) + "|" +
                          (accumulate ? std::to_string(beta) : "-");
  try {
    const dnnl::memory::desc a_md = onednn::desc(a), b_md = onednn::desc(b),
                             o_md = onednn::desc(out);
    dnnl::primitive p = onednn::cached(key, [&]() -> dnnl::primitive {
      dnnl::primitive_attr attr;
      if (alpha != 1) attr.set_output_scales(0, {static_cast<float>(alpha)});
      if (accumulate) {
        dnnl::post_ops ops;
        ops.append_sum(static_cast<float>(beta));
        attr.set_post_ops(ops);
      }
      dnnl::matmul::desc d(a_md, b_md, o_md);
      return dnnl::matmul(dnnl::matmul::primitive_desc(d, attr, onednn::engine()));
    });
    p.execute(onednn::stream(), {{DNNL_ARG_SRC, onednn::memory(a, a_md)},
                                 {DNNL_ARG_WEIGHTS, onednn::memory(b, b_md)},
                                 {DNNL_ARG_DST, onednn::memory(out, o_md)}});
    onednn::stream().wait();
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

// One operand of dnnl_sgemm (row-major BLAS): the matrix is `rows` x `cols` and stored either
// row by row ('N', element (i, j) at i * ld + j) or column by column ('T', at j * ld + i).
struct BlasOperand {
  char trans;
  int64_t ld;
};

// blas_layout: how a 2-D float32 matrix is seen by BLAS, if it can be: one unit stride and
// the other at least the length of that row or column (size-1 dimensions accept any stride,
// since BLAS never steps along them, but ld must still be at least 1).
std::optional<BlasOperand> blas_layout(const sdk::Tensor& t) {
  const int64_t rows = t.size(0), cols = t.size(1);
  const int64_t s0 = t.strides()[0], s1 = t.strides()[1];
  if ((s1 == 1 || cols == 1) && (rows == 1 || s0 >= std::max<int64_t>(cols, 1)))
    return BlasOperand{'N', std::max<int64_t>({s0, cols, 1})};
  if ((s0 == 1 || rows == 1) && (cols == 1 || s1 >= std::max<int64_t>(rows, 1)))
    return BlasOperand{'T', std::max<int64_t>({s1, rows, 1})};
  return std::nullopt;
}

// gemm_sgemm: out = alpha * a @ b (+ beta * out with `accumulate`) for 2-D float32 operands in
// BLAS layouts, on dnnl_sgemm: no primitive to look up, and its own blocking for the plain
// case every mm/addmm/linear on contiguous matrices is. A column-major out is computed as
// out^T = b^T @ a^T. Returns false when a layout does not fit (the matmul primitive runs).
bool gemm_sgemm(const sdk::Tensor& a, const sdk::Tensor& b, const sdk::Tensor& out, double alpha,
                double beta, bool accumulate) {
  if (out.dtype() != TSR_DTYPE_FLOAT32 || out.dim() != 2 || a.dim() != 2 || b.dim() != 2)
    return false;
  const int64_t M = out.size(0), N = out.size(1), K = a.size(1);
  const auto la = blas_layout(a), lb = blas_layout(b), lo = blas_layout(out);
  if (!la || !lb || !lo) return false;
  const float al = static_cast<float>(alpha), be = accumulate ? static_cast<float>(beta) : 0.f;
  dnnl_status_t st;
  if (lo->trans == 'N') {
    st = dnnl_sgemm(la->trans, lb->trans, M, N, K, al, a.data<float>(), la->ld, b.data<float>(),
                    lb->ld, be, out.data<float>(), lo->ld);
  } else {
    // (a @ b)^T = b^T @ a^T: each operand's transposition flips.
    auto flip = [](char t) { return t == 'N' ? 'T' : 'N'; };
    st = dnnl_sgemm(flip(lb->trans), flip(la->trans), N, M, K, al, b.data<float>(), lb->ld,
                    a.data<float>(), la->ld, be, out.data<float>(), lo->ld);
  }
  return st == dnnl_success;
}

template <typename T>
using mm_acc_t = std::conditional_t<std::is_same_v<T, double>, double,
                                    std::conditional_t<kIsFloat<T>, float, int64_t>>;

template <typename T>
void gemm_loop(const sdk::Tensor& a, const sdk::Tensor& b, const sdk::Tensor& out,
               const sdk::Scalar& alpha_s, const sdk::Scalar& beta_s, bool accumulate) {
  using Acc = mm_acc_t<T>;
  const bool batched = out.dim() == 3;
  const int64_t B = batched ? out.size(0) : 1;
  const int64_t M = out.size(-2), N = out.size(-1), K = a.size(-1);
  auto stride = [&](const sdk::Tensor& t, int d) {
    return t.dim() == 3 ? t.strides()[d] : (d == 0 ? 0 : t.strides()[d - 1]);
  };
  const int64_t as0 = stride(a, 0), as1 = stride(a, 1), as2 = stride(a, 2);
  const int64_t bs0 = stride(b, 0), bs1 = stride(b, 1), bs2 = stride(b, 2);
  const int64_t os0 = stride(out, 0), os1 = stride(out, 1), os2 = stride(out, 2);
  const T* ap = a.data<T>();
  const T* bp = b.data<T>();
  T* op = out.data<T>();
  const Acc alpha = alpha_s.is_floating_point() ? static_cast<Acc>(alpha_s.to_double())
                                                : static_cast<Acc>(alpha_s.to_int());
  const Acc beta = beta_s.is_floating_point() ? static_cast<Acc>(beta_s.to_double())
                                              : static_cast<Acc>(beta_s.to_int());
  struct Ctx {
    const std::function<void(int64_t)>* row;
  };
  const std::function<void(int64_t)> row = [&](int64_t r) {
    const int64_t bi = r / M, i = r % M;
    for (int64_t j = 0; j < N; ++j) {
      Acc acc = 0;
      for (int64_t k = 0; k < K; ++k) {
        acc = wrap_add<Acc>(
            acc, wrap_mul<Acc>(static_cast<Acc>(load(ap[bi * as0 + i * as1 + k * as2])),
                               static_cast<Acc>(load(bp[bi * bs0 + k * bs1 + j * bs2]))));
      }
      T& o = op[bi * os0 + i * os1 + j * os2];
      Acc r2 = wrap_mul<Acc>(alpha, acc);
      if (accumulate && beta != 0)
        r2 = wrap_add<Acc>(r2, wrap_mul<Acc>(beta, static_cast<Acc>(load(o))));
      o = store<T>(r2);
    }
  };
  Ctx ctx{&row};
  TensorIterator::run_parallel(
      B * M, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, N * K)),
      [](void* c, int64_t lo, int64_t hi) {
        for (int64_t r = lo; r < hi; ++r) (*static_cast<Ctx*>(c)->row)(r);
      },
      &ctx);
}

void gemm(const sdk::KernelContext& ctx, const sdk::Tensor& a, const sdk::Tensor& b,
          const sdk::Tensor& out, const sdk::Scalar& alpha, const sdk::Scalar& beta,
          bool accumulate) {
  if (out.numel() == 0) return;
  dispatch<kNumeric>(out.dtype(), ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (a.size(-1) != 0 &&
        (gemm_sgemm(a, b, out, alpha.to_double(), beta.to_double(), accumulate) ||
         gemm_onednn(a, b, out, alpha.to_double(), beta.to_double(), accumulate))) {
      return;
    }
    gemm_loop<T>(a, b, out, alpha, beta, accumulate);
  });
}

// mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out); bmm.out likewise.
sdk::Tensor mm_out(const sdk::KernelContext& ctx, const sdk::Tensor& self, const sdk::Tensor& mat2,
                   const sdk::Tensor& out) {
  gemm(ctx, self, mat2, out, sdk::Scalar(int64_t{1}), sdk::Scalar(int64_t{0}), false);
  return out;
}

// addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1,
// Tensor(a!) out)
sdk::Tensor addmm_out(const sdk::KernelContext& ctx, const sdk::Tensor& self, const sdk::Tensor& a,
                      const sdk::Tensor& b, sdk::Scalar beta, sdk::Scalar alpha,
                      const sdk::Tensor& out) {
  const bool accumulate = beta.to_double() != 0;
  // beta == 0 ignores self entirely (NaN and Inf in it do not propagate), as in PyTorch.
  if (accumulate && self.data_ptr() != out.data_ptr()) copy_cast(out, self);
  gemm(ctx, a, b, out, alpha, beta, accumulate);
  return out;
}

}  // namespace

void register_linalg(sdk::Library& lib) {
  lib.impl<&mm_out>(TESSERA_OP("mm.out"));
  lib.impl<&mm_out>(TESSERA_OP("bmm.out"));
  lib.impl<&addmm_out>(TESSERA_OP("addmm.out"));
}

}  // namespace cpu
}  // namespace tessera

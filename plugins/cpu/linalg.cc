// Matrix products as out= kernels over their arguments' views: mm, bmm, addmm. float32 by an
// immutable weight with few rows runs on oneDNN's matmul with the weight prepacked once
// (prepacked_gemm.cc); float32 in BLAS layouts runs on dnnl_sgemm; other float32 layouts, and
// bfloat16 where oneDNN has a native kernel for it (not only its reference one), on oneDNN's matmul
// (primitives cached by shape, strides, dtype and attributes); float16 and the other bfloat16 on
// dnnl_sgemm over float32 copies; every other dtype, and any case oneDNN refuses, on our own loop
// accumulating in double for float64 and int64 for integers.
#include "linalg.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "math.hpp"
#include "onednn.hpp"
#include "pointwise.hpp"
#include "prepacked_gemm.hpp"

namespace tessera {
namespace cpu {
namespace {

using onednn::product_work;

// out (+)= alpha * a @ b over batches; a [B, M, K], b [B, K, N], out [B, M, N] (B may be
// absent). With `accumulate`, out already holds self and gets beta * out + alpha * a @ b.
bool gemm_onednn(const sdk::TensorView& a, const sdk::TensorView& b, const sdk::TensorView& out,
                 double alpha, double beta, bool accumulate) {
  const tsr_dtype dt = out.dtype();
  if (dt != TSR_DTYPE_FLOAT32 && dt != TSR_DTYPE_BFLOAT16) return false;
  if (dt == TSR_DTYPE_BFLOAT16 && !onednn::native_bf16_matmul()) return false;
  try {
    onednn::Threads threads(product_work(a, out));  // the primitive made and run on it
    onednn::Key key(onednn::kMatmul);
    key.add(a).add(b).add(out).add(alpha).add(int64_t{accumulate}).add(accumulate ? beta : 0.0);
    onednn::Call& call = onednn::cached_call(key, [&] {
      const dnnl::memory::desc a_md = onednn::desc(a), b_md = onednn::desc(b),
                               o_md = onednn::desc(out);
      const dnnl::primitive_attr attr = onednn::product_attr(alpha, beta, accumulate);
      dnnl::matmul::desc d(a_md, b_md, o_md);
      return onednn::Call(dnnl::matmul(dnnl::matmul::primitive_desc(d, attr, onednn::engine())),
                          {{DNNL_ARG_SRC, a_md}, {DNNL_ARG_WEIGHTS, b_md}, {DNNL_ARG_DST, o_md}});
    });
    call.run({a.data_ptr(), b.data_ptr(), out.data_ptr()});
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
std::optional<BlasOperand> blas_layout(const sdk::TensorView& t) {
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
bool gemm_sgemm(const sdk::TensorView& a, const sdk::TensorView& b, const sdk::TensorView& out,
                double alpha, double beta, bool accumulate) {
  if (out.dtype() != TSR_DTYPE_FLOAT32 || out.dim() != 2 || a.dim() != 2 || b.dim() != 2)
    return false;
  const int64_t M = out.size(0), N = out.size(1), K = a.size(1);
  const auto la = blas_layout(a), lb = blas_layout(b), lo = blas_layout(out);
  if (!la || !lb || !lo) return false;
  const float al = static_cast<float>(alpha), be = accumulate ? static_cast<float>(beta) : 0.f;
  onednn::Threads threads(product_work(a, out));  // oneDNN on the runtime's thread count
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

// gemm_small: float32 products of at most kSmallGemmWork multiply-adds in a plain loop, since a
// library call costs more than such a product does (a 1x1 mm spent ~720 instructions in
// dnnl_sgemm). Each element sums over k in order in float32 and is then scaled by alpha; sgemm
// may order or fuse (FMA) those sums differently, so the two can differ in the last bits, well
// inside the float32 tolerances. beta 0 ignores out (NaN included), as BLAS does. An alpha that
// is 0 in float32 is left to sgemm, which may skip the product altogether.
constexpr int64_t kSmallGemmWork = 256;
bool gemm_small(const sdk::TensorView& a, const sdk::TensorView& b, const sdk::TensorView& out,
                double alpha, double beta, bool accumulate) {
  if (out.dtype() != TSR_DTYPE_FLOAT32 || a.dtype() != TSR_DTYPE_FLOAT32 ||
      b.dtype() != TSR_DTYPE_FLOAT32 || out.dim() != 2 || a.dim() != 2 || b.dim() != 2 ||
      static_cast<float>(alpha) == 0.f) {
    return false;
  }
  const int64_t M = out.size(0), N = out.size(1), K = a.size(1);
  if (M > kSmallGemmWork || N > kSmallGemmWork || K > kSmallGemmWork ||
      M * N * K > kSmallGemmWork) {
    return false;
  }
  const float al = static_cast<float>(alpha), be = accumulate ? static_cast<float>(beta) : 0.f;
  const float* ap = a.data<float>();
  const float* bp = b.data<float>();
  float* op = out.data<float>();
  const int64_t as0 = a.strides()[0], as1 = a.strides()[1], bs0 = b.strides()[0],
                bs1 = b.strides()[1], os0 = out.strides()[0], os1 = out.strides()[1];
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      float acc = 0.f;
      for (int64_t k = 0; k < K; ++k) acc += ap[i * as0 + k * as1] * bp[k * bs0 + j * bs1];
      float& o = op[i * os0 + j * os1];
      o = be != 0.f ? al * acc + be * o : al * acc;
    }
  }
  return true;
}

template <typename T>
using mm_acc_t = std::conditional_t<std::is_same_v<T, double>, double,
                                    std::conditional_t<kIsFloat<T>, float, int64_t>>;

// The element strides of a product's operand as [batch, row, column] (batch 0 when 2-D).
struct MatrixStrides {
  int64_t batch, row, col;
};
MatrixStrides matrix_strides(const sdk::TensorView& t) {
  const auto& s = t.strides();
  return t.dim() == 3 ? MatrixStrides{s[0], s[1], s[2]} : MatrixStrides{0, s[0], s[1]};
}

// gemm_float32_copies: float16 and bfloat16 products on dnnl_sgemm. The operands are converted
// to contiguous float32 copies (exactly: every float16 and bfloat16 value is a float), the
// product accumulates in float32 and is rounded once into out, as PyTorch's CPU kernels for
// these dtypes accumulate; with `accumulate`, beta * out + alpha * a @ b likewise in float32.
template <typename T>
void gemm_float32_copies(const sdk::TensorView& a, const sdk::TensorView& b,
                         const sdk::TensorView& out, double alpha, double beta, bool accumulate) {
  const int64_t B = out.dim() == 3 ? out.size(0) : 1;
  const int64_t M = out.size(-2), N = out.size(-1), K = a.size(-1);
  // copy(t, rows, cols, into, back): t's matrices to (or, back, from) contiguous float32.
  auto copy = [B](const sdk::TensorView& t, int64_t rows, int64_t cols, float* f, bool back) {
    const MatrixStrides s = matrix_strides(t);
    T* p = t.data<T>();
    for (int64_t bi = 0; bi < B; ++bi) {
      for (int64_t i = 0; i < rows; ++i) {
        T* row = p + bi * s.batch + i * s.row;
        float* frow = f + (bi * rows + i) * cols;
        for (int64_t j = 0; j < cols; ++j) {
          if (back) {
            row[j * s.col] = store<T>(frow[j]);
          } else {
            frow[j] = load(row[j * s.col]);
          }
        }
      }
    }
  };
  std::vector<float> af(static_cast<size_t>(B * M * K)), bf(static_cast<size_t>(B * K * N)),
      of(static_cast<size_t>(B * M * N));
  copy(a, M, K, af.data(), false);
  copy(b, K, N, bf.data(), false);
  if (accumulate) copy(out, M, N, of.data(), false);
  onednn::Threads threads(product_work(a, out));  // oneDNN on the runtime's thread count
  for (int64_t bi = 0; bi < B; ++bi) {
    const dnnl_status_t st =
        dnnl_sgemm('N', 'N', M, N, K, static_cast<float>(alpha), af.data() + bi * M * K, K,
                   bf.data() + bi * K * N, N, accumulate ? static_cast<float>(beta) : 0.f,
                   of.data() + bi * M * N, N);
    if (st != dnnl_success) {
      sdk::fail(TSR_INTERNAL, "matrix product: dnnl_sgemm failed with oneDNN status " +
                                  std::to_string(static_cast<int>(st)) + " on [" +
                                  std::to_string(M) + ", " + std::to_string(K) + "] @ [" +
                                  std::to_string(K) + ", " + std::to_string(N) + "]");
    }
  }
  copy(out, M, N, of.data(), true);
}

// gemm_loop: the product in Acc for the dtypes no library covers (float64, integers, bool).
// Each output row accumulates row by row of b (i-k-j order: b and the row are read with unit
// stride when contiguous, and the inner loop vectorizes); every element's sum still runs over k
// in order.
template <typename T>
void gemm_loop(const sdk::TensorView& a, const sdk::TensorView& b, const sdk::TensorView& out,
               const sdk::Scalar& alpha_s, const sdk::Scalar& beta_s, bool accumulate) {
  using Acc = mm_acc_t<T>;
  const int64_t B = out.dim() == 3 ? out.size(0) : 1;
  const int64_t M = out.size(-2), N = out.size(-1), K = a.size(-1);
  struct Ctx {
    MatrixStrides as, bs, os;
    const T* ap;
    const T* bp;
    T* op;
    Acc alpha, beta;
    bool accumulate;
    int64_t M, N, K;
  } ctx{matrix_strides(a),
        matrix_strides(b),
        matrix_strides(out),
        a.data<T>(),
        b.data<T>(),
        out.data<T>(),
        alpha_s.is_floating_point() ? static_cast<Acc>(alpha_s.to_double())
                                    : static_cast<Acc>(alpha_s.to_int()),
        beta_s.is_floating_point() ? static_cast<Acc>(beta_s.to_double())
                                   : static_cast<Acc>(beta_s.to_int()),
        accumulate,
        M,
        N,
        K};
  TensorIterator::run_parallel(
      B * M, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, N * K)),
      [](void* c, int64_t lo, int64_t hi) {
        const Ctx& x = *static_cast<const Ctx*>(c);
        std::vector<Acc> acc(static_cast<size_t>(x.N));
        for (int64_t r = lo; r < hi; ++r) {
          const int64_t bi = r / x.M, i = r % x.M;
          std::fill(acc.begin(), acc.end(), Acc(0));
          const T* arow = x.ap + bi * x.as.batch + i * x.as.row;
          for (int64_t k = 0; k < x.K; ++k) {
            const Acc ak = static_cast<Acc>(load(arow[k * x.as.col]));
            const T* brow = x.bp + bi * x.bs.batch + k * x.bs.row;
            for (int64_t j = 0; j < x.N; ++j) {
              acc[j] = wrap_add<Acc>(acc[j],
                                     wrap_mul<Acc>(ak, static_cast<Acc>(load(brow[j * x.bs.col]))));
            }
          }
          T* orow = x.op + bi * x.os.batch + i * x.os.row;
          for (int64_t j = 0; j < x.N; ++j) {
            T& o = orow[j * x.os.col];
            Acc v = wrap_mul<Acc>(x.alpha, acc[j]);
            if (x.accumulate && x.beta != 0) {
              v = wrap_add<Acc>(v, wrap_mul<Acc>(x.beta, static_cast<Acc>(load(o))));
            }
            o = store<T>(v);
          }
        }
      },
      &ctx);
}

}  // namespace

bool gemm_library(const sdk::TensorView& a, const sdk::TensorView& b, const sdk::TensorView& out,
                  double alpha, double beta, bool accumulate) {
  return a.size(-1) != 0 && (gemm_small(a, b, out, alpha, beta, accumulate) ||
                             gemm_prepacked(a, b, out, alpha, beta, accumulate) ||
                             gemm_sgemm(a, b, out, alpha, beta, accumulate) ||
                             gemm_onednn(a, b, out, alpha, beta, accumulate));
}

namespace {

void gemm(const sdk::KernelContext& ctx, const sdk::TensorView& a, const sdk::TensorView& b,
          const sdk::TensorView& out, const sdk::Scalar& alpha, const sdk::Scalar& beta,
          bool accumulate) {
  if (out.numel() == 0) return;
  dispatch<kNumeric>(out.dtype(), ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (gemm_library(a, b, out, alpha.to_double(), beta.to_double(), accumulate)) return;
    if constexpr (kIsReduced<T>) {
      if (a.size(-1) != 0) {
        gemm_float32_copies<T>(a, b, out, alpha.to_double(), beta.to_double(), accumulate);
        return;
      }
    }
    gemm_loop<T>(a, b, out, alpha, beta, accumulate);
  });
}

// mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out); bmm.out likewise.
sdk::TensorView mm_out(const sdk::KernelContext& ctx, sdk::TensorView self, sdk::TensorView mat2,
                       sdk::TensorView out) {
  gemm(ctx, self, mat2, out, sdk::Scalar(int64_t{1}), sdk::Scalar(int64_t{0}), false);
  return out;
}

// addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1,
// Tensor(a!) out)
sdk::TensorView addmm_out(const sdk::KernelContext& ctx, sdk::TensorView self, sdk::TensorView a,
                          sdk::TensorView b, sdk::Scalar beta, sdk::Scalar alpha,
                          sdk::TensorView out) {
  const bool accumulate = beta.to_double() != 0;
  // A linear layer's addmm (beta = alpha = 1, self one row of out's width, broadcast) by an
  // immutable weight: the prepacked product adds self as its bias, without copying it into
  // out first.
  if (beta.to_double() == 1 && alpha.to_double() == 1 && out.dim() == 2 &&
      self.data_ptr() != out.data_ptr() &&
      (self.dim() == 1 || (self.dim() == 2 && self.size(0) == 1)) && self.numel() == out.size(1) &&
      a.size(-1) != 0 && gemm_prepacked(a, b, out, 1, 0, false, &self)) {
    return out;
  }
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

// Ops along one dimension, as out= kernels: cumsum, cumprod, _softmax, _log_softmax (own
// loops; float32 softmax goes to oneDNN in onednn_softmax.cc when it can).
#include "scans.hpp"

#include <cmath>
#include <limits>

#include "math.hpp"
#include "pointwise.hpp"
#include "reduce.hpp"
#include "vector_math.hpp"
#include "tessera/base/layout.hpp"

namespace tessera {
namespace cpu {

int64_t wrap_dim(const sdk::KernelContext& ctx, int64_t dim, int64_t ndim) {
  const int64_t wrapped = base::wrap_dim(dim, ndim);
  if (wrapped < 0) {
    ctx.fail(TSR_INTERNAL, "dim " + std::to_string(dim) + " of a " + std::to_string(ndim) +
                               "-dim tensor reached the kernel (the plan checks the range)");
  }
  return wrapped;
}

namespace {

template <typename T>
using line_acc_t = std::conditional_t<std::is_same_v<T, double>, double,
                                      std::conditional_t<kIsFloat<T>, float, int64_t>>;

template <typename T>
T& elem(char* p, int64_t i, int64_t stride) {
  return *reinterpret_cast<T*>(p + i * stride);
}

// cumsum.out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) out); cumprod.out
// likewise. `dtype` is out's (the runtime planned out from it).
template <bool kProd>
sdk::TensorView cumulative_out(const sdk::KernelContext& ctx, sdk::TensorView self, int64_t dim_arg,
                               std::optional<tsr_dtype> /*dtype*/, sdk::TensorView out) {
  const int64_t dim = wrap_dim(ctx, dim_arg, self.dim());
  const ViewAs in(self, out.dtype());
  dispatch<kAll>(out.dtype(), ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = line_acc_t<T>;
    for_each_line(out, in, dim, [](char* o, int64_t os, const char* i, int64_t is, int64_t n) {
      Acc acc = kProd ? Acc(1) : Acc(0);
      for (int64_t k = 0; k < n; ++k) {
        const Acc x = static_cast<Acc>(load(*reinterpret_cast<const T*>(i + k * is)));
        acc = kProd ? wrap_mul<Acc>(acc, x) : wrap_add<Acc>(acc, x);
        elem<T>(o, k, os) = store<T>(acc);
      }
    });
  });
  return out;
}

// softmax_rows: float32 (log_)softmax over a dim both tensors hold contiguously (the last dim of
// a dense tensor: attention scores, logits), one vector_math::softmax_row per line, lines split
// across threads; false (nothing done) for any other case. It replaced oneDNN's softmax there,
// 1.7-2.4x faster than that through our glue at 1 thread (768 rows of 32, 1024 of 1024:
// benchmarks/cpu_math_benchmark.cc, BM_TesseraSoftmax; docs/cpu_backend.md).
bool softmax_rows(const sdk::TensorView& in, const sdk::TensorView& out, int64_t dim, bool log) {
  if (in.dtype() != TSR_DTYPE_FLOAT32 || out.dtype() != TSR_DTYPE_FLOAT32 || in.dim() == 0 ||
      in.strides()[dim] != 1 || out.strides()[dim] != 1) {
    return false;
  }
  for_each_line(out, in, dim, [log](char* o, int64_t, const char* i, int64_t, int64_t n) {
    vector_math::softmax_row(reinterpret_cast<const float*>(i), reinterpret_cast<float*>(o), n,
                             log);
  }, /*cost=*/16);
  return true;
}

// _softmax.out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out); _log_softmax.out
// likewise.
template <bool kLog>
sdk::TensorView softmax_out(const sdk::KernelContext& ctx, sdk::TensorView self, int64_t dim_arg,
                            bool half_to_float, sdk::TensorView out) {
  const int64_t dim = wrap_dim(ctx, dim_arg, self.dim());
  if (half_to_float) {
    ctx.fail(TSR_UNIMPLEMENTED, "softmax with half to float conversion is not supported on cpu");
  }
  if (softmax_rows(self, out, dim, kLog) || softmax_onednn(self, out, dim, kLog)) return out;
  if ((self.dtype() == TSR_DTYPE_FLOAT16 || self.dtype() == TSR_DTYPE_BFLOAT16) &&
      self.numel() > 0) {
    // Computed in float32 (exact copies) on the vectorized softmax and rounded once, as our
    // loop computes these dtypes in float: several times faster than the loop.
    const Temporary out32(out.sizes(), TSR_DTYPE_FLOAT32);
    const ViewAs in32(self, TSR_DTYPE_FLOAT32);
    if (softmax_rows(in32, out32.view, dim, kLog) ||
        softmax_onednn(in32, out32.view, dim, kLog)) {
      copy_cast(out, out32.view);
      return out;
    }
  }
  dispatch<kFloating>(self.dtype(), ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
    for_each_line(out, self, dim, [](char* o, int64_t os, const char* i, int64_t is, int64_t n) {
      auto x = [&](int64_t k) {
        return static_cast<C>(load(*reinterpret_cast<const T*>(i + k * is)));
      };
      C max = -std::numeric_limits<C>::infinity();
      for (int64_t k = 0; k < n; ++k) max = max_nan(max, x(k));
      C sum = 0;
      for (int64_t k = 0; k < n; ++k) sum += std::exp(x(k) - max);
      if constexpr (kLog) {
        const C log_sum = std::log(sum);
        for (int64_t k = 0; k < n; ++k) elem<T>(o, k, os) = store<T>(x(k) - max - log_sum);
      } else {
        for (int64_t k = 0; k < n; ++k) elem<T>(o, k, os) = store<T>(std::exp(x(k) - max) / sum);
      }
    });
  });
  return out;
}

}  // namespace

void register_scans(sdk::Library& lib) {
  lib.impl<&cumulative_out<false>>(TESSERA_OP("cumsum.out"));
  lib.impl<&cumulative_out<true>>(TESSERA_OP("cumprod.out"));
  lib.impl<&softmax_out<false>>(TESSERA_OP("_softmax.out"));
  lib.impl<&softmax_out<true>>(TESSERA_OP("_log_softmax.out"));
}

}  // namespace cpu
}  // namespace tessera

// Reductions of op set v1 as out= kernels: sum, mean, prod, amax, amin, max, min (all and
// .dim), argmax, argmin, var, std, any, all, norm, logsumexp.
//
// Numerics: floating sums are pairwise (leaves in lanes: 32 for float32, 16 for float64 (see
// lane_sum.hpp), 8 otherwise; halved recursively, see kLeaf) with float16 and bfloat16 accumulated
// in float; var/std use Welford's update with Chan's combination in double; logsumexp folds (max,
// scaled sum) so it never overflows. The engine (reduce.hpp) keeps the order of operations a
// function of the shapes alone.
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <tuple>

#include "lane_sum.hpp"
#include "math.hpp"
#include "pointwise.hpp"
#include "reduce.hpp"

namespace tessera {
namespace cpu {
namespace {

// acc_t: what sums and products of T accumulate in.
template <typename T>
using acc_t = std::conditional_t<std::is_same_v<T, double>, double,
                                 std::conditional_t<kIsFloat<T>, float, int64_t>>;

template <typename T>
const T& at(const char* p, int64_t i, int64_t stride) {
  return *reinterpret_cast<const T*>(p + i * stride);
}

// Leaves of up to kLeaf elements are summed in independent lanes (vector accumulators, so the
// adds do not wait on each other); leaves combine pairwise. float32 and float64 leaves have
// lane_sum.hpp's wide lanes (kLanes<T>: 32, 16); the others (accumulating a conversion, or
// integers) kNarrowLanes.
constexpr int kNarrowLanes = 8;

template <typename T, typename Acc>
inline constexpr bool kWideLanes = std::is_floating_point_v<T>&& std::is_same_v<T, Acc>;

// The lanes of one block of a leaf: pairwise halves are cut at multiples of it, so that only a
// sum's last leaf can end in a partial block.
template <typename T, typename Acc>
inline constexpr int64_t kLeafBlock = kWideLanes<T, Acc> ? kLanes<T> : kNarrowLanes;

template <typename T, typename Acc>
Acc leaf_sum(const char* p, int64_t stride, int64_t n) {
  if constexpr (kWideLanes<T, Acc>) {
    return stride == static_cast<int64_t>(sizeof(T))
               ? contiguous_lane_sum(reinterpret_cast<const T*>(p), n)
               : strided_lane_sum<T>(p, stride, n);
  }
  Acc lane[kNarrowLanes] = {};
  int64_t i = 0;
  if (stride == static_cast<int64_t>(sizeof(T))) {
    const T* x = reinterpret_cast<const T*>(p);
    for (; i + kNarrowLanes <= n; i += kNarrowLanes) {
      for (int j = 0; j < kNarrowLanes; ++j) {
        lane[j] = wrap_add<Acc>(lane[j], static_cast<Acc>(load(x[i + j])));
      }
    }
  }
  for (; i < n; ++i) {
    lane[i % kNarrowLanes] =
        wrap_add<Acc>(lane[i % kNarrowLanes], static_cast<Acc>(load(at<T>(p, i, stride))));
  }
  for (int width = kNarrowLanes / 2; width > 0; width /= 2) {
    for (int j = 0; j < width; ++j) lane[j] = wrap_add<Acc>(lane[j], lane[j + width]);
  }
  return lane[0];
}

// kLeaf: the longest run a leaf sums in its lanes before the pairwise tree takes over. Leaves
// of float32 and float64 (kWideLanes: contiguous or strided alike, so that both cut the same
// tree) take 4096 elements, 128 (float32) or 256 (float64) per lane, serially: closing a leaf
// (combining its lanes) cost about as much as its loads at 256 elements, and a 16M-float32 sum
// at 1 thread on the AMD EPYC dev machine went from 24-26 to 38 GB/s, 40-41 with AVX-512
// leaves (benchmarks/cpu_plugin_benchmark.cc, BM_TesseraSum16M; libtorch 37-40 in the same
// runs). The price is accuracy: the serial run per lane grows from 8 to 128 additions, so the
// worst-case rounding bound of a 16M-element float32 sum grows about 6x (128 + 12 terms
// instead of 8 + 16); it stays inside PyTorch's float32 tolerance for the sums conformance
// and the tests check, and far better than a naive loop (CpuReduce tests 2^24 + 1 ones).
// Narrow leaves (float16, bfloat16 and integers, accumulated through a conversion) keep 256.
template <typename T, typename Acc>
inline constexpr int64_t kLeaf = kWideLanes<T, Acc> ? 4096 : 256;

template <typename T, typename Acc>
Acc pairwise_sum(const char* p, int64_t stride, int64_t n) {
  if (n <= kLeaf<T, Acc>) {
    return leaf_sum<T, Acc>(p, stride, n);
  }
  constexpr int64_t kBlock = kLeafBlock<T, Acc>;
  const int64_t half = ((n / 2) + kBlock - 1) & ~(kBlock - 1);
  // The left half first, in statements: as two arguments of one call, the order is the
  // compiler's, and gcc reads the right half first, walking memory backwards one leaf at a
  // time, which the hardware prefetcher does not follow (a 16M-float sum ran 4x slower).
  const Acc left = pairwise_sum<T, Acc>(p, stride, half);
  const Acc right = pairwise_sum<T, Acc>(p + half * stride, stride, n - half);
  return wrap_add<Acc>(left, right);
}

// Sum and mean: T is the output's (and the converted input's) dtype.
template <typename T, bool kMean>
struct SumReducer {
  using Acc = acc_t<T>;
  Acc init() const { return 0; }
  void row(Acc& acc, const char* p, int64_t s, int64_t n, int64_t) const {
    acc = wrap_add<Acc>(acc, pairwise_sum<T, Acc>(p, s, n));
  }
  Acc combine(const Acc& a, const Acc& b) const { return wrap_add<Acc>(a, b); }
  void finish(const Acc& acc, int64_t count, char* const* outs) const {
    if constexpr (kMean) {
      *reinterpret_cast<T*>(outs[0]) = store<T>(acc / static_cast<Acc>(count));
    } else {
      *reinterpret_cast<T*>(outs[0]) = store<T>(acc);
    }
  }
};

template <typename T>
struct ProdReducer {
  using Acc = acc_t<T>;
  Acc init() const { return 1; }
  void row(Acc& acc, const char* p, int64_t s, int64_t n, int64_t) const {
    for (int64_t i = 0; i < n; ++i)
      acc = wrap_mul<Acc>(acc, static_cast<Acc>(load(at<T>(p, i, s))));
  }
  Acc combine(const Acc& a, const Acc& b) const { return wrap_mul<Acc>(a, b); }
  void finish(const Acc& acc, int64_t, char* const* outs) const {
    *reinterpret_cast<T*>(outs[0]) = store<T>(acc);
  }
};

// Max/min values with their first index; NaN wins (the first NaN), as in PyTorch.
template <typename T, bool kMax>
struct ExtremumReducer {
  using C = compute_t<T>;
  struct Acc {
    C value;
    int64_t index;
  };
  int mode;  // 0: values, 1: values and indices, 2: indices only
  Acc init() const { return {C(0), -1}; }
  static bool better(C x, C best) {
    if (is_nan(best)) return false;
    if (is_nan(x)) return true;
    return kMax ? x > best : x < best;
  }
  void row(Acc& acc, const char* p, int64_t s, int64_t n, int64_t index) const {
    int64_t i = 0;
    if (acc.index < 0 && n > 0) {
      acc = {load(at<T>(p, 0, s)), index};
      i = 1;
    }
    for (; i < n; ++i) {
      const C x = load(at<T>(p, i, s));
      if (better(x, acc.value)) acc = {x, index + i};
    }
  }
  Acc combine(const Acc& a, const Acc& b) const {
    if (a.index < 0) return b;
    if (b.index < 0) return a;
    return better(b.value, a.value) ? b : a;
  }
  void finish(const Acc& acc, int64_t, char* const* outs) const {
    if (mode == 2) {
      *reinterpret_cast<int64_t*>(outs[0]) = acc.index;
      return;
    }
    *reinterpret_cast<T*>(outs[0]) = store<T>(acc.value);
    if (mode == 1) *reinterpret_cast<int64_t*>(outs[1]) = acc.index;
  }
};

// Welford's mean and sum of squared deviations, combined by Chan's formula.
template <typename T, bool kStd>
struct VarReducer {
  struct Acc {
    double n, mean, m2;
  };
  double correction;
  Acc init() const { return {0, 0, 0}; }
  void row(Acc& acc, const char* p, int64_t s, int64_t n, int64_t) const {
    for (int64_t i = 0; i < n; ++i) {
      const double x = static_cast<double>(load(at<T>(p, i, s)));
      acc.n += 1;
      const double delta = x - acc.mean;
      acc.mean += delta / acc.n;
      acc.m2 += delta * (x - acc.mean);
    }
  }
  Acc combine(const Acc& a, const Acc& b) const {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const double n = a.n + b.n, delta = b.mean - a.mean;
    return {n, a.mean + delta * b.n / n, a.m2 + b.m2 + delta * delta * a.n * b.n / n};
  }
  void finish(const Acc& acc, int64_t, char* const* outs) const {
    // An empty input gives NaN whatever the correction (ATen fills it so): with correction <= -1
    // the quotient would be 0 / 1.
    const double var = acc.n == 0 ? std::numeric_limits<double>::quiet_NaN()
                                  : acc.m2 / std::max(0.0, acc.n - correction);
    *reinterpret_cast<T*>(outs[0]) = store<T>(kStd ? std::sqrt(var) : var);
  }
};

template <typename T, bool kAny>
struct AnyAllReducer {
  int init() const { return kAny ? 0 : 1; }  // an int: partial results live in a vector
  void row(int& acc, const char* p, int64_t s, int64_t n, int64_t) const {
    for (int64_t i = 0; i < n && acc == (kAny ? 0 : 1); ++i) {
      if ((load(at<T>(p, i, s)) != 0) == kAny) acc = kAny ? 1 : 0;
    }
  }
  int combine(int a, int b) const { return kAny ? (a | b) : (a & b); }
  void finish(int acc, int64_t, char* const* outs) const {
    *reinterpret_cast<uint8_t*>(outs[0]) = acc ? 1 : 0;  // bool and uint8 outputs alike
  }
};

template <typename T>
struct NormReducer {
  using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
  double p;
  Acc init() const {
    return std::isinf(p) ? (p > 0 ? Acc(0) : std::numeric_limits<Acc>::infinity()) : Acc(0);
  }
  void row(Acc& acc, const char* ptr, int64_t s, int64_t n, int64_t) const {
    for (int64_t i = 0; i < n; ++i)
      acc = step(acc, std::abs(static_cast<Acc>(load(at<T>(ptr, i, s)))));
  }
  Acc step(Acc acc, Acc a) const {
    if (p == 2) return acc + a * a;
    if (p == 1) return acc + a;
    if (p == 0) return acc + (a != 0 ? Acc(1) : Acc(0));
    if (std::isinf(p)) return p > 0 ? max_nan(acc, a) : min_nan(acc, a);
    return acc + std::pow(a, static_cast<Acc>(p));
  }
  Acc combine(const Acc& a, const Acc& b) const {
    if (std::isinf(p)) return p > 0 ? max_nan(a, b) : min_nan(a, b);
    return a + b;
  }
  void finish(const Acc& acc, int64_t, char* const* outs) const {
    Acc r = acc;
    if (p == 2)
      r = std::sqrt(acc);
    else if (p != 1 && p != 0 && !std::isinf(p))
      r = std::pow(acc, static_cast<Acc>(1.0 / p));
    *reinterpret_cast<T*>(outs[0]) = store<T>(r);
  }
};

template <typename T>
struct LogSumExpReducer {
  using Acc2 = std::conditional_t<std::is_same_v<T, double>, double, float>;
  struct Acc {
    Acc2 max, sum;
  };
  Acc init() const { return {-std::numeric_limits<Acc2>::infinity(), 0}; }
  static Acc add(Acc a, Acc2 x) {
    if (x == -std::numeric_limits<Acc2>::infinity()) return a;
    if (x > a.max) return {x, a.sum * std::exp(a.max - x) + 1};
    if (x == a.max) return {a.max, a.sum + 1};    // also +inf twice, never inf - inf
    return {a.max, a.sum + std::exp(x - a.max)};  // NaN x makes the sum NaN
  }
  void row(Acc& acc, const char* p, int64_t s, int64_t n, int64_t) const {
    for (int64_t i = 0; i < n; ++i) acc = add(acc, static_cast<Acc2>(load(at<T>(p, i, s))));
  }
  Acc combine(const Acc& a, const Acc& b) const {
    if (b.sum == 0) return a;
    if (a.sum == 0) return b;
    const Acc2 m = std::max(a.max, b.max);
    const Acc2 sa = a.max == m ? a.sum : a.sum * std::exp(a.max - m);
    const Acc2 sb = b.max == m ? b.sum : b.sum * std::exp(b.max - m);
    return {m, sa + sb};
  }
  void finish(const Acc& acc, int64_t, char* const* outs) const {
    const Acc2 r =
        acc.sum == 0 ? -std::numeric_limits<Acc2>::infinity() : acc.max + std::log(acc.sum);
    *reinterpret_cast<T*>(outs[0]) = store<T>(r);
  }
};

// ---- the kernels ----

using sdk::IntSpan;
using sdk::KernelContext;
using sdk::Scalar;
using sdk::TensorView;

IntSpan all_dims() { return IntSpan{nullptr, 0}; }
IntSpan dims_of(const std::optional<IntSpan>& dims) { return dims ? *dims : all_dims(); }
IntSpan one_dim(const int64_t& dim) { return IntSpan{&dim, 1}; }  // keeps dim's address
IntSpan one_dim(const int64_t&&) = delete;

// run folds `in` over `dims` into `outs` (one, or values and indices).
template <typename MakeReducer, size_t N>
void run(const KernelContext& ctx, const TensorView& in, IntSpan dims,
         const std::array<const TensorView*, N>& outs, bool reorder, const MakeReducer& make) {
  static_assert(N <= kMaxReduceOutputs, "reduction outputs");
  TensorView out_views[N];
  OutputPointers ptrs{};
  for (size_t k = 0; k < N; ++k) {
    out_views[k] = *outs[k];
    ptrs[k] = static_cast<char*>(outs[k]->data_ptr());
  }
  if (in.numel() == 1) {
    // One element folded into one output (over any dims: the plan checked them): the reducer
    // runs on it directly, as the engine would, without a layout or a parallel loop.
    const auto r = make();
    auto acc = r.init();
    r.row(acc, static_cast<const char*>(in.data_ptr()), 0, 1, 0);
    r.finish(acc, 1, ptrs.data());
    return;
  }
  const ReduceLayout L = make_layout(in, reduced_dims(ctx, in.dim(), dims), out_views, N, reorder);
  reduce(make(), L, static_cast<const char*>(in.data_ptr()), ptrs);
}
template <typename MakeReducer>
void run(const KernelContext& ctx, const TensorView& in, IntSpan dims, const TensorView& out,
         bool reorder, const MakeReducer& make) {
  run(ctx, in, dims, std::array<const TensorView*, 1>{&out}, reorder, make);
}

// sum / mean / prod, over all dims or a list: the input is read in the output's dtype (the
// runtime planned `out` from the op's `dtype` argument, which the kernels need not read).
template <int kKind>  // 0 sum, 1 mean, 2 prod
TensorView sum_like(const KernelContext& ctx, const TensorView& self, IntSpan dims,
                    const TensorView& out) {
  constexpr sdk::DtypeSet kSet = kKind == 1 ? kFloating : kAll;
  dispatch<kSet>(out.dtype(), ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const ViewAs in(self, out.dtype());
    if constexpr (kKind == 2) {
      run(ctx, in, dims, out, true, [] { return ProdReducer<T>{}; });
    } else {
      run(ctx, in, dims, out, true, [] { return SumReducer<T, kKind == 1>{}; });
    }
  });
  return out;
}

// sum.out / mean.dtype_out / prod.out(Tensor self, *, ScalarType? dtype=None, Tensor(a!) out)
template <int kKind>
TensorView sum_all_out(const KernelContext& ctx, TensorView self, std::optional<tsr_dtype>,
                       TensorView out) {
  return sum_like<kKind>(ctx, self, all_dims(), out);
}
// sum.IntList_out / mean.out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType?
// dtype=None, Tensor(a!) out)
template <int kKind>
TensorView sum_dims_out(const KernelContext& ctx, TensorView self, std::optional<IntSpan> dim,
                        bool /*keepdim*/, std::optional<tsr_dtype>, TensorView out) {
  return sum_like<kKind>(ctx, self, dims_of(dim), out);
}
// prod.int_out(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!)
// out)
TensorView prod_dim_out(const KernelContext& ctx, TensorView self, int64_t dim, bool /*keepdim*/,
                        std::optional<tsr_dtype>, TensorView out) {
  return sum_like<2>(ctx, self, one_dim(dim), out);
}

// amax/amin/max/min/max.dim/min.dim/argmax/argmin.
template <bool kMax, int kMode, size_t N>
void extremum(const KernelContext& ctx, const TensorView& self, IntSpan dims,
              const std::array<const TensorView*, N>& outs) {
  // argmax/argmin refuse bool, as PyTorch's CPU kernels do; max/min take every dtype.
  constexpr sdk::DtypeSet kSet = kMode == 2 ? kNumeric : kAll;
  dispatch<kSet>(self.dtype(), ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    run(ctx, self, dims, outs, kMode == 0, [] { return ExtremumReducer<T, kMax>{kMode}; });
  });
}
template <bool kMax, int kMode>
void extremum(const KernelContext& ctx, const TensorView& self, IntSpan dims,
              const TensorView& out) {
  extremum<kMax, kMode>(ctx, self, dims, std::array<const TensorView*, 1>{&out});
}
// amax.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out); amin likewise.
template <bool kMax>
TensorView amax_out(const KernelContext& ctx, TensorView self, IntSpan dim, bool /*keepdim*/,
                    TensorView out) {
  extremum<kMax, 0>(ctx, self, dim, out);
  return out;
}
// max.unary_out(Tensor self, *, Tensor(a!) out); min likewise.
template <bool kMax>
TensorView max_all_out(const KernelContext& ctx, TensorView self, TensorView out) {
  extremum<kMax, 0>(ctx, self, all_dims(), out);
  return out;
}
// max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) values, Tensor(b!)
// indices) -> (Tensor(a!) values, Tensor(b!) indices); min.dim_min likewise.
template <bool kMax>
std::tuple<TensorView, TensorView> max_dim_out(const KernelContext& ctx, TensorView self,
                                               int64_t dim, bool /*keepdim*/, TensorView values,
                                               TensorView indices) {
  extremum<kMax, 1>(ctx, self, one_dim(dim), std::array<const TensorView*, 2>{&values, &indices});
  return {values, indices};
}
// argmax.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out); argmin
// likewise. dim=None: over all dims, indices counted row-major as in the flattened input.
template <bool kMax>
TensorView argmax_out(const KernelContext& ctx, TensorView self, std::optional<int64_t> dim,
                      bool /*keepdim*/, TensorView out) {
  extremum<kMax, 2>(ctx, self, dim ? one_dim(*dim) : all_dims(), out);
  return out;
}

// var.correction_out / std.correction_out(Tensor self, int[1]? dim=None, *, Scalar? correction,
// bool keepdim, Tensor(a!) out)
template <bool kStd>
TensorView var_out(const KernelContext& ctx, TensorView self, std::optional<IntSpan> dim,
                   std::optional<Scalar> correction_arg, bool /*keepdim*/, TensorView out) {
  const double correction = correction_arg ? correction_arg->to_double() : 1.0;
  dispatch<kFloating>(self.dtype(), ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    run(ctx, self, dims_of(dim), out, true,
        [correction] { return VarReducer<T, kStd>{correction}; });
  });
  return out;
}

// any/all (all dims, or .dim): bool output, uint8 for uint8 input.
template <bool kAny>
TensorView any_out(const KernelContext& ctx, const TensorView& self, IntSpan dims,
                   const TensorView& out) {
  dispatch<kAll>(self.dtype(), ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    run(ctx, self, dims, out, true, [] { return AnyAllReducer<T, kAny>{}; });
  });
  return out;
}
// any.all_out(Tensor self, *, Tensor(a!) out); all likewise.
template <bool kAny>
TensorView any_all_out(const KernelContext& ctx, TensorView self, TensorView out) {
  return any_out<kAny>(ctx, self, all_dims(), out);
}
// any.out(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) out); all likewise.
template <bool kAny>
TensorView any_dim_out(const KernelContext& ctx, TensorView self, int64_t dim, bool /*keepdim*/,
                       TensorView out) {
  return any_out<kAny>(ctx, self, one_dim(dim), out);
}

// norm.out(Tensor self, Scalar? p, int[1] dim, bool keepdim=False, *, Tensor(a!) out)
TensorView norm_out(const KernelContext& ctx, TensorView self, std::optional<Scalar> p_arg,
                    IntSpan dim, bool /*keepdim*/, TensorView out) {
  const double p = p_arg ? p_arg->to_double() : 2.0;
  dispatch<kFloating>(self.dtype(), ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    run(ctx, self, dim, out, true, [p] { return NormReducer<T>{p}; });
  });
  return out;
}

// logsumexp.out(Tensor self, int[1] dim, bool keepdim=False, *, Tensor(a!) out)
TensorView logsumexp_out(const KernelContext& ctx, TensorView self, IntSpan dim, bool /*keepdim*/,
                         TensorView out) {
  const ViewAs in(self, out.dtype());
  dispatch<kFloating>(in.dtype(), ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    run(ctx, in, dim, out, true, [] { return LogSumExpReducer<T>{}; });
  });
  return out;
}

}  // namespace

void register_reductions(sdk::Library& lib) {
  lib.impl<&sum_all_out<0>>(TESSERA_OP("sum.out"));
  lib.impl<&sum_dims_out<0>>(TESSERA_OP("sum.IntList_out"));
  lib.impl<&sum_all_out<1>>(TESSERA_OP("mean.dtype_out"));
  lib.impl<&sum_dims_out<1>>(TESSERA_OP("mean.out"));
  lib.impl<&sum_all_out<2>>(TESSERA_OP("prod.out"));
  lib.impl<&prod_dim_out>(TESSERA_OP("prod.int_out"));
  lib.impl<&amax_out<true>>(TESSERA_OP("amax.out"));
  lib.impl<&amax_out<false>>(TESSERA_OP("amin.out"));
  lib.impl<&max_all_out<true>>(TESSERA_OP("max.unary_out"));
  lib.impl<&max_all_out<false>>(TESSERA_OP("min.unary_out"));
  lib.impl<&max_dim_out<true>>(TESSERA_OP("max.dim_max"));
  lib.impl<&max_dim_out<false>>(TESSERA_OP("min.dim_min"));
  lib.impl<&argmax_out<true>>(TESSERA_OP("argmax.out"));
  lib.impl<&argmax_out<false>>(TESSERA_OP("argmin.out"));
  lib.impl<&var_out<false>>(TESSERA_OP("var.correction_out"));
  lib.impl<&var_out<true>>(TESSERA_OP("std.correction_out"));
  lib.impl<&any_all_out<true>>(TESSERA_OP("any.all_out"));
  lib.impl<&any_dim_out<true>>(TESSERA_OP("any.out"));
  lib.impl<&any_all_out<false>>(TESSERA_OP("all.all_out"));
  lib.impl<&any_dim_out<false>>(TESSERA_OP("all.out"));
  lib.impl<&norm_out>(TESSERA_OP("norm.out"));
  lib.impl<&logsumexp_out>(TESSERA_OP("logsumexp.out"));
}

}  // namespace cpu
}  // namespace tessera

// Reductions of op set v1 as out= kernels: sum, mean, prod, amax, amin, max, min (all and
// .dim), argmax, argmin, var, std, any, all, norm, logsumexp.
//
// Numerics: floating sums are pairwise (blocks of 8 lanes, halved recursively) with float16
// and bfloat16 accumulated in float; var/std use Welford's update with Chan's combination in
// double; logsumexp folds (max, scaled sum) so it never overflows. The engine (reduce.hpp)
// keeps the order of operations a function of the shapes alone.
#include <cmath>
#include <limits>
#include <optional>

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

// Leaves of up to 256 elements are summed in 8 independent lanes (vector accumulators, so the
// adds do not wait on each other); leaves combine pairwise.
constexpr int kLanes = 8;

template <typename T, typename Acc>
Acc leaf_sum(const char* p, int64_t stride, int64_t n) {
  Acc lane[kLanes] = {};
  int64_t i = 0;
  if (stride == static_cast<int64_t>(sizeof(T))) {
    const T* x = reinterpret_cast<const T*>(p);
    for (; i + kLanes <= n; i += kLanes) {
      for (int j = 0; j < kLanes; ++j) {
        lane[j] = wrap_add<Acc>(lane[j], static_cast<Acc>(load(x[i + j])));
      }
    }
  }
  for (; i < n; ++i) {
    lane[i % kLanes] = wrap_add<Acc>(lane[i % kLanes], static_cast<Acc>(load(at<T>(p, i, stride))));
  }
  for (int width = kLanes / 2; width > 0; width /= 2) {
    for (int j = 0; j < width; ++j) lane[j] = wrap_add<Acc>(lane[j], lane[j + width]);
  }
  return lane[0];
}

template <typename T, typename Acc>
Acc pairwise_sum(const char* p, int64_t stride, int64_t n) {
  if (n <= 256) {
    return leaf_sum<T, Acc>(p, stride, n);
  }
  const int64_t half = ((n / 2) + kLanes - 1) & ~int64_t{kLanes - 1};
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
    const double var = acc.m2 / std::max(0.0, acc.n - correction);
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

// ---- argument handling ----

std::vector<int64_t> dim_list(tsr_stack* s, size_t i) {
  if (i == SIZE_MAX || is_none(s, i)) return {};
  return arg<sdk::IntSpan>(s, i).vec();
}
std::vector<int64_t> one_dim(tsr_stack* s, size_t i) { return {arg<int64_t>(s, i)}; }

template <typename MakeReducer>
void run(const sdk::Tensor& in, const std::vector<bool>& reduced,
         const std::vector<sdk::Tensor>& outs, bool reorder, const MakeReducer& make) {
  std::vector<char*> ptrs;
  for (const sdk::Tensor& o : outs) ptrs.push_back(static_cast<char*>(o.data_ptr()));
  const ReduceLayout L = make_layout(in, reduced, outs, reorder);
  reduce(make(), L, static_cast<const char*>(in.data_ptr()), ptrs);
}

// sum / mean / prod, over all dims or a list: the input is read in the output's dtype.
template <int kKind>  // 0 sum, 1 mean, 2 prod
void sum_like(const char* op, tsr_stack* s, std::vector<int64_t> dims) {
  const sdk::Tensor self = arg<sdk::Tensor>(s, 0);
  const sdk::Tensor out = arg<sdk::Tensor>(s, sdk::api().stack_size(s) - 1);
  constexpr sdk::DtypeSet kSet = kKind == 1 ? kFloating : kAll;
  dispatch<kSet>(out.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const sdk::Tensor in = to_dtype(self, out.dtype());
    const std::vector<bool> reduced = reduced_dims(op, in.dim(), dims);
    if constexpr (kKind == 2) {
      run(in, reduced, {out}, true, [] { return ProdReducer<T>{}; });
    } else {
      run(in, reduced, {out}, true, [] { return SumReducer<T, kKind == 1>{}; });
    }
  });
  set_result(s, out);
}

void sum_out(const char* op, tsr_stack* s) { sum_like<0>(op, s, {}); }
void sum_dim_out(const char* op, tsr_stack* s) { sum_like<0>(op, s, dim_list(s, 1)); }
void mean_out(const char* op, tsr_stack* s) { sum_like<1>(op, s, {}); }
void mean_dim_out(const char* op, tsr_stack* s) { sum_like<1>(op, s, dim_list(s, 1)); }
void prod_out(const char* op, tsr_stack* s) { sum_like<2>(op, s, {}); }
void prod_dim_out(const char* op, tsr_stack* s) { sum_like<2>(op, s, one_dim(s, 1)); }

// amax/amin/max/min/max.dim/min.dim/argmax/argmin.
template <bool kMax, int kMode>
void extremum(const char* op, tsr_stack* s, const std::vector<int64_t>& dims,
              const std::vector<sdk::Tensor>& outs) {
  const sdk::Tensor self = arg<sdk::Tensor>(s, 0);
  // argmax/argmin refuse bool, as PyTorch's CPU kernels do; max/min take every dtype.
  constexpr sdk::DtypeSet kSet = kMode == 2 ? kNumeric : kAll;
  dispatch<kSet>(self.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    run(self, reduced_dims(op, self.dim(), dims), outs, kMode == 0,
        [] { return ExtremumReducer<T, kMax>{kMode}; });
  });
}
sdk::Tensor last(tsr_stack* s, size_t from_end = 1) {
  return arg<sdk::Tensor>(s, sdk::api().stack_size(s) - from_end);
}
template <bool kMax>
void amax_out(const char* op, tsr_stack* s) {
  const sdk::Tensor out = last(s);
  extremum<kMax, 0>(op, s, dim_list(s, 1), {out});
  set_result(s, out);
}
template <bool kMax>
void max_all_out(const char* op, tsr_stack* s) {
  const sdk::Tensor out = last(s);
  extremum<kMax, 0>(op, s, {}, {out});
  set_result(s, out);
}
template <bool kMax>
void max_dim_out(const char* op, tsr_stack* s) {
  const sdk::Tensor values = last(s, 2), indices = last(s, 1);
  extremum<kMax, 1>(op, s, one_dim(s, 1), {values, indices});
  set_results(s, values, indices);
}
template <bool kMax>
void argmax_out(const char* op, tsr_stack* s) {
  const sdk::Tensor out = last(s);
  // dim=None: over all dims, indices counted row-major as in the flattened input.
  extremum<kMax, 2>(op, s, is_none(s, 1) ? std::vector<int64_t>{} : one_dim(s, 1), {out});
  set_result(s, out);
}

// var.correction_out / std.correction_out(Tensor self, int[1]? dim=None, *, Scalar? correction,
// bool keepdim, Tensor(a!) out)
template <bool kStd>
void var_out(const char* op, tsr_stack* s) {
  const sdk::Tensor self = arg<sdk::Tensor>(s, 0), out = last(s);
  const double correction = is_none(s, 2) ? 1.0 : arg<sdk::Scalar>(s, 2).to_double();
  dispatch<kFloating>(self.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    run(self, reduced_dims(op, self.dim(), dim_list(s, 1)), {out}, true,
        [correction] { return VarReducer<T, kStd>{correction}; });
  });
  set_result(s, out);
}

// any/all (all dims, or .dim): bool output, uint8 for uint8 input.
template <bool kAny>
void any_out(const char* op, tsr_stack* s, const std::vector<int64_t>& dims) {
  const sdk::Tensor self = arg<sdk::Tensor>(s, 0), out = last(s);
  dispatch<kAll>(self.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    run(self, reduced_dims(op, self.dim(), dims), {out}, true,
        [] { return AnyAllReducer<T, kAny>{}; });
  });
  set_result(s, out);
}
template <bool kAny>
void any_all_out(const char* op, tsr_stack* s) {
  any_out<kAny>(op, s, {});
}
template <bool kAny>
void any_dim_out(const char* op, tsr_stack* s) {
  any_out<kAny>(op, s, one_dim(s, 1));
}

// norm.out(Tensor self, Scalar? p, int[1] dim, bool keepdim=False, *, Tensor(a!) out)
void norm_out(const char* op, tsr_stack* s) {
  const sdk::Tensor self = arg<sdk::Tensor>(s, 0), out = last(s);
  const double p = is_none(s, 1) ? 2.0 : arg<sdk::Scalar>(s, 1).to_double();
  dispatch<kFloating>(self.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    run(self, reduced_dims(op, self.dim(), dim_list(s, 2)), {out}, true,
        [p] { return NormReducer<T>{p}; });
  });
  set_result(s, out);
}

// logsumexp.out(Tensor self, int[1] dim, bool keepdim=False, *, Tensor(a!) out)
void logsumexp_out(const char* op, tsr_stack* s) {
  const sdk::Tensor self = arg<sdk::Tensor>(s, 0), out = last(s);
  const sdk::Tensor in = to_dtype(self, out.dtype());
  dispatch<kFloating>(in.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    run(in, reduced_dims(op, in.dim(), dim_list(s, 1)), {out}, true,
        [] { return LogSumExpReducer<T>{}; });
  });
  set_result(s, out);
}

}  // namespace

void register_reductions(sdk::Library& lib) {
  impl<&sum_out>(lib, "sum.out");
  impl<&sum_dim_out>(lib, "sum.IntList_out");
  impl<&mean_out>(lib, "mean.dtype_out");
  impl<&mean_dim_out>(lib, "mean.out");
  impl<&prod_out>(lib, "prod.out");
  impl<&prod_dim_out>(lib, "prod.int_out");
  impl<&amax_out<true>>(lib, "amax.out");
  impl<&amax_out<false>>(lib, "amin.out");
  impl<&max_all_out<true>>(lib, "max.unary_out");
  impl<&max_all_out<false>>(lib, "min.unary_out");
  impl<&max_dim_out<true>>(lib, "max.dim_max");
  impl<&max_dim_out<false>>(lib, "min.dim_min");
  impl<&argmax_out<true>>(lib, "argmax.out");
  impl<&argmax_out<false>>(lib, "argmin.out");
  impl<&var_out<false>>(lib, "var.correction_out");
  impl<&var_out<true>>(lib, "std.correction_out");
  impl<&any_all_out<true>>(lib, "any.all_out");
  impl<&any_dim_out<true>>(lib, "any.out");
  impl<&any_all_out<false>>(lib, "all.all_out");
  impl<&any_dim_out<false>>(lib, "all.out");
  impl<&norm_out>(lib, "norm.out");
  impl<&logsumexp_out>(lib, "logsumexp.out");
}

}  // namespace cpu
}  // namespace tessera

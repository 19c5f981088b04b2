// Unary pointwise ops (op set v1), as out= kernels; the runtime derives the functional and
// in-place forms.
#include <cmath>
#include <limits>
#include <optional>
#include <string_view>

#include "math.hpp"
#include "pointwise.hpp"
#include "tessera/base/dtypes.hpp"
#include "tessera/base/element_math.hpp"
#include "tessera/base/op_checks.hpp"
#include "tessera/base/special_math.hpp"
#include "vector_math.hpp"

namespace tessera {
namespace cpu {
namespace {

enum class Kind {
  kSame,   // computes in the input's dtype, returns it (abs, floor)
  kFloat,  // integers and bool computed as float32 (sqrt, exp)
  kBool,   // computes in the input's dtype, returns bool (isnan)
};

using sdk::KernelContext;
using sdk::TensorView;

// A float32 array function (vector_math.hpp) for dense float32 operands, or none.
using VectorFn = void (*)(const float*, float*, int64_t);

// unary: out = f(self), computed in the planned dtype; `vec` instead where it is given and the
// operands are dense float32.
template <Kind K, sdk::DtypeSet Set, typename F>
TensorView unary(const KernelContext& ctx, const TensorView& self, const TensorView& out,
                 const F& f, VectorFn vec = nullptr) {
  const tsr_dtype compute = ctx.planned_compute_dtype();  // kFloat: float32 for integers
  dispatch<Set>(compute, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = std::conditional_t<K == Kind::kBool, bool, T>;
    PointwiseFrame frame(out, K == Kind::kBool ? TSR_DTYPE_BOOL : compute);
    frame.input(self, compute);
    if constexpr (std::is_same_v<T, float> && K != Kind::kBool) {
      if (vec != nullptr && frame.run_vector(vec)) return;
    }
    frame.run<R, T>(f);
  });
  return out;
}

// NAME.out(Tensor self, *, Tensor(a!) out)
#define TESSERA_UNARY(NAME, KIND, SET, EXPR)                                                   \
  TensorView NAME##_out(const KernelContext& ctx, TensorView self, TensorView out) {           \
    return unary<Kind::KIND, SET>(                                                             \
        ctx, self, out, [](auto a) -> decltype(a) { return static_cast<decltype(a)>(EXPR); }); \
  }
// The same, with a vector_math function for dense float32.
#define TESSERA_UNARY_VECTOR(NAME, KIND, SET, EXPR)                                           \
  TensorView NAME##_out(const KernelContext& ctx, TensorView self, TensorView out) {          \
    return unary<Kind::KIND, SET>(                                                            \
        ctx, self, out, [](auto a) -> decltype(a) { return static_cast<decltype(a)>(EXPR); }, \
        &vector_math::NAME);                                                                  \
  }
#define TESSERA_PREDICATE(NAME, SET, EXPR)                                               \
  TensorView NAME##_out(const KernelContext& ctx, TensorView self, TensorView out) {     \
    return unary<Kind::kBool, SET>(ctx, self, out, [](auto a) -> bool { return EXPR; }); \
  }

template <typename C>
C abs_of(C a) {
  if constexpr (std::is_unsigned_v<C>) {
    return a;
  } else if constexpr (std::is_integral_v<C>) {
    return a < 0 ? wrap_neg(a) : a;
  } else {
    return std::abs(a);
  }
}
template <typename C>
C sign_of(C a) {
  if constexpr (std::is_same_v<C, bool>) {
    return a;
  } else {
    return static_cast<C>((C(0) < a) - (a < C(0)));
  }
}
// Rounding leaves integers as they are.
#define TESSERA_ROUNDING(NAME, FN)         \
  template <typename C>                    \
  C NAME(C a) {                            \
    if constexpr (std::is_integral_v<C>) { \
      return a;                            \
    } else {                               \
      return FN(a);                        \
    }                                      \
  }
TESSERA_ROUNDING(floor_of, std::floor)
TESSERA_ROUNDING(ceil_of, std::ceil)
TESSERA_ROUNDING(round_of, std::nearbyint)  // halves to even, like torch.round
TESSERA_ROUNDING(trunc_of, std::trunc)
#undef TESSERA_ROUNDING
template <typename C>
bool finite(C a) {
  if constexpr (std::is_floating_point_v<C>) {
    return std::isfinite(a);
  } else {
    return true;
  }
}
template <typename C>
bool infinite(C a) {
  if constexpr (std::is_floating_point_v<C>) {
    return std::isinf(a);
  } else {
    return false;
  }
}
template <typename C>
C bit_not(C a) {
  if constexpr (std::is_same_v<C, bool>) {
    return !a;
  } else {
    return static_cast<C>(~a);
  }
}

// signbit: the sign bit of a float (set for -0 and -NaN), a < 0 for the signed integers.
template <typename C>
bool sign_bit(C a) {
  if constexpr (std::is_floating_point_v<C>) {
    // Not std::signbit: GCC 12 fails to compile its vectorized form (an internal compiler error
    // at -O3); copysign carries the same bit, NaN's included.
    return std::copysign(C(1), a) < C(0);
  } else if constexpr (std::is_signed_v<C>) {
    return a < 0;
  } else {
    return false;
  }
}
// log|gamma(a)| without lgamma's global `signgam` (a data race when a kernel runs on threads).
inline float log_gamma(float a) {
  int sign;
  return lgammaf_r(a, &sign);
}
inline double log_gamma(double a) {
  int sign;
  return lgamma_r(a, &sign);
}
constexpr sdk::DtypeSet kNumericNoBool = kNumeric;
constexpr sdk::DtypeSet kFloatCompute = kFloating;  // kFloat ops compute only in these

TESSERA_UNARY(abs, kSame, kNumericNoBool, abs_of(a))
TESSERA_UNARY(neg, kSame, kNumericNoBool, wrap_neg(a))
TESSERA_UNARY(sign, kSame, kAll, sign_of(a))
TESSERA_UNARY(sqrt, kFloat, kFloatCompute, std::sqrt(a))
TESSERA_UNARY(rsqrt, kFloat, kFloatCompute, 1 / std::sqrt(a))
TESSERA_UNARY_VECTOR(exp, kFloat, kFloatCompute, std::exp(a))
TESSERA_UNARY(exp2, kFloat, kFloatCompute, std::exp2(a))
TESSERA_UNARY(expm1, kFloat, kFloatCompute, std::expm1(a))
TESSERA_UNARY_VECTOR(log, kFloat, kFloatCompute, std::log(a))
TESSERA_UNARY(log2, kFloat, kFloatCompute, std::log2(a))
TESSERA_UNARY(log10, kFloat, kFloatCompute, std::log10(a))
TESSERA_UNARY(log1p, kFloat, kFloatCompute, std::log1p(a))
TESSERA_UNARY(sin, kFloat, kFloatCompute, std::sin(a))
TESSERA_UNARY(cos, kFloat, kFloatCompute, std::cos(a))
TESSERA_UNARY(tan, kFloat, kFloatCompute, std::tan(a))
TESSERA_UNARY(asin, kFloat, kFloatCompute, std::asin(a))
TESSERA_UNARY(acos, kFloat, kFloatCompute, std::acos(a))
TESSERA_UNARY(atan, kFloat, kFloatCompute, std::atan(a))
TESSERA_UNARY(sinh, kFloat, kFloatCompute, std::sinh(a))
TESSERA_UNARY(cosh, kFloat, kFloatCompute, std::cosh(a))
TESSERA_UNARY_VECTOR(tanh, kFloat, kFloatCompute, std::tanh(a))
TESSERA_UNARY_VECTOR(sigmoid, kFloat, kFloatCompute, 1 / (1 + std::exp(-a)))
TESSERA_UNARY_VECTOR(erf, kFloat, kFloatCompute, std::erf(a))
TESSERA_UNARY(reciprocal, kFloat, kFloatCompute, 1 / a)
TESSERA_UNARY(relu, kSame, kNumericNoBool, is_nan(a) || a > 0 ? a : decltype(a)(0))
TESSERA_UNARY_VECTOR(silu, kSame, kFloating, a / (1 + std::exp(-a)))
TESSERA_UNARY(floor, kSame, kNumericNoBool, floor_of(a))
TESSERA_UNARY(ceil, kSame, kNumericNoBool, ceil_of(a))
TESSERA_UNARY(round, kSame, kNumericNoBool, round_of(a))
TESSERA_UNARY(trunc, kSame, kNumericNoBool, trunc_of(a))
TESSERA_UNARY(bitwise_not, kSame, kIntegralAndBool, bit_not(a))
TESSERA_PREDICATE(logical_not, kAll, a == 0)
TESSERA_PREDICATE(isnan, kAll, is_nan(a))
TESSERA_PREDICATE(isinf, kAll, infinite(a))
TESSERA_PREDICATE(isfinite, kAll, finite(a))
// op set 1.7
TESSERA_UNARY(frac, kSame, kFloating, a - std::trunc(a))
TESSERA_UNARY(sgn, kSame, kAll, sign_of(a))  // sign, for the real dtypes
TESSERA_PREDICATE(signbit, kAll, sign_bit(a))
TESSERA_UNARY(deg2rad, kFloat, kFloatCompute, a* decltype(a)(M_PI / 180))
TESSERA_UNARY(rad2deg, kFloat, kFloatCompute, a* decltype(a)(180 / M_PI))
TESSERA_UNARY(erfc, kFloat, kFloatCompute, std::erfc(a))
TESSERA_UNARY(erfinv, kFloat, kFloatCompute, base::erfinv(a))
TESSERA_UNARY(lgamma, kFloat, kFloatCompute, log_gamma(a))
TESSERA_UNARY(digamma, kFloat, kFloatCompute, base::digamma(a))
TESSERA_UNARY(i0, kFloat, kFloatCompute, base::bessel_i0(a))
TESSERA_UNARY(sinc, kFloat, kFloatCompute, base::sinc(a))
TESSERA_UNARY(acosh, kFloat, kFloatCompute, std::acosh(a))
TESSERA_UNARY(asinh, kFloat, kFloatCompute, std::asinh(a))
TESSERA_UNARY(atanh, kFloat, kFloatCompute, std::atanh(a))

// logit.out(Tensor self, float? eps=None, *, Tensor(a!) out): log(x / (1 - x)), x clamped to
// [eps, 1 - eps] first when eps is given and not negative (PyTorch's rule); inf at x = 1.
TensorView logit_out(const KernelContext& ctx, TensorView self, std::optional<double> eps,
                     TensorView out) {
  const bool clamp = eps.has_value() && *eps >= 0;
  const double lo = eps.value_or(0);
  return unary<Kind::kFloat, kFloatCompute>(ctx, self, out, [clamp, lo](auto a) -> decltype(a) {
    using C = decltype(a);
    return base::logit(a, clamp, C(lo), C(1 - lo));
  });
}

// polygamma.out(int n, Tensor self, *, Tensor(a!) out); the plan refuses n < 0.
TensorView polygamma_out(const KernelContext& ctx, int64_t n, TensorView self, TensorView out) {
  return unary<Kind::kFloat, kFloatCompute>(
      ctx, self, out, [n](auto a) -> decltype(a) { return base::polygamma(n, a); });
}

// nan_to_num.out(Tensor self, float? nan=None, float? posinf=None, float? neginf=None, *,
// Tensor(a!) out): NaN, +inf and -inf replaced (by 0 and T's largest and lowest finite values
// unless given), each replacement rounded to T first, as PyTorch's static_cast<scalar_t> (1e10
// is inf in float16); integers and bool copied.
TensorView nan_to_num_out(const KernelContext& ctx, TensorView self, std::optional<double> nan,
                          std::optional<double> posinf, std::optional<double> neginf,
                          TensorView out) {
  const tsr_dtype compute = ctx.planned_compute_dtype();
  dispatch<kAll>(compute, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    PointwiseFrame frame(out, compute);
    frame.input(self, compute);
    if constexpr (std::is_floating_point_v<C>) {
      const auto as_t = [](double v) { return load(store<T>(v)); };
      const double largest = base::largest_finite(compute);
      const C nan_value = as_t(nan.value_or(0));
      const C pos = as_t(posinf.value_or(largest));
      const C neg = as_t(neginf.value_or(-largest));
      frame.run<T, T>([=](C a) -> C { return base::nan_to_num(a, nan_value, pos, neg); });
    } else {
      frame.run<T, T>([](C a) { return a; });
    }
  });
  return out;
}

// gelu.out(Tensor self, *, str approximate='none', Tensor(a!) out)
TensorView gelu_out(const KernelContext& ctx, TensorView self, std::string_view approximate,
                    TensorView out) {
  if (approximate == "none") {
    return unary<Kind::kSame, kFloating>(
        ctx, self, out,
        [](auto a) -> decltype(a) {
          using C = decltype(a);
          return a * C(0.5) * (1 + std::erf(a * C(M_SQRT1_2)));
        },
        &vector_math::gelu);
  } else if (approximate == "tanh") {
    return unary<Kind::kSame, kFloating>(
        ctx, self, out,
        [](auto a) -> decltype(a) {
          using C = decltype(a);
          const C inner = C(M_2_SQRTPI * M_SQRT1_2) * (a + C(0.044715) * a * a * a);
          return C(0.5) * a * (1 + std::tanh(inner));
        },
        &vector_math::gelu_tanh);
  }
  // The plan refuses every other value; a runtime whose plan predates that check does not
  // (tessera/base/op_checks.hpp says why the kernel asks again).
  ctx.fail(TSR_INVALID_ARGUMENT, std::string(base::gelu_approximate_error(approximate)) +
                                     ", got '" + std::string(approximate) + "'");
}

// round.decimals_out(Tensor self, *, int decimals, Tensor(a!) out), as PyTorch's CPU kernel:
// x * 10^d rounded half to even, then divided by 10^d (for d < 0: x / 10^-d rounded, times
// 10^-d), computed in float for the 16-bit floats; decimals = 0 is round itself. Floating
// dtypes only, for every `decimals` (PyTorch's round.decimals refuses integers even with
// decimals = 0, where plain round passes them through).
TensorView round_decimals_out(const KernelContext& ctx, TensorView self, int64_t decimals,
                              TensorView out) {
  if (decimals == 0) {
    return unary<Kind::kSame, kFloating>(ctx, self, out, [](auto a) { return round_of(a); });
  }
  const bool negative = decimals < 0;
  // |decimals| in double: -INT64_MIN does not fit int64_t (found by the op_call fuzzer).
  const double ten_pow = std::pow(10.0, std::fabs(static_cast<double>(decimals)));
  return unary<Kind::kSame, kFloating>(ctx, self, out, [negative, ten_pow](auto a) -> decltype(a) {
    using C = decltype(a);
    const C p = static_cast<C>(ten_pow);
    return negative ? std::nearbyint(a / p) * p : std::nearbyint(a * p) / p;
  });
}

}  // namespace

void register_unary(sdk::Library& lib) {
#define TESSERA_REGISTER(NAME) lib.impl<&NAME##_out>(TESSERA_OP(#NAME ".out"));
  TESSERA_REGISTER(abs)
  TESSERA_REGISTER(neg)
  TESSERA_REGISTER(sign)
  TESSERA_REGISTER(sqrt)
  TESSERA_REGISTER(rsqrt)
  TESSERA_REGISTER(exp)
  TESSERA_REGISTER(exp2)
  TESSERA_REGISTER(expm1)
  TESSERA_REGISTER(log)
  TESSERA_REGISTER(log2)
  TESSERA_REGISTER(log10)
  TESSERA_REGISTER(log1p)
  TESSERA_REGISTER(sin)
  TESSERA_REGISTER(cos)
  TESSERA_REGISTER(tan)
  TESSERA_REGISTER(asin)
  TESSERA_REGISTER(acos)
  TESSERA_REGISTER(atan)
  TESSERA_REGISTER(sinh)
  TESSERA_REGISTER(cosh)
  TESSERA_REGISTER(tanh)
  TESSERA_REGISTER(sigmoid)
  TESSERA_REGISTER(erf)
  TESSERA_REGISTER(reciprocal)
  TESSERA_REGISTER(relu)
  TESSERA_REGISTER(silu)
  TESSERA_REGISTER(floor)
  TESSERA_REGISTER(ceil)
  TESSERA_REGISTER(round)
  lib.impl<&round_decimals_out>(TESSERA_OP("round.decimals_out"));
  TESSERA_REGISTER(trunc)
  TESSERA_REGISTER(bitwise_not)
  TESSERA_REGISTER(logical_not)
  TESSERA_REGISTER(isnan)
  TESSERA_REGISTER(isinf)
  TESSERA_REGISTER(isfinite)
  TESSERA_REGISTER(gelu)
  TESSERA_REGISTER(frac)
  TESSERA_REGISTER(sgn)
  TESSERA_REGISTER(signbit)
  TESSERA_REGISTER(deg2rad)
  TESSERA_REGISTER(rad2deg)
  TESSERA_REGISTER(erfc)
  TESSERA_REGISTER(erfinv)
  TESSERA_REGISTER(lgamma)
  TESSERA_REGISTER(digamma)
  TESSERA_REGISTER(i0)
  TESSERA_REGISTER(sinc)
  TESSERA_REGISTER(acosh)
  TESSERA_REGISTER(asinh)
  TESSERA_REGISTER(atanh)
  TESSERA_REGISTER(logit)
  TESSERA_REGISTER(polygamma)
  TESSERA_REGISTER(nan_to_num)
#undef TESSERA_REGISTER
}

}  // namespace cpu
}  // namespace tessera

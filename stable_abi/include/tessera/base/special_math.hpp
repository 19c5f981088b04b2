// Special functions the C++ standard library lacks (erfinv, digamma, polygamma, i0), written
// once for every backend: part of the header-only base (tessera/base/), with no dependency but
// <cmath>, and usable in device code (nvcc and hipcc compile these functions for the host and the
// device alike), so that the CPU plugin (plugins/cpu/unary.cc) and the GPU plugins' functors
// (plugins/cuda/pointwise_ops.h) compute the same numbers the same way.
//
// Each function is a template over the floating type it computes in (float or double; the
// 16-bit floats compute in float, as PyTorch's opmath does) and follows PyTorch's values at the
// edges: the poles, the ends of a domain, NaN. The methods are the textbook ones (recurrence and
// asymptotic series, Euler-Maclaurin summation, Newton-Halley refinement), chosen for accuracy
// near the result type's rounding rather than for speed. The conformance suite checks them
// against references of its own (conformance/op_db_special.cc), computed otherwise.
#pragma once

#include <cmath>
#include <cstdint>

#include "tessera/base/host_device.hpp"

namespace tessera {
namespace base {
namespace special_detail {

template <typename T>
TSR_BASE_HD inline T pi() {
  return T(3.14159265358979323846264338327950288);
}
// Constants without std::numeric_limits, whose constexpr members device code may not call
// (nvcc without --expt-relaxed-constexpr).
template <typename T>
TSR_BASE_HD inline T infinity() {
  return static_cast<T>(INFINITY);
}
template <typename T>
TSR_BASE_HD inline T quiet_nan() {
  return static_cast<T>(NAN);
}
template <typename T>
TSR_BASE_HD inline T epsilon() {
  return static_cast<T>(sizeof(T) > 4 ? 2.220446049250313e-16 : 1.1920928955078125e-07);
}

// Euler-Maclaurin's tail of the Hurwitz zeta function at a >= 10: the sum over k >= 0 of
// (a + k)^-s, for s >= 2. The correction terms are B_2j / (2j)! for j = 1..8.
template <typename T>
TSR_BASE_HD inline T zeta_tail(T s, T a) {
  constexpr double kCoefficients[] = {
      0.08333333333333333,  -0.001388888888888889,  3.306878306878307e-05,  -8.267195767195768e-07,
      2.08767569878681e-08, -5.284190138687493e-10, 1.3382536530684679e-11, -3.3896802963225827e-13,
  };
  const T a_pow = std::pow(a, -s);  // a^-s
  T tail = a * a_pow / (s - T(1)) + a_pow / T(2);
  T factor = s * a_pow / a;  // s (s+1) ... (s+2j-2) a^(-s-2j+1), for j = 1
  for (int j = 0; j < 8; ++j) {
    if (j > 0) factor *= (s + T(2 * j - 1)) * (s + T(2 * j)) / (a * a);
    const T term = T(kCoefficients[j]) * factor;
    tail += term;
    if (std::fabs(term) <= epsilon<T>() * std::fabs(tail)) break;
  }
  return tail;
}

// The Hurwitz zeta function at q > 0 for an integer s >= 2: the first terms summed directly
// until q + k is past both 10 and s + 10 (so that the tail's series converges fast), the rest
// by zeta_tail.
template <typename T>
TSR_BASE_HD inline T zeta_positive(T s, T q) {
  const T start = T(10) + (s < T(64) ? s : T(64));
  T sum = 0;
  while (q < start) {
    sum += std::pow(q, -s);
    q += T(1);
  }
  return sum + zeta_tail(s, q);
}

}  // namespace special_detail

// digamma (psi): the logarithmic derivative of the gamma function. Poles: -inf at +0, +inf at
// -0, NaN at the negative integers (PyTorch's values). Negative arguments by reflection,
// psi(x) = psi(1 - x) - pi / tan(pi x), with tan's argument reduced first so that it stays exact;
// the rest by recurrence up to 10 and the asymptotic series.
template <typename T>
TSR_BASE_HD inline T digamma(T x) {
  using namespace special_detail;
  if (x == T(0)) return std::signbit(x) ? infinity<T>() : -infinity<T>();
  T result = 0;
  if (x < T(0)) {
    if (x == std::floor(x)) return quiet_nan<T>();
    const T reduced = x - std::round(x);  // in [-1/2, 1/2]: tan(pi x) = tan(pi reduced)
    result = -pi<T>() / std::tan(pi<T>() * reduced);
    x = T(1) - x;
  }
  while (x < T(10)) {
    result -= T(1) / x;
    x += T(1);
  }
  // ln x - 1/(2x) - sum B_2k / (2k x^2k), k = 1..7
  const T z = T(1) / (x * x);
  const T series =
      z *
      (T(1.0 / 12) -
       z * (T(1.0 / 120) -
            z * (T(1.0 / 252) - z * (T(1.0 / 240) - z * (T(1.0 / 132) - z * (T(691.0 / 32760) -
                                                                             z * T(1.0 / 12)))))));
  return result + std::log(x) - T(0.5) / x - series;
}

namespace special_detail {

// polygamma for n >= 1 in double (see polygamma).
TSR_BASE_HD inline double polygamma_double(int64_t n, double x) {
  using T = double;
  if (x != x) return x;
  if (x == infinity<T>()) return T(0);
  if (x == -infinity<T>()) return quiet_nan<T>();
  const T sign = n % 2 == 1 ? T(1) : T(-1);
  if (x <= T(0) && x == std::floor(x)) return sign * infinity<T>();
  const T s = static_cast<T>(n) + T(1);
  T zeta;
  if (x > T(0)) {
    zeta = zeta_positive(s, x);
  } else {
    // The m = ceil(-x) negative terms x + k, k < m: summed directly when they are few; else
    // they are -(p + j), j < m, p = -(x + m - 1) in (0, 1), whose sum is (-1)^s (zeta(s, p) -
    // zeta(s, p + m)).
    const T m = std::ceil(-x);
    T negative = 0;
    if (m <= T(1024)) {
      for (T k = 0; k < m; k += T(1)) negative += std::pow(x + k, -s);
    } else {
      const T p = -(x + m - T(1));
      const T odd = n % 2 == 0 ? T(-1) : T(1);  // (-1)^s
      negative = odd * (zeta_positive(s, p) - zeta_positive(s, p + m));
    }
    zeta = negative + zeta_positive(s, x + m);
  }
  // n!, by product (no lgamma: it writes the global `signgam` on the host); it is inf from
  // n = 171 in double, 35 in float, where the loop stops.
  T factorial = 1;
  for (int64_t k = 2; k <= n && factorial != infinity<T>(); ++k) factorial *= static_cast<T>(k);
  return sign * factorial * zeta;
}

}  // namespace special_detail

// polygamma(n, x): the n-th derivative of digamma, for n >= 0 (the caller refuses negative n).
// n = 0 is digamma; otherwise (-1)^(n+1) n! zeta(n + 1, x), with the Hurwitz zeta function at a
// negative x split into its negative terms (a difference of two zetas at positive arguments,
// since s is an integer) and its positive ones, so that the cost does not grow with |x|. At the
// poles (x a non-positive integer) the value is (-1)^(n+1) inf; at +inf its limit 0, at -inf NaN
// (PyTorch 1.13 gives NaN or +-inf at +-inf depending on n).
template <typename T>
TSR_BASE_HD inline T polygamma(int64_t n, T x) {
  using namespace special_detail;
  if (n == 0) return digamma(x);
  // In double for float: at a negative x the terms near the poles nearly cancel (polygamma(6,
  // -2.5) sums +-128 n! into -0.138), which float's 24 bits cannot carry. Even double cannot
  // near a half-integer at a large order: polygamma(30, -2.5) is -2.56e19 from terms of 1e41
  // (this gives -0, PyTorch -3.7e25).
  if constexpr (sizeof(T) < sizeof(double)) {
    return static_cast<T>(polygamma(n, static_cast<double>(x)));
  } else {
    return special_detail::polygamma_double(n, x);
  }
}

// i0: the modified Bessel function of the first kind of order zero, computed in double. Its
// power series for |x| <= 30 (every term positive, so no cancellation), the asymptotic series
// beyond, with the exponential's scale folded in so that the result overflows only where i0 itself
// does.
template <typename T>
TSR_BASE_HD inline T bessel_i0(T x) {
  if constexpr (sizeof(T) < sizeof(double)) {
    // In double for float: exp(x - log(2 pi x) / 2) in float loses about x ulps (3.8e-6 at 79).
    return static_cast<T>(bessel_i0(static_cast<double>(x)));
  } else {
    using namespace special_detail;
    x = std::fabs(x);
    if (x != x) return x;
    if (x <= T(30)) {
      const T q = x * x / T(4);
      T term = 1, sum = 1;
      for (int k = 1; k < 200; ++k) {
        term *= q / (T(k) * T(k));
        sum += term;
        if (term <= sum * epsilon<T>()) break;
      }
      return sum;
    }
    if (x == infinity<T>()) return x;
    // e^x / sqrt(2 pi x) * sum_k prod_{j<=k} (2j - 1)^2 / (k! (8x)^k)
    T term = 1, sum = 1;
    for (int k = 1; k < 16; ++k) {
      term *= T((2 * k - 1) * (2 * k - 1)) / (T(k) * T(8) * x);
      sum += term;
      if (term <= sum * epsilon<T>()) break;
    }
    return std::exp(x - T(0.5) * std::log(T(2) * pi<T>() * x)) * sum;
  }
}

// erfinv: the inverse error function on [-1, 1]: +-inf at +-1, NaN outside. Winitzki's
// closed-form approximation (relative error ~2e-3) refined by Halley's method on erf, or on erfc
// where |y| > 1/2 (1 - |y| is exact there, so the answer keeps its accuracy as |y| nears 1).
template <typename T>
TSR_BASE_HD inline T erfinv(T y) {
  using namespace special_detail;
  if (!(y >= T(-1) && y <= T(1))) return quiet_nan<T>();
  const T a = std::fabs(y);
  if (a == T(1)) return std::copysign(infinity<T>(), y);
  const T w = -std::log((T(1) - a) * (T(1) + a));
  const T k = T(0.147);
  const T t = T(2) / (pi<T>() * k) - w / T(2);
  T x = std::sqrt(std::sqrt(t * t + w / k) - t);
  const T two_over_sqrt_pi = T(1.12837916709551257390);
  for (int i = 0; i < 8; ++i) {  // 2 or 3 steps but near +-1
    const T f = a > T(0.5) ? (T(1) - a) - std::erfc(x) : std::erf(x) - a;
    const T d = f / (two_over_sqrt_pi * std::exp(-x * x));  // f / f'
    const T step = d / (T(1) + x * d);                      // f'' / f' = -2x
    x -= step;
    if (std::fabs(step) <= epsilon<T>() * x) break;
  }
  return std::copysign(x, y);
}

}  // namespace base
}  // namespace tessera

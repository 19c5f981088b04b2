// Element functions of the pointwise ops whose rules are ATen's own rather than the C++
// library's (gcd's wrap at INT_MIN, the shifts' out-of-range amounts, logaddexp's infinities,
// xlogy's zero, bfloat16's nextafter, ...), written once for every backend: the CPU plugin
// (plugins/cpu/binary.cc, unary.cc) and the GPU plugins' functors (plugins/cuda/pointwise_ops.h)
// call these, in the type they compute in. Header-only and usable in device code, as
// special_math.hpp.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tessera/base/host_device.hpp"

namespace tessera {
namespace base {
namespace element_detail {

// Integer negation and product modulo 2^N (no signed overflow).
template <typename C>
TSR_BASE_HD inline C wrap_neg(C a) {
  using U = std::make_unsigned_t<C>;
  return static_cast<C>(static_cast<U>(U(0) - static_cast<U>(a)));
}
template <typename C>
TSR_BASE_HD inline C wrap_mul(C a, C b) {
  using U = std::make_unsigned_t<C>;
  using Wide = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;  // no promotion
  return static_cast<C>(static_cast<U>(static_cast<Wide>(static_cast<U>(a)) * static_cast<U>(b)));
}
template <typename C>
TSR_BASE_HD inline bool is_negative(C a) {
  if constexpr (std::is_signed_v<C>) {
    return a < C(0);
  } else {
    return false;
  }
}
// |a|, wrapping: INT_MIN stays INT_MIN, as PyTorch's std::abs does on two's complement.
template <typename C>
TSR_BASE_HD inline C wrap_abs(C a) {
  return is_negative(a) ? wrap_neg(a) : a;
}
// a % b without the one overflow, INT_MIN % -1 (whose remainder is 0).
template <typename C>
TSR_BASE_HD inline C remainder_of(C a, C b) {
  if constexpr (std::is_signed_v<C>) {
    if (b == C(-1)) return C(0);
  }
  return static_cast<C>(a % b);
}

}  // namespace element_detail

// gcd: Euclid's algorithm on |a| and |b| (integers), as PyTorch's calc_gcd: gcd(INT_MIN, 0) is
// INT_MIN, the absolute value having wrapped.
template <typename C>
TSR_BASE_HD inline C gcd(C a, C b) {
  using namespace element_detail;
  a = wrap_abs(a);
  b = wrap_abs(b);
  while (a != C(0)) {
    const C c = a;
    a = remainder_of(b, a);
    b = c;
  }
  return b;
}

// lcm: |a / gcd * b|, wrapping; 0 where both are 0.
template <typename C>
TSR_BASE_HD inline C lcm(C a, C b) {
  using namespace element_detail;
  const C g = gcd(a, b);
  if (g == C(0)) return C(0);
  bool minus_one = false;  // only INT_MIN's wrapped gcd is negative, and never -1; kept safe
  if constexpr (std::is_signed_v<C>) minus_one = g == C(-1);
  const C q = minus_one ? wrap_neg(a) : static_cast<C>(a / g);
  return wrap_abs(wrap_mul(q, b));
}

// shift_left: a << b in C's width (unsigned, so it wraps); 0 for a negative amount or one of the
// width or more (current ATen; PyTorch 1.13's CPU loops shifted by the amount modulo the width).
template <typename C>
TSR_BASE_HD inline C shift_left(C a, C b) {
  constexpr int kWidth = static_cast<int>(sizeof(C) * 8);
  if (element_detail::is_negative(b) || b >= C(kWidth)) return C(0);
  using U = std::make_unsigned_t<C>;
  return static_cast<C>(static_cast<U>(static_cast<U>(a) << b));
}

// shift_right: a >> b, arithmetic for the signed types; a negative amount or one past ATen's
// max_shift (the width, less the sign bit) shifts by max_shift: the sign for the signed types, 0
// for uint8.
template <typename C>
TSR_BASE_HD inline C shift_right(C a, C b) {
  constexpr int kMaxShift = static_cast<int>(sizeof(C) * 8) - (std::is_signed_v<C> ? 1 : 0);
  if (element_detail::is_negative(b) || b >= C(kMaxShift)) {
    if constexpr (std::is_signed_v<C>) {
      return static_cast<C>(a >> kMaxShift);
    } else {
      return C(0);
    }
  }
  return static_cast<C>(a >> b);
}

// heaviside: `values` where x is 0, else 1 or 0 by x's sign (NaN gives 0).
template <typename C>
TSR_BASE_HD inline C heaviside(C x, C values) {
  if constexpr (std::is_same_v<C, bool>) {
    return x ? true : values;
  } else {
    return x == C(0) ? values : static_cast<C>(x > C(0));
  }
}

// logaddexp: log(e^a + e^b) without overflow; equal infinities are themselves, NaN stays NaN.
template <typename C>
TSR_BASE_HD inline C logaddexp(C a, C b) {
  if (a == b && a - a != a - a) return a;  // +-inf twice
  const C m = a < b ? b : a;
  return m + std::log1p(std::exp(-std::fabs(a - b)));
}
// logaddexp2: log2(2^a + 2^b), likewise.
template <typename C>
TSR_BASE_HD inline C logaddexp2(C a, C b) {
  if (a == b && a - a != a - a) return a;
  const C m = a < b ? b : a;
  return m + std::log1p(std::exp2(-std::fabs(a - b))) * C(1.4426950408889634074);
}

// xlogy: x * log(y), 0 where x is 0 unless y is NaN.
template <typename C>
TSR_BASE_HD inline C xlogy(C x, C y) {
  if (y != y) return y;
  return x == C(0) ? C(0) : x * std::log(y);
}

// sinc: sin(pi a) / (pi a), 1 at 0; pi a in C, as PyTorch's kernels.
template <typename C>
TSR_BASE_HD inline C sinc(C a) {
  if (a == C(0)) return C(1);
  const C product = C(3.14159265358979323846) * a;
  return std::sin(product) / product;
}

// logit: log(x / (1 - x)), x first clamped to [low, high] (eps, 1 - eps) when `clamp`; inf at 1,
// NaN stays NaN.
template <typename C>
TSR_BASE_HD inline C logit(C x, bool clamp, C low, C high) {
  if (clamp) x = x < low ? low : x > high ? high : x;
  return x == C(1) ? C(INFINITY) : std::log(x / (C(1) - x));
}

// nan_to_num: NaN, +inf and -inf replaced.
template <typename C>
TSR_BASE_HD inline C nan_to_num(C a, C nan, C posinf, C neginf) {
  if (a != a) return nan;
  if (a == C(INFINITY)) return posinf;
  if (a == C(-INFINITY)) return neginf;
  return a;
}

// next_bfloat16: the bfloat16 after a toward b, both bfloat16 values held in a float. A
// bfloat16's neighbours are the floats with the low 16 bits clear: a step of 2^16 in the
// float's bits, away from 0 or toward it; from 0, the smallest subnormal 2^-133.
TSR_BASE_HD inline float next_bfloat16(float a, float b) {
  if (a != a || b != b) return a + b;
  if (a == b) return b;
  if (a == 0.0f) return std::copysign(9.18354961579912115600e-41f, b);
  uint32_t bits;
  std::memcpy(&bits, &a, sizeof bits);
  bits = (a < b) == (a > 0.0f) ? bits + 0x10000u : bits - 0x10000u;
  float next;
  std::memcpy(&next, &bits, sizeof bits);
  return next;
}

}  // namespace base
}  // namespace tessera

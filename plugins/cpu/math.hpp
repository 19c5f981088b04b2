// Scalar arithmetic with PyTorch's semantics for every compute type: integer operations wrap
// instead of overflowing (no undefined behaviour), NaNs propagate through max/min.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace tessera {
namespace cpu {

template <typename C>
inline constexpr bool kSignedInt = std::is_integral_v<C>&& std::is_signed_v<C>;

// Integral arithmetic modulo 2^N, done in the unsigned type of the same width.
template <typename C>
inline C wrap_add(C a, C b) {
  if constexpr (kSignedInt<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return static_cast<C>(a + b);
  }
}
template <typename C>
inline C wrap_sub(C a, C b) {
  if constexpr (kSignedInt<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return static_cast<C>(a - b);
  }
}
template <typename C>
inline C wrap_mul(C a, C b) {
  if constexpr (std::is_same_v<C, bool>) {
    return a && b;
  } else if constexpr (std::is_integral_v<C>) {
    // At least unsigned int: narrower unsigned types promote to (signed) int, and int16's
    // 53089 * 53089 overflows that (found by fuzz/op_call_fuzzer.cc through pow.Scalar).
    using U = std::common_type_t<std::make_unsigned_t<C>, unsigned>;
    return static_cast<C>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}
template <typename C>
inline C wrap_neg(C a) {
  return wrap_sub<C>(C(0), a);
}

template <typename C>
inline bool is_nan(C a) {
  if constexpr (std::is_floating_point_v<C>) {
    return std::isnan(a);
  } else {
    return false;
  }
}

// maximum/minimum: a NaN operand makes the result NaN.
template <typename C>
inline C max_nan(C a, C b) {
  if (is_nan(a)) return a;
  if (is_nan(b)) return b;
  return a > b ? a : b;
}
template <typename C>
inline C min_nan(C a, C b) {
  if (is_nan(a)) return a;
  if (is_nan(b)) return b;
  return a < b ? a : b;
}

// clamp's bounds, one at a time (clamp, hardtanh): a NaN self stays, a NaN bound becomes the
// result (PyTorch's rule when both bounds are given; clamp_out drops a lone NaN Scalar bound
// first).
template <typename C>
inline C clamp_below(C x, C lo) {
  if (is_nan(x) || is_nan(lo)) return is_nan(x) ? x : lo;
  return x < lo ? lo : x;
}
template <typename C>
inline C clamp_above(C x, C hi) {
  if (is_nan(x) || is_nan(hi)) return is_nan(x) ? x : hi;
  return x > hi ? hi : x;
}

// Integer division that cannot trap: the caller has refused b == 0; MIN / -1 wraps.
template <typename C>
inline C div_trunc_int(C a, C b) {
  if constexpr (kSignedInt<C>) {
    if (b == -1) return wrap_neg(a);
  }
  return static_cast<C>(a / b);
}
template <typename C>
inline C mod_trunc_int(C a, C b) {
  if constexpr (kSignedInt<C>) {
    if (b == -1) return 0;
  }
  return static_cast<C>(a % b);
}

// Python's floor division and modulo (the sign of the divisor).
template <typename C>
inline C div_floor(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    const C q = div_trunc_int(a, b);
    const C r = mod_trunc_int(a, b);
    return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<C>(q - 1) : q;
  } else {
    if (b == 0) return a / b;
    C mod = std::fmod(a, b);
    C div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
    if (div == 0) return std::copysign(C(0), a / b);
    C floordiv = std::floor(div);
    if (div - floordiv > C(0.5)) floordiv += 1;
    return floordiv;
  }
}
template <typename C>
inline C remainder(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    const C r = mod_trunc_int(a, b);
    return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<C>(r + b) : r;
  } else {
    C r = std::fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
}

// Integer power by squaring, modulo 2^N; negative exponents as PyTorch: 1/a^n truncated.
template <typename C>
inline C int_pow(C base, C exp) {
  if constexpr (kSignedInt<C>) {
    if (exp < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exp % 2 == 0) ? 1 : -1;
      return 0;
    }
  }
  C result = 1;
  while (exp) {
    if (exp & 1) result = wrap_mul(result, base);
    exp = static_cast<C>(exp >> 1);
    base = wrap_mul(base, base);
  }
  return result;
}

}  // namespace cpu
}  // namespace tessera

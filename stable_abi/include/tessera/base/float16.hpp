// float16 (IEEE 754 binary16) and bfloat16 (the upper half of a binary32) to and from float, on
// their 16 bits. Widening is exact: every float16 and bfloat16 value is a float. Narrowing
// rounds to nearest, ties to even; values beyond the range become infinities, infinities stay
// infinite, and NaN becomes a quiet NaN with its sign (float16: the canonical 0x7e00, as
// PyTorch's c10::Half; bfloat16: the float's top bits, quieted).
//
// Part of the header-only base (tessera/base/, below core and the SDK), dependency-free on
// purpose: the SDK's sdk::Half and sdk::BFloat16 (tessera/sdk/half.hpp) and the runtime's
// tessera::Half and tessera::BFloat16 (core/half.h) both convert with these, so that a plugin
// and the runtime round alike.
#pragma once

#include <cstdint>
#include <cstring>

namespace tessera {
namespace base {
namespace float16_internal {

inline uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

}  // namespace float16_internal

inline float half_bits_to_float(uint16_t h) {
  using float16_internal::bits_of;
  using float16_internal::float_of;
  // Move exponent and mantissa into float position, then rebias the exponent (15 -> 127).
  uint32_t magnitude = static_cast<uint32_t>(h & 0x7fffu) << 13;
  const uint32_t exponent = magnitude & 0x0f800000u;
  magnitude += (127u - 15u) << 23;
  if (exponent == 0x0f800000u) {
    magnitude += (128u - 16u) << 23;  // Inf or NaN: exponent all ones
  } else if (exponent == 0) {
    // Subnormal or zero: let the FPU normalize it (value = mantissa * 2^-24).
    magnitude += 1u << 23;
    magnitude = bits_of(float_of(magnitude) - float_of(113u << 23));
  }
  return float_of(magnitude | (static_cast<uint32_t>(h & 0x8000u) << 16));
}

inline uint16_t float_to_half_bits(float f) {
  using float16_internal::bits_of;
  using float16_internal::float_of;
  uint32_t x = bits_of(f);
  const uint32_t sign = x & 0x80000000u;
  x ^= sign;
  uint32_t h;
  if (x >= (127u + 16u) << 23) {  // |f| >= 2^16: overflow, Inf or NaN
    h = x > 0x7f800000u ? 0x7e00u : 0x7c00u;
  } else if (x < (113u << 23)) {
    // |f| < 2^-14, the smallest normal half: the result is subnormal or zero. Adding this magic
    // float aligns the half ulp (2^-24) with the float's last mantissa bit, and the FPU's
    // addition rounds to nearest even.
    const float magic = float_of(((127u - 15u) + (23u - 10u) + 1u) << 23);
    h = bits_of(float_of(x) + magic) - bits_of(magic);
  } else {
    // Rebias the exponent and round the 13 dropped mantissa bits to nearest even; a carry out
    // of the mantissa correctly bumps the exponent (up to infinity for [65520, 65536)).
    const uint32_t odd = (x >> 13) & 1u;
    x += ((15u - 127u) << 23) + 0xfffu + odd;
    h = x >> 13;
  }
  return static_cast<uint16_t>(h | (sign >> 16));
}

inline float bfloat16_bits_to_float(uint16_t b) {
  return float16_internal::float_of(static_cast<uint32_t>(b) << 16);
}

inline uint16_t float_to_bfloat16_bits(float f) {
  const uint32_t x = float16_internal::bits_of(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace base
}  // namespace tessera

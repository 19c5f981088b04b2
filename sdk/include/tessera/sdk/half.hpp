// Arithmetic on the 16-bit float storage types (sdk::Half, sdk::BFloat16): kernels load them
// as float, compute in float and round once on store (round to nearest even; NaN stays a
// quiet NaN, infinities stay infinite).
#pragma once

#include <cstdint>
#include <cstring>

#include "tessera/sdk/dispatch.hpp"

namespace tessera {
namespace sdk {
namespace internal {

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

}  // namespace internal

// to_float widens exactly: every half and bfloat16 value is a float.
inline float to_float(Half h) {
  // Move exponent and mantissa into float position, then rebias the exponent (15 -> 127).
  uint32_t magnitude = static_cast<uint32_t>(h.bits & 0x7fffu) << 13;
  const uint32_t exponent = magnitude & 0x0f800000u;
  magnitude += (127u - 15u) << 23;
  if (exponent == 0x0f800000u) {
    magnitude += (128u - 16u) << 23;  // Inf or NaN: exponent all ones
  } else if (exponent == 0) {
    // Subnormal or zero: let the FPU normalize it (value = mantissa * 2^-24).
    magnitude += 1u << 23;
    magnitude = internal::bits_of(internal::float_of(magnitude) - internal::float_of(113u << 23));
  }
  return internal::float_of(magnitude | (static_cast<uint32_t>(h.bits & 0x8000u) << 16));
}

inline float to_float(BFloat16 b) {
  return internal::float_of(static_cast<uint32_t>(b.bits) << 16);
}

// to_half rounds to nearest even; values beyond the half range become infinities.
inline Half to_half(float f) {
  uint32_t x = internal::bits_of(f);
  const uint32_t sign = x & 0x80000000u;
  x ^= sign;
  uint16_t h;
  if (x >= (127u + 16u) << 23) {  // overflow, Inf or NaN
    h = x > 0x7f800000u ? 0x7e00u : 0x7c00u;
  } else if (x < (113u << 23)) {
    // Result is subnormal or zero: adding this magic float aligns the half ulp (2^-24) with
    // the float's last mantissa bit, and the FPU's addition rounds to nearest even.
    const float magic = internal::float_of(((127u - 15u) + (23u - 10u) + 1u) << 23);
    h = static_cast<uint16_t>(internal::bits_of(internal::float_of(x) + magic) -
                              internal::bits_of(magic));
  } else {
    const uint32_t odd = (x >> 13) & 1u;
    x += ((15u - 127u) << 23) + 0xfffu + odd;  // rebias and round to nearest even
    h = static_cast<uint16_t>(x >> 13);
  }
  return Half{static_cast<uint16_t>(h | (sign >> 16))};
}

inline BFloat16 to_bfloat16(float f) {
  const uint32_t x = internal::bits_of(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return BFloat16{static_cast<uint16_t>((x >> 16) | 0x40u)};
  return BFloat16{static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16)};
}

}  // namespace sdk
}  // namespace tessera

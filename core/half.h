// Half (IEEE binary16) and BFloat16 storage types.
//
// Both are stored as 16 bits and converted through float. Conversion from float rounds to
// nearest, ties to even; NaN stays NaN (quiet, sign kept) and infinities stay infinite, so a
// value survives a float -> half -> float round trip whenever it is representable.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

namespace tessera {

namespace half_internal {

inline uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float BitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline uint16_t FloatToHalfBits(float f) {
  uint32_t x = FloatBits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) {  // Inf or NaN: keep the top mantissa bits, force a quiet NaN.
    const uint32_t nan_bits = x > 0x7f800000u ? (0x200u | ((x >> 13) & 0x3ffu)) : 0u;
    return static_cast<uint16_t>(sign | 0x7c00u | nan_bits);
  }
  if (x >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to Inf
  if (x < 0x38800000u) {
    // Below the smallest normal half (2^-14): adding 0.5f aligns the float's ulp with the half
    // subnormal ulp (2^-24), so the FPU performs the round-to-nearest-even for us.
    const float rounded = BitsToFloat(x) + 0.5f;
    return static_cast<uint16_t>(sign | (FloatBits(rounded) - 0x3f000000u));
  }
  const uint32_t mantissa_odd = (x >> 13) & 1u;
  x += (static_cast<uint32_t>(15 - 127) << 23) + 0xfffu + mantissa_odd;
  return static_cast<uint16_t>(sign | (x >> 13));
}

inline float HalfBitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24 is exact in float.
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return BitsToFloat(sign | 0x7f800000u | (mantissa << 13));
  return BitsToFloat(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

inline uint16_t FloatToBFloat16Bits(float f) {
  const uint32_t x = FloatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) {  // NaN: quiet it, keep the sign.
    return static_cast<uint16_t>((x >> 16) | 0x0040u);
  }
  const uint32_t rounding_bias = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding_bias) >> 16);
}

inline float BFloat16BitsToFloat(uint16_t b) { return BitsToFloat(static_cast<uint32_t>(b) << 16); }

}  // namespace half_internal

// Half is IEEE 754 binary16: 1 sign, 5 exponent, 10 mantissa bits.
struct Half {
  uint16_t bits = 0;

  Half() = default;
  Half(float f) : bits(half_internal::FloatToHalfBits(f)) {}  // NOLINT: implicit like c10::Half
  static Half FromBits(uint16_t b) {
    Half h;
    h.bits = b;
    return h;
  }
  operator float() const { return half_internal::HalfBitsToFloat(bits); }  // NOLINT
};

// BFloat16 is the top half of an IEEE binary32: 1 sign, 8 exponent, 7 mantissa bits.
struct BFloat16 {
  uint16_t bits = 0;

  BFloat16() = default;
  BFloat16(float f) : bits(half_internal::FloatToBFloat16Bits(f)) {}  // NOLINT
  static BFloat16 FromBits(uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
  operator float() const { return half_internal::BFloat16BitsToFloat(bits); }  // NOLINT
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2, "16-bit storage types");

}  // namespace tessera

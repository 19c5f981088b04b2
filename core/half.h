// Half (IEEE binary16) and BFloat16 storage types.
//
// Both are stored as 16 bits and converted through float. Conversion from float rounds to
// nearest, ties to even; NaN stays NaN (quiet, sign kept) and infinities stay infinite, so a
// value survives a float -> half -> float round trip whenever it is representable. The
// conversions are the header-only base's tessera/base/float16.hpp, which plugins use too.
#pragma once

#include <cstdint>

#include "tessera/base/float16.hpp"

namespace tessera {

namespace half_internal {

// BitsToFloat: the float with these bits (tests build NaN payloads with it).
inline float BitsToFloat(uint32_t u) { return base::float16_internal::float_of(u); }

}  // namespace half_internal

// Half is IEEE 754 binary16: 1 sign, 5 exponent, 10 mantissa bits.
struct Half {
  uint16_t bits = 0;

  Half() = default;
  Half(float f) : bits(base::float_to_half_bits(f)) {}  // NOLINT: implicit like c10::Half
  static Half FromBits(uint16_t b) {
    Half h;
    h.bits = b;
    return h;
  }
  operator float() const { return base::half_bits_to_float(bits); }  // NOLINT
};

// BFloat16 is the top half of an IEEE binary32: 1 sign, 8 exponent, 7 mantissa bits.
struct BFloat16 {
  uint16_t bits = 0;

  BFloat16() = default;
  BFloat16(float f) : bits(base::float_to_bfloat16_bits(f)) {}  // NOLINT
  static BFloat16 FromBits(uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
  operator float() const { return base::bfloat16_bits_to_float(bits); }  // NOLINT
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2, "16-bit storage types");

}  // namespace tessera

// Arithmetic on the 16-bit float storage types (sdk::Half, sdk::BFloat16): kernels load them
// as float, compute in float and round once on store (round to nearest even; NaN stays a
// quiet NaN, infinities stay infinite). The conversions are float16.hpp's, which the runtime
// uses too.
#pragma once

#include <cstdint>

#include "tessera/sdk/dispatch.hpp"
#include "tessera/sdk/float16.hpp"

namespace tessera {
namespace sdk {

// to_float widens exactly: every half and bfloat16 value is a float.
inline float to_float(Half h) { return half_bits_to_float(h.bits); }
inline float to_float(BFloat16 b) { return bfloat16_bits_to_float(b.bits); }

// to_half rounds to nearest even; values beyond the half range become infinities.
inline Half to_half(float f) { return Half{float_to_half_bits(f)}; }
inline BFloat16 to_bfloat16(float f) { return BFloat16{float_to_bfloat16_bits(f)}; }

}  // namespace sdk
}  // namespace tessera

// Element types of the CPU plugin: the C++ type of each dtype, the type a kernel computes in
// (float for the 16-bit floats: loaded as float, computed in float, rounded once on store),
// and conversions between any two, with PyTorch's semantics.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "tessera/sdk/dispatch.hpp"
#include "tessera/sdk/float_to_int.hpp"
#include "tessera/sdk/half.hpp"

namespace tessera {
namespace cpu {

using sdk::BFloat16;
using sdk::Half;

template <typename T>
inline constexpr bool kIsReduced = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <typename T>
inline constexpr bool kIsFloat = kIsReduced<T> || std::is_floating_point_v<T>;

// compute_t: what a kernel computes T in.
template <typename T>
using compute_t = std::conditional_t<kIsReduced<T>, float, T>;

template <typename T>
inline compute_t<T> load(T v) {
  if constexpr (kIsReduced<T>) {
    return sdk::to_float(v);
  } else {
    return v;
  }
}

// store rounds a computed value into T (the 16-bit floats round once, here).
template <typename T, typename C>
inline T store(C v) {
  if constexpr (std::is_same_v<T, Half>) {
    return sdk::to_half(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return sdk::to_bfloat16(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

// convert: To from From as PyTorch's casts do: anything to bool is "!= 0"; floating to integral
// truncates toward zero (through int64, so that narrow types wrap like PyTorch's on x86).
// Floating to integral goes through sdk::float_to_int64 (tessera/sdk/float_to_int.hpp): out of
// int64's range (NaN, infinities, |v| >= 2^63) it gives INT64_MIN, as x86 and PyTorch on x86 do.
using sdk::float_to_int64;

template <typename To, typename From>
inline To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else {
    const auto c = load(v);
    if constexpr (std::is_same_v<To, bool>) {
      return c != 0;
    } else if constexpr (kIsFloat<To>) {
      using Wide = std::conditional_t<std::is_same_v<To, double>, double, float>;
      return store<To>(static_cast<Wide>(c));
    } else if constexpr (std::is_floating_point_v<decltype(c)>) {
      return static_cast<To>(float_to_int64(c));
    } else {
      return static_cast<To>(c);
    }
  }
}

// The dtype sets PyTorch's CPU kernels accept (among Tessera's ten).
inline constexpr sdk::DtypeSet kAll = sdk::kAllTypes;
inline constexpr sdk::DtypeSet kFloating = sdk::kFloatingTypes;
inline constexpr sdk::DtypeSet kIntegral = sdk::kIntegralTypes;
inline constexpr sdk::DtypeSet kIntegralAndBool =
    sdk::kIntegralTypes | sdk::dtype_bit(TSR_DTYPE_BOOL);
inline constexpr sdk::DtypeSet kNumeric = sdk::kIntegralTypes | sdk::kFloatingTypes;

}  // namespace cpu
}  // namespace tessera

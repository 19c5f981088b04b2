// float_to_int64: the one place that says what a floating value becomes as int64 (C++ leaves
// NaN, infinities and |v| >= 2^63 undefined). Part of the header-only base (tessera/base/),
// dependency-free on purpose: the CPU plugin's conversions (plugins/cpu/element.hpp) and the
// runtime's own (core/scalar.cc's Scalar::to_int) include this header, so the rule is written
// once and both give the same.
#pragma once

#include <cstdint>

namespace tessera {
namespace base {

// float_to_int64 truncates toward zero, and gives INT64_MIN for what int64 cannot hold (NaN,
// infinities, |v| >= 2^63): what x86's conversion instruction (cvttsd2si) gives, and so what
// PyTorch gives on x86. Found by fuzz/op_call_fuzzer.cc (full.out of 9.3e18 into int64).
template <typename F>
inline int64_t float_to_int64(F v) {
  const double d = static_cast<double>(v);
  // [-2^63, 2^63): both bounds are exact doubles, and NaN fails both comparisons.
  if (d >= -9223372036854775808.0 && d < 9223372036854775808.0) return static_cast<int64_t>(d);
  return INT64_MIN;
}

}  // namespace base
}  // namespace tessera

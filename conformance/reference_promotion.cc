#include "conformance/reference_promotion.h"

#include <cstddef>
#include <cstdint>

namespace tessera {
namespace conformance {
namespace {

// The integers by the range they hold, smallest first.
struct IntegerRange {
  tsr_dtype dtype;
  int64_t min, max;
};
constexpr IntegerRange kIntegers[] = {
    {TSR_DTYPE_UINT8, 0, 255},
    {TSR_DTYPE_INT8, -128, 127},
    {TSR_DTYPE_INT16, -32768, 32767},
    {TSR_DTYPE_INT32, -2147483648LL, 2147483647LL},
    {TSR_DTYPE_INT64, INT64_MIN, INT64_MAX},
};

// The floating types by their exponent and significand bits (the range and the precision they
// hold), smallest first.
struct FloatFormat {
  tsr_dtype dtype;
  int exponent_bits, mantissa_bits;
};
constexpr FloatFormat kFloats[] = {
    {TSR_DTYPE_FLOAT16, 5, 10},
    {TSR_DTYPE_BFLOAT16, 8, 7},
    {TSR_DTYPE_FLOAT32, 8, 23},
    {TSR_DTYPE_FLOAT64, 11, 52},
};

template <typename Entry, size_t N>
const Entry* Find(const Entry (&entries)[N], tsr_dtype d) {
  for (const Entry& e : entries) {
    if (e.dtype == d) return &e;
  }
  return nullptr;
}

}  // namespace

tsr_dtype PromoteTypes(tsr_dtype a, tsr_dtype b) {
  auto known = [](tsr_dtype d) {
    return d == TSR_DTYPE_BOOL || Find(kIntegers, d) != nullptr || Find(kFloats, d) != nullptr;
  };
  if (!known(a) || !known(b)) return TSR_DTYPE_FORCE_INT32;
  if (a == b || b == TSR_DTYPE_BOOL) return a;
  if (a == TSR_DTYPE_BOOL) return b;
  const FloatFormat *fa = Find(kFloats, a), *fb = Find(kFloats, b);
  if ((fa == nullptr) != (fb == nullptr)) return fa != nullptr ? a : b;  // floating wins
  if (fa != nullptr) {  // two floating types: the first whose range and precision cover both
    for (const FloatFormat& f : kFloats) {
      if (f.exponent_bits >= fa->exponent_bits && f.exponent_bits >= fb->exponent_bits &&
          f.mantissa_bits >= fa->mantissa_bits && f.mantissa_bits >= fb->mantissa_bits) {
        return f.dtype;
      }
    }
  } else {  // two integers: the first whose range covers both
    const IntegerRange *ia = Find(kIntegers, a), *ib = Find(kIntegers, b);
    for (const IntegerRange& i : kIntegers) {
      if (i.min <= ia->min && i.min <= ib->min && i.max >= ia->max && i.max >= ib->max) {
        return i.dtype;
      }
    }
  }
  return TSR_DTYPE_FORCE_INT32;  // no dtype holds both: none of Tessera's pairs
}

}  // namespace conformance
}  // namespace tessera

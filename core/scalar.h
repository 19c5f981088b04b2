// Scalar: a number passed by value (PyTorch's c10::Scalar without complex): bool, int64 or
// double, remembering which, because type promotion treats the three differently.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "core/dtype.h"

namespace tessera {

class Scalar {
 public:
  enum class Kind : int8_t { kBool, kInt, kDouble };

  Scalar() : Scalar(int64_t{0}) {}
  Scalar(bool v) : kind_(Kind::kBool) { v_.i = v; }      // NOLINT: implicit
  Scalar(int v) : Scalar(static_cast<int64_t>(v)) {}     // NOLINT: implicit
  Scalar(int64_t v) : kind_(Kind::kInt) { v_.i = v; }    // NOLINT: implicit
  Scalar(double v) : kind_(Kind::kDouble) { v_.d = v; }  // NOLINT: implicit

  Kind kind() const { return kind_; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_integral() const { return kind_ == Kind::kInt; }
  bool is_floating_point() const { return kind_ == Kind::kDouble; }

  bool to_bool() const { return kind_ == Kind::kDouble ? v_.d != 0 : v_.i != 0; }
  // to_int truncates a double toward zero; one int64 cannot hold (NaN, infinities,
  // |v| >= 2^63) gives INT64_MIN, as x86 and PyTorch on x86 do (base::float_to_int64, the rule
  // the CPU plugin's conversions share), never C++'s undefined behaviour.
  int64_t to_int() const { return kind_ == Kind::kDouble ? DoubleToInt(v_.d) : v_.i; }
  double to_double() const { return kind_ == Kind::kDouble ? v_.d : static_cast<double>(v_.i); }

  // dtype: the type of the equivalent 0-dim tensor (bool, int64, float64).
  ScalarType dtype() const {
    switch (kind_) {
      case Kind::kBool:
        return ScalarType::kBool;
      case Kind::kInt:
        return ScalarType::kInt64;
      case Kind::kDouble:
        return ScalarType::kFloat64;
    }
    return ScalarType::kFloat64;
  }

  // Overflows: whether converting to `to` overflows by PyTorch's Scalar::to<T> rule
  // (c10::checked_convert, c10/util/TypeCast.h `overflows`), which fill_, full, masked_fill,
  // clamp's Scalar bounds and linspace apply, refusing what does: a bool never overflows, nor
  // does anything into bool; an int must lie in the type's range, except that into uint8 a
  // negative one down to -255 wraps (-1 is 255); a double into a floating type may be any
  // infinity or NaN, else must lie within its largest finite values (65519.0 overflows
  // float16); into an integral type it must lie in the range (NaN and infinities never do),
  // compared as doubles (2^63 passes into int64, as there).
  bool Overflows(ScalarType to) const;

  std::string ToString() const;

  friend bool operator==(const Scalar& a, const Scalar& b) {
    if (a.kind_ != b.kind_) return false;
    return a.kind_ == Kind::kDouble ? a.v_.d == b.v_.d : a.v_.i == b.v_.i;
  }

 private:
  static int64_t DoubleToInt(double v);

  Kind kind_;
  union {
    int64_t i;
    double d;
  } v_;
};

// CheckScalarFits: OK, or INVALID_ARGUMENT when `v` overflows `to` (Scalar::Overflows), naming
// the op, its argument and both: "fill_.Scalar: argument 'value' (300) cannot be converted to
// uint8 without overflow".
absl::Status CheckScalarFits(const Scalar& v, ScalarType to, std::string_view op,
                             std::string_view arg);

}  // namespace tessera

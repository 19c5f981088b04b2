#include "core/scalar.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tessera/base/float_to_int.hpp"

namespace tessera {

int64_t Scalar::DoubleToInt(double v) { return base::float_to_int64(v); }

namespace {

// The finite range of `to` as doubles; false for a type every int64 and double converts to.
bool RangeOf(ScalarType to, double* lowest, double* max) {
  switch (to) {
    case ScalarType::kBool:
    case ScalarType::kFloat64:
      return false;
    case ScalarType::kUInt8:
      *lowest = 0, *max = 255;
      return true;
    case ScalarType::kInt8:
      *lowest = -128, *max = 127;
      return true;
    case ScalarType::kInt16:
      *lowest = -32768, *max = 32767;
      return true;
    case ScalarType::kInt32:
      *lowest = -2147483648.0, *max = 2147483647.0;
      return true;
    case ScalarType::kInt64:
      *lowest = -9223372036854775808.0, *max = 9223372036854775807.0;  // max rounds to 2^63
      return true;
    case ScalarType::kFloat16:
      *max = 65504.0;
      break;
    case ScalarType::kBFloat16:
      *max = 3.3895313892515355e38;
      break;
    case ScalarType::kFloat32:
      *max = 3.4028234663852886e38;
      break;
  }
  *lowest = -*max;
  return true;
}

}  // namespace

bool Scalar::Overflows(ScalarType to) const {
  double lowest = 0, max = 0;
  if (kind_ == Kind::kBool || !RangeOf(to, &lowest, &max)) return false;
  if (kind_ == Kind::kInt) {
    if (to == ScalarType::kInt64) return false;
    if (to == ScalarType::kUInt8 && v_.i < 0) return v_.i < -255;  // wraps, as there
    return static_cast<double>(v_.i) < lowest || static_cast<double>(v_.i) > max;
  }
  const double d = v_.d;
  if (IsFloatingType(to) && (std::isinf(d) || std::isnan(d))) return false;
  return !(d >= lowest && d <= max);  // NaN into an integral type too
}

std::string Scalar::ToString() const {
  switch (kind_) {
    case Kind::kBool:
      return v_.i ? "True" : "False";
    case Kind::kInt:
      return absl::StrCat(v_.i);
    case Kind::kDouble:
      return absl::StrCat(v_.d);
  }
  return "";
}

absl::Status CheckScalarFits(const Scalar& v, ScalarType to, std::string_view op,
                             std::string_view arg) {
  if (!v.Overflows(to)) return absl::OkStatus();
  double lowest = 0, max = 0;
  RangeOf(to, &lowest, &max);
  // An integral type's bounds exactly (int32's [-2147483648, 2147483647], not %g's
  // [-2.14748e+09, 2.14748e+09]); int64's maximum is no double, so it is written out.
  auto bound = [&](double b) -> std::string {
    if (IsFloatingType(to)) return absl::StrFormat("%g", b);
    if (to == ScalarType::kInt64 && b > 0) return absl::StrCat(INT64_MAX);
    return absl::StrFormat("%.0f", b);
  };
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: argument '%s' (%s) cannot be converted to %s without overflow: expected a value in "
      "[%s, %s]%s",
      std::string(op), std::string(arg), v.ToString(), std::string(ScalarTypeName(to)),
      bound(lowest), bound(max),
      to == ScalarType::kUInt8 ? " or an int down to -255 (which wraps)"
      : IsFloatingType(to)     ? " or an infinity or NaN"
                               : ""));
}

}  // namespace tessera

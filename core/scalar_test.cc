#include "core/scalar.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "gtest/gtest.h"

namespace tessera {
namespace {

// Scalar::to_int of a double is truncation toward zero, and INT64_MIN for what int64 cannot
// hold, as x86 and so PyTorch on x86 give (sdk::float_to_int64). It used to be a bare
// static_cast, undefined there: g++ -O2 folded 1e19 to INT64_MAX and NaN to 0, while the same
// cast at run time gave INT64_MIN.
TEST(Scalar, ToIntOfDoubleOutsideInt64IsInt64Min) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // One expectation per value, with constants the compiler sees (where it folded the old cast).
  EXPECT_EQ(Scalar(nan).to_int(), INT64_MIN);
  EXPECT_EQ(Scalar(-nan).to_int(), INT64_MIN);
  EXPECT_EQ(Scalar(inf).to_int(), INT64_MIN);
  EXPECT_EQ(Scalar(-inf).to_int(), INT64_MIN);
  EXPECT_EQ(Scalar(1e19).to_int(), INT64_MIN);
  EXPECT_EQ(Scalar(-1e19).to_int(), INT64_MIN);
  EXPECT_EQ(Scalar(9223372036854775808.0).to_int(), INT64_MIN);   // 2^63
  EXPECT_EQ(Scalar(-9223372036854777856.0).to_int(), INT64_MIN);  // the next double below -2^63
  // Held at run time too, through a value the compiler cannot see.
  volatile double huge = 1e300;
  EXPECT_EQ(Scalar(static_cast<double>(huge)).to_int(), INT64_MIN);
}

TEST(Scalar, ToIntOfDoubleInsideInt64Truncates) {
  EXPECT_EQ(Scalar(2.9).to_int(), 2);
  EXPECT_EQ(Scalar(-2.9).to_int(), -2);
  EXPECT_EQ(Scalar(-0.5).to_int(), 0);
  EXPECT_EQ(Scalar(-9223372036854775808.0).to_int(), INT64_MIN);           // -2^63 itself fits
  EXPECT_EQ(Scalar(9223372036854774784.0).to_int(), 9223372036854774784);  // largest below 2^63
  EXPECT_EQ(Scalar(int64_t{INT64_MAX}).to_int(), INT64_MAX);  // ints are never converted
  EXPECT_EQ(Scalar(true).to_int(), 1);
}

// Overflows follows PyTorch's checked conversion (c10::overflows), each row checked against
// torch 1.13's fill_ (refused or not).
TEST(Scalar, OverflowsAsPyTorchsCheckedConversion) {
  using S = ScalarType;
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Row {
    Scalar value;
    S to;
    bool overflows;
  };
  const Row rows[] = {
      {int64_t{200}, S::kInt8, true},
      {int64_t{-129}, S::kInt8, true},
      {int64_t{-128}, S::kInt8, false},
      {-128.0, S::kInt8, false},
      {127.5, S::kInt8, true},
      {int64_t{-1}, S::kUInt8, false},  // wraps to 255
      {int64_t{-255}, S::kUInt8, false},
      {int64_t{-256}, S::kUInt8, true},
      {int64_t{256}, S::kUInt8, true},
      {-1.0, S::kUInt8, true},  // a double does not wrap
      {255.5, S::kUInt8, true},
      {int64_t{1} << 40, S::kInt32, true},
      {nan, S::kInt16, true},
      {inf, S::kInt64, true},
      {9223372036854775808.0, S::kInt64, false},  // 2^63 passes, as there
      {1e19, S::kInt64, true},
      {int64_t{INT64_MAX}, S::kInt64, false},
      {65504.0, S::kFloat16, false},
      {65519.0, S::kFloat16, true},
      {int64_t{70000}, S::kFloat16, true},
      {-inf, S::kFloat16, false},
      {nan, S::kBFloat16, false},
      {1e39, S::kBFloat16, true},
      {3.5e38, S::kFloat32, true},
      {1e38, S::kFloat32, false},
      {1e300, S::kFloat64, false},
      {int64_t{2}, S::kBool, false},
      {nan, S::kBool, false},
      {true, S::kInt8, false},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(r.value.Overflows(r.to), r.overflows)
        << r.value.ToString() << " into " << ScalarTypeName(r.to);
  }
  EXPECT_EQ(CheckScalarFits(Scalar(int64_t{300}), S::kUInt8, "fill_.Scalar", "value").message(),
            "fill_.Scalar: argument 'value' (300) cannot be converted to uint8 without overflow: "
            "expected a value in [0, 255] or an int down to -255 (which wraps)");
  EXPECT_EQ(CheckScalarFits(Scalar(1e39), S::kBFloat16, "full", "fill_value").message(),
            "full: argument 'fill_value' (1e+39) cannot be converted to bfloat16 without overflow: "
            "expected a value in [-3.38953e+38, 3.38953e+38] or an infinity or NaN");
  EXPECT_TRUE(CheckScalarFits(Scalar(int64_t{-1}), S::kUInt8, "fill_.Scalar", "value").ok());
  // Integral bounds exactly, not rounded to six digits.
  EXPECT_EQ(CheckScalarFits(Scalar(int64_t{1} << 40), S::kInt32, "fill_.Scalar", "value").message(),
            "fill_.Scalar: argument 'value' (1099511627776) cannot be converted to int32 without "
            "overflow: expected a value in [-2147483648, 2147483647]");
  EXPECT_EQ(CheckScalarFits(Scalar(1e19), S::kInt64, "full", "fill_value").message(),
            "full: argument 'fill_value' (1e+19) cannot be converted to int64 without overflow: "
            "expected a value in [-9223372036854775808, 9223372036854775807]");
}

}  // namespace
}  // namespace tessera

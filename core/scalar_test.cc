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
  EXPECT_EQ(Scalar(9223372036854775808.0).to_int(), INT64_MIN);  // 2^63
  EXPECT_EQ(Scalar(-9223372036854777856.0).to_int(), INT64_MIN);  // the next double below -2^63
  // Held at run time too, through a value the compiler cannot see.
  volatile double huge = 1e300;
  EXPECT_EQ(Scalar(static_cast<double>(huge)).to_int(), INT64_MIN);
}

TEST(Scalar, ToIntOfDoubleInsideInt64Truncates) {
  EXPECT_EQ(Scalar(2.9).to_int(), 2);
  EXPECT_EQ(Scalar(-2.9).to_int(), -2);
  EXPECT_EQ(Scalar(-0.5).to_int(), 0);
  EXPECT_EQ(Scalar(-9223372036854775808.0).to_int(), INT64_MIN);  // -2^63 itself fits
  EXPECT_EQ(Scalar(9223372036854774784.0).to_int(), 9223372036854774784);  // largest below 2^63
  EXPECT_EQ(Scalar(int64_t{INT64_MAX}).to_int(), INT64_MAX);  // ints are never converted
  EXPECT_EQ(Scalar(true).to_int(), 1);
}

}  // namespace
}  // namespace tessera

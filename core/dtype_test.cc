#include "core/dtype.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "core/half.h"
#include "gtest/gtest.h"

namespace tessera {
namespace {

float Bits(uint32_t u) { return half_internal::BitsToFloat(u); }

TEST(ScalarType, SizesNamesAndCategories) {
  EXPECT_EQ(ElementSize(ScalarType::kBool), 1u);
  EXPECT_EQ(ElementSize(ScalarType::kBFloat16), 2u);
  EXPECT_EQ(ElementSize(ScalarType::kInt64), 8u);
  for (ScalarType t : kAllScalarTypes) {
    EXPECT_EQ(ParseScalarType(ScalarTypeName(t)), t) << ScalarTypeName(t);
  }
  EXPECT_EQ(ParseScalarType("half"), ScalarType::kFloat16);
  EXPECT_EQ(ParseScalarType("long"), ScalarType::kInt64);
  EXPECT_EQ(ScalarTypeSchemaName(ScalarType::kInt64), "long");
  EXPECT_EQ(ScalarTypeSchemaName(ScalarType::kBFloat16), "bfloat16");
  for (ScalarType t : kAllScalarTypes) EXPECT_EQ(ParseScalarType(ScalarTypeSchemaName(t)), t);
  EXPECT_EQ(ParseScalarType("complex64"), std::nullopt);
  EXPECT_TRUE(IsFloatingType(ScalarType::kBFloat16));
  EXPECT_FALSE(IsFloatingType(ScalarType::kInt64));
  EXPECT_TRUE(IsIntegralType(ScalarType::kBool, true));
  EXPECT_FALSE(IsIntegralType(ScalarType::kBool, false));
  EXPECT_FALSE(IsValidScalarType(10));
  EXPECT_FALSE(IsValidScalarType(-1));
}

TEST(Half, ConvertsKnownValuesWithRoundToNearestEven) {
  EXPECT_EQ(Half(1.0f).bits, 0x3c00);
  EXPECT_EQ(Half(-2.0f).bits, 0xc000);
  EXPECT_EQ(Half(65504.0f).bits, 0x7bff);               // largest finite
  EXPECT_EQ(Half(65519.0f).bits, 0x7bff);               // just below the halfway point to infinity
  EXPECT_EQ(Half(65520.0f).bits, 0x7c00);               // halfway, ties to even = infinity
  EXPECT_EQ(Half(std::ldexp(1.0f, -24)).bits, 0x0001);  // smallest subnormal
  EXPECT_EQ(Half(std::ldexp(1.0f, -25)).bits, 0x0000);  // half of it: tie to even (0)
  EXPECT_EQ(Half(std::ldexp(3.0f, -25)).bits, 0x0002);  // 1.5 ulp: tie to even (2)
  EXPECT_EQ(Half(1.0f + std::ldexp(1.0f, -11)).bits, 0x3c00);  // tie between 1 and next: even
  EXPECT_EQ(Half(1.0f + std::ldexp(3.0f, -11)).bits, 0x3c02);  // tie rounds up to even
  EXPECT_EQ(Half(-0.0f).bits, 0x8000);
  EXPECT_EQ(Half(std::numeric_limits<float>::infinity()).bits, 0x7c00);
  EXPECT_EQ(Half(-std::numeric_limits<float>::infinity()).bits, 0xfc00);
  EXPECT_EQ(Half(1e-10f).bits, 0x0000);  // underflow to zero
}

TEST(Half, PreservesNaN) {
  for (uint32_t nan_bits : {0x7fc00000u, 0x7f800001u, 0xffc00000u, 0x7fbfffffu}) {
    const Half h(Bits(nan_bits));
    EXPECT_TRUE(std::isnan(static_cast<float>(h))) << std::hex << nan_bits;
    EXPECT_EQ(h.bits & 0x8000, (nan_bits >> 16) & 0x8000) << "sign kept";
  }
}

TEST(Half, RoundTripsEveryBitPattern) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const Half h = Half::FromBits(static_cast<uint16_t>(b));
    const float f = h;
    if (std::isnan(f)) {
      EXPECT_TRUE((b & 0x7c00) == 0x7c00 && (b & 0x3ff) != 0);
      EXPECT_TRUE(std::isnan(static_cast<float>(Half(f))));
    } else {
      ASSERT_EQ(Half(f).bits, b) << "pattern " << b;
    }
  }
}

TEST(BFloat16, ConvertsKnownValuesWithRoundToNearestEven) {
  EXPECT_EQ(BFloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(BFloat16(1.0f + std::ldexp(1.0f, -8)).bits, 0x3f80);  // tie: even
  EXPECT_EQ(BFloat16(1.0f + std::ldexp(3.0f, -8)).bits, 0x3f82);  // tie: up to even
  EXPECT_EQ(BFloat16(-0.0f).bits, 0x8000);
  EXPECT_EQ(BFloat16(std::numeric_limits<float>::infinity()).bits, 0x7f80);
  EXPECT_EQ(BFloat16(std::numeric_limits<float>::max()).bits, 0x7f80);       // rounds past max
  EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16(Bits(0x7f800001u)))));  // payload low bits
  EXPECT_EQ(BFloat16(Bits(0xff800001u)).bits & 0x8000, 0x8000);
}

TEST(BFloat16, RoundTripsEveryBitPattern) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const float f = BFloat16::FromBits(static_cast<uint16_t>(b));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16(f))));
    } else {
      ASSERT_EQ(BFloat16(f).bits, b) << "pattern " << b;
    }
  }
}

}  // namespace
}  // namespace tessera

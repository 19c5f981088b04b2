// The SDK's promotion and 16-bit float conversions are written over the C ABI's dtypes for
// plugins, which cannot use the runtime's; these tests hold them equal to the runtime's.
#include "tessera/sdk/promotion.hpp"

#include <cmath>
#include <cstring>

#include "core/half.h"
#include "core/type_promotion.h"
#include "gtest/gtest.h"
#include "tessera/sdk/half.hpp"

namespace tessera {
namespace {

tsr_dtype C(ScalarType t) { return static_cast<tsr_dtype>(t); }

TEST(SdkPromotion, PromoteTypesAndCanCastAgreeWithTheRuntimeOnEveryPair) {
  for (int a = 0; a < kNumScalarTypes; ++a) {
    for (int b = 0; b < kNumScalarTypes; ++b) {
      const auto x = static_cast<ScalarType>(a), y = static_cast<ScalarType>(b);
      EXPECT_EQ(sdk::promote_types(C(x), C(y)), C(PromoteTypes(x, y)))
          << ScalarTypeName(x) << " with " << ScalarTypeName(y);
      EXPECT_EQ(sdk::can_cast(C(x), C(y)), CanCast(x, y))
          << ScalarTypeName(x) << " to " << ScalarTypeName(y);
    }
  }
}

TEST(SdkHalf, EveryHalfAndBFloat16PatternWidensLikeTheRuntime) {
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    const float sdk_half = sdk::to_float(sdk::Half{static_cast<uint16_t>(bits)});
    const float core_half = Half::FromBits(static_cast<uint16_t>(bits));
    const float sdk_bf = sdk::to_float(sdk::BFloat16{static_cast<uint16_t>(bits)});
    const float core_bf = BFloat16::FromBits(static_cast<uint16_t>(bits));
    if (std::isnan(core_half)) {
      EXPECT_TRUE(std::isnan(sdk_half)) << bits;
    } else {
      EXPECT_EQ(std::memcmp(&sdk_half, &core_half, 4), 0) << bits;
    }
    if (std::isnan(core_bf)) {
      EXPECT_TRUE(std::isnan(sdk_bf)) << bits;
    } else {
      EXPECT_EQ(std::memcmp(&sdk_bf, &core_bf, 4), 0) << bits;
    }
  }
}

TEST(SdkHalf, NarrowingRoundsToNearestEvenLikeTheRuntime) {
  // Every combination of the top 20 bits, with low bits at and around the halfway points.
  for (uint32_t high = 0; high < (1u << 20); ++high) {
    for (uint32_t low : {0x000u, 0x001u, 0x7ffu, 0x800u, 0x801u, 0xfffu}) {
      const uint32_t bits = (high << 12) | (low & 0xfffu);
      float f;
      std::memcpy(&f, &bits, 4);
      if (std::isnan(f)) continue;
      ASSERT_EQ(sdk::to_half(f).bits, Half(f).bits) << std::hexfloat << f;
      ASSERT_EQ(sdk::to_bfloat16(f).bits, BFloat16(f).bits) << std::hexfloat << f;
    }
  }
  EXPECT_TRUE(std::isnan(sdk::to_float(sdk::to_half(std::nanf("")))));
  EXPECT_TRUE(std::isnan(sdk::to_float(sdk::to_bfloat16(-std::nanf("")))));
}

}  // namespace
}  // namespace tessera

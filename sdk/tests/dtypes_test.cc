// The SDK's dtype facts (tessera/sdk/dtypes.hpp) are generated from the C ABI's list and shared
// with the runtime: these tests hold the SDK's and the runtime's views equal on every dtype,
// and check what the list-derived sets and lookups give for values that are not dtypes.
#include "tessera/sdk/dtypes.hpp"

#include <string>

#include "core/dtype.h"
#include "core/type_promotion.h"
#include "gtest/gtest.h"
#include "tessera/sdk/promotion.hpp"

namespace tessera {
namespace {

TEST(SdkDtypes, NamesSizesAndCategoriesAgreeWithTheRuntimeOnEveryDtype) {
  ASSERT_EQ(sdk::kNumDtypes, kNumScalarTypes);
  for (int i = 0; i < sdk::kNumDtypes; ++i) {
    const tsr_dtype d = sdk::kAllDtypes[i];
    const ScalarType t = kAllScalarTypes[i];
    EXPECT_EQ(static_cast<int>(d), static_cast<int>(t));
    EXPECT_EQ(std::string(sdk::dtype_name(d)), ScalarTypeName(t));
    EXPECT_EQ(sdk::element_size(d), ElementSize(t)) << sdk::dtype_name(d);
    EXPECT_EQ(sdk::is_floating(d), IsFloatingType(t)) << sdk::dtype_name(d);
    for (bool with_bool : {false, true}) {
      EXPECT_EQ(sdk::is_integral(d, with_bool), IsIntegralType(t, with_bool)) << sdk::dtype_name(d);
    }
  }
}

TEST(SdkDtypes, SetsPartitionTheDtypesByCategory) {
  EXPECT_EQ(sdk::kAllTypes, (sdk::DtypeSet{1} << sdk::kNumDtypes) - 1);
  EXPECT_EQ(sdk::kIntegralTypes & sdk::kFloatingTypes, 0u);
  EXPECT_EQ(sdk::kIntegralTypes | sdk::kFloatingTypes | sdk::dtype_bit(TSR_DTYPE_BOOL),
            sdk::kAllTypes);
  for (tsr_dtype d : sdk::kAllDtypes) {
    EXPECT_EQ((sdk::kFloatingTypes & sdk::dtype_bit(d)) != 0, sdk::is_floating(d));
    EXPECT_EQ((sdk::kIntegralTypes & sdk::dtype_bit(d)) != 0, sdk::is_integral(d, false));
  }
  EXPECT_EQ(sdk::kIntegralTypes, sdk::dtype_bit(TSR_DTYPE_UINT8) | sdk::dtype_bit(TSR_DTYPE_INT8) |
                                     sdk::dtype_bit(TSR_DTYPE_INT16) |
                                     sdk::dtype_bit(TSR_DTYPE_INT32) |
                                     sdk::dtype_bit(TSR_DTYPE_INT64));
}

TEST(SdkDtypes, ValuesOutsideTheListAreNoDtype) {
  for (int raw : {-1, 10, 32, 77, 0x7fffffff}) {
    const auto d = static_cast<tsr_dtype>(raw);
    EXPECT_FALSE(sdk::is_valid_dtype(raw)) << raw;
    EXPECT_STREQ(sdk::dtype_name(d), "<invalid dtype>") << raw;
    EXPECT_EQ(sdk::element_size(d), 0u) << raw;
    EXPECT_EQ(sdk::dtype_bit(d), 0u) << raw;
    EXPECT_FALSE(sdk::is_floating(d) || sdk::is_integral(d, true)) << raw;
    EXPECT_EQ(sdk::promote_types(d, TSR_DTYPE_FLOAT32), TSR_DTYPE_FORCE_INT32) << raw;
    EXPECT_EQ(sdk::promote_types(TSR_DTYPE_INT8, d), TSR_DTYPE_FORCE_INT32) << raw;
  }
}

// The runtime's ResultTypeBuilder and the SDK's ResultTypeState on every pair of operands, each
// a dimensioned tensor, a 0-dim tensor or a wrapped number of any dtype.
TEST(SdkDtypes, ResultTypeAgreesWithTheRuntimeOnEveryPairOfOperands) {
  using State = sdk::ResultTypeState;
  for (tsr_dtype a : sdk::kAllDtypes) {
    for (tsr_dtype b : sdk::kAllDtypes) {
      for (State::Class ca : {State::kDimTensor, State::kZeroDimTensor}) {
        for (State::Class cb : {State::kDimTensor, State::kZeroDimTensor}) {
          State state;
          state.add(a, ca);
          state.add(b, cb);
          ResultTypeBuilder builder;
          builder.AddTensor(static_cast<ScalarType>(a), ca == State::kDimTensor ? 1 : 0);
          builder.AddTensor(static_cast<ScalarType>(b), cb == State::kDimTensor ? 1 : 0);
          EXPECT_EQ(static_cast<int>(state.result()), static_cast<int>(builder.Result()))
              << sdk::dtype_name(a) << " (class " << ca << ") with " << sdk::dtype_name(b)
              << " (class " << cb << ")";
        }
      }
    }
  }
}

}  // namespace
}  // namespace tessera

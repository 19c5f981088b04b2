#include "core/type_promotion.h"

#include "gtest/gtest.h"

namespace tessera {
namespace {

constexpr ScalarType b1 = ScalarType::kBool, u8 = ScalarType::kUInt8, i8 = ScalarType::kInt8,
                     i16 = ScalarType::kInt16, i32 = ScalarType::kInt32, i64 = ScalarType::kInt64,
                     f16 = ScalarType::kFloat16, bf16 = ScalarType::kBFloat16,
                     f32 = ScalarType::kFloat32, f64 = ScalarType::kFloat64;

// PyTorch's promoteTypes table (c10/core/ScalarType.cpp), restricted to Tessera's dtypes and
// written out literally so that the rule-based implementation is checked against it.
constexpr ScalarType kExpected[10][10] = {
    /*        b1    u8    i8    i16   i32   i64   f16   bf16  f32   f64 */
    /* b1 */ {b1, u8, i8, i16, i32, i64, f16, bf16, f32, f64},
    /* u8 */ {u8, u8, i16, i16, i32, i64, f16, bf16, f32, f64},
    /* i8 */ {i8, i16, i8, i16, i32, i64, f16, bf16, f32, f64},
    /* i16*/ {i16, i16, i16, i16, i32, i64, f16, bf16, f32, f64},
    /* i32*/ {i32, i32, i32, i32, i32, i64, f16, bf16, f32, f64},
    /* i64*/ {i64, i64, i64, i64, i64, i64, f16, bf16, f32, f64},
    /* f16*/ {f16, f16, f16, f16, f16, f16, f16, f32, f32, f64},
    /* bf16*/ {bf16, bf16, bf16, bf16, bf16, bf16, f32, bf16, f32, f64},
    /* f32*/ {f32, f32, f32, f32, f32, f32, f32, f32, f32, f64},
    /* f64*/ {f64, f64, f64, f64, f64, f64, f64, f64, f64, f64},
};

TEST(PromoteTypes, MatchesPyTorchTableForAllPairs) {
  for (int a = 0; a < kNumScalarTypes; ++a) {
    for (int b = 0; b < kNumScalarTypes; ++b) {
      const auto ta = static_cast<ScalarType>(a), tb = static_cast<ScalarType>(b);
      EXPECT_EQ(PromoteTypes(ta, tb), kExpected[a][b])
          << ScalarTypeName(ta) << " with " << ScalarTypeName(tb);
    }
  }
}

struct Operand {
  enum { kTensor, kZeroDim, kScalar } kind;
  ScalarType dtype;
  Scalar scalar;
};
Operand T(ScalarType t) { return {Operand::kTensor, t, {}}; }
Operand Z(ScalarType t) { return {Operand::kZeroDim, t, {}}; }
Operand S(Scalar s) { return {Operand::kScalar, s.dtype(), s}; }

ScalarType ResultOf(std::initializer_list<Operand> operands) {
  ResultTypeBuilder builder;
  for (const Operand& o : operands) {
    if (o.kind == Operand::kScalar) {
      builder.AddScalar(o.scalar);
    } else {
      builder.AddTensor(o.dtype, o.kind == Operand::kTensor ? 1 : 0);
    }
  }
  return builder.Result();
}

// Cases from PyTorch's type promotion documentation (torch.result_type, "Type promotion").
TEST(ResultType, FollowsPyTorchCategoryRules) {
  EXPECT_EQ(ResultOf({T(i32), S(int64_t{5})}), i32);  // int_tensor + 5
  EXPECT_EQ(ResultOf({T(i32), S(5.5)}), f32);         // int_tensor + 5.5: default dtype
  EXPECT_EQ(ResultOf({T(i64), T(i32)}), i64);         // long_tensor + int_tensor
  EXPECT_EQ(ResultOf({T(b1), T(i64)}), i64);          // bool_tensor + long_tensor
  EXPECT_EQ(ResultOf({T(b1), T(u8)}), u8);            // bool_tensor + uint_tensor
  EXPECT_EQ(ResultOf({T(f32), T(f64)}), f64);         // float_tensor + double_tensor
  EXPECT_EQ(ResultOf({T(b1), T(i32)}), i32);          // bool_tensor + int_tensor
  EXPECT_EQ(ResultOf({T(i64), T(f32)}), f32);         // torch.add(long, float)
  EXPECT_EQ(ResultOf({T(i32), Z(i64)}), i32);         // int_tensor + long_zerodim
  EXPECT_EQ(ResultOf({T(i32), Z(f64)}), f64);         // zero-dim of a higher category
  EXPECT_EQ(ResultOf({T(f16), S(2.0)}), f16);         // half stays half with a float
  EXPECT_EQ(ResultOf({T(f16), Z(f64)}), f16);         // same category: dim tensor wins
  EXPECT_EQ(ResultOf({T(u8), S(int64_t{-1})}), u8);   // int scalar never widens
  EXPECT_EQ(ResultOf({T(b1), S(int64_t{1})}), i64);   // bool tensor + int: int64
  EXPECT_EQ(ResultOf({T(b1), S(true)}), b1);          // bool with bool
  EXPECT_EQ(ResultOf({T(b1), S(1.5)}), f32);          // bool tensor + float: default
  EXPECT_EQ(ResultOf({Z(i32), Z(i64)}), i64);         // only 0-dim tensors: promoted
  EXPECT_EQ(ResultOf({Z(i32), S(1.5)}), f32);         // 0-dim int + float scalar
  EXPECT_EQ(ResultOf({Z(f16), S(1.5)}), f16);
  EXPECT_EQ(ResultOf({Z(b1), S(int64_t{3})}), i64);
  EXPECT_EQ(ResultOf({T(i8), T(u8)}), i16);
  EXPECT_EQ(ResultOf({T(bf16), Z(f16)}), bf16);
  EXPECT_EQ(ResultOf({T(bf16), T(f16)}), f32);
  EXPECT_EQ(ResultOf({T(i32), Z(b1), S(2.5)}), f32);
  EXPECT_EQ(ResultOf({}), f32);
}

TEST(CanCast, ForbidsFloatToIntAndNonBoolToBool) {
  EXPECT_TRUE(CanCast(i32, f32));
  EXPECT_TRUE(CanCast(f64, f16));
  EXPECT_TRUE(CanCast(b1, i64));
  EXPECT_FALSE(CanCast(f32, i64));
  EXPECT_FALSE(CanCast(f16, b1));
  EXPECT_FALSE(CanCast(u8, b1));
  EXPECT_TRUE(CanCast(b1, b1));
}

}  // namespace
}  // namespace tessera

// The pointwise ops of kernels_pointwise.cu (pointwise_ops.h) on the host: each op through
// VisitPointwise, the same kind-to-functor map the kernels' launcher uses, and every (block,
// thread) of its launches run here as a GPU would (host_launch.h).
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "elementwise_plan.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "host_launch.h"
#include "pointwise_ops.h"

namespace tessera {
namespace gpu {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using K = PointwiseKind;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

template <typename S>
std::string RunAs(PointwiseKind kind, const ElementwisePlan& plan, const PointwiseParams& p) {
  return VisitPointwise<S>(kind, p, [&](const auto& op, auto fast) -> std::string {
    using Op = std::decay_t<decltype(op)>;
    EXPECT_EQ(Op::kArity, PointwiseArity(kind));
    if constexpr (Op::kArity + 1 == 2 || Op::kArity + 1 == 3 || Op::kArity + 1 == 4) {
      if (plan.num_operands != Op::kArity + 1) return "operand count";
      RunOnHost<S, Op::kArity + 1, Op, decltype(fast)::value>(plan, op);
    }
    return "";
  });
}

// RunPointwise: what LaunchPointwise does, on the host.
std::string RunPointwise(PointwiseKind kind, int32_t compute, const ElementwisePlan& plan,
                         const PointwiseParams& p = {}) {
  switch (compute) {
    case TSR_DTYPE_BOOL:
      return RunAs<bool>(kind, plan, p);
    case TSR_DTYPE_UINT8:
      return RunAs<uint8_t>(kind, plan, p);
    case TSR_DTYPE_INT8:
      return RunAs<int8_t>(kind, plan, p);
    case TSR_DTYPE_INT16:
      return RunAs<int16_t>(kind, plan, p);
    case TSR_DTYPE_INT32:
      return RunAs<int32_t>(kind, plan, p);
    case TSR_DTYPE_INT64:
      return RunAs<int64_t>(kind, plan, p);
    case TSR_DTYPE_FLOAT16:
      return RunAs<Half>(kind, plan, p);
    case TSR_DTYPE_BFLOAT16:
      return RunAs<BFloat16>(kind, plan, p);
    case TSR_DTYPE_FLOAT32:
      return RunAs<float>(kind, plan, p);
    default:
      return RunAs<double>(kind, plan, p);
  }
}

// Binary on float64 vectors: out[i] = op(a[i], b[i]) computed in `compute`.
std::vector<double> Binary(PointwiseKind kind, std::vector<double> a, std::vector<double> b,
                           int32_t compute = TSR_DTYPE_FLOAT64, const PointwiseParams& p = {}) {
  const int64_t n = static_cast<int64_t>(a.size());
  std::vector<double> out(a.size(), -7);
  const std::string error = RunPointwise(
      kind, compute,
      MustPlan({n}, {Operand(out, TSR_DTYPE_FLOAT64, {n}), Operand(a, TSR_DTYPE_FLOAT64, {n}),
                     Operand(b, TSR_DTYPE_FLOAT64, {n})}),
      p);
  EXPECT_EQ(error, "");
  return out;
}
template <typename T>
std::vector<T> BinaryOf(PointwiseKind kind, int32_t dtype, std::vector<T> a, std::vector<T> b,
                        const PointwiseParams& p = {}) {
  const int64_t n = static_cast<int64_t>(a.size());
  std::vector<T> out(a.size());
  EXPECT_EQ(RunPointwise(kind, dtype,
                         MustPlan({n}, {Operand(out, dtype, {n}), Operand(a, dtype, {n}),
                                        Operand(b, dtype, {n})}),
                         p),
            "");
  return out;
}
std::vector<double> Unary(PointwiseKind kind, std::vector<double> a,
                          int32_t compute = TSR_DTYPE_FLOAT64, const PointwiseParams& p = {}) {
  const int64_t n = static_cast<int64_t>(a.size());
  std::vector<double> out(a.size(), -7);
  EXPECT_EQ(RunPointwise(kind, compute,
                         MustPlan({n}, {Operand(out, TSR_DTYPE_FLOAT64, {n}),
                                        Operand(a, TSR_DTYPE_FLOAT64, {n})}),
                         p),
            "");
  return out;
}

bool SameDouble(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}
MATCHER_P(DoublesAre, expected, "") {
  if (arg.size() != expected.size()) return false;
  for (size_t i = 0; i < arg.size(); ++i) {
    if (!SameDouble(arg[i], expected[i])) {
      *result_listener << "element " << i << " is " << arg[i] << ", expected " << expected[i];
      return false;
    }
  }
  return true;
}

TEST(GpuPointwise, EveryKindHasKernelsForItsDtypesOnlyAndItsArity) {
  for (int k = 0; k <= static_cast<int>(K::kLogicalNot); ++k) {
    const auto kind = static_cast<PointwiseKind>(k);
    const int n = PointwiseArity(kind) + 1;
    for (int32_t dtype = TSR_DTYPE_BOOL; dtype <= TSR_DTYPE_FLOAT64; ++dtype) {
      SCOPED_TRACE("kind " + std::to_string(k) + " dtype " + std::to_string(dtype));
      std::vector<double> buffers[4] = {{1, 2}, {1, 2}, {1, 2}, {1, 2}};
      std::vector<OperandSpec> ops;
      for (int i = 0; i < n; ++i) ops.push_back(Operand(buffers[i], TSR_DTYPE_FLOAT64, {2}));
      const std::string error = RunPointwise(kind, dtype, MustPlan({2}, ops));
      if (PointwiseDtypes(kind) & DtypeBit(dtype)) {
        EXPECT_EQ(error, "");
      } else {
        EXPECT_THAT(error, HasSubstr("no kernel for compute dtype"));
      }
    }
  }
  EXPECT_EQ(PointwiseDtypes(K::kEq), kAllDtypes);
  EXPECT_EQ(PointwiseDtypes(K::kBitwiseXor), kIntegralAndBoolDtypes);
  EXPECT_EQ(PointwiseDtypes(K::kPow), kNumericDtypes);
  EXPECT_EQ(PointwiseDtypes(K::kAtan2), kFloatingDtypes);
  EXPECT_EQ(PointwiseDtypes(K::kAddcmul), kNumericDtypes);
  EXPECT_EQ(PointwiseDtypes(K::kAddcdiv), kFloatingDtypes);
  EXPECT_EQ(PointwiseDtypes(K::kLerp), kFloatingDtypes);
  EXPECT_EQ(PointwiseDtypes(K::kRound), kNumericDtypes);
  EXPECT_EQ(PointwiseDtypes(K::kSign), kAllDtypes);
  EXPECT_EQ(PointwiseDtypes(K::kBitwiseNot), kIntegralAndBoolDtypes);
  EXPECT_EQ(PointwiseDtypes(K::kIsNan), kAllDtypes);
  EXPECT_EQ(PointwiseArity(K::kAtan2), 2);
  EXPECT_EQ(PointwiseArity(K::kLerp), 3);
  EXPECT_EQ(PointwiseArity(K::kExp2), 1);
}

TEST(GpuPointwise, ComparesInTheComputeDtypeIntoABoolOutput) {
  const std::vector<double> a = {1, 2, 3, kNan, -0.0};
  const std::vector<double> b = {2, 2, 2, kNan, 0.0};
  EXPECT_THAT(Binary(K::kEq, a, b), ElementsAre(0, 1, 0, 0, 1));
  EXPECT_THAT(Binary(K::kNe, a, b), ElementsAre(1, 0, 1, 1, 0));
  EXPECT_THAT(Binary(K::kLt, a, b), ElementsAre(1, 0, 0, 0, 0));
  EXPECT_THAT(Binary(K::kLe, a, b), ElementsAre(1, 1, 0, 0, 1));
  EXPECT_THAT(Binary(K::kGt, a, b), ElementsAre(0, 0, 1, 0, 0));
  EXPECT_THAT(Binary(K::kGe, a, b), ElementsAre(0, 1, 1, 0, 1));
  EXPECT_THAT(Binary(K::kLogicalAnd, {0, 1, 2, kNan}, {1, 1, 0, 1}), ElementsAre(0, 1, 0, 1));
  EXPECT_THAT(Binary(K::kLogicalOr, {0, 0, 2, kNan}, {0, 1, 0, 0}), ElementsAre(0, 1, 1, 1));
  EXPECT_THAT(Binary(K::kLogicalXor, {0, 0, 2, 3}, {0, 1, 0, 1}), ElementsAre(0, 1, 1, 0));

  // int32 against a float Scalar (compute float32), into a broadcast bool output: 2 < 2.5.
  std::vector<int32_t> ints = {1, 2, 3, 4, 5, 6};
  std::vector<uint8_t> out(6, 9);
  OperandSpec o = Operand(out, TSR_DTYPE_BOOL, {2, 3});
  EXPECT_EQ(
      RunPointwise(K::kLt, TSR_DTYPE_FLOAT32,
                   MustPlan({2, 3}, {o, Operand(ints, TSR_DTYPE_INT32, {2, 3}), Constant(2.5)})),
      "");
  EXPECT_THAT(out, ElementsAre(1, 1, 0, 0, 0, 0));
  // A row [3] broadcast against a column [2, 1], both int64, compute int64.
  std::vector<int64_t> row = {1, 5, 9}, column = {5, 6};
  EXPECT_EQ(RunPointwise(K::kGe, TSR_DTYPE_INT64,
                         MustPlan({2, 3}, {o, Operand(row, TSR_DTYPE_INT64, {3}),
                                           Operand(column, TSR_DTYPE_INT64, {2, 1})})),
            "");
  EXPECT_THAT(out, ElementsAre(0, 1, 1, 0, 0, 1));
  // float64 inputs compared in float16: 2049 rounds to 2048 on the way in (to even).
  EXPECT_THAT(Binary(K::kEq, {2049, 2049}, {2048, 2050}, TSR_DTYPE_FLOAT16), ElementsAre(1, 0));
  EXPECT_THAT(Binary(K::kLt, {1, 0}, {1, 1}, TSR_DTYPE_BOOL), ElementsAre(0, 1));
}

TEST(GpuPointwise, BitwiseOpsOfIntegersAndBool) {
  EXPECT_THAT(BinaryOf<int32_t>(K::kBitwiseAnd, TSR_DTYPE_INT32, {12, -1, 0}, {10, 7, 5}),
              ElementsAre(8, 7, 0));
  EXPECT_THAT(BinaryOf<int8_t>(K::kBitwiseOr, TSR_DTYPE_INT8, {12, -128, 0}, {3, 1, 5}),
              ElementsAre(15, -127, 5));
  EXPECT_THAT(BinaryOf<uint8_t>(K::kBitwiseXor, TSR_DTYPE_UINT8, {255, 1}, {15, 1}),
              ElementsAre(240, 0));
  EXPECT_THAT(BinaryOf<uint8_t>(K::kBitwiseXor, TSR_DTYPE_BOOL, {1, 1, 0}, {1, 0, 0}),
              ElementsAre(0, 1, 0));
}

TEST(GpuPointwise, MaximumAndMinimumPropagateNan) {
  EXPECT_THAT(Binary(K::kMaximum, {1, kNan, 3, -0.0}, {2, 1, kNan, 1}),
              DoublesAre(std::vector<double>{2, kNan, kNan, 1}));
  EXPECT_THAT(Binary(K::kMinimum, {1, kNan, 3, -kInf}, {2, 1, kNan, 1}),
              DoublesAre(std::vector<double>{1, kNan, kNan, -kInf}));
  EXPECT_THAT(Binary(K::kMaximum, {1, kNan}, {2, 1}, TSR_DTYPE_BFLOAT16),
              DoublesAre(std::vector<double>{2, kNan}));
  EXPECT_THAT(BinaryOf<int64_t>(K::kMinimum, TSR_DTYPE_INT64, {INT64_MIN, 5}, {0, -5}),
              ElementsAre(INT64_MIN, -5));
  EXPECT_THAT(BinaryOf<uint8_t>(K::kMaximum, TSR_DTYPE_BOOL, {0, 1}, {0, 0}), ElementsAre(0, 1));
}

TEST(GpuPointwise, IntegerDivisionFollowsPythonAndCSignRules) {
  const std::vector<int32_t> a = {7, -7, 7, -7, INT32_MIN, 5, -5, 0};
  const std::vector<int32_t> b = {2, 2, -2, -2, -1, 0, 0, 3};
  EXPECT_THAT(BinaryOf<int32_t>(K::kRemainder, TSR_DTYPE_INT32, a, b),
              ElementsAre(1, 1, -1, -1, 0, 5, -5, 0));
  EXPECT_THAT(BinaryOf<int32_t>(K::kFmod, TSR_DTYPE_INT32, a, b),
              ElementsAre(1, -1, 1, -1, 0, 5, -5, 0));
  EXPECT_THAT(BinaryOf<int32_t>(K::kDivTrunc, TSR_DTYPE_INT32, a, b),
              ElementsAre(3, -3, -3, 3, INT32_MIN, -1, -1, 0));
  EXPECT_THAT(BinaryOf<int32_t>(K::kDivFloor, TSR_DTYPE_INT32, a, b),
              ElementsAre(3, -4, -4, 3, INT32_MIN, -1, -1, 0));
  // int8 arithmetic promotes in C++; the results must still wrap to int8.
  EXPECT_THAT(BinaryOf<int8_t>(K::kDivFloor, TSR_DTYPE_INT8, {-128, -128}, {-1, 3}),
              ElementsAre(-128, -43));
  EXPECT_THAT(BinaryOf<uint8_t>(K::kRemainder, TSR_DTYPE_UINT8, {250, 7}, {7, 0}),
              ElementsAre(5, 7));
  EXPECT_THAT(BinaryOf<uint8_t>(K::kDivTrunc, TSR_DTYPE_UINT8, {250, 7}, {7, 0}),
              ElementsAre(35, 255));
}

TEST(GpuPointwise, FloatingDivisionFollowsPyTorch) {
  EXPECT_THAT(Binary(K::kRemainder, {5.5, -5.5, 5.5, 1, kInf, -0.0}, {2, 2, -2, 0, 2, 3}),
              DoublesAre(std::vector<double>{1.5, 0.5, -0.5, kNan, kNan, -0.0}));
  EXPECT_THAT(Binary(K::kFmod, {5.5, -5.5, 5.5, 1}, {2, 2, -2, 0}),
              DoublesAre(std::vector<double>{1.5, -1.5, 1.5, kNan}));
  EXPECT_THAT(Binary(K::kDivTrunc, {7, -7, 1, -1}, {2, 2, 0, 0}),
              DoublesAre(std::vector<double>{3, -3, kInf, -kInf}));
  EXPECT_THAT(Binary(K::kDivFloor, {7, -7, 1, 0, -0.5, 0.5}, {2, 2, 0, 0, 3, -3}),
              DoublesAre(std::vector<double>{3, -4, kInf, kNan, -1, -1}));
  // Floor division keeps the sign of a zero quotient (PyTorch: copysign(0, a / b)).
  EXPECT_THAT(Binary(K::kDivFloor, {0.0, -0.0}, {3, 3}), DoublesAre(std::vector<double>{0, -0.0}));
  // 1 // 0.1 is 9 (0.1 is a little above a tenth), where floor(1 / 0.1) would be 10.
  EXPECT_THAT(Binary(K::kDivFloor, {1}, {0.1}), ElementsAre(9));
  EXPECT_THAT(Binary(K::kRemainder, {-1}, {3}, TSR_DTYPE_FLOAT16), ElementsAre(2));
}

TEST(GpuPointwise, PowOfIntegersWrapsAndTruncatesNegativeExponents) {
  EXPECT_THAT(BinaryOf<int32_t>(K::kPow, TSR_DTYPE_INT32, {2, 3, 1, -1, -1, 2, 0, 0, 65536},
                                {10, 0, -5, -3, -4, -1, 0, 3, 2}),
              ElementsAre(1024, 1, 1, -1, 1, 0, 1, 0, 0));
  EXPECT_THAT(BinaryOf<int8_t>(K::kPow, TSR_DTYPE_INT8, {3, -2}, {5, 7}),
              ElementsAre(static_cast<int8_t>(243), -128));
  EXPECT_THAT(BinaryOf<uint8_t>(K::kPow, TSR_DTYPE_UINT8, {2, 3}, {8, 5}), ElementsAre(0, 243));
}

TEST(GpuPointwise, PowOfFloatsAndItsScalarExponentForms) {
  EXPECT_THAT(Binary(K::kPow, {2, -8, 0, -1, 4}, {0.5, 1.0 / 3, -1, kInf, -0.5}),
              DoublesAre(std::vector<double>{std::sqrt(2.0), kNan, kInf, 1, 0.5}));
  auto with = [](PowMode mode) {
    PointwiseParams p;
    p.pow = mode;
    return p;
  };
  const std::vector<double> x = {3, -0.0, -kInf, 4};
  EXPECT_THAT(Binary(K::kPow, x, {2, 2, 2, 2}, TSR_DTYPE_FLOAT64, with(PowMode::kSquare)),
              DoublesAre(std::vector<double>{9, 0, kInf, 16}));
  EXPECT_THAT(Binary(K::kPow, x, {3, 3, 3, 3}, TSR_DTYPE_FLOAT64, with(PowMode::kCube)),
              DoublesAre(std::vector<double>{27, -0.0, -kInf, 64}));
  // sqrt, not pow: sqrt(-0) = -0 and sqrt(-inf) = NaN where pow gives +0 and +inf.
  EXPECT_THAT(Binary(K::kPow, x, {.5, .5, .5, .5}, TSR_DTYPE_FLOAT64, with(PowMode::kSqrt)),
              DoublesAre(std::vector<double>{std::sqrt(3.0), -0.0, kNan, 2}));
  EXPECT_THAT(Binary(K::kPow, x, {-.5, -.5, -.5, -.5}, TSR_DTYPE_FLOAT64, with(PowMode::kRsqrt)),
              DoublesAre(std::vector<double>{1 / std::sqrt(3.0), -kInf, kNan, 0.5}));
  EXPECT_THAT(Binary(K::kPow, x, {-1, -1, -1, -1}, TSR_DTYPE_FLOAT64, with(PowMode::kReciprocal)),
              DoublesAre(std::vector<double>{1 / 3.0, -kInf, -0.0, 0.25}));
  EXPECT_THAT(
      Binary(K::kPow, x, {-2, -2, -2, -2}, TSR_DTYPE_FLOAT64, with(PowMode::kInverseSquare)),
      DoublesAre(std::vector<double>{1 / 9.0, kInf, 0, 1 / 16.0}));
}

TEST(GpuPointwise, Atan2) {
  EXPECT_THAT(Binary(K::kAtan2, {1, -1, 0, kNan}, {1, -1, -1, 1}),
              DoublesAre(std::vector<double>{std::atan2(1.0, 1.0), std::atan2(-1.0, -1.0),
                                             std::atan2(0.0, -1.0), kNan}));
  EXPECT_FLOAT_EQ(Binary(K::kAtan2, {1}, {2}, TSR_DTYPE_FLOAT32)[0], std::atan2(1.0f, 2.0f));
}

TEST(GpuPointwise, WhereTakesABoolConditionAmongOtherDtypesAndBroadcasts) {
  std::vector<uint8_t> cond = {1, 0, 1};  // bool storage
  std::vector<float> a = {1, 2, 3, 4, 5, 6};
  std::vector<int32_t> b = {-1, -2};
  std::vector<float> out(6);
  EXPECT_EQ(RunPointwise(K::kWhere, TSR_DTYPE_FLOAT32,
                         MustPlan({2, 3}, {Operand(out, TSR_DTYPE_FLOAT32, {2, 3}),
                                           Operand(cond, TSR_DTYPE_BOOL, {3}),
                                           Operand(a, TSR_DTYPE_FLOAT32, {2, 3}),
                                           Operand(b, TSR_DTYPE_INT32, {2, 1})})),
            "");
  EXPECT_THAT(out, ElementsAre(1, -1, 3, 4, -2, 6));
  // masked_fill: where(mask, value, self), the value a constant; NaN survives in float16.
  std::vector<double> self = {1, 2, 3};
  std::vector<double> filled(3);
  EXPECT_EQ(RunPointwise(K::kWhere, TSR_DTYPE_FLOAT16,
                         MustPlan({3}, {Operand(filled, TSR_DTYPE_FLOAT64, {3}),
                                        Operand(cond, TSR_DTYPE_BOOL, {3}), Constant(kNan),
                                        Operand(self, TSR_DTYPE_FLOAT64, {3})})),
            "");
  EXPECT_THAT(filled, DoublesAre(std::vector<double>{kNan, 2, kNan}));
}

std::vector<double> Ternary(PointwiseKind kind, std::vector<double> a, std::vector<double> b,
                            std::vector<double> c, int32_t compute = TSR_DTYPE_FLOAT64,
                            const PointwiseParams& p = {}) {
  const int64_t n = static_cast<int64_t>(a.size());
  std::vector<double> out(a.size(), -7);
  EXPECT_EQ(
      RunPointwise(
          kind, compute,
          MustPlan({n}, {Operand(out, TSR_DTYPE_FLOAT64, {n}), Operand(a, TSR_DTYPE_FLOAT64, {n}),
                         Operand(b, TSR_DTYPE_FLOAT64, {n}), Operand(c, TSR_DTYPE_FLOAT64, {n})}),
          p),
      "");
  return out;
}

TEST(GpuPointwise, ClampPropagatesNanAndMinAboveMaxGivesMax) {
  EXPECT_THAT(Ternary(K::kClamp, {-5, 5, 0.5, kNan, 1, 1, 3}, {0, 0, 0, 0, kNan, 0, 2},
                      {1, 1, 1, 1, 2, kNan, 1}),
              DoublesAre(std::vector<double>{0, 1, 0.5, kNan, kNan, kNan, 1}));
  EXPECT_THAT(Ternary(K::kClamp, {-300, 300}, {-128, -128}, {127, 127}, TSR_DTYPE_INT16),
              ElementsAre(-128, 127));
}

TEST(GpuPointwise, AddcmulAddcdivAndLerp) {
  PointwiseParams p;
  p.value.kind = ConstantValue::kDouble;
  p.value.d = 0.5;
  EXPECT_THAT(Ternary(K::kAddcmul, {1, 2}, {3, 4}, {5, 6}, TSR_DTYPE_FLOAT64, p),
              ElementsAre(8.5, 14));
  EXPECT_THAT(Ternary(K::kAddcdiv, {1, 2}, {3, 4}, {6, 0}, TSR_DTYPE_FLOAT64, p),
              DoublesAre(std::vector<double>{1.25, kInf}));
  PointwiseParams two;
  two.value.kind = ConstantValue::kInt;
  two.value.i = 2;
  std::vector<int32_t> a = {INT32_MAX, 1}, t1 = {1, 3}, t2 = {1, 4}, out(2);
  EXPECT_EQ(
      RunPointwise(
          K::kAddcmul, TSR_DTYPE_INT32,
          MustPlan({2}, {Operand(out, TSR_DTYPE_INT32, {2}), Operand(a, TSR_DTYPE_INT32, {2}),
                         Operand(t1, TSR_DTYPE_INT32, {2}), Operand(t2, TSR_DTYPE_INT32, {2})}),
          two),
      "");
  EXPECT_THAT(out, ElementsAre(INT32_MIN + 1, 25));  // wraps
  // lerp is exact at both ends, for weights below and above 0.5.
  EXPECT_THAT(Ternary(K::kLerp, {1, 1, 1, 1e30}, {3, 3, 3, 1}, {0, 1, 0.25, 1}),
              ElementsAre(1, 3, 1.5, 1));
  EXPECT_THAT(Ternary(K::kLerp, {0}, {10}, {0.75}, TSR_DTYPE_BFLOAT16), ElementsAre(7.5));
}

TEST(GpuPointwise, FloatingUnaryOpsMatchTheLibrary) {
  const std::vector<double> x = {-0.75, -0.0, 0.25, 0.5, 3};
  struct Case {
    PointwiseKind kind;
    double (*f)(double);
  };
  const Case cases[] = {
      {K::kExp2, [](double v) { return std::exp2(v); }},
      {K::kExpm1, [](double v) { return std::expm1(v); }},
      {K::kLog2, [](double v) { return std::log2(v); }},
      {K::kLog10, [](double v) { return std::log10(v); }},
      {K::kLog1p, [](double v) { return std::log1p(v); }},
      {K::kTan, [](double v) { return std::tan(v); }},
      {K::kAsin, [](double v) { return std::asin(v); }},
      {K::kAcos, [](double v) { return std::acos(v); }},
      {K::kAtan, [](double v) { return std::atan(v); }},
      {K::kSinh, [](double v) { return std::sinh(v); }},
      {K::kCosh, [](double v) { return std::cosh(v); }},
      {K::kErf, [](double v) { return std::erf(v); }},
      {K::kSilu, [](double v) { return v / (1 + std::exp(-v)); }},
      {K::kGelu, [](double v) { return v * 0.5 * (1 + std::erf(v / std::sqrt(2.0))); }},
      {K::kGeluTanh,
       [](double v) {
         return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(static_cast<int>(c.kind));
    const std::vector<double> got = Unary(c.kind, x);
    const std::vector<double> single = Unary(c.kind, x, TSR_DTYPE_FLOAT32);
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = c.f(x[i]);
      if (!std::isfinite(want)) {
        EXPECT_TRUE(SameDouble(got[i], want)) << i;
        EXPECT_TRUE(SameDouble(single[i], want)) << i;
        continue;
      }
      EXPECT_NEAR(got[i], want, 1e-15 * (1 + std::fabs(want))) << i;
      EXPECT_NEAR(single[i], want, 1e-6 * (1 + std::fabs(want))) << i;
    }
  }
  EXPECT_THAT(Unary(K::kLog2, {0, -1}), DoublesAre(std::vector<double>{-kInf, kNan}));
}

TEST(GpuPointwise, RoundDecimalsHalvesToEven) {
  PointwiseParams p;
  p.decimals = 1;
  EXPECT_THAT(Unary(K::kRoundDecimals, {0.25, -1.25, 0.75, 7}, TSR_DTYPE_FLOAT64, p),
              ElementsAre(0.2, -1.2, 0.8, 7));
  p.decimals = -2;
  EXPECT_THAT(Unary(K::kRoundDecimals, {150, 250, 1234, -50}, TSR_DTYPE_FLOAT64, p),
              DoublesAre(std::vector<double>{200, 200, 1200, -0.0}));
}

TEST(GpuPointwise, ExactUnaryOpsKeepIntegersAndRoundFloats) {
  const std::vector<double> x = {-2.5, -0.5, 0.5, 1.5, 2.5, kNan, -kInf};
  EXPECT_THAT(Unary(K::kFloor, x), DoublesAre(std::vector<double>{-3, -1, 0, 1, 2, kNan, -kInf}));
  EXPECT_THAT(Unary(K::kCeil, x), DoublesAre(std::vector<double>{-2, -0.0, 1, 2, 3, kNan, -kInf}));
  EXPECT_THAT(Unary(K::kRound, x), DoublesAre(std::vector<double>{-2, -0.0, 0, 2, 2, kNan, -kInf}));
  EXPECT_THAT(Unary(K::kTrunc, x), DoublesAre(std::vector<double>{-2, -0.0, 0, 1, 2, kNan, -kInf}));
  EXPECT_THAT(Unary(K::kSign, x), DoublesAre(std::vector<double>{-1, -1, 1, 1, 1, 0, -1}));
  std::vector<int8_t> ints = {-128, -3, 0, 7}, out(4);
  auto run = [&](PointwiseKind kind) {
    EXPECT_EQ(RunPointwise(kind, TSR_DTYPE_INT8,
                           MustPlan({4}, {Operand(out, TSR_DTYPE_INT8, {4}),
                                          Operand(ints, TSR_DTYPE_INT8, {4})})),
              "");
    return out;
  };
  EXPECT_THAT(run(K::kFloor), ElementsAre(-128, -3, 0, 7));
  EXPECT_THAT(run(K::kSign), ElementsAre(-1, -1, 0, 1));
  EXPECT_THAT(run(K::kBitwiseNot), ElementsAre(127, 2, -1, -8));
  std::vector<uint8_t> flags = {0, 1}, flipped(2);
  EXPECT_EQ(RunPointwise(K::kBitwiseNot, TSR_DTYPE_BOOL,
                         MustPlan({2}, {Operand(flipped, TSR_DTYPE_BOOL, {2}),
                                        Operand(flags, TSR_DTYPE_BOOL, {2})})),
            "");
  EXPECT_THAT(flipped, ElementsAre(1, 0));
}

TEST(GpuPointwise, PredicatesOfEveryClassOfValue) {
  const std::vector<double> x = {0, 1, -kInf, kInf, kNan};
  EXPECT_THAT(Unary(K::kIsNan, x), ElementsAre(0, 0, 0, 0, 1));
  EXPECT_THAT(Unary(K::kIsInf, x), ElementsAre(0, 0, 1, 1, 0));
  EXPECT_THAT(Unary(K::kIsFinite, x), ElementsAre(1, 1, 0, 0, 0));
  EXPECT_THAT(Unary(K::kLogicalNot, x), ElementsAre(1, 0, 0, 0, 0));
  EXPECT_THAT(Unary(K::kIsInf, x, TSR_DTYPE_FLOAT16), ElementsAre(0, 0, 1, 1, 0));
  EXPECT_THAT(Unary(K::kIsFinite, {0, 1}, TSR_DTYPE_INT32), ElementsAre(1, 1));
  EXPECT_THAT(Unary(K::kIsNan, {0, 1}, TSR_DTYPE_INT32), ElementsAre(0, 0));
  EXPECT_THAT(Unary(K::kLogicalNot, {0, 1, 2}, TSR_DTYPE_UINT8), ElementsAre(1, 0, 0));
}

// Op set 1.7's unary math: the library's functions where it has them, the shared special
// functions (tessera/base/special_math.hpp) at values known to many digits.
TEST(GpuPointwise, OpSet17UnaryMath) {
  const std::vector<double> x = {-0.75, -0.0, 0.25, 0.5, 3};
  struct Case {
    PointwiseKind kind;
    double (*f)(double);
  };
  const Case cases[] = {
      {K::kFrac, [](double v) { return v - std::trunc(v); }},
      {K::kDeg2rad, [](double v) { return v * M_PI / 180; }},
      {K::kRad2deg, [](double v) { return v * 180 / M_PI; }},
      {K::kErfc, [](double v) { return std::erfc(v); }},
      {K::kAsinh, [](double v) { return std::asinh(v); }},
      {K::kAtanh, [](double v) { return std::atanh(v); }},
      {K::kSinc, [](double v) { return v == 0 ? 1 : std::sin(M_PI * v) / (M_PI * v); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(static_cast<int>(c.kind));
    const std::vector<double> got = Unary(c.kind, x);
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = c.f(x[i]);
      if (!std::isfinite(want)) {
        EXPECT_TRUE(SameDouble(got[i], want)) << i;  // atanh(3) is NaN
      } else {
        EXPECT_NEAR(got[i], want, 1e-15 * (1 + std::fabs(want))) << i;
      }
    }
  }
  auto near = [](double want) { return ::testing::DoubleNear(want, 1e-13 * std::fabs(want)); };
  EXPECT_THAT(Unary(K::kLgamma, {0.5, 3, -0.0}),
              ElementsAre(near(0.5723649429247001), near(0.6931471805599453), kInf));
  EXPECT_THAT(Unary(K::kAcosh, {1, 2}), ElementsAre(0, near(1.3169578969248166)));
  EXPECT_THAT(Unary(K::kErfinv, {0.5, -0.9, 1, -1, 2}),
              ElementsAre(near(0.4769362762044699), near(-1.1630871536766743), kInf, -kInf,
                          ::testing::IsNan()));
  // digamma(1) = -Euler's gamma; the poles as PyTorch gives them.
  EXPECT_THAT(Unary(K::kDigamma, {1, 0.5, -0.5, 0, -0.0, -2}),
              ElementsAre(near(-0.5772156649015329), near(-1.9635100260214235),
                          near(0.03648997397857652), -kInf, kInf, ::testing::IsNan()));
  EXPECT_THAT(Unary(K::kI0, {0, 1, -2, 40}),
              ElementsAre(1, near(1.2660658777520082), near(2.2795853023360673),
                          near(1.48947747934199e16)));
  PointwiseParams p;
  p.order = 1;  // trigamma(1) = pi^2 / 6
  EXPECT_THAT(Unary(K::kPolygamma, {1, -1, -0.5}, TSR_DTYPE_FLOAT64, p),
              ElementsAre(near(M_PI * M_PI / 6), kInf, near(8.934802200544704)));
  p.order = 3;
  EXPECT_THAT(Unary(K::kPolygamma, {2.5}, TSR_DTYPE_FLOAT32, p),
              ElementsAre(::testing::DoubleNear(0.22390585, 1e-6)));
  // logit: eps in args[0] and 1 - eps in args[1]; a negative eps clamps nothing.
  p = {};
  p.args[0].kind = p.args[1].kind = ConstantValue::kDouble;
  p.args[0].d = 0.25;
  p.args[1].d = 0.75;
  EXPECT_THAT(Unary(K::kLogit, {0, 0.5, 1, kNan}, TSR_DTYPE_FLOAT64, p),
              ElementsAre(near(-std::log(3.0)), 0, near(std::log(3.0)), ::testing::IsNan()));
  p.args[0].d = -1;
  p.args[1].d = 2;
  EXPECT_THAT(Unary(K::kLogit, {0, 1, 0.75}, TSR_DTYPE_FLOAT64, p),
              ElementsAre(-kInf, kInf, near(std::log(3.0))));
}

TEST(GpuPointwise, OpSet17BinaryMath) {
  EXPECT_THAT(Binary(K::kCopysign, {1, 2, 3}, {-0.0, 1, -kNan}),
              DoublesAre(std::vector<double>{-1, 2, -3}));
  EXPECT_THAT(Binary(K::kHypot, {3, -5, kInf}, {4, 12, kNan}), ElementsAre(5, 13, kInf));
  EXPECT_THAT(Binary(K::kLogaddexp, {0, kInf, -kInf}, {0, kInf, -kInf}),
              ElementsAre(::testing::DoubleNear(std::log(2.0), 1e-15), kInf, -kInf));
  EXPECT_THAT(Binary(K::kLogaddexp2, {1, 3}, {1, -kInf}), ElementsAre(2, 3));
  EXPECT_THAT(Binary(K::kXlogy, {0, 0, 2}, {0, kNan, M_E}),
              DoublesAre(std::vector<double>{0, kNan, 2}));
  EXPECT_THAT(Binary(K::kFmax, {kNan, 1, kNan}, {2, kNan, kNan}),
              DoublesAre(std::vector<double>{2, 1, kNan}));
  EXPECT_THAT(Binary(K::kFmin, {kNan, 1}, {2, -1}), ElementsAre(2, -1));
  EXPECT_THAT(Binary(K::kHeaviside, {-2, 0, 3, kNan}, {5, 6, 7, 8}), ElementsAre(0, 6, 1, 0));
  EXPECT_THAT(Binary(K::kNextafter, {1, 0}, {2, -1}),
              ElementsAre(std::nextafter(1.0, 2.0), -std::numeric_limits<double>::denorm_min()));
  // bfloat16 steps in its own bits: 1 + 2^-7, and the smallest subnormal from 0.
  EXPECT_THAT(Binary(K::kNextafter, {1, 0, 1}, {2, 1, 0}, TSR_DTYPE_BFLOAT16),
              ElementsAre(1.0078125, 9.183549615799121e-41, 0.99609375));
  EXPECT_THAT(BinaryOf<int8_t>(K::kGcd, TSR_DTYPE_INT8, {12, -18, 0, -128}, {18, 12, 0, 0}),
              ElementsAre(6, 6, 0, -128));
  EXPECT_THAT(BinaryOf<int32_t>(K::kLcm, TSR_DTYPE_INT32, {-4, 0, 6}, {6, 5, 4}),
              ElementsAre(12, 0, 12));
  EXPECT_THAT(BinaryOf<int8_t>(K::kShiftLeft, TSR_DTYPE_INT8, {1, -1, 5, 3}, {7, 8, -1, 2}),
              ElementsAre(-128, 0, 0, 12));
  EXPECT_THAT(BinaryOf<int8_t>(K::kShiftRight, TSR_DTYPE_INT8, {-128, -1, 5, 64}, {7, 8, -1, 3}),
              ElementsAre(-1, -1, 0, 8));
  // uint8: ATen's max_shift is the whole width (no sign bit), so 8 or more gives 0.
  EXPECT_THAT(BinaryOf<uint8_t>(K::kShiftRight, TSR_DTYPE_UINT8, {255, 255, 200}, {9, 4, 8}),
              ElementsAre(0, 15, 0));
  // gcd of uint8 255 (no "-1" there: 255 is a value like any other).
  EXPECT_THAT(BinaryOf<uint8_t>(K::kGcd, TSR_DTYPE_UINT8, {255, 255, 0}, {3, 5, 0}),
              ElementsAre(3, 5, 0));
  EXPECT_THAT(BinaryOf<uint8_t>(K::kLcm, TSR_DTYPE_UINT8, {255, 4}, {3, 6}), ElementsAre(255, 12));
  EXPECT_EQ(PointwiseDtypes(K::kNextafter) & DtypeBit(TSR_DTYPE_FLOAT16), 0u);
  EXPECT_EQ(PointwiseDtypes(K::kGcd), kIntegralDtypes);
  EXPECT_EQ(PointwiseDtypes(K::kHeaviside), kAllDtypes);
  EXPECT_EQ(PointwiseArity(K::kShiftRight), 2);
}

TEST(GpuPointwise, NanToNumReplacesInTheDtypeAndCopiesIntegers) {
  PointwiseParams p;
  for (ConstantValue& v : p.args) v.kind = ConstantValue::kDouble;
  p.args[0].d = 1.5;
  p.args[1].d = 1e10;  // inf once rounded to float16
  p.args[2].d = -7;
  EXPECT_THAT(Unary(K::kNanToNum, {kNan, kInf, -kInf, 2}, TSR_DTYPE_FLOAT64, p),
              ElementsAre(1.5, 1e10, -7, 2));
  EXPECT_THAT(Unary(K::kNanToNum, {kNan, kInf, -kInf, 2}, TSR_DTYPE_FLOAT16, p),
              ElementsAre(1.5, kInf, -7, 2));
  EXPECT_THAT(Unary(K::kNanToNum, {-3, 4}, TSR_DTYPE_INT32, p), ElementsAre(-3, 4));
  EXPECT_EQ(PointwiseDtypes(K::kNanToNum), kAllDtypes);
}

TEST(GpuPointwise, SignbitSeesNegativeZeroAndNan) {
  EXPECT_THAT(Unary(K::kSignbit, {-0.0, 0.0, -kNan, kNan, -2, kInf}),
              ElementsAre(1, 0, 1, 0, 1, 0));
  EXPECT_THAT(Unary(K::kSignbit, {-3, 0, 5}, TSR_DTYPE_INT16), ElementsAre(1, 0, 0));
  EXPECT_THAT(Unary(K::kSignbit, {0, 200}, TSR_DTYPE_UINT8), ElementsAre(0, 0));
  EXPECT_EQ(PointwiseDtypes(K::kSignbit), kAllDtypes);
}

// The activations and their backward ops, against the formulas written out here (the
// conformance suite checks the plugin's kernels against fp64 references on a device).
PointwiseParams ActivationArgs(double a, double b = 0, double c = 0) {
  PointwiseParams p;
  const double v[3] = {a, b, c};
  for (int i = 0; i < 3; ++i) {
    p.args[i].kind = ConstantValue::kDouble;
    p.args[i].d = v[i];
  }
  return p;
}

TEST(GpuPointwise, ActivationsPieceByPiece) {
  const std::vector<double> x = {-4, -3, -0.5, 0, 0.5, 3, 4, kNan};
  EXPECT_THAT(Unary(K::kLeakyRelu, x, TSR_DTYPE_FLOAT64, ActivationArgs(0.5)),
              DoublesAre(std::vector<double>{-2, -1.5, -0.25, 0, 0.5, 3, 4, kNan}));
  EXPECT_THAT(Unary(K::kHardswish, x), DoublesAre(std::vector<double>{-0.0, -0.0, -0.5 * 2.5 / 6, 0,
                                                                      0.5 * 3.5 / 6, 3, 4, kNan}));
  EXPECT_THAT(Unary(K::kHardsigmoid, x),
              DoublesAre(std::vector<double>{0, 0, 2.5 / 6, 0.5, 3.5 / 6, 1, 1, kNan}));
  EXPECT_THAT(Unary(K::kHardshrink, x, TSR_DTYPE_FLOAT64, ActivationArgs(0.5)),
              DoublesAre(std::vector<double>{-4, -3, 0, 0, 0, 3, 4, kNan}));
  EXPECT_THAT(Unary(K::kSoftshrink, x, TSR_DTYPE_FLOAT64, ActivationArgs(0.5)),
              DoublesAre(std::vector<double>{-3.5, -2.5, -0.0, 0, 0, 2.5, 3.5, kNan}));
  const std::vector<double> elu = Unary(K::kElu, x, TSR_DTYPE_FLOAT64, ActivationArgs(2, 3, 0.5));
  for (size_t i = 0; i + 1 < x.size(); ++i) {
    const double want = x[i] > 0 ? 3 * x[i] : 2 * 3 * std::expm1(0.5 * x[i]);
    EXPECT_NEAR(elu[i], want, 1e-15) << i;
  }
  const std::vector<double> sp =
      Unary(K::kSoftplus, {-1, 1, 2.5, 3}, TSR_DTYPE_FLOAT64, ActivationArgs(2, 5));
  EXPECT_NEAR(sp[0], std::log1p(std::exp(-2.0)) / 2, 1e-15);
  EXPECT_NEAR(sp[2], std::log1p(std::exp(5.0)) / 2, 1e-15);  // beta x = threshold: not above
  EXPECT_EQ(sp[3], 3);                                       // past it: x
  EXPECT_NEAR(Unary(K::kMish, {1.5})[0], 1.5 * std::tanh(std::log1p(std::exp(1.5))), 1e-15);
  // threshold on integers: value where x <= threshold.
  std::vector<int32_t> ints = {-3, 1, 2, 5}, out(4);
  PointwiseParams t;
  t.args[0].i = 1;
  t.args[1].i = 9;
  EXPECT_EQ(RunPointwise(K::kThreshold, TSR_DTYPE_INT32,
                         MustPlan({4}, {Operand(out, TSR_DTYPE_INT32, {4}),
                                        Operand(ints, TSR_DTYPE_INT32, {4})}),
                         t),
            "");
  EXPECT_THAT(out, ElementsAre(9, 9, 2, 5));
}

TEST(GpuPointwise, ActivationBackwardOpsPieceByPiece) {
  const std::vector<double> g = {2, 2, 2, 2, 2, 2, 2};
  const std::vector<double> x = {-4, -3, -0.5, 0, 0.5, 3, 4};
  EXPECT_THAT(Binary(K::kThresholdBackward, g, x, TSR_DTYPE_FLOAT64, ActivationArgs(0)),
              ElementsAre(0, 0, 0, 0, 2, 2, 2));
  EXPECT_THAT(Binary(K::kHardtanhBackward, g, x, TSR_DTYPE_FLOAT64, ActivationArgs(-3, 3)),
              ElementsAre(0, 0, 2, 2, 2, 0, 0));
  EXPECT_THAT(Binary(K::kLeakyReluBackward, g, x, TSR_DTYPE_FLOAT64, ActivationArgs(0.25)),
              ElementsAre(0.5, 0.5, 0.5, 0.5, 2, 2, 2));
  EXPECT_THAT(
      Binary(K::kHardswishBackward, g, x),
      ElementsAre(0, 2 * (-1 + 0.5), 2 * (-0.5 / 3 + 0.5), 1, 2 * (0.5 / 3 + 0.5), 2 * 1.5, 2));
  EXPECT_THAT(Binary(K::kHardsigmoidBackward, g, x),
              ElementsAre(0, 0, 2.0 / 6, 2.0 / 6, 2.0 / 6, 0, 0));
  EXPECT_THAT(Binary(K::kShrinkBackward, g, x, TSR_DTYPE_FLOAT64, ActivationArgs(0.5)),
              ElementsAre(2, 2, 0, 0, 0, 2, 2));
  EXPECT_THAT(Binary(K::kSigmoidBackward, {2}, {0.25}), ElementsAre(2 * 0.25 * 0.75));
  EXPECT_THAT(Binary(K::kTanhBackward, {2}, {0.5}), ElementsAre(2 * 0.75));
  // The smooth ones against their derivatives written out.
  struct Case {
    PointwiseKind kind;
    PointwiseParams p;
    double (*d)(double);
  };
  const Case cases[] = {
      {K::kSiluBackward,
       {},
       [](double v) {
         const double s = 1 / (1 + std::exp(-v));
         return s * (1 + v * (1 - s));
       }},
      {K::kGeluBackward,
       {},
       [](double v) {
         return 0.5 * (1 + std::erf(v / std::sqrt(2.0))) +
                v * std::exp(-v * v / 2) / std::sqrt(2 * M_PI);
       }},
      {K::kGeluTanhBackward,
       {},
       [](double v) {
         const double k = std::sqrt(2 / M_PI), u = k * (v + 0.044715 * v * v * v);
         const double t = std::tanh(u);
         return 0.5 * (1 + t) + 0.5 * v * (1 - t * t) * k * (1 + 3 * 0.044715 * v * v);
       }},
      {K::kEluBackward, ActivationArgs(2, 3, 0.5),
       [](double v) { return v > 0 ? 3 : 0.5 * 2 * 3 * std::exp(0.5 * v); }},
      {K::kSoftplusBackward, ActivationArgs(2, 5),
       [](double v) { return 2 * v > 5 ? 1 : 1 / (1 + std::exp(-2 * v)); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(static_cast<int>(c.kind));
    const std::vector<double> got = Binary(c.kind, g, x, TSR_DTYPE_FLOAT64, c.p);
    for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(got[i], 2 * c.d(x[i]), 1e-14) << i;
  }
  // NaN takes elu's positive piece (ATen tests x <= 0), threshold's and hardtanh's pass g.
  EXPECT_THAT(Binary(K::kEluBackward, {2}, {kNan}, TSR_DTYPE_FLOAT64, ActivationArgs(2, 3, 0.5)),
              ElementsAre(6));
  EXPECT_THAT(Binary(K::kThresholdBackward, {2}, {kNan}, TSR_DTYPE_FLOAT64, ActivationArgs(0)),
              ElementsAre(2));
  EXPECT_THAT(Binary(K::kHardsigmoidBackward, {2}, {kNan}), ElementsAre(0));
  // elu of the result y = 2 * 3 * expm1(0.5 x) below 0: 0.5 * (y + 2 * 3) = the same slope.
  const double y = 2 * 3 * std::expm1(0.5 * -1.0);
  EXPECT_NEAR(
      Binary(K::kEluBackwardOfResult, {2}, {y}, TSR_DTYPE_FLOAT64, ActivationArgs(2, 3, 0.5))[0],
      2 * 0.5 * 2 * 3 * std::exp(-0.5), 1e-14);
}

}  // namespace
}  // namespace gpu
}  // namespace tessera

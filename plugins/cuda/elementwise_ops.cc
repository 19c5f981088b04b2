// The GPU plugin's elementwise ops as typed out= kernels on the GPU elementwise iterator (Note
// [GPU elementwise iterator] in elementwise_plan.h): the binary arithmetic, comparison,
// logical and bitwise ops and their Scalar forms, the unary ops, the other pointwise ops
// (pointwise_ops.h, kernels_pointwise.cu), and copy_ and fill_ (a copy is the identity on the
// same iterator). The runtime derives the functional and in-place forms.
#include "elementwise_ops.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu_device.h"
#include "kernels.h"
#include "op_support.h"
#include "tessera/base/dtypes.hpp"
#include "tessera/base/op_checks.hpp"
#include "tessera/sdk/plugin.hpp"
#include "tessera/sdk/stream.hpp"

namespace tessera {
namespace gpu {
namespace {

namespace sdk = ::tessera::sdk;
using sdk::KernelContext;
using sdk::Scalar;
using sdk::TensorView;

}  // namespace

int32_t Compute(const KernelContext& ctx) { return ctx.planned_compute_dtype(); }

namespace {

// Refuse: the arguments' error of a tessera/base/op_checks.hpp check, which the plan makes and
// the kernels ask again (that header says why).
void Refuse(const char* op, const char* why) {
  if (why != nullptr) sdk::fail(TSR_INVALID_ARGUMENT, std::string(op) + ": " + why);
}

}  // namespace

ConstantValue ValueOf(const Scalar& s) {
  ConstantValue v;
  v.kind = s.c.kind == TSR_SCALAR_DOUBLE ? ConstantValue::kDouble
           : s.c.kind == TSR_SCALAR_BOOL ? ConstantValue::kBool
                                         : ConstantValue::kInt;
  v.i = s.c.i;
  v.d = s.c.d;
  return v;
}

namespace {

// The value of a 0-dim CPU tensor, read from host memory.
ConstantValue ValueOfHost(const TensorView& t) {
  const char* p = static_cast<const char*>(t.data_ptr());
  ConstantValue v;
  auto as_int = [&v](int64_t i) {
    v.kind = ConstantValue::kInt;
    v.i = i;
  };
  auto as_double = [&v](double d) {
    v.kind = ConstantValue::kDouble;
    v.d = d;
  };
  switch (t.dtype()) {
    case TSR_DTYPE_BOOL:
      v.kind = ConstantValue::kBool;
      v.i = *reinterpret_cast<const bool*>(p) ? 1 : 0;
      break;
    case TSR_DTYPE_UINT8:
      as_int(*reinterpret_cast<const uint8_t*>(p));
      break;
    case TSR_DTYPE_INT8:
      as_int(*reinterpret_cast<const int8_t*>(p));
      break;
    case TSR_DTYPE_INT16:
      as_int(*reinterpret_cast<const int16_t*>(p));
      break;
    case TSR_DTYPE_INT32:
      as_int(*reinterpret_cast<const int32_t*>(p));
      break;
    case TSR_DTYPE_INT64:
      as_int(*reinterpret_cast<const int64_t*>(p));
      break;
    case TSR_DTYPE_FLOAT16:
      as_double(ToFloat(*reinterpret_cast<const Half*>(p)));
      break;
    case TSR_DTYPE_BFLOAT16:
      as_double(ToFloat(*reinterpret_cast<const BFloat16*>(p)));
      break;
    case TSR_DTYPE_FLOAT32:
      as_double(*reinterpret_cast<const float*>(p));
      break;
    default:
      as_double(*reinterpret_cast<const double*>(p));
      break;
  }
  return v;
}

}  // namespace

OperandSpec TensorOperand(const char* op, const TensorView& t, const char* arg) {
  OperandSpec o;
  o.dtype = t.dtype();
  if (t.device().type == TSR_DEVICE_CPU) {
    if (t.dim() != 0) {
      sdk::fail(TSR_INVALID_ARGUMENT, std::string(op) + ": expected '" + arg + "' on " +
                                          TESSERA_GPU_PLUGIN_NAME +
                                          " or a 0-dim CPU tensor, got a CPU tensor of " +
                                          std::to_string(t.dim()) + " dimensions");
    }
    o.constant = true;
    o.value = ValueOfHost(t);
    return o;
  }
  o.data = static_cast<char*>(t.data_ptr());
  o.sizes = t.sizes().vec();
  o.strides = t.strides().vec();
  return o;
}

OperandSpec ScalarOperand(const Scalar& s, int32_t compute) {
  OperandSpec o;
  o.dtype = compute;
  o.constant = true;
  o.value = ValueOf(s);
  return o;
}

namespace {

ElementwisePlan Plan(const char* op, const TensorView& out, std::vector<OperandSpec> operands) {
  operands.insert(operands.begin(), TensorOperand(op, out, "out"));
  ElementwisePlan plan;
  std::string error;
  if (!MakeElementwisePlan(out.sizes().vec(), operands, &plan, &error)) {
    sdk::fail(TSR_UNIMPLEMENTED, std::string(op) + ": " + error);
  }
  return plan;
}

void RunBinary(const char* op, BinaryKind kind, int32_t compute, const TensorView& out,
               OperandSpec a, OperandSpec b, const ConstantValue& alpha) {
  RequireDtype(op, compute, BinaryDtypes(kind));
  const ElementwisePlan plan = Plan(op, out, {std::move(a), std::move(b)});
  if (plan.chunks.empty()) return;
  DeviceGuard guard(out.device().index);
  Check(op, LaunchBinary(kind, compute, plan, alpha, sdk::current_stream(out.device())));
}

void RunUnary(const char* op, UnaryKind kind, int32_t compute, const TensorView& out,
              OperandSpec a) {
  RequireDtype(op, compute, UnaryDtypes(kind));
  const ElementwisePlan plan = Plan(op, out, {std::move(a)});
  if (plan.chunks.empty()) return;
  DeviceGuard guard(out.device().index);
  Check(op, LaunchUnary(kind, compute, plan, sdk::current_stream(out.device())));
}

// Alpha: add/sub's alpha, checked against the compute dtype.
ConstantValue Alpha(const char* op, const Scalar& alpha, int32_t compute) {
  Refuse(op, base::alpha_error(static_cast<tsr_dtype>(compute), alpha.c.kind));
  return ValueOf(alpha);
}

// --- binary ops: add.out, sub.out, mul.out, div.out and their Scalar_out forms ---------------

TensorView AddOut(const KernelContext& ctx, const TensorView& self, const TensorView& other,
                  Scalar alpha, const TensorView& out) {
  const int32_t c = Compute(ctx);
  RunBinary("add.out", BinaryKind::kAdd, c, out, TensorOperand("add.out", self, "self"),
            TensorOperand("add.out", other, "other"), Alpha("add.out", alpha, c));
  return out;
}
TensorView AddScalarOut(const KernelContext& ctx, const TensorView& self, Scalar other,
                        Scalar alpha, const TensorView& out) {
  const int32_t c = Compute(ctx);
  RunBinary("add.Scalar_out", BinaryKind::kAdd, c, out,
            TensorOperand("add.Scalar_out", self, "self"), ScalarOperand(other, c),
            Alpha("add.Scalar_out", alpha, c));
  return out;
}
TensorView SubOut(const KernelContext& ctx, const TensorView& self, const TensorView& other,
                  Scalar alpha, const TensorView& out) {
  const int32_t c = Compute(ctx);
  RunBinary("sub.out", BinaryKind::kSub, c, out, TensorOperand("sub.out", self, "self"),
            TensorOperand("sub.out", other, "other"), Alpha("sub.out", alpha, c));
  return out;
}
TensorView SubScalarOut(const KernelContext& ctx, const TensorView& self, Scalar other,
                        Scalar alpha, const TensorView& out) {
  const int32_t c = Compute(ctx);
  RunBinary("sub.Scalar_out", BinaryKind::kSub, c, out,
            TensorOperand("sub.Scalar_out", self, "self"), ScalarOperand(other, c),
            Alpha("sub.Scalar_out", alpha, c));
  return out;
}
TensorView MulOut(const KernelContext& ctx, const TensorView& self, const TensorView& other,
                  const TensorView& out) {
  RunBinary("mul.out", BinaryKind::kMul, Compute(ctx), out, TensorOperand("mul.out", self, "self"),
            TensorOperand("mul.out", other, "other"), ConstantValue());
  return out;
}
TensorView MulScalarOut(const KernelContext& ctx, const TensorView& self, Scalar other,
                        const TensorView& out) {
  const int32_t c = Compute(ctx);
  RunBinary("mul.Scalar_out", BinaryKind::kMul, c, out,
            TensorOperand("mul.Scalar_out", self, "self"), ScalarOperand(other, c),
            ConstantValue());
  return out;
}
TensorView DivOut(const KernelContext& ctx, const TensorView& self, const TensorView& other,
                  const TensorView& out) {
  RunBinary("div.out", BinaryKind::kDiv, Compute(ctx), out, TensorOperand("div.out", self, "self"),
            TensorOperand("div.out", other, "other"), ConstantValue());
  return out;
}
TensorView DivScalarOut(const KernelContext& ctx, const TensorView& self, Scalar other,
                        const TensorView& out) {
  const int32_t c = Compute(ctx);
  RunBinary("div.Scalar_out", BinaryKind::kDiv, c, out,
            TensorOperand("div.Scalar_out", self, "self"), ScalarOperand(other, c),
            ConstantValue());
  return out;
}

// --- unary ops ------------------------------------------------------------------------------

// A unary op in the planned compute dtype: the input's (neg, abs, relu), or a floating one,
// integers and bool as float32 (exp, sqrt, ...).
template <UnaryKind kKind>
TensorView UnaryOut(const KernelContext& ctx, const char* op, const TensorView& self,
                    const TensorView& out) {
  RunUnary(op, kKind, Compute(ctx), out, TensorOperand(op, self, "self"));
  return out;
}

#define TESSERA_GPU_UNARY(NAME, KIND)                                                             \
  TensorView NAME##Out(const KernelContext& ctx, const TensorView& self, const TensorView& out) { \
    return UnaryOut<UnaryKind::KIND>(ctx, #NAME ".out", self, out);                               \
  }
TESSERA_GPU_UNARY(neg, kNeg)
TESSERA_GPU_UNARY(abs, kAbs)
TESSERA_GPU_UNARY(relu, kRelu)
TESSERA_GPU_UNARY(exp, kExp)
TESSERA_GPU_UNARY(log, kLog)
TESSERA_GPU_UNARY(sqrt, kSqrt)
TESSERA_GPU_UNARY(rsqrt, kRsqrt)
TESSERA_GPU_UNARY(sin, kSin)
TESSERA_GPU_UNARY(cos, kCos)
TESSERA_GPU_UNARY(tanh, kTanh)
TESSERA_GPU_UNARY(sigmoid, kSigmoid)
TESSERA_GPU_UNARY(reciprocal, kReciprocal)
#undef TESSERA_GPU_UNARY

// --- the other pointwise ops (pointwise_ops.h, kernels_pointwise.cu) ------------------------

using K = PointwiseKind;

}  // namespace

void RunPointwise(const char* op, PointwiseKind kind, int32_t compute, const TensorView& out,
                  std::vector<OperandSpec> inputs, const PointwiseParams& params,
                  uint32_t supported) {
  if (supported == 0) supported = PointwiseDtypes(kind);
  supported &= PointwiseDtypes(kind);
  RequireDtype(op, compute, supported);
  const ElementwisePlan plan = Plan(op, out, std::move(inputs));
  if (plan.chunks.empty()) return;
  DeviceGuard guard(out.device().index);
  Check(op, LaunchPointwise(kind, compute, plan, params, sdk::current_stream(out.device())));
}

namespace {

// Integer division by a zero known on the host (a Scalar or a 0-dim CPU tensor) is refused, as
// the CPU backend refuses it; a zero inside a GPU tensor cannot be (Note [GPU pointwise
// families]).
void CheckDivisor(const char* op, int32_t compute, const OperandSpec& divisor) {
  if (!divisor.constant || !sdk::is_integral(static_cast<tsr_dtype>(compute), true)) return;
  const ConstantValue& v = divisor.value;
  const bool zero = v.kind == ConstantValue::kDouble ? FloatToInt64(v.d) == 0 : v.i == 0;
  if (zero) {
    sdk::fail(TSR_INVALID_ARGUMENT,
              std::string(op) + ": ZeroDivisionError (integer division by zero)");
  }
}

// Binary ops whose Tensor and Scalar forms compute in the promoted dtype.
template <PointwiseKind kKind>
struct BinaryOp {
  static TensorView TensorOut(const KernelContext& ctx, const char* op, const TensorView& self,
                              const TensorView& other, const TensorView& out) {
    const int32_t c = Compute(ctx);
    OperandSpec b = TensorOperand(op, other, "other");
    if (kKind >= K::kRemainder && kKind <= K::kDivFloor) CheckDivisor(op, c, b);
    RunPointwise(op, kKind, c, out, {TensorOperand(op, self, "self"), std::move(b)});
    return out;
  }
  static TensorView ScalarOut(const KernelContext& ctx, const char* op, const TensorView& self,
                              const Scalar& other, const TensorView& out) {
    const int32_t c = Compute(ctx);
    OperandSpec b = ScalarOperand(other, c);
    if (kKind >= K::kRemainder && kKind <= K::kDivFloor) CheckDivisor(op, c, b);
    RunPointwise(op, kKind, c, out, {TensorOperand(op, self, "self"), std::move(b)});
    return out;
  }
};

#define TESSERA_GPU_BINARY_TENSOR(FN, OP, KIND)                                            \
  TensorView FN(const KernelContext& ctx, const TensorView& self, const TensorView& other, \
                const TensorView& out) {                                                   \
    return BinaryOp<K::KIND>::TensorOut(ctx, OP, self, other, out);                        \
  }
#define TESSERA_GPU_BINARY_SCALAR(FN, OP, KIND)                                 \
  TensorView FN(const KernelContext& ctx, const TensorView& self, Scalar other, \
                const TensorView& out) {                                        \
    return BinaryOp<K::KIND>::ScalarOut(ctx, OP, self, other, out);             \
  }
TESSERA_GPU_BINARY_TENSOR(EqOut, "eq.Tensor_out", kEq)
TESSERA_GPU_BINARY_TENSOR(NeOut, "ne.Tensor_out", kNe)
TESSERA_GPU_BINARY_TENSOR(LtOut, "lt.Tensor_out", kLt)
TESSERA_GPU_BINARY_TENSOR(LeOut, "le.Tensor_out", kLe)
TESSERA_GPU_BINARY_TENSOR(GtOut, "gt.Tensor_out", kGt)
TESSERA_GPU_BINARY_TENSOR(GeOut, "ge.Tensor_out", kGe)
TESSERA_GPU_BINARY_SCALAR(EqScalarOut, "eq.Scalar_out", kEq)
TESSERA_GPU_BINARY_SCALAR(NeScalarOut, "ne.Scalar_out", kNe)
TESSERA_GPU_BINARY_SCALAR(LtScalarOut, "lt.Scalar_out", kLt)
TESSERA_GPU_BINARY_SCALAR(LeScalarOut, "le.Scalar_out", kLe)
TESSERA_GPU_BINARY_SCALAR(GtScalarOut, "gt.Scalar_out", kGt)
TESSERA_GPU_BINARY_SCALAR(GeScalarOut, "ge.Scalar_out", kGe)
TESSERA_GPU_BINARY_TENSOR(LogicalAndOut, "logical_and.out", kLogicalAnd)
TESSERA_GPU_BINARY_TENSOR(LogicalOrOut, "logical_or.out", kLogicalOr)
TESSERA_GPU_BINARY_TENSOR(LogicalXorOut, "logical_xor.out", kLogicalXor)
TESSERA_GPU_BINARY_TENSOR(BitwiseAndOut, "bitwise_and.Tensor_out", kBitwiseAnd)
TESSERA_GPU_BINARY_TENSOR(BitwiseOrOut, "bitwise_or.Tensor_out", kBitwiseOr)
TESSERA_GPU_BINARY_TENSOR(BitwiseXorOut, "bitwise_xor.Tensor_out", kBitwiseXor)
TESSERA_GPU_BINARY_SCALAR(BitwiseAndScalarOut, "bitwise_and.Scalar_out", kBitwiseAnd)
TESSERA_GPU_BINARY_SCALAR(BitwiseOrScalarOut, "bitwise_or.Scalar_out", kBitwiseOr)
TESSERA_GPU_BINARY_SCALAR(BitwiseXorScalarOut, "bitwise_xor.Scalar_out", kBitwiseXor)
TESSERA_GPU_BINARY_TENSOR(MaximumOut, "maximum.out", kMaximum)
TESSERA_GPU_BINARY_TENSOR(MinimumOut, "minimum.out", kMinimum)
TESSERA_GPU_BINARY_TENSOR(RemainderOut, "remainder.Tensor_out", kRemainder)
TESSERA_GPU_BINARY_SCALAR(RemainderScalarOut, "remainder.Scalar_out", kRemainder)
TESSERA_GPU_BINARY_TENSOR(FmodOut, "fmod.Tensor_out", kFmod)
TESSERA_GPU_BINARY_SCALAR(FmodScalarOut, "fmod.Scalar_out", kFmod)
TESSERA_GPU_BINARY_TENSOR(PowTensorOut, "pow.Tensor_Tensor_out", kPow)
// op set 1.7
TESSERA_GPU_BINARY_TENSOR(CopysignOut, "copysign.out", kCopysign)
TESSERA_GPU_BINARY_SCALAR(CopysignScalarOut, "copysign.Scalar_out", kCopysign)
TESSERA_GPU_BINARY_TENSOR(HypotOut, "hypot.out", kHypot)
TESSERA_GPU_BINARY_TENSOR(NextafterOut, "nextafter.out", kNextafter)
TESSERA_GPU_BINARY_TENSOR(LogaddexpOut, "logaddexp.out", kLogaddexp)
TESSERA_GPU_BINARY_TENSOR(Logaddexp2Out, "logaddexp2.out", kLogaddexp2)
TESSERA_GPU_BINARY_TENSOR(XlogyOut, "xlogy.OutTensor", kXlogy)
TESSERA_GPU_BINARY_SCALAR(XlogyScalarOtherOut, "xlogy.OutScalar_Other", kXlogy)
TESSERA_GPU_BINARY_TENSOR(FmaxOut, "fmax.out", kFmax)
TESSERA_GPU_BINARY_TENSOR(FminOut, "fmin.out", kFmin)
TESSERA_GPU_BINARY_TENSOR(HeavisideOut, "heaviside.out", kHeaviside)
TESSERA_GPU_BINARY_TENSOR(GcdOut, "gcd.out", kGcd)
TESSERA_GPU_BINARY_TENSOR(LcmOut, "lcm.out", kLcm)
TESSERA_GPU_BINARY_TENSOR(ShiftLeftOut, "bitwise_left_shift.Tensor_out", kShiftLeft)
TESSERA_GPU_BINARY_SCALAR(ShiftLeftScalarOut, "bitwise_left_shift.Tensor_Scalar_out", kShiftLeft)
TESSERA_GPU_BINARY_TENSOR(ShiftRightOut, "bitwise_right_shift.Tensor_out", kShiftRight)
TESSERA_GPU_BINARY_SCALAR(ShiftRightScalarOut, "bitwise_right_shift.Tensor_Scalar_out", kShiftRight)
#undef TESSERA_GPU_BINARY_TENSOR
#undef TESSERA_GPU_BINARY_SCALAR

TensorView Atan2Out(const KernelContext& ctx, const TensorView& self, const TensorView& other,
                    const TensorView& out) {
  RunPointwise(
      "atan2.out", K::kAtan2, Compute(ctx), out,
      {TensorOperand("atan2.out", self, "self"), TensorOperand("atan2.out", other, "other")});
  return out;
}

// div.out_mode(Tensor self, Tensor other, *, str? rounding_mode, Tensor(a!) out)
TensorView DivModeOut(const KernelContext& ctx, const TensorView& self, const TensorView& other,
                      std::optional<std::string_view> rounding_mode, const TensorView& out) {
  const char* op = "div.out_mode";  // rounding_mode is None, "trunc" or "floor": the plan's check
  if (!rounding_mode) return DivOut(ctx, self, other, out);
  if (*rounding_mode == "trunc") {
    return BinaryOp<K::kDivTrunc>::TensorOut(ctx, op, self, other, out);
  }
  return BinaryOp<K::kDivFloor>::TensorOut(ctx, op, self, other, out);
}

// PowModeOf: PyTorch's CUDA kernel computes these floating exponents without pow.
PowMode PowModeOf(const Scalar& exponent, int32_t compute) {
  if (!sdk::is_floating(static_cast<tsr_dtype>(compute))) return PowMode::kGeneral;
  const double e =
      exponent.c.kind == TSR_SCALAR_DOUBLE ? exponent.c.d : static_cast<double>(exponent.c.i);
  if (e == 2) return PowMode::kSquare;
  if (e == 3) return PowMode::kCube;
  if (e == -2) return PowMode::kInverseSquare;
  if (e == 0.5) return PowMode::kSqrt;
  if (e == -0.5) return PowMode::kRsqrt;
  if (e == -1) return PowMode::kReciprocal;
  return PowMode::kGeneral;
}

// pow.Tensor_Scalar_out(Tensor self, Scalar exponent, *, Tensor(a!) out)
TensorView PowTensorScalarOut(const KernelContext& ctx, const TensorView& self, Scalar exponent,
                              const TensorView& out) {
  const char* op = "pow.Tensor_Scalar_out";
  Refuse(op, base::integer_power_error(self.dtype(), exponent.c.kind, exponent.to_double() < 0));
  const int32_t c = Compute(ctx);
  PointwiseParams params;
  params.pow = PowModeOf(exponent, c);
  RunPointwise(op, K::kPow, c, out, {TensorOperand(op, self, "self"), ScalarOperand(exponent, c)},
               params);
  return out;
}

// pow.Scalar_out(Scalar self, Tensor exponent, *, Tensor(a!) out): a Scalar base.
TensorView PowScalarOut(const KernelContext& ctx, Scalar self, const TensorView& exponent,
                        const TensorView& out) {
  const char* op = "pow.Scalar_out";
  const int32_t c = Compute(ctx);
  RunPointwise(op, K::kPow, c, out,
               {ScalarOperand(self, c), TensorOperand(op, exponent, "exponent")});
  return out;
}

// A Scalar self and a Tensor other (xlogy.OutScalar_Self, the shifts' Scalar_Tensor_out).
template <PointwiseKind kKind>
TensorView ScalarSelfOut(const KernelContext& ctx, Scalar self, const TensorView& other,
                         const TensorView& out) {
  const char* op = kKind == K::kXlogy       ? "xlogy.OutScalar_Self"
                   : kKind == K::kShiftLeft ? "bitwise_left_shift.Scalar_Tensor_out"
                                            : "bitwise_right_shift.Scalar_Tensor_out";
  const int32_t c = Compute(ctx);
  RunPointwise(op, kKind, c, out, {ScalarOperand(self, c), TensorOperand(op, other, "other")});
  return out;
}

// where.self_out(Tensor condition, Tensor self, Tensor other, *, Tensor(a!) out)
TensorView WhereOut(const KernelContext& ctx, const TensorView& condition, const TensorView& self,
                    const TensorView& other, const TensorView& out) {
  const char* op = "where.self_out";
  RunPointwise(op, K::kWhere, Compute(ctx), out,
               {TensorOperand(op, condition, "condition"), TensorOperand(op, self, "self"),
                TensorOperand(op, other, "other")});
  return out;
}

// masked_fill.Scalar_out(Tensor self, Tensor mask, Scalar value, *, Tensor(a!) out): where(mask,
// value, self) in self's dtype.
TensorView MaskedFillOut(const KernelContext& ctx, const TensorView& self, const TensorView& mask,
                         Scalar value, const TensorView& out) {
  const char* op = "masked_fill.Scalar_out";
  const int32_t c = Compute(ctx);  // self's dtype
  RunPointwise(
      op, K::kWhere, c, out,
      {TensorOperand(op, mask, "mask"), ScalarOperand(value, c), TensorOperand(op, self, "self")});
  return out;
}

}  // namespace

void Clamp(const char* op, int32_t compute, const TensorView& out, OperandSpec self,
           std::optional<OperandSpec> lo, std::optional<OperandSpec> hi) {
  const uint32_t dtypes = PointwiseDtypes(PointwiseKind::kClamp);
  if (lo && hi) {
    RunPointwise(op, PointwiseKind::kClamp, compute, out,
                 {std::move(self), std::move(*lo), std::move(*hi)});
  } else if (lo) {
    RunPointwise(op, PointwiseKind::kMaximum, compute, out, {std::move(self), std::move(*lo)}, {},
                 dtypes);
  } else if (hi) {
    RunPointwise(op, PointwiseKind::kMinimum, compute, out, {std::move(self), std::move(*hi)}, {},
                 dtypes);
  } else {  // the plan refuses min = max = None
    sdk::fail(TSR_INTERNAL, std::string(op) + ": neither bound reached the kernel");
  }
}

namespace {

// clamp.out(Tensor self, Scalar? min=None, Scalar? max=None, *, Tensor(a!) out)
TensorView ClampOut(const KernelContext& ctx, const TensorView& self, std::optional<Scalar> min,
                    std::optional<Scalar> max, const TensorView& out) {
  const char* op = "clamp.out";
  const int32_t c = Compute(ctx);
  // A NaN bound alone is ignored (PyTorch's clamp_out fills NaN only when both bounds are
  // given): as the unbounded side's infinity, where maximum / minimum leave every x as it is.
  if (min.has_value() != max.has_value()) {
    std::optional<Scalar>& bound = min ? min : max;
    if (std::isnan(bound->to_double())) bound = Scalar(min ? -INFINITY : INFINITY);
  }
  std::optional<OperandSpec> lo, hi;
  if (min) lo = ScalarOperand(*min, c);
  if (max) hi = ScalarOperand(*max, c);
  Clamp(op, c, out, TensorOperand(op, self, "self"), std::move(lo), std::move(hi));
  return out;
}

// clamp.Tensor_out(Tensor self, Tensor? min=None, Tensor? max=None, *, Tensor(a!) out)
TensorView ClampTensorOut(const KernelContext& ctx, const TensorView& self,
                          std::optional<TensorView> min, std::optional<TensorView> max,
                          const TensorView& out) {
  const char* op = "clamp.Tensor_out";
  std::optional<OperandSpec> lo, hi;
  if (min) lo = TensorOperand(op, *min, "min");
  if (max) hi = TensorOperand(op, *max, "max");
  Clamp(op, Compute(ctx), out, TensorOperand(op, self, "self"), std::move(lo), std::move(hi));
  return out;
}

// addcmul.out / addcdiv.out(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1,
// Tensor(a!) out)
template <PointwiseKind kKind>
TensorView AddcOut(const KernelContext& ctx, const TensorView& self, const TensorView& tensor1,
                   const TensorView& tensor2, Scalar value, const TensorView& out) {
  const char* op = kKind == K::kAddcdiv ? "addcdiv.out" : "addcmul.out";
  const int32_t c = Compute(ctx);
  if (kKind == K::kAddcdiv) Refuse(op, base::addcdiv_error(static_cast<tsr_dtype>(c)));
  PointwiseParams params;
  params.value = ValueOf(value);
  RunPointwise(op, kKind, c, out,
               {TensorOperand(op, self, "self"), TensorOperand(op, tensor1, "tensor1"),
                TensorOperand(op, tensor2, "tensor2")},
               params);
  return out;
}

// lerp.Scalar_out(Tensor self, Tensor end, Scalar weight, *, Tensor(a!) out)
TensorView LerpScalarOut(const KernelContext& ctx, const TensorView& self, const TensorView& end,
                         Scalar weight, const TensorView& out) {
  const char* op = "lerp.Scalar_out";
  const int32_t c = Compute(ctx);
  RunPointwise(
      op, K::kLerp, c, out,
      {TensorOperand(op, self, "self"), TensorOperand(op, end, "end"), ScalarOperand(weight, c)});
  return out;
}

// lerp.Tensor_out(Tensor self, Tensor end, Tensor weight, *, Tensor(a!) out)
TensorView LerpTensorOut(const KernelContext& ctx, const TensorView& self, const TensorView& end,
                         const TensorView& weight, const TensorView& out) {
  const char* op = "lerp.Tensor_out";
  RunPointwise(op, K::kLerp, Compute(ctx), out,
               {TensorOperand(op, self, "self"), TensorOperand(op, end, "end"),
                TensorOperand(op, weight, "weight")});
  return out;
}

// A unary pointwise op in the planned compute dtype (as UnaryOut).
template <PointwiseKind kKind>
TensorView PointwiseUnaryOut(const KernelContext& ctx, const char* op, const TensorView& self,
                             const TensorView& out, const PointwiseParams& params = {}) {
  RunPointwise(op, kKind, Compute(ctx), out, {TensorOperand(op, self, "self")}, params);
  return out;
}

#define TESSERA_GPU_POINTWISE_UNARY(NAME, KIND)                                                   \
  TensorView NAME##Out(const KernelContext& ctx, const TensorView& self, const TensorView& out) { \
    return PointwiseUnaryOut<K::KIND>(ctx, #NAME ".out", self, out);                              \
  }
TESSERA_GPU_POINTWISE_UNARY(exp2, kExp2)
TESSERA_GPU_POINTWISE_UNARY(expm1, kExpm1)
TESSERA_GPU_POINTWISE_UNARY(log2, kLog2)
TESSERA_GPU_POINTWISE_UNARY(log10, kLog10)
TESSERA_GPU_POINTWISE_UNARY(log1p, kLog1p)
TESSERA_GPU_POINTWISE_UNARY(tan, kTan)
TESSERA_GPU_POINTWISE_UNARY(asin, kAsin)
TESSERA_GPU_POINTWISE_UNARY(acos, kAcos)
TESSERA_GPU_POINTWISE_UNARY(atan, kAtan)
TESSERA_GPU_POINTWISE_UNARY(sinh, kSinh)
TESSERA_GPU_POINTWISE_UNARY(cosh, kCosh)
TESSERA_GPU_POINTWISE_UNARY(erf, kErf)
TESSERA_GPU_POINTWISE_UNARY(silu, kSilu)
TESSERA_GPU_POINTWISE_UNARY(floor, kFloor)
TESSERA_GPU_POINTWISE_UNARY(ceil, kCeil)
TESSERA_GPU_POINTWISE_UNARY(round, kRound)
TESSERA_GPU_POINTWISE_UNARY(trunc, kTrunc)
TESSERA_GPU_POINTWISE_UNARY(sign, kSign)
TESSERA_GPU_POINTWISE_UNARY(bitwise_not, kBitwiseNot)
TESSERA_GPU_POINTWISE_UNARY(isnan, kIsNan)
TESSERA_GPU_POINTWISE_UNARY(isinf, kIsInf)
TESSERA_GPU_POINTWISE_UNARY(isfinite, kIsFinite)
TESSERA_GPU_POINTWISE_UNARY(logical_not, kLogicalNot)
// op set 1.7
TESSERA_GPU_POINTWISE_UNARY(frac, kFrac)
TESSERA_GPU_POINTWISE_UNARY(sgn, kSign)  // sign, for the real dtypes
TESSERA_GPU_POINTWISE_UNARY(signbit, kSignbit)
TESSERA_GPU_POINTWISE_UNARY(deg2rad, kDeg2rad)
TESSERA_GPU_POINTWISE_UNARY(rad2deg, kRad2deg)
TESSERA_GPU_POINTWISE_UNARY(erfc, kErfc)
TESSERA_GPU_POINTWISE_UNARY(erfinv, kErfinv)
TESSERA_GPU_POINTWISE_UNARY(lgamma, kLgamma)
TESSERA_GPU_POINTWISE_UNARY(digamma, kDigamma)
TESSERA_GPU_POINTWISE_UNARY(i0, kI0)
TESSERA_GPU_POINTWISE_UNARY(sinc, kSinc)
TESSERA_GPU_POINTWISE_UNARY(acosh, kAcosh)
TESSERA_GPU_POINTWISE_UNARY(asinh, kAsinh)
TESSERA_GPU_POINTWISE_UNARY(atanh, kAtanh)
#undef TESSERA_GPU_POINTWISE_UNARY

ConstantValue DoubleValue(double d) {
  ConstantValue v;
  v.kind = ConstantValue::kDouble;
  v.d = d;
  return v;
}

// logit.out(Tensor self, float? eps=None, *, Tensor(a!) out): the clamp's bounds eps and 1 - eps
// (a negative eps, as None, clamps nothing).
TensorView LogitOut(const KernelContext& ctx, const TensorView& self, std::optional<double> eps,
                    const TensorView& out) {
  PointwiseParams params;
  params.args[0] = DoubleValue(eps.value_or(-1));
  params.args[1] = DoubleValue(1 - eps.value_or(-1));
  return PointwiseUnaryOut<K::kLogit>(ctx, "logit.out", self, out, params);
}

// polygamma.out(int n, Tensor self, *, Tensor(a!) out); the plan refuses n < 0.
TensorView PolygammaOut(const KernelContext& ctx, int64_t n, const TensorView& self,
                        const TensorView& out) {
  PointwiseParams params;
  params.order = n;
  return PointwiseUnaryOut<K::kPolygamma>(ctx, "polygamma.out", self, out, params);
}

// nan_to_num.out(Tensor self, float? nan=None, float? posinf=None, float? neginf=None, *,
// Tensor(a!) out): the replacements default to 0 and the dtype's largest and lowest finite
// values; each reaches the kernel in the compute type and is rounded to the dtype with the
// result (1e10 becomes inf in float16, as PyTorch's cast). Integers and bool are copied.
TensorView NanToNumOut(const KernelContext& ctx, const TensorView& self, std::optional<double> nan,
                       std::optional<double> posinf, std::optional<double> neginf,
                       const TensorView& out) {
  const int32_t c = Compute(ctx);
  PointwiseParams params;
  const double largest = base::largest_finite(static_cast<tsr_dtype>(c));
  if (largest != 0) {  // integers and bool: the replacements are unused
    params.args[0] = DoubleValue(nan.value_or(0));
    params.args[1] = DoubleValue(posinf.value_or(largest));
    params.args[2] = DoubleValue(neginf.value_or(-largest));
  }
  return PointwiseUnaryOut<K::kNanToNum>(ctx, "nan_to_num.out", self, out, params);
}

// gelu.out(Tensor self, *, str approximate='none', Tensor(a!) out)
TensorView GeluOut(const KernelContext& ctx, const TensorView& self, std::string_view approximate,
                   const TensorView& out) {
  if (approximate == "none") return PointwiseUnaryOut<K::kGelu>(ctx, "gelu.out", self, out);
  if (approximate == "tanh") return PointwiseUnaryOut<K::kGeluTanh>(ctx, "gelu.out", self, out);
  sdk::fail(TSR_INVALID_ARGUMENT,
            "gelu.out: " + std::string(base::gelu_approximate_error(approximate)) + ", got '" +
                std::string(approximate) + "'");
}

// round.decimals_out(Tensor self, *, int decimals, Tensor(a!) out): floating dtypes only,
// whatever `decimals` (as PyTorch).
TensorView RoundDecimalsOut(const KernelContext& ctx, const TensorView& self, int64_t decimals,
                            const TensorView& out) {
  PointwiseParams params;
  params.decimals = decimals;
  return PointwiseUnaryOut<K::kRoundDecimals>(ctx, "round.decimals_out", self, out, params);
}

// --- copy_ and fill_ ------------------------------------------------------------------------

// copy_ on one device (the runtime moves data between devices itself): any dtype to any
// dtype, src broadcast to self. A dense copy of equal dtypes and layouts is one memcpy on the
// current stream.
TensorView Copy(const TensorView& self, const TensorView& src,
                bool /*non_blocking: always queued*/) {
  if (self.numel() == 0) return self;
  const bool same_layout = src.device().type != TSR_DEVICE_CPU && self.dtype() == src.dtype() &&
                           self.is_contiguous() && src.is_contiguous() && self.same_shape(src);
  if (same_layout) {
    if (self.data_ptr() == src.data_ptr()) return self;
    const tsr_device d = self.device();
    DeviceGuard guard(d.index);
    const cudaError_t e = cudaMemcpyAsync(
        self.data_ptr(), src.data_ptr(), static_cast<size_t>(self.numel()) * self.itemsize(),
        cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(sdk::current_stream(d)));
    if (e != cudaSuccess) Check("copy_", ErrorText(e));
    return self;
  }
  RunUnary("copy_", UnaryKind::kIdentity, self.dtype(), self, TensorOperand("copy_", src, "src"));
  return self;
}

TensorView Fill(const TensorView& self, Scalar value) {
  RunUnary("fill_.Scalar", UnaryKind::kIdentity, self.dtype(), self,
           ScalarOperand(value, self.dtype()));
  return self;
}

}  // namespace

sdk::Tensor CopyOnDevice(const sdk::Tensor& self, const sdk::Tensor& src, bool non_blocking) {
  Copy(sdk::view_of(self), sdk::view_of(src), non_blocking);
  return self;
}

void RegisterElementwiseOps(sdk::Library& lib) {
  lib.impl<&AddOut>(TESSERA_OP("add.out"));
  lib.impl<&AddScalarOut>(TESSERA_OP("add.Scalar_out"));
  lib.impl<&SubOut>(TESSERA_OP("sub.out"));
  lib.impl<&SubScalarOut>(TESSERA_OP("sub.Scalar_out"));
  lib.impl<&MulOut>(TESSERA_OP("mul.out"));
  lib.impl<&MulScalarOut>(TESSERA_OP("mul.Scalar_out"));
  lib.impl<&DivOut>(TESSERA_OP("div.out"));
  lib.impl<&DivScalarOut>(TESSERA_OP("div.Scalar_out"));
  lib.impl<&negOut>(TESSERA_OP("neg.out"));
  lib.impl<&absOut>(TESSERA_OP("abs.out"));
  lib.impl<&reluOut>(TESSERA_OP("relu.out"));
  lib.impl<&expOut>(TESSERA_OP("exp.out"));
  lib.impl<&logOut>(TESSERA_OP("log.out"));
  lib.impl<&sqrtOut>(TESSERA_OP("sqrt.out"));
  lib.impl<&rsqrtOut>(TESSERA_OP("rsqrt.out"));
  lib.impl<&sinOut>(TESSERA_OP("sin.out"));
  lib.impl<&cosOut>(TESSERA_OP("cos.out"));
  lib.impl<&tanhOut>(TESSERA_OP("tanh.out"));
  lib.impl<&sigmoidOut>(TESSERA_OP("sigmoid.out"));
  lib.impl<&reciprocalOut>(TESSERA_OP("reciprocal.out"));
  lib.impl<&EqOut>(TESSERA_OP("eq.Tensor_out"));
  lib.impl<&NeOut>(TESSERA_OP("ne.Tensor_out"));
  lib.impl<&LtOut>(TESSERA_OP("lt.Tensor_out"));
  lib.impl<&LeOut>(TESSERA_OP("le.Tensor_out"));
  lib.impl<&GtOut>(TESSERA_OP("gt.Tensor_out"));
  lib.impl<&GeOut>(TESSERA_OP("ge.Tensor_out"));
  lib.impl<&EqScalarOut>(TESSERA_OP("eq.Scalar_out"));
  lib.impl<&NeScalarOut>(TESSERA_OP("ne.Scalar_out"));
  lib.impl<&LtScalarOut>(TESSERA_OP("lt.Scalar_out"));
  lib.impl<&LeScalarOut>(TESSERA_OP("le.Scalar_out"));
  lib.impl<&GtScalarOut>(TESSERA_OP("gt.Scalar_out"));
  lib.impl<&GeScalarOut>(TESSERA_OP("ge.Scalar_out"));
  lib.impl<&LogicalAndOut>(TESSERA_OP("logical_and.out"));
  lib.impl<&LogicalOrOut>(TESSERA_OP("logical_or.out"));
  lib.impl<&LogicalXorOut>(TESSERA_OP("logical_xor.out"));
  lib.impl<&BitwiseAndOut>(TESSERA_OP("bitwise_and.Tensor_out"));
  lib.impl<&BitwiseOrOut>(TESSERA_OP("bitwise_or.Tensor_out"));
  lib.impl<&BitwiseXorOut>(TESSERA_OP("bitwise_xor.Tensor_out"));
  lib.impl<&BitwiseAndScalarOut>(TESSERA_OP("bitwise_and.Scalar_out"));
  lib.impl<&BitwiseOrScalarOut>(TESSERA_OP("bitwise_or.Scalar_out"));
  lib.impl<&BitwiseXorScalarOut>(TESSERA_OP("bitwise_xor.Scalar_out"));
  lib.impl<&MaximumOut>(TESSERA_OP("maximum.out"));
  lib.impl<&MinimumOut>(TESSERA_OP("minimum.out"));
  lib.impl<&RemainderOut>(TESSERA_OP("remainder.Tensor_out"));
  lib.impl<&RemainderScalarOut>(TESSERA_OP("remainder.Scalar_out"));
  lib.impl<&FmodOut>(TESSERA_OP("fmod.Tensor_out"));
  lib.impl<&FmodScalarOut>(TESSERA_OP("fmod.Scalar_out"));
  lib.impl<&DivModeOut>(TESSERA_OP("div.out_mode"));
  lib.impl<&PowTensorOut>(TESSERA_OP("pow.Tensor_Tensor_out"));
  lib.impl<&PowTensorScalarOut>(TESSERA_OP("pow.Tensor_Scalar_out"));
  lib.impl<&PowScalarOut>(TESSERA_OP("pow.Scalar_out"));
  lib.impl<&Atan2Out>(TESSERA_OP("atan2.out"));
  lib.impl<&CopysignOut>(TESSERA_OP("copysign.out"));
  lib.impl<&CopysignScalarOut>(TESSERA_OP("copysign.Scalar_out"));
  lib.impl<&HypotOut>(TESSERA_OP("hypot.out"));
  lib.impl<&NextafterOut>(TESSERA_OP("nextafter.out"));
  lib.impl<&LogaddexpOut>(TESSERA_OP("logaddexp.out"));
  lib.impl<&Logaddexp2Out>(TESSERA_OP("logaddexp2.out"));
  lib.impl<&XlogyOut>(TESSERA_OP("xlogy.OutTensor"));
  lib.impl<&XlogyScalarOtherOut>(TESSERA_OP("xlogy.OutScalar_Other"));
  lib.impl<&ScalarSelfOut<K::kXlogy>>(TESSERA_OP("xlogy.OutScalar_Self"));
  lib.impl<&FmaxOut>(TESSERA_OP("fmax.out"));
  lib.impl<&FminOut>(TESSERA_OP("fmin.out"));
  lib.impl<&HeavisideOut>(TESSERA_OP("heaviside.out"));
  lib.impl<&GcdOut>(TESSERA_OP("gcd.out"));
  lib.impl<&LcmOut>(TESSERA_OP("lcm.out"));
  lib.impl<&ShiftLeftOut>(TESSERA_OP("bitwise_left_shift.Tensor_out"));
  lib.impl<&ShiftLeftScalarOut>(TESSERA_OP("bitwise_left_shift.Tensor_Scalar_out"));
  lib.impl<&ScalarSelfOut<K::kShiftLeft>>(TESSERA_OP("bitwise_left_shift.Scalar_Tensor_out"));
  lib.impl<&ShiftRightOut>(TESSERA_OP("bitwise_right_shift.Tensor_out"));
  lib.impl<&ShiftRightScalarOut>(TESSERA_OP("bitwise_right_shift.Tensor_Scalar_out"));
  lib.impl<&ScalarSelfOut<K::kShiftRight>>(TESSERA_OP("bitwise_right_shift.Scalar_Tensor_out"));
  lib.impl<&WhereOut>(TESSERA_OP("where.self_out"));
  lib.impl<&MaskedFillOut>(TESSERA_OP("masked_fill.Scalar_out"));
  lib.impl<&ClampOut>(TESSERA_OP("clamp.out"));
  lib.impl<&ClampTensorOut>(TESSERA_OP("clamp.Tensor_out"));
  lib.impl<&AddcOut<gpu::PointwiseKind::kAddcmul>>(TESSERA_OP("addcmul.out"));
  lib.impl<&AddcOut<gpu::PointwiseKind::kAddcdiv>>(TESSERA_OP("addcdiv.out"));
  lib.impl<&LerpScalarOut>(TESSERA_OP("lerp.Scalar_out"));
  lib.impl<&LerpTensorOut>(TESSERA_OP("lerp.Tensor_out"));
  lib.impl<&exp2Out>(TESSERA_OP("exp2.out"));
  lib.impl<&expm1Out>(TESSERA_OP("expm1.out"));
  lib.impl<&log2Out>(TESSERA_OP("log2.out"));
  lib.impl<&log10Out>(TESSERA_OP("log10.out"));
  lib.impl<&log1pOut>(TESSERA_OP("log1p.out"));
  lib.impl<&tanOut>(TESSERA_OP("tan.out"));
  lib.impl<&asinOut>(TESSERA_OP("asin.out"));
  lib.impl<&acosOut>(TESSERA_OP("acos.out"));
  lib.impl<&atanOut>(TESSERA_OP("atan.out"));
  lib.impl<&sinhOut>(TESSERA_OP("sinh.out"));
  lib.impl<&coshOut>(TESSERA_OP("cosh.out"));
  lib.impl<&erfOut>(TESSERA_OP("erf.out"));
  lib.impl<&siluOut>(TESSERA_OP("silu.out"));
  lib.impl<&GeluOut>(TESSERA_OP("gelu.out"));
  lib.impl<&floorOut>(TESSERA_OP("floor.out"));
  lib.impl<&ceilOut>(TESSERA_OP("ceil.out"));
  lib.impl<&roundOut>(TESSERA_OP("round.out"));
  lib.impl<&RoundDecimalsOut>(TESSERA_OP("round.decimals_out"));
  lib.impl<&truncOut>(TESSERA_OP("trunc.out"));
  lib.impl<&signOut>(TESSERA_OP("sign.out"));
  lib.impl<&bitwise_notOut>(TESSERA_OP("bitwise_not.out"));
  lib.impl<&isnanOut>(TESSERA_OP("isnan.out"));
  lib.impl<&isinfOut>(TESSERA_OP("isinf.out"));
  lib.impl<&isfiniteOut>(TESSERA_OP("isfinite.out"));
  lib.impl<&logical_notOut>(TESSERA_OP("logical_not.out"));
  lib.impl<&fracOut>(TESSERA_OP("frac.out"));
  lib.impl<&sgnOut>(TESSERA_OP("sgn.out"));
  lib.impl<&signbitOut>(TESSERA_OP("signbit.out"));
  lib.impl<&deg2radOut>(TESSERA_OP("deg2rad.out"));
  lib.impl<&rad2degOut>(TESSERA_OP("rad2deg.out"));
  lib.impl<&erfcOut>(TESSERA_OP("erfc.out"));
  lib.impl<&erfinvOut>(TESSERA_OP("erfinv.out"));
  lib.impl<&lgammaOut>(TESSERA_OP("lgamma.out"));
  lib.impl<&digammaOut>(TESSERA_OP("digamma.out"));
  lib.impl<&i0Out>(TESSERA_OP("i0.out"));
  lib.impl<&sincOut>(TESSERA_OP("sinc.out"));
  lib.impl<&acoshOut>(TESSERA_OP("acosh.out"));
  lib.impl<&asinhOut>(TESSERA_OP("asinh.out"));
  lib.impl<&atanhOut>(TESSERA_OP("atanh.out"));
  lib.impl<&LogitOut>(TESSERA_OP("logit.out"));
  lib.impl<&PolygammaOut>(TESSERA_OP("polygamma.out"));
  lib.impl<&NanToNumOut>(TESSERA_OP("nan_to_num.out"));
  lib.impl<&Copy>(TESSERA_OP("copy_"));
  lib.impl<&Fill>(TESSERA_OP("fill_.Scalar"));
}

}  // namespace gpu
}  // namespace tessera

// libtessera_cuda.so and libtessera_hip.so: the GPU backends, one source for both (the HIP build
// defines TESSERA_GPU_HIP; gpu_runtime.h maps the runtime API). A plugin like any other: the
// SDK and the C ABI headers, one exported symbol. Its first kernels are the elementwise
// arithmetic ops (out= forms; the runtime derives the functional and in-place forms), copy_
// and fill_, on the GPU elementwise iterator (Note [GPU elementwise iterator]); every other op
// runs on the CPU fallback, which conformance reports as such. docs/gpu_backends.md.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "blas.h"
#include "gpu_device.h"
#include "index_ops.h"
#include "kernels.h"
#include "nn_ops.h"
#include "plugin_shared.h"
#include "scan_reduce_ops.h"
#include "tessera/sdk/plugin.hpp"
#include "tessera/sdk/promotion.hpp"
#include "tessera/sdk/stream.hpp"

#if !defined(TESSERA_GPU_HIP) && __has_include(<cublas_api.h>)
// blas.h declares cuBLAS's types itself (the HIP build and the host tests have no header); here
// they are checked against the toolkit's.
#include <cublas_api.h>
#define TESSERA_GPU_SAME_VALUE(real, ours) \
  static_assert(static_cast<int>(real) == static_cast<int>(tessera::gpu::ours), #real)
TESSERA_GPU_SAME_VALUE(CUBLAS_STATUS_SUCCESS, kCublasStatusSuccess);
TESSERA_GPU_SAME_VALUE(CUBLAS_OP_N, kCublasOpN);
TESSERA_GPU_SAME_VALUE(CUBLAS_OP_T, kCublasOpT);
TESSERA_GPU_SAME_VALUE(CUDA_R_32F, kCudaR32F);
TESSERA_GPU_SAME_VALUE(CUDA_R_64F, kCudaR64F);
TESSERA_GPU_SAME_VALUE(CUDA_R_16F, kCudaR16F);
TESSERA_GPU_SAME_VALUE(CUDA_R_16BF, kCudaR16BF);
TESSERA_GPU_SAME_VALUE(CUBLAS_COMPUTE_32F, kCublasCompute32F);
TESSERA_GPU_SAME_VALUE(CUBLAS_COMPUTE_64F, kCublasCompute64F);
TESSERA_GPU_SAME_VALUE(CUBLAS_GEMM_DEFAULT, kCublasGemmDefault);
#undef TESSERA_GPU_SAME_VALUE
static_assert(sizeof(cublasStatus_t) == sizeof(int) && sizeof(cublasOperation_t) == sizeof(int) &&
              sizeof(cudaDataType) == sizeof(int) && sizeof(cublasComputeType_t) == sizeof(int) &&
              sizeof(cublasGemmAlgo_t) == sizeof(int));
static_assert(sizeof(cublasHandle_t) == sizeof(tessera::gpu::cublas_handle));
#endif

#ifndef TESSERA_GPU_PLUGIN_VERSION
#define TESSERA_GPU_PLUGIN_VERSION "0.0.0"
#endif

namespace tessera {
namespace gpu {
namespace {

namespace sdk = ::tessera::sdk;
using sdk::Scalar;
using sdk::Tensor;

ConstantValue ValueOf(const Scalar& s) {
  ConstantValue v;
  v.kind = s.c.kind == TSR_SCALAR_DOUBLE ? ConstantValue::kDouble
           : s.c.kind == TSR_SCALAR_BOOL ? ConstantValue::kBool
                                         : ConstantValue::kInt;
  v.i = s.c.i;
  v.d = s.c.d;
  return v;
}

// The value of a 0-dim CPU tensor, read from host memory.
ConstantValue ValueOfHost(const Tensor& t) {
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

// An operand from a tensor argument: memory of the call's device, or a 0-dim CPU tensor, which
// PyTorch lets join any device's op and which travels as a constant.
OperandSpec TensorOperand(const char* op, const Tensor& t, const char* arg) {
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

ElementwisePlan Plan(const char* op, const Tensor& out, std::vector<OperandSpec> operands) {
  operands.insert(operands.begin(), TensorOperand(op, out, "out"));
  ElementwisePlan plan;
  std::string error;
  if (!MakeElementwisePlan(out.sizes().vec(), operands, &plan, &error)) {
    sdk::fail(TSR_UNIMPLEMENTED, std::string(op) + ": " + error);
  }
  return plan;
}

void RunBinary(const char* op, BinaryKind kind, int32_t compute, const Tensor& out, OperandSpec a,
               OperandSpec b, const ConstantValue& alpha) {
  RequireDtype(op, compute, BinaryDtypes(kind));
  const ElementwisePlan plan = Plan(op, out, {std::move(a), std::move(b)});
  if (plan.chunks.empty()) return;
  DeviceGuard guard(out.device().index);
  Check(op, LaunchBinary(kind, compute, plan, alpha, sdk::current_stream(out.device())));
}

void RunUnary(const char* op, UnaryKind kind, int32_t compute, const Tensor& out, OperandSpec a) {
  RequireDtype(op, compute, UnaryDtypes(kind));
  const ElementwisePlan plan = Plan(op, out, {std::move(a)});
  if (plan.chunks.empty()) return;
  DeviceGuard guard(out.device().index);
  Check(op, LaunchUnary(kind, compute, plan, sdk::current_stream(out.device())));
}

// alpha of add/sub, checked as PyTorch (and the CPU plugin) do.
ConstantValue Alpha(const char* op, const Scalar& alpha, int32_t compute) {
  if (sdk::is_integral(static_cast<tsr_dtype>(compute), true) &&
      alpha.c.kind == TSR_SCALAR_DOUBLE) {
    sdk::fail(TSR_INVALID_ARGUMENT,
              std::string(op) +
                  ": for integral input tensors, argument alpha must not be a floating point "
                  "number");
  }
  if (compute != TSR_DTYPE_BOOL && alpha.c.kind == TSR_SCALAR_BOOL) {
    sdk::fail(TSR_INVALID_ARGUMENT,
              std::string(op) + ": boolean alpha only supported for boolean results");
  }
  return ValueOf(alpha);
}

int32_t Promoted(const Tensor& a, const Tensor& b) { return sdk::ResultType().add(a).add(b).get(); }
int32_t Promoted(const Tensor& a, const Scalar& b) { return sdk::ResultType().add(a).add(b).get(); }
// True division computes in a floating dtype: integers and bool as float32.
int32_t FloatOf(int32_t promoted) {
  return sdk::is_floating(static_cast<tsr_dtype>(promoted)) ? promoted : TSR_DTYPE_FLOAT32;
}

// --- binary ops: add.out, sub.out, mul.out, div.out and their Scalar_out forms ---------------

Tensor AddOut(const Tensor& self, const Tensor& other, Scalar alpha, const Tensor& out) {
  const int32_t c = Promoted(self, other);
  RunBinary("add.out", BinaryKind::kAdd, c, out, TensorOperand("add.out", self, "self"),
            TensorOperand("add.out", other, "other"), Alpha("add.out", alpha, c));
  return out;
}
Tensor AddScalarOut(const Tensor& self, Scalar other, Scalar alpha, const Tensor& out) {
  const int32_t c = Promoted(self, other);
  RunBinary("add.Scalar_out", BinaryKind::kAdd, c, out,
            TensorOperand("add.Scalar_out", self, "self"), ScalarOperand(other, c),
            Alpha("add.Scalar_out", alpha, c));
  return out;
}
Tensor SubOut(const Tensor& self, const Tensor& other, Scalar alpha, const Tensor& out) {
  const int32_t c = Promoted(self, other);
  RunBinary("sub.out", BinaryKind::kSub, c, out, TensorOperand("sub.out", self, "self"),
            TensorOperand("sub.out", other, "other"), Alpha("sub.out", alpha, c));
  return out;
}
Tensor SubScalarOut(const Tensor& self, Scalar other, Scalar alpha, const Tensor& out) {
  const int32_t c = Promoted(self, other);
  RunBinary("sub.Scalar_out", BinaryKind::kSub, c, out,
            TensorOperand("sub.Scalar_out", self, "self"), ScalarOperand(other, c),
            Alpha("sub.Scalar_out", alpha, c));
  return out;
}
Tensor MulOut(const Tensor& self, const Tensor& other, const Tensor& out) {
  RunBinary("mul.out", BinaryKind::kMul, Promoted(self, other), out,
            TensorOperand("mul.out", self, "self"), TensorOperand("mul.out", other, "other"),
            ConstantValue());
  return out;
}
Tensor MulScalarOut(const Tensor& self, Scalar other, const Tensor& out) {
  const int32_t c = Promoted(self, other);
  RunBinary("mul.Scalar_out", BinaryKind::kMul, c, out,
            TensorOperand("mul.Scalar_out", self, "self"), ScalarOperand(other, c),
            ConstantValue());
  return out;
}
Tensor DivOut(const Tensor& self, const Tensor& other, const Tensor& out) {
  RunBinary("div.out", BinaryKind::kDiv, FloatOf(Promoted(self, other)), out,
            TensorOperand("div.out", self, "self"), TensorOperand("div.out", other, "other"),
            ConstantValue());
  return out;
}
Tensor DivScalarOut(const Tensor& self, Scalar other, const Tensor& out) {
  const int32_t c = FloatOf(Promoted(self, other));
  RunBinary("div.Scalar_out", BinaryKind::kDiv, c, out,
            TensorOperand("div.Scalar_out", self, "self"), ScalarOperand(other, c),
            ConstantValue());
  return out;
}

// --- unary ops ------------------------------------------------------------------------------

// Same: computes in the input's dtype (neg, abs, relu). Float: in a floating dtype, integers
// and bool as float32 (exp, sqrt, ...).
template <UnaryKind kKind, bool kFloat>
Tensor UnaryOut(const char* op, const Tensor& self, const Tensor& out) {
  const int32_t compute = kFloat ? FloatOf(self.dtype()) : self.dtype();
  RunUnary(op, kKind, compute, out, TensorOperand(op, self, "self"));
  return out;
}

#define TESSERA_GPU_UNARY(NAME, KIND, FLOAT)                          \
  Tensor NAME##Out(const Tensor& self, const Tensor& out) {           \
    return UnaryOut<UnaryKind::KIND, FLOAT>(#NAME ".out", self, out); \
  }
TESSERA_GPU_UNARY(neg, kNeg, false)
TESSERA_GPU_UNARY(abs, kAbs, false)
TESSERA_GPU_UNARY(relu, kRelu, false)
TESSERA_GPU_UNARY(exp, kExp, true)
TESSERA_GPU_UNARY(log, kLog, true)
TESSERA_GPU_UNARY(sqrt, kSqrt, true)
TESSERA_GPU_UNARY(rsqrt, kRsqrt, true)
TESSERA_GPU_UNARY(sin, kSin, true)
TESSERA_GPU_UNARY(cos, kCos, true)
TESSERA_GPU_UNARY(tanh, kTanh, true)
TESSERA_GPU_UNARY(sigmoid, kSigmoid, true)
TESSERA_GPU_UNARY(reciprocal, kReciprocal, true)
#undef TESSERA_GPU_UNARY

// --- the other pointwise ops (pointwise_ops.h, kernels_pointwise.cu) ------------------------

using K = PointwiseKind;

// RunPointwise checks the compute dtype against `supported` (by default the kind's own set),
// plans `inputs` against `out` and launches.
void RunPointwise(const char* op, PointwiseKind kind, int32_t compute, const Tensor& out,
                  std::vector<OperandSpec> inputs, const PointwiseParams& params = {},
                  uint32_t supported = 0) {
  if (supported == 0) supported = PointwiseDtypes(kind);
  supported &= PointwiseDtypes(kind);
  RequireDtype(op, compute, supported);
  const ElementwisePlan plan = Plan(op, out, std::move(inputs));
  if (plan.chunks.empty()) return;
  DeviceGuard guard(out.device().index);
  Check(op, LaunchPointwise(kind, compute, plan, params, sdk::current_stream(out.device())));
}

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
  static Tensor TensorOut(const char* op, const Tensor& self, const Tensor& other,
                          const Tensor& out) {
    const int32_t c = Promoted(self, other);
    OperandSpec b = TensorOperand(op, other, "other");
    if (kKind >= K::kRemainder && kKind <= K::kDivFloor) CheckDivisor(op, c, b);
    RunPointwise(op, kKind, c, out, {TensorOperand(op, self, "self"), std::move(b)});
    return out;
  }
  static Tensor ScalarOut(const char* op, const Tensor& self, const Scalar& other,
                          const Tensor& out) {
    const int32_t c = Promoted(self, other);
    OperandSpec b = ScalarOperand(other, c);
    if (kKind >= K::kRemainder && kKind <= K::kDivFloor) CheckDivisor(op, c, b);
    RunPointwise(op, kKind, c, out, {TensorOperand(op, self, "self"), std::move(b)});
    return out;
  }
};

#define TESSERA_GPU_BINARY_TENSOR(FN, OP, KIND)                           \
  Tensor FN(const Tensor& self, const Tensor& other, const Tensor& out) { \
    return BinaryOp<K::KIND>::TensorOut(OP, self, other, out);            \
  }
#define TESSERA_GPU_BINARY_SCALAR(FN, OP, KIND)                    \
  Tensor FN(const Tensor& self, Scalar other, const Tensor& out) { \
    return BinaryOp<K::KIND>::ScalarOut(OP, self, other, out);     \
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
#undef TESSERA_GPU_BINARY_TENSOR
#undef TESSERA_GPU_BINARY_SCALAR

Tensor Atan2Out(const Tensor& self, const Tensor& other, const Tensor& out) {
  RunPointwise(
      "atan2.out", K::kAtan2, FloatOf(Promoted(self, other)), out,
      {TensorOperand("atan2.out", self, "self"), TensorOperand("atan2.out", other, "other")});
  return out;
}

// div.out_mode(Tensor self, Tensor other, *, str? rounding_mode, Tensor(a!) out)
Tensor DivModeOut(const Tensor& self, const Tensor& other,
                  std::optional<std::string_view> rounding_mode, const Tensor& out) {
  const char* op = "div.out_mode";
  if (!rounding_mode) return DivOut(self, other, out);
  if (*rounding_mode != "trunc" && *rounding_mode != "floor") {
    sdk::fail(TSR_INVALID_ARGUMENT,
              std::string(op) + ": expected rounding_mode to be None, 'trunc' or 'floor', got '" +
                  std::string(*rounding_mode) + "'");
  }
  if (*rounding_mode == "trunc") return BinaryOp<K::kDivTrunc>::TensorOut(op, self, other, out);
  return BinaryOp<K::kDivFloor>::TensorOut(op, self, other, out);
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
Tensor PowTensorScalarOut(const Tensor& self, Scalar exponent, const Tensor& out) {
  const char* op = "pow.Tensor_Scalar_out";
  if (sdk::is_integral(self.dtype(), true) && exponent.c.kind == TSR_SCALAR_INT &&
      exponent.c.i < 0) {
    sdk::fail(TSR_INVALID_ARGUMENT,
              std::string(op) + ": integers to negative integer powers are not allowed");
  }
  const int32_t c = Promoted(self, exponent);
  PointwiseParams params;
  params.pow = PowModeOf(exponent, c);
  RunPointwise(op, K::kPow, c, out, {TensorOperand(op, self, "self"), ScalarOperand(exponent, c)},
               params);
  return out;
}

// pow.Scalar_out(Scalar self, Tensor exponent, *, Tensor(a!) out): a Scalar base.
Tensor PowScalarOut(Scalar self, const Tensor& exponent, const Tensor& out) {
  const char* op = "pow.Scalar_out";
  const int32_t c = sdk::ResultType().add(self).add(exponent).get();
  RunPointwise(op, K::kPow, c, out,
               {ScalarOperand(self, c), TensorOperand(op, exponent, "exponent")});
  return out;
}

// where.self_out(Tensor condition, Tensor self, Tensor other, *, Tensor(a!) out)
Tensor WhereOut(const Tensor& condition, const Tensor& self, const Tensor& other,
                const Tensor& out) {
  const char* op = "where.self_out";
  RunPointwise(op, K::kWhere, Promoted(self, other), out,
               {TensorOperand(op, condition, "condition"), TensorOperand(op, self, "self"),
                TensorOperand(op, other, "other")});
  return out;
}

// masked_fill.Scalar_out(Tensor self, Tensor mask, Scalar value, *, Tensor(a!) out): where(mask,
// value, self) in self's dtype.
Tensor MaskedFillOut(const Tensor& self, const Tensor& mask, Scalar value, const Tensor& out) {
  const char* op = "masked_fill.Scalar_out";
  const int32_t c = self.dtype();
  RunPointwise(
      op, K::kWhere, c, out,
      {TensorOperand(op, mask, "mask"), ScalarOperand(value, c), TensorOperand(op, self, "self")});
  return out;
}

// clamp with at most two bounds: both as ClampOp, one as maximum (min) or minimum (max), whose
// NaN rule is clamp's; computed in clamp's dtypes (no bool).
void Clamp(const char* op, int32_t compute, const Tensor& out, OperandSpec self,
           std::optional<OperandSpec> lo, std::optional<OperandSpec> hi) {
  const uint32_t dtypes = PointwiseDtypes(K::kClamp);
  if (lo && hi) {
    RunPointwise(op, K::kClamp, compute, out, {std::move(self), std::move(*lo), std::move(*hi)});
  } else if (lo) {
    RunPointwise(op, K::kMaximum, compute, out, {std::move(self), std::move(*lo)}, {}, dtypes);
  } else if (hi) {
    RunPointwise(op, K::kMinimum, compute, out, {std::move(self), std::move(*hi)}, {}, dtypes);
  } else {
    sdk::fail(TSR_INVALID_ARGUMENT,
              std::string(op) + ": at least one of 'min' or 'max' must not be None");
  }
}

// clamp.out(Tensor self, Scalar? min=None, Scalar? max=None, *, Tensor(a!) out)
Tensor ClampOut(const Tensor& self, std::optional<Scalar> min, std::optional<Scalar> max,
                const Tensor& out) {
  const char* op = "clamp.out";
  sdk::ResultType rt;
  rt.add(self);
  if (min) rt.add(*min);
  if (max) rt.add(*max);
  const int32_t c = rt.get();
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
Tensor ClampTensorOut(const Tensor& self, std::optional<Tensor> min, std::optional<Tensor> max,
                      const Tensor& out) {
  const char* op = "clamp.Tensor_out";
  sdk::ResultType rt;
  rt.add(self);
  if (min) rt.add(*min);
  if (max) rt.add(*max);
  std::optional<OperandSpec> lo, hi;
  if (min) lo = TensorOperand(op, *min, "min");
  if (max) hi = TensorOperand(op, *max, "max");
  Clamp(op, rt.get(), out, TensorOperand(op, self, "self"), std::move(lo), std::move(hi));
  return out;
}

// addcmul.out / addcdiv.out(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1,
// Tensor(a!) out)
template <PointwiseKind kKind>
Tensor AddcOut(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, Scalar value,
               const Tensor& out) {
  const char* op = kKind == K::kAddcdiv ? "addcdiv.out" : "addcmul.out";
  const int32_t c = sdk::ResultType().add(self).add(tensor1).add(tensor2).get();
  if (kKind == K::kAddcdiv && sdk::is_integral(static_cast<tsr_dtype>(c), true)) {
    sdk::fail(TSR_INVALID_ARGUMENT, std::string(op) +
                                        ": integer division with addcdiv is not supported; "
                                        "use true division (floating point inputs) instead");
  }
  PointwiseParams params;
  params.value = ValueOf(value);
  RunPointwise(op, kKind, c, out,
               {TensorOperand(op, self, "self"), TensorOperand(op, tensor1, "tensor1"),
                TensorOperand(op, tensor2, "tensor2")},
               params);
  return out;
}

// lerp.Scalar_out(Tensor self, Tensor end, Scalar weight, *, Tensor(a!) out)
Tensor LerpScalarOut(const Tensor& self, const Tensor& end, Scalar weight, const Tensor& out) {
  const char* op = "lerp.Scalar_out";
  const int32_t c = Promoted(self, end);
  RunPointwise(
      op, K::kLerp, c, out,
      {TensorOperand(op, self, "self"), TensorOperand(op, end, "end"), ScalarOperand(weight, c)});
  return out;
}

// lerp.Tensor_out(Tensor self, Tensor end, Tensor weight, *, Tensor(a!) out)
Tensor LerpTensorOut(const Tensor& self, const Tensor& end, const Tensor& weight,
                     const Tensor& out) {
  const char* op = "lerp.Tensor_out";
  RunPointwise(op, K::kLerp, sdk::ResultType().add(self).add(end).add(weight).get(), out,
               {TensorOperand(op, self, "self"), TensorOperand(op, end, "end"),
                TensorOperand(op, weight, "weight")});
  return out;
}

// Unary: kFloat computes integers and bool as float32 (exp2), otherwise in the input's dtype.
template <PointwiseKind kKind, bool kFloat>
Tensor PointwiseUnaryOut(const char* op, const Tensor& self, const Tensor& out,
                         const PointwiseParams& params = {}) {
  const int32_t compute = kFloat ? FloatOf(self.dtype()) : self.dtype();
  RunPointwise(op, kKind, compute, out, {TensorOperand(op, self, "self")}, params);
  return out;
}

#define TESSERA_GPU_POINTWISE_UNARY(NAME, KIND, FLOAT)                 \
  Tensor NAME##Out(const Tensor& self, const Tensor& out) {            \
    return PointwiseUnaryOut<K::KIND, FLOAT>(#NAME ".out", self, out); \
  }
TESSERA_GPU_POINTWISE_UNARY(exp2, kExp2, true)
TESSERA_GPU_POINTWISE_UNARY(expm1, kExpm1, true)
TESSERA_GPU_POINTWISE_UNARY(log2, kLog2, true)
TESSERA_GPU_POINTWISE_UNARY(log10, kLog10, true)
TESSERA_GPU_POINTWISE_UNARY(log1p, kLog1p, true)
TESSERA_GPU_POINTWISE_UNARY(tan, kTan, true)
TESSERA_GPU_POINTWISE_UNARY(asin, kAsin, true)
TESSERA_GPU_POINTWISE_UNARY(acos, kAcos, true)
TESSERA_GPU_POINTWISE_UNARY(atan, kAtan, true)
TESSERA_GPU_POINTWISE_UNARY(sinh, kSinh, true)
TESSERA_GPU_POINTWISE_UNARY(cosh, kCosh, true)
TESSERA_GPU_POINTWISE_UNARY(erf, kErf, true)
TESSERA_GPU_POINTWISE_UNARY(silu, kSilu, false)
TESSERA_GPU_POINTWISE_UNARY(floor, kFloor, false)
TESSERA_GPU_POINTWISE_UNARY(ceil, kCeil, false)
TESSERA_GPU_POINTWISE_UNARY(round, kRound, false)
TESSERA_GPU_POINTWISE_UNARY(trunc, kTrunc, false)
TESSERA_GPU_POINTWISE_UNARY(sign, kSign, false)
TESSERA_GPU_POINTWISE_UNARY(bitwise_not, kBitwiseNot, false)
TESSERA_GPU_POINTWISE_UNARY(isnan, kIsNan, false)
TESSERA_GPU_POINTWISE_UNARY(isinf, kIsInf, false)
TESSERA_GPU_POINTWISE_UNARY(isfinite, kIsFinite, false)
TESSERA_GPU_POINTWISE_UNARY(logical_not, kLogicalNot, false)
#undef TESSERA_GPU_POINTWISE_UNARY

// gelu.out(Tensor self, *, str approximate='none', Tensor(a!) out)
Tensor GeluOut(const Tensor& self, std::string_view approximate, const Tensor& out) {
  if (approximate == "none") return PointwiseUnaryOut<K::kGelu, false>("gelu.out", self, out);
  if (approximate == "tanh") return PointwiseUnaryOut<K::kGeluTanh, false>("gelu.out", self, out);
  sdk::fail(TSR_INVALID_ARGUMENT, "gelu.out: expected approximate to be 'none' or 'tanh', got '" +
                                      std::string(approximate) + "'");
}

// round.decimals_out(Tensor self, *, int decimals, Tensor(a!) out): floating dtypes only,
// whatever `decimals` (as PyTorch).
Tensor RoundDecimalsOut(const Tensor& self, int64_t decimals, const Tensor& out) {
  PointwiseParams params;
  params.decimals = decimals;
  return PointwiseUnaryOut<K::kRoundDecimals, false>("round.decimals_out", self, out, params);
}

// --- reductions and softmax (reduce.h, kernels_reduce.cu; Note [GPU reductions]) -----------

std::vector<int64_t> DimsOf(const std::optional<sdk::IntSpan>& dim) {
  return dim ? dim->vec() : std::vector<int64_t>{};
}

// sum / mean / prod: the input is read in the output's dtype (the meta function resolved
// `dtype` into it).
Tensor SumOut(const Tensor& self, std::optional<tsr_dtype> /*dtype: out's*/, const Tensor& out) {
  RunReduce("sum.out", ReduceKind::kSum, out.dtype(), self, out,
            ReducedDims("sum.out", self.dim(), {}), false);
  return out;
}
Tensor SumDimOut(const Tensor& self, std::optional<sdk::IntSpan> dim, bool keepdim,
                 std::optional<tsr_dtype> /*dtype: out's*/, const Tensor& out) {
  const char* op = "sum.IntList_out";
  RunReduce(op, ReduceKind::kSum, out.dtype(), self, out, ReducedDims(op, self.dim(), DimsOf(dim)),
            keepdim);
  return out;
}
Tensor MeanOut(const Tensor& self, std::optional<tsr_dtype> /*dtype: out's*/, const Tensor& out) {
  RunReduce("mean.dtype_out", ReduceKind::kMean, out.dtype(), self, out,
            ReducedDims("mean.dtype_out", self.dim(), {}), false);
  return out;
}
Tensor MeanDimOut(const Tensor& self, std::optional<sdk::IntSpan> dim, bool keepdim,
                  std::optional<tsr_dtype> /*dtype: out's*/, const Tensor& out) {
  const char* op = "mean.out";
  RunReduce(op, ReduceKind::kMean, out.dtype(), self, out, ReducedDims(op, self.dim(), DimsOf(dim)),
            keepdim);
  return out;
}
Tensor ProdOut(const Tensor& self, std::optional<tsr_dtype> /*dtype: out's*/, const Tensor& out) {
  RunReduce("prod.out", ReduceKind::kProd, out.dtype(), self, out,
            ReducedDims("prod.out", self.dim(), {}), false);
  return out;
}
Tensor ProdDimOut(const Tensor& self, int64_t dim, bool keepdim,
                  std::optional<tsr_dtype> /*dtype: out's*/, const Tensor& out) {
  const char* op = "prod.int_out";
  RunReduce(op, ReduceKind::kProd, out.dtype(), self, out, ReducedDims(op, self.dim(), {dim}),
            keepdim);
  return out;
}

// amax.out / amin.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out)
template <bool kMax>
Tensor AmaxOut(const Tensor& self, sdk::IntSpan dim, bool keepdim, const Tensor& out) {
  const char* op = kMax ? "amax.out" : "amin.out";
  RunReduce(op, kMax ? ReduceKind::kAmax : ReduceKind::kAmin, self.dtype(), self, out,
            ReducedDims(op, self.dim(), dim.vec()), keepdim);
  return out;
}

// argmax.out / argmin.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out):
// dim=None counts indices in the flattened input.
template <bool kMax>
Tensor ArgmaxOut(const Tensor& self, std::optional<int64_t> dim, bool keepdim, const Tensor& out) {
  const char* op = kMax ? "argmax.out" : "argmin.out";
  std::vector<int64_t> dims;
  if (dim) dims.push_back(*dim);
  RunReduce(op, kMax ? ReduceKind::kArgmax : ReduceKind::kArgmin, self.dtype(), self, out,
            ReducedDims(op, self.dim(), dims), keepdim);
  return out;
}

// var.correction_out / std.correction_out(Tensor self, int[1]? dim=None, *, Scalar?
// correction=None, bool keepdim=False, Tensor(a!) out)
template <bool kStd>
Tensor VarOut(const Tensor& self, std::optional<sdk::IntSpan> dim, std::optional<Scalar> correction,
              bool keepdim, const Tensor& out) {
  const char* op = kStd ? "std.correction_out" : "var.correction_out";
  RunReduce(op, kStd ? ReduceKind::kStd : ReduceKind::kVar, self.dtype(), self, out,
            ReducedDims(op, self.dim(), DimsOf(dim)), keepdim,
            correction ? correction->to_double() : 1.0);
  return out;
}

// _softmax.out / _log_softmax.out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out):
// computed in float (double for float64), written in out's dtype (float32 when half_to_float).
template <bool kLog>
Tensor SoftmaxOut(const Tensor& self, int64_t dim, bool /*half_to_float: out's dtype*/,
                  const Tensor& out) {
  const char* op = kLog ? "_log_softmax.out" : "_softmax.out";
  RunReduce(op, kLog ? ReduceKind::kLogSoftmax : ReduceKind::kSoftmax, self.dtype(), self, out,
            ReducedDims(op, self.dim(), {dim}), true);
  return out;
}

// --- matrix products (gemm.h, kernels_gemm.cu; Note [GPU tiled GEMM]) ----------------------

// The operands of a product: same dtype (the meta function has checked the shapes), a floating
// one, on the call's device.
void CheckProductOperands(const char* op, std::initializer_list<const Tensor*> operands,
                          const Tensor& out) {
  for (const Tensor* t : operands) {
    if (t->dtype() != out.dtype()) {
      sdk::fail(TSR_INVALID_ARGUMENT, std::string(op) + ": expected every operand of dtype " +
                                          sdk::dtype_name(out.dtype()) + " (the output's), got " +
                                          sdk::dtype_name(t->dtype()));
    }
    if (t->device().type == TSR_DEVICE_CPU) {
      sdk::fail(TSR_INVALID_ARGUMENT, std::string(op) + ": expected operands on " +
                                          TESSERA_GPU_PLUGIN_NAME + ", got a CPU tensor");
    }
  }
  RequireDtype(op, out.dtype(), kFloatingDtypes);
}

// The products' path (TESSERA_GPU_BLAS; blas.h, Note [cuBLAS at first use]).
#ifdef TESSERA_GPU_HIP
constexpr bool kHasBlas = false;
#else
constexpr bool kHasBlas = true;
#endif

// CheckBlasSetting: TESSERA_GPU_BLAS holds a known value ("" or an error naming it).
std::string CheckBlasSetting() {
  BlasMode mode;
  std::string error;
  return ParseBlasMode(std::getenv("TESSERA_GPU_BLAS"), kHasBlas, &mode, &error) ? "" : error;
}

Tensor Copy(const Tensor& self, const Tensor& src, bool non_blocking);

#ifndef TESSERA_GPU_HIP
// The products' library, loaded at the first product (TESSERA_GPU_BLAS=own never loads it).
struct BlasState {
  BlasMode mode = BlasMode::kAuto;
  bool loaded = false;
  BlasLibrary lib;
  std::string error;  // why it did not load
};

const BlasState& Blas() {
  static const BlasState state = [] {
    BlasState s;
    std::string error;
    if (!ParseBlasMode(std::getenv("TESSERA_GPU_BLAS"), true, &s.mode, &error)) {
      s.mode = BlasMode::kOwn;  // unreachable: the load refused the value
    }
    std::string message = TESSERA_GPU_PLUGIN_NAME ": matrix products on ";
    if (s.mode == BlasMode::kOwn) {
      message += "the tiled kernel (TESSERA_GPU_BLAS=own)";
    } else if ((s.loaded = LoadBlasLibrary(DefaultCublasNames(), &s.lib, &s.error))) {
      message += "cuBLAS (" + s.lib.path + ")";
    } else {
      message += "the tiled kernel: " + s.error;
    }
    sdk::api().log(TSR_LOG_INFO, sdk::to_c(message));
    return s;
  }();
  return state;
}

// One cuBLAS handle per (device, thread): a thread takes a device's handle from the pool at its
// first product there and gives it back when it ends. Handles are never destroyed (a process's
// end may come after the driver's), so there are at most as many as threads ever ran products
// at once.
struct BlasHandlePool {
  std::mutex mu;
  std::vector<std::vector<cublas_handle>> free;  // per device index
};

BlasHandlePool& HandlePool() {
  static BlasHandlePool* pool = new BlasHandlePool;  // leaked: outlives thread_local holders
  return *pool;
}

struct ThreadBlasHandles {
  std::vector<cublas_handle> by_device;
  ~ThreadBlasHandles() {
    BlasHandlePool& pool = HandlePool();
    std::lock_guard<std::mutex> lock(pool.mu);
    for (size_t d = 0; d < by_device.size(); ++d) {
      if (by_device[d] == nullptr) continue;
      if (pool.free.size() <= d) pool.free.resize(d + 1);
      pool.free[d].push_back(by_device[d]);
    }
  }
};

// The calling thread's handle on `device` (the current device, by the caller's guard).
cublas_handle BlasHandle(const char* op, const BlasLibrary& lib, int32_t device) {
  thread_local ThreadBlasHandles mine;
  const size_t d = static_cast<size_t>(device);
  if (mine.by_device.size() <= d) mine.by_device.resize(d + 1, nullptr);
  if (mine.by_device[d] != nullptr) return mine.by_device[d];
  BlasHandlePool& pool = HandlePool();
  {
    std::lock_guard<std::mutex> lock(pool.mu);
    if (pool.free.size() > d && !pool.free[d].empty()) {
      mine.by_device[d] = pool.free[d].back();
      pool.free[d].pop_back();
      return mine.by_device[d];
    }
  }
  cublas_handle h = nullptr;
  if (const cublas_status s = lib.create(&h); s != kCublasStatusSuccess) {
    sdk::fail(TSR_INTERNAL, std::string(op) + ": cublasCreate_v2 failed on " +
                                TESSERA_GPU_PLUGIN_NAME ":" + std::to_string(device) + ": " +
                                StatusText(lib, s));
  }
  return mine.by_device[d] = h;
}

// Strides of a contiguous tensor of `sizes`.
std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t i = sizes.size(); i-- > 1;) strides[i - 1] = strides[i] * sizes[i];
  return strides;
}

// RunOnCublas: the product on cuBLAS; false when it takes the tiled kernel (TESSERA_GPU_BLAS=own,
// no library in auto mode, or a problem cuBLAS is not given: PlanBlasGemm's kUseOwnKernel).
// self (addmm with beta != 0) is first copied into out, which cuBLAS scales by beta.
bool RunOnCublas(const char* op, GemmProblem p, const Tensor& a, const Tensor& b,
                 const Tensor* self, const Tensor& out, bool batched) {
  const BlasState& blas = Blas();
  if (blas.mode == BlasMode::kOwn) return false;
  if (!blas.loaded) {
    if (blas.mode == BlasMode::kAuto) return false;
    sdk::fail(TSR_FAILED_PRECONDITION,
              std::string(op) + ": TESSERA_GPU_BLAS=cublas but " + blas.error +
                  "; install cuBLAS 13 (libcublas.so.13) where the dynamic loader finds it "
                  "(LD_LIBRARY_PATH), or set TESSERA_GPU_BLAS=auto or own");
  }
  std::optional<Tensor> copies[2];
  BlasGemmCall call;
  std::string why;
  BlasPlan plan;
  while ((plan = PlanBlasGemm(out.dtype(), p, &call, &why)) == BlasPlan::kCopyA ||
         plan == BlasPlan::kCopyB) {
    // An operand with strides cuBLAS does not take: a contiguous copy (once each).
    const int i = plan == BlasPlan::kCopyA ? 0 : 1;
    if (copies[i]) return false;  // cannot happen: a contiguous operand always plans
    const Tensor& src = i == 0 ? a : b;
    copies[i] = Tensor::empty(src.sizes().vec(), src.dtype(), src.device());
    Copy(*copies[i], src, false);
    const std::vector<int64_t> st = ContiguousStrides(src.sizes().vec());
    const int o = batched ? 1 : 0;
    if (i == 0) {
      p.a = copies[i]->data_ptr();
      p.a_batch = batched ? st[0] : 0;
      p.a_row = st[o];
      p.a_col = st[o + 1];
    } else {
      p.b = copies[i]->data_ptr();
      p.b_batch = batched ? st[0] : 0;
      p.b_row = st[o];
      p.b_col = st[o + 1];
    }
  }
  if (plan == BlasPlan::kUseOwnKernel) return false;
  if (self != nullptr &&
      !(self->data_ptr() == out.data_ptr() && self->sizes().vec() == out.sizes().vec() &&
        self->strides().vec() == out.strides().vec())) {
    Copy(out, *self, false);  // self broadcast into out; cuBLAS adds alpha * A @ B to beta * out
  }
  DeviceGuard guard(out.device().index);
  const cublas_handle handle = BlasHandle(op, blas.lib, out.device().index);
  if (const cublas_status s = blas.lib.set_stream(handle, sdk::current_stream(out.device()));
      s != kCublasStatusSuccess) {
    sdk::fail(TSR_INTERNAL,
              std::string(op) + ": cublasSetStream_v2 failed: " + StatusText(blas.lib, s));
  }
  if (const std::string error = RunBlasGemm(blas.lib, handle, call); !error.empty()) {
    sdk::fail(TSR_INTERNAL, std::string(op) + ": " +
                                (call.batch == 1 ? "cublasGemmEx" : "cublasGemmStridedBatchedEx") +
                                " failed: " + error);
  }
  return true;
}
#endif

// RunGemm: C = beta * self + alpha * A @ B on cuBLAS (CUDA, where it can) or the tiled kernel.
// self is addmm's (beta != 0), null otherwise.
void RunGemm(const char* op, const GemmProblem& p, const Tensor& a, const Tensor& b,
             const Tensor* self, const Tensor& out, bool batched) {
  if (p.m == 0 || p.n == 0 || p.batch == 0) return;
#ifndef TESSERA_GPU_HIP
  if (RunOnCublas(op, p, a, b, self, out, batched)) return;
#endif
  uint32_t x, y, z;
  if (!GemmGrid(p, &x, &y, &z)) {
    sdk::fail(TSR_UNIMPLEMENTED,
              std::string(op) + ": a product of " + std::to_string(p.m) + " rows and " +
                  std::to_string(p.batch) +
                  " batches exceeds the GPU kernel's grid (65535 tiles of 16 rows, 65535 batches)");
  }
  DeviceGuard guard(out.device().index);
  Check(op, LaunchGemm(out.dtype(), p, sdk::current_stream(out.device())));
}

// Problem of self (M x K, or B x M x K) @ mat2 into out.
GemmProblem ProductOf(const Tensor& a, const Tensor& b, const Tensor& out, bool batched) {
  GemmProblem p;
  const int o = batched ? 1 : 0;
  p.a = a.data_ptr();
  p.b = b.data_ptr();
  p.c = out.data_ptr();
  p.batch = batched ? a.sizes()[0] : 1;
  p.m = a.sizes()[o];
  p.k = a.sizes()[o + 1];
  p.n = b.sizes()[o + 1];
  p.a_batch = batched ? a.strides()[0] : 0;
  p.a_row = a.strides()[o];
  p.a_col = a.strides()[o + 1];
  p.b_batch = batched ? b.strides()[0] : 0;
  p.b_row = b.strides()[o];
  p.b_col = b.strides()[o + 1];
  p.c_batch = batched ? out.strides()[0] : 0;
  p.c_row = out.strides()[o];
  p.c_col = out.strides()[o + 1];
  return p;
}

// mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out)
Tensor MmOut(const Tensor& self, const Tensor& mat2, const Tensor& out) {
  CheckProductOperands("mm.out", {&self, &mat2}, out);
  RunGemm("mm.out", ProductOf(self, mat2, out, false), self, mat2, nullptr, out, false);
  return out;
}

// bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out)
Tensor BmmOut(const Tensor& self, const Tensor& mat2, const Tensor& out) {
  CheckProductOperands("bmm.out", {&self, &mat2}, out);
  RunGemm("bmm.out", ProductOf(self, mat2, out, true), self, mat2, nullptr, out, true);
  return out;
}

// addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1,
// Tensor(a!) out): self broadcasts to [M, N]; beta = 0 ignores it (NaN included).
Tensor AddmmOut(const Tensor& self, const Tensor& mat1, const Tensor& mat2, Scalar beta,
                Scalar alpha, const Tensor& out) {
  const char* op = "addmm.out";
  CheckProductOperands(op, {&self, &mat1, &mat2}, out);
  GemmProblem p = ProductOf(mat1, mat2, out, false);
  p.alpha = alpha.to_double();
  p.beta = beta.to_double();
  if (p.beta != 0) {
    const std::vector<int64_t> sizes = self.sizes().vec(), strides = self.strides().vec();
    const size_t r = sizes.size();
    if (r > 2 || (r >= 1 && sizes[r - 1] != p.n && sizes[r - 1] != 1) ||
        (r == 2 && sizes[0] != p.m && sizes[0] != 1)) {
      sdk::fail(TSR_INVALID_ARGUMENT, std::string(op) + ": expected 'self' to broadcast to [" +
                                          std::to_string(p.m) + ", " + std::to_string(p.n) +
                                          "], got " + std::to_string(r) + " dimensions");
    }
    p.self = self.data_ptr();
    p.self_col = r >= 1 && sizes[r - 1] != 1 ? strides[r - 1] : 0;
    p.self_row = r == 2 && sizes[0] != 1 ? strides[0] : 0;
  }
  RunGemm(op, p, mat1, mat2, p.beta != 0 ? &self : nullptr, out, false);
  return out;
}

// --- copy_ and fill_ ------------------------------------------------------------------------

// copy_ on one device (the runtime moves data between devices itself): any dtype to any
// dtype, src broadcast to self. A dense copy of equal dtypes and layouts is one memcpy on the
// current stream.
Tensor Copy(const Tensor& self, const Tensor& src, bool /*non_blocking: always queued*/) {
  if (self.numel() == 0) return self;
  const bool same_layout = src.device().type != TSR_DEVICE_CPU && self.dtype() == src.dtype() &&
                           self.is_contiguous() && src.is_contiguous() &&
                           self.sizes().vec() == src.sizes().vec();
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

Tensor Fill(const Tensor& self, Scalar value) {
  RunUnary("fill_.Scalar", UnaryKind::kIdentity, self.dtype(), self,
           ScalarOperand(value, self.dtype()));
  return self;
}

}  // namespace
}  // namespace gpu
}  // namespace tessera

namespace gpu = ::tessera::gpu;

TESSERA_PLUGIN(lib) {
  lib.describe(TESSERA_GPU_PLUGIN_NAME, TESSERA_GPU_PLUGIN_VERSION, TESSERA_GPU_DEVICE_TYPE, "");
  if (const std::string error = gpu::CheckAllocatorSetting(); !error.empty()) {
    tessera::sdk::fail(TSR_INVALID_ARGUMENT, error);  // refuses the load, with the reason
  }
  if (const std::string error = gpu::CheckBlasSetting(); !error.empty()) {
    tessera::sdk::fail(TSR_INVALID_ARGUMENT, error);
  }
  static const bool logged = [] {  // once, though the block runs at init and at registration
    std::string why;
    if (gpu::DeviceCount(&why) == 0) {
      // The plugin still registers its device (with 0 devices) and kernels: the load report
      // says "devices: 0", and tensors on the device are refused as not existing.
      const std::string message = std::string(TESSERA_GPU_PLUGIN_NAME ": no devices (") + why + ")";
      tessera::sdk::api().log(TSR_LOG_INFO, tessera::sdk::to_c(message));
    }
    return true;
  }();
  (void)logged;
  lib.device(gpu::DeviceInterface());
  lib.impl<&gpu::AddOut>(TESSERA_OP("add.out"));
  lib.impl<&gpu::AddScalarOut>(TESSERA_OP("add.Scalar_out"));
  lib.impl<&gpu::SubOut>(TESSERA_OP("sub.out"));
  lib.impl<&gpu::SubScalarOut>(TESSERA_OP("sub.Scalar_out"));
  lib.impl<&gpu::MulOut>(TESSERA_OP("mul.out"));
  lib.impl<&gpu::MulScalarOut>(TESSERA_OP("mul.Scalar_out"));
  lib.impl<&gpu::DivOut>(TESSERA_OP("div.out"));
  lib.impl<&gpu::DivScalarOut>(TESSERA_OP("div.Scalar_out"));
  lib.impl<&gpu::negOut>(TESSERA_OP("neg.out"));
  lib.impl<&gpu::absOut>(TESSERA_OP("abs.out"));
  lib.impl<&gpu::reluOut>(TESSERA_OP("relu.out"));
  lib.impl<&gpu::expOut>(TESSERA_OP("exp.out"));
  lib.impl<&gpu::logOut>(TESSERA_OP("log.out"));
  lib.impl<&gpu::sqrtOut>(TESSERA_OP("sqrt.out"));
  lib.impl<&gpu::rsqrtOut>(TESSERA_OP("rsqrt.out"));
  lib.impl<&gpu::sinOut>(TESSERA_OP("sin.out"));
  lib.impl<&gpu::cosOut>(TESSERA_OP("cos.out"));
  lib.impl<&gpu::tanhOut>(TESSERA_OP("tanh.out"));
  lib.impl<&gpu::sigmoidOut>(TESSERA_OP("sigmoid.out"));
  lib.impl<&gpu::reciprocalOut>(TESSERA_OP("reciprocal.out"));
  lib.impl<&gpu::EqOut>(TESSERA_OP("eq.Tensor_out"));
  lib.impl<&gpu::NeOut>(TESSERA_OP("ne.Tensor_out"));
  lib.impl<&gpu::LtOut>(TESSERA_OP("lt.Tensor_out"));
  lib.impl<&gpu::LeOut>(TESSERA_OP("le.Tensor_out"));
  lib.impl<&gpu::GtOut>(TESSERA_OP("gt.Tensor_out"));
  lib.impl<&gpu::GeOut>(TESSERA_OP("ge.Tensor_out"));
  lib.impl<&gpu::EqScalarOut>(TESSERA_OP("eq.Scalar_out"));
  lib.impl<&gpu::NeScalarOut>(TESSERA_OP("ne.Scalar_out"));
  lib.impl<&gpu::LtScalarOut>(TESSERA_OP("lt.Scalar_out"));
  lib.impl<&gpu::LeScalarOut>(TESSERA_OP("le.Scalar_out"));
  lib.impl<&gpu::GtScalarOut>(TESSERA_OP("gt.Scalar_out"));
  lib.impl<&gpu::GeScalarOut>(TESSERA_OP("ge.Scalar_out"));
  lib.impl<&gpu::LogicalAndOut>(TESSERA_OP("logical_and.out"));
  lib.impl<&gpu::LogicalOrOut>(TESSERA_OP("logical_or.out"));
  lib.impl<&gpu::LogicalXorOut>(TESSERA_OP("logical_xor.out"));
  lib.impl<&gpu::BitwiseAndOut>(TESSERA_OP("bitwise_and.Tensor_out"));
  lib.impl<&gpu::BitwiseOrOut>(TESSERA_OP("bitwise_or.Tensor_out"));
  lib.impl<&gpu::BitwiseXorOut>(TESSERA_OP("bitwise_xor.Tensor_out"));
  lib.impl<&gpu::BitwiseAndScalarOut>(TESSERA_OP("bitwise_and.Scalar_out"));
  lib.impl<&gpu::BitwiseOrScalarOut>(TESSERA_OP("bitwise_or.Scalar_out"));
  lib.impl<&gpu::BitwiseXorScalarOut>(TESSERA_OP("bitwise_xor.Scalar_out"));
  lib.impl<&gpu::MaximumOut>(TESSERA_OP("maximum.out"));
  lib.impl<&gpu::MinimumOut>(TESSERA_OP("minimum.out"));
  lib.impl<&gpu::RemainderOut>(TESSERA_OP("remainder.Tensor_out"));
  lib.impl<&gpu::RemainderScalarOut>(TESSERA_OP("remainder.Scalar_out"));
  lib.impl<&gpu::FmodOut>(TESSERA_OP("fmod.Tensor_out"));
  lib.impl<&gpu::FmodScalarOut>(TESSERA_OP("fmod.Scalar_out"));
  lib.impl<&gpu::DivModeOut>(TESSERA_OP("div.out_mode"));
  lib.impl<&gpu::PowTensorOut>(TESSERA_OP("pow.Tensor_Tensor_out"));
  lib.impl<&gpu::PowTensorScalarOut>(TESSERA_OP("pow.Tensor_Scalar_out"));
  lib.impl<&gpu::PowScalarOut>(TESSERA_OP("pow.Scalar_out"));
  lib.impl<&gpu::Atan2Out>(TESSERA_OP("atan2.out"));
  lib.impl<&gpu::WhereOut>(TESSERA_OP("where.self_out"));
  lib.impl<&gpu::MaskedFillOut>(TESSERA_OP("masked_fill.Scalar_out"));
  lib.impl<&gpu::ClampOut>(TESSERA_OP("clamp.out"));
  lib.impl<&gpu::ClampTensorOut>(TESSERA_OP("clamp.Tensor_out"));
  lib.impl<&gpu::AddcOut<gpu::PointwiseKind::kAddcmul>>(TESSERA_OP("addcmul.out"));
  lib.impl<&gpu::AddcOut<gpu::PointwiseKind::kAddcdiv>>(TESSERA_OP("addcdiv.out"));
  lib.impl<&gpu::LerpScalarOut>(TESSERA_OP("lerp.Scalar_out"));
  lib.impl<&gpu::LerpTensorOut>(TESSERA_OP("lerp.Tensor_out"));
  lib.impl<&gpu::exp2Out>(TESSERA_OP("exp2.out"));
  lib.impl<&gpu::expm1Out>(TESSERA_OP("expm1.out"));
  lib.impl<&gpu::log2Out>(TESSERA_OP("log2.out"));
  lib.impl<&gpu::log10Out>(TESSERA_OP("log10.out"));
  lib.impl<&gpu::log1pOut>(TESSERA_OP("log1p.out"));
  lib.impl<&gpu::tanOut>(TESSERA_OP("tan.out"));
  lib.impl<&gpu::asinOut>(TESSERA_OP("asin.out"));
  lib.impl<&gpu::acosOut>(TESSERA_OP("acos.out"));
  lib.impl<&gpu::atanOut>(TESSERA_OP("atan.out"));
  lib.impl<&gpu::sinhOut>(TESSERA_OP("sinh.out"));
  lib.impl<&gpu::coshOut>(TESSERA_OP("cosh.out"));
  lib.impl<&gpu::erfOut>(TESSERA_OP("erf.out"));
  lib.impl<&gpu::siluOut>(TESSERA_OP("silu.out"));
  lib.impl<&gpu::GeluOut>(TESSERA_OP("gelu.out"));
  lib.impl<&gpu::floorOut>(TESSERA_OP("floor.out"));
  lib.impl<&gpu::ceilOut>(TESSERA_OP("ceil.out"));
  lib.impl<&gpu::roundOut>(TESSERA_OP("round.out"));
  lib.impl<&gpu::RoundDecimalsOut>(TESSERA_OP("round.decimals_out"));
  lib.impl<&gpu::truncOut>(TESSERA_OP("trunc.out"));
  lib.impl<&gpu::signOut>(TESSERA_OP("sign.out"));
  lib.impl<&gpu::bitwise_notOut>(TESSERA_OP("bitwise_not.out"));
  lib.impl<&gpu::isnanOut>(TESSERA_OP("isnan.out"));
  lib.impl<&gpu::isinfOut>(TESSERA_OP("isinf.out"));
  lib.impl<&gpu::isfiniteOut>(TESSERA_OP("isfinite.out"));
  lib.impl<&gpu::logical_notOut>(TESSERA_OP("logical_not.out"));
  lib.impl<&gpu::SumOut>(TESSERA_OP("sum.out"));
  lib.impl<&gpu::SumDimOut>(TESSERA_OP("sum.IntList_out"));
  lib.impl<&gpu::MeanOut>(TESSERA_OP("mean.dtype_out"));
  lib.impl<&gpu::MeanDimOut>(TESSERA_OP("mean.out"));
  lib.impl<&gpu::ProdOut>(TESSERA_OP("prod.out"));
  lib.impl<&gpu::ProdDimOut>(TESSERA_OP("prod.int_out"));
  lib.impl<&gpu::AmaxOut<true>>(TESSERA_OP("amax.out"));
  lib.impl<&gpu::AmaxOut<false>>(TESSERA_OP("amin.out"));
  lib.impl<&gpu::ArgmaxOut<true>>(TESSERA_OP("argmax.out"));
  lib.impl<&gpu::ArgmaxOut<false>>(TESSERA_OP("argmin.out"));
  lib.impl<&gpu::VarOut<false>>(TESSERA_OP("var.correction_out"));
  lib.impl<&gpu::VarOut<true>>(TESSERA_OP("std.correction_out"));
  lib.impl<&gpu::SoftmaxOut<false>>(TESSERA_OP("_softmax.out"));
  lib.impl<&gpu::SoftmaxOut<true>>(TESSERA_OP("_log_softmax.out"));
  lib.impl<&gpu::MmOut>(TESSERA_OP("mm.out"));
  lib.impl<&gpu::BmmOut>(TESSERA_OP("bmm.out"));
  lib.impl<&gpu::AddmmOut>(TESSERA_OP("addmm.out"));
  lib.impl<&gpu::Copy>(TESSERA_OP("copy_"));
  lib.impl<&gpu::Fill>(TESSERA_OP("fill_.Scalar"));
  gpu::RegisterScanReduceOps(lib);
  gpu::RegisterNnOps(lib);
  gpu::RegisterIndexOps(lib);
  lib.cpu_fallback();
}

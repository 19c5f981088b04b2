// The GPU kernels of the arithmetic ops, copy_ and fill_, one source for CUDA (nvcc) and HIP
// (hipcc, TESSERA_GPU_HIP; the runtime API through gpu_runtime.h); the other pointwise ops are in
// kernels_pointwise.cu. Each kernel is ThreadBody (elementwise.h) for one op, compute dtype and
// path; what a thread does is tested on the host (tests/elementwise_test.cc).
#include "kernel_launch.h"

namespace tessera {
namespace gpu {
namespace {

constexpr uint32_t kFloating = kFloatingDtypes;
constexpr uint32_t kNumeric = kNumericDtypes;
constexpr uint32_t kAll = kAllDtypes;

constexpr uint32_t kAddDtypes = kAll;
constexpr uint32_t kDivDtypes = kFloating;

}  // namespace

uint32_t BinaryDtypes(BinaryKind kind) { return kind == BinaryKind::kDiv ? kDivDtypes : kAll; }

uint32_t UnaryDtypes(UnaryKind kind) {
  switch (kind) {
    case UnaryKind::kIdentity:
      return kAll;
    case UnaryKind::kNeg:
    case UnaryKind::kAbs:
    case UnaryKind::kRelu:
      return kNumeric;
    default:
      return kFloating;
  }
}

std::string LaunchBinary(BinaryKind kind, int32_t compute, const ElementwisePlan& plan,
                         const ConstantValue& alpha, void* stream) {
  if (plan.num_operands != 3) return "a binary launch needs 3 operands";
  if (kind == BinaryKind::kDiv) {
    return Dispatch<kDivDtypes>(compute, [&](auto tag) {
      using S = typename decltype(tag)::type;
      return Launch<S, 3>(plan, DivOp<OpMath<S>>{}, stream);
    });
  }
  return Dispatch<kAddDtypes>(compute, [&](auto tag) {
    using S = typename decltype(tag)::type;
    using C = OpMath<S>;
    if (kind == BinaryKind::kMul) return Launch<S, 3>(plan, MulOp<C>{}, stream);
    const C a = alpha.kind == ConstantValue::kDouble ? Convert<C>(alpha.d)
                : alpha.kind == ConstantValue::kBool ? Convert<C>(alpha.i != 0)
                                                     : Convert<C>(alpha.i);
    if (kind == BinaryKind::kSub) return Launch<S, 3>(plan, AddOp<C, true>{a}, stream);
    return Launch<S, 3>(plan, AddOp<C, false>{a}, stream);
  });
}

std::string LaunchUnary(UnaryKind kind, int32_t compute, const ElementwisePlan& plan,
                        void* stream) {
  if (plan.num_operands != 2) return "a unary launch needs 2 operands";
  switch (kind) {
    case UnaryKind::kIdentity:
      return Dispatch<kAll>(compute, [&](auto tag) {
        using S = typename decltype(tag)::type;
        return Launch<S, 2>(plan, IdentityOp<OpMath<S>>{}, stream);
      });
    case UnaryKind::kNeg:
    case UnaryKind::kAbs:
    case UnaryKind::kRelu:
      return Dispatch<kNumeric>(compute, [&](auto tag) {
        using S = typename decltype(tag)::type;
        using C = OpMath<S>;
        if (kind == UnaryKind::kNeg) return Launch<S, 2>(plan, NegOp<C>{}, stream);
        if (kind == UnaryKind::kAbs) return Launch<S, 2>(plan, AbsOp<C>{}, stream);
        return Launch<S, 2>(plan, ReluOp<C>{}, stream);
      });
    default:
      return Dispatch<kFloating>(compute, [&](auto tag) -> std::string {
        using S = typename decltype(tag)::type;
        using C = OpMath<S>;
        switch (kind) {
          case UnaryKind::kExp:
            return Launch<S, 2>(plan, ExpOp<C>{}, stream);
          case UnaryKind::kLog:
            return Launch<S, 2>(plan, LogOp<C>{}, stream);
          case UnaryKind::kSqrt:
            return Launch<S, 2>(plan, SqrtOp<C>{}, stream);
          case UnaryKind::kRsqrt:
            return Launch<S, 2>(plan, RsqrtOp<C>{}, stream);
          case UnaryKind::kSin:
            return Launch<S, 2>(plan, SinOp<C>{}, stream);
          case UnaryKind::kCos:
            return Launch<S, 2>(plan, CosOp<C>{}, stream);
          case UnaryKind::kTanh:
            return Launch<S, 2>(plan, TanhOp<C>{}, stream);
          case UnaryKind::kSigmoid:
            return Launch<S, 2>(plan, SigmoidOp<C>{}, stream);
          case UnaryKind::kReciprocal:
            return Launch<S, 2>(plan, ReciprocalOp<C>{}, stream);
          default:
            return "unknown unary op";
        }
      });
  }
}

}  // namespace gpu
}  // namespace tessera

// The GPU kernels, one source for CUDA (nvcc) and HIP (hipcc, TESSERA_GPU_HIP; the runtime API
// through gpu_runtime.h). Each kernel is ThreadBody (elementwise.h) for one op, compute dtype and
// path; what a thread does is tested on the host (tests/elementwise_test.cc).
#include "gpu_device.h"
#include "gpu_runtime.h"
#include "kernels.h"

namespace tessera {
namespace gpu {
namespace {

constexpr uint32_t Bit(int32_t dtype) { return uint32_t{1} << dtype; }
constexpr uint32_t kFloating = Bit(TSR_DTYPE_FLOAT16) | Bit(TSR_DTYPE_BFLOAT16) |
                               Bit(TSR_DTYPE_FLOAT32) | Bit(TSR_DTYPE_FLOAT64);
constexpr uint32_t kNumeric = kFloating | Bit(TSR_DTYPE_UINT8) | Bit(TSR_DTYPE_INT8) |
                              Bit(TSR_DTYPE_INT16) | Bit(TSR_DTYPE_INT32) | Bit(TSR_DTYPE_INT64);
constexpr uint32_t kAll = kNumeric | Bit(TSR_DTYPE_BOOL);

template <typename T>
struct Tag {
  using type = T;
};

// Dispatch calls f(Tag<S>) for the storage type S of `dtype` when `allowed` has it (a
// compile-time set, so that no kernel is instantiated for a dtype the op does not support).
template <uint32_t kAllowed, typename F>
std::string Dispatch(int32_t dtype, F&& f) {
  auto call = [&](auto tag) -> std::string {
    using S = typename decltype(tag)::type;
    constexpr int32_t kDtype = std::is_same_v<S, bool>       ? TSR_DTYPE_BOOL
                               : std::is_same_v<S, uint8_t>  ? TSR_DTYPE_UINT8
                               : std::is_same_v<S, int8_t>   ? TSR_DTYPE_INT8
                               : std::is_same_v<S, int16_t>  ? TSR_DTYPE_INT16
                               : std::is_same_v<S, int32_t>  ? TSR_DTYPE_INT32
                               : std::is_same_v<S, int64_t>  ? TSR_DTYPE_INT64
                               : std::is_same_v<S, Half>     ? TSR_DTYPE_FLOAT16
                               : std::is_same_v<S, BFloat16> ? TSR_DTYPE_BFLOAT16
                               : std::is_same_v<S, float>    ? TSR_DTYPE_FLOAT32
                                                             : TSR_DTYPE_FLOAT64;
    if constexpr ((kAllowed & Bit(kDtype)) != 0) {
      return f(tag);
    } else {
      return "no kernel for compute dtype " + std::to_string(kDtype);
    }
  };
  switch (dtype) {
    case TSR_DTYPE_BOOL:
      return call(Tag<bool>{});
    case TSR_DTYPE_UINT8:
      return call(Tag<uint8_t>{});
    case TSR_DTYPE_INT8:
      return call(Tag<int8_t>{});
    case TSR_DTYPE_INT16:
      return call(Tag<int16_t>{});
    case TSR_DTYPE_INT32:
      return call(Tag<int32_t>{});
    case TSR_DTYPE_INT64:
      return call(Tag<int64_t>{});
    case TSR_DTYPE_FLOAT16:
      return call(Tag<Half>{});
    case TSR_DTYPE_BFLOAT16:
      return call(Tag<BFloat16>{});
    case TSR_DTYPE_FLOAT32:
      return call(Tag<float>{});
    case TSR_DTYPE_FLOAT64:
      return call(Tag<double>{});
    default:
      return "invalid compute dtype " + std::to_string(dtype);
  }
}

template <typename S, int N, bool kContiguous, typename Op>
__global__ void __launch_bounds__(kThreadsPerBlock) ElementwiseKernel(Args<S, N> a, Op op) {
  ThreadBody<S, N, kContiguous>(a, op, blockIdx.x, threadIdx.x);
}

// Launch queues every chunk of `plan` (each below 2^31 elements, Note [GPU elementwise
// iterator]) on `stream`.
template <typename S, int N, typename Op>
std::string Launch(const ElementwisePlan& plan, const Op& op, void* stream) {
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  for (const ElementwiseChunk& chunk : plan.chunks) {
    const Args<S, N> args = MakeArgs<S, N>(plan, chunk);
    const dim3 grid(LaunchBlocks(chunk.numel));
    if (plan.contiguous) {
      ElementwiseKernel<S, N, true, Op><<<grid, kThreadsPerBlock, 0, s>>>(args, op);
    } else {
      ElementwiseKernel<S, N, false, Op><<<grid, kThreadsPerBlock, 0, s>>>(args, op);
    }
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return ErrorText(e);
  }
  return "";
}

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

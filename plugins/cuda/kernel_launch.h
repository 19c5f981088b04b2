// What every kernels*.cu file shares (device code: compiled by nvcc and hipcc only): the dtype
// dispatch and the elementwise kernel with its launcher.
#pragma once

#include <string>
#include <type_traits>

#include "gpu_device.h"
#include "gpu_runtime.h"
#include "kernels.h"

namespace tessera {
namespace gpu {

template <typename T>
struct Tag {
  using type = T;
};

// Dispatch calls f(Tag<S>) for the storage type S of `dtype` when `kAllowed` has it (a
// compile-time set, so that no kernel is instantiated for a dtype the op does not support).
template <uint32_t kAllowed, typename F>
std::string Dispatch(int32_t dtype, F&& f) {
  auto call = [&](auto tag) -> std::string {
    using S = typename decltype(tag)::type;
    if constexpr ((kAllowed & DtypeBit(kDtypeOf<S>)) != 0) {
      return f(tag);
    } else {
      return "no kernel for compute dtype " + std::to_string(kDtypeOf<S>);
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
// iterator]) on `stream`. kFast = false builds only the general kernel, which also runs a plan
// that is contiguous (Note [GPU pointwise families]).
template <typename S, int N, typename Op, bool kFast = true>
std::string Launch(const ElementwisePlan& plan, const Op& op, void* stream) {
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  for (const ElementwiseChunk& chunk : plan.chunks) {
    const Args<S, N> args = MakeArgs<S, N>(plan, chunk);
    const dim3 grid(LaunchBlocks(chunk.numel));
    if constexpr (kFast) {
      if (UsesFastPath<S>(plan)) {
        ElementwiseKernel<S, N, true, Op><<<grid, kThreadsPerBlock, 0, s>>>(args, op);
        if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return ErrorText(e);
        continue;
      }
    }
    ElementwiseKernel<S, N, false, Op><<<grid, kThreadsPerBlock, 0, s>>>(args, op);
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return ErrorText(e);
  }
  return "";
}

}  // namespace gpu
}  // namespace tessera

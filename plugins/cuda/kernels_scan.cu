// The GPU scans, cumsum and cumprod (scan.h; Note [GPU scans]), one source for CUDA (nvcc) and
// HIP (hipcc, TESSERA_GPU_HIP).
#include "kernel_launch.h"
#include "scan.h"

namespace tessera {
namespace gpu {
namespace {

// One row per group of T threads, walked in chunks of T elements with a carried prefix. A:
// ReduceArgs or WideReduceArgs (64-bit indices).
template <typename S, typename A>
__global__ void __launch_bounds__(kReduceThreads) ScanKernel(A a, ScanOp<S> op) {
  using Acc = typename ScanOp<S>::Acc;
  using I = typename A::Index;
  __shared__ Acc shared[kReduceThreads];  // Acc is an arithmetic type
  const uint32_t t = threadIdx.x, T = a.threads_per_output, lane = t % T;
  const uint32_t last = t - lane + T - 1;  // the group's last thread
  const ScanRow<I> row = ScanRowOf(a, OutputOf(a, blockIdx.x, t));
  const I chunks = ScanChunks(a);
  Acc carry = op.Init();
  for (I c = 0; c < chunks; ++c) {
    shared[t] = ScanLoad(a, op, row, c, lane);
    __syncthreads();
    for (uint32_t d = 1; d < T; d *= 2) {
      const Acc v = ScanStep(op, shared, t, lane, d);
      __syncthreads();
      shared[t] = v;
      __syncthreads();
    }
    ScanWrite(a, op, row, c, lane, op.Combine(carry, shared[t]));
    carry = op.Combine(carry, shared[last]);
    __syncthreads();  // before the next chunk overwrites shared
  }
}

}  // namespace

std::string LaunchScan(ScanKind kind, int32_t compute, const ReducePlan& plan, void* stream) {
  if (plan.blocks == 0 || plan.reduced() == 0) return "";
  return Dispatch<kAllDtypes>(compute, [&](auto tag) -> std::string {
    using S = typename decltype(tag)::type;
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    const ScanOp<S> op{kind == ScanKind::kCumprod};
    if (plan.wide) {
      ScanKernel<S, WideReduceArgs><<<plan.blocks, kReduceThreads, 0, s>>>(plan.wide_args, op);
    } else {
      ScanKernel<S, ReduceArgs><<<plan.blocks, kReduceThreads, 0, s>>>(plan.args, op);
    }
    const cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? "" : ErrorText(e);
  });
}

}  // namespace gpu
}  // namespace tessera

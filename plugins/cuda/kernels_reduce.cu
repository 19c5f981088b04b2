// The GPU reductions and softmax (reduce.h; Note [GPU reductions]), one source for CUDA (nvcc)
// and HIP (hipcc, TESSERA_GPU_HIP).
#include "kernel_launch.h"

namespace tessera {
namespace gpu {
namespace {

// One output per group of T threads: partials, the tree in shared memory, lane 0 writes. A:
// ReduceArgs or WideReduceArgs (64-bit indices).
template <typename A, typename R>
__global__ void __launch_bounds__(kReduceThreads) ReduceKernel(A a, R r) {
  using Acc = typename R::Acc;
  __shared__ Acc shared[kReduceThreads];  // Acc is trivially constructible
  const uint32_t t = threadIdx.x, lane = t % a.threads_per_output;
  const typename A::Index o = OutputOf(a, blockIdx.x, t);
  shared[t] = ThreadPartial(a, r, o, lane);
  __syncthreads();
  for (uint32_t half = a.threads_per_output / 2; half > 0; half /= 2) {
    CombineStep(r, shared, t, lane, half);
    __syncthreads();
  }
  if (lane == 0) WriteResult(a, r, shared[t], o);
}

// A split reduction's first pass (Note [Split reductions]): block b folds its share of output
// b / splits's row and writes one accumulator.
template <typename A, typename R>
__global__ void __launch_bounds__(kReduceThreads)
    SplitReduceKernel(A a, R r, uint32_t splits, typename R::Acc* partials) {
  using Acc = typename R::Acc;
  __shared__ Acc shared[kReduceThreads];
  const uint32_t t = threadIdx.x;
  shared[t] = SplitThreadPartial(a, r, splits, blockIdx.x, t);
  __syncthreads();
  for (uint32_t half = kReduceThreads / 2; half > 0; half /= 2) {
    CombineStep(r, shared, t, t, half);
    __syncthreads();
  }
  if (t == 0) partials[blockIdx.x] = shared[0];
}

// Its second pass: `threads` threads an output combine its accumulators; lane 0 writes.
template <typename A, typename R>
__global__ void __launch_bounds__(kReduceThreads)
    FinishReduceKernel(A a, R r, uint32_t splits, uint32_t threads,
                       const typename R::Acc* partials) {
  using Acc = typename R::Acc;
  __shared__ Acc shared[kReduceThreads];
  const uint32_t t = threadIdx.x, lane = t % threads;
  const typename A::Index o = FinishOutputOf<A>(blockIdx.x, t, threads);
  shared[t] = FinishThreadPartial(a, r, partials, splits, o, lane, threads);
  __syncthreads();
  for (uint32_t half = threads / 2; half > 0; half /= 2) {
    CombineStep(r, shared, t, lane, half);
    __syncthreads();
  }
  if (lane == 0) WriteResult(a, r, shared[t], o);
}

template <typename A, typename R>
void LaunchSplit(const A& a, const ReducePlan& plan, const R& r, void* workspace, cudaStream_t s) {
  using Acc = typename R::Acc;
  static_assert(sizeof(Acc) <= kSplitAccBytes && alignof(Acc) <= 16,
                "a reducer's accumulator outgrows the split workspace's stride");
  Acc* partials = static_cast<Acc*>(workspace);
  SplitReduceKernel<A, R><<<plan.blocks, kReduceThreads, 0, s>>>(a, r, plan.splits, partials);
  FinishReduceKernel<A, R><<<plan.finish_blocks, kReduceThreads, 0, s>>>(
      a, r, plan.splits, plan.finish_threads, partials);
}

// Softmax over each row (the reduced dimension): the maximum and the sum of exp(x - max) in one
// pass (SoftmaxStatsReducer), then every lane writes its elements.
template <typename S, typename A>
__global__ void __launch_bounds__(kReduceThreads) SoftmaxKernel(A a, bool log) {
  using Stats = SoftmaxStatsReducer<S>;
  __shared__ typename Stats::Acc shared[kReduceThreads];
  const uint32_t t = threadIdx.x, lane = t % a.threads_per_output;
  const uint32_t first = t - lane;  // lane 0 of this row
  const typename A::Index o = OutputOf(a, blockIdx.x, t);
  const Stats stats;
  shared[t] = ThreadPartial(a, stats, o, lane);
  __syncthreads();
  for (uint32_t half = a.threads_per_output / 2; half > 0; half /= 2) {
    CombineStep(stats, shared, t, lane, half);
    __syncthreads();
  }
  SoftmaxWrite<S>(a, o, lane, shared[first].max, shared[first].sum, log);
}

template <typename R>
std::string LaunchWith(const ReducePlan& plan, const R& r, void* workspace, void* stream) {
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (plan.splits > 1 && workspace == nullptr) return "a split reduction without its workspace";
  if (plan.splits > 1 && plan.wide) {
    LaunchSplit(plan.wide_args, plan, r, workspace, s);
  } else if (plan.splits > 1) {
    LaunchSplit(plan.args, plan, r, workspace, s);
  } else if (plan.wide) {
    ReduceKernel<WideReduceArgs, R><<<plan.blocks, kReduceThreads, 0, s>>>(plan.wide_args, r);
  } else {
    ReduceKernel<ReduceArgs, R><<<plan.blocks, kReduceThreads, 0, s>>>(plan.args, r);
  }
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? "" : ErrorText(e);
}

}  // namespace

std::string LaunchReduce(ReduceKind kind, int32_t compute, const ReducePlan& plan, double param,
                         void* workspace, void* stream) {
  if (plan.blocks == 0) return "";
  using K = ReduceKind;
  switch (kind) {
    case K::kSum:
    case K::kProd:
      return Dispatch<ReduceDtypes(K::kSum)>(compute, [&](auto tag) {
        using S = typename decltype(tag)::type;
        return LaunchWith(plan, SumReducer<S>{kind == K::kProd ? 2 : 0}, workspace, stream);
      });
    case K::kMean:
      return Dispatch<ReduceDtypes(K::kMean)>(compute, [&](auto tag) {
        using S = typename decltype(tag)::type;
        return LaunchWith(plan, SumReducer<S>{1}, workspace, stream);
      });
    case K::kAmax:
    case K::kAmin:
      return Dispatch<ReduceDtypes(K::kAmax)>(compute, [&](auto tag) {
        using S = typename decltype(tag)::type;
        return LaunchWith(plan, ExtremumReducer<S>{kind == K::kAmax}, workspace, stream);
      });
    case K::kArgmax:
    case K::kArgmin:
      return Dispatch<ReduceDtypes(K::kArgmax)>(compute, [&](auto tag) {
        using S = typename decltype(tag)::type;
        return LaunchWith(plan, ArgReducer<S>{{kind == K::kArgmax}}, workspace, stream);
      });
    case K::kVar:
    case K::kStd:
      return Dispatch<ReduceDtypes(K::kVar)>(compute, [&](auto tag) {
        using S = typename decltype(tag)::type;
        using F = typename VarReducer<S>::F;
        return LaunchWith(plan, VarReducer<S>{static_cast<F>(param), kind == K::kStd}, workspace,
                          stream);
      });
    case K::kMaxDim:
    case K::kMinDim:
      return Dispatch<ReduceDtypes(K::kMaxDim)>(compute, [&](auto tag) {
        using S = typename decltype(tag)::type;
        return LaunchWith(plan, ValueIndexReducer<S>{{kind == K::kMaxDim}}, workspace, stream);
      });
    case K::kAny:
    case K::kAll:
      return Dispatch<ReduceDtypes(K::kAny)>(compute, [&](auto tag) {
        using S = typename decltype(tag)::type;
        return LaunchWith(plan, AnyAllReducer<S>{kind == K::kAny}, workspace, stream);
      });
    case K::kLogSumExp:
      return Dispatch<ReduceDtypes(K::kLogSumExp)>(compute, [&](auto tag) {
        using S = typename decltype(tag)::type;
        return LaunchWith(plan, LogSumExpReducer<S>{}, workspace, stream);
      });
    case K::kNorm:
      return Dispatch<ReduceDtypes(K::kNorm)>(compute, [&](auto tag) {
        using S = typename decltype(tag)::type;
        using F = typename NormReducer<S>::F;
        return LaunchWith(plan, NormReducer<S>{static_cast<F>(param)}, workspace, stream);
      });
    default:
      return Dispatch<ReduceDtypes(K::kSoftmax)>(compute, [&](auto tag) -> std::string {
        using S = typename decltype(tag)::type;
        const cudaStream_t s = static_cast<cudaStream_t>(stream);
        const bool log = kind == K::kLogSoftmax;
        if (plan.wide) {
          SoftmaxKernel<S, WideReduceArgs>
              <<<plan.blocks, kReduceThreads, 0, s>>>(plan.wide_args, log);
        } else {
          SoftmaxKernel<S, ReduceArgs><<<plan.blocks, kReduceThreads, 0, s>>>(plan.args, log);
        }
        const cudaError_t e = cudaGetLastError();
        return e == cudaSuccess ? "" : ErrorText(e);
      });
  }
}

}  // namespace gpu
}  // namespace tessera

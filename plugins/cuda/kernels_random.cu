// The GPU random kernels, uniform_ and normal_ (random.h; Note [GPU random kernels]), one source
// for CUDA (nvcc) and HIP (hipcc, TESSERA_GPU_HIP).
#include "kernel_launch.h"
#include "kernels_random.h"

namespace tessera {
namespace gpu {
namespace {

template <typename T, RandomKind kKind, RandomIndexing kIndexing>
__global__ void __launch_bounds__(kThreadsPerBlock) RandomKernel(RandomArgs a) {
  RandomThreadBody<T, kKind, kIndexing>(a, blockIdx.x, threadIdx.x);
}

template <typename T, RandomKind kKind>
std::string LaunchAll(const RandomPlan& plan, cudaStream_t stream) {
  return ForEachRandomLaunch(plan, [&](const RandomArgs& a, uint32_t blocks) -> std::string {
    const dim3 grid(blocks);
    switch (plan.indexing) {
      case RandomIndexing::kContiguous:
        RandomKernel<T, kKind, RandomIndexing::kContiguous>
            <<<grid, kThreadsPerBlock, 0, stream>>>(a);
        break;
      case RandomIndexing::kNarrow:
        RandomKernel<T, kKind, RandomIndexing::kNarrow><<<grid, kThreadsPerBlock, 0, stream>>>(a);
        break;
      case RandomIndexing::kWide:
        RandomKernel<T, kKind, RandomIndexing::kWide><<<grid, kThreadsPerBlock, 0, stream>>>(a);
        break;
    }
    const cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? "" : ErrorText(e);
  });
}

}  // namespace

std::string LaunchRandom(RandomKind kind, int32_t dtype, const RandomPlan& plan, void* stream) {
  if (plan.numel == 0) return "";
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  return Dispatch<kFloatingDtypes>(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return kind == RandomKind::kUniform ? LaunchAll<T, RandomKind::kUniform>(plan, s)
                                        : LaunchAll<T, RandomKind::kNormal>(plan, s);
  });
}

}  // namespace gpu
}  // namespace tessera

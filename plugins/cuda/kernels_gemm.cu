// The matrix products' kernel (gemm.h; Note [GPU tiled GEMM]), one source for CUDA (nvcc) and
// HIP (hipcc, TESSERA_GPU_HIP).
#include "kernel_launch.h"

namespace tessera {
namespace gpu {
namespace {

template <typename S>
__global__ void __launch_bounds__(kGemmTile* kGemmTile) GemmKernel(GemmArgs<S> g) {
  __shared__ GemmAcc<S> tile_a[kGemmTile][kGemmTile];
  __shared__ GemmAcc<S> tile_b[kGemmTile][kGemmTile];
  GemmAcc<S> acc = 0;
  for (int64_t k0 = 0; k0 < g.k; k0 += kGemmTile) {
    LoadTiles(g, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, k0, tile_a, tile_b);
    __syncthreads();
    acc = AccumulateTile<S>(acc, threadIdx.x, threadIdx.y, tile_a, tile_b);
    __syncthreads();
  }
  StoreTile(g, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, acc);
}

}  // namespace

std::string LaunchGemm(int32_t dtype, const GemmProblem& p, void* stream) {
  uint32_t x, y, z;
  if (!GemmGrid(p, &x, &y, &z)) return "the product's grid exceeds the GPU's launch limits";
  if (x == 0 || y == 0 || z == 0) return "";
  return Dispatch<kFloatingDtypes>(dtype, [&](auto tag) -> std::string {
    using S = typename decltype(tag)::type;
    GemmKernel<S>
        <<<dim3(x, y, z), dim3(kGemmTile, kGemmTile), 0, static_cast<cudaStream_t>(stream)>>>(
            MakeGemmArgs<S>(p));
    const cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? "" : ErrorText(e);
  });
}

}  // namespace gpu
}  // namespace tessera

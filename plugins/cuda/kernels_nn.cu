// The GPU nn kernels (nn.h; Note [GPU nn kernels]), one source for CUDA (nvcc) and HIP (hipcc,
// TESSERA_GPU_HIP): thin wrappers over the per-thread work that tests/nn_test.cc runs on the
// host.
#include "kernel_launch.h"
#include "kernels_nn.h"

namespace tessera {
namespace gpu {
namespace {

// One block per row (rows past the grid: the block's next ones): partials, the tree in
// shared memory, then every thread writes its elements with the row's statistics.
template <typename S>
__global__ void __launch_bounds__(kNnThreads) LayerNormKernel(LayerNormArgs a) {
  using F = NormFloat<S>;
  __shared__ Welford<F> shared[kNnThreads];  // Welford is trivially constructible
  const uint32_t t = threadIdx.x;
  for (int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {
    shared[t] = LayerNormPartial<S>(a, row, t);
    __syncthreads();
    for (uint32_t half = kNnThreads / 2; half > 0; half /= 2) {
      WelfordStep(shared, t, half);
      __syncthreads();
    }
    LayerNormWrite<S>(a, row, t, LayerNormStats(shared[0], a.eps));
    __syncthreads();  // slot 0 is read before the next row overwrites it
  }
}

template <typename S>
__global__ void __launch_bounds__(kNnThreads) BatchNormKernel(BatchNormArgs a) {
  using F = NormFloat<S>;
  __shared__ Welford<F> shared[kNnThreads];
  const uint32_t t = threadIdx.x;
  for (int64_t c = blockIdx.x; c < a.channels; c += gridDim.x) {
    shared[t] = BatchNormPartial<S>(a, c, t);
    __syncthreads();
    for (uint32_t half = kNnThreads / 2; half > 0; half /= 2) {
      WelfordStep(shared, t, half);
      __syncthreads();
    }
    BatchNormWrite<S>(a, c, t, BatchNormStats<S>(a, c, t, shared[0]));
    __syncthreads();
  }
}

// One thread per output element, striding over the grid.
#define TSR_NN_ELEMENTS(total)                                                               \
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * kNnThreads + threadIdx.x; o < (total); \
       o += static_cast<int64_t>(gridDim.x) * kNnThreads)

template <typename S>
__global__ void __launch_bounds__(kNnThreads) MaxPoolKernel(Pool2dArgs a) {
  const int64_t total = PoolElements(a);
  TSR_NN_ELEMENTS(total) { MaxPoolThread<S>(a, o); }
}

template <typename S>
__global__ void __launch_bounds__(kNnThreads) AvgPoolKernel(Pool2dArgs a) {
  const int64_t total = PoolElements(a);
  TSR_NN_ELEMENTS(total) { AvgPoolThread<S>(a, o); }
}

template <typename S>
__global__ void __launch_bounds__(kNnThreads) ConvKernel(ConvArgs a) {
  const int64_t total = ConvElements(a);
  TSR_NN_ELEMENTS(total) { ConvThread<S>(a, o); }
}

#undef TSR_NN_ELEMENTS

std::string LastError() {
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? "" : ErrorText(e);
}

}  // namespace

std::string LaunchLayerNorm(int32_t dtype, const LayerNormArgs& args, uint32_t blocks,
                            void* stream) {
  if (blocks == 0) return "";
  return Dispatch<kNormDtypes>(dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    LayerNormKernel<S><<<blocks, kNnThreads, 0, static_cast<cudaStream_t>(stream)>>>(args);
    return LastError();
  });
}

std::string LaunchBatchNorm(int32_t dtype, const BatchNormArgs& args, uint32_t blocks,
                            void* stream) {
  if (blocks == 0) return "";
  return Dispatch<kNormDtypes>(dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    BatchNormKernel<S><<<blocks, kNnThreads, 0, static_cast<cudaStream_t>(stream)>>>(args);
    return LastError();
  });
}

std::string LaunchPool2d(int32_t dtype, const Pool2dArgs& args, uint32_t blocks, void* stream) {
  if (blocks == 0) return "";
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (args.indices != nullptr) {
    return Dispatch<kMaxPoolDtypes>(dtype, [&](auto tag) {
      using S = typename decltype(tag)::type;
      MaxPoolKernel<S><<<blocks, kNnThreads, 0, s>>>(args);
      return LastError();
    });
  }
  return Dispatch<kAvgPoolDtypes>(dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    AvgPoolKernel<S><<<blocks, kNnThreads, 0, s>>>(args);
    return LastError();
  });
}

std::string LaunchConv(int32_t dtype, const ConvArgs& args, uint32_t blocks, void* stream) {
  if (blocks == 0) return "";
  return Dispatch<kConvDtypes>(dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    ConvKernel<S><<<blocks, kNnThreads, 0, static_cast<cudaStream_t>(stream)>>>(args);
    return LastError();
  });
}

}  // namespace gpu
}  // namespace tessera

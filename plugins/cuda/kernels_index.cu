// The GPU index, shape and sort kernels (index.h; Note [GPU index kernels], Note [GPU sort]),
// one source for CUDA (nvcc) and HIP (hipcc, TESSERA_GPU_HIP).
#include "kernel_launch.h"
#include "kernels_index.h"

namespace tessera {
namespace gpu {
namespace {

template <IndexKind kKind, typename T>
__global__ void __launch_bounds__(kIndexThreads) IndexKernel(IndexArgs a) {
  IndexThreadBody<kKind, T>(a, blockIdx.x, threadIdx.x);
}

template <IndexKind kKind, typename T>
std::string LaunchIndexWith(const IndexArgs& a, void* stream) {
  const int64_t blocks = IndexBlocks(a.numel);
  if (blocks > INT32_MAX) return "an iteration of " + std::to_string(a.numel) + " elements";
  IndexKernel<kKind, T><<<dim3(static_cast<uint32_t>(blocks)), kIndexThreads, 0,
                          static_cast<cudaStream_t>(stream)>>>(a);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? "" : ErrorText(e);
}

// The kinds that move bytes: one kernel per element size.
template <IndexKind kKind>
std::string BySize(int32_t dtype, const IndexArgs& a, void* stream) {
  switch (ElementwiseSizeOf(dtype)) {
    case 1:
      return LaunchIndexWith<kKind, uint8_t>(a, stream);
    case 2:
      return LaunchIndexWith<kKind, uint16_t>(a, stream);
    case 4:
      return LaunchIndexWith<kKind, uint32_t>(a, stream);
    case 8:
      return LaunchIndexWith<kKind, uint64_t>(a, stream);
    default:
      return "invalid dtype " + std::to_string(dtype);
  }
}

// One row per block, sorted in shared memory.
template <typename S>
__global__ void __launch_bounds__(kSortMaxThreads) SortSharedKernel(SortArgs a) {
  __shared__ uint64_t keys[kSortSharedMax];
  __shared__ int32_t pos[kSortSharedMax];
  const int64_t row = a.first_row + blockIdx.x;
  SortLoad<S>(a, row, keys, pos, threadIdx.x, blockDim.x);
  __syncthreads();
  for (int64_t k = 2; k <= a.padded; k *= 2) {
    for (int64_t j = k / 2; j > 0; j /= 2) {
      SortStep(keys, pos, a.padded, k, j, threadIdx.x, blockDim.x);
      __syncthreads();
    }
  }
  SortStore<S>(a, row, pos, threadIdx.x, blockDim.x);
}

// One row per block, sorted in the global scratch (rows longer than kSortSharedMax).
template <typename S>
__global__ void __launch_bounds__(kSortMaxThreads) SortGlobalKernel(SortArgs a) {
  const int64_t row = a.first_row + blockIdx.x;
  uint64_t* keys = a.scratch_keys + static_cast<int64_t>(blockIdx.x) * a.padded;
  int32_t* pos = a.scratch_pos + static_cast<int64_t>(blockIdx.x) * a.padded;
  SortLoad<S>(a, row, keys, pos, threadIdx.x, blockDim.x);
  __syncthreads();
  for (int64_t k = 2; k <= a.padded; k *= 2) {
    for (int64_t j = k / 2; j > 0; j /= 2) {
      SortStep(keys, pos, a.padded, k, j, threadIdx.x, blockDim.x);
      __syncthreads();
    }
  }
  SortStore<S>(a, row, pos, threadIdx.x, blockDim.x);
}

}  // namespace

std::string LaunchIndex(IndexKind kind, int32_t dtype, const IndexArgs& args, void* stream) {
  if (args.numel == 0) return "";
  using K = IndexKind;
  switch (kind) {
    case K::kCopy:
      return BySize<K::kCopy>(dtype, args, stream);
    case K::kTril:
      return BySize<K::kTril>(dtype, args, stream);
    case K::kTriu:
      return BySize<K::kTriu>(dtype, args, stream);
    case K::kGather:
      return BySize<K::kGather>(dtype, args, stream);
    case K::kIndexSelect:
      return BySize<K::kIndexSelect>(dtype, args, stream);
    case K::kScatter:
      return BySize<K::kScatter>(dtype, args, stream);
    case K::kScatterAdd:
      return Dispatch<kAllDtypes>(dtype, [&](auto tag) {
        using S = typename decltype(tag)::type;
        return LaunchIndexWith<K::kScatterAdd, S>(args, stream);
      });
    default:
      return Dispatch<kAllDtypes>(dtype, [&](auto tag) {
        using S = typename decltype(tag)::type;
        return LaunchIndexWith<K::kScatterMul, S>(args, stream);
      });
  }
}

std::string LaunchSort(int32_t dtype, const SortArgs& args, int64_t rows, int64_t rows_per_launch,
                       void* stream) {
  if (rows == 0 || args.count == 0) return "";
  const bool shared = args.padded <= kSortSharedMax;
  int64_t per_launch = shared ? INT32_MAX : rows_per_launch;
  if (per_launch > INT32_MAX) per_launch = INT32_MAX;
  if (per_launch < 1) per_launch = 1;
  const int threads = SortThreads(args.padded);
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  return Dispatch<kAllDtypes>(dtype, [&](auto tag) -> std::string {
    using S = typename decltype(tag)::type;
    SortArgs a = args;
    for (a.first_row = 0; a.first_row < rows; a.first_row += per_launch) {
      const int64_t n = rows - a.first_row < per_launch ? rows - a.first_row : per_launch;
      const dim3 grid(static_cast<uint32_t>(n));
      if (shared) {
        SortSharedKernel<S><<<grid, threads, 0, s>>>(a);
      } else {
        SortGlobalKernel<S><<<grid, threads, 0, s>>>(a);
      }
      if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return ErrorText(e);
    }
    return "";
  });
}

}  // namespace gpu
}  // namespace tessera

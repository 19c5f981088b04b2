// gpu_cublas_peer: cuBLAS called directly on the mm workloads of tessera_gpu_benchmark (4096^2,
// float32 and bfloat16, C = A B row-major into a preallocated C), the peer of issue 12's "mm >=
// 0.9x cuBLAS called directly". Same timing as the other benchmarks (N iterations between two
// synchronizations, on the default stream) and one JSON object per line. Built with nvcc and
// linked with cuBLAS by scripts/gpu-check.sh on the GPU machine.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <vector>

namespace {

bool Ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "gpu_cublas_peer: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}
bool Ok(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return true;
  std::fprintf(stderr, "gpu_cublas_peer: %s: cuBLAS status %d\n", what, static_cast<int>(s));
  return false;
}

// Fill writes `value` into n elements of type T (converted on the host, copied once).
template <typename T>
bool Fill(void* p, size_t n, float value) {
  std::vector<T> host(n, T(value));
  return Ok(cudaMemcpy(p, host.data(), n * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
}

// Mm times C = A B for row-major m x m matrices as cuBLAS sees them (column-major C^T = B^T A^T:
// no transposes, A and B swapped), computing in float32 (no TF32) as Tessera's products do.
bool Mm(cublasHandle_t handle, cudaDataType type, const char* name, int m, void* a, void* b,
        void* c) {
  const float alpha = 1.0f, beta = 0.0f;
  auto gemm = [&] {
    return cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &alpha, b, type, m, a, type, m,
                        &beta, c, type, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  };
  for (int i = 0; i < 3; ++i) {
    if (!Ok(gemm(), "cublasGemmEx")) return false;
  }
  if (!Ok(cudaDeviceSynchronize(), "warm-up")) return false;
  const int iters = 20;
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) {
    const cublasStatus_t s = gemm();  // a failing call must not pass for a fast one
    if (s != CUBLAS_STATUS_SUCCESS) status = s;
  }
  if (!Ok(cudaDeviceSynchronize(), "timed run") || !Ok(status, "cublasGemmEx (timed)"))
    return false;
  const double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iters;
  std::printf("{\"name\": \"cublas_mm_%s_%d\", \"seconds_per_iter\": %.9g, \"gb_per_s\": 0}\n",
              name, m, s);
  std::fflush(stdout);
  return true;
}

}  // namespace

int main() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "gpu_cublas_peer: no CUDA device\n");
    return 77;
  }
  cublasHandle_t handle = nullptr;
  if (!Ok(cublasCreate(&handle), "cublasCreate")) return 1;
  const int m = 4096;
  const size_t n = static_cast<size_t>(m) * m;
  void *a = nullptr, *b = nullptr, *c = nullptr;
  bool ok = Ok(cudaMalloc(&a, n * 4), "cudaMalloc") && Ok(cudaMalloc(&b, n * 4), "cudaMalloc") &&
            Ok(cudaMalloc(&c, n * 4), "cudaMalloc");
  ok = ok && Fill<float>(a, n, 0.01f) && Fill<float>(b, n, 0.02f) &&
       Mm(handle, CUDA_R_32F, "float32", m, a, b, c);
  ok = ok && Fill<__nv_bfloat16>(a, n, 0.01f) && Fill<__nv_bfloat16>(b, n, 0.02f) &&
       Mm(handle, CUDA_R_16BF, "bfloat16", m, a, b, c);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  cublasDestroy(handle);
  return ok ? 0 : 1;
}

// gpu_bare_launch: what a kernel launch costs without any runtime above it, the floor of the
// 1-element add of tessera_gpu_benchmark: an add of one float launched N times on the default
// stream between two synchronizations. Built with nvcc by scripts/gpu-check.sh on the GPU
// machine; prints one JSON object like the other benchmarks.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>

__global__ void AddOne(float* out, const float* a, const float* b) { out[0] = a[0] + b[0]; }

int main() {
  float* p = nullptr;
  if (cudaMalloc(&p, 3 * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "gpu_bare_launch: no CUDA device\n");
    return 77;
  }
  for (int i = 0; i < 1000; ++i) AddOne<<<1, 1>>>(p + 2, p, p + 1);
  cudaDeviceSynchronize();
  const int iters = 20000;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) AddOne<<<1, 1>>>(p + 2, p, p + 1);
  cudaDeviceSynchronize();
  const double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iters;
  std::printf(
      "{\"name\": \"bare_launch_add_float32_1\", \"seconds_per_iter\": %.9g, "
      "\"gb_per_s\": 0}\n",
      s);
  cudaFree(p);
  return 0;
}

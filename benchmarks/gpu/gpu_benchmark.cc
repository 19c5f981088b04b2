// tessera_gpu_benchmark [DEVICE]: the GPU backend's kernels through the C ABI on the workloads
// of issue 12's targets (add and copy of 64M float32, a 1-element add end to end, mm 4096^2
// in float32 and bfloat16, softmax and layer_norm of [8192, 4096] bfloat16), for
// scripts/gpu-check.sh, which runs PyTorch's CUDA ops (gpu_torch_peer.py), cuBLAS called
// directly (gpu_cublas_peer.cu) and a bare kernel launch (gpu_bare_launch.cu) in the same device
// call and prints the ratios (docs/gpu_backends.md, "Benchmarks"). One JSON object per line:
//   {"name": ..., "seconds_per_iter": ..., "gb_per_s": ...}
// Plain wall-clock timing of N iterations between two device synchronizations (no Google
// Benchmark: the binary runs on the GPU machine without Debian's packages besides the bundle).
// An op that runs on the CPU fallback is measured all the same (slowly: that is the finding).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "tessera/sdk/runtime.hpp"

namespace {

using tessera::Tensor;

double Seconds(const std::chrono::steady_clock::time_point& start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Time runs `body` `iters` times between synchronizations, after `warmup` untimed runs.
template <typename F>
double Time(tsr_device device, int warmup, int iters, F&& body) {
  for (int i = 0; i < warmup; ++i) body();
  tessera::synchronize(device);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) body();
  tessera::synchronize(device);
  return Seconds(start) / iters;
}

// TimeFor is Time with the iteration count chosen from one timed call, so that a workload takes
// about `budget` seconds whatever its speed (between 3 and `max_iters` iterations): a slow path
// such as the CPU fallback still finishes inside gpu-check.sh's time limit.
template <typename F>
double TimeFor(tsr_device device, double budget, int max_iters, F&& body) {
  const double once = Time(device, 1, 1, body);
  const int iters = static_cast<int>(std::min<double>(max_iters, std::max(3.0, budget / once)));
  return Time(device, 1, iters, body);
}

void Report(const std::string& name, double seconds, double bytes) {
  std::printf("{\"name\": \"%s\", \"seconds_per_iter\": %.9g, \"gb_per_s\": %.6g}\n", name.c_str(),
              seconds, bytes > 0 ? bytes / seconds / 1e9 : 0.0);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    tessera::Runtime runtime;
    const tsr_device device = tessera::parse_device(argc > 1 ? argv[1] : "cuda:0");
    int32_t count = 0;
    tessera::sdk::check(tsr_device_count(device.type, &count));
    if (device.index >= count) {
      std::fprintf(stderr, "tessera_gpu_benchmark: no device %s (%d present)\n",
                   argc > 1 ? argv[1] : "cuda:0", count);
      return 77;
    }
    const tsr_op* add_out = tessera::find_op("add.out");
    const tsr_op* copy = tessera::find_op("copy_");
    const tsr_op* fill = tessera::find_op("fill_.Scalar");
    const tessera::Scalar one(int64_t{1});

    // 64M float32: device-to-device copy bandwidth (read + write) and add (two reads, a write).
    const int64_t n = int64_t{64} << 20;
    Tensor a = Tensor::empty({n}, TSR_DTYPE_FLOAT32, device);
    Tensor b = Tensor::empty({n}, TSR_DTYPE_FLOAT32, device);
    Tensor c = Tensor::empty({n}, TSR_DTYPE_FLOAT32, device);
    tessera::call(fill, a, tessera::Scalar(1.5));
    tessera::call(fill, b, tessera::Scalar(2.5));
    const double bytes = static_cast<double>(n) * 4;
    Report("copy_float32_64M", Time(device, 3, 50, [&] { tessera::call(copy, c, a); }), 2 * bytes);
    Report("add_out_float32_64M",
           Time(device, 3, 50, [&] { tessera::call(add_out, a, b, one, c); }), 3 * bytes);
    Report("add_float32_64M", Time(device, 3, 50, [&] { Tensor d = a + b; }), 3 * bytes);

    // One element, end to end (dispatch, kernel selection, launch; no synchronization per op).
    Tensor x = Tensor::empty({1}, TSR_DTYPE_FLOAT32, device);
    Tensor y = Tensor::empty({1}, TSR_DTYPE_FLOAT32, device);
    Tensor z = Tensor::empty({1}, TSR_DTYPE_FLOAT32, device);
    Report("add_out_float32_1",
           Time(device, 1000, 20000, [&] { tessera::call(add_out, x, y, one, z); }), 0);
    Report("add_float32_1", Time(device, 1000, 20000, [&] { Tensor w = x + y; }), 0);

    // mm 4096^2 into a preallocated out (cuBLAS where the plugin loads it, else the tiled
    // kernel; the summary names the path), float32 and bfloat16.
    const tsr_op* mm_out = tessera::find_op("mm.out");
    const int64_t m = 4096;
    for (const auto& [dtype, name] : {std::pair{TSR_DTYPE_FLOAT32, "float32"},
                                      std::pair{TSR_DTYPE_BFLOAT16, "bfloat16"}}) {
      Tensor p = Tensor::empty({m, m}, dtype, device);
      Tensor q = Tensor::empty({m, m}, dtype, device);
      Tensor r = Tensor::empty({m, m}, dtype, device);
      tessera::call(fill, p, tessera::Scalar(0.01));
      tessera::call(fill, q, tessera::Scalar(0.02));
      Report(std::string("mm_out_") + name + "_4096",
             TimeFor(device, 1.0, 50, [&] { tessera::call(mm_out, p, q, r); }), 0);
    }

    // softmax and layer_norm over the last dimension of [8192, 4096] bfloat16, functional forms
    // (each allocates its output, as PyTorch's do); bytes: one read and one write.
    const int64_t rows = 8192, cols = 4096;
    const double row_bytes = static_cast<double>(rows) * cols * 2;
    Tensor h = Tensor::empty({rows, cols}, TSR_DTYPE_BFLOAT16, device);
    Tensor weight = Tensor::empty({cols}, TSR_DTYPE_BFLOAT16, device);
    Tensor bias = Tensor::empty({cols}, TSR_DTYPE_BFLOAT16, device);
    tessera::call(fill, h, tessera::Scalar(0.5));
    tessera::call(fill, weight, tessera::Scalar(1.0));
    tessera::call(fill, bias, tessera::Scalar(0.0));
    const tsr_op* softmax = tessera::find_op("_softmax");
    const tsr_op* layer_norm = tessera::find_op("native_layer_norm");
    Report("softmax_bfloat16_8192x4096",
           TimeFor(device, 1.0, 200, [&] { tessera::call(softmax, h, int64_t{-1}, false); }),
           2 * row_bytes);
    Report("layer_norm_bfloat16_8192x4096", TimeFor(device, 1.0, 200, [&] {
             tessera::call(layer_norm, h, std::vector<int64_t>{cols}, weight, bias, 1e-5);
           }),
           2 * row_bytes);
    return 0;
  } catch (const tessera::sdk::Error& e) {
    std::fprintf(stderr, "tessera_gpu_benchmark: %s\n", e.what());
    return 1;
  }
}

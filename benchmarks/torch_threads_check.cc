// Tessera's thread count and a co-resident libtorch's never change each other (docs/cpu_backend.md,
// oneDNN): libtorch is set to 1 thread (torch::set_num_threads(1), which writes OpenMP's
// setting that oneDNN also reads), then a 3x3 convolution (8x64x56x56, float32) runs through
// Tessera at its own count and at 1, and libtorch's count is read back. Built where libtorch-dev
// is installed; a check to run by hand, not a test (it times).
//
//   build/bin/tessera_torch_threads_check
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <vector>

#include "tessera/sdk/runtime.hpp"

int main() {
  tessera::Runtime runtime;
  torch::set_num_threads(1);
  static const tsr_op* conv = tessera::find_op("convolution");
  const std::vector<float> xs(8 * 64 * 56 * 56, 0.5f), ws(64 * 64 * 3 * 3, 0.01f);
  const auto x = tessera::Tensor::from_host<float>(xs, {8, 64, 56, 56}, TSR_DTYPE_FLOAT32);
  const auto w = tessera::Tensor::from_host<float>(ws, {64, 64, 3, 3}, TSR_DTYPE_FLOAT32);
  auto ms_per_conv = [&] {
    const std::vector<int64_t> one{1, 1}, zero{0, 0};
    tessera::call1(conv, x, w, std::nullopt, one, one, one, false, zero, int64_t{1});  // warm
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 10; ++i) {
      tessera::call1(conv, x, w, std::nullopt, one, one, one, false, zero, int64_t{1});
    }
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
               .count() /
           10;
  };
  const int threads = tessera::num_threads();
  const double at_count = ms_per_conv();
  const int torch_after = torch::get_num_threads();
  tessera::set_num_threads(1);
  const double at_one = ms_per_conv();
  std::printf("libtorch set to 1 thread; Tessera's 3x3 convolution 8x64x56x56: %.2f ms at "
              "Tessera's %d threads, %.2f ms at 1 (%.2fx); libtorch's count after: %d\n",
              at_count, threads, at_one, at_one / at_count, torch_after);
  return torch_after == 1 ? 0 : 1;
}

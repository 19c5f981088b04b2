// oneDNN paths for pooling and normalization (float32, dense tensors); each returns whether
// it ran.
#pragma once

#include <array>

#include "tessera/sdk/tensor.hpp"

namespace tessera {
namespace cpu {

// Average pooling (max pooling runs nn.cc's loop: oneDNN does not give PyTorch's indices).
struct PoolSpec {
  std::array<int64_t, 2> kernel, stride, padding, dilation;
  bool count_include_pad;
};

// in [N, C, H, W] or [C, H, W]; out the pooled shape.
bool pool_onednn(const sdk::Tensor& in, const sdk::Tensor& out, const PoolSpec& p);
// in viewed as [rows, cols]; writes out, mean and variance (biased) per row.
bool layer_norm_onednn(const sdk::Tensor& in, int64_t rows, int64_t cols, const sdk::Tensor* w,
                       const sdk::Tensor* b, double eps, const sdk::Tensor& out,
                       const sdk::Tensor& mean, const sdk::Tensor& var);
// Inference with the running statistics.
bool batch_norm_onednn(const sdk::Tensor& in, const sdk::Tensor* w, const sdk::Tensor* b,
                       const sdk::Tensor& running_mean, const sdk::Tensor& running_var, double eps,
                       const sdk::Tensor& out);

}  // namespace cpu
}  // namespace tessera

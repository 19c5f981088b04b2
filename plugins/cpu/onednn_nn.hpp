// oneDNN paths for average pooling and layer normalization (float32, dense tensors); each
// returns whether it ran. (Inference batch norm is nn.cc's loop, one multiply-add per element:
// oneDNN's plain-layout kernel took 2.5 times libtorch's loop in the CPU-speed issue's profile.)
#pragma once

#include <array>

#include "tessera/sdk/tensor_view.hpp"

namespace tessera {
namespace cpu {

// Average pooling (max pooling runs nn.cc's loop: oneDNN does not give PyTorch's indices).
struct PoolSpec {
  std::array<int64_t, 2> kernel, stride, padding, dilation;
  bool count_include_pad;
};

// in [N, C, H, W] or [C, H, W]; out the pooled shape.
bool pool_onednn(const sdk::TensorView& in, const sdk::TensorView& out, const PoolSpec& p);
// in viewed as [rows, cols]; writes out, mean and variance (biased) per row.
bool layer_norm_onednn(const sdk::TensorView& in, int64_t rows, int64_t cols,
                       const sdk::TensorView* w, const sdk::TensorView* b, double eps,
                       const sdk::TensorView& out, const sdk::TensorView& mean,
                       const sdk::TensorView& var);
}  // namespace cpu
}  // namespace tessera

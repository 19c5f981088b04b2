// oneDNN's average pooling (float32, dense tensors); returns whether it ran. (Batch and layer
// norm are our loops: nn.cc, layer_norm_rows.cc; docs/cpu_backend.md says why.)
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
}  // namespace cpu
}  // namespace tessera

// Convolution on oneDNN (float32, bfloat16): the primitive chooses its layouts.
#pragma once

#include <array>
#include <cstdint>

#include "tessera/sdk/tensor_view.hpp"

namespace tessera {
namespace cpu {

// Convolution with 1, 2 or 3 spatial dims, always seen as 3 ([N, C, D, H, W]; a missing
// leading spatial dim has size 1), so one loop and one oneDNN call serve all three.
constexpr int kSpatial = 3;
using Spatial = std::array<int64_t, kSpatial>;

struct ConvParams {
  int dims;  // 1, 2 or 3
  bool transposed;
  Spatial stride, padding, dilation, output_padding;
  int64_t groups;
};

// conv_onednn runs the convolution on oneDNN and returns true, or returns false (nothing
// written) where oneDNN cannot (another dtype, an empty tensor, parameters past 32 bits, a
// transposed convolution that crops). `bias` may be null.
bool conv_onednn(const sdk::TensorView& in, const sdk::TensorView& w, const sdk::TensorView* bias,
                 const sdk::TensorView& out, const ConvParams& p);

}  // namespace cpu
}  // namespace tessera

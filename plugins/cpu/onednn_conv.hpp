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

// spatial_of: a per-spatial-dim list argument (stride, padding, ...) placed in the last `dims`
// slots of a Spatial: empty is `fallback`, one element stands for every dim, else one per dim
// (the caller has checked that `v` has 0, 1 or `dims` elements).
inline Spatial spatial_of(sdk::IntSpan v, int dims, int64_t fallback) {
  Spatial r{1, 1, 1};
  if (fallback == 0) r = {0, 0, 0};
  for (int d = 0; d < dims; ++d) {
    r[kSpatial - dims + d] = v.size == 0 ? fallback : v.size == 1 ? v[0] : v[d];
  }
  return r;
}

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

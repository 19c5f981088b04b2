// Pointwise (1x1) convolution as matrix products on plain NCHW memory (float32).
#pragma once

#include "onednn_conv.hpp"
#include "tessera/sdk/tensor_view.hpp"

namespace tessera {
namespace cpu {

// conv_pointwise_gemm runs a float32 convolution whose kernel is 1 in every spatial dim (stride
// 1, no padding or dilation, one group, not transposed) on contiguous input and output as
// products on dnnl_sgemm and returns true; it returns false for any other (nothing written), or
// when dnnl_sgemm fails (some images may be written; the caller's oneDNN path writes them all).
//
// Why: oneDNN's convolutions choose NHWC or blocked layouts, so on plain NCHW tensors each call
// reorders its input in and its output back; a 1x1 convolution is a product per image, W [O, C]
// by X [C, H * W], which needs neither. MobileNetV3-small at batch 8 spent more time in those
// reorders than in its convolutions (ONEDNN_VERBOSE=1, docs/cpu_backend.md).
bool conv_pointwise_gemm(const sdk::TensorView& in, const sdk::TensorView& w,
                         const sdk::TensorView* bias, const sdk::TensorView& out,
                         const ConvParams& p);

}  // namespace cpu
}  // namespace tessera

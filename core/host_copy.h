// Copies between a strided host tensor and a dense host buffer in row-major logical order.
// Only for tensors whose memory is host memory (CPU); other devices copy through their own
// functions.
#pragma once

#include "core/tensor.h"

namespace tessera {

// PackHost copies `src`'s elements into dst (numel * itemsize bytes).
void PackHost(const Tensor& src, void* dst);
// UnpackHost copies numel * itemsize bytes from src into `dst`'s elements.
void UnpackHost(const void* src, const Tensor& dst);

}  // namespace tessera

// The GPU backends' elementwise ops (elementwise_ops.cc): binary, unary and the other pointwise
// ops, copy_ and fill_, as out= kernels on the elementwise iterator.
#pragma once

#include "tessera/sdk/plugin.hpp"

namespace tessera {
namespace gpu {

// RegisterElementwiseOps registers the elementwise ops' kernels with `lib` (gpu_plugin.cc's
// registration block, before its cpu_fallback()).
void RegisterElementwiseOps(sdk::Library& lib);

// CopyOnDevice is copy_ on one device (self <- src, any dtypes, src broadcast to self), for the
// other op files (a product computed into a scratch tensor and copied into a strided out).
sdk::Tensor CopyOnDevice(const sdk::Tensor& self, const sdk::Tensor& src, bool non_blocking);

}  // namespace gpu
}  // namespace tessera

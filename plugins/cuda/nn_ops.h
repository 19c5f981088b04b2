// The GPU backends' nn ops (nn_ops.cc): native_layer_norm, native_batch_norm, avg_pool2d,
// max_pool2d_with_indices, convolution and linear as out= kernels (Note [GPU nn kernels] in
// nn.h; linear on the matrix products' path).
#pragma once

#include "tessera/sdk/plugin.hpp"

namespace tessera {
namespace gpu {

// RegisterNnOps registers the nn ops' kernels with `lib` (gpu_plugin.cc's registration block,
// before its cpu_fallback()).
void RegisterNnOps(sdk::Library& lib);

}  // namespace gpu
}  // namespace tessera

// The GPU backends' index, shape and sort ops (index_ops.cc): gather, index_select, scatter,
// scatter_add, flip, tril, triu, clone, sort and topk.
#pragma once

#include "tessera/sdk/plugin.hpp"

namespace tessera {
namespace gpu {

// RegisterIndexOps registers the ops' kernels with `lib` (gpu_plugin.cc's registration block).
void RegisterIndexOps(sdk::Library& lib);

}  // namespace gpu
}  // namespace tessera

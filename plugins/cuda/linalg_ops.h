// The GPU backends' matrix products (linalg_ops.cc): mm, bmm and addmm as out= kernels on cuBLAS
// or the tiled kernel.
#pragma once

#include <string>

#include "tessera/sdk/plugin.hpp"

namespace tessera {
namespace gpu {

// RegisterLinalgOps registers the matrix products' kernels with `lib` (gpu_plugin.cc's
// registration block, before its cpu_fallback()).
void RegisterLinalgOps(sdk::Library& lib);

// CheckBlasSetting: why TESSERA_GPU_BLAS's value refuses the plugin's load, or "" (docs/build.md).
std::string CheckBlasSetting();

}  // namespace gpu
}  // namespace tessera

// The GPU backends' random kernels (random_ops.cc): uniform_ and normal_, the two kernels every
// other random op is a runtime composite over (docs/random.md).
#pragma once

#include "tessera/sdk/plugin.hpp"

namespace tessera {
namespace gpu {

// RegisterRandomOps registers uniform_ and normal_ with `lib` (gpu_plugin.cc's registration
// block).
void RegisterRandomOps(sdk::Library& lib);

}  // namespace gpu
}  // namespace tessera

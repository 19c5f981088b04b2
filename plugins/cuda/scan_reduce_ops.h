// The GPU plugin's scans and its other reductions: cumsum, cumprod (scan.h, kernels_scan.cu),
// max / min (all, and .dim with indices), any, all, logsumexp, norm (reduce.h,
// kernels_reduce.cu), as out= kernels.
#pragma once

#include "tessera/sdk/plugin.hpp"

namespace tessera {
namespace gpu {

// RegisterScanReduceOps registers this family's kernels on `lib` (gpu_plugin.cc calls it).
void RegisterScanReduceOps(::tessera::sdk::Library& lib);

}  // namespace gpu
}  // namespace tessera

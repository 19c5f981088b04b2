// The vendor's runtime API under CUDA's names: the plugins' sources are written against CUDA's
// runtime API once, and the HIP build (TESSERA_GPU_HIP, plugins/hip) maps each name used to
// HIP's in plugins/hip/vendor_hip.h, the way ggml's vendors/hip.h does.
#pragma once

#if defined(TESSERA_GPU_HIP)

#include "vendor_hip.h"  // plugins/hip, on the HIP build's include path

#else  // CUDA

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#else
#include <cuda_runtime_api.h>
#endif

#define TESSERA_GPU_VENDOR "CUDA"
#define TESSERA_GPU_DEVICE_TYPE TSR_DEVICE_CUDA
#define TESSERA_GPU_PLUGIN_NAME "cuda"

#endif

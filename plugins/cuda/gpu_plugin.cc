// libtessera_cuda.so and libtessera_hip.so: the GPU backends, one source for both (the HIP build,
// plugins/hip, defines TESSERA_GPU_HIP; gpu_runtime.h maps the runtime API). A plugin like any
// other: the SDK and the C ABI headers, one exported symbol. This file is its registration
// block; the kernels are in the op files, shaped like plugins/cpu: elementwise_ops.cc (the
// pointwise ops, copy_, fill_), scan_reduce_ops.cc (reductions, softmax, scans), linalg_ops.cc
// (matrix products), nn_ops.cc, index_ops.cc, random_ops.cc (uniform_ and normal_, under every
// other random op). Every other op runs on the CPU fallback, which conformance reports as
// such. docs/gpu_backends.md.
#include <string>

#include "dnn_ops.h"
#include "elementwise_ops.h"
#include "gpu_device.h"
#include "index_ops.h"
#include "linalg_ops.h"
#include "nn_ops.h"
#include "random_ops.h"
#include "scan_reduce_ops.h"
#include "tessera/sdk/plugin.hpp"

#ifndef TESSERA_GPU_PLUGIN_VERSION
#define TESSERA_GPU_PLUGIN_VERSION "0.0.0"
#endif

namespace gpu = ::tessera::gpu;

// A 1.1 runtime at least (min_abi_minor 1): the kernels leave the checks that are op semantics
// (alpha, gelu's approximate, ...) to the call plan, which a 1.0 runtime does not make.
TESSERA_PLUGIN(lib) {
  lib.describe(TESSERA_GPU_PLUGIN_NAME, TESSERA_GPU_PLUGIN_VERSION, TESSERA_GPU_DEVICE_TYPE, "",
               /*min_abi_minor=*/1);
  if (const std::string error = gpu::CheckAllocatorSetting(); !error.empty()) {
    tessera::sdk::fail(TSR_INVALID_ARGUMENT, error);  // refuses the load, with the reason
  }
  if (const std::string error = gpu::CheckBlasSetting(); !error.empty()) {
    tessera::sdk::fail(TSR_INVALID_ARGUMENT, error);
  }
  if (const std::string error = gpu::CheckDnnSetting(); !error.empty()) {
    tessera::sdk::fail(TSR_INVALID_ARGUMENT, error);
  }
  static const bool logged = [] {  // once, though the block runs at init and at registration
    std::string why;
    if (gpu::DeviceCount(&why) == 0) {
      // The plugin still registers its device (with 0 devices) and kernels: the load report
      // says "devices: 0", and tensors on the device are refused as not existing.
      const std::string message = std::string(TESSERA_GPU_PLUGIN_NAME ": no devices (") + why + ")";
      tessera::sdk::api().log(TSR_LOG_INFO, tessera::sdk::to_c(message));
    }
    return true;
  }();
  (void)logged;
  lib.device(gpu::DeviceInterface());
  gpu::RegisterElementwiseOps(lib);
  gpu::RegisterActivationOps(lib);
  gpu::RegisterScanReduceOps(lib);
  gpu::RegisterLinalgOps(lib);
  gpu::RegisterNnOps(lib);
  gpu::RegisterIndexOps(lib);
  gpu::RegisterRandomOps(lib);
  lib.cpu_fallback();
}

// The GPU plugins' device: tsr_device_interface over the vendor's runtime API (CUDA, or HIP
// through gpu_runtime.h), with a caching allocator per device (caching_allocator.h) and every
// ABI 1.1 slot for asynchronous devices (tessera/c/device.h, Note [Asynchronous devices]).
#pragma once

#include <cstdint>
#include <string>

#include "gpu_runtime.h"
#include "tessera/c/device.h"

namespace tessera {
namespace gpu {

// DeviceInterface: the table, filled with gpu_device.cc's functions.
const tsr_device_interface& DeviceInterface();

// DeviceCount: the devices the vendor's runtime reports; 0 when it reports an error (no
// driver, no device), with the reason in *why (for the log).
int32_t DeviceCount(std::string* why = nullptr);

// CheckAllocatorSetting: TESSERA_GPU_ALLOCATOR holds a known value ("" or an error naming it).
std::string CheckAllocatorSetting();

// ErrorText: the vendor's name and description of an error ("cudaErrorIllegalAddress: an
// illegal memory access was encountered").
std::string ErrorText(cudaError_t e);

// DeviceGuard makes device `index` the calling thread's current device for the vendor's
// runtime (kernels launch there, cudaMalloc allocates there) and restores the previous one.
class DeviceGuard {
 public:
  explicit DeviceGuard(int32_t index);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
  int32_t index_;
};

}  // namespace gpu
}  // namespace tessera

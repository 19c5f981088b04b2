// Copies between a strided host tensor and a dense host buffer in row-major logical order.
// Only for tensors whose memory is host memory (CPU); other devices copy through their own
// functions.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/tensor.h"

namespace tessera {

// PackHost copies `src`'s elements into dst (numel * itemsize bytes).
void PackHost(const Tensor& src, void* dst);
// UnpackHost copies numel * itemsize bytes from src into `dst`'s elements.
void UnpackHost(const void* src, const Tensor& dst);

// Copies between a tensor on any device and a dense host buffer (row-major logical order).
// Host tensors copy directly; other devices through the functions that the layer owning the
// device interfaces (runtime/device_copy.cc) installs with SetDeviceHostCopies. Used by composites
// that move tensors between devices (`_to_copy`).
using DeviceToHostFn = absl::Status (*)(const Tensor& src, void* dst);
using HostToDeviceFn = absl::Status (*)(const void* src, const Tensor& dst);
void SetDeviceHostCopies(DeviceToHostFn to_host, HostToDeviceFn from_host);
absl::Status CopyTensorToHost(const Tensor& src, void* dst);
absl::Status CopyHostToTensor(const void* src, const Tensor& dst);

// A copy between two devices of one backend (cuda:0 -> cuda:1) that the backend does itself,
// without host memory: returns true when it copied, false when it cannot (other device types,
// layouts it does not take); `non_blocking` as copy_'s. Installed by the same layer.
using DeviceToDeviceFn = absl::StatusOr<bool> (*)(const Tensor& src, const Tensor& dst,
                                                  bool non_blocking);
void SetDeviceToDeviceCopy(DeviceToDeviceFn fn);
absl::StatusOr<bool> CopyDeviceToDevice(const Tensor& src, const Tensor& dst, bool non_blocking);

}  // namespace tessera

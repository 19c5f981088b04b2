// Devices registered through the C ABI: the allocator and copy functions of each device type.
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "core/allocator.h"
#include "core/tensor.h"
#include "dispatcher/value.h"
#include "tessera/c/device.h"

namespace tessera {
namespace capi {

// CopyToHost / CopyFromHost move a tensor's elements (row-major logical order) between a host
// buffer of numel * itemsize bytes and the tensor, on any device: host tensors directly, other
// devices through their registered copy functions (the span of storage the view covers goes
// through a host staging buffer, so strided views work too).
absl::Status CopyToHost(const Tensor& src, void* dst);
absl::Status CopyFromHost(const void* src, const Tensor& dst);

// CopyToHostAsync / CopyFromHostAsync: the same queued on `stream` (NULL: the current stream of
// the tensor's device), as tsr_tensor_copy_*_async promise: asynchronously when the tensor is
// contiguous and the device has the asynchronous copy slot, else synchronously after the stream.
absl::Status CopyToHostAsync(const Tensor& src, void* dst, const tsr_stream* stream);
absl::Status CopyFromHostAsync(const void* src, const Tensor& dst, const tsr_stream* stream);

// Orphaned says whether `t` is device memory of a plugin instance that no longer provides its
// device type (unloaded, maybe replaced): see Note [Device memory belongs to its plugin
// instance] in device.cc. A few loads, no lock: kernels check their arguments with it.
inline bool Orphaned(const Tensor& t) {
  if (!t.defined()) return false;
  const DeviceType type = t.device().type;
  if (type == DeviceType::kCPU || type == DeviceType::kMeta) return false;
  const Allocator* allocator = t.impl()->storage()->allocator();
  return allocator != nullptr && allocator != GetAllocator(type);
}

// OrphanedError is the error for an Orphaned tensor `t` that `what` ("copying float32[2] on
// npu:0", "abs: argument 0") needed.
absl::Status OrphanedError(const Tensor& t, std::string_view what);

// CheckArguments returns OrphanedError for the first Orphaned tensor (or tensor in a list) on
// a kernel's stack, before the kernel `kernel` of `op` runs.
absl::Status CheckArguments(const Stack& stack, std::string_view op, std::string_view kernel);

}  // namespace capi
}  // namespace tessera

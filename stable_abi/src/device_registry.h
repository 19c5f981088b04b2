// Devices registered through the C ABI: the allocator and copy functions of each device type.
#pragma once

#include <memory>

#include "absl/status/status.h"
#include "core/tensor.h"
#include "tessera/c/device.h"

namespace tessera {
namespace capi {

// CopyToHost / CopyFromHost move a tensor's elements (row-major logical order) between a host
// buffer of numel * itemsize bytes and the tensor, on any device: host tensors directly, other
// devices through their registered copy functions (the span of storage the view covers goes
// through a host staging buffer, so strided views work too).
absl::Status CopyToHost(const Tensor& src, void* dst);
absl::Status CopyFromHost(const void* src, const Tensor& dst);

}  // namespace capi
}  // namespace tessera

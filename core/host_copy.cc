#include "core/host_copy.h"

#include <atomic>
#include <cstring>

#include "absl/strings/str_format.h"

namespace tessera {
namespace {

// ForEachRun calls fn(element_offset, count) for each run of `count` elements that are
// adjacent in memory (stride 1 in the innermost dim) or single elements otherwise, in
// row-major logical order.
template <typename Fn>
void ForEachRun(const Tensor& t, Fn&& fn) {
  const int64_t ndim = t.dim();
  if (t.numel() == 0) return;
  if (t.is_contiguous() || ndim == 0) {
    fn(t.storage_offset(), t.numel());
    return;
  }
  const IntArrayRef sizes = t.sizes(), strides = t.strides();
  const int64_t inner = sizes[ndim - 1];
  const bool inner_dense = strides[ndim - 1] == 1;
  DimVector index(ndim, 0);
  while (true) {
    int64_t offset = t.storage_offset();
    for (int64_t d = 0; d < ndim - 1; ++d) offset += index[d] * strides[d];
    if (inner_dense) {
      fn(offset, inner);
    } else {
      for (int64_t i = 0; i < inner; ++i) fn(offset + i * strides[ndim - 1], 1);
    }
    int64_t d = ndim - 2;
    for (; d >= 0; --d) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace

void PackHost(const Tensor& src, void* dst) {
  const size_t item = src.impl()->itemsize();
  const char* base = static_cast<const char*>(src.impl()->storage()->data());
  char* out = static_cast<char*>(dst);
  ForEachRun(src, [&](int64_t offset, int64_t count) {
    std::memcpy(out, base + offset * item, count * item);
    out += count * item;
  });
}

void UnpackHost(const void* src, const Tensor& dst) {
  const size_t item = dst.impl()->itemsize();
  char* base = static_cast<char*>(dst.impl()->storage()->data());
  const char* in = static_cast<const char*>(src);
  ForEachRun(dst, [&](int64_t offset, int64_t count) {
    std::memcpy(base + offset * item, in, count * item);
    in += count * item;
  });
}

namespace {
std::atomic<DeviceToHostFn> g_to_host{nullptr};
std::atomic<HostToDeviceFn> g_from_host{nullptr};
std::atomic<DeviceToDeviceFn> g_device_to_device{nullptr};

absl::Status NoDeviceCopies(const Tensor& t) {
  return absl::FailedPreconditionError(absl::StrFormat(
      "cannot copy %s to or from the host: no backend provides copies for its device",
      t.ToString()));
}
}  // namespace

void SetDeviceHostCopies(DeviceToHostFn to_host, HostToDeviceFn from_host) {
  g_to_host.store(to_host);
  g_from_host.store(from_host);
}

void SetDeviceToDeviceCopy(DeviceToDeviceFn fn) { g_device_to_device.store(fn); }

absl::StatusOr<bool> CopyDeviceToDevice(const Tensor& src, const Tensor& dst, bool non_blocking) {
  DeviceToDeviceFn fn = g_device_to_device.load();
  return fn ? fn(src, dst, non_blocking) : false;
}

absl::Status CopyTensorToHost(const Tensor& src, void* dst) {
  if (src.device().type == DeviceType::kCPU) {
    PackHost(src, dst);
    return absl::OkStatus();
  }
  DeviceToHostFn fn = g_to_host.load();
  return fn ? fn(src, dst) : NoDeviceCopies(src);
}

absl::Status CopyHostToTensor(const void* src, const Tensor& dst) {
  if (dst.device().type == DeviceType::kCPU) {
    UnpackHost(src, dst);
    return absl::OkStatus();
  }
  HostToDeviceFn fn = g_from_host.load();
  return fn ? fn(src, dst) : NoDeviceCopies(dst);
}

}  // namespace tessera

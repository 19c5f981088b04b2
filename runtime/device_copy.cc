// Copies between host and device memory and between devices, through the plugins' device
// interfaces (synchronous and stream-ordered), installed into core/host_copy.h for the
// dispatcher's composites when the runtime loads. The registry they look devices up in is
// device.cc.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_format.h"
#include "core/allocator.h"
#include "core/host_copy.h"
#include "core/status_macros.h"
#include "runtime/device_registry.h"
#include "runtime/handles.h"
#include "runtime/plugin_device.h"
#include "runtime/runtime_state.h"

namespace tessera {
namespace capi {
namespace {

// The storage span a view covers, in bytes from the storage's start.
struct Span {
  size_t offset_bytes;
  size_t nbytes;
};
absl::StatusOr<Span> ViewSpan(const Tensor& t) {
  TSR_ASSIGN_OR_RETURN(const int64_t elements, StorageElementsFor(t.sizes(), t.strides()));
  const size_t item = t.impl()->itemsize();
  return Span{static_cast<size_t>(t.storage_offset()) * item, static_cast<size_t>(elements) * item};
}

absl::StatusOr<PluginDevice*> DeviceFor(const Tensor& t, const char* what) {
  if (Orphaned(t)) {
    return OrphanedError(t, absl::StrFormat("%s %s", what, t.ToString()));
  }
  PluginDevice* device = RegisteredDevice(t.device().type);
  if (device == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s %s: no device interface is registered for device type '%s'", what,
                        t.ToString(), DeviceTypeName(t.device().type)));
  }
  TSR_RETURN_IF_ERROR(device->CheckIndex(t.device()));
  return device;
}

// A host tensor over `staging` with the same strides as `t`, its offset moved to span-relative.
Tensor StagingView(const Tensor& t, void* staging, const Span& span) {
  DataPtr data;
  data.data = staging;
  data.device = Device(DeviceType::kCPU);
  return *FromStorage(Ref<StorageImpl>::Make(std::move(data), span.nbytes), t.dtype(), t.sizes(),
                      t.strides(), 0);
}

}  // namespace

// The dispatcher's composites move tensors between devices through core/host_copy.h; the
// device interfaces live here, so this layer installs the copies when the runtime loads.
namespace {

absl::StatusOr<bool> CopyBetweenDevices(const Tensor& src, const Tensor& dst, bool non_blocking);

const bool kDeviceCopiesInstalled = [] {
  SetDeviceHostCopies(&CopyToHost, &CopyFromHost);
  SetDeviceToDeviceCopy(&CopyBetweenDevices);
  return true;
}();

}  // namespace

namespace {

// CopyStatus passes a device copy's error on with what was being copied, quoting the device's
// own text (an asynchronous error of earlier work surfaces here, Note [Asynchronous devices]).
absl::Status CopyStatus(tsr_error* error, const char* what, const Tensor& t) {
  absl::Status status = StatusFrom(error);
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrFormat("%s %s: %s", what, t.ToString(), status.message()));
}

}  // namespace

absl::Status CopyToHost(const Tensor& src, void* dst) {
  if (src.numel() == 0) return absl::OkStatus();
  if (src.device().type == DeviceType::kCPU) {
    PackHost(src, dst);
    return absl::OkStatus();
  }
  constexpr const char* kWhat = "copying to the host";
  TSR_ASSIGN_OR_RETURN(PluginDevice * device, DeviceFor(src, kWhat));
  TSR_ASSIGN_OR_RETURN(const Span span, ViewSpan(src));
  const tsr_device_interface& f = device->iface();
  const char* base = static_cast<const char*>(src.impl()->storage()->data());
  if (src.is_contiguous()) {
    return CopyStatus(f.copy_device_to_host(f.context, src.device().index, dst,
                                            base + span.offset_bytes, span.nbytes),
                      kWhat, src);
  }
  std::vector<char> staging(span.nbytes);
  TSR_RETURN_IF_ERROR(
      CopyStatus(f.copy_device_to_host(f.context, src.device().index, staging.data(),
                                       base + span.offset_bytes, span.nbytes),
                 kWhat, src));
  PackHost(StagingView(src, staging.data(), span), dst);
  return absl::OkStatus();
}

absl::Status CopyFromHost(const void* src, const Tensor& dst) {
  if (dst.numel() == 0) return absl::OkStatus();
  if (dst.device().type == DeviceType::kCPU) {
    UnpackHost(src, dst);
    return absl::OkStatus();
  }
  constexpr const char* kWhat = "copying from the host into";
  TSR_ASSIGN_OR_RETURN(PluginDevice * device, DeviceFor(dst, kWhat));
  TSR_ASSIGN_OR_RETURN(const Span span, ViewSpan(dst));
  const tsr_device_interface& f = device->iface();
  char* base = static_cast<char*>(dst.impl()->storage()->data());
  if (dst.is_contiguous()) {
    return CopyStatus(f.copy_host_to_device(f.context, dst.device().index, base + span.offset_bytes,
                                            src, span.nbytes),
                      kWhat, dst);
  }
  // Read-modify-write of the covered span keeps the elements between the view's untouched.
  std::vector<char> staging(span.nbytes);
  TSR_RETURN_IF_ERROR(
      CopyStatus(f.copy_device_to_host(f.context, dst.device().index, staging.data(),
                                       base + span.offset_bytes, span.nbytes),
                 kWhat, dst));
  UnpackHost(src, StagingView(dst, staging.data(), span));
  return CopyStatus(f.copy_host_to_device(f.context, dst.device().index, base + span.offset_bytes,
                                          staging.data(), span.nbytes),
                    kWhat, dst);
}

namespace {

// AsyncCopyStream: the plugin's handle of the stream an asynchronous copy of `t` goes on:
// `stream`'s, which must be of t's device and instance, or t's device's current one.
absl::StatusOr<void*> AsyncCopyStream(const Tensor& t, const tsr_stream* stream, const char* fn) {
  const Device device = t.device();
  if (stream == nullptr) {
    return tsr_stream_current_native(tsr_device{static_cast<int32_t>(device.type), device.index});
  }
  if (stream->device != device) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: the stream is of %s, the tensor %s of %s; expected a stream of the "
                        "tensor's device",
                        fn, DeviceToString(stream->device), t.ToString(), DeviceToString(device)));
  }
  if (stream->plugin != nullptr && !stream->plugin->Current()) {
    return stream->plugin->NotCurrentError(stream->device, absl::StrFormat("%s: the stream", fn));
  }
  return stream->native;
}

// SynchronizeStream waits for `native` (a stream of `device`) on the host: what an
// asynchronous copy without its slot, or of a strided view, does before copying.
tsr_error* SynchronizeStream(PluginDevice* device, int32_t index, void* native) {
  const tsr_device_interface& f = device->iface();
  return f.stream_synchronize != nullptr ? f.stream_synchronize(f.context, index, native)
                                         : f.synchronize(f.context, index);
}

}  // namespace

namespace {

// Note [Copies between devices of one backend]
// copy_ from cuda:0 to cuda:1 (same sizes and dtype, both dense) goes from device to device,
// not through host memory. Blocking: the 1.0 copy_device_to_device, which the plugin orders
// after both devices' current streams. Non-blocking, on a device with the slots for it: the
// destination's current stream waits for the source's (an event), the copy is queued there
// (copy_device_to_device_async), and the source's stream waits for the copy in turn, so that
// neither tensor's memory is handed out again early in its allocator's stream order (what
// PyTorch's copy_ between devices does). The events may be waited for by a stream of the other
// device of the plugin (tsr_device_interface.stream_wait_event says so).
absl::StatusOr<bool> CopyBetweenDevices(const Tensor& src, const Tensor& dst, bool non_blocking) {
  const Device from = src.device(), to = dst.device();
  if (from.type != to.type || from.type == DeviceType::kCPU || from.type == DeviceType::kMeta) {
    return false;
  }
  if (src.numel() == 0) return true;
  if (!src.is_contiguous() || !dst.is_contiguous()) return false;
  TSR_ASSIGN_OR_RETURN(PluginDevice * device, DeviceFor(src, "copying from"));
  TSR_ASSIGN_OR_RETURN(PluginDevice * target, DeviceFor(dst, "copying into"));
  if (device != target) return false;
  TSR_ASSIGN_OR_RETURN(const Span from_span, ViewSpan(src));
  TSR_ASSIGN_OR_RETURN(const Span to_span, ViewSpan(dst));
  const char* from_data =
      static_cast<const char*>(src.impl()->storage()->data()) + from_span.offset_bytes;
  char* to_data = static_cast<char*>(dst.impl()->storage()->data()) + to_span.offset_bytes;
  const tsr_device_interface& f = device->iface();
  const char* what = "copying between devices";
  if (!non_blocking || f.copy_device_to_device_async == nullptr || f.event_create == nullptr ||
      f.event_record == nullptr || f.stream_wait_event == nullptr) {
    TSR_RETURN_IF_ERROR(CopyStatus(f.copy_device_to_device(f.context, to.index, to_data, from.index,
                                                           from_data, to_span.nbytes),
                                   what, dst));
    return true;
  }
  void* from_stream =
      tsr_stream_current_native(tsr_device{static_cast<int32_t>(from.type), from.index});
  void* to_stream = tsr_stream_current_native(tsr_device{static_cast<int32_t>(to.type), to.index});
  // order makes stream `waiter` (of device `waiter_index`) wait for the work queued so far on
  // `stream` (of device `index`).
  auto order = [&](int32_t index, void* stream, int32_t waiter_index,
                   void* waiter) -> absl::Status {
    void* event = nullptr;
    TSR_RETURN_IF_ERROR(CopyStatus(f.event_create(f.context, index, &event), what, dst));
    absl::Status s = CopyStatus(f.event_record(f.context, index, event, stream), what, dst);
    if (s.ok()) {
      s = CopyStatus(f.stream_wait_event(f.context, waiter_index, waiter, event), what, dst);
    }
    if (f.event_destroy != nullptr) f.event_destroy(f.context, index, event);
    return s;
  };
  TSR_RETURN_IF_ERROR(order(from.index, from_stream, to.index, to_stream));
  TSR_RETURN_IF_ERROR(
      CopyStatus(f.copy_device_to_device_async(f.context, to.index, to_data, from.index, from_data,
                                               to_span.nbytes, to_stream),
                 what, dst));
  TSR_RETURN_IF_ERROR(order(to.index, to_stream, from.index, from_stream));
  return true;
}

}  // namespace

absl::Status CopyToHostAsync(const Tensor& src, void* dst, const tsr_stream* stream) {
  constexpr const char* kFn = "tsr_tensor_copy_to_host_async";
  TSR_ASSIGN_OR_RETURN(void* native, AsyncCopyStream(src, stream, kFn));
  if (src.numel() == 0 || src.device().type == DeviceType::kCPU) return CopyToHost(src, dst);
  TSR_ASSIGN_OR_RETURN(PluginDevice * device, DeviceFor(src, "copying to the host"));
  const tsr_device_interface& f = device->iface();
  if (src.is_contiguous() && f.copy_device_to_host_async != nullptr) {
    TSR_ASSIGN_OR_RETURN(const Span span, ViewSpan(src));
    const char* base = static_cast<const char*>(src.impl()->storage()->data());
    return CopyStatus(f.copy_device_to_host_async(f.context, src.device().index, dst,
                                                  base + span.offset_bytes, span.nbytes, native),
                      kFn, src);
  }
  TSR_RETURN_IF_ERROR(CopyStatus(SynchronizeStream(device, src.device().index, native), kFn, src));
  return CopyToHost(src, dst);
}

absl::Status CopyFromHostAsync(const void* src, const Tensor& dst, const tsr_stream* stream) {
  constexpr const char* kFn = "tsr_tensor_copy_from_host_async";
  TSR_ASSIGN_OR_RETURN(void* native, AsyncCopyStream(dst, stream, kFn));
  if (dst.numel() == 0 || dst.device().type == DeviceType::kCPU) return CopyFromHost(src, dst);
  TSR_ASSIGN_OR_RETURN(PluginDevice * device, DeviceFor(dst, "copying from the host into"));
  const tsr_device_interface& f = device->iface();
  if (dst.is_contiguous() && f.copy_host_to_device_async != nullptr) {
    TSR_ASSIGN_OR_RETURN(const Span span, ViewSpan(dst));
    char* base = static_cast<char*>(dst.impl()->storage()->data());
    return CopyStatus(
        f.copy_host_to_device_async(f.context, dst.device().index, base + span.offset_bytes, src,
                                    span.nbytes, native),
        kFn, dst);
  }
  TSR_RETURN_IF_ERROR(CopyStatus(SynchronizeStream(device, dst.device().index, native), kFn, dst));
  return CopyFromHost(src, dst);
}

}  // namespace capi
}  // namespace tessera

// tsr_device_register and friends: a C device interface becomes the device type's Allocator
// and copy functions.
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "core/allocator.h"
#include "core/host_copy.h"
#include "core/status_macros.h"
#include "stable_abi/src/device_registry.h"
#include "stable_abi/src/handles.h"
#include "stable_abi/src/runtime_state.h"

namespace tessera {
namespace capi {
namespace {

// PluginDevice adapts one registered tsr_device_interface. Never destroyed: the core's
// allocator table and in-flight allocations may still point at it after deregistration; what
// deregistration releases is the plugin it keeps alive (`owner`), and the closed gate keeps
// new allocations from reaching an unloaded plugin.
class PluginDevice final : public Allocator {
 public:
  PluginDevice(const tsr_device_interface& iface, int32_t count, std::shared_ptr<PluginGate> gate,
               std::shared_ptr<const void> owner)
      : iface_(iface), count_(count), gate_(std::move(gate)), owner_(std::move(owner)) {
    for (int32_t i = 0; i < count_; ++i) frees_.push_back(FreeContext{this, i});
  }

  absl::StatusOr<DataPtr> Allocate(Device device, size_t nbytes) override {
    TSR_RETURN_IF_ERROR(CheckIndex(device));
    if (!gate_->Enter()) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "cannot allocate on %s: its device was unregistered", DeviceToString(device)));
    }
    std::shared_ptr<const void> owner = Owner();
    void* data = nullptr;
    absl::Status status;
    {
      GateExit exit(gate_.get());
      status = StatusFrom(iface_.allocate(iface_.context, device.index, nbytes, &data));
    }
    if (!status.ok()) {
      return absl::Status(status.code(), absl::StrFormat("allocating %d bytes on %s: %s", nbytes,
                                                         DeviceToString(device), status.message()));
    }
    // A non-empty tensor whose data is NULL would hand NULL to the device's copy functions and
    // kernels later, far from the cause; only an empty allocation may be NULL.
    if (data == nullptr && nbytes > 0) {
      return absl::InternalError(absl::StrFormat(
          "allocating %d bytes on %s: plugin '%s': allocate returned success with a NULL pointer "
          "(expected memory of %d bytes, or an error)",
          nbytes, DeviceToString(device), gate_->plugin_name(), nbytes));
    }
    DataPtr out;
    out.data = data;
    out.device = device;
    out.deleter = &PluginDevice::Free;
    out.deleter_context = &frees_[device.index];
    out.owner = std::move(owner);  // the plugin stays loaded while this memory exists
    return out;
  }

  absl::Status CheckIndex(Device device) const {
    if (device.index < 0 || device.index >= count_) {
      return absl::InvalidArgumentError(
          absl::StrFormat("device %s does not exist: %s has %d device(s)", DeviceToString(device),
                          DeviceTypeName(device.type), count_));
    }
    return absl::OkStatus();
  }

  // Synchronize runs the plugin's synchronize inside the gate, like Allocate: there is no
  // tensor (and so no owner reference) to keep the plugin's code mapped, and an unload racing
  // this call must wait for it rather than unmap the code under it.
  absl::Status Synchronize(Device device) {
    TSR_RETURN_IF_ERROR(CheckIndex(device));
    if (!gate_->Enter()) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "tsr_device_synchronize: cannot synchronize %s: its device was unregistered (plugin "
          "'%s' was unloaded)",
          DeviceToString(device), gate_->plugin_name()));
    }
    GateExit exit(gate_.get());
    return StatusFrom(iface_.synchronize(iface_.context, device.index));
  }

  const std::string& plugin_name() const { return gate_->plugin_name(); }
  const tsr_device_interface& iface() const { return iface_; }
  int32_t count() const { return count_; }
  std::shared_ptr<const void> Owner() {
    absl::MutexLock lock(&mu_);
    return owner_;
  }
  void Unregister() {
    gate_->Close();
    absl::MutexLock lock(&mu_);
    owner_.reset();
  }

 private:
  struct FreeContext {
    PluginDevice* device;
    int32_t index;
  };
  static void Free(void* data, void* context) {
    const auto* c = static_cast<const FreeContext*>(context);
    c->device->iface_.free(c->device->iface_.context, c->index, data);
  }

  const tsr_device_interface iface_;
  const int32_t count_;
  std::vector<FreeContext> frees_;  // one per index, stable addresses (never resized)
  std::shared_ptr<PluginGate> gate_;
  absl::Mutex mu_;
  std::shared_ptr<const void> owner_ ABSL_GUARDED_BY(mu_);
};

// Note [Device count cap]
// A device interface reports its device count once, at registration, and the runtime keeps a
// little state per device index (the context its free function gets), allocated up front. A
// count is a plugin's word: one reporting INT32_MAX devices made the runtime allocate 32 GiB.
// So a device type has at most kMaxDeviceCount devices (far above any machine's accelerator
// count; PyTorch's device index is 8 bits); a larger or negative count fails the registration
// with INVALID_ARGUMENT and refuses the plugin that registers it (with its load report, also
// when its register_fn ignores the error: its device would be unusable). docs/plugin_guide.md.
constexpr int32_t kMaxDeviceCount = 1024;

absl::Mutex g_devices_mu;
// The registered device of each type, and every PluginDevice ever made (kept, see above).
std::array<PluginDevice*, kNumDeviceTypes> g_devices ABSL_GUARDED_BY(g_devices_mu) = {};
std::vector<std::unique_ptr<PluginDevice>>* const g_all_devices ABSL_GUARDED_BY(g_devices_mu) =
    new std::vector<std::unique_ptr<PluginDevice>>();

PluginDevice* Registered(DeviceType type) {
  absl::MutexLock lock(&g_devices_mu);
  return g_devices[static_cast<int>(type)];
}

absl::Status CheckInterface(const tsr_device_interface* iface) {
  if (iface == nullptr) return absl::InvalidArgumentError("tsr_device_register: iface is NULL");
  constexpr size_t kMinSize = offsetof(tsr_device_interface, event_synchronize) + sizeof(void*);
  if (iface->struct_size < kMinSize) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "tsr_device_register: iface->struct_size is %d, expected at least %d (the 1.0 "
        "tsr_device_interface)",
        iface->struct_size, kMinSize));
  }
  const int32_t type = iface->device_type;
  if (type <= static_cast<int32_t>(DeviceType::kCPU) || type >= kNumDeviceTypes ||
      type == static_cast<int32_t>(DeviceType::kMeta)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "tsr_device_register: expected device_type cuda (1), hip (2) or privateuse1..3 (3..5), "
        "got %d (cpu memory is the runtime's own)",
        type));
  }
  struct Slot {
    const void* fn;
    const char* name;
  };
  const Slot required[] = {
      {reinterpret_cast<const void*>(iface->device_count), "device_count"},
      {reinterpret_cast<const void*>(iface->allocate), "allocate"},
      {reinterpret_cast<const void*>(iface->free), "free"},
      {reinterpret_cast<const void*>(iface->copy_host_to_device), "copy_host_to_device"},
      {reinterpret_cast<const void*>(iface->copy_device_to_host), "copy_device_to_host"},
      {reinterpret_cast<const void*>(iface->copy_device_to_device), "copy_device_to_device"},
      {reinterpret_cast<const void*>(iface->synchronize), "synchronize"},
  };
  for (const Slot& slot : required) {
    if (slot.fn == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrFormat("tsr_device_register: the required slot '%s' is NULL", slot.name));
    }
  }
  return absl::OkStatus();
}

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
  PluginDevice* device = Registered(t.device().type);
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

// Note [Device memory belongs to its plugin instance]
// Device memory is an address that only the plugin instance which allocated it can interpret.
// Once that plugin is unloaded its tensors may live on (their memory keeps its code mapped,
// so that they can still be freed), but the device type may now be provided by another plugin,
// or by the same library loaded again, whose functions must never get the old pointers (the
// first copy of a replaced plugin's tensor used to go to the new plugin's copy function). A
// device tensor's storage remembers the allocator that made it: a PluginDevice, one per
// registration and never reused. Whatever would hand the memory to plugin code first checks
// that this allocator still provides the device type: the copies here, and every kernel
// before it runs (CheckArguments; a few loads per tensor argument and no lock, since the
// allocator table is an array of atomics). Otherwise the tensor is an orphan and the caller
// gets FAILED_PRECONDITION naming the device and the unloaded plugin. Releasing an orphan still
// frees it through the plugin that allocated it.
absl::Status OrphanedError(const Tensor& t, std::string_view what) {
  const Allocator* allocator = t.impl()->storage()->allocator();
  std::string plugin = "a plugin";
  {
    absl::MutexLock lock(&g_devices_mu);
    for (const auto& device : *g_all_devices) {
      if (device.get() == allocator) {
        plugin = absl::StrFormat("plugin '%s'", device->plugin_name());
        break;
      }
    }
  }
  return absl::FailedPreconditionError(absl::StrFormat(
      "%s: the %s tensor belongs to %s, which was unloaded; device memory is usable only "
      "through the plugin instance that allocated it, not the one that provides %s now",
      what, DeviceToString(t.device()), plugin, DeviceTypeName(t.device().type)));
}

absl::Status CheckArguments(const Stack& stack, std::string_view op, std::string_view kernel) {
  for (size_t i = 0; i < stack.size(); ++i) {
    const Value& v = stack[i];
    if (v.is_tensor()) {
      if (Orphaned(v.tensor())) {
        return OrphanedError(v.tensor(),
                             absl::StrFormat("%s: argument %d of kernel '%s'", op, i, kernel));
      }
    } else if (v.is_tensor_list()) {
      for (const Tensor& t : v.tensor_list()) {
        if (Orphaned(t)) {
          return OrphanedError(
              t, absl::StrFormat("%s: argument %d (a list) of kernel '%s'", op, i, kernel));
        }
      }
    }
  }
  return absl::OkStatus();
}

// The dispatcher's composites move tensors between devices through core/host_copy.h; the
// device interfaces live here, so this layer installs the copies when the runtime loads.
namespace {
const bool kDeviceCopiesInstalled = [] {
  SetDeviceHostCopies(&CopyToHost, &CopyFromHost);
  return true;
}();
}  // namespace

absl::Status CopyToHost(const Tensor& src, void* dst) {
  if (src.numel() == 0) return absl::OkStatus();
  if (src.device().type == DeviceType::kCPU) {
    PackHost(src, dst);
    return absl::OkStatus();
  }
  TSR_ASSIGN_OR_RETURN(PluginDevice * device, DeviceFor(src, "copying"));
  TSR_ASSIGN_OR_RETURN(const Span span, ViewSpan(src));
  const tsr_device_interface& f = device->iface();
  const char* base = static_cast<const char*>(src.impl()->storage()->data());
  if (src.is_contiguous()) {
    return StatusFrom(f.copy_device_to_host(f.context, src.device().index, dst,
                                            base + span.offset_bytes, span.nbytes));
  }
  std::vector<char> staging(span.nbytes);
  TSR_RETURN_IF_ERROR(StatusFrom(f.copy_device_to_host(
      f.context, src.device().index, staging.data(), base + span.offset_bytes, span.nbytes)));
  PackHost(StagingView(src, staging.data(), span), dst);
  return absl::OkStatus();
}

absl::Status CopyFromHost(const void* src, const Tensor& dst) {
  if (dst.numel() == 0) return absl::OkStatus();
  if (dst.device().type == DeviceType::kCPU) {
    UnpackHost(src, dst);
    return absl::OkStatus();
  }
  TSR_ASSIGN_OR_RETURN(PluginDevice * device, DeviceFor(dst, "copying into"));
  TSR_ASSIGN_OR_RETURN(const Span span, ViewSpan(dst));
  const tsr_device_interface& f = device->iface();
  char* base = static_cast<char*>(dst.impl()->storage()->data());
  if (dst.is_contiguous()) {
    return StatusFrom(f.copy_host_to_device(f.context, dst.device().index, base + span.offset_bytes,
                                            src, span.nbytes));
  }
  // Read-modify-write of the covered span keeps the elements between the view's untouched.
  std::vector<char> staging(span.nbytes);
  TSR_RETURN_IF_ERROR(StatusFrom(f.copy_device_to_host(
      f.context, dst.device().index, staging.data(), base + span.offset_bytes, span.nbytes)));
  UnpackHost(src, StagingView(dst, staging.data(), span));
  return StatusFrom(f.copy_host_to_device(f.context, dst.device().index, base + span.offset_bytes,
                                          staging.data(), span.nbytes));
}

}  // namespace capi
}  // namespace tessera

using namespace tessera;        // NOLINT: this file only implements the C entry points
using namespace tessera::capi;  // NOLINT

extern "C" {

tsr_error* tsr_device_register(const tsr_device_interface* iface, tsr_registration** out) {
  return Guard(__func__, [&]() -> tsr_error* {
    if (out) *out = nullptr;
    if (absl::Status s = CheckInterface(iface); !s.ok()) return ToError(s);
    if (absl::Status s = CheckOwnership(
            iface->device_type, nullptr,
            absl::StrFormat("a device interface for %s",
                            DeviceTypeName(static_cast<DeviceType>(iface->device_type))));
        !s.ok()) {
      return ToError(s);
    }
    int32_t count = 0;
    if (absl::Status s = StatusFrom(iface->device_count(iface->context, &count)); !s.ok()) {
      return ToError(absl::Status(s.code(), absl::StrFormat("tsr_device_register: device_count "
                                                            "failed: %s",
                                                            s.message())));
    }
    const auto type = static_cast<DeviceType>(iface->device_type);
    if (count < 0 || count > kMaxDeviceCount) {
      // The runtime keeps state per device index (Note [Device count cap]).
      PluginRecord* loading = LoadingPlugin();
      absl::Status status = absl::InvalidArgumentError(absl::StrFormat(
          "%s: device_count reported %d %s devices; expected at most %d",
          loading ? absl::StrFormat("plugin '%s'", loading->name) : "tsr_device_register", count,
          DeviceTypeName(type), kMaxDeviceCount));
      if (loading != nullptr && loading->refusal.ok()) loading->refusal = status;
      return ToError(status);
    }
    tsr_device_interface copy = {};
    std::memcpy(&copy, iface, std::min(sizeof copy, iface->struct_size));
    copy.struct_size = sizeof copy;
    std::shared_ptr<PluginRecord> plugin = LoadingPluginShared();
    PluginDevice* device;
    {
      absl::MutexLock lock(&g_devices_mu);
      if (g_devices[static_cast<int>(type)] != nullptr) {
        return ToError(absl::AlreadyExistsError(
            absl::StrFormat("tsr_device_register: device type '%s' already has a device interface",
                            DeviceTypeName(type))));
      }
      auto gate = std::make_shared<PluginGate>(plugin ? plugin->name : "application");
      g_all_devices->push_back(std::make_unique<PluginDevice>(copy, count, gate, plugin));
      device = g_all_devices->back().get();
      g_devices[static_cast<int>(type)] = device;
      SetAllocator(type, device);
    }
    RegistrationHandle handle([type, device] {
      {
        absl::MutexLock lock(&g_devices_mu);
        if (g_devices[static_cast<int>(type)] == device) {
          g_devices[static_cast<int>(type)] = nullptr;
          SetAllocator(type, nullptr);
        }
      }
      device->Unregister();
    });
    if (plugin != nullptr) plugin->registered_device = true;
    return HandOut(std::move(handle), out);
  });
}

tsr_error* tsr_device_count(int32_t device_type, int32_t* out) {
  return Guard(__func__, [&]() -> tsr_error* {
    if (out == nullptr) return MakeError(absl::StatusCode::kInvalidArgument, "out is NULL");
    absl::StatusOr<DeviceType> checked = ToDeviceType(device_type, "tsr_device_count");
    if (!checked.ok()) return ToError(checked.status());
    const DeviceType type = *checked;
    if (type == DeviceType::kCPU || type == DeviceType::kMeta) {
      *out = 1;
      return nullptr;
    }
    PluginDevice* device = Registered(type);
    *out = device ? device->count() : 0;
    return nullptr;
  });
}

tsr_error* tsr_device_synchronize(tsr_device device) {
  return Guard(__func__, [&]() -> tsr_error* {
    absl::StatusOr<Device> checked = ToDevice(device, "tsr_device_synchronize");
    if (!checked.ok()) return ToError(checked.status());
    const Device d = *checked;
    if (d.type == DeviceType::kCPU || d.type == DeviceType::kMeta) return nullptr;
    PluginDevice* plugin_device = Registered(d.type);
    if (plugin_device == nullptr) {
      return MakeError(absl::StatusCode::kFailedPrecondition,
                       absl::StrFormat("tsr_device_synchronize: no device interface for '%s'",
                                       DeviceTypeName(d.type)));
    }
    return ToError(plugin_device->Synchronize(d));
  });
}

tsr_error* tsr_device_rename(int32_t device_type, tsr_string name) {
  return Guard(__func__, [&]() -> tsr_error* {
    absl::StatusOr<DeviceType> type = ToDeviceType(device_type, "tsr_device_rename");
    if (!type.ok()) return ToError(type.status());
    return ToError(DeviceNames::Global().Rename(*type, View(name)));
  });
}

tsr_error* tsr_device_parse(tsr_string text, tsr_device* out) {
  return Guard(__func__, [&]() -> tsr_error* {
    if (out == nullptr) return MakeError(absl::StatusCode::kInvalidArgument, "out is NULL");
    absl::StatusOr<Device> d = ParseDevice(View(text));
    if (!d.ok()) return ToError(d.status());
    *out = tsr_device{static_cast<int32_t>(d->type), d->index};
    return nullptr;
  });
}

size_t tsr_device_format(tsr_device device, char* buf, size_t size) {
  std::string text =
      device.type >= 0 && device.type < kNumDeviceTypes
          ? DeviceToString(Device(static_cast<DeviceType>(device.type), device.index))
          : absl::StrFormat("<invalid device type %d>", device.type);
  return CopyToBuffer(text, buf, size);
}

}  // extern "C"

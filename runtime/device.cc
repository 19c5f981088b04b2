// tsr_device_register and friends: a C device interface becomes the device type's Allocator
// (PluginDevice) in the registry of device types; the copies between memories that the
// interfaces make are device_copy.cc.
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "core/allocator.h"
#include "core/host_copy.h"
#include "core/status_macros.h"
#include "dispatcher/missing_kernel_hint.h"
#include "runtime/device_registry.h"
#include "runtime/handles.h"
#include "runtime/plugin_device.h"
#include "runtime/runtime_state.h"
#include "runtime/struct_sizes.h"

namespace tessera {
namespace capi {
namespace {

std::string DeviceError(const char* fn, Device device, const absl::Status& status) {
  return absl::StrFormat("%s: %s: %s", fn, DeviceToString(device), status.message());
}

}  // namespace

PluginDevice::PluginDevice(const tsr_device_interface& iface, int32_t count,
                           std::shared_ptr<PluginGate> gate, std::shared_ptr<const void> owner)
    : iface_(iface), count_(count), gate_(std::move(gate)), owner_(std::move(owner)) {
  for (int32_t i = 0; i < count_; ++i) frees_.push_back(FreeContext{this, i});
  properties_.resize(static_cast<size_t>(count_));
}

absl::StatusOr<DataPtr> PluginDevice::Allocate(Device device, size_t nbytes) {
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

absl::Status PluginDevice::CheckIndex(Device device) const {
  if (device.index < 0 || device.index >= count_) {
    return absl::InvalidArgumentError(
        absl::StrFormat("device %s does not exist: %s has %d device(s)", DeviceToString(device),
                        DeviceTypeName(device.type), count_));
  }
  return absl::OkStatus();
}

absl::Status PluginDevice::Synchronize(Device device, const char* fn) {
  absl::Status status;
  if (!Enter(device, fn, &status)) return status;
  GateExit exit(gate_.get());
  status = StatusFrom(iface_.synchronize(iface_.context, device.index));
  if (status.ok()) return status;
  return absl::Status(status.code(), DeviceError(fn, device, status));
}

bool PluginDevice::Enter(Device device, const char* fn, absl::Status* status) {
  if (absl::Status s = CheckIndex(device); !s.ok()) {
    *status = absl::Status(s.code(), absl::StrFormat("%s: %s", fn, s.message()));
    return false;
  }
  if (!Current() || !gate_->Enter()) {
    *status = NotCurrentError(device, fn);
    return false;
  }
  return true;
}

bool PluginDevice::Current() const { return GetAllocator(type()) == this; }

absl::Status PluginDevice::NotCurrentError(Device device, std::string_view what) const {
  return absl::FailedPreconditionError(absl::StrFormat(
      "%s: %s belongs to plugin '%s', which was unloaded; streams, events and memory are "
      "usable only through the plugin instance that made them, not the one that provides %s "
      "now",
      what, DeviceToString(device), gate_->plugin_name(), DeviceTypeName(device.type)));
}

std::shared_ptr<const void> PluginDevice::Owner() {
  absl::MutexLock lock(&mu_);
  return owner_;
}

void PluginDevice::Unregister() {
  gate_->Close();
  absl::MutexLock lock(&mu_);
  owner_.reset();
}

void PluginDevice::RecordStream(void* ptr, StreamRef stream) {
  absl::MutexLock lock(&recorded_mu_);
  std::vector<StreamRef>& streams = recorded_[ptr];
  for (const StreamRef& s : streams) {
    if (s.get() == stream.get()) return;
  }
  streams.push_back(std::move(stream));
  recorded_count_.fetch_add(1, std::memory_order_release);
}

void PluginDevice::SynchronizeRecorded(int32_t index, void* ptr) {
  std::vector<StreamRef> streams;
  {
    absl::MutexLock lock(&recorded_mu_);
    auto it = recorded_.find(ptr);
    if (it == recorded_.end()) return;
    streams = std::move(it->second);
    recorded_.erase(it);
    recorded_count_.fetch_sub(static_cast<int64_t>(streams.size()), std::memory_order_release);
  }
  for (const StreamRef& s : streams) {
    // A device without record_stream has stream_create (the stream exists), and so, by the
    // 1.0 interface, stream_synchronize; a failure is the device's asynchronous error, which
    // its next synchronizing call reports as well: freeing cannot return it.
    tsr_error* e = iface_.stream_synchronize != nullptr
                       ? iface_.stream_synchronize(iface_.context, index, s->native)
                       : iface_.synchronize(iface_.context, index);
    if (e != nullptr) {
      const std::string message = absl::StrFormat(
          "freeing memory of %s recorded on a stream: synchronizing the stream failed: %s",
          DeviceToString(Device(type(), index)), e->message);
      ReleaseError(e);
      RuntimeApi().log(TSR_LOG_WARNING, tsr_string{message.data(), message.size()});
    }
  }
}

void PluginDevice::Free(void* data, void* context) {
  const auto* c = static_cast<const FreeContext*>(context);
  PluginDevice* device = c->device;
  if (device->recorded_count_.load(std::memory_order_acquire) != 0) {
    device->SynchronizeRecorded(c->index, data);
  }
  device->iface_.free(device->iface_.context, c->index, data);
}

absl::StatusOr<tsr_device_properties> PluginDevice::Properties(Device device) {
  TSR_RETURN_IF_ERROR(CheckIndex(device));
  absl::MutexLock lock(&properties_mu_);
  CachedProperties& cached = properties_[static_cast<size_t>(device.index)];
  if (!cached.filled) {
    tsr_device_properties props{};
    props.struct_size = sizeof props;
    if (iface_.get_properties != nullptr) {
      absl::Status status;
      if (!Enter(device, "tsr_device_get_properties", &status)) return status;
      GateExit exit(gate_.get());
      status = StatusFrom(iface_.get_properties(iface_.context, device.index, &props));
      if (!status.ok()) {
        return absl::Status(status.code(),
                            DeviceError("tsr_device_get_properties", device, status));
      }
    }
    const char* const fn = "tsr_device_get_properties";
    absl::StatusOr<std::string_view> name = ReadString(props.name, fn, "the device's name");
    // A wrong size is the plugin's fault, not the caller's: INTERNAL.
    if (!name.ok()) return absl::InternalError(DeviceError(fn, device, name.status()));
    absl::StatusOr<std::string_view> arch = ReadString(props.arch, fn, "the device's arch");
    if (!arch.ok()) return absl::InternalError(DeviceError(fn, device, arch.status()));
    cached.name = !name->empty() ? std::string(*name) : std::string(DeviceTypeName(device.type));
    cached.arch = std::string(*arch);
    cached.props = props;
    cached.props.struct_size = sizeof cached.props;
    cached.filled = true;
  }
  tsr_device_properties out = cached.props;
  out.name = tsr_string{cached.name.data(), cached.name.size()};
  out.arch = tsr_string{cached.arch.data(), cached.arch.size()};
  return out;
}

namespace {

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
// Who registered each type's latest device interface: a plugin (its name) or the application
// (""), for the hint below; set at registration, kept after the registration is released.
struct Provider {
  bool registered = false;
  std::string plugin;
};
std::array<Provider, kNumDeviceTypes> g_last_provider ABSL_GUARDED_BY(g_devices_mu) = {};

// Note [Why a key has nothing] (dispatcher/missing_kernel_hint.h): a device type that nothing
// provides now, but something did, lost it: its plugin was unloaded (or its load refused after
// it registered), or the application released its own device interface.
std::string UnloadedProviderHint(DispatchKey key) {
  const int type = static_cast<int>(DeviceTypeFor(key));
  if (type < 0 || type >= kNumDeviceTypes) return "";
  absl::ReaderMutexLock lock(&g_devices_mu);
  const Provider& last = g_last_provider[type];
  if (g_devices[type] != nullptr || !last.registered) return "";
  const std::string name = DeviceTypeName(static_cast<DeviceType>(type));
  if (last.plugin.empty()) {
    return absl::StrFormat("the application's device interface for %s was released", name);
  }
  return absl::StrFormat("the plugin '%s' that provided %s is no longer loaded", last.plugin, name);
}
[[maybe_unused]] const bool kUnloadedProviderHintSet =
    (SetMissingKernelHint(&UnloadedProviderHint), true);

absl::Status CheckInterface(const tsr_device_interface* iface) {
  if (iface == nullptr) return absl::InvalidArgumentError("tsr_device_register: iface is NULL");
  constexpr size_t kMinSize = size_in_1_0::tsr_device_interface;
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

}  // namespace

PluginDevice* RegisteredDevice(DeviceType type) {
  absl::MutexLock lock(&g_devices_mu);
  return g_devices[static_cast<int>(type)];
}

absl::StatusOr<PluginDevice*> DeviceForStreams(Device device, const char* fn) {
  if (device.type == DeviceType::kCPU || device.type == DeviceType::kMeta) {
    if (device.index != 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: device %s does not exist: %s has one device, index 0", fn,
                          DeviceToString(device), DeviceTypeName(device.type)));
    }
    return nullptr;
  }
  PluginDevice* plugin = RegisteredDevice(device.type);
  if (plugin == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: no device interface is registered for device type '%s'", fn,
                        DeviceTypeName(device.type)));
  }
  if (absl::Status s = plugin->CheckIndex(device); !s.ok()) {
    return absl::Status(s.code(), absl::StrFormat("%s: %s", fn, s.message()));
  }
  return plugin;
}

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

namespace {

// The properties of the devices that have no plugin: the CPU and meta.
tsr_device_properties BuiltinProperties(DeviceType type) {
  static const std::string kCpu = "cpu", kMeta = "meta";
  const std::string& name = type == DeviceType::kCPU ? kCpu : kMeta;
  tsr_device_properties props{};
  props.struct_size = sizeof props;
  props.name = tsr_string{name.data(), name.size()};
  return props;
}

// FillWithin copies `full` into *out within the size the caller stated (Note [Descriptor
// capacity] in plugin.h has the rule) and states what it wrote.
template <typename T>
tsr_error* FillWithin(const T& full, T* out, const char* fn) {
  if (out == nullptr) {
    return MakeError(absl::StatusCode::kInvalidArgument,
                     absl::StrFormat("%s: expected an output struct, got NULL", fn));
  }
  if (out->struct_size < sizeof(size_t)) {
    return MakeError(absl::StatusCode::kInvalidArgument,
                     absl::StrFormat("%s: out->struct_size is %d; set it to the size of the "
                                     "struct the caller was built with (%d here)",
                                     fn, out->struct_size, sizeof(T)));
  }
  const size_t size = std::min(out->struct_size, sizeof(T));
  std::memcpy(static_cast<void*>(out), &full, size);
  out->struct_size = size;
  return nullptr;
}

}  // namespace

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
      g_last_provider[static_cast<int>(type)] = Provider{true, plugin ? plugin->name : ""};
      SetAllocator(type, device);
    }
    if (plugin != nullptr) plugin->device_count = count;
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
    if (out == nullptr) {
      return MakeError(absl::StatusCode::kInvalidArgument,
                       "tsr_device_count: expected an output pointer, got NULL");
    }
    absl::StatusOr<DeviceType> checked = ToDeviceType(device_type, "tsr_device_count");
    if (!checked.ok()) return ToError(checked.status());
    const DeviceType type = *checked;
    if (type == DeviceType::kCPU || type == DeviceType::kMeta) {
      *out = 1;
      return nullptr;
    }
    PluginDevice* device = RegisteredDevice(type);
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
    PluginDevice* plugin_device = RegisteredDevice(d.type);
    if (plugin_device == nullptr) {
      return MakeError(absl::StatusCode::kFailedPrecondition,
                       absl::StrFormat("tsr_device_synchronize: no device interface for '%s'",
                                       DeviceTypeName(d.type)));
    }
    return ToError(plugin_device->Synchronize(d, "tsr_device_synchronize"));
  });
}

tsr_error* tsr_device_get_properties(tsr_device device, tsr_device_properties* out) {
  return Guard(__func__, [&]() -> tsr_error* {
    constexpr const char* fn = "tsr_device_get_properties";
    if (out == nullptr || out->struct_size < sizeof(size_t)) {
      return FillWithin(tsr_device_properties{}, out, fn);  // the error it names
    }
    absl::StatusOr<Device> d = ToDevice(device, fn);
    if (!d.ok()) return ToError(d.status());
    absl::StatusOr<PluginDevice*> plugin = DeviceForStreams(*d, fn);
    if (!plugin.ok()) return ToError(plugin.status());
    if (*plugin == nullptr) return FillWithin(BuiltinProperties(d->type), out, fn);
    absl::StatusOr<tsr_device_properties> props = (*plugin)->Properties(*d);
    if (!props.ok()) return ToError(props.status());
    return FillWithin(*props, out, fn);
  });
}

tsr_error* tsr_device_memory_stats(tsr_device device, tsr_memory_stats* out) {
  return Guard(__func__, [&]() -> tsr_error* {
    constexpr const char* fn = "tsr_device_memory_stats";
    if (out == nullptr || out->struct_size < sizeof(size_t)) {
      return FillWithin(tsr_memory_stats{}, out, fn);
    }
    absl::StatusOr<Device> d = ToDevice(device, fn);
    if (!d.ok()) return ToError(d.status());
    absl::StatusOr<PluginDevice*> plugin = DeviceForStreams(*d, fn);
    if (!plugin.ok()) return ToError(plugin.status());
    if (*plugin == nullptr || (*plugin)->iface().memory_stats == nullptr) {
      return MakeError(
          absl::StatusCode::kUnimplemented,
          absl::StrFormat("%s: %s keeps no allocator statistics%s", fn, DeviceToString(*d),
                          *plugin == nullptr ? "" : " (its plugin has no memory_stats)"));
    }
    PluginDevice* p = *plugin;
    absl::Status status;
    if (!p->Enter(*d, fn, &status)) return ToError(status);
    GateExit exit(p->gate());
    tsr_memory_stats stats{};
    stats.struct_size = sizeof stats;
    status = StatusFrom(p->iface().memory_stats(p->iface().context, d->index, &stats));
    if (!status.ok()) {
      return MakeError(status.code(),
                       absl::StrFormat("%s: %s: %s", fn, DeviceToString(*d), status.message()));
    }
    stats.struct_size = sizeof stats;
    return FillWithin(stats, out, fn);
  });
}

tsr_error* tsr_device_empty_cache(tsr_device device) {
  return Guard(__func__, [&]() -> tsr_error* {
    constexpr const char* fn = "tsr_device_empty_cache";
    absl::StatusOr<Device> d = ToDevice(device, fn);
    if (!d.ok()) return ToError(d.status());
    absl::StatusOr<PluginDevice*> plugin = DeviceForStreams(*d, fn);
    if (!plugin.ok()) return ToError(plugin.status());
    PluginDevice* p = *plugin;
    if (p == nullptr || p->iface().empty_cache == nullptr) return nullptr;  // nothing cached
    absl::Status status;
    if (!p->Enter(*d, fn, &status)) return ToError(status);
    GateExit exit(p->gate());
    status = StatusFrom(p->iface().empty_cache(p->iface().context, d->index));
    if (status.ok()) return nullptr;
    return MakeError(status.code(),
                     absl::StrFormat("%s: %s: %s", fn, DeviceToString(*d), status.message()));
  });
}

tsr_error* tsr_device_rename(int32_t device_type, tsr_string name) {
  return Guard(__func__, [&]() -> tsr_error* {
    absl::StatusOr<DeviceType> type = ToDeviceType(device_type, "tsr_device_rename");
    if (!type.ok()) return ToError(type.status());
    absl::StatusOr<std::string_view> text = ReadString(name, "tsr_device_rename", "the name");
    if (!text.ok()) return ToError(text.status());
    return ToError(DeviceNames::Global().Rename(*type, *text));
  });
}

tsr_error* tsr_device_parse(tsr_string text, tsr_device* out) {
  return Guard(__func__, [&]() -> tsr_error* {
    if (out == nullptr) {
      return MakeError(absl::StatusCode::kInvalidArgument,
                       "tsr_device_parse: expected an output pointer, got NULL");
    }
    absl::StatusOr<std::string_view> read = ReadString(text, "tsr_device_parse", "the text");
    if (!read.ok()) return ToError(read.status());
    absl::StatusOr<Device> d = ParseDevice(*read);
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

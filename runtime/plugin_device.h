// PluginDevice: one registered tsr_device_interface, as the core's Allocator of its device type
// and as what streams and events (tsr_stream, tsr_event) call. Internal to runtime/.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "core/allocator.h"
#include "core/ref_counted.h"
#include "runtime/plugin_gate.h"
#include "tessera/c/device.h"

namespace tessera {
namespace capi {

class PluginDevice;

}  // namespace capi
}  // namespace tessera

// A stream handed to C: the device it belongs to, the plugin's own handle (NULL for a default
// stream) and, for one the plugin made, a reference that keeps the plugin loaded. `device` is
// NULL for the CPU and meta, which have only their default stream.
struct tsr_stream final : tessera::RefCounted {
  tessera::Device device;
  tessera::capi::PluginDevice* plugin = nullptr;
  void* native = nullptr;
  std::shared_ptr<const void> owner;
  ~tsr_stream() override;
};

// An event handed to C, always of a plugin's device (the CPU has no events).
struct tsr_event final : tessera::RefCounted {
  tessera::Device device;
  tessera::capi::PluginDevice* plugin = nullptr;
  void* native = nullptr;
  std::shared_ptr<const void> owner;
  std::atomic<bool> recorded{false};  // never recorded: complete, nothing to wait for
  ~tsr_event() override;
};

namespace tessera {
namespace capi {

using StreamRef = Ref<tsr_stream>;

// Never destroyed: the core's allocator table, in-flight allocations, streams and events may
// still point at it after deregistration; what deregistration releases is the plugin it keeps
// alive (`owner`), and the closed gate keeps new allocations from reaching an unloaded plugin.
class PluginDevice final : public Allocator {
 public:
  PluginDevice(const tsr_device_interface& iface, int32_t count, std::shared_ptr<PluginGate> gate,
               std::shared_ptr<const void> owner);

  absl::StatusOr<DataPtr> Allocate(Device device, size_t nbytes) override;

  // CheckIndex: `device` is one of this interface's devices.
  absl::Status CheckIndex(Device device) const;

  // Synchronize runs the plugin's synchronize inside the gate, like Allocate: there is no
  // tensor (and so no owner reference) to keep the plugin's code mapped, and an unload racing
  // this call must wait for it rather than unmap the code under it. `fn` names the caller in
  // the error, which quotes the device's own text (Note [Asynchronous devices]).
  absl::Status Synchronize(Device device, const char* fn);

  // Enter passes the gate for a call into the plugin that no tensor keeps mapped (stream and
  // event functions); false (with the error in *status) once the plugin is unloaded. Leave
  // with a GateExit on gate().
  bool Enter(Device device, const char* fn, absl::Status* status);

  // Current: whether this instance still provides its device type (not unloaded, not
  // replaced); a few loads, no lock (Note [Device memory belongs to its plugin instance]).
  bool Current() const;
  // NotCurrentError is the error for using a stream, event or tensor of an instance that is not
  // Current: `what` says which.
  absl::Status NotCurrentError(Device device, std::string_view what) const;

  // RecordStream remembers that the allocation `ptr` on device `index` is used on `stream`,
  // for a device without record_stream: Free synchronizes the stream before the plugin frees
  // the memory (the slot's documented default).
  void RecordStream(void* ptr, StreamRef stream);

  // Properties returns the device's properties, asking the plugin once per index and keeping
  // the strings for the process (tsr_device_properties' strings are borrowed from it).
  absl::StatusOr<tsr_device_properties> Properties(Device device);

  PluginGate* gate() const { return gate_.get(); }
  const std::string& plugin_name() const { return gate_->plugin_name(); }
  const tsr_device_interface& iface() const { return iface_; }
  DeviceType type() const { return static_cast<DeviceType>(iface_.device_type); }
  int32_t count() const { return count_; }
  bool asynchronous() const { return iface_.stream_create != nullptr; }
  std::shared_ptr<const void> Owner();
  void Unregister();

 private:
  struct FreeContext {
    PluginDevice* device;
    int32_t index;
  };
  static void Free(void* data, void* context);
  // SynchronizeRecorded: the runtime's record_stream default, before `ptr` is freed.
  void SynchronizeRecorded(int32_t index, void* ptr);

  struct CachedProperties {
    bool filled = false;
    std::string name, arch;
    tsr_device_properties props{};
  };

  const tsr_device_interface iface_;
  const int32_t count_;
  std::vector<FreeContext> frees_;  // one per index, stable addresses (never resized)
  std::shared_ptr<PluginGate> gate_;
  absl::Mutex mu_;
  std::shared_ptr<const void> owner_ ABSL_GUARDED_BY(mu_);
  absl::Mutex properties_mu_;
  std::vector<CachedProperties> properties_ ABSL_GUARDED_BY(properties_mu_);
  // The runtime's record_stream (the plugin has none): allocation -> streams using it. Free
  // reads `recorded_count_` first, so that a device nobody records streams on pays one load.
  absl::Mutex recorded_mu_;
  absl::flat_hash_map<void*, std::vector<StreamRef>> recorded_ ABSL_GUARDED_BY(recorded_mu_);
  std::atomic<int64_t> recorded_count_{0};
};

// RegisteredDevice: the plugin device that provides `type` now, or NULL.
PluginDevice* RegisteredDevice(DeviceType type);

// DeviceForStreams returns the plugin device behind `device` for a stream or event function
// `fn`: NULL for the CPU and meta (default stream only); an error for a device type without a
// registered interface or an index it does not have.
absl::StatusOr<PluginDevice*> DeviceForStreams(Device device, const char* fn);

}  // namespace capi
}  // namespace tessera

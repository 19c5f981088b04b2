// Process-wide state behind the C ABI: loaded plugins, what each registered, load reports.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "dispatcher/op_registry.h"
#include "runtime/plugin_gate.h"
#include "tessera/c/loader.h"
#include "tessera/c/plugin.h"

namespace tessera {
namespace capi {

// KernelRecord: one kernel a plugin registered, for tsr_plugin_kernels; `info`'s strings point
// into the record's own, which never change once made.
struct KernelRecord {
  std::string op_name, kernel_name, schema, note;
  int32_t device_type = 0;
  std::string nondeterministic;  // tsr_kernel_desc.nondeterministic (1.2): empty when deterministic
  tsr_kernel_status status = TSR_KERNEL_REGISTERED;
};

// PluginRecord: one loaded plugin. Destroyed (unload_fn, then dlclose) when the loader has
// dropped it and nothing else holds it.
struct PluginRecord {
  std::string path;
  std::string name;
  void* dl_handle = nullptr;
  tsr_plugin_desc desc = {};
  std::shared_ptr<PluginGate> gate;
  std::vector<std::shared_ptr<RegistrationHandle>> registrations;
  absl::flat_hash_set<std::string> ops_with_kernels;
  // The ops it defined (their registry entries): it may register kernels for them on any
  // device type (Note [What a plugin may register]).
  absl::flat_hash_set<const void*> defined_ops;
  // The first registration refused by CheckOwnership; it refuses the whole load, also when
  // register_fn ignored the error.
  absl::Status refusal;
  int64_t kernels = 0;
  // Kernels built against another schema than their op's (Note [Kernels built against another
  // schema]): how many were adapted or refused, and one line about each for the load report.
  int64_t kernels_adapted = 0;
  int64_t kernels_refused = 0;
  std::vector<std::string> kernel_notes;
  // Every kernel it registered, refused ones included, in order (tsr_plugin_kernels). Only its
  // register_fn adds to it (Note [Registration window]), so it is fixed once the plugin loaded.
  std::vector<KernelRecord> kernel_records;
  // Whether it registered a device interface (for its own device type; Note [Plugins without a
  // copy_ kernel] in plugin_loader.cc).
  bool registered_device = false;
  const void* image_base = nullptr;  // where dlopen mapped it (PluginOwning)
  bool loaded = false;               // unload_fn runs only for a plugin that finished loading
  int32_t device_count = -1;         // what its device interface reported (-1: none registered)

  ~PluginRecord();
};

// LoadingPlugin: the plugin whose register_fn runs on this thread, or NULL.
PluginRecord* LoadingPlugin();
std::shared_ptr<PluginRecord> LoadingPluginShared();

// HandOut gives a registration to C: to `out` when it is non-NULL, and to the loading plugin's
// record when a plugin registers (so that unloading undoes it), else it is kept forever.
tsr_error* HandOut(RegistrationHandle handle, tsr_registration** out);

// CheckOwnership lets the loading plugin register `what` ("a kernel for abs.out") for
// `device_type` when that is the plugin's own device type, or when `op_entry` (NULL when
// `what` is not a kernel) is an op the plugin defined; else it returns PERMISSION_DENIED and
// records it as the plugin's refusal. OK when no plugin is loading (the application
// registers). See Note [What a plugin may register].
absl::Status CheckOwnership(int32_t device_type, const void* op_entry, std::string_view what);

// OutsideRegistrationWindow is the error for plugin code (at code address `caller`) that
// called the table's `slot` while no plugin's register_fn runs on this thread. During
// tsr_plugin_init it also marks that plugin's load to be refused. See Note [Registration
// window].
absl::Status OutsideRegistrationWindow(const char* slot, const void* caller);

// PluginOwning returns an owner reference to the loaded plugin whose code contains `code`
// (a function pointer), or NULL when no plugin's does. Memory that plugin code will free
// holds it, so that the code stays mapped until then.
std::shared_ptr<const void> PluginOwning(const void* code);

// LoadedPlugin returns the loaded plugin named `name`, or NULL when none is.
std::shared_ptr<PluginRecord> LoadedPlugin(std::string_view name);
// LoadedPluginNames: the loaded plugins' names, sorted and comma-separated ("none"), for errors.
std::string LoadedPluginNames();

// FindOp is tsr_op_find without default discovery.
tsr_error* FindOp(tsr_string name, const tsr_op** out);

// EnsureDefaultPluginsLoaded runs default discovery once per process (plugin_discovery.cc);
// nothing from plugin code that a load runs (Note [Loads do not nest]).
void EnsureDefaultPluginsLoaded();

// The loader's side of discovery (plugin_loader.cc). LoadPlugin loads `path` as
// tsr_plugin_load does; a plugin refused after its register_fn ran comes back in *refused, for
// DisposeOfRefusedPlugin once the caller holds nothing that an op call in flight may wait for
// (Note [Refused after registering]).
absl::Status LoadPlugin(const std::string& path, std::shared_ptr<PluginRecord>* refused);
void DisposeOfRefusedPlugin(std::shared_ptr<PluginRecord> record);
// LoadingOnThisThread: whether this thread is inside a plugin's load (plugin code that the load
// runs); CheckNotLoading: FAILED_PRECONDITION naming the plugin when this thread is inside a
// plugin's load (plugin code that the load runs), for `call` ("tsr_plugin_load(x.so)"); OK
// elsewhere. Note [Loads do not nest] in plugin_loader.cc.
bool LoadingOnThisThread();
absl::Status CheckNotLoading(std::string_view call);

// RuntimeApi is the function table of applications (tsr_runtime_api_get).
const tsr_runtime_api& RuntimeApi();

// PluginApi is the function table handed to plugins: RuntimeApi's functions, except that the
// registration slots refuse calls outside the plugin's registration window and op_find never
// starts default discovery (a register_fn that looks an op up would re-enter it).
const tsr_runtime_api& PluginApi();

}  // namespace capi
}  // namespace tessera

// Process-wide state behind the C ABI: loaded plugins, what each registered, load reports.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "dispatcher/op_registry.h"
#include "stable_abi/src/plugin_gate.h"
#include "tessera/c/loader.h"
#include "tessera/c/plugin.h"

namespace tessera {
namespace capi {

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
  int64_t kernels = 0;
  bool loaded = false;  // unload_fn runs only for a plugin that finished loading

  ~PluginRecord();
};

// LoadingPlugin: the plugin whose register_fn runs on this thread, or NULL.
PluginRecord* LoadingPlugin();
std::shared_ptr<PluginRecord> LoadingPluginShared();

// HandOut gives a registration to C: to `out` when it is non-NULL, and to the loading plugin's
// record when a plugin registers (so that unloading undoes it), else it is kept forever.
tsr_error* HandOut(RegistrationHandle handle, tsr_registration** out);

// FindOp is tsr_op_find without default discovery.
tsr_error* FindOp(tsr_string name, const tsr_op** out);

// EnsureDefaultPluginsLoaded runs tsr_plugin_load_default once per process.
void EnsureDefaultPluginsLoaded();

// RuntimeApi is the function table of applications (tsr_runtime_api_get).
const tsr_runtime_api& RuntimeApi();

// PluginApi is the function table handed to plugins: RuntimeApi's functions, except that
// op_find never starts default discovery (a register_fn that looks an op up would re-enter it).
const tsr_runtime_api& PluginApi();

}  // namespace capi
}  // namespace tessera

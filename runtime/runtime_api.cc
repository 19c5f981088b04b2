// The function table handed to plugins, and the logging service behind its `log` slot.
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <string_view>

#include "runtime/handles.h"
#include "runtime/runtime_api_slots.h"
#include "runtime/runtime_state.h"
#include "tessera/c/tessera.h"

namespace tessera {
namespace capi {
namespace {

// TESSERA_LOG_LEVEL=debug|info|warning|error (default warning): the least severe level logged.
// Another value is said once on stderr (a misspelt level would otherwise hide the messages its
// user asked for) and read as the default; MakeApi reads it, so that is when the table is first
// made (the first plugin load), whether or not anything logs.
tsr_log_level MinLogLevel() {
  static const tsr_log_level level = [] {
    const char* env = std::getenv("TESSERA_LOG_LEVEL");
    const std::string_view v = env ? env : "";
    if (v == "debug") return TSR_LOG_DEBUG;
    if (v == "info") return TSR_LOG_INFO;
    if (v == "error") return TSR_LOG_ERROR;
    if (!v.empty() && v != "warning") {
      std::cerr << "[tessera WARNING] TESSERA_LOG_LEVEL=" << v
                << ": expected debug, info, warning or error; using warning" << std::endl;
    }
    return TSR_LOG_WARNING;
  }();
  return level;
}

void Log(tsr_log_level level, tsr_string message) {
  int32_t raw;
  std::memcpy(&raw, &level, sizeof raw);  // any value a plugin passes is fine
  if (raw < MinLogLevel()) return;
  static const char* const kNames[] = {"DEBUG", "INFO", "WARNING", "ERROR"};
  const char* name = raw >= 0 && raw <= 3 ? kNames[raw] : "LOG";
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  absl::StatusOr<std::string_view> text = ReadString(message, "log", "the message");
  std::cerr << "[tessera " << name << "] "
            << (text.ok() ? std::string(*text) : std::string(text.status().message())) << std::endl;
}

// The slots' offsets, in list order (the list: runtime_api_slots.h).
constexpr size_t kSlotOffsets[] = {
#define TESSERA_SLOT_OFFSET_(slot, fn) offsetof(tsr_runtime_api, slot),
    TESSERA_RUNTIME_API_SLOTS(TESSERA_SLOT_OFFSET_)
#undef TESSERA_SLOT_OFFSET_
};
constexpr size_t kNumSlots = sizeof kSlotOffsets / sizeof kSlotOffsets[0];
// Every slot is a function pointer; the list covers the table from its first slot to its end,
// each slot right after the one before it.
constexpr bool SlotsCoverTheTable() {
  for (size_t i = 0; i < kNumSlots; ++i) {
    if (kSlotOffsets[i] != kSlotOffsets[0] + i * sizeof(void (*)())) return false;
  }
  return kSlotOffsets[0] == offsetof(tsr_runtime_api, error_create) &&
         kSlotOffsets[0] + kNumSlots * sizeof(void (*)()) == sizeof(tsr_runtime_api);
}
static_assert(SlotsCoverTheTable(),
              "TESSERA_RUNTIME_API_SLOTS must list every slot of tsr_runtime_api (plugin.h), in "
              "declaration order: a slot was added to the struct and not to the list, or moved");

tsr_runtime_api MakeApi() {
  MinLogLevel();  // read (and a wrong value said) now, not at the first message, if any
  tsr_runtime_api api = {};
  api.struct_size = sizeof(tsr_runtime_api);
  api.abi_major = TSR_ABI_VERSION_MAJOR;
  api.abi_minor = TSR_ABI_VERSION_MINOR;
#define TESSERA_FILL_SLOT_(slot, fn) api.slot = fn;
  TESSERA_RUNTIME_API_SLOTS(TESSERA_FILL_SLOT_)
#undef TESSERA_FILL_SLOT_
  return api;
}

// The plugin table's registration slots (Note [Registration window]): each checks the window
// and names the calling plugin's library from its return address (these are called through
// the table, never inlined into the caller).
tsr_error* Outside(const char* slot, const void* caller, tsr_registration** out) {
  if (LoadingPlugin() != nullptr) return nullptr;
  if (out) *out = nullptr;
  return ToError(OutsideRegistrationWindow(slot, caller));
}

tsr_error* PluginOpDefine(tsr_string schema, tsr_registration** out) {
  if (tsr_error* e = Outside("op_define", __builtin_return_address(0), out)) return e;
  return tsr_op_define(schema, out);
}
tsr_error* PluginKernelRegister(const tsr_kernel_desc* desc, tsr_registration** out) {
  if (tsr_error* e = Outside("kernel_register", __builtin_return_address(0), out)) return e;
  return tsr_kernel_register(desc, out);
}
tsr_error* PluginFallbackRegister(int32_t device_type, tsr_boxed_kernel_fn fallback, void* context,
                                  tsr_string name, tsr_registration** out) {
  if (tsr_error* e = Outside("fallback_register", __builtin_return_address(0), out)) return e;
  return tsr_fallback_register(device_type, fallback, context, name, out);
}
tsr_error* PluginFallbackRegisterCpu(int32_t device_type, tsr_registration** out) {
  if (tsr_error* e = Outside("fallback_register_cpu", __builtin_return_address(0), out)) {
    return e;
  }
  return tsr_fallback_register_cpu(device_type, out);
}
tsr_error* PluginDeviceRegister(const tsr_device_interface* iface, tsr_registration** out) {
  if (tsr_error* e = Outside("device_register", __builtin_return_address(0), out)) return e;
  return tsr_device_register(iface, out);
}
tsr_error* PluginGraphCompilerRegister(const tsr_graph_compiler* compiler,
                                       tsr_registration** out) {
  if (tsr_error* e = Outside("graph_compiler_register", __builtin_return_address(0), out)) {
    return e;
  }
  return tsr_graph_compiler_register(compiler, out);
}

// PluginOpFind is tsr_op_find without default discovery: plugins are loaded by then, or being
// loaded on this very thread (a register_fn under default discovery would re-enter its
// std::call_once and hang; under an explicit load, re-lock the loader and deadlock).
tsr_error* PluginOpFind(tsr_string name, const tsr_op** out) { return FindOp(name, out); }

tsr_runtime_api MakePluginApi() {
  tsr_runtime_api api = MakeApi();
  api.op_find = &PluginOpFind;
  api.op_define = &PluginOpDefine;
  api.kernel_register = &PluginKernelRegister;
  api.fallback_register = &PluginFallbackRegister;
  api.fallback_register_cpu = &PluginFallbackRegisterCpu;
  api.device_register = &PluginDeviceRegister;
  api.graph_compiler_register = &PluginGraphCompilerRegister;
  return api;
}

}  // namespace

const tsr_runtime_api& RuntimeApi() {
  static const tsr_runtime_api api = MakeApi();
  return api;
}

const tsr_runtime_api& PluginApi() {
  static const tsr_runtime_api api = MakePluginApi();
  return api;
}

}  // namespace capi
}  // namespace tessera

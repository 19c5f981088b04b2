// The function table handed to plugins, and the logging service behind its `log` slot.
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <string_view>

#include "runtime/handles.h"
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

tsr_runtime_api MakeApi() {
  MinLogLevel();  // read (and a wrong value said) now, not at the first message, if any
  tsr_runtime_api api = {};
  api.struct_size = sizeof(tsr_runtime_api);
  api.abi_major = TSR_ABI_VERSION_MAJOR;
  api.abi_minor = TSR_ABI_VERSION_MINOR;
  api.error_create = &tsr_error_create;
  api.error_code = &tsr_error_code;
  api.error_message = &tsr_error_message;
  api.error_release = &tsr_error_release;
  api.tensor_empty = &tsr_tensor_empty;
  api.tensor_empty_strided = &tsr_tensor_empty_strided;
  api.tensor_from_host_memory = &tsr_tensor_from_host_memory;
  api.tensor_copy_from_host = &tsr_tensor_copy_from_host;
  api.tensor_copy_to_host = &tsr_tensor_copy_to_host;
  api.tensor_retain = &tsr_tensor_retain;
  api.tensor_release = &tsr_tensor_release;
  api.tensor_dim = &tsr_tensor_dim;
  api.tensor_sizes = &tsr_tensor_sizes;
  api.tensor_strides = &tsr_tensor_strides;
  api.tensor_storage_offset = &tsr_tensor_storage_offset;
  api.tensor_numel = &tsr_tensor_numel;
  api.tensor_dtype = &tsr_tensor_dtype;
  api.tensor_device = &tsr_tensor_device;
  api.tensor_is_contiguous = &tsr_tensor_is_contiguous;
  api.tensor_data_ptr = &tsr_tensor_data_ptr;
  api.dtype_size = &tsr_dtype_size;
  api.op_find = &tsr_op_find;
  api.op_name = &tsr_op_name;
  api.op_schema = &tsr_op_schema;
  api.op_call = &tsr_op_call;
  api.op_define = &tsr_op_define;
  api.registration_release = &tsr_registration_release;
  api.stack_create = &tsr_stack_create;
  api.stack_release = &tsr_stack_release;
  api.stack_size = &tsr_stack_size;
  api.stack_clear = &tsr_stack_clear;
  api.stack_kind = &tsr_stack_kind;
  api.stack_push_none = &tsr_stack_push_none;
  api.stack_push_tensor = &tsr_stack_push_tensor;
  api.stack_push_int = &tsr_stack_push_int;
  api.stack_push_double = &tsr_stack_push_double;
  api.stack_push_bool = &tsr_stack_push_bool;
  api.stack_push_string = &tsr_stack_push_string;
  api.stack_push_int_list = &tsr_stack_push_int_list;
  api.stack_push_double_list = &tsr_stack_push_double_list;
  api.stack_push_tensor_list = &tsr_stack_push_tensor_list;
  api.stack_push_scalar = &tsr_stack_push_scalar;
  api.stack_push_dtype = &tsr_stack_push_dtype;
  api.stack_push_device = &tsr_stack_push_device;
  api.stack_get_tensor = &tsr_stack_get_tensor;
  api.stack_get_int = &tsr_stack_get_int;
  api.stack_get_double = &tsr_stack_get_double;
  api.stack_get_bool = &tsr_stack_get_bool;
  api.stack_get_string = &tsr_stack_get_string;
  api.stack_get_int_list = &tsr_stack_get_int_list;
  api.stack_get_double_list = &tsr_stack_get_double_list;
  api.stack_get_tensor_list = &tsr_stack_get_tensor_list;
  api.stack_get_scalar = &tsr_stack_get_scalar;
  api.stack_get_dtype = &tsr_stack_get_dtype;
  api.stack_get_device = &tsr_stack_get_device;
  api.kernel_register = &tsr_kernel_register;
  api.fallback_register = &tsr_fallback_register;
  api.device_register = &tsr_device_register;
  api.device_count = &tsr_device_count;
  api.device_synchronize = &tsr_device_synchronize;
  api.fallback_register_cpu = &tsr_fallback_register_cpu;
  api.fallback_count = &tsr_fallback_count;
  api.log = &Log;
  api.parallel_for = &tsr_parallel_for;
  api.num_threads = &tsr_num_threads;
  api.op_list = &tsr_op_list;
  api.op_describe = &tsr_op_describe;
  api.op_argument = &tsr_op_argument;
  api.op_return = &tsr_op_return;
  api.plugin_kernels = &tsr_plugin_kernels;
  api.stack_get_tensor_views = &tsr_stack_get_tensor_views;
  api.stack_get_call_plan = &tsr_stack_get_call_plan;
  api.stack_push_bool_list = &tsr_stack_push_bool_list;
  api.stack_get_bool_list = &tsr_stack_get_bool_list;
  api.stream_current_native = &tsr_stream_current_native;
  api.op_call_values = &tsr_op_call_values;
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

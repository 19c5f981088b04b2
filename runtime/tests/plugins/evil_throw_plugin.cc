// An adversarial C++ plugin that does not use the SDK: its kernel lets a C++ exception escape
// into the runtime (issue 14, item 10). The runtime must turn it into an error and leave the
// plugin's gate, so that the plugin can still be unloaded.
#include <cstring>
#include <stdexcept>

#include "tessera/c/plugin.h"

namespace {

const tsr_runtime_api* api = nullptr;

tsr_string Str(const char* s) { return tsr_string{s, std::strlen(s)}; }

tsr_error* ThrowingKernel(void*, const tsr_op*, tsr_stack*) {
  throw std::runtime_error("evil_throw::op: thrown on purpose");
}

tsr_error* NonStandardThrowingKernel(void*, const tsr_op*, tsr_stack*) { throw 42; }

tsr_error* Register(const char* op, tsr_boxed_kernel_fn fn) {
  tsr_kernel_desc desc{};
  desc.struct_size = sizeof desc;
  desc.op_name = Str(op);
  desc.device_type = TSR_DEVICE_CPU;
  desc.boxed = fn;
  desc.kernel_name = Str(op);
  return api->kernel_register(&desc, nullptr);
}

tsr_error* RegisterAll(void*, const tsr_runtime_api* runtime) {
  api = runtime;
  if (tsr_error* e = api->op_define(Str("evil_throw::op(Tensor self) -> Tensor"), nullptr)) {
    return e;
  }
  if (tsr_error* e = api->op_define(Str("evil_throw::int(Tensor self) -> Tensor"), nullptr)) {
    return e;
  }
  if (tsr_error* e = Register("evil_throw::op", &ThrowingKernel)) return e;
  return Register("evil_throw::int", &NonStandardThrowingKernel);
}

}  // namespace

extern "C" TSR_PLUGIN_EXPORT tsr_error* tsr_plugin_init(const tsr_runtime_api* runtime,
                                                        tsr_plugin_desc* desc) {
  api = runtime;
  desc->struct_size = sizeof *desc;
  desc->abi_major = TSR_ABI_VERSION_MAJOR;
  desc->abi_minor = TSR_ABI_VERSION_MINOR;
  desc->min_abi_minor = 0;
  desc->device_type = TSR_DEVICE_PRIVATEUSE3;
  desc->name = Str("evil_throw");
  desc->version = Str("0.1-evil");
  desc->device_name = Str("evildev");
  desc->register_fn = &RegisterAll;
  return nullptr;
}

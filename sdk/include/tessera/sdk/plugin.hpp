// Writing a plugin with the SDK: one TESSERA_PLUGIN block lists what the plugin registers.
//
//   sdk::Tensor my_relu(const sdk::Tensor& self) { ... }
//
//   TESSERA_PLUGIN(lib) {
//     lib.describe("npu", "1.0.0", TSR_DEVICE_PRIVATEUSE1, "npu");
//     lib.device(my_device_interface);
//     lib.impl<&my_relu>("relu");
//     lib.cpu_fallback();  // optional: ops without a kernel run on the CPU
//   }
//
// TESSERA_PLUGIN defines the one exported symbol, tsr_plugin_init. The block runs twice: once
// in tsr_plugin_init, where only describe() counts (the descriptor for the version
// handshake), and once in register_fn after the runtime accepted the plugin, where the rest
// registers. Every registration stays until the plugin is unloaded.
#pragma once

#include <cstring>
#include <string>

#include "tessera/sdk/boxing.hpp"

namespace tessera {
namespace sdk {

class Library {
 public:
  explicit Library(bool registering) : registering_(registering) {}

  // describe sets the plugin's descriptor. device_name renames a PrivateUse type ("" else).
  // The strings must be literals (or otherwise live while the plugin is loaded).
  void describe(const char* name, const char* version, tsr_device_type device_type,
                const char* device_name, uint32_t min_abi_minor = 0) {
    name_ = name;
    version_ = version;
    device_type_ = device_type;
    device_name_ = device_name;
    min_abi_minor_ = min_abi_minor;
  }

  // define adds an op of the plugin's own namespace ("npu::fused_gelu(Tensor self) -> Tensor").
  void define(const char* schema) {
    if (registering_) check(api().op_define(to_c(schema), nullptr));
  }

  // impl registers a typed C++ kernel for `op` on the plugin's device type.
  template <auto Kernel>
  void impl(const char* op) {
    impl_boxed(op, &Boxed<Kernel>, nullptr, op);
  }
  // impl_boxed registers a C kernel.
  void impl_boxed(const char* op, tsr_boxed_kernel_fn fn, void* context, const char* name) {
    if (!registering_) return;
    tsr_kernel_desc desc{};
    desc.struct_size = sizeof desc;
    desc.op_name = to_c(op);
    desc.device_type = device_type_;
    desc.boxed = fn;
    desc.context = context;
    const std::string kernel_name = name_ + std::string("::") + name;
    desc.kernel_name = to_c(kernel_name);
    check(api().kernel_register(&desc, nullptr));
  }

  // device registers the device type's memory and copy functions.
  void device(const tsr_device_interface& iface) {
    if (registering_) check(api().device_register(&iface, nullptr));
  }

  // cpu_fallback opts into the runtime's CPU fallback for every op without a kernel here.
  void cpu_fallback() {
    if (registering_) check(api().fallback_register_cpu(device_type_, nullptr));
  }

  const char* name() const { return name_; }

  // Used by TESSERA_PLUGIN: fills only what fits in the runtime's descriptor, so that the
  // plugin also loads into runtimes older than these headers (Note [Descriptor capacity]).
  void fill(tsr_plugin_desc* desc) const {
    const size_t capacity = tsr_plugin_desc_capacity(desc);
    desc->struct_size = capacity < sizeof *desc ? capacity : sizeof *desc;
    desc->name = to_c(name_);
    desc->version = to_c(version_);
    desc->abi_major = TSR_ABI_VERSION_MAJOR;
    desc->abi_minor = TSR_ABI_VERSION_MINOR;
    desc->min_abi_minor = min_abi_minor_;
    desc->device_type = device_type_;
    desc->device_name = to_c(device_name_);
  }

 private:
  bool registering_;
  const char* name_ = "";
  const char* version_ = "";
  int32_t device_type_ = TSR_DEVICE_PRIVATEUSE1;
  const char* device_name_ = "";
  uint32_t min_abi_minor_ = 0;
};

namespace internal {

// Runs the plugin's block, turning exceptions into errors.
template <typename Block>
tsr_error* RunBlock(Block block, Library& lib) noexcept {
  try {
    block(lib);
    return nullptr;
  } catch (const Error& e) {
    return e.to_c();
  } catch (const std::exception& e) {
    return api().error_create(TSR_INTERNAL, to_c(std::string("plugin threw: ") + e.what()));
  } catch (...) {
    return api().error_create(TSR_INTERNAL, to_c("plugin threw a non-standard exception"));
  }
}

}  // namespace internal
}  // namespace sdk
}  // namespace tessera

#define TESSERA_PLUGIN(lib)                                                                   \
  static void tessera_plugin_block(::tessera::sdk::Library& lib);                             \
  static tsr_error* tessera_plugin_register(void*, const tsr_runtime_api* api) {              \
    ::tessera::sdk::api_slot() = api;                                                         \
    ::tessera::sdk::Library library(/*registering=*/true);                                    \
    return ::tessera::sdk::internal::RunBlock(&tessera_plugin_block, library);                \
  }                                                                                           \
  extern "C" TSR_PLUGIN_EXPORT tsr_error* tsr_plugin_init(const tsr_runtime_api* api,         \
                                                          tsr_plugin_desc* desc) {            \
    if (api == nullptr || desc == nullptr || api->abi_major != TSR_ABI_VERSION_MAJOR) {       \
      return nullptr == api ? nullptr                                                         \
                            : api->error_create(TSR_FAILED_PRECONDITION,                      \
                                                tsr_string{"runtime ABI major differs", 25}); \
    }                                                                                         \
    ::tessera::sdk::api_slot() = api;                                                         \
    ::tessera::sdk::Library library(/*registering=*/false);                                   \
    if (tsr_error* e = ::tessera::sdk::internal::RunBlock(&tessera_plugin_block, library)) {  \
      return e;                                                                               \
    }                                                                                         \
    library.fill(desc);                                                                       \
    desc->register_fn = &tessera_plugin_register;                                             \
    return nullptr;                                                                           \
  }                                                                                           \
  static void tessera_plugin_block(::tessera::sdk::Library& lib)

// Writing a plugin with the SDK: one TESSERA_PLUGIN block lists what the plugin registers.
//
//   sdk::Tensor my_relu(const sdk::Tensor& self) { ... }
//
//   TESSERA_PLUGIN(lib) {
//     lib.describe("npu", "1.0.0", TSR_DEVICE_PRIVATEUSE1, "npu");
//     lib.device(my_device_interface);
//     lib.impl<&my_relu>(TESSERA_OP("relu"));  // signature checked at compile time
//     lib.cpu_fallback();  // optional: ops without a kernel run on the CPU
//   }
//
// TESSERA_PLUGIN defines the one exported symbol, tsr_plugin_init. The block runs twice: once
// in tsr_plugin_init, where only describe() counts (the descriptor for the version
// handshake), and once in register_fn after the runtime accepted the plugin, where the rest
// registers. Every registration stays until the plugin is unloaded.
#pragma once

#include <cstring>
#include <map>
#include <string>

#include "tessera/opset/opset.h"
#include "tessera/sdk/boxing.hpp"
#include "tessera/sdk/signature.hpp"

namespace tessera {
namespace sdk {

// The op set this SDK was generated with: its kernels state their schemas from it.
namespace current_opset = ::tessera::opset::v1_0;
static_assert(current_opset::kMajor == TSR_OP_SET_VERSION_MAJOR &&
                  current_opset::kMinor == TSR_OP_SET_VERSION_MINOR,
              "current_opset must name the newest op set (tessera/opset/opset.h)");

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
  // Its kernels state this schema as the one they were built against.
  void define(const char* schema) {
    const std::string_view text(schema);
    defined_[std::string(text.substr(0, text.find('(')))] = schema;
    if (registering_) check(api().op_define(to_c(schema), nullptr));
  }

  // impl registers a typed C++ kernel for `op` on the plugin's device type. Its parameters must
  // follow the op's schema (signature.hpp): with TESSERA_OP("relu") for an op of the SDK's op
  // set that is checked at compile time; with a plain name, at registration, against the
  // runtime's op listing (a mismatch refuses the plugin's load, naming the parameter).
  template <auto Kernel>
  void impl(const char* op) {
    if (!registering_) return;
    check_signature<Kernel>(op);
    impl_boxed(op, &Boxed<Kernel>, nullptr, op);
  }
  template <auto Kernel, typename OpName>
  void impl(OpName op_name) {
    constexpr std::string_view op = OpName{}();
    constexpr std::string_view schema = current_opset::FindSchema(op);
    static_assert(!schema.empty(),
                  "TESSERA_OP names an op that is not in the SDK's op set (tessera/opset/): "
                  "for a plugin's own op, use impl<&kernel>(\"ns::op\")");
    constexpr int mismatch = signature::Mismatch<Kernel>(schema);
    static_assert(mismatch == -1,
                  "the kernel's parameters do not follow the op's schema: one parameter per "
                  "schema argument, in order (Tensor -> sdk::Tensor, int -> int64_t, float -> "
                  "double, T? -> std::optional; see tessera/sdk/signature.hpp), and its return "
                  "type one sdk::Tensor per schema return");
    (void)op_name;
    impl_boxed(std::string(op).c_str(), &Boxed<Kernel>, nullptr, std::string(op).c_str());
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
    // Trace names are "<plugin>::<name>"; a name already in the plugin's namespace keeps it.
    const std::string prefix = name_ + std::string("::");
    const std::string kernel_name =
        std::string_view(name).substr(0, prefix.size()) == prefix ? name : prefix + name;
    desc.kernel_name = to_c(kernel_name);
    desc.schema = to_c(built_schema(op));
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
    if (TSR_FIELD_FITS(tsr_plugin_desc, op_set_minor, capacity)) {
      desc->op_set_major = TSR_OP_SET_VERSION_MAJOR;
      desc->op_set_minor = TSR_OP_SET_VERSION_MINOR;
    }
    desc->name = to_c(name_);
    desc->version = to_c(version_);
    desc->abi_major = TSR_ABI_VERSION_MAJOR;
    desc->abi_minor = TSR_ABI_VERSION_MINOR;
    desc->min_abi_minor = min_abi_minor_;
    desc->device_type = device_type_;
    desc->device_name = to_c(device_name_);
  }

 private:
  // built_schema: the schema a kernel for `op` is built against: the plugin's definition of
  // its own op, else the op's schema in the SDK's op set, else unstated (the runtime assumes
  // the op set the plugin states).
  std::string_view built_schema(std::string_view op) const {
    if (auto it = defined_.find(std::string(op)); it != defined_.end()) return it->second;
    return current_opset::FindSchema(op);
  }

  // check_signature compares the kernel's parameters with the op's arguments in the runtime's
  // op listing (a 1.0 runtime has none: nothing to check against).
  template <auto Kernel>
  void check_signature(const char* op) const {
    if (!TSR_API_HAS(&api(), op_argument) || !TSR_API_HAS(&api(), op_describe)) return;
    const tsr_op* handle = nullptr;
    check(api().op_find(to_c(op), &handle));
    tsr_op_info info{};
    info.struct_size = sizeof info;
    check(api().op_describe(handle, &info));
    constexpr auto params = signature::ParamKinds<Kernel>();
    auto refuse = [&](const std::string& what) {
      throw Error(TSR_INVALID_ARGUMENT, "impl<kernel>(\"" + std::string(op) + "\"): " + what +
                                            "; the op's schema is " +
                                            std::string(from_c(info.schema)));
    };
    if (params.size() != info.num_arguments) {
      refuse("the kernel takes " + std::to_string(params.size()) + " parameters, the op " +
             std::to_string(info.num_arguments) + " arguments");
    }
    for (size_t i = 0; i < params.size(); ++i) {
      tsr_arg_info arg{};
      arg.struct_size = sizeof arg;
      check(api().op_argument(handle, i, &arg));
      if (params[i].kind < 0 || !(params[i] == signature::KindOfType(from_c(arg.type)))) {
        refuse("parameter " + std::to_string(i) + " does not match argument '" +
               std::string(from_c(arg.name)) + "' of type " + std::string(from_c(arg.type)) +
               " (see tessera/sdk/signature.hpp for the C++ type of each schema type)");
      }
    }
    if (signature::ReturnCount<Kernel>() != static_cast<int>(info.num_returns)) {
      refuse("the kernel's return type does not give the op's " +
             std::to_string(info.num_returns) + " tensor return(s)");
    }
  }

  bool registering_;
  const char* name_ = "";
  const char* version_ = "";
  int32_t device_type_ = TSR_DEVICE_PRIVATEUSE1;
  const char* device_name_ = "";
  uint32_t min_abi_minor_ = 0;
  std::map<std::string, std::string> defined_;  // the plugin's own ops: name -> schema
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

// Writing a plugin with the SDK: one TESSERA_PLUGIN block lists what the plugin registers.
//
//   sdk::Tensor my_relu(const sdk::Tensor& self) { ... }
//
//   TESSERA_PLUGIN(lib) {
//     lib.describe("npu", "1.0.0", TSR_DEVICE_PRIVATEUSE1, "npu");
//     lib.on_register([] { my_driver_open(); });  // only when the plugin is registered
//     lib.on_unload([] { my_driver_close(); });   // when it is unloaded
//     lib.device(my_device_interface);            // device_type: the one describe() gave
//     lib.impl<&my_relu>(TESSERA_OP("relu"));     // signature checked at compile time
//     lib.impl_typed(TESSERA_OP("clamp.out"), &my_c_clamp_out);  // a typed C kernel, checked too
//     lib.cpu_fallback();  // optional: ops without a kernel run on the CPU
//   }
//
// TESSERA_PLUGIN defines the one exported symbol, tsr_plugin_init, and the descriptor's
// register_fn and unload_fn: a plugin written with it never writes them itself. The block runs
// twice: once in tsr_plugin_init, the describe pass, where only describe() and on_unload() count
// (the descriptor for the version handshake; nothing registers, no hook runs), and once in
// register_fn after the runtime accepted the plugin, the registration pass, where the rest
// registers and the on_register hooks run, in the block's order. Every registration stays until
// the plugin is unloaded.
#pragma once

#include <cstring>
#include <map>
#include <string>
#include <utility>

#include "tessera/base/device_types.hpp"
#include "tessera/opset/opset.h"
#include "tessera/sdk/boxing.hpp"
#include "tessera/sdk/signature.hpp"
#include "tessera/sdk/typed_c.hpp"

namespace tessera {
namespace sdk {

// The op set this SDK was generated with: its kernels state their schemas from it.
namespace current_opset = ::tessera::opset::v1_11;
static_assert(current_opset::kMajor == TSR_OP_SET_VERSION_MAJOR &&
                  current_opset::kMinor == TSR_OP_SET_VERSION_MINOR,
              "current_opset must name the newest op set (tessera/opset/opset.h)");

namespace internal {

// The function on_unload() names, for this plugin (one per shared object: the SDK is
// header-only and plugins are built with hidden visibility).
inline void (*&unload_slot())() {
  static void (*fn)() = nullptr;
  return fn;
}

// RunUnload is the descriptor's unload_fn: it runs on_unload()'s function, which must not let
// an exception into the runtime.
inline void RunUnload(void* /*state*/) noexcept {
  void (*fn)() = unload_slot();
  if (fn == nullptr) return;
  try {
    fn();
  } catch (const std::exception& e) {
    const std::string message = std::string("the plugin's unload function threw: ") + e.what();
    api().log(TSR_LOG_ERROR, to_c(message));
  } catch (...) {
    api().log(TSR_LOG_ERROR, to_c("the plugin's unload function threw a non-standard exception"));
  }
}

// DeviceTypeName: "privateuse1", for messages.
inline std::string DeviceTypeName(int32_t type) {
  const char* label = base::device_type_label(type);
  return label != nullptr ? label : "device type " + std::to_string(type);
}

}  // namespace internal

// Nondeterministic: the reason two identical calls of a kernel may give different bits (a
// GPU's atomic adds accumulate in scheduling order), given to Library::impl. Data for the
// kernel listing, the manifest and the conformance suite; with deterministic algorithms on
// (tessera/c/determinism.h) the runtime does not run the kernel. A runtime before ABI 1.2 ignores
// it. The reason must outlive the registration pass (a string literal).
struct Nondeterministic {
  const char* reason = nullptr;  // NULL: deterministic
};
inline Nondeterministic nondeterministic(const char* reason) { return Nondeterministic{reason}; }

class Library {
 public:
  explicit Library(bool registering) : registering_(registering) {}

  // describe sets the plugin's descriptor. device_name renames a PrivateUse type ("" else).
  // The strings must be literals (or otherwise live while the plugin is loaded). It comes first
  // in the block: what follows registers for the device type it names.
  void describe(const char* name, const char* version, tsr_device_type device_type,
                const char* device_name, uint32_t min_abi_minor = 0) {
    name_ = name;
    version_ = version;
    device_type_ = device_type;
    device_name_ = device_name;
    min_abi_minor_ = min_abi_minor;
  }

  // on_register runs `hook()` right here when the block runs to register, i.e. in register_fn,
  // once the runtime has accepted the plugin's versions; never in the describe pass. Put there
  // what only a plugin that is really being loaded should do: open the device's driver, read
  // its configuration, map its memory. A hook that throws (sdk::fail) refuses the plugin with
  // its message. The same hook runs when `tessera-plugin-info --embed` writes the manifest (it
  // loads the plugin on the build machine): a machine without the device should still load the
  // plugin (report 0 devices) rather than refuse it.
  template <typename Hook>
  void on_register(Hook&& hook) {
    if (!registering_) return;
    hooks_ran_ = true;
    std::forward<Hook>(hook)();
  }

  // on_unload names the function that undoes the hooks (the descriptor's unload_fn): the
  // runtime calls it when the plugin is unloaded, after its last kernel call has returned and
  // the last tensor on its device is gone, before dlclose. If the registration pass fails after
  // an on_register hook started, the SDK calls it right away (the runtime calls unload_fn only
  // for plugins it loaded). A plain function or a lambda without captures; it must not throw
  // (an exception is logged and dropped).
  void on_unload(void (*fn)()) { internal::unload_slot() = fn; }

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
  // A kernel whose two identical calls may give different bits says why (ABI 1.2; Note
  // [Deterministic algorithms]):
  //   lib.impl<&index_add>("index_add.out", sdk::nondeterministic("atomic adds in any order"));
  template <auto Kernel>
  void impl(const char* op, Nondeterministic nondeterministic = {}) {
    if (!registering_) return;
    check_signature<Kernel>(op);
    register_kernel(op, &Boxed<Kernel>, nullptr, nullptr, op, -1, &Packed<Kernel>,
                    nondeterministic);
  }
  template <auto Kernel, typename OpName>
  void impl(OpName op_name, Nondeterministic nondeterministic = {}) {
    constexpr std::string_view op = OpName{}();
    constexpr std::string_view schema = current_opset::FindSchema(op);
    static_assert(!schema.empty(),
                  "TESSERA_OP names an op that is not in the SDK's op set (tessera/opset/): "
                  "for a plugin's own op, use impl<&kernel>(\"ns::op\")");
    // A name outside the op set has no schema to compare with: the assertion above alone.
    constexpr int mismatch = schema.empty() ? -1 : signature::Mismatch<Kernel>(schema);
    static_assert(signature::FirstMismatch<mismatch>::none,
                  "the kernel's parameters do not follow the op's schema: one parameter per "
                  "schema argument, in order (Tensor -> sdk::Tensor, int -> int64_t, float -> "
                  "double, T? -> std::optional; see tessera/sdk/signature.hpp), and its return "
                  "type one sdk::Tensor per schema return. The compiler's note names "
                  "FirstMismatch<N>: N is the first parameter that differs, counting from 0 "
                  "without a leading KernelContext (the kernel's parameter count where the counts "
                  "differ; -2: the return type)");
    (void)op_name;
    const std::string name(op);
    register_kernel(name.c_str(), &Boxed<Kernel>, nullptr, nullptr, name.c_str(), -1,
                    &Packed<Kernel>, nondeterministic);
  }

  // meta registers a typed C++ kernel as the Meta function of an op the plugin defines
  // (define()): the shape function the runtime runs on meta tensors, and before every device
  // call of the op to check its arguments and, afterwards, the kernel's results. It reads only
  // its arguments' metadata (sizes, dtype; before a device call they are the real tensors, whose
  // data it must not touch) and returns one meta tensor per return, of the result's shape and
  // dtype: Tensor::empty(shape, dtype, kMeta). The runtime refuses a Meta function for an op the
  // plugin did not define (PERMISSION_DENIED: op set v1's ops have the runtime's own).
  template <auto Kernel>
  void meta(const char* op) {
    if (!registering_) return;
    check_signature<Kernel>(op);
    register_kernel(op, &Boxed<Kernel>, nullptr, nullptr, (std::string(op) + "(meta)").c_str(),
                    TSR_DEVICE_META);
  }

  // impl_typed registers a typed C kernel (tessera/c/kernel.h): a plain C function
  //   tsr_error* fn(void* context, <C parameters of the op's arguments>, tsr_tensor** out...)
  // that the runtime calls through libffi, with `context` as its first argument. Its parameter
  // types must follow kernel.h's C mapping of the op's schema (typed_c.hpp): with
  // TESSERA_OP("clamp.out") that is checked at compile time; with a plain name, at
  // registration, against the schema the kernel is built against (the op set's, the plugin's
  // define(), or the runtime's op listing), and a mismatch refuses the plugin's load, naming
  // the parameter. `kernel_name` defaults to the op's name (traces say "<plugin>::<op>").
  template <typename OpName, typename... Params>
  void impl_typed(OpName op_name, tsr_error* (*fn)(void*, Params...), void* context = nullptr,
                  const char* kernel_name = nullptr, Nondeterministic nondeterministic = {}) {
    constexpr std::string_view op = OpName{}();
    constexpr std::string_view schema = current_opset::FindSchema(op);
    static_assert(!schema.empty(),
                  "TESSERA_OP names an op that is not in the SDK's op set (tessera/opset/): "
                  "for a plugin's own op, use impl_typed(\"ns::op\", &fn)");
    constexpr typed_c::Check c = typed_c::CheckParams(schema, typed_c::ParamTypes<Params...>());
    static_assert(c.unmapped_argument == -1,
                  "the op has an argument without a C mapping (Layout, MemoryFormat, Generator, "
                  "a list other than int[]): register a boxed kernel instead");
    static_assert(c.mismatch == -1,
                  "the typed C kernel's parameters do not follow the op's schema: after `void* "
                  "context`, the C type of each schema argument in order (Tensor -> tsr_tensor*, "
                  "int -> int64_t, float -> double, bool -> int32_t, Scalar -> tsr_scalar, "
                  "int[] -> const int64_t*, size_t, T? -> const T*; see tessera/sdk/typed_c.hpp "
                  "and tessera/c/kernel.h), then one tsr_tensor** per return");
    (void)op_name;
    const std::string name(op);
    register_kernel(name.c_str(), nullptr, reinterpret_cast<tsr_typed_kernel_fn>(fn), context,
                    kernel_name != nullptr ? kernel_name : name.c_str(), -1, nullptr,
                    nondeterministic);
  }
  template <typename... Params>
  void impl_typed(const char* op, tsr_error* (*fn)(void*, Params...), void* context = nullptr,
                  const char* kernel_name = nullptr, Nondeterministic nondeterministic = {}) {
    if (!registering_) return;
    check_typed(op, typed_c::ParamTypes<Params...>());
    register_kernel(op, nullptr, reinterpret_cast<tsr_typed_kernel_fn>(fn), context,
                    kernel_name != nullptr ? kernel_name : op, -1, nullptr, nondeterministic);
  }
  // impl_typed with a function already cast to tsr_typed_kernel_fn: nothing can be checked, the
  // parameters are the plugin's to get right.
  void impl_typed(const char* op, tsr_typed_kernel_fn fn, void* context = nullptr,
                  const char* kernel_name = nullptr, Nondeterministic nondeterministic = {}) {
    register_kernel(op, nullptr, fn, context, kernel_name != nullptr ? kernel_name : op, -1,
                    nullptr, nondeterministic);
  }

  // impl_boxed registers a boxed C kernel (tsr_boxed_kernel_fn).
  void impl_boxed(const char* op, tsr_boxed_kernel_fn fn, void* context, const char* name,
                  Nondeterministic nondeterministic = {}) {
    register_kernel(op, fn, nullptr, context, name, -1, nullptr, nondeterministic);
  }

  // device registers the device type's memory and copy functions (tessera/c/device.h). The SDK
  // completes what describe() already says: a device_type left 0 becomes the described device
  // type (another one refuses the plugin, naming both), and a struct_size left 0 becomes
  // sizeof(tsr_device_interface).
  void device(const tsr_device_interface& iface) {
    if (!registering_) return;
    require_described("device");
    if (device_type_ == TSR_DEVICE_CPU) {
      fail(TSR_INVALID_ARGUMENT, "Library::device: plugin '" + std::string(name_) +
                                     "' provides device type cpu, whose memory is the "
                                     "runtime's own: a CPU plugin registers no device interface");
    }
    tsr_device_interface filled = iface;
    if (filled.struct_size == 0) filled.struct_size = sizeof filled;
    if (filled.device_type == TSR_DEVICE_CPU) {  // 0: left unset
      filled.device_type = device_type_;
    } else if (filled.device_type != device_type_) {
      fail(TSR_INVALID_ARGUMENT, "Library::device: the interface's device_type is " +
                                     internal::DeviceTypeName(filled.device_type) +
                                     ", but plugin '" + name_ + "' provides " +
                                     internal::DeviceTypeName(device_type_) +
                                     " (describe()); leave device_type 0 and the SDK sets it");
    }
    check(api().device_register(&filled, nullptr));
  }

  // graph_compiler registers the device type's graph compiler (tessera/c/graph.h): it is shown
  // each model compiled for the device and may claim runs of its nodes. As device(), the SDK
  // sets a device_type left 0 and a struct_size left 0. In a runtime before 1.2, which has no
  // graph compilers, it registers nothing: the plugin loads and models run node by node.
  void graph_compiler(const tsr_graph_compiler& compiler) {
    if (!registering_) return;
    require_described("graph_compiler");
    if (!TSR_API_HAS(&api(), graph_compiler_register)) return;
    tsr_graph_compiler filled = compiler;
    if (filled.struct_size == 0) filled.struct_size = sizeof filled;
    if (filled.device_type == TSR_DEVICE_CPU && device_type_ != TSR_DEVICE_CPU) {
      filled.device_type = device_type_;  // 0: left unset
    }
    check(api().graph_compiler_register(&filled, nullptr));
  }

  // cpu_fallback opts into the runtime's CPU fallback for every op without a kernel here.
  void cpu_fallback() {
    if (!registering_) return;
    require_described("cpu_fallback");
    check(api().fallback_register_cpu(device_type_, nullptr));
  }

  const char* name() const { return name_; }
  // hooks_ran: whether an on_register hook started in this pass (TESSERA_PLUGIN then runs the
  // unload function itself if the pass fails).
  bool hooks_ran() const { return hooks_ran_; }

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
    desc->unload_fn = internal::unload_slot() != nullptr ? &internal::RunUnload : nullptr;
  }

 private:
  // register_kernel registers `boxed` or `typed` (exactly one) for `op` on the device type,
  // with `packed` beside `boxed` when given (the runtime uses it for out= and in-place ops;
  // Packed<&kernel>). It registers for the plugin's device type, or for `device_type` when
  // given (the Meta device type, meta()).
  void register_kernel(const char* op, tsr_boxed_kernel_fn boxed, tsr_typed_kernel_fn typed,
                       void* context, const char* name, int32_t device_type = -1,
                       tsr_packed_kernel_fn packed = nullptr,
                       Nondeterministic nondeterministic = {}) {
    if (!registering_) return;
    require_described("impl");
    if (nondeterministic.reason != nullptr && *nondeterministic.reason == '\0') {
      fail(TSR_INVALID_ARGUMENT, std::string("the kernel for ") + op +
                                     ": sdk::nondeterministic needs the reason (\"atomic adds "
                                     "in scheduling order\"), got an empty one");
    }
    tsr_kernel_desc desc{};
    desc.struct_size = sizeof desc;
    desc.op_name = to_c(op);
    desc.device_type = device_type >= 0 ? device_type : device_type_;
    desc.boxed = boxed;
    desc.typed = typed;
    desc.context = context;
    // Trace names are "<plugin>::<name>"; a name already in the plugin's namespace keeps it.
    const std::string prefix = name_ + std::string("::");
    const std::string kernel_name =
        std::string_view(name).substr(0, prefix.size()) == prefix ? name : prefix + name;
    desc.kernel_name = to_c(kernel_name);
    desc.schema = to_c(built_schema(op));
    desc.packed = packed;
    desc.nondeterministic = to_c(nondeterministic.reason != nullptr ? nondeterministic.reason : "");
    tsr_error* error = api().kernel_register(&desc, nullptr);
    if (error != nullptr && api().error_code(error) == TSR_NOT_FOUND &&
        defined_.find(std::string(op)) == defined_.end() &&
        !current_opset::FindSchema(op).empty()) {
      // An op of a newer op set than the runtime's (a plugin may be newer than the runtime it
      // loads into, DESIGN.md rule 9): nothing can call the op there, so its kernel is left
      // out and the plugin loads with the rest.
      api().error_release(error);
      const std::string message = "plugin '" + std::string(name_) + "': no kernel for " + op +
                                  ": this runtime's op set predates the op";
      api().log(TSR_LOG_INFO, to_c(message));
      return;
    }
    check(error);
  }

  // require_described refuses a registration that comes before describe() in the block: it
  // would go to a device type the plugin has not named yet.
  void require_described(const char* what) const {
    if (name_[0] == '\0') {
      fail(TSR_FAILED_PRECONDITION,
           std::string("Library::") + what +
               ": describe() must come first in the TESSERA_PLUGIN block (it names the plugin "
               "and the device type everything else registers for)");
    }
  }

  // built_schema: the schema a kernel for `op` is built against: the plugin's definition of
  // its own op, else the op's schema in the SDK's op set, else unstated (the runtime assumes
  // the op set the plugin states).
  std::string_view built_schema(std::string_view op) const {
    if (auto it = defined_.find(std::string(op)); it != defined_.end()) return it->second;
    return current_opset::FindSchema(op);
  }

  // op_schema: the runtime's canonical schema of `op` (empty on a 1.0 runtime, which has no
  // op listing).
  std::string op_schema(const char* op) const {
    if (!TSR_API_HAS(&api(), op_describe)) return "";
    const tsr_op* handle = nullptr;
    check(api().op_find(to_c(op), &handle));
    tsr_op_info info{};
    info.struct_size = sizeof info;
    check(api().op_describe(handle, &info));
    return std::string(from_c(info.schema));
  }

  // check_typed compares a typed C kernel's parameters with the schema it is built against:
  // the op set's, else the runtime's listing (canonical text; a plugin's own op is there as
  // its define() made it), else (a 1.0 runtime) the plugin's define(); an op that none of them
  // has is not defined, and the registration says so.
  template <size_t N>
  void check_typed(const char* op, const std::array<typed_c::CType, N>& params) const {
    std::string schema(current_opset::FindSchema(op));
    if (schema.empty()) schema = op_schema(op);
    if (schema.empty()) schema = std::string(built_schema(op));
    if (schema.empty()) return;
    const typed_c::Check c = typed_c::CheckParams(schema, params);
    if (c.ok()) return;
    throw Error(TSR_INVALID_ARGUMENT, "impl_typed(\"" + std::string(op) +
                                          "\"): " + typed_c::Describe(c, schema, params) +
                                          "; the op's schema is " + schema);
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
    constexpr auto param_types = signature::ParamTypeNames<Kernel>();
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
      const signature::ArgKind wanted = signature::KindOfType(from_c(arg.type));
      if (params[i].kind < 0 || !(params[i] == wanted)) {
        // Counted from 1 without a leading KernelContext, as impl_typed counts after its context.
        refuse("parameter " + std::to_string(i + 1) + " (a KernelContext not counted) is " +
               signature::CppTypeName(params[i], param_types[i]) + ", but argument '" +
               std::string(from_c(arg.name)) + "' of type " + std::string(from_c(arg.type)) +
               " needs " +
               (wanted.kind < 0 ? "a boxed kernel (no typed C++ mapping)"
                                : signature::CppTypeName(wanted)) +
               " (tessera/sdk/signature.hpp maps each schema type)");
      }
    }
    if (signature::ReturnCount<Kernel>() != static_cast<int>(info.num_returns)) {
      refuse("the kernel's return type does not give the op's " + std::to_string(info.num_returns) +
             " tensor return(s)");
    }
  }

  bool registering_;
  bool hooks_ran_ = false;
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

// Register is the plugin's register_fn: the registration pass. When it fails after a hook
// started, the runtime will not call unload_fn (the plugin is refused), so it runs here.
template <typename Block>
tsr_error* Register(Block block, const tsr_runtime_api* runtime) noexcept {
  api_slot() = runtime;
  Library library(/*registering=*/true);
  tsr_error* error = RunBlock(block, library);
  if (error != nullptr && library.hooks_ran()) RunUnload(nullptr);
  return error;
}

// Describe is tsr_plugin_init: the describe pass, which fills the descriptor.
template <typename Block>
tsr_error* Describe(Block block, const tsr_runtime_api* runtime, tsr_plugin_desc* desc,
                    tsr_error* (*register_fn)(void*, const tsr_runtime_api*)) noexcept {
  if (runtime == nullptr) return nullptr;  // no table to make an error with
  if (desc == nullptr) {
    return runtime->error_create(TSR_INVALID_ARGUMENT,
                                 tsr_string{"tsr_plugin_init: desc is NULL", 29});
  }
  if (runtime->abi_major != TSR_ABI_VERSION_MAJOR) {
    return runtime->error_create(TSR_FAILED_PRECONDITION,
                                 tsr_string{"runtime ABI major differs", 25});
  }
  api_slot() = runtime;
  Library library(/*registering=*/false);
  if (tsr_error* e = RunBlock(block, library)) return e;
  library.fill(desc);
  desc->register_fn = register_fn;
  return nullptr;
}

}  // namespace internal
}  // namespace sdk
}  // namespace tessera

#define TESSERA_PLUGIN(lib)                                                           \
  static void tessera_plugin_block(::tessera::sdk::Library& lib);                     \
  static tsr_error* tessera_plugin_register(void*, const tsr_runtime_api* api) {      \
    return ::tessera::sdk::internal::Register(&tessera_plugin_block, api);            \
  }                                                                                   \
  extern "C" TSR_PLUGIN_EXPORT tsr_error* tsr_plugin_init(const tsr_runtime_api* api, \
                                                          tsr_plugin_desc* desc) {    \
    return ::tessera::sdk::internal::Describe(&tessera_plugin_block, api, desc,       \
                                              &tessera_plugin_register);              \
  }                                                                                   \
  static void tessera_plugin_block(::tessera::sdk::Library& lib)

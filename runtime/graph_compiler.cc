// tsr_graph_compiler_register and the calls into a registered graph compiler (graph_compiler.h).
#include "runtime/graph_compiler.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "core/status_macros.h"
#include "dispatcher/call_epoch.h"
#include "runtime/handles.h"
#include "runtime/runtime_state.h"

namespace tessera {
namespace capi {
namespace {

// The size of the 1.2 struct, the first with a graph compiler: every field through `release`.
constexpr size_t kGraphCompiler12Size =
    offsetof(tsr_graph_compiler, release) + sizeof(tsr_graph_compiler::release);

absl::Mutex g_compilers_mu(absl::kConstInit);
// One per device type, indexed by its value (core's DeviceType); NULL: none.
std::array<std::shared_ptr<const GraphCompiler>, kNumDeviceTypes>& Compilers()
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(g_compilers_mu) {
  static auto* compilers = new std::array<std::shared_ptr<const GraphCompiler>, kNumDeviceTypes>();
  return *compilers;
}

absl::Status CheckCompiler(const tsr_graph_compiler* c) {
  const char* fn = "tsr_graph_compiler_register";
  if (c == nullptr) return absl::InvalidArgumentError(absl::StrFormat("%s: compiler is NULL", fn));
  if (c->struct_size < kGraphCompiler12Size) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: compiler->struct_size is %d, expected at least %d (the 1.2 struct)",
                        fn, c->struct_size, kGraphCompiler12Size));
  }
  TSR_ASSIGN_OR_RETURN(DeviceType type, ToDeviceType(c->device_type, fn));
  if (type == DeviceType::kMeta) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: expected a device type that runs models, got meta", fn));
  }
  const std::pair<const char*, bool> slots[] = {{"claim", c->claim != nullptr},
                                                {"prepare", c->prepare != nullptr},
                                                {"execute", c->execute != nullptr},
                                                {"release", c->release != nullptr}};
  for (const auto& [name, set] : slots) {
    if (!set) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: the required function '%s' is NULL", fn, name));
    }
  }
  return absl::OkStatus();
}

}  // namespace

template <typename F>
absl::Status GraphCompiler::Call(const char* what, F&& body) const {
  if (!gate_->Enter()) {
    return absl::UnavailableError(absl::StrFormat(
        "%s: the graph compiler's plugin '%s' has been unloaded", what, plugin_name()));
  }
  GateExit exit(gate_.get());
  try {
    return StatusFrom(body());
  } catch (...) {  // Note [Exceptions from plugin code] in plugin_gate.h
    return KernelThrew(what, "graph compiler", gate_.get());
  }
}

absl::StatusOr<size_t> GraphCompiler::Claim(const tsr_graph& graph, size_t first) const {
  size_t count = 0;
  TSR_RETURN_IF_ERROR(Call("claim", [&] { return c_.claim(c_.context, &graph, first, &count); }));
  if (count > graph.num_nodes - first) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "claim: plugin '%s' claimed %d nodes from node %d on, past the graph's %d nodes",
        plugin_name(), count, first, graph.num_nodes));
  }
  return count;
}

absl::StatusOr<std::unique_ptr<GraphExecutable>> GraphCompiler::Prepare(
    const tsr_graph& graph, const tsr_graph_run& run) const {
  void* handle = nullptr;
  TSR_RETURN_IF_ERROR(
      Call("prepare", [&] { return c_.prepare(c_.context, &graph, &run, &handle); }));
  return std::make_unique<GraphExecutable>(shared_from_this(), handle, run.num_outputs);
}

GraphExecutable::~GraphExecutable() {
  // As a tensor's memory is freed after its plugin's unload (PluginDevice::Free): the code is
  // still mapped (compiler_ holds the plugin's record) and the executable is the plugin's.
  compiler_->c_.release(compiler_->c_.context, handle_);
}

absl::Status GraphExecutable::Execute(absl::Span<const Tensor> inputs, absl::Span<Tensor> outputs,
                                      Device device) const {
  std::vector<tsr_tensor*> in(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    in[i] = reinterpret_cast<tsr_tensor*>(inputs[i].impl());
  }
  std::vector<tsr_tensor*> out(num_outputs_, nullptr);
  const GraphCompiler& c = *compiler_;
  CallScope scope;  // graph_compiler.h: an unload from inside is refused, not a self-wait
  absl::Status s = c.Call("execute", [&] {
    return c.c_.execute(c.c_.context, handle_, in.data(), in.size(), out.data(), out.size());
  });
  // Take every reference handed back, also on error, so that none leaks.
  std::vector<Tensor> got(out.size());
  for (size_t k = 0; k < out.size(); ++k) {
    if (out[k] != nullptr) got[k] = Tensor(Ref<TensorImpl>::Adopt(Unwrap(out[k])));
  }
  TSR_RETURN_IF_ERROR(s);
  for (size_t k = 0; k < got.size(); ++k) {
    if (!got[k].defined()) {
      return absl::InternalError(absl::StrFormat(
          "execute: plugin '%s' stored no tensor for output %d of its run", plugin_name(), k));
    }
    if (got[k].device() != device) {
      return absl::InternalError(absl::StrFormat(
          "execute: plugin '%s' returned output %d on %s, expected %s", plugin_name(), k,
          DeviceToString(got[k].device()), DeviceToString(device)));
    }
  }
  for (size_t k = 0; k < got.size() && k < outputs.size(); ++k) outputs[k] = std::move(got[k]);
  return absl::OkStatus();
}

std::shared_ptr<const GraphCompiler> GraphCompilerFor(DeviceType type) {
  absl::MutexLock lock(&g_compilers_mu);
  return Compilers()[static_cast<size_t>(type)];
}

}  // namespace capi
}  // namespace tessera

using namespace tessera;        // NOLINT: this file's C entry point
using namespace tessera::capi;  // NOLINT

extern "C" tsr_error* tsr_graph_compiler_register(const tsr_graph_compiler* compiler,
                                                  tsr_registration** out) {
  return Guard(__func__, [&]() -> tsr_error* {
    if (out) *out = nullptr;
    if (absl::Status s = CheckCompiler(compiler); !s.ok()) return ToError(s);
    const auto type = static_cast<DeviceType>(compiler->device_type);
    if (absl::Status s =
            CheckOwnership(compiler->device_type, nullptr,
                           absl::StrFormat("a graph compiler for %s", DeviceTypeName(type)));
        !s.ok()) {
      return ToError(s);
    }
    tsr_graph_compiler copy = {};
    std::memcpy(&copy, compiler, std::min(sizeof copy, compiler->struct_size));
    copy.struct_size = sizeof copy;
    std::shared_ptr<PluginRecord> plugin = LoadingPluginShared();
    auto registered = std::make_shared<GraphCompiler>(
        copy, std::make_shared<PluginGate>(plugin ? plugin->name : "application"), plugin);
    {
      absl::MutexLock lock(&g_compilers_mu);
      std::shared_ptr<const GraphCompiler>& slot = Compilers()[static_cast<size_t>(type)];
      if (slot != nullptr) {
        return ToError(absl::AlreadyExistsError(absl::StrFormat(
            "tsr_graph_compiler_register: device type '%s' already has a graph compiler (plugin "
            "'%s')",
            DeviceTypeName(type), slot->plugin_name())));
      }
      slot = registered;
    }
    // The undo holds the compiler by raw pointer: the plugin's record holds this registration,
    // and the compiler holds the record.
    GraphCompiler* raw = registered.get();
    RegistrationHandle handle([type, raw] {
      std::shared_ptr<const GraphCompiler> gone;  // released outside the lock
      {
        absl::MutexLock lock(&g_compilers_mu);
        std::shared_ptr<const GraphCompiler>& slot = Compilers()[static_cast<size_t>(type)];
        if (slot.get() == raw) gone = std::move(slot);
      }
      raw->Unregister();
    });
    return HandOut(std::move(handle), out);
  });
}

// The C ABI's kernel and fallback registration: C kernels run behind a trampoline that turns
// their tsr_error* into a Status and passes through their plugin's gate.
#include "tessera/c/kernel.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "absl/strings/str_format.h"
#include "dispatcher/unboxed_call.h"
#include "runtime/call_views.h"
#include "runtime/device_registry.h"
#include "runtime/env_switch.h"
#include "runtime/handles.h"
#include "runtime/kernel_schema.h"
#include "runtime/runtime_state.h"
#include "runtime/struct_sizes.h"
#include "runtime/typed_kernel.h"
#include "runtime/values.h"

using namespace tessera;        // NOLINT: this file only implements the C entry points
using namespace tessera::capi;  // NOLINT

namespace {

// CKernel: what the trampoline needs. Owned by the KernelFunction (and so kept by the registry
// for as long as it lives, see Note [Lock-free dispatch]); the gate outlives the plugin.
struct CKernel {
  tsr_boxed_kernel_fn fn;
  void* context;
  std::shared_ptr<PluginGate> gate;       // NULL for kernels registered by the application
  std::string name;                       // for errors
  tsr_packed_kernel_fn packed = nullptr;  // the packed entry (Note [Packed kernel calls])
};

absl::Status Trampoline(void* context, const OperatorHandle& op, Stack* stack) {
  const CKernel& k = *static_cast<const CKernel*>(context);
  // Note [Device memory belongs to its plugin instance]
  if (absl::Status s = CheckArguments(*stack, op.name(), k.name); !s.ok()) return s;
  if (k.gate && !k.gate->MayEnterCall()) return PluginUnloaded(op.name(), *k.gate);
  try {
    return StatusFrom(k.fn(k.context, Wrap(op), Wrap(stack)));
  } catch (...) {  // Note [Exceptions from plugin code]
    return KernelThrew(op.name(), k.name, k.gate.get());
  }
}

// PackedKernelsEnabled: TESSERA_PACKED_KERNELS=0 registers every kernel's boxed entry alone
// (docs/build.md), so that tests can run the boxed entries that packed calls otherwise bypass.
// Read at each registration: a plugin loaded after the variable changes follows it.
// Another value than 0 or 1 keeps them on and is logged once.
bool PackedKernelsEnabled() {
  static std::atomic<bool> warned{false};
  return EnvSwitchOn("TESSERA_PACKED_KERNELS", warned, "packed kernel entries stay on");
}

// The most arguments a packed call passes (an op with more gets the boxed entry only): the
// values and views live on PackedTrampoline's frame.
constexpr size_t kMaxPackedArguments = 16;

// CallPackedEntry calls `k`'s packed entry with the call's arguments and their views (filled by
// the caller from a Stack or from unboxed arguments) and reads what it returns.
absl::Status CallPackedEntry(const CKernel& k, const OperatorHandle& op, tsr_stack* stack,
                             const tsr_value* args, const tsr_tensor_view* const* views, size_t n,
                             const CallPlan* plan, absl::Span<const TensorImpl*> returned) {
  const tsr_call_plan c_plan = PlanToC(plan);
  tsr_value returns[kMaxPackedReturns];
  for (size_t r = 0; r < returned.size(); ++r) {  // TSR_VALUE_NONE, as kernel.h promises
    std::memset(&returns[r], 0, sizeof returns[r]);
  }
  tsr_kernel_call call;
  call.struct_size = sizeof call;
  call.op = Wrap(op);
  call.stack = stack;
  call.args = args;
  call.views = views;
  call.num_args = n;
  call.plan = &c_plan;
  call.returns = returns;
  call.num_returns = returned.size();
  if (k.gate && !k.gate->MayEnterCall()) return PluginUnloaded(op.name(), *k.gate);
  absl::Status status;
  try {
    status = StatusFrom(k.packed(k.context, &call));
  } catch (...) {  // Note [Exceptions from plugin code]
    return KernelThrew(op.name(), k.name, k.gate.get());
  }
  for (size_t r = 0; r < returned.size(); ++r) {
    returned[r] = returns[r].kind == TSR_VALUE_TENSOR ? Unwrap(returns[r].u.tensor) : nullptr;
  }
  return status;
}

// PackedTrampoline: the packed entry of a C kernel (Note [Packed kernel calls] in
// dispatcher/kernel_results.cc): the stack's values and views in one tsr_kernel_call.
absl::Status PackedTrampoline(void* context, const OperatorHandle& op, Stack* stack,
                              const CallPlan* plan, absl::Span<const TensorImpl*> returned) {
  const CKernel& k = *static_cast<const CKernel*>(context);
  const size_t n = stack->size();
  if (ABSL_PREDICT_FALSE(n > kMaxPackedArguments || returned.size() > kMaxPackedReturns)) {
    return absl::InternalError(absl::StrFormat(
        "%s: kernel '%s' has a packed entry, but the call has %d arguments and %d returns (at "
        "most %d and %d)",
        op.name(), k.name, n, returned.size(), kMaxPackedArguments, kMaxPackedReturns));
  }
  tsr_value args[kMaxPackedArguments];
  tsr_tensor_view view_storage[kMaxPackedArguments];
  const tsr_tensor_view* views[kMaxPackedArguments];
  bool has_list = false;
  for (size_t i = 0; i < n; ++i) {
    const Value& v = (*stack)[i];
    if (v.is_tensor() && v.tensor().defined()) {  // the common case, without ValueToC's switch
      // Note [Device memory belongs to its plugin instance], as CheckArguments checks it.
      if (ABSL_PREDICT_FALSE(Orphaned(v.tensor()))) {
        return OrphanedError(
            v.tensor(), absl::StrFormat("%s: argument %d of kernel '%s'", op.name(), i, k.name));
      }
      args[i].kind = TSR_VALUE_TENSOR;  // the union's other members mean nothing for a tensor
      args[i].reserved = 0;
      args[i].u.tensor = reinterpret_cast<tsr_tensor*>(v.tensor().impl());
      FillView(*v.tensor().impl(), &view_storage[i]);
      views[i] = &view_storage[i];
    } else {
      has_list |= v.is_tensor_list();
      args[i] = ValueToC(v);
      views[i] = nullptr;
    }
  }
  if (has_list) {  // the lists' tensors: rare on a packed call
    if (absl::Status s = CheckArguments(*stack, op.name(), k.name); !s.ok()) return s;
  }
  return CallPackedEntry(k, op, Wrap(stack), args, views, n, plan, returned);
}

// UnboxedTrampoline: the same packed entry for an unboxed call (Note [The unboxed fast path] in
// dispatcher/unboxed_call.cc): its values and views come from the call's arguments, and its
// stack (CallUnboxedPacked's) is one that fills itself only if the kernel reads or writes it.
absl::Status UnboxedTrampoline(void* context, const OperatorHandle& op, const UnboxedArgs& uargs,
                               Stack* stack, const CallPlan* plan,
                               absl::Span<const TensorImpl*> returned) {
  const CKernel& k = *static_cast<const CKernel*>(context);
  const size_t n = uargs.size();  // <= UnboxedArgs::kMax < kMaxPackedArguments
  tsr_value args[UnboxedArgs::kMax];
  tsr_tensor_view view_storage[UnboxedArgs::kMax];
  const tsr_tensor_view* views[UnboxedArgs::kMax];
  for (size_t i = 0; i < n; ++i) {
    const UnboxedArg& a = uargs[i];
    args[i].reserved = 0;
    views[i] = nullptr;
    switch (a.kind()) {
      case UnboxedArg::Kind::kTensor:
        // Note [Device memory belongs to its plugin instance], as CheckArguments checks it.
        if (ABSL_PREDICT_FALSE(Orphaned(a.tensor()))) {
          return OrphanedError(
              a.tensor(), absl::StrFormat("%s: argument %d of kernel '%s'", op.name(), i, k.name));
        }
        args[i].kind = TSR_VALUE_TENSOR;
        args[i].u.tensor = reinterpret_cast<tsr_tensor*>(a.tensor().impl());
        FillView(*a.tensor().impl(), &view_storage[i]);
        views[i] = &view_storage[i];
        break;
      case UnboxedArg::Kind::kScalar:
        args[i].kind = TSR_VALUE_SCALAR;
        args[i].u.scalar = ToC(a.scalar());
        break;
      case UnboxedArg::Kind::kNone:
        std::memset(&args[i], 0, sizeof args[i]);
        break;
    }
  }
  return CallPackedEntry(k, op, Wrap(stack), args, views, n, plan, returned);
}

absl::StatusOr<KernelFunction> MakeKernel(tsr_boxed_kernel_fn fn, void* context, tsr_string name,
                                          const char* what, tsr_packed_kernel_fn packed = nullptr) {
  if (fn == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: expected a kernel function, got NULL", what));
  }
  absl::StatusOr<std::string_view> text = ReadString(name, what, "the kernel's name");
  if (!text.ok()) return text.status();
  PluginRecord* plugin = LoadingPlugin();
  KernelFunction kernel;
  kernel.fn = &Trampoline;
  kernel.name = std::string(*text);
  if (kernel.name.empty()) kernel.name = plugin ? plugin->name + "::<unnamed>" : "<unnamed>";
  if (plugin != nullptr) kernel.plugin = plugin->name;
  auto k = std::make_shared<CKernel>(
      CKernel{fn, context, plugin ? plugin->gate : nullptr, kernel.name, packed});
  kernel.context = k.get();
  kernel.owner = k;
  return kernel;
}

// UsePacked gives `kernel` its packed entry where the dispatcher may call it (Note [Packed
// kernel calls]): an op whose returns are all written arguments, within the packed call's
// limits, for a kernel built against the op's schema (an adapted kernel's stack differs from
// the op's: AdaptKernel wraps the boxed entry alone). Elsewhere the boxed entry runs, which
// computes the same.
void UsePacked(const OperatorHandle& op, KernelFunction* kernel) {
  if (!op.returns_only_written() || op.schema().arguments.size() > kMaxPackedArguments ||
      op.schema().returns.size() > kMaxPackedReturns) {
    return;
  }
  kernel->packed = &PackedTrampoline;
  kernel->unboxed = &UnboxedTrampoline;
}

absl::StatusOr<DispatchKey> ToKey(int32_t device_type, const char* what) {
  absl::StatusOr<DeviceType> type = ToDeviceType(device_type, what);
  if (!type.ok()) return type.status();
  return DispatchKeyFor(*type);
}

}  // namespace

extern "C" {

tsr_error* tsr_kernel_register(const tsr_kernel_desc* desc, tsr_registration** out) {
  return Guard(__func__, [&]() -> tsr_error* {
    constexpr const char* fn = "tsr_kernel_register";
    if (out) *out = nullptr;
    if (desc == nullptr) {
      return MakeError(absl::StatusCode::kInvalidArgument, "tsr_kernel_register: desc is NULL");
    }
    // A desc is at least 1.0's (struct_sizes.h; it accepted 64 bytes, 1.0's without `typed`,
    // which no release had).
    constexpr size_t kMinSize = size_in_1_0::tsr_kernel_desc;
    if (desc->struct_size < kMinSize) {
      return MakeError(absl::StatusCode::kInvalidArgument,
                       absl::StrFormat("%s: desc->struct_size is %d, expected at least %d (the "
                                       "1.0 tsr_kernel_desc)",
                                       fn, desc->struct_size, kMinSize));
    }
    absl::StatusOr<DispatchKey> key = ToKey(desc->device_type, fn);
    if (!key.ok()) return ToError(key.status());
    absl::StatusOr<std::string_view> op_text = ReadString(desc->op_name, fn, "desc->op_name");
    if (!op_text.ok()) return ToError(op_text.status());
    absl::StatusOr<std::string_view> name_text =
        ReadString(desc->kernel_name, fn, "desc->kernel_name");
    if (!name_text.ok()) return ToError(name_text.status());
    absl::StatusOr<std::string_view> schema_text =
        TSR_FIELD_FITS(tsr_kernel_desc, schema, desc->struct_size)
            ? ReadString(desc->schema, fn, "desc->schema")
            : std::string_view();
    if (!schema_text.ok()) return ToError(schema_text.status());
    // Note [Deterministic algorithms] in dispatcher/deterministic.h (1.2).
    absl::StatusOr<std::string_view> nondeterministic =
        TSR_FIELD_FITS(tsr_kernel_desc, nondeterministic, desc->struct_size)
            ? ReadString(desc->nondeterministic, fn, "desc->nondeterministic")
            : std::string_view();
    if (!nondeterministic.ok()) return ToError(nondeterministic.status());
    const std::string op_name(*op_text);
    if (LoadingPlugin() != nullptr && desc->device_type != LoadingPlugin()->desc.device_type) {
      absl::StatusOr<OperatorHandle> op = OpRegistry::Global().Find(op_name);
      if (!op.ok()) return ToError(op.status());
      if (absl::Status s = CheckOwnership(
              desc->device_type, op->entry(),
              absl::StrFormat("a kernel for %s on %s", op_name, DispatchKeyName(*key)));
          !s.ok()) {
        return ToError(s);
      }
    }
    const tsr_typed_kernel_fn typed = desc->typed;  // 1.0's, as the size check above ensures
    const std::string_view stated_schema = *schema_text;
    // `packed` (1.1) is the optional fast entry of a boxed kernel.
    const tsr_packed_kernel_fn packed =
        TSR_FIELD_FITS(tsr_kernel_desc, packed, desc->struct_size) ? desc->packed : nullptr;
    if (packed != nullptr && desc->boxed == nullptr) {
      return MakeError(absl::StatusCode::kInvalidArgument,
                       absl::StrFormat("%s: desc->packed is set for %s without desc->boxed (a "
                                       "packed entry is the fast path of a boxed kernel)",
                                       fn, op_name));
    }
    if ((desc->boxed != nullptr) == (typed != nullptr)) {
      return MakeError(absl::StatusCode::kInvalidArgument,
                       absl::StrFormat("%s: set exactly one of desc->boxed and desc->typed for %s",
                                       fn, op_name));
    }
    absl::StatusOr<OperatorHandle> op = OpRegistry::Global().Find(op_name);
    if (!op.ok()) return ToError(op.status());
    PluginRecord* plugin = LoadingPlugin();
    std::string name(*name_text);
    if (name.empty()) name = plugin ? plugin->name + "::<unnamed>" : "<unnamed>";
    // Note [Kernels built against another schema]
    absl::StatusOr<KernelBinding> binding = BindKernel(*op, stated_schema, plugin);
    if (!binding.ok()) {
      const std::string why = absl::StrFormat("kernel '%s' for %s refused: %s", name, op_name,
                                              binding.status().message());
      if (plugin == nullptr) return ToError(absl::Status(binding.status().code(), why));
      // A plugin's other kernels still load; the report says which one did not and why.
      ++plugin->kernels_refused;
      plugin->kernel_notes.push_back(why);
      plugin->kernel_records.push_back({op_name, name, std::string(stated_schema), why,
                                        desc->device_type, std::string(*nondeterministic),
                                        TSR_KERNEL_REFUSED});
      RuntimeApi().log(TSR_LOG_WARNING, tsr_string{why.data(), why.size()});
      return nullptr;
    }
    absl::StatusOr<KernelFunction> kernel;
    if (typed != nullptr) {
      kernel = MakeTypedKernel(*op, binding->built, typed, desc->context, name,
                               plugin ? plugin->gate : nullptr);
      if (kernel.ok() && plugin != nullptr) kernel->plugin = plugin->name;
    } else {
      kernel = MakeKernel(desc->boxed, desc->context, desc->kernel_name, fn, packed);
      if (kernel.ok() && packed != nullptr && binding->kind == KernelBinding::Kind::kSame &&
          PackedKernelsEnabled()) {
        UsePacked(*op, &*kernel);
      }
    }
    if (!kernel.ok()) return ToError(kernel.status());
    const bool adapted = binding->kind != KernelBinding::Kind::kSame;
    const std::string note =
        adapted ? absl::StrFormat("kernel '%s' for %s adapted: %s", name, op_name, binding->note)
                : std::string();
    const std::string built = plugin ? binding->built.ToString() : std::string();
    KernelFunction adapted_kernel = AdaptKernel(*std::move(kernel), *op, *key, *std::move(binding));
    adapted_kernel.nondeterministic = !nondeterministic->empty();
    adapted_kernel.nondeterministic_reason = std::string(*nondeterministic);
    absl::StatusOr<RegistrationHandle> handle =
        OpRegistry::Global().Impl(op_name, *key, std::move(adapted_kernel));
    if (!handle.ok()) return ToError(handle.status());
    if (plugin != nullptr) {
      ++plugin->kernels;
      plugin->ops_with_kernels.insert(op_name);
      if (adapted) {
        ++plugin->kernels_adapted;
        plugin->kernel_notes.push_back(note);
      }
      if (const OpDeprecation* d = op->deprecation()) {
        plugin->kernel_notes.push_back(
            absl::StrFormat("kernel '%s' is for a deprecated op: %s", name, d->Message(op_name)));
      }
      plugin->kernel_records.push_back({op_name, name, built, note, desc->device_type,
                                        std::string(*nondeterministic),
                                        adapted ? TSR_KERNEL_ADAPTED : TSR_KERNEL_REGISTERED});
    }
    return HandOut(*std::move(handle), out);
  });
}

tsr_error* tsr_fallback_register(int32_t device_type, tsr_boxed_kernel_fn fallback, void* context,
                                 tsr_string name, tsr_registration** out) {
  return Guard(__func__, [&]() -> tsr_error* {
    constexpr const char* fn = "tsr_fallback_register";
    if (out) *out = nullptr;
    absl::StatusOr<DispatchKey> key = ToKey(device_type, fn);
    if (!key.ok()) return ToError(key.status());
    if (absl::Status s = CheckOwnership(
            device_type, nullptr, absl::StrFormat("a fallback for %s", DispatchKeyName(*key)));
        !s.ok()) {
      return ToError(s);
    }
    absl::StatusOr<KernelFunction> kernel = MakeKernel(fallback, context, name, fn);
    if (!kernel.ok()) return ToError(kernel.status());
    absl::StatusOr<RegistrationHandle> handle =
        OpRegistry::Global().RegisterFallback(*key, *std::move(kernel));
    if (!handle.ok()) return ToError(handle.status());
    if (PluginRecord* plugin = LoadingPlugin()) ++plugin->kernels;
    return HandOut(*std::move(handle), out);
  });
}

}  // extern "C"

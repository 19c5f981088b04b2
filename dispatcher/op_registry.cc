#include "dispatcher/op_registry.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "dispatcher/argument_binding.h"
#include "dispatcher/call_epoch.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/internal/operator_entry.h"
#include "dispatcher/missing_kernel_hint.h"

namespace tessera {

// Note [Lock-free dispatch]
// A call reads three things: the op's entry (through the handle it holds, no map lookup), the
// kernel pointer for its key, and maybe the composite and fallback pointers. All are atomics,
// published with release stores under the registration mutex and read with acquire loads, so
// calls never wait for each other or for a registration. A deregistered kernel may still be
// running on another thread when its slot is cleared, so a cleared KernelFunction is retired,
// not freed, and freed only once no call can still be running it (Note [Reclaiming
// deregistered kernels]). Plugin unloading, which must also wait for in-flight kernels to
// return, is built on top of this by the loader.

// Note [Reclaiming deregistered kernels]
// Registries used to keep every kernel record they ever published (a few hundred bytes per
// registration, with its plugin's gate): a plugin loaded and unloaded in a loop grew the
// process without bound (issue 14, item 19: 13-26 MiB per reload of a 100k-op plugin). Now a
// record is freed once no call can reach it, by an epoch scheme (CallEpochs, a
// quiescent-state scheme as in RCU and Linux's SRCU, without their grace-period threads):
//   - Call and CallWithKey run inside a CallScope. On entering, the outermost call of a thread
//     announces the current epoch in that thread's slot, then a barrier (Note [Asymmetric
//     call barrier] in call_epoch.cc: a compiler barrier that the sweep's membarrier
//     turns into a fence, or a seq_cst fence where there is none); nested calls
//     (a composite, a derived form, a kernel calling ops) announce nothing. On leaving, the
//     slot goes back to 0 (release). Everything a call reads of a kernel record (its slot,
//     the record, what its owner keeps alive) it reads inside the scope.
//   - Deregistration clears the slot (under mu_), then Retire advances the epoch (fetch_add,
//     seq_cst) and the record waits in retired_ with the epoch it retired at, r.
//   - A record is freed (FreeRetired, at every registration and deregistration, under mu_)
//     when, after the sweep's side of the barrier (membarrier, or a seq_cst fence), every
//     thread's slot is 0 or holds an epoch > r (OldestCall, one barrier per sweep). A thread
//     that announced an epoch > r read the epoch after Retire, so after the slot was cleared:
//     it cannot see the record in this call, and the announcement is a release store, so
//     what it read of the record in an earlier call happens before the free. A thread whose
//     slot read 0 either is outside any call, or announces later; the two barriers
//     (announcement / barrier / slot read against slot clear / barrier / slot scan) forbid that
//     it both escapes the scan and reads the old slot. A thread
//     still inside a call entered at or before r may hold the record: it waits for the next
//     sweep, and the release store of 0 on leaving orders its reads before the free.
// Cost on the hot path: a thread-local load, a store and a compiler barrier per outermost call
// (measured with benchmarks/dispatch_benchmark.cc and c_abi_benchmark.cc, docs/reliability.md);
// a sweep costs a membarrier system call (about 1 us) and a walk over the threads. A call that
// never returns (a hung kernel) keeps what was retired after it entered; so does a thread parked
// inside a kernel, until it returns. Records are freed in registration's time, never by a caller.

// Note [Op definitions are reference-counted]
// Several owners may define the same op with the same schema: two plugins that both ship a
// custom op, or the application and a plugin. Each Define of an identical schema is one more
// live definition, undone by its own handle, and the op stays defined while any is live:
// unloading one plugin leaves the op to the others (it used to remove the op from under
// them). A different schema is refused while the op has a live definition (two owners cannot
// disagree about what an op means). Once the last definition is gone the op has no owner and
// its schema binds nobody: defining it again with a new schema (a plugin reloaded in a newer
// version) creates a fresh entry that replaces the old one in the name table. The old entry
// is never freed (the new one keeps it, OperatorEntry::replaced): handles and deregistered
// kernels still point into it, and calls through an old handle fail as for any undefined op.
// That costs one entry per schema change of an op, bounded by the redefinitions an
// application makes. An op whose forms are linked by DefineVariants is never replaced (its
// siblings point to it): a new schema for it stays refused.

// Note [Dispatch key from devices]
// The key is the device type of the tensor arguments. All must be on the same device, with
// one exception taken from PyTorch: a 0-dim CPU tensor may join tensors of any device (it is
// a boxed scalar). An op with no other tensor argument (a factory, or an op whose only tensors
// are such 0-dim CPU tensors) dispatches on its first Device argument, else on CPU.

std::string_view KernelSourceName(KernelSource source) {
  switch (source) {
    case KernelSource::kKernel:
      return "kernel";
    case KernelSource::kDerived:
      return "derived";
    case KernelSource::kComposite:
      return "composite";
    case KernelSource::kFallback:
      return "fallback";
    case KernelSource::kCrossDevice:
      return "cross_device";
  }
  return "?";
}

const FunctionSchema& OperatorHandle::schema() const { return entry_->schema; }
const std::string& OperatorHandle::name() const { return entry_->name; }
OpRegistry& OperatorHandle::registry() const { return *entry_->registry; }
const std::string& OperatorHandle::schema_text() const { return entry_->schema_text; }
const OpDeprecation* OperatorHandle::deprecation() const {
  return entry_->deprecation.load(std::memory_order_acquire);
}
bool OperatorHandle::TakeDeprecationWarning() const {
  return !entry_->deprecation_warned.exchange(true, std::memory_order_relaxed);
}
int OperatorHandle::first_borrowing_return() const { return entry_->first_borrowing_return; }
bool OperatorHandle::returns_only_written() const { return entry_->returns_only_written; }
VariantKind OperatorHandle::variant() const { return entry_->variant; }
std::optional<OperatorHandle> OperatorHandle::out_form() const {
  if (entry_->out == nullptr) return std::nullopt;
  return OperatorHandle(entry_->out);
}
std::optional<OperatorHandle> OperatorHandle::inplace_form() const {
  if (entry_->inplace == nullptr) return std::nullopt;
  return OperatorHandle(entry_->inplace);
}
bool DerivedThroughCopy(OperatorHandle op, DispatchKey key) {
  return internal::DerivedThroughCopy(*op.entry(), static_cast<int>(key));
}

OpRegistry::OpRegistry() {
  const char* trace = std::getenv("TESSERA_DISPATCH_TRACE");
  trace_.store(trace != nullptr && std::string_view(trace) == "1");
}

OpRegistry::~OpRegistry() = default;

OpRegistry& OpRegistry::Global() {
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();  // never destroyed: ops are called during exit
    absl::Status defined = DefineCoreOps(*r);
    for (const CoreDeprecation& d : CoreDeprecations()) {
      if (defined.ok()) defined = r->Deprecate(d.op, d.deprecation);
    }
    if (!defined.ok()) {
      std::cerr << "tessera: defining the core ops failed: " << defined << std::endl;
      std::abort();  // a bug in the runtime itself, caught by every test
    }
    return r;
  }();
  return *registry;
}

RegistrationHandle OpRegistry::Publish(std::atomic<const KernelFunction*>& slot,
                                       KernelFunction kernel) {
  FreeRetired();
  auto owned = std::make_unique<KernelFunction>(std::move(kernel));
  const KernelFunction* kept = owned.get();
  kernels_.emplace(kept, std::move(owned));
  slot.store(kept, std::memory_order_release);
  return RegistrationHandle([this, &slot, kept] {
    absl::MutexLock lock(&mu_);
    // Clear the slot only if it still holds this kernel (never another registration's).
    const KernelFunction* expected = kept;
    slot.compare_exchange_strong(expected, nullptr, std::memory_order_seq_cst);
    auto it = kernels_.find(kept);
    if (it == kernels_.end()) return;
    // Retired, freed once no call can be running it (Note [Reclaiming deregistered kernels]).
    retired_.push_back(Retired{std::move(it->second), CallEpochs::Retire()});
    kernels_.erase(it);
    FreeRetired();
  });
}

absl::Status OpRegistry::SetPlanFunction(std::string_view op_name, const PlanFunction* plan) {
  TSR_ASSIGN_OR_RETURN(internal::OperatorEntry * entry, FindEntry(op_name));
  absl::MutexLock lock(&mu_);
  entry->plan.store(plan, std::memory_order_release);
  return absl::OkStatus();
}

absl::Status OpRegistry::Deprecate(std::string_view op_name, OpDeprecation deprecation) {
  TSR_ASSIGN_OR_RETURN(internal::OperatorEntry * entry, FindEntry(op_name));
  absl::MutexLock lock(&mu_);
  deprecations_.push_back(std::make_unique<const OpDeprecation>(std::move(deprecation)));
  entry->deprecation.store(deprecations_.back().get(), std::memory_order_release);
  return absl::OkStatus();
}

void OpRegistry::FreeRetired() {
  if (retired_.empty()) return;
  // Retired in epoch order: what retired before the oldest running call entered is out of
  // every call's reach.
  const uint64_t oldest = CallEpochs::OldestCall();
  size_t freed = 0;
  while (freed < retired_.size() && retired_[freed].epoch < oldest) ++freed;
  retired_.erase(retired_.begin(), retired_.begin() + freed);
}

size_t OpRegistry::KernelRecords() const {
  absl::ReaderMutexLock lock(&mu_);
  return kernels_.size() + retired_.size();
}

absl::StatusOr<RegistrationHandle> OpRegistry::Define(std::string_view schema_text) {
  TSR_ASSIGN_OR_RETURN(FunctionSchema schema, ParseSchema(schema_text));
  std::string canonical = schema.ToString();
  const std::string name = schema.FullName();
  absl::MutexLock lock(&mu_);
  auto it = ops_.find(name);
  internal::OperatorEntry* entry;
  if (it != ops_.end() && it->second->schema_text == canonical) {
    entry = it->second.get();
    if (entry->owners++ == 0) entry->defined.store(true, std::memory_order_release);
  } else if (it != ops_.end() &&
             (it->second->owners > 0 || it->second->variant != VariantKind::kNone)) {
    const internal::OperatorEntry& existing = *it->second;
    return absl::AlreadyExistsError(absl::StrFormat(
        "define: op '%s' is already defined with a different schema%s\n  existing: %s\n  new:      "
        "%s",
        name,
        existing.owners > 0 ? absl::StrFormat(" (%d live definition(s))", existing.owners)
                            : " (its forms are linked to other ops)",
        existing.schema_text, canonical));
  } else {
    auto owned =
        std::make_unique<internal::OperatorEntry>(this, std::move(schema), std::move(canonical));
    entry = owned.get();
    if (it != ops_.end()) {  // no live definition: the new schema replaces the old one
      owned->replaced = std::move(it->second);
      it->second = std::move(owned);
    } else {
      ops_.emplace(name, std::move(owned));
    }
    index_.Set(entry);
  }
  return RegistrationHandle([this, entry] {
    absl::MutexLock lock(&mu_);
    if (--entry->owners == 0) entry->defined.store(false, std::memory_order_release);
  });
}

absl::StatusOr<internal::OperatorEntry*> OpRegistry::FindEntry(std::string_view name) const {
  internal::OperatorEntry* entry = index_.Find(name);  // no lock: called on the call path
  if (entry == nullptr || !entry->defined.load(std::memory_order_acquire)) {
    return absl::NotFoundError(
        absl::StrFormat("unknown op '%s' (not defined in this registry)", name));
  }
  return entry;
}

absl::StatusOr<OperatorHandle> OpRegistry::Find(std::string_view name) const {
  absl::StatusOr<internal::OperatorEntry*> entry = FindEntry(name);
  if (entry.ok()) return OperatorHandle(*entry);
  // A name without its overload ("softmax") or with a wrong one: the overloads of that name.
  const std::string_view base = name.substr(0, name.find('.'));
  std::vector<std::string> overloads;
  for (std::string& op : ListOps()) {
    if (std::string_view(op).substr(0, op.find('.')) == base) overloads.push_back(std::move(op));
  }
  if (overloads.empty()) return entry.status();
  return absl::NotFoundError(absl::StrFormat("%s; did you mean %s?", entry.status().message(),
                                             absl::StrJoin(overloads, ", ")));
}

namespace {

absl::Status CheckKernel(const KernelFunction& kernel, std::string_view what) {
  if (kernel.fn == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: expected a kernel function, got NULL", what));
  }
  return absl::OkStatus();
}

absl::Status CheckKey(DispatchKey key, std::string_view what) {
  if (static_cast<int>(key) >= kNumDispatchKeys) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: expected a dispatch key in [0, %d), got %d", what, kNumDispatchKeys,
                        static_cast<int>(key)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RegistrationHandle> OpRegistry::Impl(std::string_view op_name, DispatchKey key,
                                                    KernelFunction kernel) {
  TSR_RETURN_IF_ERROR(CheckKey(key, "impl"));
  TSR_RETURN_IF_ERROR(CheckKernel(kernel, absl::StrFormat("impl of %s", op_name)));
  TSR_ASSIGN_OR_RETURN(internal::OperatorEntry * entry, FindEntry(op_name));
  absl::MutexLock lock(&mu_);
  std::atomic<const KernelFunction*>& slot = entry->kernels[static_cast<int>(key)];
  if (const KernelFunction* existing = slot.load(std::memory_order_acquire)) {
    return absl::AlreadyExistsError(absl::StrFormat(
        "impl: '%s' already has a kernel for %s ('%s'); deregister it before registering '%s'",
        entry->name, DispatchKeyName(key), existing->name, kernel.name));
  }
  return Publish(slot, std::move(kernel));
}

absl::StatusOr<RegistrationHandle> OpRegistry::ImplComposite(std::string_view op_name,
                                                             KernelFunction kernel) {
  TSR_RETURN_IF_ERROR(CheckKernel(kernel, absl::StrFormat("composite of %s", op_name)));
  TSR_ASSIGN_OR_RETURN(internal::OperatorEntry * entry, FindEntry(op_name));
  absl::MutexLock lock(&mu_);
  if (const KernelFunction* existing = entry->composite.load(std::memory_order_acquire)) {
    return absl::AlreadyExistsError(absl::StrFormat(
        "impl_composite: '%s' already has a composite ('%s')", entry->name, existing->name));
  }
  return Publish(entry->composite, std::move(kernel));
}

absl::StatusOr<RegistrationHandle> OpRegistry::ImplCrossDevice(std::string_view op_name,
                                                               KernelFunction kernel) {
  TSR_RETURN_IF_ERROR(CheckKernel(kernel, absl::StrFormat("cross-device kernel of %s", op_name)));
  TSR_ASSIGN_OR_RETURN(internal::OperatorEntry * entry, FindEntry(op_name));
  absl::MutexLock lock(&mu_);
  if (const KernelFunction* existing = entry->cross_device.load(std::memory_order_acquire)) {
    return absl::AlreadyExistsError(
        absl::StrFormat("impl_cross_device: '%s' already has a cross-device kernel ('%s')",
                        entry->name, existing->name));
  }
  return Publish(entry->cross_device, std::move(kernel));
}

absl::StatusOr<RegistrationHandle> OpRegistry::RegisterFallback(DispatchKey key,
                                                                KernelFunction kernel) {
  TSR_RETURN_IF_ERROR(CheckKey(key, "register_fallback"));
  TSR_RETURN_IF_ERROR(CheckKernel(kernel, "register_fallback"));
  absl::MutexLock lock(&mu_);
  std::atomic<const KernelFunction*>& slot = fallbacks_[static_cast<int>(key)];
  if (const KernelFunction* existing = slot.load(std::memory_order_acquire)) {
    return absl::AlreadyExistsError(
        absl::StrFormat("register_fallback: %s already has a fallback ('%s')", DispatchKeyName(key),
                        existing->name));
  }
  return Publish(slot, std::move(kernel));
}

namespace {

// AlreadyCanonical: the common cases NormalizeArgumentValue would accept unchanged (a defined
// tensor for a Tensor, an int for an int, a Scalar for a Scalar, ...), decided inline; the rest,
// conversions and errors included, goes through NormalizeArgumentValue.
bool AlreadyCanonical(const SchemaType& type, const Value& v) {
  if (type.is_list) return false;
  switch (type.base) {
    case BaseType::kTensor:
      return v.is_tensor() && v.tensor().defined();
    case BaseType::kScalar:
      return v.is_scalar();
    case BaseType::kInt:
      return v.is_int();
    case BaseType::kFloat:
      return v.is_double();
    case BaseType::kBool:
      return v.is_bool();
    default:
      return false;
  }
}

}  // namespace

absl::Status OpRegistry::NormalizeArguments(const internal::OperatorEntry& entry,
                                            Stack* stack) const {
  const std::vector<Argument>& args = entry.schema.arguments;
  // Named and defaulted arguments are bound only on the error paths below, where a stack with
  // markers always ends up (Note [Binding named and defaulted arguments]).
  auto bind_and_retry = [&]() -> absl::Status {
    TSR_RETURN_IF_ERROR(BindArguments(entry.schema, entry.name, stack));
    return NormalizeArguments(entry, stack);
  };
  if (stack->size() > args.size()) {
    if (HasBindingMarkers(*stack)) return bind_and_retry();
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: expected at most %d arguments, got %d (schema: %s)", entry.name,
                        args.size(), stack->size(), entry.schema_text));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (i >= stack->size()) {
      if (!args[i].default_value) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: missing value for argument '%s' (position %d), which has no default (schema: "
            "%s)",
            entry.name, args[i].name, i, entry.schema_text));
      }
      stack->push_back(*args[i].default_value);
      continue;
    }
    if (ABSL_PREDICT_TRUE(AlreadyCanonical(args[i].type, (*stack)[i]))) continue;
    absl::Status ok = NormalizeArgumentValue(args[i], &(*stack)[i]);
    if (ABSL_PREDICT_FALSE(!ok.ok())) {
      if (HasBindingMarkers(*stack)) return bind_and_retry();
      return absl::Status(ok.code(), absl::StrFormat("%s: argument '%s' (position %d): %s",
                                                     entry.name, args[i].name, i, ok.message()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<DispatchKey> OpRegistry::ComputeDispatchKey(const OperatorHandle& op,
                                                           const Stack& stack) const {
  const internal::OperatorEntry& entry = *op.entry_;
  const Device kCpu(DeviceType::kCPU, 0);
  const Tensor* first = nullptr;  // first tensor that fixes the device
  size_t first_arg = 0;
  // visit returns false for a tensor on another device than `first`'s (the error is built
  // below, off the hot path).
  auto visit = [&](const Tensor& t, size_t arg) -> bool {
    if (!t.defined()) return true;
    if (t.dim() == 0 && t.device() == kCpu) return true;
    if (first == nullptr) {
      first = &t;
      first_arg = arg;
      return true;
    }
    return ABSL_PREDICT_TRUE(t.device() == first->device());
  };
  auto several_devices = [&](const Tensor& t, size_t arg) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: expected all tensors to be on the same device, but found at least two devices, "
        "%s (argument '%s') and %s (argument '%s')",
        entry.name, DeviceToString(first->device()), entry.schema.arguments[first_arg].name,
        DeviceToString(t.device()), entry.schema.arguments[arg].name));
  };
  std::optional<Device> device_arg;
  for (size_t i = 0; i < stack.size(); ++i) {
    const Value& v = stack[i];
    if (v.is_tensor()) {
      if (ABSL_PREDICT_FALSE(!visit(v.tensor(), i))) return several_devices(v.tensor(), i);
    } else if (v.is_tensor_list()) {
      for (const Tensor& t : v.tensor_list()) {
        if (ABSL_PREDICT_FALSE(!visit(t, i))) return several_devices(t, i);
      }
    } else if (v.is_device() && !device_arg) {
      device_arg = v.device();
    }
  }
  if (first != nullptr) return DispatchKeyFor(first->device().type);
  if (device_arg) return DispatchKeyFor(device_arg->type);
  return DispatchKey::kCPU;
}

absl::StatusOr<KernelLookup> OpRegistry::Lookup(const OperatorHandle& op, DispatchKey key) const {
  const internal::OperatorEntry& entry = *op.entry_;
  const int k = static_cast<int>(key);
  const KernelFunction* kernel = entry.kernels[k].load(std::memory_order_acquire);
  if (ABSL_PREDICT_TRUE(kernel != nullptr && !kernel->nondeterministic)) {
    return KernelLookup{kernel, KernelSource::kKernel};
  }
  return LookupWithoutPlainKernel(op, key, /*to_run=*/false);
}

absl::StatusOr<KernelLookup> OpRegistry::LookupToRun(const OperatorHandle& op,
                                                     DispatchKey key) const {
  const internal::OperatorEntry& entry = *op.entry_;
  const KernelFunction* kernel =
      entry.kernels[static_cast<int>(key)].load(std::memory_order_acquire);
  if (ABSL_PREDICT_TRUE(kernel != nullptr && !kernel->nondeterministic)) {
    return KernelLookup{kernel, KernelSource::kKernel};
  }
  return LookupWithoutPlainKernel(op, key, /*to_run=*/true);
}

absl::StatusOr<KernelLookup> OpRegistry::LookupWithoutPlainKernel(const OperatorHandle& op,
                                                                  DispatchKey key,
                                                                  bool to_run) const {
  const internal::OperatorEntry& entry = *op.entry_;
  if (const KernelFunction* kernel = internal::AllowedKernel(&entry, static_cast<int>(key))) {
    if (to_run) WarnIfNondeterministic(&entry.nondeterminism_warned, entry.name, *kernel);
    return KernelLookup{kernel, KernelSource::kKernel};
  }
  return LookupBeyondKernel(op, key);
}

absl::StatusOr<KernelLookup> OpRegistry::LookupBeyondKernel(const OperatorHandle& op,
                                                            DispatchKey key) const {
  const internal::OperatorEntry& entry = *op.entry_;
  const int k = static_cast<int>(key);
  if (entry.variant != VariantKind::kNone) {
    if (const KernelFunction* derived = internal::DerivedKernel(entry, k)) {
      return KernelLookup{derived, KernelSource::kDerived};
    }
  }
  if (const KernelFunction* composite = entry.composite.load(std::memory_order_acquire)) {
    return KernelLookup{composite, KernelSource::kComposite};
  }
  if (const KernelFunction* fallback = fallbacks_[k].load(std::memory_order_acquire)) {
    return KernelLookup{fallback, KernelSource::kFallback};
  }
  // Nothing but a kernel that deterministic algorithms pass over: say so, not "not implemented".
  const bool deterministic = GetDeterministicMode() == DeterministicMode::kOn;
  for (const internal::OperatorEntry* form :
       {&entry, static_cast<const internal::OperatorEntry*>(entry.out),
        static_cast<const internal::OperatorEntry*>(entry.functional)}) {
    if (form == nullptr) continue;
    const KernelFunction* kernel = form->kernels[k].load(std::memory_order_acquire);
    if (kernel != nullptr && kernel->nondeterministic && deterministic) {
      return NondeterministicRefusal(entry.name, DispatchKeyName(key), *kernel);
    }
  }
  const std::string why = MissingKernelHintFor(key);
  return absl::UnimplementedError(absl::StrFormat(
      "not implemented for %s on %s: no kernel, composite or fallback is registered for that "
      "device type%s",
      entry.name, DispatchKeyName(key), why.empty() ? "" : absl::StrCat(" (", why, ")")));
}

namespace {
// Note [Why a key has nothing] in dispatcher/missing_kernel_hint.h.
std::atomic<MissingKernelHint> g_missing_kernel_hint{nullptr};
}  // namespace

void SetMissingKernelHint(MissingKernelHint hint) {
  g_missing_kernel_hint.store(hint, std::memory_order_release);
}

std::string MissingKernelHintFor(DispatchKey key) {
  const MissingKernelHint hint = g_missing_kernel_hint.load(std::memory_order_acquire);
  return hint == nullptr ? std::string() : hint(key);
}

namespace {

// PinDefaultGenerator: a random op's call that a fallback runs elsewhere (the CPU fallback copies
// its tensors to the CPU) still draws from its own device's default generator: None becomes
// that generator before the fallback moves anything (Note [Random numbers] in
// core/generator.h).
void PinDefaultGenerator(const internal::OperatorEntry& entry, Stack* stack) {
  const size_t g = static_cast<size_t>(entry.generator_argument);
  if (g >= stack->size() || !(*stack)[g].is_none()) return;
  for (const Value& v : *stack) {
    if (v.is_tensor() && v.tensor().defined()) {
      (*stack)[g] = Value(DefaultGenerator(v.tensor().device()));
      return;
    }
  }
}

}  // namespace

absl::Status OpRegistry::Call(const OperatorHandle& op, Stack* stack) const {
  CallScope scope;  // Note [Reclaiming deregistered kernels]
  const internal::OperatorEntry& entry = *op.entry_;
  TSR_RETURN_IF_ERROR(NormalizeArguments(entry, stack));
  absl::StatusOr<DispatchKey> key = ComputeDispatchKey(op, *stack);
  if (ABSL_PREDICT_FALSE(!key.ok())) {
    // Tensors on several devices: only an op with a cross-device kernel takes them.
    const KernelFunction* cross = entry.cross_device.load(std::memory_order_acquire);
    if (cross == nullptr) return key.status();
    if (ABSL_PREDICT_FALSE(trace_.load(std::memory_order_relaxed))) {
      Trace(entry, std::nullopt, KernelLookup{cross, KernelSource::kCrossDevice});
    }
    if (!entry.written.empty()) TSR_RETURN_IF_ERROR(internal::CheckWrittenMemory(entry, *stack));
    return cross->Call(op, stack);
  }
  return Dispatch(entry, *key, stack);
}

absl::Status OpRegistry::CallWithKey(const OperatorHandle& op, DispatchKey key,
                                     Stack* stack) const {
  CallScope scope;  // Note [Reclaiming deregistered kernels]
  TSR_RETURN_IF_ERROR(CheckKey(key, op.name()));
  TSR_RETURN_IF_ERROR(NormalizeArguments(*op.entry_, stack));
  return Dispatch(*op.entry_, key, stack);
}

absl::Status OpRegistry::Dispatch(const internal::OperatorEntry& entry, DispatchKey key,
                                  Stack* stack) const {
  if (ABSL_PREDICT_FALSE(!entry.defined.load(std::memory_order_acquire))) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s: the op is no longer defined (its definition was removed)", entry.name));
  }
  OperatorHandle op(const_cast<internal::OperatorEntry*>(&entry));
  TSR_ASSIGN_OR_RETURN(const KernelLookup lookup, LookupToRun(op, key));
  if (ABSL_PREDICT_FALSE(trace_.load(std::memory_order_relaxed))) Trace(entry, key, lookup);
  // A backend's own kernel gets its arguments checked (Note [Variants]) and its results too
  // (Note [Kernel results] in kernel_results.cc); derivations check the kernels they run.
  if (ABSL_PREDICT_FALSE(entry.generator_argument >= 0) &&
      lookup.source == KernelSource::kFallback) {
    PinDefaultGenerator(entry, stack);
  }
  const bool backend = lookup.source == KernelSource::kKernel && key != DispatchKey::kMeta;
  internal::KernelCall call;
  if (backend) {
    TSR_RETURN_IF_ERROR(internal::ValidateCall(entry, *stack, &call.plan));
    if (lookup.kernel->packed != nullptr) {  // Note [Packed kernel calls]
      if (!entry.written.empty()) TSR_RETURN_IF_ERROR(internal::CheckWrittenMemory(entry, *stack));
      internal::ReserveDraw(entry, *stack, &call.plan);
      return internal::CallPacked(entry, entry, *lookup.kernel, call.plan, stack);
    }
    internal::RecordCall(entry, *stack, &call);
  }
  if (!entry.written.empty() && key != DispatchKey::kMeta) {
    TSR_RETURN_IF_ERROR(internal::CheckWrittenMemory(entry, *stack));
  }
  if (backend) {
    internal::ReserveDraw(entry, *stack, &call.plan);
    {
      PlanScope plan(stack, call.plan.is_empty() ? nullptr : &call.plan);
      TSR_RETURN_IF_ERROR(lookup.kernel->Call(op, stack));
    }
    return internal::CheckKernelResults(entry, entry, *lookup.kernel, call, *stack);
  }
  TSR_RETURN_IF_ERROR(lookup.kernel->Call(op, stack));
  if (ABSL_PREDICT_FALSE(stack->size() != entry.schema.returns.size())) {
    return absl::InternalError(
        absl::StrFormat("%s: %s '%s' left %d values on the stack, but the schema returns %d",
                        entry.name, KernelSourceName(lookup.source), lookup.kernel->name,
                        stack->size(), entry.schema.returns.size()));
  }
  return absl::OkStatus();
}

void OpRegistry::SetTrace(bool enabled, std::ostream* sink) {
  absl::MutexLock lock(&trace_mu_);
  trace_sink_ = sink;
  trace_.store(enabled, std::memory_order_relaxed);
}

void OpRegistry::Trace(const internal::OperatorEntry& entry, std::optional<DispatchKey> key,
                       const KernelLookup& lookup) const {
  absl::MutexLock lock(&trace_mu_);
  std::ostream& out = trace_sink_ != nullptr ? *trace_sink_ : std::cerr;
  out << "[tessera dispatch] op=" << entry.name
      << " key=" << (key ? DispatchKeyName(*key) : std::string("none"))
      << " kernel=" << lookup.kernel->name << " (" << KernelSourceName(lookup.source) << ")\n";
}

std::vector<std::string> OpRegistry::ListOps() const {
  std::vector<std::string> names;
  absl::ReaderMutexLock lock(&mu_);
  for (const auto& [name, entry] : ops_) {
    if (entry->defined.load(std::memory_order_acquire)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace tessera

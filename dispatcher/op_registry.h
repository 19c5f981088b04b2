// OpRegistry: operator definitions (schemas), kernels per dispatch key, composites, per-key
// fallbacks, and the boxed call path.
//
// Calls never take a lock: each op's kernel table is an array of atomic pointers that
// registration publishes into, so registering or deregistering a kernel while calls run is
// safe and never blocks a caller (see Note [Lock-free dispatch] in op_registry.cc).
//
// Lookup order for (op, key), as DESIGN.md states it: the backend's kernel -> the op's
// composite (written in terms of other ops, works on every key) -> the key's fallback -> an
// "not implemented" error naming the op and the device.
#pragma once

#include <atomic>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "dispatcher/call_plan.h"
#include "dispatcher/dispatch_key.h"
#include "dispatcher/internal/op_index.h"
#include "dispatcher/kernel.h"
#include "dispatcher/op_deprecation.h"
#include "dispatcher/schema.h"
#include "dispatcher/value.h"

namespace tessera {

class OpRegistry;
class PreparedCall;  // dispatcher/prepared_call.h
class UnboxedArgs;
struct UnboxedReturns;

namespace internal {
class OperatorEntry;
}

// The three forms of a PyTorch op (Note [Variants] in dispatcher/variants.cc).
enum class VariantKind : uint8_t { kNone, kFunctional, kOut, kInplace };

// OperatorHandle names one op of a registry; cheap to copy, valid as long as the registry.
// Look it up once (Find) and keep it: calls through a handle do no name lookup.
class OperatorHandle {
 public:
  const FunctionSchema& schema() const;
  const std::string& name() const;  // "add.Tensor"
  OpRegistry& registry() const;

  // What the runtime host (runtime/, the C ABI) reads of an op beside its schema; everything
  // else of the entry stays internal to the dispatcher.
  const std::string& schema_text() const;  // as defined ("add.Tensor(Tensor self, ...) -> Tensor")
  // deprecation: the op's deprecation, or nullptr (docs/op_schema_policy.md).
  const OpDeprecation* deprecation() const;
  // TakeDeprecationWarning: true the first time only, for the runtime's once-per-op warning.
  bool TakeDeprecationWarning() const;
  // first_borrowing_return: the first return that is a list or a string (a value that refers
  // into the stack it is left on), or -1.
  int first_borrowing_return() const;
  // returns_only_written: every return is a written argument (out= forms, in-place ops).
  bool returns_only_written() const;
  // variant: which of the three forms of a PyTorch op this is (Note [Variants]); out_form and
  // inplace_form: a functional op's sibling forms, where it has them.
  VariantKind variant() const;
  std::optional<OperatorHandle> out_form() const;
  std::optional<OperatorHandle> inplace_form() const;

  // For the C ABI, whose op handle is the entry pointer itself (opaque outside the dispatcher).
  // may_call_unboxed: whether a call of this op can take the unboxed fast path at all (its
  // functional form has an unboxed plan function, Note [The unboxed fast path]): a cheap test
  // before the arguments are decoded.
  bool may_call_unboxed() const;
  internal::OperatorEntry* entry() const { return entry_; }
  static OperatorHandle FromEntry(internal::OperatorEntry* entry) { return OperatorHandle(entry); }

 private:
  friend class OpRegistry;
  explicit OperatorHandle(internal::OperatorEntry* entry) : entry_(entry) {}
  internal::OperatorEntry* entry_;
};

// RegistrationHandle undoes one registration (a definition, a kernel, a fallback) when it is
// destroyed or Reset. KeepForever() makes the registration permanent instead (it was called
// Release, which elsewhere means dropping a reference or undoing: tsr_registration_release
// undoes). Must not outlive its registry.
class RegistrationHandle {
 public:
  RegistrationHandle() = default;
  explicit RegistrationHandle(std::function<void()> undo) : undo_(std::move(undo)) {}
  RegistrationHandle(RegistrationHandle&& o) noexcept : undo_(std::exchange(o.undo_, nullptr)) {}
  RegistrationHandle& operator=(RegistrationHandle&& o) noexcept {
    Reset();
    undo_ = std::exchange(o.undo_, nullptr);
    return *this;
  }
  ~RegistrationHandle() { Reset(); }

  void KeepForever() { undo_ = nullptr; }
  void Reset() {
    if (undo_) std::exchange(undo_, nullptr)();
  }

 private:
  std::function<void()> undo_;
};

// kMaxPackedReturns: the most returns a packed call has (a kernel for an op with more gets no
// packed entry; Note [Packed kernel calls] in dispatcher/kernel_results.cc).
inline constexpr size_t kMaxPackedReturns = 4;

// DerivedThroughCopy: whether a call of `op` on `key` runs a derived form (the form has no
// kernel of its own there) that copies its result into the caller's tensor with copy_ on `key`
// (out= and in-place forms derived from a functional kernel), so that a key without a copy_
// kernel of its own runs that copy elsewhere (Note [Plugins without a copy_ kernel] in
// runtime/plugin_loader.cc).
bool DerivedThroughCopy(OperatorHandle op, DispatchKey key);

// kDerived: the op's form was derived from a sibling form's kernel (Note [Variants]).
// kCrossDevice: the op's cross-device kernel ran (tensors on several devices; no key).
enum class KernelSource { kKernel, kDerived, kComposite, kFallback, kCrossDevice };
std::string_view KernelSourceName(KernelSource source);

// How an out= (or in-place) output's dtype must relate to the dtype the op computes.
enum class OutDtypeRule : uint8_t {
  kCastable,  // any dtype the result can be cast to (PyTorch's canCast): pointwise ops
  kExact,     // exactly the computed dtype: matrix products, indices, most NN ops
};

// Whether what an op writes may be the very memory of one of its inputs (Note [Memory overlap]
// in dispatcher/memory_overlap_check.cc). Partial overlap is refused but for kReadsFirst.
enum class OutputAliasing : uint8_t {
  kElementwise,  // yes: output element i reads only input elements i (pointwise ops, copy_)
  kDisjoint,     // no: e.g. mm(a, b, out=a) would read a while overwriting it
  kReadsFirst,   // any overlap: the op reads its inputs before it writes (fill_.Tensor copies
                 // a value that is an element of self first, as ATen's fill_ does)
};

struct KernelLookup {
  const KernelFunction* kernel;
  KernelSource source;
};

class OpRegistry {
 public:
  OpRegistry();
  ~OpRegistry();
  OpRegistry(const OpRegistry&) = delete;
  OpRegistry& operator=(const OpRegistry&) = delete;

  // Global: the process-wide registry, with the core op library already defined (view ops
  // and their composites, meta functions). Never destroyed.
  static OpRegistry& Global();

  // Define adds an op by schema. Defining an op that is already defined is an error, unless
  // the schema is identical: then it is one more live definition, and the op stays defined
  // until every handle is undone (Note [Op definitions are reference-counted]). An op without
  // live definitions may be defined again with another schema.
  absl::StatusOr<RegistrationHandle> Define(std::string_view schema);

  // DefineVariants defines the out= form `out_name` ("add.out") and, unless `inplace_name` is
  // empty, the in-place form ("add_.Tensor") of the already defined functional op, with
  // schemas generated from its schema, and links the three so that a backend implementing
  // any one form gets the others (Note [Variants]). `out_name` may also be the out= form's
  // whole schema, where PyTorch names the out arguments of an op with several unnamed returns
  // ("native_layer_norm.out(..., *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> ...");
  // it must be the generated schema but for those names and alias sets.
  absl::Status DefineVariants(std::string_view functional, std::string_view out_name,
                              std::string_view inplace_name, OutDtypeRule rule,
                              OutputAliasing aliasing);

  // SetOutputAliasing declares an op without variants (copy_, fill_.Tensor) elementwise or not,
  // or reading first; ops default to kDisjoint, DefineVariants sets all three forms.
  absl::Status SetOutputAliasing(std::string_view op, OutputAliasing aliasing);

  // SetPlanFunction gives an op a plan function (Note [Call plans] in call_plan.h); `plan` must
  // outlive the registry. Ops without one are planned from their Meta kernel.
  absl::Status SetPlanFunction(std::string_view op_name, const PlanFunction* plan);

  // Deprecate marks an op deprecated (dispatcher/op_deprecation.h), replacing an earlier mark.
  absl::Status Deprecate(std::string_view op_name, OpDeprecation deprecation);

  // Find looks up a defined op by "name.overload" (or "name" for the default overload).
  absl::StatusOr<OperatorHandle> Find(std::string_view name) const;

  // Impl registers `kernel` for (op, key). One kernel per (op, key): a second is an error.
  absl::StatusOr<RegistrationHandle> Impl(std::string_view op_name, DispatchKey key,
                                          KernelFunction kernel);
  // ImplComposite registers the op's composite, used for every key without its own kernel.
  absl::StatusOr<RegistrationHandle> ImplComposite(std::string_view op_name, KernelFunction kernel);
  // ImplCrossDevice registers what runs the op when its tensors are on more than one device
  // (copy_ between the CPU and a device, or between devices); without it such calls are
  // refused by the device rule. It runs on no key: it moves data itself and calls the op on
  // one device at a time.
  absl::StatusOr<RegistrationHandle> ImplCrossDevice(std::string_view op_name,
                                                     KernelFunction kernel);
  // RegisterFallback registers the kernel that runs any op with no kernel or composite on
  // `key` (e.g. copy to CPU, run there, copy back). It receives the op's handle.
  absl::StatusOr<RegistrationHandle> RegisterFallback(DispatchKey key, KernelFunction kernel);

  // Call checks and completes the arguments on `stack` against the schema (defaults, types),
  // picks the dispatch key from the tensor arguments' devices, runs the kernel, and checks
  // that it left as many values as the schema returns.
  absl::Status Call(const OperatorHandle& op, Stack* stack) const;
  // CallWithKey skips the device check and uses `key` (for fallbacks that redispatch).
  absl::Status CallWithKey(const OperatorHandle& op, DispatchKey key, Stack* stack) const;
  // CallUnboxed runs a call whose arguments are unboxed (every argument of the schema, each of
  // its kind, dispatcher/unboxed_call.h) the short way, when the call is of the common case
  // the fast path serves, and sets `*taken`; with `*taken` false it did nothing, and the caller
  // makes the call through Call. A call it takes has the results and errors Call would give
  // (Note [The unboxed fast path] in unboxed_call.cc). It may append the outputs it makes to
  // `args` (which must have room for the op's returns beyond its arguments).
  absl::Status CallUnboxed(const OperatorHandle& op, UnboxedArgs* args, UnboxedReturns* returns,
                           bool* taken) const;

  // PrepareUnboxed computes the plan of an unboxed call once, for a call site that makes the
  // same call again (Note [Prepared calls] in prepared_call.cc); NULL when the call is not one
  // a prepared call serves, or its plan fails (the unprepared call then reports the error),
  // with `*never` true when no call of the op is (its form, its plan function), false when
  // another call's arguments may be.
  std::unique_ptr<PreparedCall> PrepareUnboxed(const OperatorHandle& op, const UnboxedArgs& args,
                                               bool* never) const;
  // CallPrepared runs `prepared` on `args` as CallUnboxed would, without planning again, when
  // `args` match what it was prepared from and the kernel is the one CallUnboxed would run;
  // with `*taken` false it did nothing, and the caller makes the call another way. `spare`
  // (optional): a tensor of an earlier call's output that its caller no longer needs; a taken
  // call of one output writes into it instead of allocating where nothing else holds it or its
  // storage and its layout is the planned one (Note [Spare outputs]); it is moved from then.
  absl::Status CallPrepared(const PreparedCall& prepared, UnboxedArgs* args,
                            UnboxedReturns* returns, bool* taken, Tensor* spare = nullptr) const;

  // ComputeDispatchKey applies the device rule to a normalized stack: all tensors on one
  // device, except 0-dim CPU tensors, which join any device (see Note in op_registry.cc).
  // Its only error is tensors on several devices.
  absl::StatusOr<DispatchKey> ComputeDispatchKey(const OperatorHandle& op,
                                                 const Stack& stack) const;
  // Lookup returns what a call on `key` would run, or the "not implemented" error. The kernel
  // stays valid while it is registered, or within a call (Note [Reclaiming deregistered
  // kernels]).
  absl::StatusOr<KernelLookup> Lookup(const OperatorHandle& op, DispatchKey key) const;
  // LookupBeyondKernel: what a call on `key` would run if the op had no kernel for `key` (a
  // derived form, the composite, the key's fallback), for a kernel that declines a call (a
  // kernel built against an older schema, given a non-default value for an argument it lacks).
  absl::StatusOr<KernelLookup> LookupBeyondKernel(const OperatorHandle& op, DispatchKey key) const;

  // SetTrace turns call tracing on or off; lines go to `sink` (std::cerr when NULL). Tracing
  // starts on when the environment has TESSERA_DISPATCH_TRACE=1.
  void SetTrace(bool enabled, std::ostream* sink = nullptr);

  // ListOps: the full names of the defined ops, sorted.
  std::vector<std::string> ListOps() const;

  // KernelRecords: how many kernel records (KernelFunction) the registry holds, registered or
  // deregistered but not yet freed (Note [Reclaiming deregistered kernels]); for tests that
  // bound what registering and deregistering leaves behind.
  size_t KernelRecords() const;

 private:
  // LookupToRun: Lookup for a call about to run what it finds (Dispatch): the same, and warn
  // mode's warning for a nondeterministic kernel (Lookup itself only answers a question: a
  // model's compile step, a listing).
  absl::StatusOr<KernelLookup> LookupToRun(const OperatorHandle& op, DispatchKey key) const;
  // LookupWithoutPlainKernel: the lookups where the op has no kernel on `key` or one declared
  // nondeterministic (Note [Deterministic algorithms]), out of their line, which then tail-call
  // it and save no register. `to_run`: LookupToRun's (warns).
  absl::StatusOr<KernelLookup> LookupWithoutPlainKernel(const OperatorHandle& op, DispatchKey key,
                                                        bool to_run) const;
  absl::Status NormalizeArguments(const internal::OperatorEntry& entry, Stack* stack) const;
  absl::Status Dispatch(const internal::OperatorEntry& entry, DispatchKey key, Stack* stack) const;
  absl::StatusOr<internal::OperatorEntry*> FindEntry(std::string_view name) const;
  // Publish stores `kernel` in `slot` and returns the handle that clears it again. A cleared
  // kernel is retired, not freed: a concurrent call may still be running it; it is freed once
  // no call can (Note [Reclaiming deregistered kernels]).
  RegistrationHandle Publish(std::atomic<const KernelFunction*>& slot, KernelFunction kernel)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // FreeRetired frees the retired kernels that no call can still be running.
  void FreeRetired() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Trace(const internal::OperatorEntry& entry, std::optional<DispatchKey> key,
             const KernelLookup& lookup) const;

  mutable absl::Mutex mu_;  // guards registration; never taken by calls
  absl::flat_hash_map<std::string, std::unique_ptr<internal::OperatorEntry>> ops_
      ABSL_GUARDED_BY(mu_);
  // The entries of ops_ by name for lookups on the call path, which take no lock (Note
  // [Looking ops up without a lock] in internal/op_index.h); written under mu_.
  internal::OpIndex index_;
  absl::flat_hash_map<const KernelFunction*, std::unique_ptr<KernelFunction>> kernels_
      ABSL_GUARDED_BY(mu_);  // published and not retired
  struct Retired {
    std::unique_ptr<KernelFunction> kernel;
    uint64_t epoch;  // CallEpochs::Retire
  };
  std::vector<Retired> retired_ ABSL_GUARDED_BY(mu_);
  // Every deprecation ever set: calls may still read a replaced one.
  std::vector<std::unique_ptr<const OpDeprecation>> deprecations_ ABSL_GUARDED_BY(mu_);
  std::atomic<const KernelFunction*> fallbacks_[kNumDispatchKeys] = {};

  std::atomic<bool> trace_{false};
  mutable absl::Mutex trace_mu_;
  std::ostream* trace_sink_ ABSL_GUARDED_BY(trace_mu_) = nullptr;
};

}  // namespace tessera

// OperatorEntry: one op's schema and kernel table. Internal to the dispatcher.
#pragma once

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "dispatcher/call_plan.h"
#include "dispatcher/deterministic.h"
#include "dispatcher/dispatch_key.h"
#include "dispatcher/kernel.h"
#include "dispatcher/op_deprecation.h"
#include "dispatcher/op_registry.h"
#include "dispatcher/schema.h"

namespace tessera {
class OpRegistry;

namespace internal {

// Note [Entry layout]
// A small op's call reads its entry (and a derived form's sibling entries) for the fields up
// to `read_tensors`: whether it is defined, its variant links, the kernel, composite and plan
// slots, what it writes and returns. They come first, in the entry's first 216 bytes (four
// cache lines, the class being cache-line aligned), and the schema, names and registration
// bookkeeping after them. With the schema first and these fields behind it, two fields added
// there took a dispatched 1-element add (tessera_dispatch_benchmark) from 130 to 147 ns at
// about the same instruction count (callgrind: 1618 and 1628 per call); moving them to the
// end restored it (125-133 ns), and this order measured 123-126. Keep per-call fields here.
class alignas(64) OperatorEntry {
 public:
  OperatorEntry(OpRegistry* registry, FunctionSchema schema, std::string schema_text)
      : returns_only_written(AllWritten(ReturnedArguments(schema))),
        first_borrowing_return(FirstBorrowingReturn(schema)),
        registry(registry),
        written(WrittenArguments(schema)),
        returned_argument(ReturnedArguments(schema)),
        read_tensors(ReadTensorArguments(schema)),
        generator_argument(GeneratorArgument(schema)),
        output_mask_argument(OutputMaskArgument(schema)),
        schema(std::move(schema)),
        name(this->schema.FullName()),
        schema_text(std::move(schema_text)) {}

  // ---- Read by calls (Note [Entry layout]) ----

  // Published with release, read with acquire by calls; written under the registry's mutex.
  std::atomic<bool> defined{true};
  // The op's sibling forms (Note [Variants]); linked once, right after definition.
  VariantKind variant = VariantKind::kNone;
  OutDtypeRule out_dtype_rule = OutDtypeRule::kCastable;
  OutputAliasing output_aliasing = OutputAliasing::kDisjoint;
  // Every return is a written argument (out= forms, in-place ops): the result check compares
  // them with those arguments only, so a call records nothing else (RecordCall).
  const bool returns_only_written;
  // The first return that is a list or a string, or -1: a value that refers into the stack it
  // is left on rather than owning itself (the C ABI hands such returns back only on a stack).
  const int first_borrowing_return;
  std::atomic<const KernelFunction*> kernels[kNumDispatchKeys] = {};
  std::atomic<const KernelFunction*> composite{nullptr};
  // The op's plan function (Note [Call plans]); NULL: plans come from its Meta kernel.
  std::atomic<const PlanFunction*> plan{nullptr};
  // Set when the op is deprecated (OpRegistry::Deprecate; the registry owns it).
  std::atomic<const OpDeprecation*> deprecation{nullptr};
  OperatorEntry* functional = nullptr;
  OperatorEntry* out = nullptr;
  OperatorEntry* inplace = nullptr;
  OpRegistry* const registry;
  // The arguments the op writes (alias annotation with '!'): out= outputs, in-place selfs.
  const absl::InlinedVector<size_t, 2> written;
  // For each return, what it must be (Note [Kernel results]): the index of the argument it is
  // (an out= output, an in-place self: a written alias), kFreshReturn (no alias annotation: a
  // tensor no argument is), or kViewReturn (a read-only alias: may be an argument or share one's
  // memory).
  static constexpr int kFreshReturn = -1;
  static constexpr int kViewReturn = -2;
  const absl::InlinedVector<int, 2> returned_argument;
  // The arguments of a Tensor type (Tensor, Tensor?, Tensor[], Tensor?[]) it only reads: what
  // a written tensor must not overlap (Note [Memory overlap]). After normalization only these
  // positions can hold tensors.
  const absl::InlinedVector<size_t, 4> read_tensors;

  // ---- The rest ----

  // The index of the op's Generator argument, or -1: a random op, whose kernel calls draw
  // from a generator (Note [Random numbers] in core/generator.h). Read by plans, which are
  // computed on the boxed path only (no random op has an unboxed plan function).
  const int generator_argument;
  // The index of the op's `bool[N] output_mask` argument, or -1: a backward op, whose kernels
  // return None (an undefined tensor) for a gradient it does not ask for, as ATen's do, though
  // the return's type is Tensor (Note [Kernel results]; the conformance suite's undefined_grad
  // oracle checks which).
  const int output_mask_argument;

  const FunctionSchema schema;  // immutable: a redefinition must be identical
  const std::string name;
  const std::string schema_text;                             // canonical (FunctionSchema::ToString)
  std::atomic<const KernelFunction*> cross_device{nullptr};  // OpRegistry::ImplCrossDevice
  // Whether the deprecated op's first call through the C ABI has logged so.
  std::atomic<bool> deprecation_warned{false};
  // Whether a nondeterministic kernel of the op has run in warn mode (Note [Deterministic
  // algorithms]); mutable: lookups read entries as const.
  mutable std::atomic<bool> nondeterminism_warned{false};
  // The live definitions of the op, under the registry's mutex; `defined` is owners > 0 (Note
  // [Op definitions are reference-counted] in dispatcher/op_registry.cc).
  int64_t owners = 1;
  // The entry of an earlier definition with another schema that this one replaced, kept alive
  // for the handles, kernels and registrations that still point into it.
  std::unique_ptr<OperatorEntry> replaced;

 private:
  static absl::InlinedVector<size_t, 2> WrittenArguments(const FunctionSchema& schema) {
    absl::InlinedVector<size_t, 2> written;
    for (size_t i = 0; i < schema.arguments.size(); ++i) {
      if (schema.arguments[i].alias && schema.arguments[i].alias->is_write) written.push_back(i);
    }
    return written;
  }
  static bool AllWritten(const absl::InlinedVector<int, 2>& returned) {
    return !returned.empty() &&
           std::all_of(returned.begin(), returned.end(), [](int index) { return index >= 0; });
  }
  static int GeneratorArgument(const FunctionSchema& schema) {
    for (size_t i = 0; i < schema.arguments.size(); ++i) {
      if (schema.arguments[i].type.base == BaseType::kGenerator) return static_cast<int>(i);
    }
    return -1;
  }
  static int OutputMaskArgument(const FunctionSchema& schema) {
    for (size_t i = 0; i < schema.arguments.size(); ++i) {
      const Argument& a = schema.arguments[i];
      if (a.name == "output_mask" && a.type.base == BaseType::kBool && a.type.is_list) {
        return static_cast<int>(i);
      }
    }
    return -1;
  }
  static int FirstBorrowingReturn(const FunctionSchema& schema) {
    for (size_t r = 0; r < schema.returns.size(); ++r) {
      const SchemaType& type = schema.returns[r].type;
      if (type.is_list || type.base == BaseType::kStr) return static_cast<int>(r);
    }
    return -1;
  }
  static absl::InlinedVector<size_t, 4> ReadTensorArguments(const FunctionSchema& schema) {
    absl::InlinedVector<size_t, 4> read;
    for (size_t i = 0; i < schema.arguments.size(); ++i) {
      const Argument& arg = schema.arguments[i];
      if (arg.type.base == BaseType::kTensor && !(arg.alias && arg.alias->is_write)) {
        read.push_back(i);
      }
    }
    return read;
  }
  static absl::InlinedVector<int, 2> ReturnedArguments(const FunctionSchema& schema) {
    absl::InlinedVector<int, 2> returned;
    for (const Argument& ret : schema.returns) {
      int what = ret.alias ? kViewReturn : kFreshReturn;
      if (ret.alias && ret.alias->is_write) {
        for (size_t i = 0; i < schema.arguments.size(); ++i) {
          const std::optional<AliasInfo>& alias = schema.arguments[i].alias;
          if (alias && alias->is_write && alias->set == ret.alias->set) what = static_cast<int>(i);
        }
      }
      returned.push_back(what);
    }
    return returned;
  }
};

// AllowedKernel: `entry`'s kernel on `key`, or NULL when it has none or its kernel may not run
// now (a nondeterministic kernel while deterministic algorithms are on: Note [Deterministic
// algorithms] in dispatcher/deterministic.h). Every lookup that may run a kernel reads the slot
// through this; `entry` may be NULL (a missing sibling form). No side effect: the warning of
// warn mode is given where the kernel runs (WarnIfNondeterministic).
inline const KernelFunction* AllowedKernel(const OperatorEntry* entry, int key) {
  if (entry == nullptr) return nullptr;
  const KernelFunction* k = entry->kernels[key].load(std::memory_order_acquire);
  if (ABSL_PREDICT_TRUE(k == nullptr || !k->nondeterministic)) return k;
  return GetDeterministicMode() == DeterministicMode::kOn ? nullptr : k;
}

// The variant machinery (dispatcher/variants.cc), used by OpRegistry's lookup and dispatch.
// DerivedKernel: the kernel deriving `entry`'s form on `key` from a sibling form that has a
// real kernel there, or NULL.
const KernelFunction* DerivedKernel(const OperatorEntry& entry, int key);
// DerivedThroughCopy (op_registry.h) on an entry.
bool DerivedThroughCopy(const OperatorEntry& entry, int key);
// ComputePlan computes the plan of a call of `functional` from the first values of `args` (Note
// [Call plans]): with its plan function, else from its Meta kernel's results, else a plan
// without outputs.
// `Args`: a Stack or UnboxedArgs (dispatcher/unboxed_call.h), which needs a plan function.
template <typename Args>
absl::Status ComputePlan(const OperatorEntry& functional, const Args& args, CallPlan* plan);
// RequirePlan: ComputePlan for a derivation, which cannot run without outputs to allocate or
// check: an op without a Meta function is an INTERNAL error.
template <typename Args>
absl::Status RequirePlan(const OperatorEntry& functional, const Args& args, CallPlan* plan);
// ValidateCall runs before every backend kernel (Note [Variants]): the op's plan checks the
// arguments (shapes, dtypes, dims) so that no backend sees input the op refuses; an out= form
// also gets its outputs checked and resized, an in-place form its self checked. The plan is
// left in `*plan` for the kernel and for CheckKernelResults.
template <typename Args>
absl::Status ValidateCall(const OperatorEntry& entry, const Args& args, CallPlan* plan);
// CheckInplace: an in-place result must have self's shape and a dtype castable to self's.
absl::Status CheckInplace(const OperatorEntry& op, const Tensor& self, const TensorSpec& computed);

// KernelCall: what a backend kernel's results are checked against (Note [Kernel results]),
// taken from the arguments before the kernel consumes them.
struct KernelCall {
  CallPlan plan;  // the call's plan (ValidateCall); without outputs when the op has no Meta
  Device device;  // where tensor results must be (ResultDevice)
  // Bit r: return r is a gradient the op's output_mask did not ask for (may be None).
  uint32_t unasked = 0;
  // The call's Tensor arguments, held so that a result can be compared with them by identity
  // (a kernel that drops the last reference could otherwise get a new tensor at the same
  // address), with their argument index.
  absl::InlinedVector<std::pair<int, Tensor>, 8> tensors;
};
// RecordCall fills `call->device` and `call->tensors` from the arguments of `entry` on `stack`
// (for an op whose returns are all written arguments, only those: nothing else is checked).
void RecordCall(const OperatorEntry& entry, const Stack& stack, KernelCall* call);
// ReserveDraw gives the plan of a random op's kernel call its draw (Note [Random numbers] in
// core/generator.h); nothing for other ops. Called right before the kernel runs.
void ReserveDraw(const OperatorEntry& entry, const Stack& args, CallPlan* plan);
// CheckKernelResults checks what `kernel` of `entry` left on `results` against `call`: count and
// kinds of the returns, and each Tensor return's identity, dtype, shape and device. `caller`
// names the op the user called when a derivation ran `entry`'s kernel (Note [Variants]).
absl::Status CheckKernelResults(const OperatorEntry& caller, const OperatorEntry& entry,
                                const KernelFunction& kernel, const KernelCall& call,
                                const Stack& results);
// CallPacked runs the packed entry of `kernel` (an out= or in-place kernel of `entry`, Note
// [Packed kernel calls]) on `stack`, whose outputs are prepared as `plan` says, checks what it
// returns, and leaves the returns on `stack`. `caller` names the op the user called.
absl::Status CallPacked(const OperatorEntry& caller, const OperatorEntry& entry,
                        const KernelFunction& kernel, const CallPlan& plan, Stack* stack);
// CallUnboxedPacked: the same for an unboxed call (Note [The unboxed fast path]): the kernel's
// unboxed entry on `args`, whose outputs are prepared as `plan` says, and the same checks of
// what it returns; the returns are the written arguments, which the caller reads from `args`.
absl::Status CallUnboxedPacked(const OperatorEntry& caller, const OperatorEntry& entry,
                               const KernelFunction& kernel, const CallPlan& plan,
                               const UnboxedArgs& args);
using ::tessera::kMaxPackedReturns;
// The unboxed fast path's choices (dispatcher/unboxed_call.cc), made alike by OpRegistry's
// CallUnboxed and its prepared calls (dispatcher/prepared_call.cc):
// UnboxedKernelAt: `entry`'s kernel on `key` when an unboxed call may run it (it has an unboxed
// entry and is deterministic), else NULL. Inline, as FunctionalFromOutKernel: out of line they
// were some 35 instructions more on every small call (the instruction gate).
inline const KernelFunction* UnboxedKernelAt(const OperatorEntry* entry, int key) {
  if (entry == nullptr) return nullptr;
  const KernelFunction* k = entry->kernels[key].load(std::memory_order_acquire);
  // A nondeterministic kernel takes the boxed path, where the deterministic mode is applied
  // (Note [Deterministic algorithms]).
  return k != nullptr && k->unboxed != nullptr && !k->nondeterministic ? k : nullptr;
}
// UnboxedCallKey: the dispatch key of an unboxed call whose tensors are all on one device, not
// Meta; -1 for any other call (the boxed path applies the device rule).
int UnboxedCallKey(const UnboxedArgs& args);
// FunctionalFromOutKernel: the kernel a call of the functional form `functional` runs on `key`
// by the out= form's (the derivation FunctionalFromOut), when it has no kernel of its own there
// and the out= form's may run unboxed; else NULL.
inline const KernelFunction* FunctionalFromOutKernel(const OperatorEntry& functional, int key) {
  if (functional.kernels[key].load(std::memory_order_acquire) != nullptr) return nullptr;
  return UnboxedKernelAt(functional.out, key);
}

// CheckWrittenMemory refuses a call whose written tensors overlap themselves or its inputs
// (Note [Memory overlap], dispatcher/memory_overlap_check.cc).
template <typename Args>
absl::Status CheckWrittenMemory(const OperatorEntry& entry, const Args& args);

}  // namespace internal
}  // namespace tessera

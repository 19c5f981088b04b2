// The unboxed fast path of an op call: OpRegistry::CallUnboxed.
#include "dispatcher/unboxed_call.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/status_macros.h"
#include "dispatcher/call_epoch.h"
#include "dispatcher/internal/operator_entry.h"

namespace tessera {

// Note [The unboxed fast path]
// A 1-element add through the boxed path spent most of its instructions on the call's form,
// not its work: its arguments became a Stack of Values (a reference taken per tensor), were
// normalized against the schema, dispatched through the functional form's derivation, handed
// to the kernel's packed entry as tsr_values rebuilt from that Stack, and moved back into
// returns. A call of the common case skips that form and none of the semantics:
//
//   - the runtime decodes the caller's arguments into UnboxedArgs only when each already has
//     its schema argument's kind (a Tensor, a tsr_scalar for a Scalar, None where the type is
//     optional; defaults filled in from the schema); anything else (ints or doubles for a
//     Scalar, strings, lists, named or default markers) takes the boxed path, which converts,
//     binds or refuses it;
//   - CallUnboxed takes a call whose tensors are all on one device (not Meta), of an op whose
//     functional form has an unboxed plan function (the pointwise ops, the matrix products,
//     the reductions), whose kernel on that device is the form's own packed kernel or the out=
//     form's packed kernel under the functional or in-place derivation (Note [Variants]);
//     anything else returns not taken, having done nothing;
//   - what it runs is the boxed path's own code over the other argument form: the same plan
//     function and checks (templates instantiated for Stack and UnboxedArgs: the plan, the
//     output and in-place checks, the memory-overlap check, the packed returns' check), in the
//     same order, so that a call gives the same results and the same errors on both paths;
//   - the kernel's unboxed entry builds its tsr_values and views from UnboxedArgs directly; its
//     tsr_kernel_call.stack is an UnboxedStack, which fills itself only if the kernel reads it.
//
// Two tests hold the paths to that, each run with TESSERA_FAST_PATH=0 and without: the ctest
// tessera_unboxed_path_diff (tests/unboxed_path/) over every op-database case in its
// functional, out= and in-place forms, and scripts/fuzz.sh over the grown op_call corpus; both
// call through tsr_op_call (runtime/tests/c_api_packed_test.cc covers tsr_op_call_values' own
// decoding). Not built: a cache of call recipes keyed by argument metadata (DESIGN.md: a
// small gain, and keys that go stale silently).

// Never called: the decoders refuse such arguments (UnboxedArg). Were one called, it would be a
// fast path widened without its checks: stop rather than compute with a made-up value.
[[noreturn]] void NotAnUnboxedArgument(const char* what) {
  std::fprintf(stderr, "tessera: internal error: an unboxed call read %s argument\n", what);
  std::abort();
}

const std::string& UnboxedArg::string() const { NotAnUnboxedArgument("a str"); }

bool UnboxedArg::to_bool() const { NotAnUnboxedArgument("a bool"); }

int64_t UnboxedArg::to_int() const { NotAnUnboxedArgument("an int"); }

const IntList& UnboxedArg::int_list() const { NotAnUnboxedArgument("an int[]"); }

ScalarType UnboxedArg::scalar_type() const { NotAnUnboxedArgument("a ScalarType"); }

const std::vector<Tensor>& UnboxedArg::tensor_list() const { NotAnUnboxedArgument("a Tensor[]"); }

Device UnboxedArg::device() const { NotAnUnboxedArgument("a Device"); }

void UnboxedArgs::ToStack(Stack* stack) const {
  for (size_t i = 0; i < size_; ++i) {
    const UnboxedArg& a = args_[i];
    switch (a.kind()) {
      case UnboxedArg::Kind::kTensor:
        stack->emplace_back(a.tensor());  // a reference of its own
        break;
      case UnboxedArg::Kind::kScalar:
        stack->emplace_back(a.scalar());
        break;
      case UnboxedArg::Kind::kNone:
        stack->emplace_back();
        break;
    }
  }
}

bool UnboxedPathEnabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("TESSERA_FAST_PATH");
    return v == nullptr || std::strcmp(v, "0") != 0;
  }();
  return enabled;
}

namespace {

// WrittenReturns: the returns of a form whose returns are its written arguments.
void WrittenReturns(const internal::OperatorEntry& entry, const UnboxedArgs& args,
                    UnboxedReturns* returns) {
  returns->size = entry.returned_argument.size();
  for (size_t r = 0; r < returns->size; ++r) {
    const UnboxedArg& written = args[entry.returned_argument[r]];
    returns->tensors[r] = written.is_tensor() ? written.tensor() : Tensor();
  }
}

}  // namespace

namespace internal {

int UnboxedCallKey(const UnboxedArgs& args) {
  // The device rule's common case: every tensor on one device. (Where a 0-dim CPU tensor joins
  // another device's call, the boxed path applies the rule.)
  const TensorImpl* first = nullptr;
  for (size_t i = 0; i < args.size(); ++i) {
    const UnboxedArg& a = args[i];
    if (!a.is_tensor()) continue;
    const TensorImpl* t = a.tensor().impl();
    if (first == nullptr) {
      first = t;
    } else if (t->device() != first->device()) {
      return -1;
    }
  }
  if (first == nullptr || first->device().type == DeviceType::kMeta) return -1;
  return static_cast<int>(DispatchKeyFor(first->device().type));
}

}  // namespace internal

bool OperatorHandle::may_call_unboxed() const {
  const internal::OperatorEntry& entry = *entry_;
  if (entry.variant == VariantKind::kNone) return false;
  const internal::OperatorEntry* functional =
      entry.variant == VariantKind::kFunctional ? &entry : entry.functional;
  const PlanFunction* plan = functional->plan.load(std::memory_order_acquire);
  return plan != nullptr && plan->unboxed != nullptr;
}

absl::Status OpRegistry::CallUnboxed(const OperatorHandle& op, UnboxedArgs* args,
                                     UnboxedReturns* returns, bool* taken) const {
  *taken = false;
  const internal::OperatorEntry& entry = *op.entry_;
  if (ABSL_PREDICT_FALSE(trace_.load(std::memory_order_relaxed))) return absl::OkStatus();
  if (entry.variant == VariantKind::kNone || args->size() != entry.schema.arguments.size()) {
    return absl::OkStatus();
  }
  const internal::OperatorEntry& functional =
      entry.variant == VariantKind::kFunctional ? entry : *entry.functional;
  const PlanFunction* plan_fn = functional.plan.load(std::memory_order_acquire);
  if (plan_fn == nullptr || plan_fn->unboxed == nullptr) return absl::OkStatus();
  if (args->size() + functional.schema.returns.size() > UnboxedArgs::kMax) {
    return absl::OkStatus();
  }
  const int key = internal::UnboxedCallKey(*args);
  if (key < 0) return absl::OkStatus();
  // Without a kernel the fast path runs (the form's own, or the out= form's under a
  // derivation), the call is not taken: said before the call epoch is entered, which only a
  // kernel to run needs.
  if (entry.kernels[key].load(std::memory_order_relaxed) == nullptr &&
      (entry.variant == VariantKind::kOut || entry.out == nullptr ||
       entry.out->kernels[key].load(std::memory_order_relaxed) == nullptr)) {
    return absl::OkStatus();
  }

  CallScope scope;  // Note [Reclaiming deregistered kernels]: the kernels below stay alive
  if (ABSL_PREDICT_FALSE(!entry.defined.load(std::memory_order_acquire))) return absl::OkStatus();
  CallPlan plan;
  if (const KernelFunction* own = entry.kernels[key].load(std::memory_order_acquire)) {
    // The form's own kernel (Dispatch: a backend kernel): an out= or in-place one, the forms
    // that have packed entries.
    if (own->unboxed == nullptr || own->nondeterministic) return absl::OkStatus();
    *taken = true;
    TSR_RETURN_IF_ERROR(internal::ValidateCall(entry, *args, &plan));
    if (!entry.written.empty()) TSR_RETURN_IF_ERROR(internal::CheckWrittenMemory(entry, *args));
    TSR_RETURN_IF_ERROR(internal::CallUnboxedPacked(entry, entry, *own, plan, *args));
    WrittenReturns(entry, *args, returns);
    return absl::OkStatus();
  }
  if (entry.variant == VariantKind::kFunctional) {  // FunctionalFromOut
    const KernelFunction* out_kernel = internal::FunctionalFromOutKernel(entry, key);
    if (out_kernel == nullptr) return absl::OkStatus();
    *taken = true;
    TSR_RETURN_IF_ERROR(internal::RequirePlan(entry, *args, &plan));
    for (const TensorSpec& spec : plan.outputs) {
      TSR_ASSIGN_OR_RETURN(Tensor out,
                           EmptyStrided(spec.sizes, spec.strides, spec.dtype, plan.device));
      args->AddTensor(out.impl());  // room checked above
      returns->tensors[returns->size++] = std::move(out);
    }
    return internal::CallUnboxedPacked(entry, *entry.out, *out_kernel, plan, *args);
  }
  if (entry.variant == VariantKind::kInplace) {  // InplaceFromOut, after Dispatch's check
    const KernelFunction* out_kernel = internal::UnboxedKernelAt(entry.out, key);
    if (out_kernel == nullptr) return absl::OkStatus();
    *taken = true;
    TSR_RETURN_IF_ERROR(internal::CheckWrittenMemory(entry, *args));
    TSR_RETURN_IF_ERROR(internal::RequirePlan(*entry.functional, *args, &plan));
    const Tensor& self = (*args)[0].tensor();
    TSR_RETURN_IF_ERROR(internal::CheckInplace(entry, self, plan.outputs[0]));
    args->AddTensor(self.impl());  // self is the out= form's output
    TSR_RETURN_IF_ERROR(internal::CallUnboxedPacked(entry, *entry.out, *out_kernel, plan, *args));
    returns->tensors[0] = self;
    returns->size = 1;
    return absl::OkStatus();
  }
  return absl::OkStatus();  // an out= form without its own kernel: OutFromFunctional, boxed
}

}  // namespace tessera

// Checking what a backend kernel returned (Note [Kernel results]).
#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "dispatcher/internal/operator_entry.h"
#include "dispatcher/unboxed_call.h"

namespace tessera {

// Note [Kernel results]
// A backend kernel is a plugin's native code: whatever it leaves on the stack goes to the
// caller as the op's result. Before issue 14 (item 17) only the number of values was checked,
// so a kernel returning an int where a Tensor is due, a tensor of the wrong shape, dtype or
// device, its own input from a functional op, or a fresh tensor from an out= form (an `exp.out`
// kernel even resized the caller's `out` to [1]) all returned OK: silent wrong output.
//
// Now every backend kernel's results are checked against what the dispatcher already knows
// before the kernel runs: ValidateCall ran the op's Meta function (Note [Variants]), and its
// results (shapes and dtypes) are kept for the check instead of being thrown away, so Meta runs
// once per call. For each return, by the schema:
//   - the value's kind matches the return type (Tensor, int, Tensor[], ...);
//   - a written alias (`Tensor(a!)`, out= outputs and in-place selfs) is that very argument
//     (the same TensorImpl), and has the shape the Meta function computed (a kernel must not
//     resize it to anything else);
//   - a return without alias annotation is a new tensor: no Tensor argument of the call, with
//     the Meta function's dtype and shape, on the call's device (ResultDevice);
//   - a read-only alias (`Tensor(a)`, views) may be its argument: only kind and device.
// A Tensor return may be None (an undefined tensor) where its type is optional, and where a
// backward op's `output_mask` (OperatorEntry::output_mask_argument) did not ask for it: ATen's
// return an undefined tensor for such a gradient (convolution_backward,
// native_layer_norm_backward, ...). RecordCall notes the mask (KernelCall::unasked) before the
// kernel runs; the conformance suite's undefined_grad oracle checks the other direction (None
// where the mask said no, not a tensor).
// A mismatch is an INTERNAL error naming the op, the kernel, its plugin, and what was expected
// and found. Ops without a Meta function get every check but dtype and shape.
//
// The cost is a few comparisons per result plus holding a reference to each Tensor argument
// across the kernel (KernelCall::tensors, inline for up to 8 of them: no allocation; for an op
// whose returns are all written arguments, out= forms and in-place ops, only those are held and
// the call's device is not computed, since nothing else is checked; measured
// with tessera_dispatch_benchmark's Dispatched case, some 30 ns on the shared 2-core machine,
// likely most of it the atomic reference-count round trip per argument). The references make
// the identity checks sound: a kernel that drops the last reference to an argument could
// otherwise be handed a new TensorImpl at the same address, which a raw pointer compare would
// take for the argument. Tensor-list arguments are not held, so "returns an input" is not
// checked against their elements.
//
// What is checked, and where:
//   - A backend's own kernel, called by Dispatch (KernelSource::kKernel): all of the above;
//     through its packed entry, the same checks without held references (Note [Packed kernel
//     calls] below).
//   - A backend's kernel run by a derivation (variants.cc): the same check, against the Meta
//     results the derivation computes anyway (the forms derived from a functional kernel now
//     run the Meta function first, which also keeps refused input from reaching that kernel).
//   - Composites, the CPU fallback and cross-device kernels: only the count. They are the
//     runtime's own code and every backend kernel they reach runs through Dispatch, where it is
//     checked (the CPU fallback redispatches to the CPU kernel with CallWithKey, so the CPU
//     plugin's result is checked before the fallback copies it to the device).
//   - Meta kernels: not checked (the runtime's own shape functions).

namespace internal {
namespace {

// ResultDevice: where an op's tensor results belong. An explicit Device argument says it
// (factories, _to_copy); else the device of the first tensor that is not a 0-dim CPU tensor,
// as the dispatch key is computed (Note [Dispatch key from devices]); else the CPU.
Device ResultDevice(const Stack& stack) {
  const Device cpu(DeviceType::kCPU, 0);
  std::optional<Device> from_tensor;
  for (const Value& v : stack) {
    if (v.is_device()) return v.device();
    if (from_tensor) continue;
    if (v.is_tensor() && v.tensor().defined()) {
      if (!(v.tensor().dim() == 0 && v.tensor().device() == cpu)) from_tensor = v.tensor().device();
    } else if (v.is_tensor_list()) {
      for (const Tensor& t : v.tensor_list()) {
        if (t.defined() && !(t.dim() == 0 && t.device() == cpu)) {
          from_tensor = t.device();
          break;
        }
      }
    }
  }
  return from_tensor.value_or(cpu);
}

// Who: "kernel 'npu::exp_out' (plugin 'npu')" and, under a derivation, " of exp.out".
std::string Who(const OperatorEntry& caller, const OperatorEntry& entry,
                const KernelFunction& kernel) {
  std::string who = absl::StrFormat("kernel '%s'", kernel.name);
  if (!kernel.plugin.empty()) absl::StrAppendFormat(&who, " (plugin '%s')", kernel.plugin);
  if (&caller != &entry) absl::StrAppendFormat(&who, " of %s", entry.name);
  return who;
}

absl::Status Mismatch(const OperatorEntry& caller, const OperatorEntry& entry,
                      const KernelFunction& kernel, size_t r, std::string_view found,
                      std::string_view expected) {
  return absl::InternalError(absl::StrFormat("%s: %s left %s as result %d, expected %s",
                                             caller.name, Who(caller, entry, kernel), found, r,
                                             expected));
}

std::string Describe(const Tensor& t) {
  return absl::StrFormat("a %s tensor of shape %s on %s", ScalarTypeName(t.dtype()),
                         ShapeToString(t.sizes()), DeviceToString(t.device()));
}

}  // namespace

// NoteUnasked: the gradients a backward op's output_mask did not ask for, which its kernel
// leaves as None (KernelCall::unasked).
ABSL_ATTRIBUTE_NOINLINE void NoteUnasked(const Value& mask, KernelCall* call) {
  if (mask.kind() != Value::Kind::kBoolList) return;
  const BoolList& asked = mask.bool_list();
  for (size_t r = 0; r < asked.size() && r < 32; ++r) {
    if (!asked[r]) call->unasked |= uint32_t{1} << r;
  }
}

void RecordCall(const OperatorEntry& entry, const Stack& stack, KernelCall* call) {
  if (entry.returns_only_written) {
    // Only the written arguments' identity and shape are checked: no device, no other tensor.
    for (const int index : entry.returned_argument) {
      const Value& v = stack[index];
      if (v.is_tensor() && v.tensor().defined()) call->tensors.emplace_back(index, v.tensor());
    }
    return;
  }
  call->device = ResultDevice(stack);
  for (size_t i = 0; i < stack.size(); ++i) {
    if (stack[i].is_tensor() && stack[i].tensor().defined()) {
      call->tensors.emplace_back(static_cast<int>(i), stack[i].tensor());
    } else if (ABSL_PREDICT_FALSE(static_cast<int>(i) == entry.output_mask_argument)) {
      NoteUnasked(stack[i], call);
    }
  }
}

// Note [Packed kernel calls]
// Most of a small op's time in a boxed kernel call went to the stack rather than the kernel
// (callgrind, 1-element add through the CPU plugin, about 1,700 of 4,050 instructions): the
// kernel read its arguments with a table call each, rebuilt the stack with its returns (a
// clear and a push through the table), and the dispatcher held a reference to every argument
// across the call so that the result check could compare identities soundly (a kernel that
// drops the last reference could otherwise get a new tensor at the same address).
//
// An op whose returns are all written arguments (out= forms, in-place ops: returns_only_written)
// needs none of that: its results are known before the kernel runs. A kernel may register a
// packed entry for such ops (C ABI 1.1: tsr_kernel_desc.packed, tsr_kernel_call). It gets
// every argument and every tensor view in one struct filled by the runtime, reads the stack
// only through the struct, and names its returns in an array. The caller's stack keeps its
// references for the whole call, and the kernel only borrows, so comparing pointers is sound
// without holding anything. The check is the boxed one's, for what such an op can return: each
// return is the argument the schema says, still of the planned shape.
//
// Dispatch and the derivations (Note [Variants]) take the packed entry whenever a kernel has
// one, so the functional and in-place forms derived from an out= kernel use it too. The boxed
// entry stays the contract (a runtime before 1.1, an adapted kernel, the CPU fallback's
// redispatch all use it), and must compute the same.

// StackChanged: the error for a packed kernel that changed its stack.
absl::Status StackChanged(const OperatorEntry& caller, const OperatorEntry& entry,
                          const KernelFunction& kernel, size_t before, size_t after) {
  return absl::InternalError(absl::StrFormat(
      "%s: %s changed its stack from %d to %d values (a packed kernel reads the stack only)",
      caller.name, Who(caller, entry, kernel), before, after));
}

// CheckPackedReturns: each return of a packed call is the argument the schema says (`args`: a
// Stack or UnboxedArgs), still of the planned shape.
template <typename Args>
absl::Status CheckPackedReturns(const OperatorEntry& caller, const OperatorEntry& entry,
                                const KernelFunction& kernel, const CallPlan& plan,
                                const Args& args, absl::Span<const TensorImpl* const> returned);

absl::Status CallPacked(const OperatorEntry& caller, const OperatorEntry& entry,
                        const KernelFunction& kernel, const CallPlan& plan, Stack* stack) {
  const size_t n = entry.returned_argument.size();
  const size_t num_args = stack->size();
  const TensorImpl* returned[kMaxPackedReturns] = {};
  {
    // The plan as the boxed entry sees it on its stack: none without outputs.
    const CallPlan* attached = plan.is_empty() ? nullptr : &plan;
    PlanScope scope(stack, attached);
    TSR_RETURN_IF_ERROR(kernel.packed(kernel.context,
                                      OperatorHandle::FromEntry(const_cast<OperatorEntry*>(&entry)),
                                      stack, attached, absl::MakeSpan(returned, n)));
  }
  if (ABSL_PREDICT_FALSE(stack->size() != num_args)) {  // the one thing it must not touch
    return StackChanged(caller, entry, kernel, num_args, stack->size());
  }
  TSR_RETURN_IF_ERROR(
      CheckPackedReturns(caller, entry, kernel, plan, *stack, absl::MakeConstSpan(returned, n)));
  // The returns replace the arguments: each written argument moves to its return's place (a
  // move, not a reference count round trip), then the rest is dropped.
  if (n == 1 && entry.returned_argument[0] != 0) {
    (*stack)[0] = std::move((*stack)[entry.returned_argument[0]]);
  } else if (n > 1) {
    Value results[kMaxPackedReturns];
    for (size_t r = 0; r < n; ++r) results[r] = std::move((*stack)[entry.returned_argument[r]]);
    for (size_t r = 0; r < n; ++r) (*stack)[r] = std::move(results[r]);
  }
  stack->erase(stack->begin() + static_cast<std::ptrdiff_t>(n), stack->end());
  return absl::OkStatus();
}

absl::Status CallUnboxedPacked(const OperatorEntry& caller, const OperatorEntry& entry,
                               const KernelFunction& kernel, const CallPlan& plan,
                               const UnboxedArgs& args) {
  const size_t n = entry.returned_argument.size();
  const TensorImpl* returned[kMaxPackedReturns] = {};
  const CallPlan* attached = plan.is_empty() ? nullptr : &plan;
  UnboxedStack stack(args);  // filled only if the kernel reads or writes it
  {
    PlanScope scope(stack.get(), attached);
    TSR_RETURN_IF_ERROR(kernel.unboxed(
        kernel.context, OperatorHandle::FromEntry(const_cast<OperatorEntry*>(&entry)), args,
        stack.get(), attached, absl::MakeSpan(returned, n)));
  }
  if (ABSL_PREDICT_FALSE(!stack.get()->unfilled() && stack.get()->size() != args.size())) {
    return StackChanged(caller, entry, kernel, args.size(), stack.get()->size());
  }
  return CheckPackedReturns(caller, entry, kernel, plan, args, absl::MakeConstSpan(returned, n));
}

template <typename Args>
absl::Status CheckPackedReturns(const OperatorEntry& caller, const OperatorEntry& entry,
                                const KernelFunction& kernel, const CallPlan& plan,
                                const Args& args, absl::Span<const TensorImpl* const> returned) {
  const size_t n = returned.size();
  const bool has_meta = plan.outputs.size() == n;
  for (size_t r = 0; r < n; ++r) {
    const int index = entry.returned_argument[r];
    const Argument& arg = entry.schema.arguments[index];
    const auto& written = args[index];
    if (!written.is_tensor() || !written.tensor().defined()) continue;  // None: an optional out
    const Tensor& t = written.tensor();
    if (ABSL_PREDICT_FALSE(returned[r] != t.impl())) {
      return Mismatch(caller, entry, kernel, r,
                      returned[r] == nullptr ? std::string("no tensor") : "another tensor",
                      absl::StrFormat("argument '%s' itself (a written alias is returned as the "
                                      "caller's own tensor)",
                                      arg.name));
    }
    if (ABSL_PREDICT_FALSE(has_meta && !SameDims(t.sizes(), plan.outputs[r].sizes))) {
      return absl::InternalError(absl::StrFormat(
          "%s: %s resized argument '%s' to %s, expected %s (the shape the Meta function "
          "computed)",
          caller.name, Who(caller, entry, kernel), arg.name, ShapeToString(t.sizes()),
          ShapeToString(plan.outputs[r].sizes)));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckKernelResults(const OperatorEntry& caller, const OperatorEntry& entry,
                                const KernelFunction& kernel, const KernelCall& call,
                                const Stack& results) {
  const std::vector<Argument>& returns = entry.schema.returns;
  if (ABSL_PREDICT_FALSE(results.size() != returns.size())) {
    return absl::InternalError(absl::StrFormat(
        "%s: %s left %d values on the stack, but %s returns %d", caller.name,
        Who(caller, entry, kernel), results.size(),
        &caller == &entry ? std::string("the schema") : entry.name, returns.size()));
  }
  const bool has_meta = call.plan.outputs.size() == returns.size();
  for (size_t r = 0; r < returns.size(); ++r) {
    const Value& v = results[r];
    const SchemaType& type = returns[r].type;
    if (type.base != BaseType::kTensor || type.is_list) {
      // Kinds only: NormalizeArgumentValue may convert (an int where a float is due), so work
      // on a copy, which only non-Tensor returns pay for.
      Value copy = v;
      if (ABSL_PREDICT_FALSE(!NormalizeArgumentValue(returns[r], &copy).ok())) {
        return Mismatch(caller, entry, kernel, r, ValueKindName(v.kind()), type.ToString());
      }
      continue;
    }
    if (ABSL_PREDICT_FALSE(!v.is_tensor() || !v.tensor().defined())) {
      // None where the type allows it, or where a backward op's output_mask did not ask for it.
      const bool may_be_none = type.optional || (r < 32 && ((call.unasked >> r) & 1) != 0);
      if (may_be_none && (v.is_none() || v.is_tensor())) continue;
      return Mismatch(caller, entry, kernel, r,
                      v.is_tensor() ? "an undefined tensor" : ValueKindName(v.kind()), "a Tensor");
    }
    const Tensor& t = v.tensor();
    const int returned = entry.returned_argument[r];
    if (returned >= 0) {  // a written argument: the caller's own tensor, at the computed shape
      const Argument& arg = entry.schema.arguments[returned];
      const Tensor* written = nullptr;
      for (const auto& [index, tensor] : call.tensors) {
        if (index == returned) written = &tensor;
      }
      if (written == nullptr) continue;  // None for an optional written argument
      if (ABSL_PREDICT_FALSE(has_meta && !SameDims(written->sizes(), call.plan.outputs[r].sizes))) {
        return absl::InternalError(absl::StrFormat(
            "%s: %s resized argument '%s' to %s, expected %s (the shape the Meta function "
            "computed)",
            caller.name, Who(caller, entry, kernel), arg.name, ShapeToString(written->sizes()),
            ShapeToString(call.plan.outputs[r].sizes)));
      }
      if (ABSL_PREDICT_FALSE(t.impl() != written->impl())) {
        return Mismatch(caller, entry, kernel, r, "another tensor (" + Describe(t) + ")",
                        absl::StrFormat("argument '%s' itself (a written alias is returned as "
                                        "the caller's own tensor)",
                                        arg.name));
      }
      continue;
    }
    if (ABSL_PREDICT_FALSE(t.device() != call.device)) {
      return Mismatch(
          caller, entry, kernel, r, Describe(t),
          absl::StrFormat("a tensor on %s (the call's device)", DeviceToString(call.device)));
    }
    if (returned == OperatorEntry::kViewReturn) continue;
    for (const auto& [index, tensor] : call.tensors) {
      if (ABSL_PREDICT_FALSE(t.impl() == tensor.impl())) {
        return Mismatch(caller, entry, kernel, r,
                        absl::StrFormat("its argument '%s'", entry.schema.arguments[index].name),
                        "a new tensor (the schema does not say the result aliases an argument)");
      }
    }
    if (!has_meta) continue;
    const TensorSpec& computed = call.plan.outputs[r];
    if (ABSL_PREDICT_FALSE(t.dtype() != computed.dtype || !SameDims(t.sizes(), computed.sizes))) {
      return Mismatch(
          caller, entry, kernel, r, Describe(t),
          absl::StrFormat("a %s tensor of shape %s (what the Meta function computed)",
                          ScalarTypeName(computed.dtype), ShapeToString(computed.sizes)));
    }
  }
  return absl::OkStatus();
}

}  // namespace internal
}  // namespace tessera

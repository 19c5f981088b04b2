// The functional, out= and in-place forms of an op, and how each derives from the others.
#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "core/type_promotion.h"
#include "dispatcher/internal/operator_entry.h"
#include "dispatcher/op_registry.h"
#include "dispatcher/unboxed_call.h"

namespace tessera {

// Note [Variants]
// A PyTorch op comes in up to three forms: functional (`add.Tensor`), out= (`add.out`) and
// in-place (`add_.Tensor`). As in PyTorch's structured kernels, a backend implements one of
// them (usually out=) and the dispatcher derives the others on that backend's key:
//
//   functional <- out=        compute the call's plan (Note [Call plans]) on the real
//                             arguments for the outputs' shapes, strides and dtypes; allocate
//                             them on the device; run the out= kernel into them
//   out=       <- functional  compute the plan; run the functional kernel; check and resize
//                             `out`; copy_ into it
//   in-place   <- out=        check that the result fits self (same shape, castable dtype); run
//                             the out= kernel with self as the output
//   in-place   <- functional  the same check; run the functional kernel; copy_ into self
//
// A derived form is chosen only when the key has no kernel of its own for the op and the
// sibling has a real kernel there (not a composite, fallback or derivation), so derivations
// never call each other. A backend may still register any form itself; its own kernel wins.
// Before a backend's own out= kernel runs, the dispatcher checks and resizes the outputs
// exactly as the derivation does (PrepareOutputs), so out= kernels always receive outputs of
// the computed shape, on their device, of an allowed dtype. Resizing follows PyTorch: an out=
// tensor of another shape is resized (reallocated when its storage is too small); an in-place
// op never resizes self. Whatever backend kernel runs, directly or under a derivation, it gets
// the plan on its stack, and its results are then checked against the plan (Note [Kernel
// results] in kernel_results.cc).

namespace internal {
namespace {

constexpr int kMetaKey = static_cast<int>(DispatchKey::kMeta);

// KernelAt: the sibling form's kernel that may run now (AllowedKernel).
const KernelFunction* KernelAt(const OperatorEntry* entry, int key) {
  return AllowedKernel(entry, key);
}

size_t NumInputs(const OperatorEntry& functional) { return functional.schema.arguments.size(); }

// CheckResults checks what `kernel` of `callee` left on the stack before a derivation of
// `caller` indexes it: one defined tensor per return of `callee`. Dispatch checks the count of
// the outer op's results only after the derivation returns, and a backend's kernel (a
// plugin's) may leave anything.
absl::Status CheckResults(const OperatorEntry& caller, const OperatorEntry& callee,
                          const KernelFunction& kernel, const Stack& results) {
  const size_t expected = callee.schema.returns.size();
  if (ABSL_PREDICT_FALSE(results.size() != expected)) {
    return absl::InternalError(absl::StrFormat(
        "%s: kernel '%s' of %s left %d values on the stack, but %s returns %d", caller.name,
        kernel.name, callee.name, results.size(), callee.name, expected));
  }
  for (size_t i = 0; i < expected; ++i) {
    if (ABSL_PREDICT_FALSE(!results[i].is_tensor() || !results[i].tensor().defined())) {
      return absl::InternalError(absl::StrFormat(
          "%s: kernel '%s' of %s left %s as result %d, expected a Tensor", caller.name, kernel.name,
          callee.name,
          results[i].is_tensor() ? "an undefined tensor" : ValueKindName(results[i].kind()), i));
    }
  }
  return absl::OkStatus();
}

// PlanFromMeta: the plan of a call of `functional` read off its Meta kernel's results, for ops
// without a plan function. The arguments may be real tensors: meta functions read only shapes,
// dtypes and the other arguments.
absl::Status PlanFromMeta(const OperatorEntry& functional, const KernelFunction& meta,
                          const Stack& args, CallPlan* plan) {
  Stack stack;
  for (size_t i = 0; i < NumInputs(functional); ++i) stack.push_back(args[i]);
  TSR_RETURN_IF_ERROR(
      meta.Call(OperatorHandle::FromEntry(const_cast<OperatorEntry*>(&functional)), &stack));
  TSR_RETURN_IF_ERROR(CheckResults(functional, functional, meta, stack));
  plan->outputs.clear();
  for (const Value& v : stack) {
    const Tensor& t = v.tensor();
    plan->outputs.push_back(TensorSpec{DimVector(t.sizes().begin(), t.sizes().end()),
                                       DimVector(t.strides().begin(), t.strides().end()),
                                       t.dtype()});
  }
  return absl::OkStatus();
}

}  // namespace

template <typename Args>
absl::Status RequirePlan(const OperatorEntry& functional, const Args& args, CallPlan* plan) {
  TSR_RETURN_IF_ERROR(ComputePlan(functional, args, plan));
  if (ABSL_PREDICT_FALSE(!plan->has_outputs())) {
    return absl::InternalError(
        absl::StrFormat("%s: the op has no Meta function to size its outputs", functional.name));
  }
  return absl::OkStatus();
}
template absl::Status RequirePlan(const OperatorEntry&, const Stack&, CallPlan*);
template absl::Status RequirePlan(const OperatorEntry&, const UnboxedArgs&, CallPlan*);

namespace {

absl::Status CheckDtype(const OperatorEntry& op, const Argument& arg, const Tensor& out,
                        ScalarType computed) {
  if (op.out_dtype_rule == OutDtypeRule::kExact) {
    if (out.dtype() == computed) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: expected argument '%s' to have dtype %s (the dtype the op computes), got %s", op.name,
        arg.name, ScalarTypeName(computed), ScalarTypeName(out.dtype())));
  }
  if (CanCast(computed, out.dtype())) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: result type %s can't be cast to the desired output type %s (argument '%s')", op.name,
      ScalarTypeName(computed), ScalarTypeName(out.dtype()), arg.name));
}

// CheckOutput checks one out= output (a Value or an UnboxedArg) against the computed one and
// resizes it if needed.
template <typename V>
absl::Status CheckOutput(const OperatorEntry& op, size_t index, const V& out_value,
                         const TensorSpec& computed, Device device) {
  const Argument& arg = op.schema.arguments[index];
  if (!out_value.is_tensor()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: expected argument '%s' to be a tensor, got None", op.name, arg.name));
  }
  const Tensor& out = out_value.tensor();
  if (out.device() != device) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: expected argument '%s' on %s (the inputs' device), got a tensor on %s",
                        op.name, arg.name, DeviceToString(device), DeviceToString(out.device())));
  }
  TSR_RETURN_IF_ERROR(CheckDtype(op, arg, out, computed.dtype));
  if (!SameDims(out.sizes(), computed.sizes)) {
    TSR_RETURN_IF_ERROR(out.impl()->ResizeOutput(op.name, computed.sizes));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckInplace(const OperatorEntry& op, const Tensor& self, const TensorSpec& computed) {
  if (!SameDims(self.sizes(), computed.sizes)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: output with shape %s doesn't match the broadcast shape %s", op.name,
                        ShapeToString(self.sizes()), ShapeToString(computed.sizes)));
  }
  return CheckDtype(op, op.schema.arguments[0], self, computed.dtype);
}

namespace {

// CheckInplaceResult: the same check of a result a functional kernel computed.
absl::Status CheckInplaceResult(const OperatorEntry& op, const Tensor& self, const Tensor& result) {
  return CheckInplace(
      op, self,
      TensorSpec{DimVector(result.sizes().begin(), result.sizes().end()), {}, result.dtype()});
}

// The device of the op's outputs: that of its first tensor that is not a 0-dim CPU tensor, as
// the dispatch key is computed; else of its Device argument; else the CPU.
// `count` limits the search to the first values (an out= form's inputs).
template <typename Args>
Device OutputDevice(const Args& stack, size_t count = SIZE_MAX) {
  const Device cpu(DeviceType::kCPU, 0);
  std::optional<Device> device_arg;
  for (size_t i = 0; i < stack.size() && i < count; ++i) {
    const auto& v = stack[i];
    if (v.is_tensor() && v.tensor().defined()) {
      if (!(v.tensor().dim() == 0 && v.tensor().device() == cpu)) return v.tensor().device();
    } else if (v.is_device() && !device_arg) {
      device_arg = v.device();
    }
  }
  return device_arg.value_or(cpu);
}

// CallKernel runs `entry`'s kernel on `key` for a derivation of `caller`, with the plan in
// `call->plan` on its stack when it has outputs, and checks its results against `call` (Note
// [Kernel results]), so that the derivation may index them.
absl::Status CallKernel(const OperatorEntry& caller, const OperatorEntry& entry, int key,
                        KernelCall* call, Stack* stack) {
  // The slot as it is: the derivation was chosen through KernelAt (Note [Deterministic
  // algorithms]), and a mode switched since applies from the next call.
  const KernelFunction* kernel = entry.kernels[key].load(std::memory_order_acquire);
  if (kernel == nullptr) {
    return absl::InternalError(absl::StrFormat("%s: the kernel on %s went away during the call",
                                               entry.name,
                                               DispatchKeyName(static_cast<DispatchKey>(key))));
  }
  WarnIfNondeterministic(&entry.nondeterminism_warned, entry.name, *kernel);
  ReserveDraw(entry, *stack, &call->plan);
  if (kernel->packed != nullptr) return CallPacked(caller, entry, *kernel, call->plan, stack);
  RecordCall(entry, *stack, call);
  {
    PlanScope plan(stack, call->plan.is_empty() ? nullptr : &call->plan);
    TSR_RETURN_IF_ERROR(
        kernel->Call(OperatorHandle::FromEntry(const_cast<OperatorEntry*>(&entry)), stack));
  }
  return CheckKernelResults(caller, entry, *kernel, *call, *stack);
}

absl::Status CopyInto(const OperatorEntry& entry, const Tensor& dst, const Tensor& src) {
  OpRegistry& registry = *entry.registry;
  TSR_ASSIGN_OR_RETURN(OperatorHandle copy, registry.Find("copy_"));
  Stack stack{Value(dst), Value(src)};
  return registry.Call(copy, &stack);
}

absl::Status FunctionalFromOut(void*, const OperatorHandle& op, Stack* stack) {
  const OperatorEntry& entry = *op.entry();
  KernelCall call;
  TSR_RETURN_IF_ERROR(RequirePlan(entry, *stack, &call.plan));
  const Device device = call.plan.device;
  for (const TensorSpec& spec : call.plan.outputs) {
    TSR_ASSIGN_OR_RETURN(Tensor out, EmptyStrided(spec.sizes, spec.strides, spec.dtype, device));
    stack->push_back(std::move(out));
  }
  return CallKernel(entry, *entry.out, static_cast<int>(DispatchKeyFor(device.type)), &call, stack);
}

absl::Status OutFromFunctional(void*, const OperatorHandle& op, Stack* stack) {
  const OperatorEntry& entry = *op.entry();
  const OperatorEntry& functional = *entry.functional;
  const size_t inputs = NumInputs(functional);
  // The plan checks the arguments before the functional kernel sees them (without it,
  // linear.out of a 0-dim input crashed the CPU plugin; found by fuzz/op_call_fuzzer.cc), and
  // sizes what it must return.
  KernelCall call;
  TSR_RETURN_IF_ERROR(ComputePlan(functional, *stack, &call.plan));
  const Device device = call.plan.device;
  Stack result;
  for (size_t i = 0; i < inputs; ++i) result.push_back((*stack)[i]);
  TSR_RETURN_IF_ERROR(
      CallKernel(entry, functional, static_cast<int>(DispatchKeyFor(device.type)), &call, &result));
  Stack outs;
  for (size_t j = 0; j < result.size(); ++j) {
    const Tensor& r = result[j].tensor();
    TSR_RETURN_IF_ERROR(CheckOutput(
        entry, inputs + j, (*stack)[inputs + j],
        TensorSpec{DimVector(r.sizes().begin(), r.sizes().end()), {}, r.dtype()}, device));
    TSR_RETURN_IF_ERROR(CopyInto(entry, (*stack)[inputs + j].tensor(), result[j].tensor()));
    outs.push_back((*stack)[inputs + j]);
  }
  *stack = std::move(outs);
  return absl::OkStatus();
}

absl::Status InplaceFromOut(void*, const OperatorHandle& op, Stack* stack) {
  const OperatorEntry& entry = *op.entry();
  KernelCall call;
  TSR_RETURN_IF_ERROR(RequirePlan(*entry.functional, *stack, &call.plan));
  Tensor self = (*stack)[0].tensor();  // the out= argument: one more reference, moved in below
  TSR_RETURN_IF_ERROR(CheckInplace(entry, self, call.plan.outputs[0]));
  const int key = static_cast<int>(DispatchKeyFor(self.device().type));
  stack->push_back(std::move(self));
  return CallKernel(entry, *entry.out, key, &call, stack);
}

absl::Status InplaceFromFunctional(void*, const OperatorHandle& op, Stack* stack) {
  const OperatorEntry& entry = *op.entry();
  const Tensor self = (*stack)[0].tensor();
  KernelCall call;
  TSR_RETURN_IF_ERROR(ComputePlan(*entry.functional, *stack, &call.plan));
  if (call.plan.has_outputs()) {
    TSR_RETURN_IF_ERROR(CheckInplace(entry, self, call.plan.outputs[0]));
  }
  TSR_RETURN_IF_ERROR(CallKernel(entry, *entry.functional,
                                 static_cast<int>(DispatchKeyFor(self.device().type)), &call,
                                 stack));
  TSR_RETURN_IF_ERROR(CheckInplaceResult(entry, self, (*stack)[0].tensor()));
  TSR_RETURN_IF_ERROR(CopyInto(entry, self, (*stack)[0].tensor()));
  stack->clear();
  stack->push_back(self);
  return absl::OkStatus();
}

KernelFunction Derivation(BoxedKernelFn fn, const char* name) {
  KernelFunction k;
  k.fn = fn;
  k.name = name;
  return k;
}

}  // namespace

const KernelFunction* DerivedKernel(const OperatorEntry& entry, int key) {
  static const KernelFunction kFunctionalFromOut =
      Derivation(&FunctionalFromOut, "derived::functional_from_out");
  static const KernelFunction kOutFromFunctional =
      Derivation(&OutFromFunctional, "derived::out_from_functional");
  static const KernelFunction kInplaceFromOut =
      Derivation(&InplaceFromOut, "derived::inplace_from_out");
  static const KernelFunction kInplaceFromFunctional =
      Derivation(&InplaceFromFunctional, "derived::inplace_from_functional");
  switch (entry.variant) {
    case VariantKind::kFunctional:
      return KernelAt(entry.out, key) ? &kFunctionalFromOut : nullptr;
    case VariantKind::kOut:
      return KernelAt(entry.functional, key) ? &kOutFromFunctional : nullptr;
    case VariantKind::kInplace:
      if (KernelAt(entry.out, key)) return &kInplaceFromOut;
      return KernelAt(entry.functional, key) ? &kInplaceFromFunctional : nullptr;
    case VariantKind::kNone:
      break;
  }
  return nullptr;
}

bool DerivedThroughCopy(const OperatorEntry& entry, int key) {
  if (KernelAt(&entry, key) != nullptr) return false;  // the form's own kernel runs
  const KernelFunction* derived = DerivedKernel(entry, key);
  return derived != nullptr &&
         (derived->fn == &OutFromFunctional || derived->fn == &InplaceFromFunctional);
}

namespace {

template <typename Args>
absl::Status PrepareOutputs(const OperatorEntry& out_entry, const Args& args, CallPlan* plan) {
  const OperatorEntry& functional = *out_entry.functional;
  TSR_RETURN_IF_ERROR(ComputePlan(functional, args, plan));
  const size_t inputs = NumInputs(functional);
  for (size_t j = 0; j < plan->outputs.size(); ++j) {
    TSR_RETURN_IF_ERROR(
        CheckOutput(out_entry, inputs + j, args[inputs + j], plan->outputs[j], plan->device));
  }
  return absl::OkStatus();
}

}  // namespace

// ReserveDraw gives a random op's plan its draw (Note [Random numbers] in core/generator.h):
// from the generator the call passes, or else the default generator of the call's device. The
// callers run it once per kernel call, after every check of the call, so that a refused call
// draws nothing.
void ReserveDraw(const OperatorEntry& entry, const Stack& args, CallPlan* plan) {
  if (ABSL_PREDICT_TRUE(entry.generator_argument < 0)) return;
  const size_t g = static_cast<size_t>(entry.generator_argument);
  const Value& given = g < args.size() ? args[g] : Value();
  // The device is the plan's where it has outputs; an op without a Meta function has none.
  const Device device = plan->has_outputs() ? plan->device : OutputDevice(args, NumInputs(entry));
  const GeneratorRef generator = given.is_generator() ? given.generator() : DefaultGenerator(device);
  plan->rng = generator->Reserve();
}

template <typename Args>
absl::Status ComputePlan(const OperatorEntry& functional, const Args& args, CallPlan* plan) {
  // The device matters only to a plan with outputs: an op without either costs nothing here.
  const OperatorHandle op = OperatorHandle::FromEntry(const_cast<OperatorEntry*>(&functional));
  const PlanFunction* f = functional.plan.load(std::memory_order_acquire);
  if constexpr (std::is_same_v<Args, UnboxedArgs>) {
    // The fast path takes only ops with an unboxed plan function (OpRegistry::CallUnboxed).
    if (ABSL_PREDICT_FALSE(f == nullptr || f->unboxed == nullptr)) {
      return absl::InternalError(absl::StrFormat(
          "%s: an unboxed call of an op without an unboxed plan function", functional.name));
    }
    if (ABSL_PREDICT_FALSE(functional.generator_argument >= 0)) {  // Note [Random numbers]
      return absl::InternalError(absl::StrFormat(
          "%s: an unboxed call of a random op (its draw is reserved on the boxed path only)",
          functional.name));
    }
    plan->device = OutputDevice(args, NumInputs(functional));
    return f->unboxed(f->context, op, args, plan);
  } else {
    if (f != nullptr) {
      plan->device = OutputDevice(args, NumInputs(functional));
      TSR_RETURN_IF_ERROR(f->fn(f->context, op, args, plan));
    } else if (const KernelFunction* meta = KernelAt(&functional, kMetaKey)) {
      plan->device = OutputDevice(args, NumInputs(functional));
      TSR_RETURN_IF_ERROR(PlanFromMeta(functional, *meta, args, plan));
    }
    return absl::OkStatus();
  }
}

template <typename Args>
absl::Status ValidateCall(const OperatorEntry& entry, const Args& args, CallPlan* plan) {
  switch (entry.variant) {
    case VariantKind::kOut:
      return PrepareOutputs(entry, args, plan);
    case VariantKind::kInplace: {
      TSR_RETURN_IF_ERROR(RequirePlan(*entry.functional, args, plan));
      return CheckInplace(entry, args[0].tensor(), plan->outputs[0]);
    }
    case VariantKind::kFunctional:
    case VariantKind::kNone:
      return ComputePlan(entry, args, plan);
  }
  return absl::OkStatus();
}

template absl::Status ComputePlan(const OperatorEntry&, const Stack&, CallPlan*);
template absl::Status ComputePlan(const OperatorEntry&, const UnboxedArgs&, CallPlan*);
template absl::Status ValidateCall(const OperatorEntry&, const Stack&, CallPlan*);
template absl::Status ValidateCall(const OperatorEntry&, const UnboxedArgs&, CallPlan*);

}  // namespace internal

namespace {

// The schemas of the out= and in-place forms, generated from the functional one.
FunctionSchema OutSchema(const FunctionSchema& functional, const OperatorName& name) {
  FunctionSchema out = functional;
  out.name = name.name;
  out.overload = name.overload;
  for (size_t j = 0; j < functional.returns.size(); ++j) {
    const Argument& ret = functional.returns[j];
    AliasInfo alias{std::string(1, static_cast<char>('a' + j)), /*is_write=*/true};
    Argument arg;
    arg.name = functional.returns.size() == 1 ? "out" : ret.name;
    arg.type = ret.type;
    arg.alias = alias;
    arg.kwarg_only = true;
    out.arguments.push_back(std::move(arg));
    out.returns[j].alias = alias;
  }
  return out;
}

// GivenOutSchema: the out= form's schema as its caller wrote it, for ops whose out arguments
// PyTorch names itself (native_layer_norm.out's out0, out1, out2; max_pool2d_with_indices.out's
// out, indices), which the generated one cannot know when the functional returns are unnamed.
// It must be the generated schema but for the out arguments' names and alias sets: the
// functional's arguments unchanged, then one keyword-only written tensor per return, each
// return aliasing its out argument, in sets no other argument uses.
absl::StatusOr<FunctionSchema> GivenOutSchema(const FunctionSchema& functional,
                                              std::string_view text) {
  TSR_ASSIGN_OR_RETURN(FunctionSchema given, ParseSchema(text));
  const FunctionSchema generated =
      OutSchema(functional, OperatorName{given.ns, given.name, given.overload});
  const size_t inputs = functional.arguments.size();
  auto refuse = [&](const std::string& what) {
    return absl::InvalidArgumentError(
        absl::StrFormat("define_variants: %s is not an out= form of %s: %s; expected the form of "
                        "%s",
                        given.FullName(), functional.FullName(), what, generated.ToString()));
  };
  if (given.ns != functional.ns || given.name != functional.name ||
      given.arguments.size() != generated.arguments.size() ||
      given.returns.size() != generated.returns.size()) {
    return refuse("another name or another number of arguments or returns");
  }
  for (size_t i = 0; i < inputs; ++i) {
    if (given.arguments[i].ToString() != functional.arguments[i].ToString()) {
      return refuse(absl::StrFormat("argument %d is '%s', the functional form's '%s'", i,
                                    given.arguments[i].ToString(),
                                    functional.arguments[i].ToString()));
    }
  }
  for (size_t j = 0; j < given.returns.size(); ++j) {
    const Argument& out = given.arguments[inputs + j];
    const Argument& ret = given.returns[j];
    if (!(out.type == generated.arguments[inputs + j].type) || !out.kwarg_only || !out.alias ||
        !out.alias->is_write || out.default_value || !(ret.type == out.type) ||
        !(ret.alias == out.alias)) {
      return refuse(absl::StrFormat(
          "out argument '%s' must be a keyword-only written tensor that return %d aliases",
          out.name, j));
    }
    for (size_t i = 0; i < given.arguments.size(); ++i) {
      const std::optional<AliasInfo>& other = given.arguments[i].alias;
      if (i != inputs + j && other && other->set == out.alias->set) {
        return refuse(absl::StrFormat("out argument '%s' shares alias set '%s' with '%s'", out.name,
                                      out.alias->set, given.arguments[i].name));
      }
    }
  }
  return given;
}

FunctionSchema InplaceSchema(const FunctionSchema& functional, const OperatorName& name) {
  FunctionSchema inplace = functional;
  inplace.name = name.name;
  inplace.overload = name.overload;
  const AliasInfo alias{"a", /*is_write=*/true};
  inplace.arguments[0].alias = alias;
  inplace.returns.resize(1);
  inplace.returns[0].name.clear();
  inplace.returns[0].alias = alias;
  return inplace;
}

}  // namespace

absl::Status OpRegistry::DefineVariants(std::string_view functional_name, std::string_view out_name,
                                        std::string_view inplace_name, OutDtypeRule rule,
                                        OutputAliasing aliasing) {
  TSR_ASSIGN_OR_RETURN(internal::OperatorEntry * functional, FindEntry(functional_name));
  const FunctionSchema& schema = functional->schema;
  for (const Argument& ret : schema.returns) {
    if (ret.type.base != BaseType::kTensor || ret.type.is_list || ret.alias) {
      return absl::InvalidArgumentError(
          absl::StrFormat("define_variants: %s must return fresh tensors only to have an out= form",
                          schema.FullName()));
    }
  }
  FunctionSchema out_schema;
  if (out_name.find('(') != std::string_view::npos) {
    TSR_ASSIGN_OR_RETURN(out_schema, GivenOutSchema(schema, out_name));
  } else {
    TSR_ASSIGN_OR_RETURN(OperatorName out_op, ParseOperatorName(out_name));
    out_schema = OutSchema(schema, out_op);
  }
  TSR_ASSIGN_OR_RETURN(RegistrationHandle out_def, Define(out_schema.ToString()));
  TSR_ASSIGN_OR_RETURN(internal::OperatorEntry * out, FindEntry(out_schema.FullName()));
  internal::OperatorEntry* inplace = nullptr;
  RegistrationHandle inplace_def;
  if (!inplace_name.empty()) {
    if (schema.arguments.empty() || schema.arguments[0].type.base != BaseType::kTensor ||
        schema.returns.size() != 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "define_variants: %s needs a Tensor first argument and one return to have an in-place "
          "form",
          schema.FullName()));
    }
    TSR_ASSIGN_OR_RETURN(OperatorName inplace_op, ParseOperatorName(inplace_name));
    TSR_ASSIGN_OR_RETURN(inplace_def, Define(InplaceSchema(schema, inplace_op).ToString()));
    TSR_ASSIGN_OR_RETURN(inplace, FindEntry(inplace_name));
  }
  absl::MutexLock lock(&mu_);
  for (internal::OperatorEntry* e : {functional, out, inplace}) {
    if (e == nullptr) continue;
    e->functional = functional;
    e->out = out;
    e->inplace = inplace;
    e->out_dtype_rule = rule;
    e->output_aliasing = aliasing;
  }
  functional->variant = VariantKind::kFunctional;
  out->variant = VariantKind::kOut;
  if (inplace != nullptr) inplace->variant = VariantKind::kInplace;
  out_def.KeepForever();
  inplace_def.KeepForever();
  return absl::OkStatus();
}

absl::Status OpRegistry::SetOutputAliasing(std::string_view op, OutputAliasing aliasing) {
  TSR_ASSIGN_OR_RETURN(internal::OperatorEntry * entry, FindEntry(op));
  absl::MutexLock lock(&mu_);
  entry->output_aliasing = aliasing;
  return absl::OkStatus();
}

}  // namespace tessera

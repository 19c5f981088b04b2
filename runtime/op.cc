// The C ABI's ops, stacks and registrations over dispatcher/op_registry.h.
#include "tessera/c/op.h"

#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_format.h"
#include "dispatcher/unboxed_call.h"
#include "runtime/call_recorder.h"
#include "runtime/handles.h"
#include "runtime/runtime_state.h"
#include "runtime/unboxed_decode.h"
#include "runtime/values.h"

using namespace tessera;        // NOLINT: this file only implements the C entry points
using namespace tessera::capi;  // NOLINT

namespace {

// tsr_stack_kind hands out Value::Kind as a tsr_value_kind.
constexpr bool SameKind(tsr_value_kind c, Value::Kind kind) {
  return static_cast<int>(c) == static_cast<int>(kind);
}
static_assert(SameKind(TSR_VALUE_NONE, Value::Kind::kNone) &&
                  SameKind(TSR_VALUE_TENSOR, Value::Kind::kTensor) &&
                  SameKind(TSR_VALUE_INT, Value::Kind::kInt) &&
                  SameKind(TSR_VALUE_DOUBLE, Value::Kind::kDouble) &&
                  SameKind(TSR_VALUE_BOOL, Value::Kind::kBool) &&
                  SameKind(TSR_VALUE_STRING, Value::Kind::kString) &&
                  SameKind(TSR_VALUE_INT_LIST, Value::Kind::kIntList) &&
                  SameKind(TSR_VALUE_DOUBLE_LIST, Value::Kind::kDoubleList) &&
                  SameKind(TSR_VALUE_BOOL_LIST, Value::Kind::kBoolList) &&
                  SameKind(TSR_VALUE_TENSOR_LIST, Value::Kind::kTensorList) &&
                  SameKind(TSR_VALUE_SCALAR, Value::Kind::kScalar) &&
                  SameKind(TSR_VALUE_DTYPE, Value::Kind::kScalarType) &&
                  SameKind(TSR_VALUE_DEVICE, Value::Kind::kDevice) &&
                  SameKind(TSR_VALUE_DEFAULT, Value::Kind::kDefault) &&
                  SameKind(TSR_VALUE_NAME, Value::Kind::kName) &&
                  SameKind(TSR_VALUE_GENERATOR, Value::Kind::kGenerator),
              "tsr_value_kind must equal Value::Kind (dispatcher/value.h)");

tsr_error* Invalid(std::string message) {
  return MakeError(absl::StatusCode::kInvalidArgument, std::move(message));
}

tsr_error* CheckStack(const tsr_stack* stack, const char* fn) {
  return stack ? nullptr : Invalid(absl::StrFormat("%s: expected a stack, got NULL", fn));
}

// Push appends one value; the stack may be a kernel's (then it is the dispatcher's Stack).
template <typename V>
tsr_error* Push(tsr_stack* stack, const char* fn, V&& value) {
  return Guard(fn, [&]() -> tsr_error* {
    if (tsr_error* e = CheckStack(stack, fn)) return e;
    Unwrap(stack)->push_back(Value(std::forward<V>(value)));
    return nullptr;
  });
}

// PushC appends the value a tsr_value stands for (the conversions and their checks are the
// packed calls', values.h).
tsr_error* PushC(tsr_stack* stack, const char* fn, const tsr_value& value) {
  return Guard(fn, [&]() -> tsr_error* {
    if (tsr_error* e = CheckStack(stack, fn)) return e;
    return ToError(AppendFromC(value, fn, /*index=*/-1, Unwrap(stack)));
  });
}

tsr_value CValue(tsr_value_kind kind) {
  tsr_value c;
  std::memset(&c, 0, sizeof c);
  c.kind = kind;
  return c;
}

// StoreReturn writes return `r`'s value in place: a tensor's (the reference handed to the
// caller) or None. Not built aside and copied in: that copy read the value back with wider
// loads than its kind was stored with, which the processor cannot forward from the store, a
// stall on the return of every small call.
void StoreReturn(tsr_value* out, Tensor t) {
  std::memset(out, 0, sizeof *out);
  if (t.defined()) {
    out->kind = TSR_VALUE_TENSOR;
    out->u.tensor = Wrap(std::move(t));
  } else {
    out->kind = TSR_VALUE_NONE;
  }
}

tsr_value CList(tsr_value_kind kind, const void* data, size_t n) {
  tsr_value c = CValue(kind);
  c.u.list.data = data;
  c.u.list.size = n;
  return c;
}

// At returns value `index` of the expected kind, or an error naming both kinds. `dest` is the
// caller's output pointer (for lists, the values pointer): NULL is an error, as everywhere in
// the ABI, rather than a write through NULL.
tsr_error* At(const tsr_stack* stack, size_t index, Value::Kind kind, const char* fn,
              const void* dest, const Value** out) {
  if (tsr_error* e = CheckStack(stack, fn)) return e;
  if (dest == nullptr) {
    return Invalid(absl::StrFormat("%s: expected an output pointer, got NULL", fn));
  }
  const Stack& s = *Unwrap(stack);
  if (index >= s.size()) {
    return MakeError(absl::StatusCode::kOutOfRange,
                     absl::StrFormat("%s: index %d is out of range for a stack of %d values", fn,
                                     index, s.size()));
  }
  if (s[index].kind() != kind) {
    return Invalid(absl::StrFormat("%s: value %d is %s, expected %s", fn, index,
                                   ValueKindName(s[index].kind()), ValueKindName(kind)));
  }
  *out = &s[index];
  return nullptr;
}

// WarnDeprecatedOnce logs the first call of a deprecated op (docs/op_schema_policy.md).
void WarnDeprecatedOnce(const OperatorHandle& op) {
  if (!op.TakeDeprecationWarning()) return;
  const std::string message =
      op.deprecation()->Message(op.name()) + " (logged at its first call through tsr_op_call only)";
  RuntimeApi().log(TSR_LOG_WARNING, tsr_string{message.data(), message.size()});
}

}  // namespace

namespace tessera {
namespace capi {

tsr_error* FindOp(tsr_string name, const tsr_op** out) {
  return Guard("tsr_op_find", [&]() -> tsr_error* {
    if (out == nullptr) return Invalid("tsr_op_find: expected an output pointer, got NULL");
    *out = nullptr;
    absl::StatusOr<std::string_view> text = ReadString(name, "tsr_op_find", "the op name");
    if (!text.ok()) return ToError(text.status());
    absl::StatusOr<OperatorHandle> op = OpRegistry::Global().Find(*text);
    if (!op.ok()) return ToError(op.status());
    *out = Wrap(*op);
    return nullptr;
  });
}

}  // namespace capi
}  // namespace tessera

extern "C" {

tsr_error* tsr_op_find(tsr_string name, const tsr_op** out) {
  return Guard(__func__, [&]() -> tsr_error* {
    if (out == nullptr) return Invalid("tsr_op_find: expected an output pointer, got NULL");
    *out = nullptr;
    EnsureDefaultPluginsLoaded();
    return FindOp(name, out);
  });
}

tsr_string tsr_op_name(const tsr_op* op) {
  if (op == nullptr) return tsr_string{"", 0};
  const std::string& name = Unwrap(op).name();
  return tsr_string{name.data(), name.size()};
}

tsr_string tsr_op_schema(const tsr_op* op) {
  if (op == nullptr) return tsr_string{"", 0};
  const std::string& text = Unwrap(op).schema_text();
  return tsr_string{text.data(), text.size()};
}

tsr_error* tsr_op_call(const tsr_op* op, tsr_stack* stack) {
  return Guard(__func__, [&]() -> tsr_error* {
    if (op == nullptr) return Invalid("tsr_op_call: expected an op, got NULL");
    if (tsr_error* e = CheckStack(stack, "tsr_op_call")) return e;
    const OperatorHandle handle = Unwrap(op);
    if (ABSL_PREDICT_FALSE(handle.deprecation() != nullptr)) WarnDeprecatedOnce(handle);
    Stack* s = Unwrap(stack);
    // Recorded calls take the boxed path, where they are recorded (runtime/call_recorder.h).
    if (ABSL_PREDICT_FALSE(CallsRecorded())) return ToError(CallRecorded(handle, s));
    if (UnboxedPathEnabled() && handle.may_call_unboxed()) {
      UnboxedArgs args;
      UnboxedReturns returns;
      bool taken = false;
      if (DecodeStack(handle.schema(), *s, &args)) {
        absl::Status status = handle.registry().CallUnboxed(handle, &args, &returns, &taken);
        if (taken) {
          if (!status.ok()) return ToError(status);
          s->clear();  // the arguments borrowed from it are not read again
          for (size_t r = 0; r < returns.size; ++r) s->emplace_back(std::move(returns.tensors[r]));
          return nullptr;
        }
      }
    }
    return ToError(handle.registry().Call(handle, s));
  });
}

// Note [Packed calls]
// tsr_op_call makes an application pay a table call per argument pushed, one to read each
// return and one to clear the stack: for a 1-element add about as much as the dispatcher's own
// work. tsr_op_call_values takes every argument in one array and hands the returns back in
// another, building the dispatcher's Stack on this frame; tensors cross as borrowed handles in
// and new references out, so no value is copied twice. The op's returns are checked against
// the caller's array before anything runs, so an op is never run for returns that cannot be
// handed back. Kernels see no difference: the dispatcher gets the same bound Stack.
tsr_error* tsr_op_call_values(const tsr_op* op, const tsr_value* args, size_t num_args,
                              tsr_value* returns, size_t capacity, size_t* num_returns) {
  return Guard(__func__, [&]() -> tsr_error* {
    constexpr const char* fn = "tsr_op_call_values";
    if (num_returns != nullptr) *num_returns = 0;
    if (op == nullptr) return Invalid("tsr_op_call_values: expected an op, got NULL");
    if (args == nullptr && num_args > 0) {
      return Invalid(
          absl::StrFormat("%s: expected an array of %d argument values, got NULL", fn, num_args));
    }
    if (returns == nullptr && capacity > 0) {
      return Invalid(
          absl::StrFormat("%s: expected room for %d returns, got NULL returns", fn, capacity));
    }
    const OperatorHandle handle = Unwrap(op);
    const FunctionSchema& schema = handle.schema();
    const std::vector<Argument>& schema_returns = schema.returns;
    if (capacity < schema_returns.size()) {
      return Invalid(
          absl::StrFormat("%s: %s returns %d values, expected room for them, got a "
                          "capacity of %d",
                          fn, handle.name(), schema_returns.size(), capacity));
    }
    if (const int r = handle.first_borrowing_return(); ABSL_PREDICT_FALSE(r >= 0)) {
      return Invalid(absl::StrFormat(
          "%s: %s returns %s (return %d), which a tsr_value cannot hand back; call it through "
          "tsr_op_call",
          fn, handle.name(), schema_returns[r].type.ToString(), r));
    }
    // Recorded calls take the boxed path, where they are recorded (runtime/call_recorder.h).
    if (UnboxedPathEnabled() && handle.may_call_unboxed() && !CallsRecorded()) {
      UnboxedArgs unboxed;
      UnboxedReturns results;
      bool taken = false;
      if (DecodeValues(schema, args, num_args, &unboxed)) {
        if (ABSL_PREDICT_FALSE(handle.deprecation() != nullptr)) WarnDeprecatedOnce(handle);
        absl::Status status = handle.registry().CallUnboxed(handle, &unboxed, &results, &taken);
        if (taken) {
          if (!status.ok()) return ToError(status);
          for (size_t r = 0; r < results.size; ++r) {
            StoreReturn(&returns[r], std::move(results.tensors[r]));
          }
          if (num_returns != nullptr) *num_returns = results.size;
          return nullptr;
        }
      }
    }
    Stack stack;
    for (size_t i = 0; i < num_args; ++i) {
      if (absl::Status s = AppendFromC(args[i], fn, static_cast<int64_t>(i), &stack); !s.ok()) {
        const std::vector<Argument>& params = schema.arguments;
        return ToError(absl::Status(
            s.code(),
            absl::StrFormat("%s (%s takes %s)", s.message(), handle.name(),
                            i < params.size() ? "'" + params[i].ToString() + "' there"
                                              : absl::StrCat(params.size(), " arguments"))));
      }
    }
    if (ABSL_PREDICT_FALSE(handle.deprecation() != nullptr)) WarnDeprecatedOnce(handle);
    if (absl::Status s = ABSL_PREDICT_FALSE(CallsRecorded())
                             ? CallRecorded(handle, &stack)
                             : handle.registry().Call(handle, &stack);
        !s.ok()) {
      return ToError(s);
    }
    if (ABSL_PREDICT_FALSE(stack.size() != schema_returns.size())) {  // Dispatch checked it
      return MakeError(absl::StatusCode::kInternal,
                       absl::StrFormat("%s: %s left %d returns, its schema has %d", fn,
                                       handle.name(), stack.size(), schema_returns.size()));
    }
    // A string or list would borrow from this frame's stack. The schema check above refuses ops
    // that return one, so only a kernel that left another kind than its schema's reaches this
    // (the dispatcher checks composites', fallbacks' and Meta kernels' results by count only).
    for (size_t r = 0; r < stack.size(); ++r) {
      const Value& v = stack[r];
      if (ABSL_PREDICT_FALSE(v.is_string() || v.is_int_list() || v.is_tensor_list() ||
                             v.kind() == Value::Kind::kDoubleList ||
                             v.kind() == Value::Kind::kBoolList || v.is_binding_marker())) {
        return MakeError(absl::StatusCode::kInternal,
                         absl::StrFormat("%s: %s left %s as return %d, where the schema has %s", fn,
                                         handle.name(), ValueKindName(v.kind()), r,
                                         schema_returns[r].type.ToString()));
      }
    }
    for (size_t r = 0; r < stack.size(); ++r) {
      Value& v = stack[r];
      if (v.is_tensor() && v.tensor().defined()) {
        StoreReturn(&returns[r], std::move(v.tensor()));  // the stack's reference, handed on
      } else {
        returns[r] = ValueToC(v);  // ints, doubles, bools, Scalars, dtypes, devices, None
      }
    }
    if (num_returns != nullptr) *num_returns = stack.size();
    return nullptr;
  });
}

tsr_error* tsr_op_define(tsr_string schema, tsr_registration** out) {
  return Guard(__func__, [&]() -> tsr_error* {
    if (out) *out = nullptr;
    absl::StatusOr<std::string_view> text = ReadString(schema, "tsr_op_define", "the schema");
    if (!text.ok()) return ToError(text.status());
    absl::StatusOr<RegistrationHandle> handle = OpRegistry::Global().Define(*text);
    if (!handle.ok()) return ToError(handle.status());
    if (PluginRecord* plugin = LoadingPlugin()) {
      // Its kernels for this op may have any device type (Note [What a plugin may register]).
      absl::StatusOr<FunctionSchema> parsed = ParseSchema(*text);
      absl::StatusOr<OperatorHandle> op =
          parsed.ok() ? OpRegistry::Global().Find(parsed->FullName()) : parsed.status();
      if (op.ok()) plugin->defined_ops.insert(op->entry());
    }
    return HandOut(*std::move(handle), out);
  });
}

void tsr_registration_release(tsr_registration* registration) {
  if (registration == nullptr) return;
  registration->handle->Reset();
  delete registration;
}

tsr_error* tsr_stack_create(tsr_stack** out) {
  return Guard(__func__, [&]() -> tsr_error* {
    if (out == nullptr) return Invalid("tsr_stack_create: expected an output pointer, got NULL");
    *out = Wrap(new Stack());
    return nullptr;
  });
}

void tsr_stack_release(tsr_stack* stack) { delete Unwrap(stack); }

size_t tsr_stack_size(const tsr_stack* stack) { return stack ? Unwrap(stack)->size() : 0; }

void tsr_stack_clear(tsr_stack* stack) {
  if (stack) Unwrap(stack)->clear();
}

tsr_value_kind tsr_stack_kind(const tsr_stack* stack, size_t index) {
  if (stack == nullptr || index >= Unwrap(stack)->size()) return TSR_VALUE_NONE;
  return static_cast<tsr_value_kind>((*Unwrap(stack))[index].kind());
}

tsr_error* tsr_stack_push_none(tsr_stack* stack) { return Push(stack, __func__, std::nullopt); }

tsr_error* tsr_stack_push_tensor(tsr_stack* stack, tsr_tensor* tensor) {
  if (tensor == nullptr) {
    return Invalid(
        "tsr_stack_push_tensor: expected a tensor, got NULL (push None with "
        "tsr_stack_push_none)");
  }
  return Push(stack, __func__, Borrow(tensor));
}

tsr_error* tsr_stack_push_int(tsr_stack* stack, int64_t value) {
  return Push(stack, __func__, value);
}
tsr_error* tsr_stack_push_double(tsr_stack* stack, double value) {
  return Push(stack, __func__, value);
}
tsr_error* tsr_stack_push_bool(tsr_stack* stack, int32_t value) {
  return Push(stack, __func__, value != 0);
}
tsr_error* tsr_stack_push_string(tsr_stack* stack, tsr_string value) {
  tsr_value c = CValue(TSR_VALUE_STRING);
  c.u.string = value;
  return PushC(stack, __func__, c);
}
tsr_error* tsr_stack_push_int_list(tsr_stack* stack, const int64_t* values, size_t n) {
  return PushC(stack, __func__, CList(TSR_VALUE_INT_LIST, values, n));
}
tsr_error* tsr_stack_push_double_list(tsr_stack* stack, const double* values, size_t n) {
  return PushC(stack, __func__, CList(TSR_VALUE_DOUBLE_LIST, values, n));
}
tsr_error* tsr_stack_push_tensor_list(tsr_stack* stack, tsr_tensor* const* tensors, size_t n) {
  return PushC(stack, __func__, CList(TSR_VALUE_TENSOR_LIST, tensors, n));
}
tsr_error* tsr_stack_push_scalar(tsr_stack* stack, tsr_scalar value) {
  tsr_value c = CValue(TSR_VALUE_SCALAR);
  c.u.scalar = value;
  return PushC(stack, __func__, c);
}
tsr_error* tsr_stack_push_dtype(tsr_stack* stack, tsr_dtype value) {
  tsr_value c = CValue(TSR_VALUE_DTYPE);
  c.u.dtype = RawEnum(value);
  return PushC(stack, __func__, c);
}
tsr_error* tsr_stack_push_device(tsr_stack* stack, tsr_device value) {
  tsr_value c = CValue(TSR_VALUE_DEVICE);
  c.u.device = value;
  return PushC(stack, __func__, c);
}
tsr_error* tsr_stack_push_bool_list(tsr_stack* stack, const uint8_t* values, size_t n) {
  return PushC(stack, __func__, CList(TSR_VALUE_BOOL_LIST, values, n));
}

tsr_error* tsr_stack_push_default(tsr_stack* stack) {
  return Push(stack, __func__, DefaultArgument{});
}

tsr_error* tsr_stack_name_next(tsr_stack* stack, tsr_string name) {
  return Guard(__func__, [&]() -> tsr_error* {
    constexpr const char* fn = "tsr_stack_name_next";
    if (tsr_error* e = CheckStack(stack, fn)) return e;
    absl::StatusOr<std::string_view> text = ReadString(name, fn, "the argument name");
    if (!text.ok()) return ToError(text.status());
    if (text->empty()) {
      return Invalid("tsr_stack_name_next: expected an argument name, got an empty string");
    }
    const Stack& s = *Unwrap(stack);
    if (!s.empty() && s.back().kind() == Value::Kind::kName) {
      return Invalid(absl::StrFormat(
          "tsr_stack_name_next: expected a value for argument '%s' before the next name "
          "('%s'), got a name right after it",
          s.back().argument_name(), *text));
    }
    return Push(stack, fn, ArgumentName{std::string(*text)});
  });
}

tsr_error* tsr_stack_get_tensor(const tsr_stack* stack, size_t index, tsr_tensor** out) {
  const Value* v;
  if (tsr_error* e = At(stack, index, Value::Kind::kTensor, __func__, out, &v)) return e;
  *out = reinterpret_cast<tsr_tensor*>(v->tensor().impl());
  return nullptr;
}
tsr_error* tsr_stack_get_int(const tsr_stack* stack, size_t index, int64_t* out) {
  const Value* v;
  if (tsr_error* e = At(stack, index, Value::Kind::kInt, __func__, out, &v)) return e;
  *out = v->to_int();
  return nullptr;
}
tsr_error* tsr_stack_get_double(const tsr_stack* stack, size_t index, double* out) {
  const Value* v;
  if (tsr_error* e = At(stack, index, Value::Kind::kDouble, __func__, out, &v)) return e;
  *out = v->to_double();
  return nullptr;
}
tsr_error* tsr_stack_get_bool(const tsr_stack* stack, size_t index, int32_t* out) {
  const Value* v;
  if (tsr_error* e = At(stack, index, Value::Kind::kBool, __func__, out, &v)) return e;
  *out = v->to_bool() ? 1 : 0;
  return nullptr;
}
tsr_error* tsr_stack_get_string(const tsr_stack* stack, size_t index, tsr_string* out) {
  const Value* v;
  if (tsr_error* e = At(stack, index, Value::Kind::kString, __func__, out, &v)) return e;
  *out = tsr_string{v->string().data(), v->string().size()};
  return nullptr;
}
tsr_error* tsr_stack_get_int_list(const tsr_stack* stack, size_t index, const int64_t** values,
                                  size_t* n) {
  const Value* v;
  if (tsr_error* e = At(stack, index, Value::Kind::kIntList, __func__, values, &v)) return e;
  if (n == nullptr) return Invalid("tsr_stack_get_int_list: expected a count pointer, got NULL");
  *values = v->int_list().data();
  *n = v->int_list().size();
  return nullptr;
}
tsr_error* tsr_stack_get_double_list(const tsr_stack* stack, size_t index, const double** values,
                                     size_t* n) {
  const Value* v;
  if (tsr_error* e = At(stack, index, Value::Kind::kDoubleList, __func__, values, &v)) return e;
  if (n == nullptr) return Invalid("tsr_stack_get_double_list: expected a count pointer, got NULL");
  *values = v->double_list().data();
  *n = v->double_list().size();
  return nullptr;
}
tsr_error* tsr_stack_get_tensor_list(const tsr_stack* stack, size_t index,
                                     tsr_tensor* const** tensors, size_t* n) {
  const Value* v;
  if (tsr_error* e = At(stack, index, Value::Kind::kTensorList, __func__, tensors, &v)) return e;
  if (n == nullptr) return Invalid("tsr_stack_get_tensor_list: expected a count pointer, got NULL");
  *tensors = reinterpret_cast<tsr_tensor* const*>(v->tensor_list().data());
  *n = v->tensor_list().size();
  return nullptr;
}
tsr_error* tsr_stack_get_scalar(const tsr_stack* stack, size_t index, tsr_scalar* out) {
  const Value* v;
  if (tsr_error* e = At(stack, index, Value::Kind::kScalar, __func__, out, &v)) return e;
  *out = ToC(v->scalar());
  return nullptr;
}
tsr_error* tsr_stack_get_dtype(const tsr_stack* stack, size_t index, tsr_dtype* out) {
  const Value* v;
  if (tsr_error* e = At(stack, index, Value::Kind::kScalarType, __func__, out, &v)) return e;
  *out = static_cast<tsr_dtype>(v->scalar_type());
  return nullptr;
}
tsr_error* tsr_stack_get_device(const tsr_stack* stack, size_t index, tsr_device* out) {
  const Value* v;
  if (tsr_error* e = At(stack, index, Value::Kind::kDevice, __func__, out, &v)) return e;
  *out = tsr_device{static_cast<int32_t>(v->device().type), v->device().index};
  return nullptr;
}
tsr_error* tsr_stack_get_bool_list(const tsr_stack* stack, size_t index, const uint8_t** values,
                                   size_t* n) {
  const Value* v;
  if (tsr_error* e = At(stack, index, Value::Kind::kBoolList, __func__, values, &v)) return e;
  if (n == nullptr) return Invalid("tsr_stack_get_bool_list: expected a count pointer, got NULL");
  *values = v->bool_list().data();
  *n = v->bool_list().size();
  return nullptr;
}

}  // extern "C"

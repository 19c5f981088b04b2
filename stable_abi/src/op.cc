// The C ABI's ops, stacks and registrations over dispatcher/op_registry.h.
#include "tessera/c/op.h"

#include <memory>
#include <string>

#include "absl/strings/str_format.h"
#include "dispatcher/internal/operator_entry.h"
#include "stable_abi/src/handles.h"
#include "stable_abi/src/runtime_state.h"

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
                  SameKind(TSR_VALUE_NAME, Value::Kind::kName),
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
void WarnDeprecatedOnce(internal::OperatorEntry& entry) {
  if (entry.deprecation_warned.exchange(true, std::memory_order_relaxed)) return;
  const OpDeprecation* d = entry.deprecation.load(std::memory_order_acquire);
  const std::string message =
      d->Message(entry.name) + " (logged at its first call through tsr_op_call only)";
  RuntimeApi().log(TSR_LOG_WARNING, tsr_string{message.data(), message.size()});
}

}  // namespace

namespace tessera {
namespace capi {

tsr_error* FindOp(tsr_string name, const tsr_op** out) {
  return Guard("tsr_op_find", [&]() -> tsr_error* {
    if (out == nullptr) return Invalid("tsr_op_find: expected an output pointer, got NULL");
    *out = nullptr;
    absl::StatusOr<OperatorHandle> op = OpRegistry::Global().Find(View(name));
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
  const std::string& text = Unwrap(op).entry()->schema_text;
  return tsr_string{text.data(), text.size()};
}

tsr_error* tsr_op_call(const tsr_op* op, tsr_stack* stack) {
  return Guard(__func__, [&]() -> tsr_error* {
    if (op == nullptr) return Invalid("tsr_op_call: expected an op, got NULL");
    if (tsr_error* e = CheckStack(stack, "tsr_op_call")) return e;
    const OperatorHandle handle = Unwrap(op);
    internal::OperatorEntry& entry = *handle.entry();
    if (ABSL_PREDICT_FALSE(entry.deprecation.load(std::memory_order_relaxed) != nullptr)) {
      WarnDeprecatedOnce(entry);
    }
    return ToError(handle.registry().Call(handle, Unwrap(stack)));
  });
}

tsr_error* tsr_op_define(tsr_string schema, tsr_registration** out) {
  return Guard(__func__, [&]() -> tsr_error* {
    if (out) *out = nullptr;
    absl::StatusOr<RegistrationHandle> handle = OpRegistry::Global().Define(View(schema));
    if (!handle.ok()) return ToError(handle.status());
    if (PluginRecord* plugin = LoadingPlugin()) {
      // Its kernels for this op may have any device type (Note [What a plugin may register]).
      absl::StatusOr<FunctionSchema> parsed = ParseSchema(View(schema));
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
  if (value.data == nullptr && value.size > 0) {
    return Invalid("tsr_stack_push_string: expected characters, got NULL");
  }
  return Push(stack, __func__, std::string(View(value)));
}
tsr_error* tsr_stack_push_int_list(tsr_stack* stack, const int64_t* values, size_t n) {
  if (values == nullptr && n > 0) return Invalid("tsr_stack_push_int_list: got NULL values");
  return Push(stack, __func__, IntList(values, values + n));
}
tsr_error* tsr_stack_push_double_list(tsr_stack* stack, const double* values, size_t n) {
  if (values == nullptr && n > 0) return Invalid("tsr_stack_push_double_list: got NULL values");
  return Push(stack, __func__, std::vector<double>(values, values + n));
}
tsr_error* tsr_stack_push_tensor_list(tsr_stack* stack, tsr_tensor* const* tensors, size_t n) {
  if (tensors == nullptr && n > 0) return Invalid("tsr_stack_push_tensor_list: got NULL tensors");
  return Guard(__func__, [&]() -> tsr_error* {
    std::vector<Tensor> list;
    list.reserve(n);
    for (size_t i = 0; i < n; ++i) list.push_back(tensors[i] ? Borrow(tensors[i]) : Tensor());
    return Push(stack, "tsr_stack_push_tensor_list", std::move(list));
  });
}
tsr_error* tsr_stack_push_scalar(tsr_stack* stack, tsr_scalar value) {
  switch (value.kind) {
    case TSR_SCALAR_BOOL:
      return Push(stack, __func__, Scalar(value.i != 0));
    case TSR_SCALAR_INT:
      return Push(stack, __func__, Scalar(value.i));
    case TSR_SCALAR_DOUBLE:
      return Push(stack, __func__, Scalar(value.d));
  }
  return Invalid(absl::StrFormat(
      "tsr_stack_push_scalar: expected a tsr_scalar_kind in [0, 3), got %d", value.kind));
}
tsr_error* tsr_stack_push_dtype(tsr_stack* stack, tsr_dtype value) {
  const int32_t raw = RawEnum(value);
  if (!IsValidScalarType(raw)) {
    return Invalid(absl::StrFormat("tsr_stack_push_dtype: expected a tsr_dtype in [0, %d), got %d",
                                   kNumScalarTypes, raw));
  }
  return Push(stack, __func__, static_cast<ScalarType>(raw));
}
tsr_error* tsr_stack_push_device(tsr_stack* stack, tsr_device value) {
  absl::StatusOr<Device> device = ToDevice(value, "tsr_stack_push_device");
  if (!device.ok()) return ToError(device.status());
  return Push(stack, __func__, *device);
}
tsr_error* tsr_stack_push_bool_list(tsr_stack* stack, const uint8_t* values, size_t n) {
  if (values == nullptr && n > 0) return Invalid("tsr_stack_push_bool_list: got NULL values");
  return Guard(__func__, [&]() -> tsr_error* {
    BoolList list(n);
    for (size_t i = 0; i < n; ++i) list[i] = values[i] != 0;
    return Push(stack, "tsr_stack_push_bool_list", std::move(list));
  });
}

tsr_error* tsr_stack_push_default(tsr_stack* stack) {
  return Push(stack, __func__, DefaultArgument{});
}

tsr_error* tsr_stack_name_next(tsr_stack* stack, tsr_string name) {
  return Guard(__func__, [&]() -> tsr_error* {
    constexpr const char* fn = "tsr_stack_name_next";
    if (tsr_error* e = CheckStack(stack, fn)) return e;
    if (name.data == nullptr || name.size == 0) {
      return Invalid("tsr_stack_name_next: expected an argument name, got an empty string");
    }
    const Stack& s = *Unwrap(stack);
    if (!s.empty() && s.back().kind() == Value::Kind::kName) {
      return Invalid(absl::StrFormat(
          "tsr_stack_name_next: expected a value for argument '%s' before the next name "
          "('%s'), got a name right after it",
          s.back().argument_name(), View(name)));
    }
    return Push(stack, fn, ArgumentName{std::string(View(name))});
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

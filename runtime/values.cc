// C values to and from the dispatcher's Values (values.h).
#include "runtime/values.h"

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "runtime/handles.h"

namespace tessera {
namespace capi {
namespace {

// "fn: argument <index>: message", or "fn: message" for index -1 (a stack push: one value).
absl::Status Invalid(const char* fn, int64_t index, const std::string& message) {
  if (index < 0) return absl::InvalidArgumentError(absl::StrFormat("%s: %s", fn, message));
  return absl::InvalidArgumentError(absl::StrFormat("%s: argument %d: %s", fn, index, message));
}

// A list's elements: NULL data is an error unless the list is empty.
template <typename T>
absl::StatusOr<const T*> ListData(const tsr_value& value, const char* fn, int64_t index) {
  if (value.u.list.data == nullptr && value.u.list.size > 0) {
    return Invalid(fn, index,
                   absl::StrFormat("got NULL values for a list of %d", value.u.list.size));
  }
  return static_cast<const T*>(value.u.list.data);
}

// Append constructs the value in place at the end of the stack (no Value to move).
template <typename T>
absl::Status Append(Stack* stack, T&& value) {
  stack->emplace_back(std::forward<T>(value));
  return absl::OkStatus();
}

}  // namespace

absl::Status AppendFromC(const tsr_value& value, const char* fn, int64_t index, Stack* stack) {
  const size_t n = value.u.list.size;
  switch (value.kind) {
    case TSR_VALUE_NONE:
      stack->emplace_back();
      return absl::OkStatus();
    case TSR_VALUE_TENSOR:
      if (value.u.tensor == nullptr) {
        return Invalid(fn, index, "expected a tensor, got NULL (pass None as TSR_VALUE_NONE)");
      }
      return Append(stack, Borrow(value.u.tensor));
    case TSR_VALUE_INT:
      return Append(stack, value.u.i);
    case TSR_VALUE_DOUBLE:
      return Append(stack, value.u.d);
    case TSR_VALUE_BOOL:
      return Append(stack, value.u.b != 0);
    case TSR_VALUE_STRING:
      if (value.u.string.data == nullptr && value.u.string.size > 0) {
        return Invalid(fn, index, "expected characters, got NULL");
      }
      if (value.u.string.size > kMaxCallerString) {
        return Invalid(fn, index,
                       absl::StrFormat("expected a string of at most %d bytes, got a size of %d "
                                       "(a wrong size? nothing of it was read)",
                                       kMaxCallerString, value.u.string.size));
      }
      return Append(stack, std::string(View(value.u.string)));
    case TSR_VALUE_INT_LIST: {
      absl::StatusOr<const int64_t*> data = ListData<int64_t>(value, fn, index);
      if (!data.ok()) return data.status();
      return Append(stack, IntList(*data, *data + n));
    }
    case TSR_VALUE_DOUBLE_LIST: {
      absl::StatusOr<const double*> data = ListData<double>(value, fn, index);
      if (!data.ok()) return data.status();
      return Append(stack, std::vector<double>(*data, *data + n));
    }
    case TSR_VALUE_BOOL_LIST: {
      absl::StatusOr<const uint8_t*> data = ListData<uint8_t>(value, fn, index);
      if (!data.ok()) return data.status();
      BoolList list(n);
      for (size_t i = 0; i < n; ++i) list[i] = (*data)[i] != 0;
      return Append(stack, std::move(list));
    }
    case TSR_VALUE_TENSOR_LIST: {
      absl::StatusOr<tsr_tensor* const*> data = ListData<tsr_tensor*>(value, fn, index);
      if (!data.ok()) return data.status();
      std::vector<Tensor> list;
      list.reserve(n);
      for (size_t i = 0; i < n; ++i) list.push_back((*data)[i] ? Borrow((*data)[i]) : Tensor());
      return Append(stack, std::move(list));
    }
    case TSR_VALUE_SCALAR:
      switch (value.u.scalar.kind) {
        case TSR_SCALAR_BOOL:
          return Append(stack, Scalar(value.u.scalar.i != 0));
        case TSR_SCALAR_INT:
          return Append(stack, Scalar(value.u.scalar.i));
        case TSR_SCALAR_DOUBLE:
          return Append(stack, Scalar(value.u.scalar.d));
      }
      return Invalid(
          fn, index,
          absl::StrFormat("expected a tsr_scalar_kind in [0, 3), got %d", value.u.scalar.kind));
    case TSR_VALUE_DTYPE:
      if (!IsValidScalarType(value.u.dtype)) {
        return Invalid(fn, index,
                       absl::StrFormat("expected a tsr_dtype in [0, %d), got %d", kNumScalarTypes,
                                       value.u.dtype));
      }
      return Append(stack, static_cast<ScalarType>(value.u.dtype));
    case TSR_VALUE_DEVICE: {
      absl::StatusOr<Device> device = ToDevice(value.u.device, fn);
      if (!device.ok()) return device.status();
      return Append(stack, *device);
    }
    case TSR_VALUE_DEFAULT:
      return Append(stack, DefaultArgument{});
    case TSR_VALUE_GENERATOR:
      if (value.u.generator == nullptr) {
        return Invalid(fn, index,
                       "expected a generator, got NULL (pass None as TSR_VALUE_NONE: the default "
                       "generator)");
      }
      return Append(stack, GeneratorRef::Share(reinterpret_cast<Generator*>(value.u.generator)));
    case TSR_VALUE_NAME:
      return Invalid(fn, index,
                     "TSR_VALUE_NAME is not a value of a packed call (its arguments are "
                     "positional; skip a defaulted one with TSR_VALUE_DEFAULT)");
  }
  return Invalid(fn, index,
                 absl::StrFormat("expected a tsr_value_kind in [0, %d), got %d",
                                 static_cast<int>(TSR_VALUE_GENERATOR) + 1, value.kind));
}

tsr_value ValueToC(const Value& value) {
  tsr_value c;
  std::memset(&c, 0, sizeof c);
  c.kind = static_cast<int32_t>(value.kind());
  switch (value.kind()) {
    case Value::Kind::kTensor:
      c.u.tensor = reinterpret_cast<tsr_tensor*>(value.tensor().impl());
      if (c.u.tensor == nullptr) c.kind = TSR_VALUE_NONE;
      break;
    case Value::Kind::kInt:
      c.u.i = value.to_int();
      break;
    case Value::Kind::kDouble:
      c.u.d = value.to_double();
      break;
    case Value::Kind::kBool:
      c.u.b = value.to_bool() ? 1 : 0;
      break;
    case Value::Kind::kString:
      c.u.string = tsr_string{value.string().data(), value.string().size()};
      break;
    case Value::Kind::kIntList:
      c.u.list.data = value.int_list().data();
      c.u.list.size = value.int_list().size();
      break;
    case Value::Kind::kDoubleList:
      c.u.list.data = value.double_list().data();
      c.u.list.size = value.double_list().size();
      break;
    case Value::Kind::kBoolList:
      c.u.list.data = value.bool_list().data();
      c.u.list.size = value.bool_list().size();
      break;
    case Value::Kind::kTensorList:
      c.u.list.data = value.tensor_list().data();  // a Tensor is one pointer (handles.h)
      c.u.list.size = value.tensor_list().size();
      break;
    case Value::Kind::kScalar:
      c.u.scalar = ToC(value.scalar());
      break;
    case Value::Kind::kScalarType:
      c.u.dtype = static_cast<int32_t>(value.scalar_type());
      break;
    case Value::Kind::kDevice:
      c.u.device = tsr_device{static_cast<int32_t>(value.device().type), value.device().index};
      break;
    case Value::Kind::kGenerator:
      c.u.generator = reinterpret_cast<tsr_generator*>(value.generator().get());
      break;
    case Value::Kind::kNone:
    case Value::Kind::kDefault:
    case Value::Kind::kName:
      break;
  }
  return c;
}

}  // namespace capi
}  // namespace tessera

#include "dispatcher/value.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tessera {

void Stack::Fill() const {
  uint8_t expected = kPending;
  if (fill_state_.compare_exchange_strong(expected, kFilling, std::memory_order_acquire)) {
    fill_(fill_source_, const_cast<Stack*>(this));
    fill_state_.store(kFilled, std::memory_order_release);
    return;
  }
  while (fill_state_.load(std::memory_order_acquire) != kFilled) std::this_thread::yield();
}

// Every kind but tensor lists, strings and long lists lives inside the Value (value.h).
static_assert(sizeof(Value) <= 48, "a Value stays small: Stack keeps 8 of them inline");

std::string_view ValueKindName(Value::Kind kind) {
  switch (kind) {
    case Value::Kind::kNone:
      return "None";
    case Value::Kind::kTensor:
      return "Tensor";
    case Value::Kind::kInt:
      return "int";
    case Value::Kind::kDouble:
      return "float";
    case Value::Kind::kBool:
      return "bool";
    case Value::Kind::kString:
      return "str";
    case Value::Kind::kIntList:
      return "int[]";
    case Value::Kind::kDoubleList:
      return "float[]";
    case Value::Kind::kBoolList:
      return "bool[]";
    case Value::Kind::kTensorList:
      return "Tensor[]";
    case Value::Kind::kScalar:
      return "Scalar";
    case Value::Kind::kScalarType:
      return "ScalarType";
    case Value::Kind::kDevice:
      return "Device";
    case Value::Kind::kDefault:
      return "default placeholder";
    case Value::Kind::kName:
      return "argument name";
    case Value::Kind::kGenerator:
      return "Generator";
  }
  return "<invalid value>";
}

std::string Value::ToString() const {
  switch (kind()) {
    case Kind::kNone:
      return "None";
    case Kind::kTensor:
      return absl::StrCat("Tensor(", tensor().ToString(), ")");
    case Kind::kInt:
      return absl::StrCat(to_int());
    case Kind::kDouble:
      return absl::StrCat(to_double());
    case Kind::kBool:
      return to_bool() ? "True" : "False";
    case Kind::kString:
      return absl::StrCat("'", string(), "'");
    case Kind::kIntList:
      return absl::StrCat("[", absl::StrJoin(int_list(), ", "), "]");
    case Kind::kDoubleList:
      return absl::StrCat("[", absl::StrJoin(double_list(), ", "), "]");
    case Kind::kBoolList: {
      std::string out = "[";
      for (size_t i = 0; i < bool_list().size(); ++i) {
        absl::StrAppend(&out, i ? ", " : "", bool_list()[i] ? "True" : "False");
      }
      return out + "]";
    }
    case Kind::kTensorList: {
      std::string out = "[";
      for (size_t i = 0; i < tensor_list().size(); ++i) {
        absl::StrAppend(&out, i ? ", " : "", tensor_list()[i].ToString());
      }
      return out + "]";
    }
    case Kind::kScalar:
      return scalar().ToString();
    case Kind::kScalarType:
      return std::string(ScalarTypeName(scalar_type()));
    case Kind::kDevice:
      return DeviceToString(device());
    case Kind::kDefault:
      return "<default>";
    case Kind::kName:
      return absl::StrCat("<name ", argument_name(), ">");
    case Kind::kGenerator: {
      const PhiloxState state = generator()->state();
      return absl::StrCat("Generator(seed=", state.seed, ", offset=", state.offset, ")");
    }
  }
  return "<invalid value>";
}

bool operator==(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::kTensor:
      return a.tensor().impl() == b.tensor().impl();  // identity, not element equality
    case Value::Kind::kTensorList: {
      const auto& x = a.tensor_list();
      const auto& y = b.tensor_list();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (x[i].impl() != y[i].impl()) return false;
      }
      return true;
    }
    case Value::Kind::kNone:
      return true;
    case Value::Kind::kInt:
      return a.to_int() == b.to_int();
    case Value::Kind::kDouble:
      return a.to_double() == b.to_double();
    case Value::Kind::kBool:
      return a.to_bool() == b.to_bool();
    case Value::Kind::kString:
      return a.string() == b.string();
    case Value::Kind::kIntList:
      return a.int_list() == b.int_list();
    case Value::Kind::kDoubleList:
      return a.double_list() == b.double_list();
    case Value::Kind::kBoolList:
      return a.bool_list() == b.bool_list();
    case Value::Kind::kScalar:
      return a.scalar() == b.scalar();
    case Value::Kind::kScalarType:
      return a.scalar_type() == b.scalar_type();
    case Value::Kind::kDevice:
      return a.device() == b.device();
    case Value::Kind::kDefault:
      return true;
    case Value::Kind::kName:
      return a.argument_name() == b.argument_name();
    case Value::Kind::kGenerator:
      return a.generator() == b.generator();  // identity
  }
  return false;
}

}  // namespace tessera

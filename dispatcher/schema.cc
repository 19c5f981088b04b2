#include "dispatcher/schema.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace tessera {
namespace {

std::string_view BaseTypeName(BaseType base) {
  switch (base) {
    case BaseType::kTensor:
      return "Tensor";
    case BaseType::kInt:
      return "int";
    case BaseType::kFloat:
      return "float";
    case BaseType::kBool:
      return "bool";
    case BaseType::kStr:
      return "str";
    case BaseType::kScalar:
      return "Scalar";
    case BaseType::kScalarType:
      return "ScalarType";
    case BaseType::kDevice:
      return "Device";
    case BaseType::kLayout:
      return "Layout";
    case BaseType::kMemoryFormat:
      return "MemoryFormat";
    case BaseType::kGenerator:
      return "Generator";
  }
  return "<invalid type>";
}

std::string DefaultToString(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kString:
      return absl::StrCat("'", v.string(), "'");
    case Value::Kind::kDouble: {
      std::string s = absl::StrCat(v.to_double());
      // Keep a float default recognisably a float when printed back ("1." not "1").
      if (s.find_first_of(".eEn") == std::string::npos) s += ".";
      return s;
    }
    default:
      return v.ToString();
  }
}

absl::Status Mismatch(const SchemaType& type, const Value& found) {
  std::string what(ValueKindName(found.kind()));
  if (found.is_tensor() && !found.tensor().defined()) what = "an undefined tensor";
  return absl::InvalidArgumentError(absl::StrFormat("expected %s, got %s", type.ToString(), what));
}

// NormalizeElement handles the non-list, non-None part of NormalizeArgumentValue.
absl::Status NormalizeElement(const SchemaType& type, Value* v) {
  switch (type.base) {
    case BaseType::kTensor:
      if (v->is_tensor() && v->tensor().defined()) return absl::OkStatus();
      break;
    case BaseType::kInt:
    case BaseType::kLayout:
    case BaseType::kMemoryFormat:
      if (v->is_int()) return absl::OkStatus();
      break;
    case BaseType::kFloat:
      if (v->is_double()) return absl::OkStatus();
      if (v->is_int()) {
        *v = Value(static_cast<double>(v->to_int()));
        return absl::OkStatus();
      }
      break;
    case BaseType::kBool:
      if (v->is_bool()) return absl::OkStatus();
      break;
    case BaseType::kStr:
      if (v->is_string()) return absl::OkStatus();
      break;
    case BaseType::kScalar:
      if (v->is_scalar()) return absl::OkStatus();
      if (v->is_int())
        *v = Value(Scalar(v->to_int()));
      else if (v->is_double())
        *v = Value(Scalar(v->to_double()));
      else if (v->is_bool())
        *v = Value(Scalar(v->to_bool()));
      if (v->is_scalar()) return absl::OkStatus();
      break;
    case BaseType::kScalarType:
      if (v->is_scalar_type()) {
        if (IsValidScalarType(static_cast<int>(v->scalar_type()))) return absl::OkStatus();
        return absl::InvalidArgumentError(
            absl::StrFormat("expected a ScalarType in [0, %d), got %d", kNumScalarTypes,
                            static_cast<int>(v->scalar_type())));
      }
      break;
    case BaseType::kDevice:
      if (v->is_device()) return absl::OkStatus();
      if (v->is_string()) {
        absl::StatusOr<Device> d = ParseDevice(v->string());
        if (!d.ok()) return d.status();
        *v = Value(*d);
        return absl::OkStatus();
      }
      break;
    case BaseType::kGenerator:
      break;  // Tessera has no generators yet: only None (handled by the caller) is valid
  }
  return Mismatch(type, *v);
}

}  // namespace

std::string SchemaType::ToString() const {
  std::string s(BaseTypeName(base));
  if (is_list) {
    if (element_optional) s += "?";
    s += list_size ? absl::StrCat("[", *list_size, "]") : "[]";
  }
  if (optional) s += "?";
  return s;
}

std::string Argument::ToString() const {
  std::string type_text(BaseTypeName(type.base));
  if (alias) absl::StrAppend(&type_text, "(", alias->set, alias->is_write ? "!" : "", ")");
  // The list and optional suffixes follow the alias annotation: `Tensor(a!)[]`.
  absl::StrAppend(&type_text, type.ToString().substr(BaseTypeName(type.base).size()));
  std::string s = type_text;
  if (!name.empty()) absl::StrAppend(&s, " ", name);
  if (default_value) absl::StrAppend(&s, "=", DefaultToString(*default_value));
  return s;
}

std::string FunctionSchema::FullName() const {
  std::string s = ns.empty() ? name : absl::StrCat(ns, "::", name);
  if (!overload.empty()) absl::StrAppend(&s, ".", overload);
  return s;
}

std::string FunctionSchema::ToString() const {
  std::string s = absl::StrCat(FullName(), "(");
  bool kwarg_marked = false;
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (i) s += ", ";
    if (arguments[i].kwarg_only && !kwarg_marked) {
      s += "*, ";
      kwarg_marked = true;
    }
    s += arguments[i].ToString();
  }
  s += ") -> ";
  if (returns.size() == 1 && returns[0].name.empty()) {
    s += returns[0].ToString();
  } else {
    s += "(";
    for (size_t i = 0; i < returns.size(); ++i)
      absl::StrAppend(&s, i ? ", " : "", returns[i].ToString());
    s += ")";
  }
  return s;
}

bool FunctionSchema::HasWrittenArgument() const {
  for (const Argument& a : arguments) {
    if (a.alias && a.alias->is_write) return true;
  }
  return false;
}

absl::Status NormalizeArgumentValue(const Argument& arg, Value* value) {
  const SchemaType& type = arg.type;
  if (value->is_tensor() && !value->tensor().defined() && type.optional && !type.is_list) {
    *value = Value();
  }
  if (value->is_none()) {
    if (type.optional || type.base == BaseType::kGenerator) return absl::OkStatus();
    return Mismatch(type, *value);
  }
  if (!type.is_list) return NormalizeElement(type, value);

  switch (type.base) {
    case BaseType::kInt:
      if (value->is_int_list()) return absl::OkStatus();
      if (value->is_int()) {  // `int[2] stride=1` means [1, 1]
        *value = Value(IntList(type.list_size.value_or(1), value->to_int()));
        return absl::OkStatus();
      }
      break;
    case BaseType::kFloat:
      if (value->kind() == Value::Kind::kDoubleList) return absl::OkStatus();
      if (value->is_int_list()) {
        const IntList& ints = value->int_list();
        *value = Value(std::vector<double>(ints.begin(), ints.end()));
        return absl::OkStatus();
      }
      break;
    case BaseType::kBool:
      if (value->kind() == Value::Kind::kBoolList) return absl::OkStatus();
      break;
    case BaseType::kTensor:
      if (value->is_tensor_list()) {
        if (type.element_optional) return absl::OkStatus();
        const std::vector<Tensor>& list = value->tensor_list();
        for (size_t i = 0; i < list.size(); ++i) {
          if (!list[i].defined()) {
            return absl::InvalidArgumentError(absl::StrFormat(
                "expected %s, got an undefined tensor at element %d", type.ToString(), i));
          }
        }
        return absl::OkStatus();
      }
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrFormat("lists of %s are not supported", BaseTypeName(type.base)));
  }
  return Mismatch(type, *value);
}

}  // namespace tessera

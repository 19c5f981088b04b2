#include "dispatcher/schema.h"

#include <charconv>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/layout.h"

namespace tessera {

// Note [Faithful schema text]
// The canonical text (FunctionSchema::ToString) is what OpRegistry::Define compares to decide
// whether two definitions are the same op, and what tsr_op_schema hands to plugins, so it must
// say exactly what the schema says: parsing it gives the same schema, field by field, and
// printing that gives the same text (a property test checks every registered op). Hence:
// strings are double-quoted with c10::printQuotedString's escapes (a quote inside a default
// cannot end it early and turn one argument into two); floats are printed with the fewest
// digits that read back to the same double (std::to_chars), with a '.' when they would look
// like ints, and nan/inf as the parser spells them; devices are quoted strings under their
// reserved names ("privateuseone:0", not a rename that may change); and the parser refuses a
// number it cannot read whole and exactly rather than saturating it or cutting it short.

// Note [Fixed-size list cap]
// For `int[N] x`, a bare int is accepted and expands to a list of N elements, on every call
// (PyTorch's `int[2] stride=1`). N is therefore an allocation a schema, i.e. a plugin, chooses
// for the runtime; `int[300000000]` would cost 2.4 GB per call. PyTorch's own schemas declare
// a handful (`int[2] stride`, `int[3] padding`), so the parser refuses N > kMaxFixedListSize (1024)
// when the op is defined. Every other allocation made from a schema is bounded by its text
// (arguments, defaults, the typed-kernel call interface) or by what the caller itself passed.

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

// QuotedString escapes as c10::printQuotedString does, but reads bytes as unsigned, so that
// bytes >= 0x80 print as valid octal escapes (PyTorch's signed char gets them wrong).
std::string QuotedString(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\'':
        out += "\\'";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\v':
        out += "\\v";
        break;
      default:
        if (c > 0x1f && c < 0x7f) {
          out += c;
        } else {
          const unsigned byte = static_cast<unsigned char>(c);
          out += '\\';
          out += static_cast<char>('0' + (byte >> 6));
          out += static_cast<char>('0' + ((byte >> 3) & 7));
          out += static_cast<char>('0' + (byte & 7));
        }
    }
  }
  return out + "\"";
}

// FloatToString: the shortest text that reads back to the same double, kept recognisably a
// float ("2." not "2", which would read back as an int).
std::string FloatToString(double d) {
  if (std::isnan(d)) return "nan";  // the parser knows no "-nan"; a NaN's sign is not kept
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buffer[64];
  const std::to_chars_result r = std::to_chars(buffer, buffer + sizeof(buffer), d);
  std::string s(buffer, r.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".";
  return s;
}

std::string DefaultToString(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kString:
      return QuotedString(v.string());
    case Value::Kind::kDouble:
      return FloatToString(v.to_double());
    case Value::Kind::kDoubleList:
      return absl::StrCat(
          "[",
          absl::StrJoin(v.double_list(), ", ",
                        [](std::string* out, double d) { out->append(FloatToString(d)); }),
          "]");
    case Value::Kind::kScalar:
      if (v.scalar().is_floating_point()) return FloatToString(v.scalar().to_double());
      return v.ToString();
    case Value::Kind::kScalarType:  // "dtype=long", as ATen writes it
      return std::string(ScalarTypeSchemaName(v.scalar_type()));
    case Value::Kind::kDevice: {
      // Reserved names read back under any renaming, so the text never depends on when it is
      // printed.
      static const DeviceNames* const reserved = new DeviceNames();
      return QuotedString(reserved->ToString(v.device()));
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
      if (v->is_int()) return absl::OkStatus();
      break;
    case BaseType::kLayout:
      if (v->is_int()) {
        if (IsValidLayout(v->to_int())) return absl::OkStatus();
        return absl::InvalidArgumentError(absl::StrFormat(
            "expected a Layout (0: strided, the only layout of Tessera's tensors), got %d",
            v->to_int()));
      }
      break;
    case BaseType::kMemoryFormat:
      if (v->is_int()) {
        if (IsValidMemoryFormat(v->to_int())) return absl::OkStatus();
        return absl::InvalidArgumentError(absl::StrFormat(
            "expected a MemoryFormat in [0, %d) (0: contiguous_format, 1: preserve_format, 2: "
            "channels_last, 3: channels_last_3d), got %d",
            kNumMemoryFormats, v->to_int()));
      }
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
      if (v->is_generator() && v->generator()) return absl::OkStatus();
      break;
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

#include "dispatcher/tools/cpp_ops_header.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "dispatcher/tools/calls_header.h"

namespace tessera::ops_lock {

namespace {

// CppType: the parameter type of one schema argument, or none where it has no C++ form here
// (a float[] that is not optional: no op of the op set takes one yet).
std::optional<std::string> CppType(const SchemaType& t) {
  auto optional = [&](const std::string& type) {
    return t.optional ? absl::StrCat("const std::optional<", type, ">&") : type;
  };
  if (t.is_list) {
    if (t.element_optional) {  // Tensor?[]: the only list with optional elements
      return t.optional ? std::nullopt
                        : std::optional<std::string>("const std::vector<std::optional<Tensor>>&");
    }
    switch (t.base) {
      case BaseType::kTensor:
        return t.optional ? std::nullopt : std::optional<std::string>("const std::vector<Tensor>&");
      case BaseType::kInt:
        return t.optional ? "const IntListOrNone&" : "const IntListArg&";
      case BaseType::kBool:
        return t.optional ? std::nullopt : std::optional<std::string>("const std::vector<bool>&");
      case BaseType::kFloat:  // upsample's scale_factors
        return t.optional ? std::optional<std::string>("const FloatListOrNone&") : std::nullopt;
      default:
        return std::nullopt;
    }
  }
  switch (t.base) {
    case BaseType::kTensor:
      return t.optional ? "const std::optional<Tensor>&" : "const Tensor&";
    case BaseType::kInt:
      return optional("int64_t");
    case BaseType::kFloat:
      return optional("double");
    case BaseType::kBool:
      return t.optional ? "const std::optional<bool>&" : "BoolArg";
    case BaseType::kStr:
      return t.optional ? "const std::optional<StringArg>&" : "StringArg";
    case BaseType::kScalar:
      return t.optional ? "const std::optional<Scalar>&" : "const Scalar&";
    case BaseType::kScalarType:
      return optional("tsr_dtype");
    case BaseType::kDevice:
      return optional("tsr_device");
    case BaseType::kLayout:
      return optional("tsr_layout");
    case BaseType::kMemoryFormat:
      return optional("tsr_memory_format");
    case BaseType::kGenerator:
      return t.optional ? "const std::optional<Generator>&" : "const Generator&";
  }
  return std::nullopt;
}

// Number: a finite double as a C++ literal (a default of inf or nan has no form here: CppDefault
// gives none, and the generator refuses the op's header rather than writing a broken one).
std::optional<std::string> Number(double v) {
  if (!std::isfinite(v)) return std::nullopt;
  std::string s = absl::StrFormat("%.17g", v);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

// CppDefault: the schema default of `arg` as a C++ default argument, or none where it has none
// that C++ can write.
std::optional<std::string> CppDefault(const Argument& arg) {
  if (!arg.default_value) return std::nullopt;
  const Value& v = *arg.default_value;
  if (v.is_none()) return std::string("std::nullopt");
  if (v.is_bool()) return std::string(v.to_bool() ? "true" : "false");
  if (v.is_int()) {
    if (arg.type.is_list) {  // int[2] stride=1: one value for every element
      const int64_t n = arg.type.list_size.value_or(1);
      return absl::StrCat("std::vector<int64_t>(", n, ", ", v.to_int(), ")");
    }
    if (arg.type.base == BaseType::kFloat) return Number(static_cast<double>(v.to_int()));
    if (arg.type.base == BaseType::kMemoryFormat) {  // contiguous_format and the like
      return absl::StrCat("static_cast<tsr_memory_format>(", v.to_int(), ")");
    }
    if (arg.type.base == BaseType::kLayout) {
      return absl::StrCat("static_cast<tsr_layout>(", v.to_int(), ")");
    }
    if (arg.type.base == BaseType::kScalar) return absl::StrCat("int64_t{", v.to_int(), "}");
    return absl::StrCat(v.to_int());
  }
  if (v.is_scalar_type()) {  // randint's dtype=long: the tsr_dtype of the same value
    return absl::StrCat("std::optional<tsr_dtype>(static_cast<tsr_dtype>(",
                        static_cast<int>(v.scalar_type()), "))");
  }
  if (v.is_double()) return Number(v.to_double());
  if (v.is_scalar()) {
    return v.scalar().is_floating_point() ? Number(v.scalar().to_double())
                                          : absl::StrCat("int64_t{", v.scalar().to_int(), "}");
  }
  if (v.is_int_list()) {
    return absl::StrCat("std::vector<int64_t>{", absl::StrJoin(v.int_list(), ", "), "}");
  }
  if (v.is_string()) {  // the schemas' strings are names ("none", "valid"): no escapes needed
    if (v.string().find_first_of("\"\\\n") != std::string::npos) return std::nullopt;
    return absl::StrCat("\"", v.string(), "\"");
  }
  return std::nullopt;
}

// Included: the functional and in-place ops; not the out= forms (written keyword arguments),
// which find_op and call reach.
bool Included(const FunctionSchema& s) {
  if (!s.ns.empty()) return false;
  for (const Argument& a : s.arguments) {
    if (a.kwarg_only && a.alias && a.alias->is_write) return false;
  }
  return true;
}

struct Function {
  std::string op;                     // "softmax.int"
  std::string name;                   // "softmax"
  std::vector<std::string> types;     // parameter types, for overload collisions
  std::vector<std::string> names;     // parameter names
  std::vector<std::string> args;      // what the call passes for each (a name, or int[N]'s Sized)
  std::vector<std::string> defaults;  // each parameter's C++ default, or ""
  std::string returns;                // C++ return type
  int tensors = 0;                    // tensor returns (1: call1; more: call_returns<N>)
  bool list = false;                  // a Tensor[] return
  bool host_value = false;  // one bool, int or Scalar return (equal, sym_size, item): call_value
};

// Build: the function for `s`, or the reason it has none.
std::optional<Function> Build(const FunctionSchema& s, std::string* why) {
  Function f;
  f.op = s.FullName();
  f.name = s.name;
  if (s.returns.empty()) {
    *why = "returns nothing";
    return std::nullopt;
  }
  // One bool, int or Scalar (equal, allclose, sym_size.int, sym_numel, item; SymInt and SymBool
  // parse as int and bool): the value, read back from the stack.
  const BaseType first = s.returns[0].type.base;
  const bool one_value =
      s.returns.size() == 1 && !s.returns[0].type.is_list && !s.returns[0].type.optional &&
      (first == BaseType::kBool || first == BaseType::kInt || first == BaseType::kScalar);
  f.host_value = one_value;
  for (const Argument& r : s.returns) {
    if (one_value) break;
    if (r.type.base != BaseType::kTensor || r.type.element_optional) {
      *why = "returns a value other than a tensor";
      return std::nullopt;
    }
    if (r.type.is_list) f.list = true;
  }
  if (f.list && s.returns.size() != 1) {
    *why = "returns a tensor list among other values";
    return std::nullopt;
  }
  f.tensors = one_value ? 0 : static_cast<int>(s.returns.size());
  if (one_value) {
    f.returns = first == BaseType::kBool ? "bool" : first == BaseType::kInt ? "int64_t" : "Scalar";
  } else if (f.list) {
    f.returns = "std::vector<Tensor>";
  } else if (f.tensors == 1) {
    f.returns = "Tensor";
  } else {
    std::vector<std::string> each(f.tensors, "Tensor");
    f.returns = absl::StrCat("std::tuple<", absl::StrJoin(each, ", "), ">");
  }
  for (const Argument& a : s.arguments) {
    const std::optional<std::string> type = CppType(a.type);
    if (!type) {
      *why = absl::StrCat("takes ", a.type.ToString(), " ", a.name, ", which has no C++ form yet");
      return std::nullopt;
    }
    std::string name = a.name;
    if (IsKeyword(name) || name == "op_") name += "_";  // op_: the function's own local
    f.types.push_back(*type);
    // An int[N] from one integer is N copies of it (IntListArg::Sized), as Python's API takes it.
    const bool sized = *type == "const IntListArg&" && a.type.list_size.value_or(1) > 1;
    f.args.push_back(sized ? absl::StrCat(name, ".Sized(", *a.type.list_size, ")") : name);
    f.names.push_back(std::move(name));
    const std::optional<std::string> default_text = CppDefault(a);
    if (a.default_value && !default_text) {
      *why = absl::StrCat("has a default for ", a.name, " that C++ cannot write here");
      return std::nullopt;
    }
    f.defaults.push_back(default_text.value_or(""));
  }
  return f;
}

// RequiredCount: how many leading parameters of `f` a call must pass when none before
// `first_default` may be left out (the rest that have defaults may).
size_t RequiredCount(const Function& f, size_t first_default) {
  size_t defaulted_from = f.types.size();
  while (defaulted_from > first_default && !f.defaults[defaulted_from - 1].empty()) {
    --defaulted_from;
  }
  return defaulted_from;
}

// Parameters: `f`'s parameters as C++ declares them, but for the one at `skip` (a method's
// self; npos: none); those from `defaulted_from` on with their defaults when `with_defaults`.
std::vector<std::string> Parameters(const Function& f, size_t skip, size_t defaulted_from,
                                    bool with_defaults) {
  std::vector<std::string> params;
  for (size_t i = 0; i < f.types.size(); ++i) {
    if (i == skip) continue;
    params.push_back(absl::StrCat(f.types[i], " ", f.names[i]));
    if (with_defaults && i >= defaulted_from) absl::StrAppend(&params.back(), " = ", f.defaults[i]);
  }
  return params;
}

// Signature: `head` + the parameters + `tail`, on one line when it fits in 100 columns, else
// one parameter a line, indented by `indent` + 4.
std::string Signature(const std::string& head, const std::vector<std::string>& params,
                      const std::string& tail, size_t indent) {
  const std::string one_line = absl::StrCat(head, absl::StrJoin(params, ", "), tail);
  if (one_line.size() <= 101 || params.empty()) return one_line;
  std::string out = head;
  for (size_t i = 0; i < params.size(); ++i) {
    absl::StrAppend(&out, "\n", std::string(indent + 4, ' '), params[i],
                    i + 1 < params.size() ? "," : tail);
  }
  return out;
}

// Declaration: `inline RET NAME(params) {`, wrapped at 100 columns. Parameters from
// `first_default` on get their defaults, where every later one has one too (C++'s rule).
std::string Declaration(const Function& f, const std::string& name, size_t first_default) {
  return Signature(absl::StrCat("inline ", f.returns, " ", name, "("),
                   Parameters(f, std::string::npos, RequiredCount(f, first_default), true),
                   ") {\n", 0);
}

size_t CommonPrefix(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

std::string Body(const Function& f) {
  const std::string find = absl::StrFormat("  static const tsr_op* op_ = find_op(\"%s\");\n", f.op);
  const std::string args =
      absl::StrCat("op_", f.args.empty() ? "" : ", ", absl::StrJoin(f.args, ", "));
  if (f.host_value) {
    return absl::StrCat(find, "  return internal::call_value<", f.returns, ">(", args, ");\n}\n");
  }
  if (f.list) return absl::StrCat(find, "  return call(", args, ");\n}\n");
  if (f.tensors == 1) return absl::StrCat(find, "  return call1(", args, ");\n}\n");
  return absl::StrCat(find, "  return internal::call_returns<", f.tensors, ">(", args, ");\n}\n");
}

// A Tensor method: the function `function` (ops.hpp's name for op `f`) with its `self` (the
// parameter at `self`) as the object, as ATen's methods are (`where.self`'s self is its second
// argument: `x.where(condition, y)`).
struct Method {
  Function f;
  std::string function;
  size_t self;
  size_t defaulted_from;  // the function's first parameter with a default
};

// kTensorMembers: sdk::Tensor's own members (tensor.hpp); a method of the same name is refused.
const std::set<std::string>& TensorMembers() {
  static const auto* names = new std::set<std::string>{
      "adopt", "borrow", "copy_from_host", "copy_to_host", "data", "data_ptr", "defined", "device",
      "dim", "dtype", "empty", "from_host", "from_host_memory", "from_vector", "get",
      "is_contiguous", "itemsize", "numel", "release", "size", "sizes", "storage_offset",
      "strides", "to_vector"};
  return *names;
}

// MethodDeclaration: `  inline RET NAME(params) const;` inside the class, without defaults
// (C++ lets a member function's out-of-class definition add them: ops.hpp's, so that the
// parameter types need only be declared where tensor.hpp declares the method).
std::string MethodDeclaration(const Method& m) {
  return Signature(absl::StrCat("  inline ", m.f.returns, " ", m.function, "("),
                   Parameters(m.f, m.self, m.defaulted_from, false), ") const;\n", 2);
}

// MethodDefinition: the method's definition in ops.hpp, with the defaults, calling the function.
std::string MethodDefinition(const Method& m) {
  std::vector<std::string> args = m.f.names;
  args[m.self] = "*this";
  return absl::StrCat(
      Signature(absl::StrCat("inline ", m.f.returns, " Tensor::", m.function, "("),
                Parameters(m.f, m.self, m.defaulted_from, true), ") const {\n", 0),
      "  return ops::", m.function, "(", absl::StrJoin(args, ", "), ");\n}\n");
}

constexpr char kPrologue[] = R"(#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

)";

// The generated header's one include, written as a string (not at the start of a line) so that
// tests/check_layers.py, which reads this file's #include lines, does not take the text it
// generates for a dependency of the dispatcher's.
constexpr char kRuntimeInclude[] = "#include \"tessera/sdk/runtime.hpp\"\n";

constexpr char kPrologueRest[] = R"(
namespace tessera {
namespace ops {

using sdk::Scalar;
using sdk::Tensor;

namespace internal {
// call_returns: an op's N tensor returns as a tuple; a None return (an output_mask's false
// entry) is an undefined Tensor.
template <size_t... I>
auto as_tuple(const std::vector<Tensor>& v, std::index_sequence<I...>) {
  return std::make_tuple(v[I]...);
}
template <size_t N, typename... Args>
auto call_returns(const tsr_op* op, const Args&... args) {
  const std::vector<Tensor> all = call(op, args...);
  if (all.size() != N) {
    throw sdk::Error(TSR_INTERNAL, std::string(sdk::from_c(sdk::api().op_name(op))) +
                                       ": expected " + std::to_string(N) + " returns, got " +
                                       std::to_string(all.size()));
  }
  return as_tuple(all, std::make_index_sequence<N>{});
}
// call_value: an op's one bool, int or Scalar return (equal, sym_size, item), read from the
// stack.
template <typename T, typename... Args>
T call_value(const tsr_op* op, const Args&... args) {
  ::tessera::internal::Stack stack;
  ::tessera::internal::Invoke(op, stack, args...);
  if constexpr (std::is_same_v<T, bool>) {
    int32_t b = 0;
    sdk::check(sdk::api().stack_get_bool(stack.get(), 0, &b));
    return b != 0;
  } else if constexpr (std::is_same_v<T, int64_t>) {
    int64_t v = 0;
    sdk::check(sdk::api().stack_get_int(stack.get(), 0, &v));
    return v;
  } else {
    Scalar v;
    sdk::check(sdk::api().stack_get_scalar(stack.get(), 0, &v.c));
    return v;
  }
}
}  // namespace internal

)";

constexpr char kEpilogue[] = R"(
}  // namespace ops

namespace sdk {  // beside Tensor, so that argument-dependent lookup finds them
inline Tensor operator/(const Tensor& a, const Tensor& b) { return ops::div(a, b); }
inline Tensor operator+(const Tensor& a, const Scalar& b) { return ops::add(a, b); }
inline Tensor operator-(const Tensor& a, const Scalar& b) { return ops::sub(a, b); }
inline Tensor operator*(const Tensor& a, const Scalar& b) { return ops::mul(a, b); }
inline Tensor operator/(const Tensor& a, const Scalar& b) { return ops::div(a, b); }
inline Tensor operator*(const Scalar& a, const Tensor& b) { return ops::mul(b, a); }
inline Tensor operator+(const Scalar& a, const Tensor& b) { return ops::add(b, a); }
// As PyTorch's __rsub__ and __rtruediv__: a - b is -b + a, a / b is reciprocal(b) * a.
inline Tensor operator-(const Scalar& a, const Tensor& b) { return ops::add(ops::neg(b), a); }
inline Tensor operator/(const Scalar& a, const Tensor& b) {
  return ops::mul(ops::reciprocal(b), a);
}
// In place, as PyTorch's: the in-place ops on a's elements (a is a handle; it stays a).
inline Tensor& operator+=(Tensor& a, const Tensor& b) { ops::add_(a, b); return a; }
inline Tensor& operator-=(Tensor& a, const Tensor& b) { ops::sub_(a, b); return a; }
inline Tensor& operator*=(Tensor& a, const Tensor& b) { ops::mul_(a, b); return a; }
inline Tensor& operator/=(Tensor& a, const Tensor& b) { ops::div_(a, b); return a; }
inline Tensor& operator+=(Tensor& a, const Scalar& b) { ops::add_(a, b); return a; }
inline Tensor& operator-=(Tensor& a, const Scalar& b) { ops::sub_(a, b); return a; }
inline Tensor& operator*=(Tensor& a, const Scalar& b) { ops::mul_(a, b); return a; }
inline Tensor& operator/=(Tensor& a, const Scalar& b) { ops::div_(a, b); return a; }
)";

constexpr char kMethodsPrologue[] = R"(
// The Tensor methods declared in tessera/sdk/tensor_methods.inc: each calls its function above
// with the tensor as its `self`, and the function's defaults are the method's.
)";

constexpr char kEpilogueEnd[] = R"(}  // namespace sdk
}  // namespace tessera
)";

}  // namespace

absl::StatusOr<std::set<std::string>> ParseTensorMethods(std::string_view text,
                                                         std::string_view name) {
  std::set<std::string> out;
  int line_number = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (line.empty() || line[0] == '#') continue;
    if (line.find_first_of(" \t(") != std::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s:%d: expected one op name (\"add.Tensor\"), found \"%s\"", name, line_number, line));
    }
    if (!out.emplace(line).second) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s:%d: %s is listed twice", name, line_number, line));
    }
  }
  return out;
}

absl::StatusOr<CppOps> GenerateCppOps(const Lock& lock, std::string_view lock_name,
                                      const std::set<std::string>& methods) {
  const std::optional<OpSetVersion> newest = lock.Newest();
  if (!newest) return absl::FailedPreconditionError("the lock records no op set");
  for (const std::string& name : methods) {
    if (lock.ops.count(name) == 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s names the method %s, which is no op of %s", kTensorMethodsList, name, lock_name));
    }
  }
  std::string out = absl::StrFormat(
      "// Generated by `tessera_ops_lock --sdk-ops` from %s: do not edit.\n"
      "// The ops of op set %s as C++ functions (dispatcher/tools/cpp_ops_header.h says how):\n"
      "//\n"
      "//   #include \"tessera/sdk/ops.hpp\"\n"
      "//   Tensor y = tessera::ops::softmax(x, 1);\n"
      "//   Tensor z = tessera::ops::conv2d(x, w, {}, {2, 2}, {1, 1});  // {} for None\n"
      "//   Tensor v = x.view({2, -1}).relu_();  // Tensor methods\n"
      "//\n"
      "// Each finds its op by name on its first call (an op the runtime does not define is an\n"
      "// error then) and calls it as tessera::call1 does. Out= forms, and ops whose arguments or\n"
      "// returns have no C++ form here (listed at the end, if any), are reached through find_op.\n",
      lock_name, newest->ToString());
  absl::StrAppend(&out, kPrologue, kRuntimeInclude, kPrologueRest);
  // Overloads of one name, in the lock's order (the default overload first): a later one whose
  // parameter types start as an earlier one's does takes no default up to the first parameter
  // that tells them apart, so that a call that leaves arguments out never matches both (as
  // ATen's C++ API does: conv2d's 'padding' overload needs its padding); one whose types are
  // an earlier one's, or their beginning, gets the overload's name appended instead. Only a
  // call the earlier one also takes can match both: where the earlier one needs more
  // arguments than the types they share, the later keeps its defaults (bernoulli_.Tensor's p
  // is required, so bernoulli_.float's p keeps its 0.5 and `bernoulli_(t)` still compiles).
  // A method has its function's parameters but self, so its overloads are told apart alike.
  struct Taken {
    std::vector<std::string> types;
    size_t required;  // parameters a call must pass
  };
  std::map<std::string, std::vector<Taken>> taken;
  std::vector<std::string> skipped;
  std::vector<Method> tensor_methods;
  for (const auto& [name, history] : lock.ops) {
    const FunctionSchema& s = history.back().schema;
    if (!Included(s)) {
      if (methods.count(name) != 0) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s names the method %s, which gets no C++ function (%s)",
                            kTensorMethodsList, name,
                            s.ns.empty() ? "an out= form" : "an op of another namespace"));
      }
      continue;
    }
    std::string why;
    std::optional<Function> f = Build(s, &why);
    if (!f) {
      if (methods.count(name) != 0) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s names the method %s, which gets no C++ function (it %s)",
                            kTensorMethodsList, name, why));
      }
      skipped.push_back(absl::StrCat(name, ": ", why));
      continue;
    }
    std::string function = f->name;
    size_t shared = 0;  // the most leading types shared with an earlier overload
    size_t prefix = 0;  // parameters that take no default
    for (const Taken& earlier : taken[function]) {
      const size_t common = CommonPrefix(f->types, earlier.types);
      shared = std::max(shared, common);
      // The parameter that tells them apart is required too.
      if (earlier.required <= common) prefix = std::max(prefix, common + 1);
    }
    if (!taken[function].empty() && shared == f->types.size()) {
      function = MangleOpName(name);
      prefix = 0;
    }
    const size_t required = RequiredCount(*f, prefix);
    taken[function].push_back({f->types, required});
    absl::StrAppend(&out, "// ", s.ToString(), "\n", Declaration(*f, function, prefix), Body(*f),
                    "\n");
    if (methods.count(name) == 0) continue;
    const auto self = std::find(f->names.begin(), f->names.end(), "self");
    if (self == f->names.end() || f->types[self - f->names.begin()] != "const Tensor&") {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s names the method %s, whose schema has no 'Tensor self'", kTensorMethodsList, name));
    }
    if (TensorMembers().count(function) != 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s names the method %s, whose name is sdk::Tensor's own member %s",
                          kTensorMethodsList, name, function));
    }
    const size_t self_index = static_cast<size_t>(self - f->names.begin());
    tensor_methods.push_back({*std::move(f), function, self_index, required});
  }
  if (!skipped.empty()) {
    absl::StrAppend(&out, "// Not here (find_op and call reach them):\n");
    for (const std::string& s : skipped) absl::StrAppend(&out, "//   ", s, "\n");
  }
  absl::StrAppend(&out, kEpilogue, kMethodsPrologue);
  std::string inc = absl::StrFormat(
      "// Generated by `tessera_ops_lock --sdk-ops` from %s\n"
      "// and dispatcher/%s: do not edit.\n"
      "// Inside sdk::Tensor (tensor.hpp): the ops ATen offers as Tensor methods, declared;\n"
      "// tessera/sdk/ops.hpp defines them, with their defaults (include it to call one).\n",
      lock_name, kTensorMethodsList);
  for (const Method& m : tensor_methods) {
    absl::StrAppend(&inc, MethodDeclaration(m));
    absl::StrAppend(&out, "\n", MethodDefinition(m));
  }
  absl::StrAppend(&out, kEpilogueEnd);
  return CppOps{std::move(out), std::move(inc)};
}

}  // namespace tessera::ops_lock

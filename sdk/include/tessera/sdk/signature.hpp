// Checking a typed C++ kernel's parameters against its op's schema.
//
// A typed kernel is called with one C++ parameter per schema argument, read from the stack by
// position (boxing.hpp), so a kernel whose parameters do not follow the schema would read the
// wrong values or fail at its first call. The SDK checks it before that:
//   - at compile time, when the op is named with TESSERA_OP("add.Tensor") and is in the op set
//     the SDK was built with (tessera/opset/opset.h): a mismatch is a static_assert;
//   - at registration, for any op (a plugin's own ops too), against the runtime's op listing
//     (ABI 1.1; skipped on a 1.0 runtime, which has no listing): a mismatch refuses the plugin's
//     load with a message naming the parameter, the C++ type and the schema argument.
//
// The mapping (the same as ArgReader's):
//   Tensor -> sdk::Tensor, or sdk::TensorView (borrowed; all views of a call in one table call)
//   int, SymInt, Layout, MemoryFormat -> int64_t   float -> double
//   bool -> bool   str -> std::string_view   Scalar -> sdk::Scalar   ScalarType -> tsr_dtype
//   Device -> tsr_device   int[], int[N], SymInt[] -> sdk::IntSpan   T? -> std::optional<...>
//   bool[], bool[N] -> sdk::BoolSpan (needs a 1.1 runtime: a 1.0 one makes the read throw)
//   Generator? -> sdk::RandomDraw (the call's draw, random.hpp; a random op needs a 1.2 runtime)
// Other types (Tensor[], float[]) need a boxed kernel. Returns: none ->
// void, one -> sdk::Tensor, several -> std::tuple of sdk::Tensor; sdk::TensorView in place of
// a Tensor for a return that is an argument (an out= or in-place op's `Tensor(a!)`). A first
// parameter `const sdk::KernelContext&` (boxing.hpp) is not a schema argument: it is skipped.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "tessera/c/op.h"
#include "tessera/sdk/boxing.hpp"
#include "tessera/sdk/type_name.hpp"

namespace tessera {
namespace sdk {
namespace signature {

// ArgKind: what a stack slot holds (a tsr_value_kind; -1: no typed C++ mapping) and whether
// None is accepted.
struct ArgKind {
  int kind = -1;
  bool optional = false;
  constexpr bool operator==(const ArgKind& o) const {
    return kind == o.kind && optional == o.optional;
  }
};

template <typename T>
struct ParamKind {
  static constexpr ArgKind value{-1, false};
};
template <>
struct ParamKind<Tensor> {
  static constexpr ArgKind value{TSR_VALUE_TENSOR, false};
};
template <>
struct ParamKind<TensorView> {
  static constexpr ArgKind value{TSR_VALUE_TENSOR, false};
};
template <>
struct ParamKind<int64_t> {
  static constexpr ArgKind value{TSR_VALUE_INT, false};
};
template <>
struct ParamKind<double> {
  static constexpr ArgKind value{TSR_VALUE_DOUBLE, false};
};
template <>
struct ParamKind<bool> {
  static constexpr ArgKind value{TSR_VALUE_BOOL, false};
};
template <>
struct ParamKind<std::string_view> {
  static constexpr ArgKind value{TSR_VALUE_STRING, false};
};
template <>
struct ParamKind<Scalar> {
  static constexpr ArgKind value{TSR_VALUE_SCALAR, false};
};
template <>
struct ParamKind<IntSpan> {
  static constexpr ArgKind value{TSR_VALUE_INT_LIST, false};
};
template <>
struct ParamKind<BoolSpan> {
  static constexpr ArgKind value{TSR_VALUE_BOOL_LIST, false};
};
template <>
struct ParamKind<tsr_dtype> {
  static constexpr ArgKind value{TSR_VALUE_DTYPE, false};
};
template <>
struct ParamKind<tsr_device> {
  static constexpr ArgKind value{TSR_VALUE_DEVICE, false};
};
template <>
struct ParamKind<RandomDraw> {  // `Generator?`: the call's draw (random.hpp)
  static constexpr ArgKind value{TSR_VALUE_GENERATOR, true};
};
template <typename T>
struct ParamKind<std::optional<T>> {
  static constexpr ArgKind value{ParamKind<T>::value.kind, true};
};

// ParamKinds<&kernel>: the ArgKind of each parameter.
template <auto Kernel, size_t... I>
constexpr std::array<ArgKind, sizeof...(I)> ParamKindsOf(std::index_sequence<I...>) {
  using Params = typename internal::Signature<decltype(Kernel)>::Params;
  return {ParamKind<std::tuple_element_t<I, Params>>::value...};
}
template <auto Kernel>
constexpr auto ParamKinds() {
  return ParamKindsOf<Kernel>(
      std::make_index_sequence<internal::Signature<decltype(Kernel)>::kArity>{});
}

// ParamTypeNames<&kernel>: each parameter's C++ type as the compiler spells it (type_name.hpp),
// for the registration's error where a parameter has no schema mapping.
template <auto Kernel, size_t... I>
constexpr std::array<std::string_view, sizeof...(I)> ParamTypeNamesOf(std::index_sequence<I...>) {
  using Params = typename internal::Signature<decltype(Kernel)>::Params;
  return {type_name<std::tuple_element_t<I, Params>>()...};
}
template <auto Kernel>
constexpr auto ParamTypeNames() {
  return ParamTypeNamesOf<Kernel>(
      std::make_index_sequence<internal::Signature<decltype(Kernel)>::kArity>{});
}

// ReturnCount<&kernel>: how many tensors the kernel returns.
template <typename R>
struct ReturnCountOf {
  static constexpr int value = std::is_same_v<R, Tensor> || std::is_same_v<R, TensorView> ? 1 : -1;
};
template <>
struct ReturnCountOf<void> {
  static constexpr int value = 0;
};
template <typename... Ts>
struct ReturnCountOf<std::tuple<Ts...>> {
  static constexpr int value =
      ((std::is_same_v<Ts, Tensor> || std::is_same_v<Ts, TensorView>)&&...) ? sizeof...(Ts) : -1;
};
template <auto Kernel>
constexpr int ReturnCount() {
  return ReturnCountOf<typename internal::Signature<decltype(Kernel)>::Return>::value;
}

// KindOfType: the ArgKind of a schema type as the schema writes it ("Tensor(a!)", "int[2]?").
constexpr ArgKind KindOfType(std::string_view type) {
  ArgKind k;
  if (!type.empty() && type.back() == '?') {
    k.optional = true;
    type.remove_suffix(1);
  }
  const size_t alias = type.find('(');
  const size_t list = type.find('[');
  const std::string_view base = type.substr(0, alias < list ? alias : list);
  if (list != std::string_view::npos) {
    if (base == "int" || base == "SymInt") k.kind = TSR_VALUE_INT_LIST;
    if (base == "bool") k.kind = TSR_VALUE_BOOL_LIST;
    return k;  // float[], Tensor[]: no typed C++ mapping
  }
  if (base == "Tensor") k.kind = TSR_VALUE_TENSOR;
  if (base == "int" || base == "SymInt" || base == "Layout" || base == "MemoryFormat") {
    k.kind = TSR_VALUE_INT;
  }
  if (base == "float") k.kind = TSR_VALUE_DOUBLE;
  if (base == "bool") k.kind = TSR_VALUE_BOOL;
  if (base == "str") k.kind = TSR_VALUE_STRING;
  if (base == "Scalar") k.kind = TSR_VALUE_SCALAR;
  if (base == "ScalarType") k.kind = TSR_VALUE_DTYPE;
  if (base == "Device") k.kind = TSR_VALUE_DEVICE;
  if (base == "Generator") k.kind = TSR_VALUE_GENERATOR;
  return k;
}

// SchemaArguments: the argument and return lists of a canonical schema, for constant
// expressions. Canonical text (FunctionSchema::ToString) separates items with ", " at depth 0
// of the parentheses and brackets; defaults are written after '='.
class SchemaText {
 public:
  constexpr explicit SchemaText(std::string_view schema) : schema_(schema) {}

  constexpr size_t ArgumentCount() const { return Count(Arguments()); }
  constexpr ArgKind ArgumentKind(size_t i) const { return KindOfType(ArgumentType(i)); }
  // ArgumentType: "Tensor(a!)", "int[2]?"; ArgumentName: "out".
  constexpr std::string_view ArgumentType(size_t i) const { return TypeOf(Item(Arguments(), i)); }
  constexpr std::string_view ArgumentName(size_t i) const {
    std::string_view item = Item(Arguments(), i);
    item = item.substr(0, item.find('='));
    return item.substr(TypeOf(item).size() + (TypeOf(item).size() < item.size() ? 1 : 0));
  }
  constexpr size_t ReturnCount() const { return Count(Returns()); }

 private:
  // Arguments: the text between the first '(' and its matching ')'.
  constexpr std::string_view Arguments() const {
    const size_t open = schema_.find('(');
    if (open == std::string_view::npos) return {};
    return schema_.substr(open + 1, Matching(schema_, open) - open - 1);
  }
  // Returns: after "-> ", without the parentheses of a list.
  constexpr std::string_view Returns() const {
    const size_t arrow = schema_.find("-> ", Matching(schema_, schema_.find('(')));
    if (arrow == std::string_view::npos) return {};
    std::string_view r = schema_.substr(arrow + 3);
    if (!r.empty() && r.front() == '(' && Matching(r, 0) == r.size() - 1) {
      r = r.substr(1, r.size() - 2);
    }
    return r;
  }
  static constexpr size_t Matching(std::string_view s, size_t open) {
    int depth = 0;
    for (size_t i = open; i < s.size(); ++i) {
      if (s[i] == '(' || s[i] == '[') ++depth;
      if ((s[i] == ')' || s[i] == ']') && --depth == 0) return i;
    }
    return s.size();
  }
  // Items: the ", "-separated items at depth 0, without the bare `*`.
  static constexpr size_t Count(std::string_view list) {
    size_t n = 0;
    while (!Item(list, n).empty()) ++n;
    return n;
  }
  static constexpr std::string_view Item(std::string_view list, size_t index) {
    size_t start = 0, seen = 0;
    int depth = 0;
    for (size_t i = 0; i <= list.size(); ++i) {
      const bool end = i == list.size();
      if (!end && (list[i] == '(' || list[i] == '[')) ++depth;
      if (!end && (list[i] == ')' || list[i] == ']')) --depth;
      if (end || (depth == 0 && list[i] == ',')) {
        std::string_view item = list.substr(start, i - start);
        while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
        if (!item.empty() && item != "*") {
          if (seen == index) return item;
          ++seen;
        }
        start = i + 1;
      }
    }
    return {};
  }
  // TypeOf: "Scalar alpha=1" -> "Scalar"; "Tensor(a!) out" -> "Tensor(a!)".
  static constexpr std::string_view TypeOf(std::string_view item) {
    const size_t eq = item.find('=');
    if (eq != std::string_view::npos) item = item.substr(0, eq);
    const size_t space = item.rfind(' ');
    return space == std::string_view::npos ? item : item.substr(0, space);
  }

  std::string_view schema_;
};

// Mismatch: the index of the first parameter that does not follow `schema`, the parameter
// count when the counts differ, -2 for the return type, or -1 when the kernel matches.
template <auto Kernel>
constexpr int Mismatch(std::string_view schema) {
  constexpr auto params = ParamKinds<Kernel>();
  const SchemaText text(schema);
  for (size_t i = 0; i < params.size() && i < text.ArgumentCount(); ++i) {
    if (params[i].kind < 0 || !(params[i] == text.ArgumentKind(i))) return static_cast<int>(i);
  }
  if (params.size() != text.ArgumentCount()) return static_cast<int>(params.size());
  if (ReturnCount<Kernel>() != static_cast<int>(text.ReturnCount())) return -2;
  return -1;
}

// FirstMismatch<Mismatch>: the condition of Library::impl's compile-time check, a template so
// that the compiler's note names the parameter ("FirstMismatch<2>::none evaluates to false").
template <int kMismatch>
struct FirstMismatch {
  static constexpr bool none = kMismatch == -1;
};

// CppTypeName: the C++ parameter type the mapping above gives a schema type's ArgKind (for a
// kind no schema type has, `unmapped`: the parameter's own type, as type_name spells it).
inline std::string CppTypeName(ArgKind k, std::string_view unmapped = "a C++ type") {
  std::string name;
  switch (k.kind) {
    case TSR_VALUE_TENSOR:
      name = "sdk::Tensor (or sdk::TensorView)";
      break;
    case TSR_VALUE_INT:
      name = "int64_t";
      break;
    case TSR_VALUE_DOUBLE:
      name = "double";
      break;
    case TSR_VALUE_BOOL:
      name = "bool";
      break;
    case TSR_VALUE_STRING:
      name = "std::string_view";
      break;
    case TSR_VALUE_SCALAR:
      name = "sdk::Scalar";
      break;
    case TSR_VALUE_INT_LIST:
      name = "sdk::IntSpan";
      break;
    case TSR_VALUE_BOOL_LIST:
      name = "sdk::BoolSpan";
      break;
    case TSR_VALUE_DTYPE:
      name = "tsr_dtype";
      break;
    case TSR_VALUE_DEVICE:
      name = "tsr_device";
      break;
    case TSR_VALUE_GENERATOR:
      return "sdk::RandomDraw";  // always a Generator? argument, never std::optional
    default:
      return std::string(unmapped) + " (no schema type maps to it)";
  }
  return k.optional ? "std::optional<" + name + ">" : name;
}

}  // namespace signature
}  // namespace sdk
}  // namespace tessera

// TESSERA_OP("add.Tensor"): names an op for Library::impl so that the kernel's signature is
// checked against the op's schema at compile time.
#define TESSERA_OP(name)                                             \
  [] {                                                               \
    struct TesseraOpName {                                           \
      constexpr std::string_view operator()() const { return name; } \
    };                                                               \
    return TesseraOpName{};                                          \
  }()

// FunctionSchema: an operator signature in PyTorch's schema language, e.g.
//
//   add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
//   add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
//   max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
//
// Supported: `ns::name.overload`; types Tensor, int (and SymInt), float, bool (and SymBool), str,
// Scalar, ScalarType, Device, Layout, MemoryFormat, Generator; `T?` optionals; lists `T[]` and
// `T[N]` (also `Tensor?[]` and `int[1]?`); alias annotations `Tensor(a)` and `Tensor(a!)`; defaults
// (None, True/False, numbers, strings, lists, a bare int for a fixed-size int list, and
// identifiers for dtypes and the enum types); `*` to make the rest keyword-only; one return,
// `()` for none, or a parenthesised list of (optionally named) returns. Strings take either
// quote and PyTorch's escapes (\\ \' \" \a \b \f \n \r \t \v \ooo); numbers must be read
// whole and fit (an int64, a double's range); N of `T[N]` is at most kMaxFixedListSize.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "dispatcher/value.h"

namespace tessera {

enum class BaseType : uint8_t {
  kTensor,
  kInt,
  kFloat,
  kBool,
  kStr,
  kScalar,
  kScalarType,
  kDevice,
  kLayout,
  kMemoryFormat,
  kGenerator,
};

// kMaxFixedListSize: the largest N a schema may declare in `T[N]`. A bare int passed for such a
// list expands to N elements on every call, so N is capped when the op is defined (Note
// [Fixed-size list cap] in schema.cc); PyTorch's own schemas declare a handful (`int[2] stride`).
inline constexpr size_t kMaxFixedListSize = 1024;

struct SchemaType {
  BaseType base = BaseType::kTensor;
  bool optional = false;             // `T?` or `T[]?`: None is accepted
  bool is_list = false;              // `T[]` or `T[N]`
  bool element_optional = false;     // `Tensor?[]`
  std::optional<int64_t> list_size;  // N of `T[N]`

  std::string ToString() const;
  friend bool operator==(const SchemaType& a, const SchemaType& b) {
    return a.base == b.base && a.optional == b.optional && a.is_list == b.is_list &&
           a.element_optional == b.element_optional && a.list_size == b.list_size;
  }
};

// AliasInfo: `Tensor(a)` shares storage with other (a) tensors; `Tensor(a!)` is also written.
struct AliasInfo {
  std::string set;
  bool is_write = false;
  friend bool operator==(const AliasInfo& a, const AliasInfo& b) {
    return a.set == b.set && a.is_write == b.is_write;
  }
};

struct Argument {
  std::string name;  // empty for unnamed returns
  SchemaType type;
  std::optional<AliasInfo> alias;
  std::optional<Value> default_value;
  bool kwarg_only = false;

  std::string ToString() const;
};

struct FunctionSchema {
  std::string ns;        // "" for core ops, "npu" for `npu::my_op`
  std::string name;      // "add"
  std::string overload;  // "Tensor", or "" for the default overload
  std::vector<Argument> arguments;
  std::vector<Argument> returns;

  // FullName: "add.Tensor", "add", "npu::my_op.out".
  std::string FullName() const;
  // ToString prints the schema back in its canonical form: parsing it gives the same schema and
  // printing that the same text (Note [Faithful schema text] in schema.cc).
  std::string ToString() const;
  // IsOutVariant: some argument is a written alias (`Tensor(a!) out`).
  bool HasWrittenArgument() const;
};

// ParseSchema parses one schema. Errors name the column and show the text with a caret under
// the offending token.
absl::StatusOr<FunctionSchema> ParseSchema(std::string_view text);

// NormalizeArgumentValue checks `value` against `arg`'s type and converts it to the canonical
// kind: an int for a float becomes a double, a number for a Scalar becomes a Scalar, an int
// for an int list becomes a list (of the fixed size, or 1), a string for a Device is parsed,
// an undefined tensor becomes None. The error says what was expected and what was found.
absl::Status NormalizeArgumentValue(const Argument& arg, Value* value);

// ParseOperatorName splits "ns::name.overload" into its parts (no validation of the rest).
struct OperatorName {
  std::string ns, name, overload;
};
absl::StatusOr<OperatorName> ParseOperatorName(std::string_view text);

}  // namespace tessera

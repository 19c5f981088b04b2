#include "core/dtype.h"

namespace tessera {

std::string_view ScalarTypeName(ScalarType t) { return base::dtype_name(ToTsrDtype(t)); }

namespace {

// PyTorch's C names for the dtypes (c10's ScalarType list), as native_functions.yaml writes a
// ScalarType default ("dtype=long") and torch.long spells it.
struct Alias {
  std::string_view name;
  ScalarType type;
};
constexpr Alias kAliases[] = {
    {"byte", ScalarType::kUInt8},    {"char", ScalarType::kInt8},
    {"short", ScalarType::kInt16},   {"int", ScalarType::kInt32},
    {"long", ScalarType::kInt64},    {"half", ScalarType::kFloat16},
    {"float", ScalarType::kFloat32}, {"double", ScalarType::kFloat64},
};

}  // namespace

std::optional<ScalarType> ParseScalarType(std::string_view name) {
  for (ScalarType t : kAllScalarTypes) {
    if (ScalarTypeName(t) == name) return t;
  }
  for (const Alias& a : kAliases) {
    if (a.name == name) return a.type;
  }
  return std::nullopt;
}

std::string_view ScalarTypeSchemaName(ScalarType t) {
  for (const Alias& a : kAliases) {
    if (a.type == t) return a.name;
  }
  return ScalarTypeName(t);  // bool, bfloat16
}

}  // namespace tessera

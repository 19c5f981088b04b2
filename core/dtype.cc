#include "core/dtype.h"

namespace tessera {

std::string_view ScalarTypeName(ScalarType t) { return base::dtype_name(ToTsrDtype(t)); }

std::optional<ScalarType> ParseScalarType(std::string_view name) {
  for (ScalarType t : kAllScalarTypes) {
    if (ScalarTypeName(t) == name) return t;
  }
  struct Alias {
    std::string_view name;
    ScalarType type;
  };
  static constexpr Alias kAliases[] = {
      {"byte", ScalarType::kUInt8},    {"char", ScalarType::kInt8},
      {"short", ScalarType::kInt16},   {"int", ScalarType::kInt32},
      {"long", ScalarType::kInt64},    {"half", ScalarType::kFloat16},
      {"float", ScalarType::kFloat32}, {"double", ScalarType::kFloat64},
  };
  for (const Alias& a : kAliases) {
    if (a.name == name) return a.type;
  }
  return std::nullopt;
}

}  // namespace tessera

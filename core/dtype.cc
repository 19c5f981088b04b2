#include "core/dtype.h"

namespace tessera {

std::string_view ScalarTypeName(ScalarType t) {
  switch (t) {
    case ScalarType::kBool:
      return "bool";
    case ScalarType::kUInt8:
      return "uint8";
    case ScalarType::kInt8:
      return "int8";
    case ScalarType::kInt16:
      return "int16";
    case ScalarType::kInt32:
      return "int32";
    case ScalarType::kInt64:
      return "int64";
    case ScalarType::kFloat16:
      return "float16";
    case ScalarType::kBFloat16:
      return "bfloat16";
    case ScalarType::kFloat32:
      return "float32";
    case ScalarType::kFloat64:
      return "float64";
  }
  return "<invalid dtype>";
}

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

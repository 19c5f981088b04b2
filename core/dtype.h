// ScalarType: the ten element types of Tessera (DESIGN.md, "Op set v1").
//
// The numeric values are part of the stable ABI (TSR_DTYPE_* will equal them): append only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/half.h"

namespace tessera {

enum class ScalarType : int8_t {
  kBool = 0,
  kUInt8 = 1,
  kInt8 = 2,
  kInt16 = 3,
  kInt32 = 4,
  kInt64 = 5,
  kFloat16 = 6,
  kBFloat16 = 7,
  kFloat32 = 8,
  kFloat64 = 9,
};

inline constexpr int kNumScalarTypes = 10;

// Every dtype in enum order, for table-driven code and tests.
inline constexpr ScalarType kAllScalarTypes[kNumScalarTypes] = {
    ScalarType::kBool,    ScalarType::kUInt8,  ScalarType::kInt8,    ScalarType::kInt16,
    ScalarType::kInt32,   ScalarType::kInt64,  ScalarType::kFloat16, ScalarType::kBFloat16,
    ScalarType::kFloat32, ScalarType::kFloat64};

// ElementSize is the size in bytes of one element.
constexpr size_t ElementSize(ScalarType t) {
  switch (t) {
    case ScalarType::kBool:
    case ScalarType::kUInt8:
    case ScalarType::kInt8:
      return 1;
    case ScalarType::kInt16:
    case ScalarType::kFloat16:
    case ScalarType::kBFloat16:
      return 2;
    case ScalarType::kInt32:
    case ScalarType::kFloat32:
      return 4;
    case ScalarType::kInt64:
    case ScalarType::kFloat64:
      return 8;
  }
  return 0;
}

constexpr bool IsFloatingType(ScalarType t) {
  return t == ScalarType::kFloat16 || t == ScalarType::kBFloat16 || t == ScalarType::kFloat32 ||
         t == ScalarType::kFloat64;
}

// IsIntegralType: the integer types, with or without bool (PyTorch's isIntegralType).
constexpr bool IsIntegralType(ScalarType t, bool include_bool) {
  return (include_bool && t == ScalarType::kBool) || t == ScalarType::kUInt8 ||
         t == ScalarType::kInt8 || t == ScalarType::kInt16 || t == ScalarType::kInt32 ||
         t == ScalarType::kInt64;
}

constexpr bool IsValidScalarType(int value) { return value >= 0 && value < kNumScalarTypes; }

// ScalarTypeName is the PyTorch spelling without the "torch." prefix ("float32", "bool").
std::string_view ScalarTypeName(ScalarType t);

// ParseScalarType accepts the names printed by ScalarTypeName and PyTorch's aliases
// ("float", "half", "long", "int", ...).
std::optional<ScalarType> ParseScalarType(std::string_view name);

// CppTypeFor maps a dtype to its C++ storage type.
template <ScalarType T>
struct CppTypeFor;
template <>
struct CppTypeFor<ScalarType::kBool> {
  using type = bool;
};
template <>
struct CppTypeFor<ScalarType::kUInt8> {
  using type = uint8_t;
};
template <>
struct CppTypeFor<ScalarType::kInt8> {
  using type = int8_t;
};
template <>
struct CppTypeFor<ScalarType::kInt16> {
  using type = int16_t;
};
template <>
struct CppTypeFor<ScalarType::kInt32> {
  using type = int32_t;
};
template <>
struct CppTypeFor<ScalarType::kInt64> {
  using type = int64_t;
};
template <>
struct CppTypeFor<ScalarType::kFloat16> {
  using type = Half;
};
template <>
struct CppTypeFor<ScalarType::kBFloat16> {
  using type = BFloat16;
};
template <>
struct CppTypeFor<ScalarType::kFloat32> {
  using type = float;
};
template <>
struct CppTypeFor<ScalarType::kFloat64> {
  using type = double;
};

}  // namespace tessera

// ScalarType: the ten element types of Tessera (DESIGN.md, "Op set v1"), generated with
// everything else about them from the C ABI's one list, TSR_FOR_EACH_DTYPE
// (tessera/c/dtypes.h): a ScalarType's value is its TSR_DTYPE_* value. Sizes, categories and
// names come from the header-only base's tessera/base/dtypes.hpp, generated from the same list,
// so that the runtime and plugins cannot disagree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/half.h"
#include "tessera/base/dtypes.hpp"
#include "tessera/c/dtypes.h"

namespace tessera {

enum class ScalarType : int8_t {
#define TESSERA_SCALAR_TYPE_(NAME, Name, value, name, size, category) k##Name = value,
  TSR_FOR_EACH_DTYPE(TESSERA_SCALAR_TYPE_)
#undef TESSERA_SCALAR_TYPE_
};

// The C and C++ values are one list's, so equal; said here too, by the compiler.
#define TESSERA_SCALAR_TYPE_IS_TSR_DTYPE_(NAME, Name, value, name, size, category) \
  static_assert(static_cast<int>(ScalarType::k##Name) == TSR_DTYPE_##NAME,         \
                "ScalarType::k" #Name " != TSR_DTYPE_" #NAME);
TSR_FOR_EACH_DTYPE(TESSERA_SCALAR_TYPE_IS_TSR_DTYPE_)
#undef TESSERA_SCALAR_TYPE_IS_TSR_DTYPE_

inline constexpr int kNumScalarTypes = base::kNumDtypes;

// Every dtype in enum order, for table-driven code and tests.
inline constexpr ScalarType kAllScalarTypes[kNumScalarTypes] = {
#define TESSERA_SCALAR_TYPE_(NAME, Name, value, name, size, category) ScalarType::k##Name,
    TSR_FOR_EACH_DTYPE(TESSERA_SCALAR_TYPE_)
#undef TESSERA_SCALAR_TYPE_
};

// ToTsrDtype is the C ABI's tsr_dtype of a ScalarType (the same value).
constexpr tsr_dtype ToTsrDtype(ScalarType t) { return static_cast<tsr_dtype>(t); }

// ElementSize is the size in bytes of one element.
constexpr size_t ElementSize(ScalarType t) { return base::element_size(ToTsrDtype(t)); }

constexpr bool IsFloatingType(ScalarType t) { return base::is_floating(ToTsrDtype(t)); }

// IsIntegralType: the integer types, with or without bool (PyTorch's isIntegralType).
constexpr bool IsIntegralType(ScalarType t, bool include_bool) {
  return base::is_integral(ToTsrDtype(t), include_bool);
}

constexpr bool IsValidScalarType(int value) { return base::is_valid_dtype(value); }

// ScalarTypeName is the PyTorch spelling without the "torch." prefix ("float32", "bool").
std::string_view ScalarTypeName(ScalarType t);

// ParseScalarType accepts the names printed by ScalarTypeName and PyTorch's aliases
// ("float", "half", "long", "int", ...).
std::optional<ScalarType> ParseScalarType(std::string_view name);
// ScalarTypeSchemaName: the name an ATen schema gives a ScalarType default ("long" for int64,
// "half", "float", ...; bool and bfloat16 as ScalarTypeName), which ParseScalarType reads back.
std::string_view ScalarTypeSchemaName(ScalarType t);

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

// CppTypeFor has one specialization per dtype, each of the dtype's size.
#define TESSERA_CPP_TYPE_HAS_SIZE_(NAME, Name, value, name, size, category) \
  static_assert(sizeof(CppTypeFor<ScalarType::k##Name>::type) == (size),    \
                "CppTypeFor<ScalarType::k" #Name "> is not " #size " bytes");
TSR_FOR_EACH_DTYPE(TESSERA_CPP_TYPE_HAS_SIZE_)
#undef TESSERA_CPP_TYPE_HAS_SIZE_

}  // namespace tessera

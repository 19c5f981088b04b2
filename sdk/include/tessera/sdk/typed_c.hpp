// Typed C kernels through the SDK: the C parameters an op's schema calls for (kernel.h's
// tsr_typed_kernel_fn), checked against a C function's real parameter types.
//
// The runtime calls a typed C kernel through a libffi call interface built from the schema the
// kernel was built against; it cannot see the function's real parameters, so a function that
// does not follow the mapping would be called with the wrong values. Library::impl_typed checks
// it before that (plugin.hpp): at compile time for TESSERA_OP("clamp.out"), at registration for
// a plain op name. The mapping, per schema argument, after the leading `void* context`:
//   Tensor, Tensor? -> tsr_tensor* (or const tsr_tensor*; NULL for None)
//   int, SymInt -> int64_t   float -> double   bool -> int32_t   ScalarType -> tsr_dtype
//   Scalar -> tsr_scalar   Device -> tsr_device   str -> tsr_string
//   int[], int[N], SymInt[] -> two parameters: const int64_t* values, size_t count
//   T? for the others -> const pointer to T's C type (const int64_t*, const tsr_scalar*, ...),
//                        NULL for None
// then one tsr_tensor** per return (the kernel stores a new reference there). Layout,
// MemoryFormat, Generator, optional lists and lists other than int[] have no C mapping: such ops
// need a boxed kernel.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "tessera/c/kernel.h"
#include "tessera/sdk/signature.hpp"

namespace tessera {
namespace sdk {
namespace typed_c {

// CType: one C parameter type of the mapping.
enum class CType : int {
  kUnmapped = -1,
  kTensor,
  kInt64,
  kDouble,
  kInt32,
  kDtype,
  kScalar,
  kDevice,
  kString,
  kInt64Ptr,
  kSize,
  kDoublePtr,
  kInt32Ptr,
  kDtypePtr,
  kScalarPtr,
  kDevicePtr,
  kStringPtr,
  kTensorOut,
};

// CTypeName: the C spelling, for messages.
constexpr std::string_view CTypeName(CType t) {
  constexpr std::string_view kNames[] = {"tsr_tensor*",
                                         "int64_t",
                                         "double",
                                         "int32_t",
                                         "tsr_dtype",
                                         "tsr_scalar",
                                         "tsr_device",
                                         "tsr_string",
                                         "const int64_t*",
                                         "size_t",
                                         "const double*",
                                         "const int32_t*",
                                         "const tsr_dtype*",
                                         "const tsr_scalar*",
                                         "const tsr_device*",
                                         "const tsr_string*",
                                         "tsr_tensor**"};
  static_assert(std::size(kNames) == static_cast<size_t>(CType::kTensorOut) + 1,
                "one name per CType");
  const int i = static_cast<int>(t);
  return i >= 0 && i < static_cast<int>(std::size(kNames)) ? kNames[i] : "a type without C mapping";
}

// CTypeOf<T>: the CType of a C++ parameter type (kUnmapped for any other type).
template <typename T>
struct CTypeOf : std::integral_constant<CType, CType::kUnmapped> {};
#define TESSERA_SDK_C_TYPE(type, value) \
  template <>                           \
  struct CTypeOf<type> : std::integral_constant<CType, CType::value> {}
TESSERA_SDK_C_TYPE(tsr_tensor*, kTensor);
TESSERA_SDK_C_TYPE(const tsr_tensor*, kTensor);
TESSERA_SDK_C_TYPE(int64_t, kInt64);
TESSERA_SDK_C_TYPE(double, kDouble);
TESSERA_SDK_C_TYPE(int32_t, kInt32);
TESSERA_SDK_C_TYPE(tsr_dtype, kDtype);
TESSERA_SDK_C_TYPE(tsr_scalar, kScalar);
TESSERA_SDK_C_TYPE(tsr_device, kDevice);
TESSERA_SDK_C_TYPE(tsr_string, kString);
TESSERA_SDK_C_TYPE(const int64_t*, kInt64Ptr);
TESSERA_SDK_C_TYPE(size_t, kSize);
TESSERA_SDK_C_TYPE(const double*, kDoublePtr);
TESSERA_SDK_C_TYPE(const int32_t*, kInt32Ptr);
TESSERA_SDK_C_TYPE(const tsr_dtype*, kDtypePtr);
TESSERA_SDK_C_TYPE(const tsr_scalar*, kScalarPtr);
TESSERA_SDK_C_TYPE(const tsr_device*, kDevicePtr);
TESSERA_SDK_C_TYPE(const tsr_string*, kStringPtr);
TESSERA_SDK_C_TYPE(tsr_tensor**, kTensorOut);
#undef TESSERA_SDK_C_TYPE

// CParams: the C parameters of one schema argument (count 0: it has no C mapping).
struct CParams {
  CType types[2] = {CType::kUnmapped, CType::kUnmapped};
  int count = 0;
};

// CParamsOf: the C parameters of a schema type as the schema writes it ("Scalar?",
// "Tensor(a!)", "int[2]").
constexpr CParams CParamsOf(std::string_view type) {
  bool optional = false;
  if (!type.empty() && type.back() == '?') {
    optional = true;
    type.remove_suffix(1);
  }
  const size_t alias = type.find('(');
  const size_t list = type.find('[');
  const std::string_view base = type.substr(0, alias < list ? alias : list);
  CParams p;
  if (list != std::string_view::npos) {
    if (!optional && (base == "int" || base == "SymInt")) {
      p.types[0] = CType::kInt64Ptr;
      p.types[1] = CType::kSize;
      p.count = 2;
    }
    return p;
  }
  struct Row {
    std::string_view base;
    CType value, pointer;
  };
  constexpr Row kRows[] = {
      {"Tensor", CType::kTensor, CType::kTensor},
      {"int", CType::kInt64, CType::kInt64Ptr},
      {"SymInt", CType::kInt64, CType::kInt64Ptr},
      {"float", CType::kDouble, CType::kDoublePtr},
      {"bool", CType::kInt32, CType::kInt32Ptr},
      {"ScalarType", CType::kDtype, CType::kDtypePtr},
      {"Scalar", CType::kScalar, CType::kScalarPtr},
      {"Device", CType::kDevice, CType::kDevicePtr},
      {"str", CType::kString, CType::kStringPtr},
  };
  for (const Row& row : kRows) {
    if (row.base == base) {
      p.types[0] = optional ? row.pointer : row.value;
      p.count = 1;
    }
  }
  return p;
}

// Check: how a C function's parameters (after the context) compare with a schema.
struct Check {
  int unmapped_argument = -1;  // the first argument without a C mapping, or -1
  int mismatch = -1;           // the first C parameter that differs, the count if counts differ
  CType expected = CType::kUnmapped;  // at `mismatch` (kUnmapped: beyond the expected ones)
  int argument = -1;                  // the schema argument of `mismatch`, -1 for a return
  int expected_count = 0;             // how many C parameters the schema calls for
  constexpr bool ok() const { return unmapped_argument < 0 && mismatch < 0; }
};

// CheckParams compares the C parameter types `params[0..n)` with `schema` (canonical text).
template <size_t N>
constexpr Check CheckParams(std::string_view schema, const std::array<CType, N>& params) {
  const signature::SchemaText text(schema);
  Check c;
  size_t at = 0;
  auto expect = [&](CType t, int argument) {
    if (c.mismatch < 0 && (at >= N || params[at] != t)) {
      c.mismatch = static_cast<int>(at);
      c.expected = t;
      c.argument = argument;
    }
    ++at;
  };
  for (size_t i = 0; i < text.ArgumentCount(); ++i) {
    const CParams p = CParamsOf(text.ArgumentType(i));
    if (p.count == 0) {
      c.unmapped_argument = static_cast<int>(i);
      return c;
    }
    for (int k = 0; k < p.count; ++k) expect(p.types[k], static_cast<int>(i));
  }
  for (size_t r = 0; r < text.ReturnCount(); ++r) expect(CType::kTensorOut, -1);
  c.expected_count = static_cast<int>(at);
  if (c.mismatch < 0 && N != at) {
    c.mismatch = static_cast<int>(at);
    c.argument = -1;
  }
  return c;
}

// ParamTypes<Ps...>: the CType of each C++ parameter type.
template <typename... Ps>
constexpr std::array<CType, sizeof...(Ps)> ParamTypes() {
  return {CTypeOf<Ps>::value...};
}

// Describe turns a failed Check into the sentence of a registration error.
template <size_t N>
std::string Describe(const Check& c, std::string_view schema, const std::array<CType, N>& params) {
  const signature::SchemaText text(schema);
  if (c.unmapped_argument >= 0) {
    const auto i = static_cast<size_t>(c.unmapped_argument);
    return "argument '" + std::string(text.ArgumentName(i)) + "' of type " +
           std::string(text.ArgumentType(i)) +
           " has no C mapping (tessera/c/kernel.h): register a boxed kernel";
  }
  const auto m = static_cast<size_t>(c.mismatch);
  if (m >= N || c.expected == CType::kUnmapped) {
    return "the function takes " + std::to_string(N) +
           " parameters after the context, the schema calls for " +
           std::to_string(c.expected_count);
  }
  const std::string what =
      c.argument >= 0
          ? "argument '" + std::string(text.ArgumentName(static_cast<size_t>(c.argument))) +
                "' of type " + std::string(text.ArgumentType(static_cast<size_t>(c.argument)))
          : std::string("a return");
  return "parameter " + std::to_string(m + 1) + " after the context is " +
         std::string(CTypeName(params[m])) + ", but " + what + " needs " +
         std::string(CTypeName(c.expected));
}

}  // namespace typed_c
}  // namespace sdk
}  // namespace tessera

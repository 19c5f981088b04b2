// dtype dispatch: call a generic lambda with the C++ type of a tsr_dtype.
//
//   sdk::dispatch(t.dtype(), "neg", sdk::kAllTypes, [&](auto tag) {
//     using T = typename decltype(tag)::type;
//     ...
//   });
//
// A dtype outside the given set throws "op: not implemented for dtype X", which the boxing
// wrapper returns as TSR_UNIMPLEMENTED.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/sdk/error.hpp"

namespace tessera {
namespace sdk {

// 16-bit float storage types; kernels convert through float.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

template <typename T>
struct TypeTag {
  using type = T;
};

// Which dtypes a kernel accepts, as bits (1 << tsr_dtype).
using DtypeSet = uint32_t;
inline constexpr DtypeSet dtype_bit(tsr_dtype d) { return DtypeSet{1} << static_cast<int>(d); }
inline constexpr DtypeSet kIntegralTypes = dtype_bit(TSR_DTYPE_UINT8) | dtype_bit(TSR_DTYPE_INT8) |
                                           dtype_bit(TSR_DTYPE_INT16) | dtype_bit(TSR_DTYPE_INT32) |
                                           dtype_bit(TSR_DTYPE_INT64);
inline constexpr DtypeSet kFloatingTypes =
    dtype_bit(TSR_DTYPE_FLOAT16) | dtype_bit(TSR_DTYPE_BFLOAT16) | dtype_bit(TSR_DTYPE_FLOAT32) |
    dtype_bit(TSR_DTYPE_FLOAT64);
inline constexpr DtypeSet kAllTypes = kIntegralTypes | kFloatingTypes | dtype_bit(TSR_DTYPE_BOOL);

inline const char* dtype_name(tsr_dtype d) {
  static const char* const kNames[] = {"bool",  "uint8",   "int8",     "int16",   "int32",
                                       "int64", "float16", "bfloat16", "float32", "float64"};
  const int i = static_cast<int>(d);
  return i >= 0 && i < 10 ? kNames[i] : "<invalid dtype>";
}

template <typename F>
void dispatch(tsr_dtype dtype, const char* op, DtypeSet allowed, F&& f) {
  if ((allowed & dtype_bit(dtype)) == 0) {
    fail(TSR_UNIMPLEMENTED, std::string(op) + ": not implemented for dtype " + dtype_name(dtype));
  }
  switch (dtype) {
    case TSR_DTYPE_BOOL:
      return f(TypeTag<bool>{});
    case TSR_DTYPE_UINT8:
      return f(TypeTag<uint8_t>{});
    case TSR_DTYPE_INT8:
      return f(TypeTag<int8_t>{});
    case TSR_DTYPE_INT16:
      return f(TypeTag<int16_t>{});
    case TSR_DTYPE_INT32:
      return f(TypeTag<int32_t>{});
    case TSR_DTYPE_INT64:
      return f(TypeTag<int64_t>{});
    case TSR_DTYPE_FLOAT16:
      return f(TypeTag<Half>{});
    case TSR_DTYPE_BFLOAT16:
      return f(TypeTag<BFloat16>{});
    case TSR_DTYPE_FLOAT32:
      return f(TypeTag<float>{});
    case TSR_DTYPE_FLOAT64:
      return f(TypeTag<double>{});
    default:
      break;
  }
  fail(TSR_INVALID_ARGUMENT, std::string(op) + ": invalid dtype");
}

}  // namespace sdk
}  // namespace tessera

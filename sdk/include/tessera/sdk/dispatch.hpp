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

#include "tessera/sdk/dtypes.hpp"
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

// A kernel's accepted dtypes are a DtypeSet (dtypes.hpp): kAllTypes, kIntegralTypes,
// kFloatingTypes, or dtype_bit(...) of each.

static_assert(kNumDtypes == 10, "sdk::dispatch needs a case for the new dtype");
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

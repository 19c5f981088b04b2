// The dtype facts for C++, generated from the C ABI's one list (TSR_FOR_EACH_DTYPE,
// tessera/c/dtypes.h): names, sizes, categories and dtype sets, and PyTorch's type promotion
// (promote_types, can_cast, and torch.result_type's priority classes).
//
// The header-only base (tessera/base/, below both core and the SDK, as torch/headeronly sits
// below torch/csrc/stable): dependency-free on purpose (the C headers and the standard library
// only). The runtime's own dtype code (core/dtype.h, core/type_promotion.h) and the SDK
// (tessera/sdk/dtypes.hpp re-exports it as tessera::sdk) are built on this header alike, so that
// a plugin and the runtime cannot disagree about a dtype. The conformance suite does not use the
// promotion here: its references state promotion on their own (conformance/reference_promotion.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/c/common.h"

namespace tessera {
namespace base {

// DtypeFacts: one entry of TSR_FOR_EACH_DTYPE.
struct DtypeFacts {
  tsr_dtype dtype;
  const char* name;  // "float32"
  size_t size;       // bytes per element
  int category;      // TSR_DTYPE_CATEGORY_BOOL, _INTEGRAL or _FLOATING
};

// kDtypeFacts: every dtype, in enum order; kDtypeFacts[d] describes dtype d.
inline constexpr DtypeFacts kDtypeFacts[] = {
#define TESSERA_BASE_DTYPE_FACTS_(NAME, Name, value, name, size, category) \
  {TSR_DTYPE_##NAME, name, size, category},
    TSR_FOR_EACH_DTYPE(TESSERA_BASE_DTYPE_FACTS_)
#undef TESSERA_BASE_DTYPE_FACTS_
};

inline constexpr int kNumDtypes = static_cast<int>(sizeof kDtypeFacts / sizeof kDtypeFacts[0]);

namespace dtype_internal {
constexpr bool ValuesAreTheirPositions() {
  for (int i = 0; i < kNumDtypes; ++i) {
    if (static_cast<int>(kDtypeFacts[i].dtype) != i) return false;
  }
  return true;
}
}  // namespace dtype_internal
// The tables here and in the runtime index by value: the list must count 0, 1, 2, ...
static_assert(dtype_internal::ValuesAreTheirPositions(),
              "TSR_FOR_EACH_DTYPE must list the dtypes in enum order, valued 0, 1, 2, ...");

// kAllDtypes: every dtype, in enum order, for table-driven code and tests.
inline constexpr tsr_dtype kAllDtypes[] = {
#define TESSERA_BASE_DTYPE_ENUMERATOR_(NAME, Name, value, name, size, category) TSR_DTYPE_##NAME,
    TSR_FOR_EACH_DTYPE(TESSERA_BASE_DTYPE_ENUMERATOR_)
#undef TESSERA_BASE_DTYPE_ENUMERATOR_
};

// is_valid_dtype: whether a raw value (from a tsr_dtype parameter, say) names a dtype.
constexpr bool is_valid_dtype(int value) { return value >= 0 && value < kNumDtypes; }

// dtype_name: "bool", "float32", ...; "<invalid dtype>" for a value outside the list.
constexpr const char* dtype_name(tsr_dtype d) {
  return is_valid_dtype(d) ? kDtypeFacts[d].name : "<invalid dtype>";
}

// element_size: bytes per element; 0 for a value outside the list.
constexpr size_t element_size(tsr_dtype d) { return is_valid_dtype(d) ? kDtypeFacts[d].size : 0; }

// dtype_category: TSR_DTYPE_CATEGORY_*; -1 for a value outside the list.
constexpr int dtype_category(tsr_dtype d) {
  return is_valid_dtype(d) ? kDtypeFacts[d].category : -1;
}

constexpr bool is_floating(tsr_dtype d) { return dtype_category(d) == TSR_DTYPE_CATEGORY_FLOATING; }

// largest_finite: a floating dtype's largest finite value (its lowest is the negation); 0 for
// the other dtypes. nan_to_num's default replacements of the infinities.
constexpr double largest_finite(tsr_dtype d) {
  switch (d) {
    case TSR_DTYPE_FLOAT16:
      return 65504.0;
    case TSR_DTYPE_BFLOAT16:
      return 3.3895313892515355e38;
    case TSR_DTYPE_FLOAT32:
      return 3.4028234663852886e38;
    case TSR_DTYPE_FLOAT64:
      return 1.7976931348623157e308;
    default:
      return 0;
  }
}

// is_integral: the integer types, with or without bool (PyTorch's isIntegralType).
constexpr bool is_integral(tsr_dtype d, bool include_bool) {
  return dtype_category(d) == TSR_DTYPE_CATEGORY_INTEGRAL ||
         (include_bool && dtype_category(d) == TSR_DTYPE_CATEGORY_BOOL);
}

// DtypeSet: a set of dtypes as bits (1 << tsr_dtype), e.g. the dtypes a kernel accepts.
using DtypeSet = uint32_t;
static_assert(kNumDtypes <= 32, "a DtypeSet has one bit per dtype");
// dtype_bit: the set of just `d`; empty for a value outside the list.
constexpr DtypeSet dtype_bit(tsr_dtype d) {
  return is_valid_dtype(d) ? DtypeSet{1} << static_cast<int>(d) : 0;
}

constexpr DtypeSet dtypes_of_category(int category) {
  DtypeSet set = 0;
  for (const DtypeFacts& f : kDtypeFacts) {
    if (f.category == category) set |= dtype_bit(f.dtype);
  }
  return set;
}
inline constexpr DtypeSet kIntegralTypes = dtypes_of_category(TSR_DTYPE_CATEGORY_INTEGRAL);
inline constexpr DtypeSet kFloatingTypes = dtypes_of_category(TSR_DTYPE_CATEGORY_FLOATING);
inline constexpr DtypeSet kAllTypes =
    kIntegralTypes | kFloatingTypes | dtypes_of_category(TSR_DTYPE_CATEGORY_BOOL);

// kDefaultDtype: PyTorch's default dtype, which a floating Scalar counts as in type promotion
// (and what torch.result_type of nothing is).
inline constexpr tsr_dtype kDefaultDtype = TSR_DTYPE_FLOAT32;

namespace dtype_internal {
// The promotion table: PyTorch's promoteTypes (c10/core/ScalarType.cpp) on Tessera's dtypes,
// rows and columns in enum order. core/type_promotion_test.cc checks it entry by entry against
// PyTorch's table written out on its own.
constexpr tsr_dtype b1 = TSR_DTYPE_BOOL, u8 = TSR_DTYPE_UINT8, i8 = TSR_DTYPE_INT8,
                    i16 = TSR_DTYPE_INT16, i32 = TSR_DTYPE_INT32, i64 = TSR_DTYPE_INT64,
                    f16 = TSR_DTYPE_FLOAT16, bf16 = TSR_DTYPE_BFLOAT16, f32 = TSR_DTYPE_FLOAT32,
                    f64 = TSR_DTYPE_FLOAT64;
static_assert(kNumDtypes == 10, "a new dtype needs a row and a column in kPromoteTypes");
// clang-format off
inline constexpr tsr_dtype kPromoteTypes[10][10] = {
    /*          b1    u8    i8    i16   i32   i64   f16   bf16  f32   f64 */
    /* b1   */ {b1,   u8,   i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64},
    /* u8   */ {u8,   u8,   i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64},
    /* i8   */ {i8,   i16,  i8,   i16,  i32,  i64,  f16,  bf16, f32,  f64},
    /* i16  */ {i16,  i16,  i16,  i16,  i32,  i64,  f16,  bf16, f32,  f64},
    /* i32  */ {i32,  i32,  i32,  i32,  i32,  i64,  f16,  bf16, f32,  f64},
    /* i64  */ {i64,  i64,  i64,  i64,  i64,  i64,  f16,  bf16, f32,  f64},
    /* f16  */ {f16,  f16,  f16,  f16,  f16,  f16,  f16,  f32,  f32,  f64},
    /* bf16 */ {bf16, bf16, bf16, bf16, bf16, bf16, f32,  bf16, f32,  f64},
    /* f32  */ {f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f32,  f64},
    /* f64  */ {f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64,  f64},
};
// clang-format on
}  // namespace dtype_internal

// promote_types: the smallest dtype both convert to without losing category or range
// (PyTorch's promoteTypes): uint8 with int8 is int16, float16 with bfloat16 is float32.
// TSR_DTYPE_FORCE_INT32 when either is not a dtype.
constexpr tsr_dtype promote_types(tsr_dtype a, tsr_dtype b) {
  if (!is_valid_dtype(a) || !is_valid_dtype(b)) return TSR_DTYPE_FORCE_INT32;
  return dtype_internal::kPromoteTypes[a][b];
}

// can_cast: whether a result computed in `from` may be written into a `to` output (in-place
// and out=): no floating to integral, no non-bool to bool (PyTorch's canCast without complex).
constexpr bool can_cast(tsr_dtype from, tsr_dtype to) {
  if (is_floating(from) && is_integral(to, /*include_bool=*/true)) return false;
  if (from != TSR_DTYPE_BOOL && to == TSR_DTYPE_BOOL) return false;
  return true;
}

// ResultTypeState: torch.result_type over operands of three priority classes, added in any
// order: tensors with dimensions outrank 0-dim tensors, which outrank wrapped numbers
// (Scalars). A lower class changes the result only when it brings a higher category
// (bool < integral < floating); then the result is the promotion of both. Each class is the
// promotion of its own operands. The caller decides a Scalar's dtype (a floating Scalar counts as
// kDefaultDtype, an integral one as int64).
class ResultTypeState {
 public:
  enum Class { kDimTensor = 0, kZeroDimTensor = 1, kWrappedNumber = 2 };

  // add: one operand of dtype `d` (a dtype of the list) in class `c`.
  constexpr void add(tsr_dtype d, Class c) {
    state_[c] = state_[c] < 0
                    ? static_cast<int>(d)
                    : static_cast<int>(promote_types(static_cast<tsr_dtype>(state_[c]), d));
  }
  // result: the promoted dtype; kDefaultDtype with no operand at all.
  constexpr tsr_dtype result() const {
    const int r =
        combine(state_[kDimTensor], combine(state_[kZeroDimTensor], state_[kWrappedNumber]));
    return r < 0 ? kDefaultDtype : static_cast<tsr_dtype>(r);
  }

 private:
  static constexpr int combine(int higher, int lower) {
    if (higher < 0) return lower;
    if (lower < 0 || dtype_category(static_cast<tsr_dtype>(lower)) <=
                         dtype_category(static_cast<tsr_dtype>(higher))) {
      return higher;
    }
    return promote_types(static_cast<tsr_dtype>(higher), static_cast<tsr_dtype>(lower));
  }
  int state_[3] = {-1, -1, -1};
};

}  // namespace base
}  // namespace tessera

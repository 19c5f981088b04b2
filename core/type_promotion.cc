#include "core/type_promotion.h"

#include <algorithm>

namespace tessera {
namespace {

constexpr ScalarType kDefaultDtype = ScalarType::kFloat32;

// Rank within a category: wider integers and wider floats rank higher.
int IntegerRank(ScalarType t) {
  switch (t) {
    case ScalarType::kInt8:
      return 0;
    case ScalarType::kInt16:
      return 1;
    case ScalarType::kInt32:
      return 2;
    case ScalarType::kInt64:
      return 3;
    default:
      return -1;
  }
}

int PromoteOrUndefined(int a, int b) {
  if (a < 0) return b;
  if (b < 0) return a;
  return static_cast<int>(PromoteTypes(static_cast<ScalarType>(a), static_cast<ScalarType>(b)));
}

// CombineCategories: the higher-priority class wins unless the lower one is of a higher
// category (PyTorch's combine_categories without complex).
int CombineCategories(int higher, int lower) {
  if (higher >= 0 && IsFloatingType(static_cast<ScalarType>(higher))) return higher;
  if (higher == static_cast<int>(ScalarType::kBool) ||
      (lower >= 0 && IsFloatingType(static_cast<ScalarType>(lower)))) {
    return PromoteOrUndefined(higher, lower);
  }
  return higher >= 0 ? higher : lower;
}

}  // namespace

ScalarType PromoteTypes(ScalarType a, ScalarType b) {
  if (a == b) return a;
  if (a == ScalarType::kBool) return b;
  if (b == ScalarType::kBool) return a;
  const bool a_float = IsFloatingType(a), b_float = IsFloatingType(b);
  if (a_float && b_float) {
    const bool half_pair = (a == ScalarType::kFloat16 && b == ScalarType::kBFloat16) ||
                           (a == ScalarType::kBFloat16 && b == ScalarType::kFloat16);
    if (half_pair) return ScalarType::kFloat32;
    return ElementSize(a) >= ElementSize(b) ? a : b;
  }
  if (a_float) return a;
  if (b_float) return b;
  // Both integral and different. uint8 only fits into a wider signed type.
  if (a == ScalarType::kUInt8 || b == ScalarType::kUInt8) {
    const ScalarType other = a == ScalarType::kUInt8 ? b : a;
    return other == ScalarType::kInt8 ? ScalarType::kInt16 : other;
  }
  return IntegerRank(a) >= IntegerRank(b) ? a : b;
}

bool CanCast(ScalarType from, ScalarType to) {
  if (IsFloatingType(from) && IsIntegralType(to, /*include_bool=*/true)) return false;
  if (from != ScalarType::kBool && to == ScalarType::kBool) return false;
  return true;
}

void ResultTypeBuilder::AddTensor(ScalarType dtype, int64_t dim) {
  int& slot = dim > 0 ? dim_result_ : zero_dim_result_;
  slot = PromoteOrUndefined(slot, static_cast<int>(dtype));
}

void ResultTypeBuilder::AddScalar(const Scalar& value) {
  const ScalarType dtype = value.is_floating_point() ? kDefaultDtype : value.dtype();
  wrapped_result_ = PromoteOrUndefined(wrapped_result_, static_cast<int>(dtype));
}

ScalarType ResultTypeBuilder::Result() const {
  const int result =
      CombineCategories(dim_result_, CombineCategories(zero_dim_result_, wrapped_result_));
  return result < 0 ? kDefaultDtype : static_cast<ScalarType>(result);
}

}  // namespace tessera

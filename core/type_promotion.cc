#include "core/type_promotion.h"

namespace tessera {

ScalarType PromoteTypes(ScalarType a, ScalarType b) {
  return static_cast<ScalarType>(sdk::promote_types(ToTsrDtype(a), ToTsrDtype(b)));
}

bool CanCast(ScalarType from, ScalarType to) {
  return sdk::can_cast(ToTsrDtype(from), ToTsrDtype(to));
}

void ResultTypeBuilder::AddTensor(ScalarType dtype, int64_t dim) {
  state_.add(ToTsrDtype(dtype),
             dim > 0 ? sdk::ResultTypeState::kDimTensor : sdk::ResultTypeState::kZeroDimTensor);
}

void ResultTypeBuilder::AddScalar(const Scalar& value) {
  const tsr_dtype dtype =
      value.is_floating_point() ? sdk::kDefaultDtype : ToTsrDtype(value.dtype());
  state_.add(dtype, sdk::ResultTypeState::kWrappedNumber);
}

ScalarType ResultTypeBuilder::Result() const { return static_cast<ScalarType>(state_.result()); }

}  // namespace tessera

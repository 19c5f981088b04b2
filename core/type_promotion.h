// PyTorch's type promotion (torch.result_type and promote_types), for the ten Tessera dtypes.
//
// Operands fall into three priority classes: tensors with at least one dimension, 0-dim
// tensors, and wrapped numbers (Scalars). A lower class only changes the result when it is of
// a higher category (bool < integer < floating); within the winning category the result type
// is the promotion of the operands of that class. A Python float scalar counts as the default
// dtype (float32), so `int_tensor + 1.5` is float32 and `half_tensor * 2.0` stays float16.
#pragma once

#include "core/dtype.h"
#include "core/scalar.h"
#include "tessera/base/dtypes.hpp"

namespace tessera {

// PromoteTypes: the smallest type both a and b convert to without losing category or range
// (PyTorch's promoteTypes): uint8 with int8 is int16, float16 with bfloat16 is float32. The
// table is the base's (tessera/base/dtypes.hpp), so the runtime and plugins promote alike.
inline ScalarType PromoteTypes(ScalarType a, ScalarType b) {
  return static_cast<ScalarType>(base::promote_types(ToTsrDtype(a), ToTsrDtype(b)));
}

// CanCast: whether an op computing in `from` may write into a `to` output (in-place and out=):
// no floating to integral, no non-bool to bool.
inline bool CanCast(ScalarType from, ScalarType to) {
  return base::can_cast(ToTsrDtype(from), ToTsrDtype(to));
}

// ResultTypeBuilder accumulates operands in any order and answers torch.result_type (the base's
// ResultTypeState, which plugins use too). Inline: every pointwise call's plan runs it.
class ResultTypeBuilder {
 public:
  void AddTensor(ScalarType dtype, int64_t dim) {
    state_.add(ToTsrDtype(dtype),
               dim > 0 ? base::ResultTypeState::kDimTensor : base::ResultTypeState::kZeroDimTensor);
  }
  void AddScalar(const Scalar& value) {
    const tsr_dtype dtype =
        value.is_floating_point() ? base::kDefaultDtype : ToTsrDtype(value.dtype());
    state_.add(dtype, base::ResultTypeState::kWrappedNumber);
  }
  // Result: the promoted dtype. With no operand at all, float32 (the default dtype).
  ScalarType Result() const { return static_cast<ScalarType>(state_.result()); }

 private:
  base::ResultTypeState state_;
};

}  // namespace tessera

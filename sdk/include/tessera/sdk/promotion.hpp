// PyTorch's type promotion for kernels: promote_types, can_cast (dtypes.hpp, shared with the
// runtime) and result_type over Tensors and Scalars, so that an out= kernel can tell the dtype
// its op computes in (the runtime has already checked that the output may receive it).
#pragma once

#include "tessera/sdk/boxing.hpp"
#include "tessera/sdk/dtypes.hpp"

namespace tessera {
namespace sdk {

// ResultType: torch.result_type over tensors and Scalars, in any order (ResultTypeState in
// dtypes.hpp: tensors with dimensions outrank 0-dim tensors, which outrank Scalars, unless a
// lower class brings a higher category). A floating Scalar counts as float32, an integral one
// as int64.
class ResultType {
 public:
  ResultType& add(const Tensor& t) {
    state_.add(t.dtype(),
               t.dim() == 0 ? ResultTypeState::kZeroDimTensor : ResultTypeState::kDimTensor);
    return *this;
  }
  // add of a view reads no property through the table.
  ResultType& add(const TensorView& v) {
    state_.add(v.dtype(),
               v.dim() == 0 ? ResultTypeState::kZeroDimTensor : ResultTypeState::kDimTensor);
    return *this;
  }
  ResultType& add(const Scalar& s) {
    const tsr_dtype d = s.c.kind == TSR_SCALAR_DOUBLE ? kDefaultDtype
                        : s.c.kind == TSR_SCALAR_BOOL ? TSR_DTYPE_BOOL
                                                      : TSR_DTYPE_INT64;
    state_.add(d, ResultTypeState::kWrappedNumber);
    return *this;
  }
  tsr_dtype get() const { return state_.result(); }

 private:
  ResultTypeState state_;
};

}  // namespace sdk
}  // namespace tessera

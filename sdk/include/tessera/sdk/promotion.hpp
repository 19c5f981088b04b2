// PyTorch's type promotion for kernels: promote_types, result_type and can_cast over
// tsr_dtype, so that an out= kernel can tell the dtype its op computes in (the runtime has
// already checked that the output may receive it). Agrees with the runtime's own rules; a test
// compares the two on every pair.
#pragma once

#include "tessera/sdk/boxing.hpp"
#include "tessera/sdk/dispatch.hpp"

namespace tessera {
namespace sdk {

inline bool is_floating(tsr_dtype d) {
  return d == TSR_DTYPE_FLOAT16 || d == TSR_DTYPE_BFLOAT16 || d == TSR_DTYPE_FLOAT32 ||
         d == TSR_DTYPE_FLOAT64;
}
inline bool is_integral(tsr_dtype d, bool include_bool) {
  return (d >= TSR_DTYPE_UINT8 && d <= TSR_DTYPE_INT64) || (include_bool && d == TSR_DTYPE_BOOL);
}

// promote_types: the smallest dtype both convert to without losing category or range.
inline tsr_dtype promote_types(tsr_dtype a, tsr_dtype b) {
  if (a == b || b == TSR_DTYPE_BOOL) return a;
  if (a == TSR_DTYPE_BOOL) return b;
  const bool fa = is_floating(a), fb = is_floating(b);
  if (fa != fb) return fa ? a : b;
  if (fa) {  // two different floating types
    if (a == TSR_DTYPE_FLOAT64 || b == TSR_DTYPE_FLOAT64) return TSR_DTYPE_FLOAT64;
    return TSR_DTYPE_FLOAT32;  // float32 with a 16-bit type, or float16 with bfloat16
  }
  // Two different integer types: uint8 with a signed type needs one more bit than int8 has.
  if (a == TSR_DTYPE_UINT8 || b == TSR_DTYPE_UINT8) {
    const tsr_dtype s = a == TSR_DTYPE_UINT8 ? b : a;
    return s == TSR_DTYPE_INT8 ? TSR_DTYPE_INT16 : s;
  }
  return a > b ? a : b;  // signed integers are ordered by width
}

// can_cast: whether a result computed in `from` may be written into a `to` output.
inline bool can_cast(tsr_dtype from, tsr_dtype to) {
  if (is_floating(from) && is_integral(to, false)) return false;
  if (from != TSR_DTYPE_BOOL && to == TSR_DTYPE_BOOL) return false;
  return true;
}

// ResultType: torch.result_type over tensors and Scalars, in any order. Tensors with
// dimensions outrank 0-dim tensors, which outrank Scalars, unless a lower class brings a
// higher category (bool < integral < floating). A floating Scalar counts as float32.
class ResultType {
 public:
  ResultType& add(const Tensor& t) { return add(t.dtype(), t.dim() == 0 ? kZeroDim : kDim); }
  ResultType& add(const Scalar& s) {
    const tsr_dtype d = s.c.kind == TSR_SCALAR_DOUBLE ? TSR_DTYPE_FLOAT32
                        : s.c.kind == TSR_SCALAR_BOOL ? TSR_DTYPE_BOOL
                                                      : TSR_DTYPE_INT64;
    return add(d, kWrapped);
  }
  tsr_dtype get() const {
    const int lower = combine(state_[kZeroDim], state_[kWrapped]);
    const int r = combine(state_[kDim], lower);
    return r < 0 ? TSR_DTYPE_FLOAT32 : static_cast<tsr_dtype>(r);
  }

 private:
  enum Class { kDim, kZeroDim, kWrapped };
  ResultType& add(tsr_dtype d, Class c) {
    state_[c] = state_[c] < 0 ? d : promote_types(static_cast<tsr_dtype>(state_[c]), d);
    return *this;
  }
  static int category(int d) {
    return d < 0 ? -1 : is_floating(static_cast<tsr_dtype>(d)) ? 2 : d == TSR_DTYPE_BOOL ? 0 : 1;
  }
  static int combine(int higher, int lower) {
    if (higher < 0) return lower;
    if (lower < 0 || category(lower) <= category(higher)) return higher;
    return promote_types(static_cast<tsr_dtype>(higher), static_cast<tsr_dtype>(lower));
  }
  int state_[3] = {-1, -1, -1};
};

}  // namespace sdk
}  // namespace tessera

// The checks of op arguments that are op semantics beyond shapes and dtypes, written once: the
// dispatcher's plan functions make them for every backend (dispatcher/ops/pointwise_meta.cc),
// and the bundled CPU and GPU kernels ask the same functions again. They do because a runtime
// of the same ABI minor that predates these plan checks (the released 1.1) still loads those
// plugins and would run them unchecked: add(int, int, alpha=0.5) would silently drop alpha.
// The ABI minor says what a runtime's structs and slots are, not what its plans check; the
// kernels can stop asking once the plugins require a minor that guarantees these checks.
// Each returns why the arguments are refused (a message without the op's name), or nullptr.
#pragma once

#include <cstdint>
#include <string_view>

#include "tessera/base/dtypes.hpp"
#include "tessera/c/kernel_call.h"

namespace tessera {
namespace base {

// alpha_error: add/sub's alpha of kind `alpha_kind` (a tsr_scalar_kind) for the compute dtype,
// as PyTorch's alpha_check.
constexpr const char* alpha_error(tsr_dtype compute, int32_t alpha_kind) {
  if (is_integral(compute, /*include_bool=*/true) && alpha_kind == TSR_SCALAR_DOUBLE) {
    return "for integral input tensors, argument alpha must not be a floating point number";
  }
  if (compute != TSR_DTYPE_BOOL && alpha_kind == TSR_SCALAR_BOOL) {
    return "boolean alpha only supported for boolean results";
  }
  return nullptr;
}

// gelu_approximate_error: gelu's approximate, "none" or "tanh" (the caller names what it got).
constexpr const char* gelu_approximate_error(std::string_view approximate) {
  return approximate == "none" || approximate == "tanh"
             ? nullptr
             : "expected approximate to be 'none' or 'tanh'";
}

// integer_power_error: pow.Tensor_Scalar of an integral self to a negative integral exponent.
constexpr const char* integer_power_error(tsr_dtype self, int32_t exponent_kind, bool negative) {
  return is_integral(self, /*include_bool=*/true) && exponent_kind == TSR_SCALAR_INT && negative
             ? "integers to negative integer powers are not allowed"
             : nullptr;
}

// addcdiv_error: addcdiv divides in the compute dtype, never in integers (PyTorch removed its
// integer division).
constexpr const char* addcdiv_error(tsr_dtype compute) {
  return is_integral(compute, /*include_bool=*/true)
             ? "integer division with addcdiv is not supported; use true division (floating "
               "point inputs) instead"
             : nullptr;
}

}  // namespace base
}  // namespace tessera

// Helpers for the plan functions of ops (Note [Call plans] in dispatcher/call_plan.h).
#pragma once

#include "absl/status/status.h"
#include "core/shape.h"
#include "dispatcher/call_plan.h"

namespace tessera {
namespace ops {

// AddContiguousOutput appends to `plan` an output of `sizes` and `dtype`, contiguous, as a
// meta function's Empty would have made it. A plan function clears `plan->outputs` first: a
// prepared call hands it the plan of an earlier call.
inline absl::Status AddContiguousOutput(CallPlan* plan, IntArrayRef sizes, ScalarType dtype) {
  TensorSpec& out = plan->outputs.emplace_back();
  out.sizes.assign(sizes.begin(), sizes.end());
  out.dtype = dtype;
  return ContiguousStridesInto(out.sizes, &out.strides);
}

}  // namespace ops
}  // namespace tessera

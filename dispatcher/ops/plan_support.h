// Helpers for the plan functions of ops (Note [Call plans] in dispatcher/call_plan.h).
#pragma once

#include <string>
#include <utility>

#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/shape.h"
#include "dispatcher/call_plan.h"
#include "dispatcher/kernel.h"

namespace tessera {
namespace ops {

// AddContiguousOutput appends to `plan` an output of `sizes` and `dtype`, contiguous, with the
// checks and errors a Meta function's Empty made: the element count, then the strides. A plan
// function clears `plan->outputs` before its first, so that its plan never depends on what the
// caller's held.
inline absl::Status AddContiguousOutput(CallPlan* plan, IntArrayRef sizes, ScalarType dtype) {
  TensorSpec& out = plan->outputs.emplace_back();
  out.sizes.assign(sizes.begin(), sizes.end());
  out.dtype = dtype;
  // The common case in one pass: every size positive and the element count within int64, so
  // each stride is the count of the dims after it. Any other shape takes the checked functions.
  out.strides.resize(sizes.size());
  int64_t numel = 1;
  bool common = true;
  for (size_t i = sizes.size(); common && i-- > 0;) {
    out.strides[i] = numel;
    common = sizes[i] > 0 && !__builtin_mul_overflow(numel, sizes[i], &numel);
  }
  if (ABSL_PREDICT_TRUE(common)) return absl::OkStatus();
  if (absl::StatusOr<int64_t> count = ComputeNumel(sizes); !count.ok()) return count.status();
  return ContiguousStridesInto(out.sizes, &out.strides);
}

// MetaKernelFromPlan: the Meta kernel of an op with a plan function (MetaFromPlan: meta tensors
// as planned), named `name` in listings and errors.
inline KernelFunction MetaKernelFromPlan(std::string name) {
  KernelFunction k;
  k.fn = &MetaFromPlan;
  k.name = std::move(name);
  return k;
}

}  // namespace ops
}  // namespace tessera

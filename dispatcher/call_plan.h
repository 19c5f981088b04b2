// CallPlan: what the dispatcher knows about a call before its kernel runs, computed once and
// handed on (Note [Call plans]).
#pragma once

#include <optional>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/generator.h"
#include "core/shape.h"
#include "dispatcher/value.h"

namespace tessera {

class OperatorHandle;

// Note [Call plans]
// As in PyTorch's structured kernels, an op's meta step is the single place that checks a
// call's arguments and works out its outputs: their sizes, strides and dtype, the dtype the op
// computes in, and the device. The dispatcher runs it once per call and hands the result on,
// so that nothing downstream computes it again:
//   - a derived functional form allocates its outputs from the plan (Note [Variants]);
//   - out= outputs are checked and resized against it, in-place selfs checked;
//   - the kernel reads the plan from its stack (C ABI: tsr_stack_get_call_plan) instead of
//     recomputing the result type or the output shape;
//   - the kernel's results are checked against it (Note [Kernel results]).
// A plan is computed without allocating: ops with a plan function (PlanFn; the pointwise ops,
// the matrix products, the reductions and copy_, the hottest small calls) fill it directly,
// and their Meta kernel is derived from the plan function (MetaFromPlan; copy_'s returns self
// itself). For the other ops the plan is read off the tensors their Meta kernel returns (one
// meta allocation per output), until they get plan functions of their own.
// The plan lives on the caller's C++ stack for the duration of the call; a kernel must not
// keep pointers into it.

// TensorSpec: one output as the plan describes it, before it exists.
struct TensorSpec {
  DimVector sizes;
  DimVector strides;
  ScalarType dtype = ScalarType::kFloat32;
};

struct CallPlan {
  // One per return of the op's functional form; empty when the op has no Meta function (then
  // the plan says nothing about outputs and the kernel computes them itself).
  absl::InlinedVector<TensorSpec, 1> outputs;
  // The dtype the op computes in, where its plan function says: the promoted dtype for
  // pointwise ops (also for comparisons, whose output is bool; float32 for integer true
  // division). Unset for ops planned from a Meta kernel.
  std::optional<ScalarType> compute_dtype;
  // Where the outputs live: the device of the call (Note [Dispatch key from devices]).
  Device device;
  // A random op's draw (Note [Random numbers] in core/generator.h): the seed and offset its
  // kernel's numbers come from, reserved from the call's generator when the plan was computed.
  std::optional<PhiloxState> rng;

  bool has_outputs() const { return !outputs.empty(); }
  // Whether the plan says nothing (no outputs, no draw): then no plan is attached to the stack.
  bool is_empty() const { return outputs.empty() && !rng; }
};

// PlanFn fills `plan->outputs` and `plan->compute_dtype` for a call of the functional op `op`
// whose inputs are the first values of `args` (an out= form's stack has its outputs after
// them), or returns the error the op's Meta function would. It must not allocate tensors. On
// an error `*plan` is unspecified (a half-filled output): callers drop it.
using PlanFn = absl::Status (*)(const void* context, const OperatorHandle& op, const Stack& args,
                                CallPlan* plan);

class UnboxedArgs;
// UnboxedPlanFn: the same plan function over an unboxed call's arguments (Note [The unboxed fast
// path] in dispatcher/unboxed_call.cc); both are instances of one template. An op with one may
// have its calls prepared (Note [Prepared calls] in dispatcher/prepared_call.cc): its plan is
// then computed once and reused for every later call whose arguments have the same kinds, the
// same Scalar values and tensors of the same dtype, device, sizes and strides. So an unboxed
// plan function reads nothing else: no element, no storage offset, no global setting (a random
// op, whose plan reserves a draw, has none).
using UnboxedPlanFn = absl::Status (*)(const void* context, const OperatorHandle& op,
                                       const UnboxedArgs& args, CallPlan* plan);

struct PlanFunction {
  PlanFn fn = nullptr;
  const void* context = nullptr;
  UnboxedPlanFn unboxed = nullptr;  // optional: the op's calls then may take the fast path
};

// PlanScope attaches `plan` to `stack` while a kernel runs on it, and restores what was there.
class PlanScope {
 public:
  PlanScope(Stack* stack, const CallPlan* plan) : stack_(stack), saved_(stack->plan_) {
    stack->plan_ = plan;
  }
  ~PlanScope() { stack_->plan_ = saved_; }
  PlanScope(const PlanScope&) = delete;
  PlanScope& operator=(const PlanScope&) = delete;

 private:
  Stack* stack_;
  const CallPlan* saved_;
};

// MetaFromPlan: the Meta kernel of an op with a plan function: meta tensors as planned.
absl::Status MetaFromPlan(void* context, const OperatorHandle& op, Stack* stack);

}  // namespace tessera

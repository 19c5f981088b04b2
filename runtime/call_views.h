// Tensor views and call plans in their C form (tsr_tensor_view, tsr_call_plan, ABI 1.1): what
// tsr_stack_get_tensor_views and tsr_stack_get_call_plan hand out, and what a packed kernel
// call (runtime/kernel.cc) carries. Internal to runtime/.
#pragma once

#include <cstddef>

#include "core/tensor.h"
#include "dispatcher/call_plan.h"
#include "tessera/c/kernel.h"

namespace tessera {
namespace capi {

// FillView fills `*view` (of `size` bytes, at least sizeof(tsr_tensor_view); the rest zeroed)
// with a view of `t`.
void FillView(const TensorImpl& t, tsr_tensor_view* view, size_t size = sizeof(tsr_tensor_view));

// PlanToC: the C form of a call's plan; a call without one (NULL) has compute dtype -1 and no
// outputs.
tsr_call_plan PlanToC(const CallPlan* plan);

}  // namespace capi
}  // namespace tessera

// Tensor views and call plans in their C form (tsr_tensor_view, tsr_call_plan, ABI 1.1): what
// tsr_stack_get_tensor_views and tsr_stack_get_call_plan hand out, and what a packed kernel
// call (runtime/kernel.cc) carries. Internal to runtime/.
#pragma once

#include <cstddef>
#include <cstring>

#include "core/tensor.h"
#include "dispatcher/call_plan.h"
#include "tessera/c/kernel.h"

namespace tessera {
namespace capi {

// FillView fills `*view` (of `size` bytes, at least sizeof(tsr_tensor_view); the rest zeroed)
// with a view of `t`. Inline, as PlanToC: every packed kernel call makes one per tensor.
inline void FillView(const TensorImpl& t, tsr_tensor_view* v,
                     size_t size = sizeof(tsr_tensor_view)) {
  if (size > sizeof(tsr_tensor_view)) {
    std::memset(reinterpret_cast<unsigned char*>(v) + sizeof(tsr_tensor_view), 0,
                size - sizeof(tsr_tensor_view));
  }
  v->struct_size = size;
  v->tensor = reinterpret_cast<tsr_tensor*>(const_cast<TensorImpl*>(&t));
  v->data = t.data_ptr();
  v->sizes = t.sizes().data();
  v->strides = t.strides().data();
  v->storage_offset = t.storage_offset();
  v->numel = t.numel();
  v->device = tsr_device{static_cast<int32_t>(t.device().type), t.device().index};
  v->dtype = static_cast<int32_t>(t.dtype());
  v->ndim = static_cast<int32_t>(t.dim());
  v->flags =
      (t.is_contiguous() ? TSR_VIEW_CONTIGUOUS : 0u) | (t.immutable_id() ? TSR_VIEW_IMMUTABLE : 0u);
  v->reserved = 0;
}

// PlanToC: the C form of a call's plan; a call without one (NULL) has compute dtype -1 and no
// outputs.
inline tsr_call_plan PlanToC(const CallPlan* p) {
  tsr_call_plan c;
  c.struct_size = sizeof c;
  c.compute_dtype = p != nullptr && p->compute_dtype ? static_cast<int32_t>(*p->compute_dtype) : -1;
  c.num_outputs = p != nullptr ? static_cast<int32_t>(p->outputs.size()) : 0;
  c.device = p != nullptr ? tsr_device{static_cast<int32_t>(p->device.type), p->device.index}
                          : tsr_device{TSR_DEVICE_CPU, 0};
  const PhiloxState rng = p != nullptr && p->rng ? *p->rng : PhiloxState{};
  c.rng_seed = rng.seed;
  c.rng_offset = rng.offset;
  return c;
}

}  // namespace capi
}  // namespace tessera

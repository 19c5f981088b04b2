// The C ABI's tensor views and call plans (since 1.1): what a kernel's hot path reads, one call
// for all its tensor arguments and one for the plan the dispatcher computed (Note [Call plans]
// in dispatcher/call_plan.h), instead of a table call per tensor property.
#include "runtime/call_views.h"

#include <cstring>

#include "absl/strings/str_format.h"
#include "dispatcher/call_plan.h"
#include "runtime/handles.h"
#include "runtime/struct_sizes.h"
#include "tessera/c/kernel.h"

using namespace tessera;        // NOLINT: this file only implements the C entry points
using namespace tessera::capi;  // NOLINT

namespace {

tsr_error* Invalid(std::string message) {
  return MakeError(absl::StatusCode::kInvalidArgument, std::move(message));
}

// The struct is new in 1.1: every caller's element is at least this large; a caller built
// against a later minor states a larger size, whose extra fields are zeroed.
constexpr size_t kViewSize = sizeof(tsr_tensor_view);

tsr_error* CheckViewSize(const tsr_tensor_view* views, size_t count, const char* fn) {
  if (count == 0) return nullptr;
  if (views == nullptr)
    return Invalid(absl::StrFormat("%s: views is NULL but count is %d", fn, count));
  const size_t stride = views[0].struct_size;
  if (stride < kViewSize || stride % alignof(tsr_tensor_view) != 0) {
    return Invalid(absl::StrFormat(
        "%s: views[0].struct_size is %d; expected sizeof(tsr_tensor_view) as the caller was "
        "built with (at least %d, a multiple of %d)",
        fn, stride, kViewSize, alignof(tsr_tensor_view)));
  }
  return nullptr;
}

tsr_tensor_view* At(tsr_tensor_view* views, size_t stride, size_t k) {
  return reinterpret_cast<tsr_tensor_view*>(reinterpret_cast<unsigned char*>(views) + k * stride);
}

void Clear(tsr_tensor_view* v, size_t stride) {
  std::memset(v, 0, stride);
  v->struct_size = stride;
  v->ndim = -1;
}

void FillSpec(tsr_tensor_view* v, size_t stride, const TensorSpec& spec, Device device) {
  std::memset(v, 0, stride);
  v->struct_size = stride;
  int64_t numel = 1;
  for (int64_t s : spec.sizes) numel *= s;  // planned shapes were checked when planned
  v->sizes = spec.sizes.data();
  v->strides = spec.strides.data();
  v->numel = numel;
  v->device = tsr_device{static_cast<int32_t>(device.type), device.index};
  v->dtype = static_cast<int32_t>(spec.dtype);
  v->ndim = static_cast<int32_t>(spec.sizes.size());
  v->flags = IsContiguousLayout(spec.sizes, spec.strides) ? TSR_VIEW_CONTIGUOUS : 0u;
}

}  // namespace

extern "C" {

tsr_error* tsr_stack_get_tensor_views(const tsr_stack* stack, size_t first, size_t count,
                                      tsr_tensor_view* views) {
  constexpr const char* fn = "tsr_stack_get_tensor_views";
  if (stack == nullptr) return Invalid(absl::StrFormat("%s: expected a stack, got NULL", fn));
  if (tsr_error* e = CheckViewSize(views, count, fn)) return e;
  const Stack& s = *Unwrap(stack);
  if (first > s.size() || count > s.size() - first) {
    return MakeError(absl::StatusCode::kOutOfRange,
                     absl::StrFormat("%s: values [%d, %d) are out of range for a stack of %d "
                                     "values",
                                     fn, first, first + count, s.size()));
  }
  const size_t stride = count != 0 ? views[0].struct_size : 0;
  for (size_t k = 0; k < count; ++k) {
    const Value& v = s[first + k];
    if (v.is_tensor() && v.tensor().defined()) {
      FillView(*v.tensor().impl(), At(views, stride, k), stride);
    } else {
      Clear(At(views, stride, k), stride);
    }
  }
  return nullptr;
}

tsr_error* tsr_stack_get_call_plan(const tsr_stack* stack, tsr_call_plan* plan,
                                   tsr_tensor_view* outputs, size_t capacity) {
  constexpr const char* fn = "tsr_stack_get_call_plan";
  if (stack == nullptr) return Invalid(absl::StrFormat("%s: expected a stack, got NULL", fn));
  if (plan == nullptr) return Invalid(absl::StrFormat("%s: expected a plan pointer, got NULL", fn));
  // The fields up to `device` exist in every tsr_call_plan (new in 1.1); the draw's since 1.2.
  if (plan->struct_size < size_in_1_1::tsr_call_plan) {
    return Invalid(absl::StrFormat(
        "%s: plan->struct_size is %d; expected sizeof(tsr_call_plan) (at least %d, ABI 1.1's)", fn,
        plan->struct_size, size_in_1_1::tsr_call_plan));
  }
  if (tsr_error* e = CheckViewSize(outputs, capacity, fn)) return e;
  if (plan->struct_size > sizeof(tsr_call_plan)) {  // a later minor's fields: none planned
    std::memset(reinterpret_cast<unsigned char*>(plan) + sizeof(tsr_call_plan), 0,
                plan->struct_size - sizeof(tsr_call_plan));
  }
  const CallPlan* p = Unwrap(stack)->plan();
  const tsr_call_plan c = PlanToC(p);
  plan->compute_dtype = c.compute_dtype;
  plan->num_outputs = c.num_outputs;
  plan->device = c.device;
  if (plan->struct_size >= TESSERA_STRUCT_END(tsr_call_plan, rng_offset)) {
    plan->rng_seed = c.rng_seed;
    plan->rng_offset = c.rng_offset;
  }
  if (p == nullptr) return nullptr;
  const size_t stride = capacity != 0 ? outputs[0].struct_size : 0;
  for (size_t j = 0; j < capacity && j < p->outputs.size(); ++j) {
    FillSpec(At(outputs, stride, j), stride, p->outputs[j], p->device);
  }
  return nullptr;
}

}  // extern "C"

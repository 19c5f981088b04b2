#include "dispatcher/call_plan.h"

#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "dispatcher/internal/operator_entry.h"

namespace tessera {

absl::Status MetaFromPlan(void*, const OperatorHandle& op, Stack* stack) {
  const PlanFunction* f = op.entry()->plan.load(std::memory_order_acquire);
  if (f == nullptr) {
    return absl::InternalError(
        absl::StrFormat("%s: its Meta kernel needs a plan function, and it has none", op.name()));
  }
  CallPlan plan;
  TSR_RETURN_IF_ERROR(f->fn(f->context, op, *stack, &plan));
  stack->clear();
  for (const TensorSpec& spec : plan.outputs) {
    TSR_ASSIGN_OR_RETURN(
        Tensor out, EmptyStrided(spec.sizes, spec.strides, spec.dtype, Device(DeviceType::kMeta)));
    stack->push_back(std::move(out));
  }
  return absl::OkStatus();
}

}  // namespace tessera

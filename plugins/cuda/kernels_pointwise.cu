// The GPU kernels of the pointwise ops beyond arithmetic (pointwise_ops.h; Note [GPU pointwise
// families]), one source for CUDA (nvcc) and HIP (hipcc, TESSERA_GPU_HIP).
#include "kernel_launch.h"

namespace tessera {
namespace gpu {

std::string LaunchPointwise(PointwiseKind kind, int32_t compute, const ElementwisePlan& plan,
                            const PointwiseParams& params, void* stream) {
  if (plan.num_operands != PointwiseArity(kind) + 1) {
    return "the op takes " + std::to_string(PointwiseArity(kind)) + " inputs, the plan has " +
           std::to_string(plan.num_operands - 1);
  }
  return Dispatch<kAllDtypes>(compute, [&](auto tag) {
    using S = typename decltype(tag)::type;
    return VisitPointwise<S>(kind, params, [&](const auto& op, auto fast) {
      using Op = std::decay_t<decltype(op)>;
      return Launch<S, Op::kArity + 1, Op, decltype(fast)::value>(plan, op, stream);
    });
  });
}

}  // namespace gpu
}  // namespace tessera

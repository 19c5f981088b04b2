// The GPU plugin's activations and their backward ops (op set 1.2) as out= kernels on the
// pointwise families (pointwise_ops.h: FloatUnaryOp, ExactUnaryOp's threshold, ClampOp for
// hardtanh, ActivationBackwardOp). The plan has made every check that is op semantics; the
// Scalars travel as the launch's constants, converted to the compute dtype there. celu, selu and
// mish_backward are the runtime's composites.
#include <string>
#include <string_view>

#include "elementwise_ops.h"
#include "tessera/base/op_checks.hpp"
#include "tessera/sdk/plugin.hpp"

namespace tessera {
namespace gpu {
namespace {

namespace sdk = ::tessera::sdk;
using sdk::KernelContext;
using sdk::Scalar;
using sdk::TensorView;
using K = PointwiseKind;

PointwiseParams Args(std::initializer_list<Scalar> scalars) {
  PointwiseParams p;
  int i = 0;
  for (const Scalar& s : scalars) p.args[i++] = ValueOf(s);
  return p;
}

// A forward activation: out = f(self).
TensorView Forward(const KernelContext& ctx, const char* op, K kind, const TensorView& self,
                   const TensorView& out, const PointwiseParams& params = {}) {
  RunPointwise(op, kind, Compute(ctx), out, {TensorOperand(op, self, "self")}, params);
  return out;
}

// A backward op: grad_input = f(grad_output, x); `x_name`: x's argument (self, output,
// self_or_result), for the errors.
TensorView Backward(const KernelContext& ctx, const char* op, K kind, const TensorView& grad,
                    const TensorView& x, const TensorView& out, const PointwiseParams& params = {},
                    const char* x_name = "self") {
  RunPointwise(op, kind, Compute(ctx), out,
               {TensorOperand(op, grad, "grad_output"), TensorOperand(op, x, x_name)}, params);
  return out;
}

// hardtanh.out: clamp with both bounds (integers too, the limits converted to the dtype).
TensorView HardtanhOut(const KernelContext& ctx, const TensorView& self, Scalar min_val,
                       Scalar max_val, const TensorView& out) {
  const char* op = "hardtanh.out";
  const int32_t c = Compute(ctx);
  Clamp(op, c, out, TensorOperand(op, self, "self"), ScalarOperand(min_val, c),
        ScalarOperand(max_val, c));
  return out;
}
TensorView LeakyReluOut(const KernelContext& ctx, const TensorView& self, Scalar slope,
                        const TensorView& out) {
  return Forward(ctx, "leaky_relu.out", K::kLeakyRelu, self, out, Args({slope}));
}
TensorView EluOut(const KernelContext& ctx, const TensorView& self, Scalar alpha, Scalar scale,
                  Scalar input_scale, const TensorView& out) {
  return Forward(ctx, "elu.out", K::kElu, self, out, Args({alpha, scale, input_scale}));
}
TensorView HardswishOut(const KernelContext& ctx, const TensorView& self, const TensorView& out) {
  return Forward(ctx, "hardswish.out", K::kHardswish, self, out);
}
TensorView HardsigmoidOut(const KernelContext& ctx, const TensorView& self, const TensorView& out) {
  return Forward(ctx, "hardsigmoid.out", K::kHardsigmoid, self, out);
}
TensorView SoftplusOut(const KernelContext& ctx, const TensorView& self, Scalar beta,
                       Scalar threshold, const TensorView& out) {
  return Forward(ctx, "softplus.out", K::kSoftplus, self, out, Args({beta, threshold}));
}
TensorView MishOut(const KernelContext& ctx, const TensorView& self, const TensorView& out) {
  return Forward(ctx, "mish.out", K::kMish, self, out);
}
TensorView ThresholdOut(const KernelContext& ctx, const TensorView& self, Scalar threshold,
                        Scalar value, const TensorView& out) {
  return Forward(ctx, "threshold.out", K::kThreshold, self, out, Args({threshold, value}));
}
TensorView HardshrinkOut(const KernelContext& ctx, const TensorView& self, Scalar lambd,
                         const TensorView& out) {
  return Forward(ctx, "hardshrink.out", K::kHardshrink, self, out, Args({lambd}));
}
TensorView SoftshrinkOut(const KernelContext& ctx, const TensorView& self, Scalar lambd,
                         const TensorView& out) {
  return Forward(ctx, "softshrink.out", K::kSoftshrink, self, out, Args({lambd}));
}

TensorView ThresholdBackwardOut(const KernelContext& ctx, const TensorView& grad,
                                const TensorView& self, Scalar threshold, const TensorView& out) {
  return Backward(ctx, "threshold_backward.grad_input", K::kThresholdBackward, grad, self, out,
                  Args({threshold}));
}
TensorView GeluBackwardOut(const KernelContext& ctx, const TensorView& grad, const TensorView& self,
                           std::string_view approximate, const TensorView& out) {
  const char* op = "gelu_backward.grad_input";
  if (approximate == "none") return Backward(ctx, op, K::kGeluBackward, grad, self, out);
  if (approximate == "tanh") return Backward(ctx, op, K::kGeluTanhBackward, grad, self, out);
  sdk::fail(TSR_INVALID_ARGUMENT, std::string(op) + ": " +
                                      base::gelu_approximate_error(approximate) + ", got '" +
                                      std::string(approximate) + "'");
}
TensorView SiluBackwardOut(const KernelContext& ctx, const TensorView& grad, const TensorView& self,
                           const TensorView& out) {
  return Backward(ctx, "silu_backward.grad_input", K::kSiluBackward, grad, self, out);
}
TensorView SigmoidBackwardOut(const KernelContext& ctx, const TensorView& grad,
                              const TensorView& output, const TensorView& out) {
  return Backward(ctx, "sigmoid_backward.grad_input", K::kSigmoidBackward, grad, output, out, {},
                  "output");
}
TensorView TanhBackwardOut(const KernelContext& ctx, const TensorView& grad,
                           const TensorView& output, const TensorView& out) {
  return Backward(ctx, "tanh_backward.grad_input", K::kTanhBackward, grad, output, out, {},
                  "output");
}
TensorView HardtanhBackwardOut(const KernelContext& ctx, const TensorView& grad,
                               const TensorView& self, Scalar min_val, Scalar max_val,
                               const TensorView& out) {
  return Backward(ctx, "hardtanh_backward.grad_input", K::kHardtanhBackward, grad, self, out,
                  Args({min_val, max_val}));
}
// self_is_result changes nothing here: the plan refused a negative slope with a result.
TensorView LeakyReluBackwardOut(const KernelContext& ctx, const TensorView& grad,
                                const TensorView& self, Scalar slope, bool /*self_is_result*/,
                                const TensorView& out) {
  return Backward(ctx, "leaky_relu_backward.grad_input", K::kLeakyReluBackward, grad, self, out,
                  Args({slope}));
}
TensorView EluBackwardOut(const KernelContext& ctx, const TensorView& grad, Scalar alpha,
                          Scalar scale, Scalar input_scale, bool is_result,
                          const TensorView& self_or_result, const TensorView& out) {
  return Backward(ctx, "elu_backward.grad_input",
                  is_result ? K::kEluBackwardOfResult : K::kEluBackward, grad, self_or_result, out,
                  Args({alpha, scale, input_scale}), "self_or_result");
}
TensorView HardswishBackwardOut(const KernelContext& ctx, const TensorView& grad,
                                const TensorView& self, const TensorView& out) {
  return Backward(ctx, "hardswish_backward.out", K::kHardswishBackward, grad, self, out);
}
TensorView HardsigmoidBackwardOut(const KernelContext& ctx, const TensorView& grad,
                                  const TensorView& self, const TensorView& out) {
  return Backward(ctx, "hardsigmoid_backward.grad_input", K::kHardsigmoidBackward, grad, self, out);
}
TensorView SoftplusBackwardOut(const KernelContext& ctx, const TensorView& grad,
                               const TensorView& self, Scalar beta, Scalar threshold,
                               const TensorView& out) {
  return Backward(ctx, "softplus_backward.grad_input", K::kSoftplusBackward, grad, self, out,
                  Args({beta, threshold}));
}
// hardshrink_backward.grad_input and softshrink_backward.grad_input: one formula.
template <bool kSoft>
TensorView ShrinkBackwardOut(const KernelContext& ctx, const TensorView& grad,
                             const TensorView& self, Scalar lambd, const TensorView& out) {
  return Backward(ctx, kSoft ? "softshrink_backward.grad_input" : "hardshrink_backward.grad_input",
                  K::kShrinkBackward, grad, self, out, Args({lambd}));
}

}  // namespace

void RegisterActivationOps(sdk::Library& lib) {
  lib.impl<&HardtanhOut>(TESSERA_OP("hardtanh.out"));
  lib.impl<&LeakyReluOut>(TESSERA_OP("leaky_relu.out"));
  lib.impl<&EluOut>(TESSERA_OP("elu.out"));
  lib.impl<&HardswishOut>(TESSERA_OP("hardswish.out"));
  lib.impl<&HardsigmoidOut>(TESSERA_OP("hardsigmoid.out"));
  lib.impl<&SoftplusOut>(TESSERA_OP("softplus.out"));
  lib.impl<&MishOut>(TESSERA_OP("mish.out"));
  lib.impl<&ThresholdOut>(TESSERA_OP("threshold.out"));
  lib.impl<&HardshrinkOut>(TESSERA_OP("hardshrink.out"));
  lib.impl<&SoftshrinkOut>(TESSERA_OP("softshrink.out"));
  lib.impl<&ThresholdBackwardOut>(TESSERA_OP("threshold_backward.grad_input"));
  lib.impl<&GeluBackwardOut>(TESSERA_OP("gelu_backward.grad_input"));
  lib.impl<&SiluBackwardOut>(TESSERA_OP("silu_backward.grad_input"));
  lib.impl<&SigmoidBackwardOut>(TESSERA_OP("sigmoid_backward.grad_input"));
  lib.impl<&TanhBackwardOut>(TESSERA_OP("tanh_backward.grad_input"));
  lib.impl<&HardtanhBackwardOut>(TESSERA_OP("hardtanh_backward.grad_input"));
  lib.impl<&LeakyReluBackwardOut>(TESSERA_OP("leaky_relu_backward.grad_input"));
  lib.impl<&EluBackwardOut>(TESSERA_OP("elu_backward.grad_input"));
  lib.impl<&HardswishBackwardOut>(TESSERA_OP("hardswish_backward.out"));
  lib.impl<&HardsigmoidBackwardOut>(TESSERA_OP("hardsigmoid_backward.grad_input"));
  lib.impl<&SoftplusBackwardOut>(TESSERA_OP("softplus_backward.grad_input"));
  lib.impl<&ShrinkBackwardOut<false>>(TESSERA_OP("hardshrink_backward.grad_input"));
  lib.impl<&ShrinkBackwardOut<true>>(TESSERA_OP("softshrink_backward.grad_input"));
}

}  // namespace gpu
}  // namespace tessera

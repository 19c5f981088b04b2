// The backward ops of op sets 1.7-1.9's gated and pointwise activations (op set 1.10), as
// composites over the pointwise ops so that every backend has them: log_sigmoid_backward,
// glu_backward and logit_backward with their .grad_input forms, and _prelu_kernel_backward. Each
// computes what ATen's CPU kernel computes, element by element, for grad_output g:
//
//   log_sigmoid_backward(g, x, buffer): (x < 0 ? 1 - q : q) * g with q = buffer / (1 + buffer),
//     the buffer being log_sigmoid_forward's exp(-|x|), so that both branches are sigmoid(-x)
//     without an overflowing exp. As ATen's CPU kernel, the buffer's values are used (its CUDA
//     kernel ignores them and recomputes from x).
//   glu_backward(g, x, dim), x = [a, b] halved along dim: [sigmoid(b) * g,
//     (1 - sigmoid(b)) * sigmoid(b) * a * g], g broadcast to a half's shape.
//   logit_backward(g, x, eps): g / (x (1 - x)) inside [lo, hi], outside it NaN without eps (or
//     eps < 0; [lo, hi] = [0, 1]) and 0 with it ([lo, hi] = [eps, 1 - eps], the clamp's flat
//     parts); the bounds in the input's dtype, as ATen's kernel rounds them. At x = 0 or 1 inside
//     the bounds, g * inf (g / +0), as its scalar path; a NaN x gives NaN.
//   _prelu_kernel_backward(g, x, w): (x > 0 ? g : w * g, x > 0 ? 0 : x * g), both of the shape x,
//     w and g broadcast to. As ATen's, the weight's gradient is not summed back to the weight's
//     shape: autograd's engine does that (a traced graph shows the sum after this op).
//
// Operands are broadcast together as ATen's TensorIterator broadcasts them; all of one dtype
// (ATen's "Found dtype ... but expected ..."), except logit_backward's, which promote as a binary
// op. Floating dtypes only. The 16-bit floats compute in float32 and round once (Opmath), as
// ATen's reduced-float kernels do; _prelu_kernel_backward rounds once in any dtype already.
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "core/dtype.h"
#include "core/half.h"
#include "core/shape.h"
#include "core/type_promotion.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {
namespace {

Value Number(double v) { return Value(Scalar(v)); }

// SameDtype: `t` (argument `name`) has `self`'s dtype, with ATen's TensorIterator message.
absl::Status SameDtype(const OperatorHandle& op, const char* name, const Tensor& t,
                       const Tensor& self) {
  if (t.dtype() == self.dtype()) return absl::OkStatus();
  return Invalid(op,
                 absl::StrFormat("Found dtype %s but expected %s (%s against self)",
                                 ScalarTypeName(t.dtype()), ScalarTypeName(self.dtype()), name));
}

// Broadcast: the shape `tensors` broadcast to together, or ATen's refusal.
absl::StatusOr<DimVector> Broadcast(const OperatorHandle& op, std::vector<const Tensor*> tensors) {
  DimVector shape(tensors[0]->sizes().begin(), tensors[0]->sizes().end());
  for (size_t i = 1; i < tensors.size(); ++i) {
    absl::StatusOr<DimVector> next = BroadcastShapes(shape, tensors[i]->sizes());
    if (!next.ok()) return Invalid(op, std::string(next.status().message()));
    shape = *std::move(next);
  }
  return shape;
}

// ---- log_sigmoid_backward ----

// log_sigmoid_backward(grad_output, self, buffer)
absl::StatusOr<Tensor> LogSigmoidBackwardOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& grad = s[0].tensor();
  const Tensor& self = s[1].tensor();
  const Tensor& buffer = s[2].tensor();
  TSR_RETURN_IF_ERROR(SameDtype(op, "grad_output", grad, self));
  TSR_RETURN_IF_ERROR(SameDtype(op, "buffer", buffer, self));
  if (!IsFloatingType(self.dtype())) return NotFloating(op, self.dtype());
  TSR_RETURN_IF_ERROR(Broadcast(op, {&grad, &self, &buffer}).status());
  OpRegistry& r = op.registry();
  const Opmath opmath(self.dtype());
  TSR_ASSIGN_OR_RETURN(const Value g, opmath.In(r, s[0]));
  TSR_ASSIGN_OR_RETURN(const Value x, opmath.In(r, s[1]));
  TSR_ASSIGN_OR_RETURN(const Value b, opmath.In(r, s[2]));
  TSR_ASSIGN_OR_RETURN(Tensor denominator, CallOne(r, "add.Scalar", {b, Number(1), Number(1)}));
  TSR_ASSIGN_OR_RETURN(Tensor q, CallOne(r, "div.Tensor", {b, Value(denominator)}));
  TSR_ASSIGN_OR_RETURN(Tensor rest, CallOne(r, "rsub.Scalar", {Value(q), Number(1), Number(1)}));
  TSR_ASSIGN_OR_RETURN(Tensor negative, CallOne(r, "lt.Scalar", {x, Number(0)}));
  TSR_ASSIGN_OR_RETURN(Tensor slope,
                       CallOne(r, "where.self", {Value(negative), Value(rest), Value(q)}));
  TSR_ASSIGN_OR_RETURN(Tensor grad_input, CallOne(r, "mul.Tensor", {Value(slope), g}));
  return opmath.Out(r, std::move(grad_input));
}

// ---- glu_backward ----

// glu_backward(grad_output, self, dim)
absl::StatusOr<Tensor> GluBackwardOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& grad = s[0].tensor();
  const Tensor& self = s[1].tensor();
  if (self.dim() == 0) return Invalid(op, "glu does not support 0-dimensional tensors");
  TSR_ASSIGN_OR_RETURN(const int64_t dim, WrapDim(s[2].to_int(), self.dim(), op.name()));
  const int64_t size = self.sizes()[dim];
  if (size % 2 != 0) {
    return Invalid(
        op,
        absl::StrFormat("Halving dimension must be even, but dimension %d is size %d", dim, size));
  }
  TSR_RETURN_IF_ERROR(SameDtype(op, "grad_output", grad, self));
  if (!IsFloatingType(self.dtype())) return NotFloating(op, self.dtype());
  DimVector half(self.sizes().begin(), self.sizes().end());
  half[dim] = size / 2;
  TSR_RETURN_IF_ERROR(
      CheckBroadcastsTo(op, "grad_output", grad.sizes(), half, "glu's output shape"));
  OpRegistry& r = op.registry();
  const Opmath opmath(self.dtype());
  TSR_ASSIGN_OR_RETURN(const Value g, opmath.In(r, s[0]));
  TSR_ASSIGN_OR_RETURN(const Tensor first, Narrow(self, dim, 0, size / 2));
  TSR_ASSIGN_OR_RETURN(const Tensor second, Narrow(self, dim, size / 2, size / 2));
  TSR_ASSIGN_OR_RETURN(const Value a, opmath.In(r, Value(first)));
  TSR_ASSIGN_OR_RETURN(const Value b, opmath.In(r, Value(second)));
  TSR_ASSIGN_OR_RETURN(Tensor gate, CallOne(r, "sigmoid", {b}));
  TSR_ASSIGN_OR_RETURN(Tensor grad_a, CallOne(r, "mul.Tensor", {Value(gate), g}));
  // (1 - sigmoid(b)) * sigmoid(b) * a * g, in ATen's order of products.
  TSR_ASSIGN_OR_RETURN(Tensor closed,
                       CallOne(r, "rsub.Scalar", {Value(gate), Number(1), Number(1)}));
  TSR_ASSIGN_OR_RETURN(Tensor grad_b, CallOne(r, "mul.Tensor", {Value(closed), Value(gate)}));
  TSR_ASSIGN_OR_RETURN(grad_b, CallOne(r, "mul.Tensor", {Value(grad_b), a}));
  TSR_ASSIGN_OR_RETURN(grad_b, CallOne(r, "mul.Tensor", {Value(grad_b), g}));
  TSR_ASSIGN_OR_RETURN(Tensor grad_input,
                       CallOne(r, "cat", {Value(std::vector<Tensor>{grad_a, grad_b}), Value(dim)}));
  return opmath.Out(r, std::move(grad_input));
}

// ---- logit_backward ----

// InDtype: `v` as ATen's kernel holds a bound in `dtype` (its scalar_t).
double InDtype(double v, ScalarType dtype) {
  switch (dtype) {
    case ScalarType::kFloat32:
      return static_cast<float>(v);
    case ScalarType::kFloat16:
      return static_cast<float>(Half(static_cast<float>(v)));
    case ScalarType::kBFloat16:
      return static_cast<float>(BFloat16(static_cast<float>(v)));
    default:
      return v;
  }
}

// logit_backward(grad_output, self, eps=None)
absl::StatusOr<Tensor> LogitBackwardOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& grad = s[0].tensor();
  const Tensor& self = s[1].tensor();
  ResultTypeBuilder promoted;
  promoted.AddTensor(grad.dtype(), grad.dim());
  promoted.AddTensor(self.dtype(), self.dim());
  const ScalarType dtype = promoted.Result();
  if (!IsFloatingType(dtype)) return NotFloating(op, dtype);
  TSR_RETURN_IF_ERROR(Broadcast(op, {&grad, &self}).status());
  // The bounds: scalar_t(eps) and scalar_t(1) - scalar_t(eps), each rounded to the dtype.
  const double eps = s[2].is_none() ? -1.0 : s[2].to_double();
  const bool clamped = InDtype(eps, dtype) >= 0;
  const double lo = clamped ? InDtype(eps, dtype) : 0.0;
  const double hi = clamped ? InDtype(1.0 - lo, dtype) : 1.0;
  OpRegistry& r = op.registry();
  const Opmath opmath(dtype);
  // Both operands in the compute dtype (a promoted one converted, as the binary op casts it).
  TSR_ASSIGN_OR_RETURN(const Value g, opmath.In(r, s[0]));
  TSR_ASSIGN_OR_RETURN(const Value x, opmath.In(r, s[1]));
  TSR_ASSIGN_OR_RETURN(Tensor rest, CallOne(r, "rsub.Scalar", {x, Number(1), Number(1)}));
  TSR_ASSIGN_OR_RETURN(Tensor denominator, CallOne(r, "mul.Tensor", {x, Value(rest)}));
  // |x (1 - x)|: the same inside the bounds, where it is >= 0, except that x = -0.0 divides by
  // +0 as the kernel's x == 0 test (g * inf) does. Outside, the value is replaced.
  TSR_ASSIGN_OR_RETURN(denominator, CallOne(r, "abs", {Value(denominator)}));
  TSR_ASSIGN_OR_RETURN(Tensor grad_input, CallOne(r, "div.Tensor", {g, Value(denominator)}));
  TSR_ASSIGN_OR_RETURN(Tensor low, CallOne(r, "lt.Scalar", {x, Number(lo)}));
  TSR_ASSIGN_OR_RETURN(Tensor high, CallOne(r, "gt.Scalar", {x, Number(hi)}));
  TSR_ASSIGN_OR_RETURN(Tensor outside, CallOne(r, "logical_or", {Value(low), Value(high)}));
  // A NaN x is neither below nor above: g / NaN, NaN, as in ATen's scalar path.
  TSR_ASSIGN_OR_RETURN(grad_input,
                       CallOne(r, "masked_fill.Scalar",
                               {Value(grad_input), Value(outside),
                                Number(clamped ? 0.0 : std::numeric_limits<double>::quiet_NaN())}));
  return opmath.Out(r, std::move(grad_input));
}

// ---- _prelu_kernel_backward ----

// _prelu_kernel_backward(grad_output, self, weight) -> (grad_self, grad_weight)
TensorsOr PreluKernelBackwardOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& grad = s[0].tensor();
  const Tensor& self = s[1].tensor();
  const Tensor& weight = s[2].tensor();
  TSR_RETURN_IF_ERROR(SameDtype(op, "weight", weight, self));
  TSR_RETURN_IF_ERROR(SameDtype(op, "grad_output", grad, self));
  if (!IsFloatingType(self.dtype())) return NotFloating(op, self.dtype());
  TSR_ASSIGN_OR_RETURN(const DimVector shape, Broadcast(op, {&self, &weight, &grad}));
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Tensor positive, CallOne(r, "gt.Scalar", {s[1], Number(0)}));
  TSR_ASSIGN_OR_RETURN(Tensor scaled, CallOne(r, "mul.Tensor", {s[2], s[0]}));
  TSR_ASSIGN_OR_RETURN(Tensor grad_self,
                       CallOne(r, "where.self", {Value(positive), s[0], Value(scaled)}));
  TSR_ASSIGN_OR_RETURN(Tensor grad_weight, CallOne(r, "mul.Tensor", {s[1], s[0]}));
  TSR_ASSIGN_OR_RETURN(grad_weight, CallOne(r, "masked_fill.Scalar",
                                            {Value(grad_weight), Value(positive), Number(0)}));
  // Each of the full shape (an operand may broadcast beyond the ones a gradient reads).
  std::vector<Tensor> grads{std::move(grad_self), std::move(grad_weight)};
  for (Tensor& t : grads) {
    if (SameDims(t.sizes(), shape)) continue;
    TSR_ASSIGN_OR_RETURN(Tensor full, Expand(t, shape));
    TSR_ASSIGN_OR_RETURN(t, CallOne(r, "contiguous", {Value(full)}));
  }
  return grads;
}

}  // namespace

absl::Status DefineActivationBackwardOps(OpRegistry& registry) {
  return DefineAll(
      registry,
      {
          {"log_sigmoid_backward(Tensor grad_output, Tensor self, Tensor buffer) -> Tensor",
           MakeKernel<Named<ComputeOne<LogSigmoidBackwardOf>>>("core::log_sigmoid_backward")},
          // ATen's kernel writes into grad_input itself: its dtype must be the result's.
          {"log_sigmoid_backward.grad_input(Tensor grad_output, Tensor self, Tensor buffer, *, "
           "Tensor(a!) grad_input) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<LogSigmoidBackwardOf, 3>>>(
               "core::log_sigmoid_backward_grad_input")},
          {"glu_backward(Tensor grad_output, Tensor self, int dim) -> Tensor",
           MakeKernel<Named<ComputeOne<GluBackwardOf>>>("core::glu_backward")},
          {"glu_backward.grad_input(Tensor grad_output, Tensor self, int dim, *, Tensor(a!) "
           "grad_input) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<GluBackwardOf, 3>>>("core::glu_backward_grad_input")},
          {"logit_backward(Tensor grad_output, Tensor self, float? eps=None) -> Tensor",
           MakeKernel<Named<ComputeOne<LogitBackwardOf>>>("core::logit_backward")},
          // A structured binary op: its grad_input takes any dtype the result casts to.
          {"logit_backward.grad_input(Tensor grad_output, Tensor self, float? eps=None, *, "
           "Tensor(a!) grad_input) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<LogitBackwardOf, 3, /*kCastable=*/true>>>(
               "core::logit_backward_grad_input")},
          {"_prelu_kernel_backward(Tensor grad_output, Tensor self, Tensor weight) -> (Tensor, "
           "Tensor)",
           MakeKernel<Named<PreluKernelBackwardOf>>("core::_prelu_kernel_backward")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera

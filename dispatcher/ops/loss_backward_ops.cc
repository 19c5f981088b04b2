// Op set 1.10's loss backward ops and the 2-D negative log-likelihood loss, composites over the
// pointwise ops, the reductions and op set 1.3's nll_loss_forward / nll_loss_backward, so every
// backend has them: binary_cross_entropy_backward, huber_loss_backward, smooth_l1_loss_backward,
// soft_margin_loss_backward, nll_loss2d_forward, nll_loss2d_backward and nll_loss2d.
//
// Semantics are ATen's (aten/src/ATen/native/Loss.cpp, LossNLL2d.cpp, the CPU kernels of
// smooth_l1_backward and huber_backward), with derivatives.yaml's calls from the forwards
// (op set 1.9's loss_composites.cc):
// - The mean's gradient divides by self's numel; grad_output is 0-dim for mean and sum and
//   shaped as the losses for none, and broadcasts as each ATen kernel broadcasts it (ATen checks
//   no shape beyond that).
// - Shapes and dtypes are each op's own in ATen: huber_loss_backward takes one dtype for all
//   (a plain TensorIterator) and broadcasts the three; smooth_l1_loss_backward promotes them and
//   writes self's dtype; soft_margin_loss_backward has the shape of self and target broadcast and
//   self's dtype; binary_cross_entropy_backward takes one dtype and squeezes its operands to
//   self's shape (its kernel iterates over squeezed views).
// - reduction 0 (none), 1 (mean) or 2 (sum); ATen treats any other as sum, Tessera refuses it, as
//   its forwards do.
// - 16-bit floats compute in float32 and round once (Opmath).
// - nll_loss2d_* take self [N, C, H, W] and target [N, H, W], check them with LossNLL2d.cpp's
//   messages, then move C last and call the 1-D ops on [N*H*W, C]: their dtype and bounds checks
//   (a target outside [0, C) that is not ignore_index is OUT_OF_RANGE) and arithmetic are
//   shared, and a backend's own nll_loss_forward serves both.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "core/status_macros.h"
#include "core/type_promotion.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"
#include "dispatcher/ops/loss_support.h"

namespace tessera {
namespace ops {
namespace {

Value Number(double v) { return Value(Scalar(v)); }

absl::StatusOr<DimVector> Broadcast(const OperatorHandle& op, IntArrayRef a, IntArrayRef b) {
  absl::StatusOr<DimVector> shape = BroadcastShapes(a, b);
  if (shape.ok()) return shape;
  return Invalid(
      op, absl::StrFormat("shapes %s and %s do not broadcast", ShapeToString(a), ShapeToString(b)));
}

// Norm: grad_output times the reduction's factor (1 / self's numel for the mean), in the compute
// dtype.
absl::StatusOr<Tensor> Norm(OpRegistry& r, const Value& g, int64_t reduction, int64_t numel) {
  if (reduction != kReductionMean) return g.tensor();
  return CallOne(r, "div.Scalar", {g, Number(static_cast<double>(numel))});
}

// Operands: grad_output, self and target (the stack's first three), in the compute dtype.
struct Operands {
  Value g, x, t;
};
absl::StatusOr<Operands> InCompute(OpRegistry& r, const Opmath& opmath, const Stack& s) {
  TSR_ASSIGN_OR_RETURN(Value g, opmath.In(r, s[0]));
  TSR_ASSIGN_OR_RETURN(Value x, opmath.In(r, s[1]));
  TSR_ASSIGN_OR_RETURN(Value t, opmath.In(r, s[2]));
  return Operands{std::move(g), std::move(x), std::move(t)};
}

// ScaledOut: `slope` times grad_output `g` and the reduction's factor, in the result's dtype.
absl::StatusOr<Tensor> ScaledOut(OpRegistry& r, const Opmath& opmath, const Tensor& slope,
                                 const Value& g, int64_t reduction, int64_t numel) {
  TSR_ASSIGN_OR_RETURN(Tensor scale, Norm(r, g, reduction, numel));
  TSR_ASSIGN_OR_RETURN(Tensor grad_input, CallOne(r, "mul.Tensor", {Value(slope), Value(scale)}));
  return opmath.Out(r, std::move(grad_input));
}

// Saturate: x clamped to [-k, k] as ATen's huber and smooth_l1 kernels branch: x <= -k gives -k
// first, else x >= k gives k, else x (NaN stays NaN; a negative k, which only the forwards
// refuse, branches the same way).
absl::StatusOr<Tensor> Saturate(OpRegistry& r, const Tensor& x, double k) {
  TSR_ASSIGN_OR_RETURN(Tensor high, CallOne(r, "ge.Scalar", {Value(x), Number(k)}));
  TSR_ASSIGN_OR_RETURN(Tensor low, CallOne(r, "le.Scalar", {Value(x), Number(-k)}));
  TSR_ASSIGN_OR_RETURN(Tensor v,
                       CallOne(r, "masked_fill.Scalar", {Value(x), Value(high), Number(k)}));
  return CallOne(r, "masked_fill.Scalar", {Value(v), Value(low), Number(-k)});
}

// ---- huber_loss_backward ----

// huber_loss_backward(grad_output, self, target, reduction, delta):
// norm * clamp(self - target, -delta, delta) * grad_output; one dtype for the three, broadcast.
absl::StatusOr<Tensor> HuberLossBackwardOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& grad = s[0].tensor();
  const Tensor& self = s[1].tensor();
  const Tensor& target = s[2].tensor();
  const int64_t reduction = s[3].to_int();
  const double delta = s[4].to_double();
  TSR_RETURN_IF_ERROR(CheckReduction(op, reduction));
  TSR_RETURN_IF_ERROR(SameDtype(op, self, {&target, &grad}));
  if (!IsFloatingType(self.dtype())) return NotFloating(op, self.dtype());
  TSR_ASSIGN_OR_RETURN(const DimVector pair, Broadcast(op, self.sizes(), target.sizes()));
  TSR_RETURN_IF_ERROR(Broadcast(op, pair, grad.sizes()).status());
  OpRegistry& r = op.registry();
  const Opmath opmath(self.dtype());
  TSR_ASSIGN_OR_RETURN(const Operands in, InCompute(r, opmath, s));
  const Value &g = in.g, &x = in.x, &t = in.t;
  TSR_ASSIGN_OR_RETURN(Tensor diff, CallOne(r, "sub.Tensor", {x, t, Number(1)}));
  TSR_ASSIGN_OR_RETURN(Tensor slope, Saturate(r, diff, delta));
  return ScaledOut(r, opmath, slope, g, reduction, self.numel());
}

// ---- smooth_l1_loss_backward ----

// smooth_l1_loss_backward(grad_output, self, target, reduction, beta): beta > 0:
// norm * clamp((self - target) / beta, -1, 1) * grad_output over the three broadcast, computed in
// their promoted dtype and written in self's (ATen's zeros_like(self) output, safe casting
// enforced). beta <= 0 is ATen's l1_loss_backward: norm * sign(self - target) * grad_output, the
// shape of self and target broadcast, grad_output broadcast into it.
absl::StatusOr<Tensor> SmoothL1LossBackwardOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& grad = s[0].tensor();
  const Tensor& self = s[1].tensor();
  const Tensor& target = s[2].tensor();
  const int64_t reduction = s[3].to_int();
  const double beta = s[4].to_double();
  TSR_RETURN_IF_ERROR(CheckReduction(op, reduction));
  TSR_ASSIGN_OR_RETURN(const ScalarType dtype,
                       FloatingResultInto(op, {&self, &target, &grad}, self.dtype()));
  TSR_ASSIGN_OR_RETURN(const DimVector pair, Broadcast(op, self.sizes(), target.sizes()));
  if (beta > 0) {
    TSR_RETURN_IF_ERROR(Broadcast(op, pair, grad.sizes()).status());
  } else {
    TSR_RETURN_IF_ERROR(CheckBroadcastsTo(op, "grad_output", grad.sizes(), pair,
                                          "the shape of self and target broadcast"));
  }
  OpRegistry& r = op.registry();
  const Opmath opmath(dtype, self.dtype());
  TSR_ASSIGN_OR_RETURN(const Operands in, InCompute(r, opmath, s));
  const Value &g = in.g, &x = in.x, &t = in.t;
  TSR_ASSIGN_OR_RETURN(Tensor diff, CallOne(r, "sub.Tensor", {x, t, Number(1)}));
  Tensor slope;
  if (beta > 0) {
    TSR_ASSIGN_OR_RETURN(Tensor scaled, CallOne(r, "div.Scalar", {Value(diff), Number(beta)}));
    TSR_ASSIGN_OR_RETURN(slope, Saturate(r, scaled, 1.0));
  } else {
    TSR_ASSIGN_OR_RETURN(slope, CallOne(r, "sign", {Value(diff)}));
  }
  return ScaledOut(r, opmath, slope, g, reduction, self.numel());
}

// ---- soft_margin_loss_backward ----

// soft_margin_loss_backward(grad_output, self, target, reduction):
// -norm * target * z / (1 + z) * grad_output, z = exp(-target * self). ATen multiplies target
// and z into an output of self's dtype (mul_out: the promoted dtype must cast to it), then
// grad_output into it in place, so grad_output broadcasts to the shape of self and target.
absl::StatusOr<Tensor> SoftMarginLossBackwardOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& grad = s[0].tensor();
  const Tensor& self = s[1].tensor();
  const Tensor& target = s[2].tensor();
  const int64_t reduction = s[3].to_int();
  TSR_RETURN_IF_ERROR(CheckReduction(op, reduction));
  TSR_ASSIGN_OR_RETURN(const ScalarType dtype,
                       FloatingResultInto(op, {&self, &target}, self.dtype()));
  TSR_ASSIGN_OR_RETURN(const DimVector shape, Broadcast(op, self.sizes(), target.sizes()));
  TSR_RETURN_IF_ERROR(CheckBroadcastsTo(op, "grad_output", grad.sizes(), shape,
                                        "the shape of self and target broadcast"));
  OpRegistry& r = op.registry();
  const Opmath opmath(dtype, self.dtype());
  TSR_ASSIGN_OR_RETURN(const Operands in, InCompute(r, opmath, s));
  const Value &g = in.g, &x = in.x, &t = in.t;
  TSR_ASSIGN_OR_RETURN(Tensor margin, CallOne(r, "mul.Tensor", {t, x}));
  TSR_ASSIGN_OR_RETURN(margin, CallOne(r, "neg", {Value(margin)}));
  TSR_ASSIGN_OR_RETURN(Tensor z, CallOne(r, "exp", {Value(margin)}));
  TSR_ASSIGN_OR_RETURN(Tensor grad_input, CallOne(r, "mul.Tensor", {t, Value(z)}));
  TSR_ASSIGN_OR_RETURN(Tensor denominator,
                       CallOne(r, "add.Scalar", {Value(z), Number(1), Number(1)}));
  TSR_ASSIGN_OR_RETURN(grad_input,
                       CallOne(r, "div.Tensor", {Value(grad_input), Value(denominator)}));
  TSR_ASSIGN_OR_RETURN(Tensor scale, Norm(r, g, reduction, self.numel()));
  TSR_ASSIGN_OR_RETURN(scale, CallOne(r, "neg", {Value(scale)}));
  TSR_ASSIGN_OR_RETURN(grad_input, CallOne(r, "mul.Tensor", {Value(grad_input), Value(scale)}));
  return opmath.Out(r, std::move(grad_input));
}

// ---- binary_cross_entropy_backward ----

// kBceEpsilon: ATen's floor on x (1 - x), so x = 0 or 1 gives a finite gradient.
constexpr double kBceEpsilon = 1e-12;

// binary_cross_entropy_backward(grad_output, self, target, weight=None, reduction=1):
// grad_output (x - t) / max((1 - x) x, 1e-12), times the weight, / numel for the mean; self's
// shape and dtype. ATen's kernel runs over the squeezed grad_output, self and target (one dtype
// for the three): grad_output and target, squeezed, broadcast to self squeezed; the weight
// multiplies in afterwards (in place: it broadcasts to self's shape, any dtype). Like 1.13's
// kernel, it does not check that self and target lie in [0, 1] (the forward does).
absl::StatusOr<Tensor> BinaryCrossEntropyBackwardOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& grad = s[0].tensor();
  const Tensor& self = s[1].tensor();
  const Tensor& target = s[2].tensor();
  const int64_t reduction = s[4].to_int();
  TSR_RETURN_IF_ERROR(CheckReduction(op, reduction));
  TSR_RETURN_IF_ERROR(SameDtype(op, self, {&grad, &target}));
  if (!IsFloatingType(self.dtype())) return NotFloating(op, self.dtype());
  if (!s[3].is_none()) {
    TSR_RETURN_IF_ERROR(
        CheckBroadcastsTo(op, "weight", s[3].tensor().sizes(), self.sizes(), "self's shape"));
  }
  OpRegistry& r = op.registry();
  const Opmath opmath(self.dtype());
  TSR_ASSIGN_OR_RETURN(const Operands in, InCompute(r, opmath, s));
  TSR_ASSIGN_OR_RETURN(Tensor g, CallOne(r, "squeeze", {in.g}));
  TSR_ASSIGN_OR_RETURN(Tensor x, CallOne(r, "squeeze", {in.x}));
  TSR_ASSIGN_OR_RETURN(Tensor t, CallOne(r, "squeeze", {in.t}));
  TSR_RETURN_IF_ERROR(CheckBroadcastsTo(op, "grad_output (squeezed)", g.sizes(), x.sizes(),
                                        "self's shape (squeezed)"));
  TSR_RETURN_IF_ERROR(
      CheckBroadcastsTo(op, "target (squeezed)", t.sizes(), x.sizes(), "self's shape (squeezed)"));
  TSR_ASSIGN_OR_RETURN(Tensor diff, CallOne(r, "sub.Tensor", {Value(x), Value(t), Number(1)}));
  TSR_ASSIGN_OR_RETURN(Tensor complement,
                       CallOne(r, "rsub.Scalar", {Value(x), Number(1), Number(1)}));
  TSR_ASSIGN_OR_RETURN(Tensor variance, CallOne(r, "mul.Tensor", {Value(complement), Value(x)}));
  TSR_ASSIGN_OR_RETURN(variance, CallOne(r, "clamp_min", {Value(variance), Number(kBceEpsilon)}));
  TSR_ASSIGN_OR_RETURN(Tensor grad_input, CallOne(r, "mul.Tensor", {Value(g), Value(diff)}));
  TSR_ASSIGN_OR_RETURN(grad_input, CallOne(r, "div.Tensor", {Value(grad_input), Value(variance)}));
  TSR_ASSIGN_OR_RETURN(grad_input,
                       CallOne(r, "reshape", {Value(grad_input), Value(ToIntList(self.sizes()))}));
  if (!s[3].is_none()) {
    TSR_ASSIGN_OR_RETURN(const Value w, opmath.In(r, s[3]));
    TSR_ASSIGN_OR_RETURN(grad_input, CallOne(r, "mul.Tensor", {Value(grad_input), w}));
  }
  if (reduction == kReductionMean) {
    TSR_ASSIGN_OR_RETURN(
        grad_input,
        CallOne(r, "div.Scalar", {Value(grad_input), Number(static_cast<double>(self.numel()))}));
  }
  return opmath.Out(r, std::move(grad_input));
}

// ---- nll_loss2d ----

// CheckNll2d: LossNLL2d.cpp's check_inputs_nll_loss2d, in its order and words.
absl::Status CheckNll2d(const OperatorHandle& op, const Tensor& self, const Tensor& target,
                        const Value& weight) {
  if (target.dim() != 3) {
    return Invalid(op, absl::StrFormat("only batches of spatial targets supported (3D tensors) "
                                       "but got targets of dimension: %d",
                                       target.dim()));
  }
  if (self.dim() != 4) {
    return Invalid(op, absl::StrFormat("only batches of spatial inputs supported (4D tensors), "
                                       "but got input of dimension: %d",
                                       self.dim()));
  }
  if (!weight.is_none() && weight.tensor().numel() != self.sizes()[1]) {
    return Invalid(op, "weight tensor should be defined either for all or no classes");
  }
  const IntArrayRef x = self.sizes(), t = target.sizes();
  if (x[0] != t[0] || x[2] != t[1] || x[3] != t[2]) {
    return Invalid(op, absl::StrFormat("size mismatch (got input: %s , target: %s",
                                       ShapeToString(x), ShapeToString(t)));
  }
  return absl::OkStatus();
}

// Nll1d: the arguments nll_loss_forward / nll_loss_backward take for a 2-D loss: self with C
// moved last as [N*H*W, C], the target as [N*H*W], the weight as [C] (ATen's 2-D check counts its
// elements only).
struct Nll1d {
  Value self, target, weight;
};
absl::StatusOr<Nll1d> ToNll1d(OpRegistry& r, const Value& self_v, const Value& target_v,
                              const Value& weight) {
  const Tensor& self = self_v.tensor();
  const int64_t classes = self.sizes()[1];
  const int64_t rows = target_v.tensor().numel();
  TSR_ASSIGN_OR_RETURN(Tensor last, CallOne(r, "permute", {self_v, Value(IntList{0, 2, 3, 1})}));
  TSR_ASSIGN_OR_RETURN(Tensor self2,
                       CallOne(r, "reshape", {Value(last), Value(IntList{rows, classes})}));
  TSR_ASSIGN_OR_RETURN(Tensor target1, CallOne(r, "reshape", {target_v, Value(IntList{rows})}));
  Nll1d a{Value(std::move(self2)), Value(std::move(target1)), Value()};
  if (!weight.is_none()) {
    TSR_ASSIGN_OR_RETURN(Tensor w, CallOne(r, "reshape", {weight, Value(IntList{classes})}));
    a.weight = Value(std::move(w));
  }
  return a;
}

// nll_loss2d_forward(self, target, weight, reduction, ignore_index) -> (output, total_weight):
// nll_loss_forward over the pixels; output [N, H, W] for none (total_weight 0, as ATen's), else
// 0-dim. The mean over no counted pixel is 0 / 0, NaN, as in ATen.
TensorsOr NllLoss2dForward(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  const Tensor& target = s[1].tensor();
  TSR_RETURN_IF_ERROR(CheckNll2d(op, self, target, s[2]));
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Nll1d a, ToNll1d(r, s[0], s[1], s[2]));
  TSR_ASSIGN_OR_RETURN(OperatorHandle forward, r.Find("nll_loss_forward"));
  Stack stack{a.self, a.target, a.weight, s[3], s[4]};
  TSR_RETURN_IF_ERROR(r.Call(forward, &stack));
  Tensor output = stack[0].tensor();
  if (s[3].to_int() == kReductionNone) {
    TSR_ASSIGN_OR_RETURN(output,
                         CallOne(r, "reshape", {Value(output), Value(ToIntList(target.sizes()))}));
  }
  return std::vector<Tensor>{std::move(output), stack[1].tensor()};
}

// nll_loss2d(self, target, weight=None, reduction=1, ignore_index=-100): the forward's output.
absl::StatusOr<Tensor> NllLoss2dOf(const OperatorHandle& op, const Stack& s) {
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> both, NllLoss2dForward(op, s));
  return both[0];
}

// nll_loss2d_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
// LossNLL2d.cpp's checks (grad_output of the target's shape for none, one element otherwise),
// then nll_loss_backward over the pixels, C moved back to dim 1 (contiguous, as ATen's result).
absl::StatusOr<Tensor> NllLoss2dBackwardOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& grad = s[0].tensor();
  const Tensor& self = s[1].tensor();
  const Tensor& target = s[2].tensor();
  const Tensor& total = s[6].tensor();
  const int64_t reduction = s[4].to_int();
  TSR_RETURN_IF_ERROR(CheckNll2d(op, self, target, s[3]));
  if (total.numel() != 1) {
    return Invalid(op, absl::StrFormat("expected total_weight to be a single element tensor, "
                                       "got: %s (%d elements)",
                                       ShapeToString(total.sizes()), total.numel()));
  }
  if (reduction == kReductionNone) {
    if (grad.dim() != 3) {
      return Invalid(op, absl::StrFormat("grad_output must have same dimension as target (3) but "
                                         "got dimension: %s",
                                         ShapeToString(grad.sizes())));
    }
    if (!SameDims(grad.sizes(), target.sizes())) {
      return Invalid(op,
                     absl::StrFormat("size mismatch (got grad_output: %s target: %s",
                                     ShapeToString(grad.sizes()), ShapeToString(target.sizes())));
    }
  } else if (grad.dim() > 1 || grad.numel() != 1) {
    return Invalid(op, absl::StrFormat("Expected a single element grad_output tensor, but got: %s",
                                       ShapeToString(grad.sizes())));
  }
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Nll1d a, ToNll1d(r, s[1], s[2], s[3]));
  Value g = s[0];
  if (reduction == kReductionNone) {
    TSR_ASSIGN_OR_RETURN(Tensor rows, CallOne(r, "reshape", {g, Value(IntList{target.numel()})}));
    g = Value(std::move(rows));
  }
  TSR_ASSIGN_OR_RETURN(Tensor grad2, CallOne(r, "nll_loss_backward",
                                             {g, a.self, a.target, a.weight, s[4], s[5], s[6]}));
  const IntArrayRef x = self.sizes();
  TSR_ASSIGN_OR_RETURN(
      Tensor last, CallOne(r, "reshape", {Value(grad2), Value(IntList{x[0], x[2], x[3], x[1]})}));
  TSR_ASSIGN_OR_RETURN(Tensor grad_input,
                       CallOne(r, "permute", {Value(last), Value(IntList{0, 3, 1, 2})}));
  return CallOne(r, "contiguous", {Value(grad_input), Value(int64_t{0})});
}

}  // namespace

absl::Status DefineLossBackwardOps(OpRegistry& registry) {
  return DefineAll(
      registry,
      {
          // Out forms: huber_loss_backward and binary_cross_entropy_backward write into the
          // grad_input itself (one dtype, ATen's "Found dtype ... but expected ..."); smooth_l1's
          // and soft_margin's cast into it.
          {"binary_cross_entropy_backward(Tensor grad_output, Tensor self, Tensor target, "
           "Tensor? weight=None, int reduction=1) -> Tensor",
           MakeKernel<Named<ComputeOne<BinaryCrossEntropyBackwardOf>>>(
               "core::binary_cross_entropy_backward")},
          {"binary_cross_entropy_backward.grad_input(Tensor grad_output, Tensor self, Tensor "
           "target, Tensor? weight=None, int reduction=1, *, Tensor(a!) grad_input) -> "
           "Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<BinaryCrossEntropyBackwardOf, 5>>>(
               "core::binary_cross_entropy_backward_out")},
          {"huber_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction, "
           "float delta) -> Tensor",
           MakeKernel<Named<ComputeOne<HuberLossBackwardOf>>>("core::huber_loss_backward")},
          {"huber_loss_backward.out(Tensor grad_output, Tensor self, Tensor target, int "
           "reduction, float delta, *, Tensor(a!) grad_input) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<HuberLossBackwardOf, 5>>>(
               "core::huber_loss_backward_out")},
          {"smooth_l1_loss_backward(Tensor grad_output, Tensor self, Tensor target, int "
           "reduction, float beta) -> Tensor",
           MakeKernel<Named<ComputeOne<SmoothL1LossBackwardOf>>>("core::smooth_l1_loss_backward")},
          {"smooth_l1_loss_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, "
           "int reduction, float beta, *, Tensor(a!) grad_input) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<SmoothL1LossBackwardOf, 5, /*kCastable=*/true>>>(
               "core::smooth_l1_loss_backward_out")},
          {"soft_margin_loss_backward(Tensor grad_output, Tensor self, Tensor target, int "
           "reduction) -> Tensor",
           MakeKernel<Named<ComputeOne<SoftMarginLossBackwardOf>>>(
               "core::soft_margin_loss_backward")},
          {"soft_margin_loss_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, "
           "int reduction, *, Tensor(a!) grad_input) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<SoftMarginLossBackwardOf, 4, /*kCastable=*/true>>>(
               "core::soft_margin_loss_backward_out")},
          {"nll_loss2d_forward(Tensor self, Tensor target, Tensor? weight, int reduction, int "
           "ignore_index) -> (Tensor output, Tensor total_weight)",
           MakeKernel<Named<NllLoss2dForward>>("core::nll_loss2d_forward")},
          {"nll_loss2d_forward.output(Tensor self, Tensor target, Tensor? weight, int reduction, "
           "int ignore_index, *, Tensor(a!) output, Tensor(b!) total_weight) -> (Tensor(a!), "
           "Tensor(b!))",
           MakeKernel<Named<ComputeIntoOuts<NllLoss2dForward, 5, 2>>>(
               "core::nll_loss2d_forward_output")},
          {"nll_loss2d_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, "
           "int reduction, int ignore_index, Tensor total_weight) -> Tensor",
           MakeKernel<Named<ComputeOne<NllLoss2dBackwardOf>>>("core::nll_loss2d_backward")},
          {"nll_loss2d_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, "
           "Tensor? weight, int reduction, int ignore_index, Tensor total_weight, *, Tensor(a!) "
           "grad_input) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<NllLoss2dBackwardOf, 7>>>(
               "core::nll_loss2d_backward_out")},
          {"nll_loss2d(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, int "
           "ignore_index=-100) -> Tensor",
           MakeKernel<Named<ComputeOne<NllLoss2dOf>>>("core::nll_loss2d")},
          {"nll_loss2d.out(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, int "
           "ignore_index=-100, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<NllLoss2dOf, 5>>>("core::nll_loss2d_out")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera

// Training ops that PyTorch's Core ATen IR decomposes (torch/_decomp), defined here as
// composites over ops every backend has, so that a plugin needs no kernel for them (op set 1.2):
// the softmax backward ops (`_softmax_backward_data`, `_log_softmax_backward_data`), the mean
// squared error loss with its backward op (`mse_loss`, `mse_loss_backward`), and from op set 1.3
// the negative log-likelihood loss (`nll_loss`, `nll_loss_forward`, `nll_loss_backward`).
//
// A composite runs no plan, so each makes its op's checks itself, with ATen's rules: the
// softmax backward ops take a gradient and an output of one shape and one floating dtype, and
// return `input_dtype` only where ATen's meta function does (float16 from a float32 gradient);
// the losses take a reduction of 0 (none), 1 (mean) or 2 (sum). The 16-bit floats are computed
// in float32 and rounded once (Opmath), as ATen's fused kernels compute them.
#include <string>

#include "absl/strings/str_format.h"
#include "core/host_copy.h"
#include "core/status_macros.h"
#include "core/type_promotion.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"
#include "dispatcher/ops/loss_support.h"

namespace tessera {
namespace ops {
namespace {

using Out = absl::StatusOr<std::vector<Tensor>>;

// ---- softmax backward ----

// The checks of _softmax_backward_data / _log_softmax_backward_data(grad_output, output, dim,
// input_dtype), and the dtype of the gradient they return.
absl::StatusOr<ScalarType> SoftmaxBackwardDtype(const OperatorHandle& op, const Stack& s) {
  const Tensor& grad = s[0].tensor();
  const Tensor& output = s[1].tensor();
  if (!SameDims(grad.sizes(), output.sizes())) {
    return Invalid(op, absl::StrFormat("expected grad_output and output to have the same shape, "
                                       "got %s and %s",
                                       ShapeToString(grad.sizes()), ShapeToString(output.sizes())));
  }
  if (grad.dtype() != output.dtype()) {
    return Invalid(op,
                   absl::StrFormat("expected grad_output and output to have the same dtype, "
                                   "got %s and %s",
                                   ScalarTypeName(grad.dtype()), ScalarTypeName(output.dtype())));
  }
  if (!IsFloatingType(grad.dtype())) return NotFloating(op, grad.dtype());
  TSR_ASSIGN_OR_RETURN(const int64_t dim, WrapDim(s[2].to_int(), grad.dim(), op.name()));
  (void)dim;
  const ScalarType input_dtype = s[3].scalar_type();
  if (input_dtype == grad.dtype()) return input_dtype;
  // The forward computed a float16 input in float32 (softmax's half_to_float): its gradient
  // goes back to float16. PyTorch's CPU kernel ignores any other input_dtype; its CUDA kernel
  // refuses it, and so does Tessera (docs/conformance.md).
  if (grad.dtype() == ScalarType::kFloat32 && input_dtype == ScalarType::kFloat16) {
    return input_dtype;
  }
  return Invalid(op, absl::StrFormat("expected input_dtype to be grad_output's dtype (%s), or "
                                     "float16 with a float32 grad_output, got %s",
                                     ScalarTypeName(grad.dtype()), ScalarTypeName(input_dtype)));
}

// softmax: output * (g - sum(g * output, dim)); log_softmax: g - exp(output) * sum(g, dim).
template <bool kLog>
absl::StatusOr<Tensor> SoftmaxBackward(const OperatorHandle& op, const Stack& s) {
  TSR_ASSIGN_OR_RETURN(const ScalarType result, SoftmaxBackwardDtype(op, s));
  OpRegistry& r = op.registry();
  const Opmath opmath(s[0].tensor().dtype(), result);
  TSR_ASSIGN_OR_RETURN(const Value grad, opmath.In(r, s[0]));
  TSR_ASSIGN_OR_RETURN(const Value output, opmath.In(r, s[1]));
  const Value dims(IntList{s[2].to_int()});
  Tensor grad_input;
  if (kLog) {
    TSR_ASSIGN_OR_RETURN(Tensor sum, CallOne(r, "sum.dim_IntList", {grad, dims, Value(true)}));
    TSR_ASSIGN_OR_RETURN(Tensor e, CallOne(r, "exp", {output}));
    TSR_ASSIGN_OR_RETURN(Tensor scaled, CallOne(r, "mul.Tensor", {Value(e), Value(sum)}));
    TSR_ASSIGN_OR_RETURN(grad_input, CallOne(r, "sub.Tensor", {grad, Value(scaled)}));
  } else {
    TSR_ASSIGN_OR_RETURN(Tensor weighted, CallOne(r, "mul.Tensor", {grad, output}));
    TSR_ASSIGN_OR_RETURN(Tensor sum,
                         CallOne(r, "sum.dim_IntList", {Value(weighted), dims, Value(true)}));
    TSR_ASSIGN_OR_RETURN(Tensor scaled, CallOne(r, "mul.Tensor", {output, Value(sum)}));
    TSR_ASSIGN_OR_RETURN(grad_input, CallOne(r, "sub.Tensor", {Value(weighted), Value(scaled)}));
  }
  return opmath.Out(r, std::move(grad_input));
}
template <bool kLog>
Out SoftmaxBackwardK(const OperatorHandle& op, const Stack& s) {
  return One(SoftmaxBackward<kLog>(op, s));
}

// ---- mse_loss ----

// mse_loss(self, target, reduction=1): (self - target)^2, broadcast, then reduced; the dtype
// is the operands' promoted one, which must be floating.
absl::StatusOr<Tensor> MseLoss(const OperatorHandle& op, const Stack& s) {
  const int64_t reduction = s[2].to_int();
  TSR_RETURN_IF_ERROR(CheckReduction(op, reduction));
  ResultTypeBuilder promotion;
  for (int i : {0, 1}) promotion.AddTensor(s[i].tensor().dtype(), s[i].tensor().dim());
  const ScalarType dtype = promotion.Result();
  if (!IsFloatingType(dtype)) return NotFloating(op, dtype);
  OpRegistry& r = op.registry();
  const Opmath opmath(dtype);
  TSR_ASSIGN_OR_RETURN(const Value self, opmath.In(r, s[0]));
  TSR_ASSIGN_OR_RETURN(const Value target, opmath.In(r, s[1]));
  TSR_ASSIGN_OR_RETURN(Tensor diff, CallOne(r, "sub.Tensor", {self, target}));
  TSR_ASSIGN_OR_RETURN(Tensor loss, CallOne(r, "mul.Tensor", {Value(diff), Value(diff)}));
  if (reduction == kReductionMean) {
    TSR_ASSIGN_OR_RETURN(loss, CallOne(r, "mean", {Value(loss)}));
  } else if (reduction == kReductionSum) {
    TSR_ASSIGN_OR_RETURN(loss, CallOne(r, "sum", {Value(loss)}));
  }
  return opmath.Out(r, std::move(loss));
}
Out MseLossK(const OperatorHandle& op, const Stack& s) { return One(MseLoss(op, s)); }

// mse_loss_backward(grad_output, self, target, reduction): norm * (self - target) * grad,
// norm = 2 / self.numel() for the mean, 2 otherwise. ATen takes one dtype for the three.
absl::StatusOr<Tensor> MseLossBackward(const OperatorHandle& op, const Stack& s) {
  const int64_t reduction = s[3].to_int();
  TSR_RETURN_IF_ERROR(CheckReduction(op, reduction));
  const Tensor& grad = s[0].tensor();
  const Tensor& self = s[1].tensor();
  const Tensor& target = s[2].tensor();
  if (self.dtype() != grad.dtype() || target.dtype() != grad.dtype()) {
    return Invalid(op, absl::StrFormat("expected grad_output, self and target to have the same "
                                       "dtype, got %s, %s and %s",
                                       ScalarTypeName(grad.dtype()), ScalarTypeName(self.dtype()),
                                       ScalarTypeName(target.dtype())));
  }
  if (!IsFloatingType(grad.dtype())) return NotFloating(op, grad.dtype());
  OpRegistry& r = op.registry();
  const Opmath opmath(grad.dtype());
  TSR_ASSIGN_OR_RETURN(const Value g, opmath.In(r, s[0]));
  TSR_ASSIGN_OR_RETURN(const Value x, opmath.In(r, s[1]));
  TSR_ASSIGN_OR_RETURN(const Value t, opmath.In(r, s[2]));
  const double norm = reduction == kReductionMean ? 2.0 / static_cast<double>(self.numel()) : 2.0;
  TSR_ASSIGN_OR_RETURN(Tensor diff, CallOne(r, "sub.Tensor", {x, t}));
  TSR_ASSIGN_OR_RETURN(Tensor scaled, CallOne(r, "mul.Scalar", {Value(diff), Value(Scalar(norm))}));
  TSR_ASSIGN_OR_RETURN(Tensor grad_input, CallOne(r, "mul.Tensor", {Value(scaled), g}));
  return opmath.Out(r, std::move(grad_input));
}
Out MseLossBackwardK(const OperatorHandle& op, const Stack& s) {
  return One(MseLossBackward(op, s));
}

// ---- nll_loss ----

// NllArgs: nll_loss's operands checked as ATen's nll_loss_forward_meta / nll_loss_backward
// checks them, the targets read to the host for the bounds check (ATen's CUDA kernels assert
// on the device instead), and the values every form computes from: each row's target with the
// ignored ones at 0 (`safe`), its weight, 0 where ignored (`weights`), and which rows are
// ignored (`ignored`): their losses and gradients are set to 0, not multiplied by it, since the
// input there may be -inf (a log_softmax over masked logits) and the mean's total weight 0.
struct NllArgs {
  Tensor input2d;  // self as [N, C]
  Tensor safe;     // [N] int64
  Tensor weights;  // [N], self's compute dtype
  Tensor ignored;  // [N] bool
  int64_t reduction;
  Opmath opmath;
};
absl::StatusOr<NllArgs> NllPrepare(const OperatorHandle& op, const Value& self_v,
                                   const Tensor& target, const Value& weight, int64_t reduction,
                                   int64_t ignore_index) {
  const Tensor& self = self_v.tensor();
  TSR_RETURN_IF_ERROR(CheckReduction(op, reduction));
  if (self.dim() < 1 || self.dim() > 2) {
    return Invalid(op, absl::StrFormat("input tensor should be 1D or 2D, got %s",
                                       ShapeToString(self.sizes())));
  }
  if (target.dim() > 1 || target.dim() != self.dim() - 1 ||
      (self.dim() == 2 && target.sizes()[0] != self.sizes()[0])) {
    return Invalid(op, absl::StrFormat("size mismatch (got input: %s, target: %s): expected a "
                                       "target of one class index per row of the input",
                                       ShapeToString(self.sizes()), ShapeToString(target.sizes())));
  }
  if (target.dtype() != ScalarType::kInt64) {
    return Invalid(op, absl::StrFormat("expected target of dtype int64, got %s",
                                       ScalarTypeName(target.dtype())));
  }
  if (!IsFloatingType(self.dtype())) return NotFloating(op, self.dtype());
  const int64_t classes = self.sizes()[self.dim() - 1];
  if (!weight.is_none()) {
    const Tensor& w = weight.tensor();
    if (w.dim() != 1 || w.numel() != classes) {
      return Invalid(op, absl::StrFormat("weight tensor should be defined either for all %d "
                                         "classes or no classes but got weight tensor of shape: %s",
                                         classes, ShapeToString(w.sizes())));
    }
    if (w.dtype() != self.dtype()) {
      return Invalid(op, absl::StrFormat("expected weight to have the input's dtype %s, got %s",
                                         ScalarTypeName(self.dtype()), ScalarTypeName(w.dtype())));
    }
  }
  // A Meta target has no values to check (shapes only).
  std::vector<int64_t> targets(
      target.device().type == DeviceType::kMeta ? 0 : static_cast<size_t>(target.numel()));
  if (!targets.empty()) TSR_RETURN_IF_ERROR(CopyTensorToHost(target, targets.data()));
  for (int64_t t : targets) {
    if (t != ignore_index && (t < 0 || t >= classes)) {
      return absl::OutOfRangeError(
          absl::StrFormat("%s: Target %d is out of bounds (expected a class in [0, %d) or "
                          "ignore_index %d)",
                          op.name(), t, classes, ignore_index));
    }
  }
  OpRegistry& r = op.registry();
  NllArgs a{Tensor(), Tensor(), Tensor(), Tensor(), reduction, Opmath(self.dtype())};
  TSR_ASSIGN_OR_RETURN(const Value x, a.opmath.In(r, self_v));
  TSR_ASSIGN_OR_RETURN(
      a.input2d,
      CallOne(r, "reshape", {x, Value(IntList{self.dim() == 2 ? self.sizes()[0] : 1, classes})}));
  TSR_ASSIGN_OR_RETURN(Tensor rows, CallOne(r, "reshape", {Value(target), Value(IntList{-1})}));
  TSR_ASSIGN_OR_RETURN(Tensor kept,
                       CallOne(r, "ne.Scalar", {Value(rows), Value(Scalar(ignore_index))}));
  TSR_ASSIGN_OR_RETURN(a.ignored,
                       CallOne(r, "eq.Scalar", {Value(rows), Value(Scalar(ignore_index))}));
  // The ignored targets read row 0 (their weight is 0): masked_fill, which every backend has
  // (through the fallback if not natively), not an int64 product a float-only device refuses.
  TSR_ASSIGN_OR_RETURN(a.safe, CallOne(r, "masked_fill.Scalar",
                                       {Value(rows), Value(a.ignored), Value(Scalar(int64_t{0}))}));
  TSR_ASSIGN_OR_RETURN(a.weights, CallOne(r, "_to_copy", {Value(kept), Value(a.opmath.compute)}));
  if (!weight.is_none()) {
    TSR_ASSIGN_OR_RETURN(const Value w, a.opmath.In(r, weight));
    TSR_ASSIGN_OR_RETURN(Tensor picked,
                         CallOne(r, "index_select", {w, Value(int64_t{0}), Value(a.safe)}));
    TSR_ASSIGN_OR_RETURN(a.weights, CallOne(r, "mul.Tensor", {Value(picked), Value(a.weights)}));
  }
  return a;
}

// nll_loss_forward(self, target, weight, reduction, ignore_index) -> (output, total_weight):
// -weight[t] * self[n, t] per row (0 where t is ignore_index), reduced; total_weight is the sum
// of the rows' weights (0 for the rows of reduction none, as ATen's CPU kernel leaves it). The
// mean over no kept row is 0 / 0, NaN, as in ATen.
absl::StatusOr<std::vector<Tensor>> NllLossForward(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  TSR_ASSIGN_OR_RETURN(NllArgs a,
                       NllPrepare(op, s[0], s[1].tensor(), s[2], s[3].to_int(), s[4].to_int()));
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Tensor column, CallOne(r, "unsqueeze", {Value(a.safe), Value(int64_t{1})}));
  TSR_ASSIGN_OR_RETURN(
      Tensor picked,
      CallOne(r, "gather", {Value(a.input2d), Value(int64_t{1}), Value(column), Value(false)}));
  TSR_ASSIGN_OR_RETURN(picked, CallOne(r, "reshape", {Value(picked), Value(IntList{-1})}));
  TSR_ASSIGN_OR_RETURN(Tensor losses, CallOne(r, "mul.Tensor", {Value(picked), Value(a.weights)}));
  TSR_ASSIGN_OR_RETURN(losses, CallOne(r, "neg", {Value(losses)}));
  TSR_ASSIGN_OR_RETURN(losses, CallOne(r, "masked_fill.Scalar",
                                       {Value(losses), Value(a.ignored), Value(Scalar(0.0))}));
  TSR_ASSIGN_OR_RETURN(Tensor total, CallOne(r, "sum", {Value(a.weights), Value()}));
  Tensor output;
  if (a.reduction == kReductionNone) {
    TSR_ASSIGN_OR_RETURN(
        output,
        CallOne(r, "reshape",
                {Value(losses), Value(IntList(self.sizes().begin(), self.sizes().end() - 1))}));
    if (self.dim() == 2) {
      TSR_ASSIGN_OR_RETURN(total, CallOne(r, "mul.Scalar", {Value(total), Value(Scalar(0.0))}));
    }
  } else {
    TSR_ASSIGN_OR_RETURN(output, CallOne(r, "sum", {Value(losses), Value()}));
    if (a.reduction == kReductionMean) {
      TSR_ASSIGN_OR_RETURN(output, CallOne(r, "div.Tensor", {Value(output), Value(total)}));
    }
  }
  TSR_ASSIGN_OR_RETURN(output, a.opmath.Out(r, std::move(output)));
  TSR_ASSIGN_OR_RETURN(total, a.opmath.Out(r, std::move(total)));
  return std::vector<Tensor>{output, total};
}

// nll_loss(self, target, weight=None, reduction=1, ignore_index=-100): the forward's output.
absl::StatusOr<Tensor> NllLoss(const OperatorHandle& op, const Stack& s) {
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> both, NllLossForward(op, s));
  return both[0];
}
Out NllLossK(const OperatorHandle& op, const Stack& s) { return One(NllLoss(op, s)); }

// nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
// zeros like self but -weight[t] * grad (/ total_weight for the mean) at [n, t] of each kept row.
absl::StatusOr<Tensor> NllLossBackward(const OperatorHandle& op, const Stack& s) {
  const Tensor& grad = s[0].tensor();
  const Tensor& self = s[1].tensor();
  const Tensor& total = s[6].tensor();
  TSR_ASSIGN_OR_RETURN(NllArgs a,
                       NllPrepare(op, s[1], s[2].tensor(), s[3], s[4].to_int(), s[5].to_int()));
  // One gradient per row for reduction none of a 2-D input; else one element (0-dim or [1], as
  // ATen's check allows).
  const bool per_row = a.reduction == kReductionNone && self.dim() == 2;
  if (per_row ? !SameDims(grad.sizes(), IntList{self.sizes()[0]})
              : grad.dim() > 1 || grad.numel() != 1) {
    return Invalid(
        op, absl::StrFormat("expected grad_output of %s, got %s",
                            per_row ? absl::StrFormat("shape [%d] (one per row)", self.sizes()[0])
                                    : std::string("one element (the reduced loss's)"),
                            ShapeToString(grad.sizes())));
  }
  if (total.numel() != 1) {
    return Invalid(op, absl::StrFormat("expected total_weight to be a single element tensor, "
                                       "got %s",
                                       ShapeToString(total.sizes())));
  }
  for (const auto& [t, name] : {std::pair{&grad, "grad_output"}, {&total, "total_weight"}}) {
    if (t->dtype() != self.dtype()) {
      return Invalid(op, absl::StrFormat("expected %s to have the input's dtype %s, got %s", name,
                                         ScalarTypeName(self.dtype()), ScalarTypeName(t->dtype())));
    }
  }
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Value g, a.opmath.In(r, s[0]));
  if (!per_row) {
    TSR_ASSIGN_OR_RETURN(Tensor g0, CallOne(r, "reshape", {g, Value(IntList{})}));
    g = Value(std::move(g0));
  }
  TSR_ASSIGN_OR_RETURN(Tensor values, CallOne(r, "mul.Tensor", {Value(a.weights), g}));
  TSR_ASSIGN_OR_RETURN(values, CallOne(r, "neg", {Value(values)}));
  if (a.reduction == kReductionMean) {
    TSR_ASSIGN_OR_RETURN(const Value t, a.opmath.In(r, s[6]));
    TSR_ASSIGN_OR_RETURN(Tensor t0, CallOne(r, "reshape", {t, Value(IntList{})}));
    TSR_ASSIGN_OR_RETURN(values, CallOne(r, "div.Tensor", {Value(values), Value(t0)}));
  }
  TSR_ASSIGN_OR_RETURN(values, CallOne(r, "masked_fill.Scalar",
                                       {Value(values), Value(a.ignored), Value(Scalar(0.0))}));
  TSR_ASSIGN_OR_RETURN(Tensor column, CallOne(r, "unsqueeze", {Value(a.safe), Value(int64_t{1})}));
  TSR_ASSIGN_OR_RETURN(values, CallOne(r, "unsqueeze", {Value(values), Value(int64_t{1})}));
  const Tensor& x2 = a.input2d;
  TSR_ASSIGN_OR_RETURN(Tensor zeros,
                       CallOne(r, "zeros",
                               {Value(IntList(x2.sizes().begin(), x2.sizes().end())),
                                Value(x2.dtype()), Value(), Value(x2.device()), Value()}));
  TSR_ASSIGN_OR_RETURN(
      Tensor grad_input,
      CallOne(r, "scatter.src", {Value(zeros), Value(int64_t{1}), Value(column), Value(values)}));
  TSR_ASSIGN_OR_RETURN(
      grad_input,
      CallOne(r, "reshape",
              {Value(grad_input), Value(IntList(self.sizes().begin(), self.sizes().end()))}));
  return a.opmath.Out(r, std::move(grad_input));
}
Out NllLossBackwardK(const OperatorHandle& op, const Stack& s) {
  return One(NllLossBackward(op, s));
}

}  // namespace

absl::Status DefineDecomposedTrainingOps(OpRegistry& registry) {
  return DefineAll(
      registry,
      {
          {"_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType "
           "input_dtype) -> Tensor",
           MakeKernel<SoftmaxBackwardK<false>>("core::_softmax_backward_data")},
          {"_softmax_backward_data.out(Tensor grad_output, Tensor output, int dim, ScalarType "
           "input_dtype, *, Tensor(a!) grad_input) -> Tensor(a!)",
           MakeKernel<ComputeIntoOut<SoftmaxBackward<false>, 4>>(
               "core::_softmax_backward_data_out")},
          {"_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType "
           "input_dtype) -> Tensor",
           MakeKernel<SoftmaxBackwardK<true>>("core::_log_softmax_backward_data")},
          {"_log_softmax_backward_data.out(Tensor grad_output, Tensor output, int dim, "
           "ScalarType input_dtype, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<ComputeIntoOut<SoftmaxBackward<true>, 4>>(
               "core::_log_softmax_backward_data_out")},
          {"mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor",
           MakeKernel<MseLossK>("core::mse_loss")},
          {"mse_loss.out(Tensor self, Tensor target, int reduction=1, *, Tensor(a!) out) -> "
           "Tensor(a!)",
           MakeKernel<ComputeIntoOut<MseLoss, 3, /*kCastable=*/true>>("core::mse_loss_out")},
          {"mse_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction) -> "
           "Tensor",
           MakeKernel<MseLossBackwardK>("core::mse_loss_backward")},
          {"mse_loss_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, int "
           "reduction, *, Tensor(a!) grad_input) -> Tensor(a!)",
           MakeKernel<ComputeIntoOut<MseLossBackward, 4>>("core::mse_loss_backward_out")},
          {"nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction, int "
           "ignore_index) -> (Tensor output, Tensor total_weight)",
           MakeKernel<NllLossForward>("core::nll_loss_forward")},
          {"nll_loss_forward.output(Tensor self, Tensor target, Tensor? weight, int reduction, "
           "int ignore_index, *, Tensor(a!) output, Tensor(b!) total_weight) -> (Tensor(a!), "
           "Tensor(b!))",
           MakeKernel<ComputeIntoOuts<NllLossForward, 5, 2>>("core::nll_loss_forward_output")},
          {"nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, int "
           "ignore_index=-100) -> Tensor",
           MakeKernel<NllLossK>("core::nll_loss")},
          {"nll_loss.out(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, int "
           "ignore_index=-100, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<ComputeIntoOut<NllLoss, 5>>("core::nll_loss_out")},
          {"nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, "
           "int reduction, int ignore_index, Tensor total_weight) -> Tensor",
           MakeKernel<NllLossBackwardK>("core::nll_loss_backward")},
          {"nll_loss_backward.grad_input(Tensor grad_output, Tensor self, Tensor target, Tensor? "
           "weight, int reduction, int ignore_index, Tensor total_weight, *, Tensor(a!) "
           "grad_input) -> Tensor(a!)",
           MakeKernel<ComputeIntoOut<NllLossBackward, 7>>("core::nll_loss_backward_out")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera

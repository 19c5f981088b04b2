// Training ops that PyTorch's Core ATen IR decomposes (torch/_decomp), defined here as
// composites over ops every backend has, so that a plugin needs no kernel for them (op set 1.2):
// the softmax backward ops (`_softmax_backward_data`, `_log_softmax_backward_data`) and the mean
// squared error loss with its backward op (`mse_loss`, `mse_loss_backward`).
//
// A composite runs no plan, so each makes its op's checks itself, with ATen's rules: the
// softmax backward ops take a gradient and an output of one shape and one floating dtype, and
// return `input_dtype` only where ATen's meta function does (float16 from a float32 gradient);
// the losses take a reduction of 0 (none), 1 (mean) or 2 (sum). The 16-bit floats are computed
// in float32 and rounded once (Opmath), as ATen's fused kernels compute them.
#include <string>

#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "core/type_promotion.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {
namespace {

using Out = absl::StatusOr<std::vector<Tensor>>;

absl::Status NotFloating(const OperatorHandle& op, ScalarType dtype) {
  return absl::UnimplementedError(
      absl::StrFormat("%s: not implemented for dtype %s (expected a floating dtype)", op.name(),
                      ScalarTypeName(dtype)));
}

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

constexpr int64_t kReductionNone = 0, kReductionMean = 1, kReductionSum = 2;

absl::Status CheckReduction(const OperatorHandle& op, int64_t reduction) {
  if (reduction == kReductionNone || reduction == kReductionMean || reduction == kReductionSum) {
    return absl::OkStatus();
  }
  return Invalid(op, absl::StrFormat("expected reduction to be 0 (none), 1 (mean) or 2 (sum), "
                                     "got %d",
                                     reduction));
}

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
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera

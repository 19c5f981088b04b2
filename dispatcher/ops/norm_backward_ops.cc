// The backward ops of the normalizations (op set 1.3): `native_layer_norm_backward` and
// `native_batch_norm_backward` with their out= forms, as composites over ops every backend has
// (mul, sub, sum, rsqrt, reshape), so that a plugin needs no kernel for them. The formulas are
// the ones PyTorch's Core ATen IR decomposes these ops into (torch/_decomp):
//
//   layer norm, over the N trailing elements of each of M rows, x_hat = (x - mean) * rstd,
//   gx = grad_out * weight (or grad_out):
//     grad_input  = rstd / N * (N * gx - sum(gx) - x_hat * sum(gx * x_hat))    (sums per row)
//     grad_weight = sum over the rows of grad_out * x_hat;  grad_bias = sum of grad_out
//   batch norm, per channel c over the N = numel / C elements of the channel:
//     training (save_mean, save_invstd):
//       grad_input = (grad_out - (x - mean) * invstd^2 * dot / N - sum(grad_out) / N)
//                    * invstd * weight,   dot = sum((x - mean) * grad_out)
//     inference (running_mean, invstd = rsqrt(running_var + eps)):
//       grad_input = grad_out * invstd * weight
//     grad_weight = dot * invstd;  grad_bias = sum(grad_out)
//
// output_mask says which of the three gradients to compute; a false entry returns None (ATen:
// an undefined tensor), and so does a layer norm's grad_weight or grad_bias without a weight or
// bias (PyTorch 1.13's CPU kernel fails there: docs/conformance.md). A composite runs no plan,
// so each makes its op's checks itself, as ATen's meta functions do. The 16-bit floats are
// computed in float32 and each gradient rounded once (Opmath).
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"
#include "dispatcher/ops/norm_checks.h"

namespace tessera {
namespace ops {
namespace {

using Out = absl::StatusOr<std::vector<Tensor>>;

// CheckOperand: `t` (argument `name`) has the input's dtype, and `shape` when given.
absl::Status CheckOperand(const OperatorHandle& op, const char* name, const Tensor& t,
                          const Tensor& input, std::optional<IntArrayRef> shape) {
  if (t.dtype() != input.dtype()) {
    return Invalid(op, absl::StrFormat("expected %s to have the input's dtype %s, got %s", name,
                                       ScalarTypeName(input.dtype()), ScalarTypeName(t.dtype())));
  }
  if (shape && !SameDims(t.sizes(), *shape)) {
    return Invalid(op, absl::StrFormat("expected %s of shape %s, got %s", name,
                                       ShapeToString(*shape), ShapeToString(t.sizes())));
  }
  return absl::OkStatus();
}

absl::Status CheckFloatingInput(const OperatorHandle& op, const Tensor& input) {
  return IsFloatingType(input.dtype()) ? absl::OkStatus() : NotFloating(op, input.dtype());
}

absl::StatusOr<Tensor> Sum(OpRegistry& r, const Tensor& t, IntList dims, bool keepdim) {
  return CallOne(r, "sum.dim_IntList", {Value(t), Value(std::move(dims)), Value(keepdim)});
}
absl::StatusOr<Tensor> Mul(OpRegistry& r, const Value& a, const Value& b) {
  return CallOne(r, "mul.Tensor", {a, b});
}
absl::StatusOr<Tensor> Sub(OpRegistry& r, const Value& a, const Value& b) {
  return CallOne(r, "sub.Tensor", {a, b});
}
absl::StatusOr<Tensor> Scale(OpRegistry& r, const Value& a, double factor) {
  return CallOne(r, "mul.Scalar", {a, Value(Scalar(factor))});
}
absl::StatusOr<Tensor> Reshape(OpRegistry& r, const Value& a, IntList shape) {
  return CallOne(r, "reshape", {a, Value(std::move(shape))});
}
absl::StatusOr<Tensor> ZerosLike(OpRegistry& r, IntArrayRef shape, const Tensor& like) {
  return ops::Zeros(r, shape, like.dtype(), like.device());
}

// ---- native_layer_norm_backward ----

// native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias,
// output_mask) -> (grad_input, grad_weight, grad_bias)
Out LayerNormBackward(const OperatorHandle& op, const Stack& s) {
  const Tensor& grad = s[0].tensor();
  const Tensor& input = s[1].tensor();
  const IntList& norm = s[2].int_list();
  TSR_ASSIGN_OR_RETURN(const auto mask, OutputMask(op, s[7]));
  const int64_t axis = input.dim() - static_cast<int64_t>(norm.size());
  TSR_RETURN_IF_ERROR(CheckNormalizedShape(op, input, norm));
  TSR_RETURN_IF_ERROR(CheckFloatingInput(op, input));
  TSR_RETURN_IF_ERROR(CheckOperand(op, "grad_out", grad, input, input.sizes()));
  int64_t rows = 1, n = 1;
  for (int64_t d = 0; d < input.dim(); ++d) (d < axis ? rows : n) *= input.sizes()[d];
  for (int i : {3, 4}) {  // mean and rstd: one per row, in any shape of that many elements
    const Tensor& stat = s[i].tensor();
    TSR_RETURN_IF_ERROR(CheckOperand(op, i == 3 ? "mean" : "rstd", stat, input, std::nullopt));
    if (stat.numel() != rows) {
      return Invalid(op,
                     absl::StrFormat("expected %s with %d elements (one per normalized row "
                                     "of the input %s), got %s",
                                     i == 3 ? "mean" : "rstd", rows, ShapeToString(input.sizes()),
                                     ShapeToString(stat.sizes())));
    }
  }
  for (int i : {5, 6}) {
    if (s[i].is_none()) continue;
    TSR_RETURN_IF_ERROR(
        CheckOperand(op, i == 5 ? "weight" : "bias", s[i].tensor(), input, IntArrayRef(norm)));
  }
  OpRegistry& r = op.registry();
  std::vector<Tensor> grads(3);
  const bool has_weight = !s[5].is_none(), has_bias = !s[6].is_none();
  if (rows == 0 || n == 0) {  // nothing to normalize: zero gradients
    if (mask[0]) {
      TSR_ASSIGN_OR_RETURN(grads[0], ZerosLike(r, input.sizes(), input));
    }
    if (mask[1] && has_weight) {
      TSR_ASSIGN_OR_RETURN(grads[1], ZerosLike(r, norm, input));
    }
    if (mask[2] && has_bias) {
      TSR_ASSIGN_OR_RETURN(grads[2], ZerosLike(r, norm, input));
    }
    return grads;
  }
  const Opmath opmath(input.dtype());
  TSR_ASSIGN_OR_RETURN(const Value g, opmath.In(r, s[0]));
  TSR_ASSIGN_OR_RETURN(const Value x, opmath.In(r, s[1]));
  IntList stat_shape(input.sizes().begin(), input.sizes().begin() + axis);
  stat_shape.resize(input.dim(), 1);
  TSR_ASSIGN_OR_RETURN(const Value mean_in, opmath.In(r, s[3]));
  TSR_ASSIGN_OR_RETURN(const Value rstd_in, opmath.In(r, s[4]));
  TSR_ASSIGN_OR_RETURN(const Tensor mean, Reshape(r, mean_in, stat_shape));
  TSR_ASSIGN_OR_RETURN(const Tensor rstd, Reshape(r, rstd_in, stat_shape));
  TSR_ASSIGN_OR_RETURN(Tensor centered, Sub(r, x, Value(mean)));
  TSR_ASSIGN_OR_RETURN(const Tensor x_hat, Mul(r, Value(centered), Value(rstd)));
  IntList inner_dims, outer_dims;
  for (int64_t d = 0; d < input.dim(); ++d) (d < axis ? outer_dims : inner_dims).push_back(d);
  if (mask[0]) {
    Value gx = g;
    if (has_weight) {
      TSR_ASSIGN_OR_RETURN(const Value w, opmath.In(r, s[5]));
      TSR_ASSIGN_OR_RETURN(Tensor weighted, Mul(r, g, w));
      gx = Value(std::move(weighted));
    }
    const double count = static_cast<double>(n);
    TSR_ASSIGN_OR_RETURN(Tensor a, Scale(r, gx, count));
    TSR_ASSIGN_OR_RETURN(Tensor b, Sum(r, gx.tensor(), inner_dims, true));
    TSR_ASSIGN_OR_RETURN(Tensor gx_xhat, Mul(r, gx, Value(x_hat)));
    TSR_ASSIGN_OR_RETURN(Tensor c2, Sum(r, gx_xhat, inner_dims, true));
    TSR_ASSIGN_OR_RETURN(Tensor c3, Mul(r, Value(x_hat), Value(c2)));
    TSR_ASSIGN_OR_RETURN(Tensor inner, Sub(r, Value(a), Value(b)));
    TSR_ASSIGN_OR_RETURN(inner, Sub(r, Value(inner), Value(c3)));
    TSR_ASSIGN_OR_RETURN(Tensor factor, Scale(r, Value(rstd), 1.0 / count));
    TSR_ASSIGN_OR_RETURN(Tensor grad_input, Mul(r, Value(factor), Value(inner)));
    TSR_ASSIGN_OR_RETURN(grads[0], opmath.Out(r, std::move(grad_input)));
  }
  // Summed over the rows: with no leading dims there is one row, and the sum is the term itself.
  auto over_rows = [&](Tensor t) -> absl::StatusOr<Tensor> {
    if (outer_dims.empty()) return CallOne(r, "clone", {Value(std::move(t)), Value()});
    return Sum(r, t, outer_dims, false);
  };
  if (mask[1] && has_weight) {
    TSR_ASSIGN_OR_RETURN(Tensor term, Mul(r, g, Value(x_hat)));
    TSR_ASSIGN_OR_RETURN(Tensor grad_weight, over_rows(std::move(term)));
    TSR_ASSIGN_OR_RETURN(grads[1], opmath.Out(r, std::move(grad_weight)));
  }
  if (mask[2] && has_bias) {
    TSR_ASSIGN_OR_RETURN(Tensor grad_bias, over_rows(g.tensor()));
    TSR_ASSIGN_OR_RETURN(grads[2], opmath.Out(r, std::move(grad_bias)));
  }
  return grads;
}

// ---- native_batch_norm_backward ----

// native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean,
// save_invstd, train, eps, output_mask) -> (grad_input, grad_weight, grad_bias)
Out BatchNormBackward(const OperatorHandle& op, const Stack& s) {
  const Tensor& grad = s[0].tensor();
  const Tensor& input = s[1].tensor();
  const bool train = s[7].to_bool();
  const double eps = s[8].to_double();
  TSR_ASSIGN_OR_RETURN(const auto mask, OutputMask(op, s[9]));
  TSR_RETURN_IF_ERROR(CheckChannelsInput(op, input));
  TSR_RETURN_IF_ERROR(CheckFloatingInput(op, input));
  TSR_RETURN_IF_ERROR(CheckOperand(op, "grad_out", grad, input, input.sizes()));
  const int64_t channels = input.sizes()[1];
  const IntList channel_shape{channels};
  const char* names[] = {"",          "",           "weight", "running_mean", "running_var",
                         "save_mean", "save_invstd"};
  // Training differentiates through the batch statistics the forward saved; inference through
  // the running ones, and takes the saved ones as its forward returned them ([0], unused).
  const int stats = train ? 5 : 3;
  for (int i = 2; i <= 6; ++i) {
    if (s[i].is_none()) continue;
    const bool unused_saved = !train && i >= 5;
    TSR_RETURN_IF_ERROR(
        CheckOperand(op, names[i], s[i].tensor(), input,
                     unused_saved ? std::nullopt : std::optional<IntArrayRef>(channel_shape)));
  }
  if (s[stats].is_none() || s[stats + 1].is_none()) {
    return Invalid(op, absl::StrFormat("expected %s and %s to be defined when train is %s",
                                       names[stats], names[stats + 1], train ? "true" : "false"));
  }
  OpRegistry& r = op.registry();
  std::vector<Tensor> grads(3);
  const Opmath opmath(input.dtype());
  TSR_ASSIGN_OR_RETURN(const Value g, opmath.In(r, s[0]));
  TSR_ASSIGN_OR_RETURN(const Value x, opmath.In(r, s[1]));
  TSR_ASSIGN_OR_RETURN(const Value mean_in, opmath.In(r, s[stats]));
  TSR_ASSIGN_OR_RETURN(Value invstd, opmath.In(r, s[stats + 1]));
  if (!train) {  // invstd = rsqrt(running_var + eps)
    TSR_ASSIGN_OR_RETURN(Tensor shifted,
                         CallOne(r, "add.Scalar", {invstd, Value(Scalar(eps)), Value(Scalar(1))}));
    TSR_ASSIGN_OR_RETURN(Tensor rsqrt, CallOne(r, "rsqrt", {Value(std::move(shifted))}));
    invstd = Value(std::move(rsqrt));
  }
  IntList broadcast(input.dim(), 1);
  broadcast[1] = channels;
  IntList reduce_dims;
  for (int64_t d = 0; d < input.dim(); ++d) {
    if (d != 1) reduce_dims.push_back(d);
  }
  const double count = channels == 0 ? 0.0 : static_cast<double>(input.numel() / channels);
  TSR_ASSIGN_OR_RETURN(const Tensor mean, Reshape(r, mean_in, broadcast));
  TSR_ASSIGN_OR_RETURN(const Tensor centered, Sub(r, x, Value(mean)));
  TSR_ASSIGN_OR_RETURN(const Tensor grad_sum, Sum(r, g.tensor(), reduce_dims, false));
  TSR_ASSIGN_OR_RETURN(Tensor grad_centered, Mul(r, g, Value(centered)));
  TSR_ASSIGN_OR_RETURN(const Tensor dot, Sum(r, grad_centered, reduce_dims, false));
  if (mask[0]) {
    Value scale = invstd;  // invstd * weight, per channel
    if (!s[2].is_none()) {
      TSR_ASSIGN_OR_RETURN(const Value w, opmath.In(r, s[2]));
      TSR_ASSIGN_OR_RETURN(Tensor weighted, Mul(r, invstd, w));
      scale = Value(std::move(weighted));
    }
    TSR_ASSIGN_OR_RETURN(const Tensor grad_scale, Reshape(r, scale, broadcast));
    Tensor grad_input;
    if (train) {
      // An empty channel (count 0) has no elements whose gradient the 1 / count would scale.
      const double norm = count == 0 ? 0.0 : 1.0 / count;
      TSR_ASSIGN_OR_RETURN(Tensor var_term, Mul(r, Value(dot), invstd));
      TSR_ASSIGN_OR_RETURN(var_term, Mul(r, Value(var_term), invstd));
      TSR_ASSIGN_OR_RETURN(var_term, Scale(r, Value(var_term), norm));
      TSR_ASSIGN_OR_RETURN(const Tensor proj_scale, Reshape(r, Value(var_term), broadcast));
      TSR_ASSIGN_OR_RETURN(Tensor grad_mean, Scale(r, Value(grad_sum), norm));
      TSR_ASSIGN_OR_RETURN(grad_mean, Reshape(r, Value(grad_mean), broadcast));
      TSR_ASSIGN_OR_RETURN(Tensor proj, Mul(r, Value(centered), Value(proj_scale)));
      TSR_ASSIGN_OR_RETURN(Tensor diff, Sub(r, g, Value(proj)));
      TSR_ASSIGN_OR_RETURN(diff, Sub(r, Value(diff), Value(grad_mean)));
      TSR_ASSIGN_OR_RETURN(grad_input, Mul(r, Value(diff), Value(grad_scale)));
    } else {
      TSR_ASSIGN_OR_RETURN(grad_input, Mul(r, g, Value(grad_scale)));
    }
    TSR_ASSIGN_OR_RETURN(grads[0], opmath.Out(r, std::move(grad_input)));
  }
  if (mask[1]) {
    TSR_ASSIGN_OR_RETURN(Tensor grad_weight, Mul(r, Value(dot), invstd));
    TSR_ASSIGN_OR_RETURN(grads[1], opmath.Out(r, std::move(grad_weight)));
  }
  if (mask[2]) {
    TSR_ASSIGN_OR_RETURN(grads[2], opmath.Out(r, grad_sum));
  }
  return grads;
}

}  // namespace

absl::Status DefineNormBackwardOps(OpRegistry& registry) {
  return DefineAll(
      registry,
      {
          {"native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, "
           "Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> "
           "(Tensor, Tensor, Tensor)",
           MakeKernel<LayerNormBackward>("core::native_layer_norm_backward")},
          {"native_layer_norm_backward.out(Tensor grad_out, Tensor input, SymInt[] "
           "normalized_shape, Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] "
           "output_mask, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), "
           "Tensor(b!), Tensor(c!))",
           MakeKernel<ComputeIntoOuts<LayerNormBackward, 8, 3>>(
               "core::native_layer_norm_backward_out")},
          {"native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, Tensor? "
           "running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, bool "
           "train, float eps, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
           MakeKernel<BatchNormBackward>("core::native_batch_norm_backward")},
          {"native_batch_norm_backward.out(Tensor grad_out, Tensor input, Tensor? weight, "
           "Tensor? running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, "
           "bool train, float eps, bool[3] output_mask, *, Tensor(a!) out0, Tensor(b!) out1, "
           "Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), Tensor(c!))",
           MakeKernel<ComputeIntoOuts<BatchNormBackward, 10, 3>>(
               "core::native_batch_norm_backward_out")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera

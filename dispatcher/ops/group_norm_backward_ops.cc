// Group normalization's backward op (op set 1.10): `native_group_norm_backward` and its out=
// form, a composite over ops every backend has (mul, sub, sum, reshape), so that a plugin needs
// no kernel for it. The formula is ATen's CPU kernel's (native/cpu/group_norm_kernel.cpp) and
// its Core ATen decomposition's (torch/_decomp): per sample n and channel c, over its HxW
// positions,
//
//   ds[n, c] = sum(grad_out * x),  db[n, c] = sum(grad_out)
//   per group g of D = C / group channels (gamma: weight, or 1), s = 1 / (D * HxW):
//     ds_g = sum over g's channels of ds * gamma,  db_g = the same of db * gamma
//     c2 = (db_g * mean - ds_g) * rstd^3 * s,  c3 = -c2 * mean - db_g * rstd * s
//     grad_input = rstd * gamma[c] * grad_out + c2 * x + c3
//   grad_weight[c] = sum over n of (ds - db * mean) * rstd;  grad_bias[c] = sum over n of db
//
// ATen computes grad_weight and grad_bias without a weight too (in the input's dtype; with a
// weight, in its dtype, float32 for a 16-bit input of "mixed type": mean and rstd float32);
// output_mask's false entries return None. The checks are ATen's and in its order:
// native_group_norm_backward's (dtypes, mixed type, an empty input's zeros), then its kernel's
// (element counts, then each tensor's dtype as its data_ptr<T> refuses). The 16-bit floats
// compute in float32 and round once (Opmath).
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "core/status_macros.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {
namespace {

// AtenTypeName: c10's name of a floating dtype ("Double"), as data_ptr<T>'s refusal prints it.
std::string AtenTypeName(ScalarType t) {
  switch (t) {
    case ScalarType::kFloat64:
      return "Double";
    case ScalarType::kFloat32:
      return "Float";
    case ScalarType::kFloat16:
      return "Half";
    case ScalarType::kBFloat16:
      return "BFloat16";
    default:
      return std::string(ScalarTypeName(t));
  }
}

bool IsReducedFloat(ScalarType t) {
  return t == ScalarType::kFloat16 || t == ScalarType::kBFloat16;
}

absl::StatusOr<Tensor> Sum(OpRegistry& r, const Value& t, IntList dims, bool keepdim) {
  return CallOne(r, "sum.dim_IntList", {t, Value(std::move(dims)), Value(keepdim), Value()});
}
absl::StatusOr<Tensor> Mul(OpRegistry& r, const Value& a, const Value& b) {
  return CallOne(r, "mul.Tensor", {a, b});
}
absl::StatusOr<Tensor> Sub(OpRegistry& r, const Value& a, const Value& b) {
  return CallOne(r, "sub.Tensor", {a, b, Value(Scalar(int64_t{1}))});
}
absl::StatusOr<Tensor> Add(OpRegistry& r, const Value& a, const Value& b) {
  return CallOne(r, "add.Tensor", {a, b, Value(Scalar(int64_t{1}))});
}
absl::StatusOr<Tensor> Scale(OpRegistry& r, const Value& a, double factor) {
  return CallOne(r, "mul.Scalar", {a, Value(Scalar(factor))});
}
absl::StatusOr<Tensor> Reshape(OpRegistry& r, const Value& a, IntList shape) {
  return CallOne(r, "reshape", {a, Value(std::move(shape))});
}

// native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group,
// output_mask) -> (grad_input, grad_weight, grad_bias)
TensorsOr GroupNormBackward(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& dy = s[0].tensor();
  const Tensor& x = s[1].tensor();
  const Tensor& mean = s[2].tensor();
  const Tensor& rstd = s[3].tensor();
  const bool has_gamma = s[4].is_tensor();
  const int64_t N = s[5].to_int(), C = s[6].to_int(), HxW = s[7].to_int();
  const int64_t group = s[8].to_int();
  TSR_ASSIGN_OR_RETURN(const auto mask, OutputMask(op, s[9]));
  if (x.dtype() != dy.dtype()) return Invalid(op, "Expected scalar types of X and dY are same.");
  // Mixed type (native/cpu/mixed_data_type.h): mean's dtype is not the input's.
  const bool mixed = mean.dtype() != x.dtype();
  if (mixed) {
    if (!IsReducedFloat(x.dtype())) {
      return Invalid(op, "mixed dtype (CPU): all inputs must share same datatype.");
    }
    if (mean.dtype() != ScalarType::kFloat32 || rstd.dtype() != ScalarType::kFloat32) {
      return Invalid(op, "mixed dtype (CPU): expect parameter to have scalar type of Float");
    }
  }
  const ScalarType param_dtype = has_gamma ? s[4].tensor().dtype() : x.dtype();
  std::vector<Tensor> grads(3);
  if (x.numel() == 0) {  // ATen's early return, before its kernel's checks
    if (mask[0]) {
      TSR_ASSIGN_OR_RETURN(grads[0], Zeros(r, x.sizes(), x.dtype(), x.device()));
    }
    for (int i : {1, 2}) {
      if (!mask[i]) continue;
      TSR_ASSIGN_OR_RETURN(grads[i], Zeros(r, IntList{C}, param_dtype, x.device()));
    }
    return grads;
  }
  if (!IsFloatingType(x.dtype())) return NotFloating(op, x.dtype());
  absl::StatusOr<int64_t> count = CheckedMul(N, C, op.name(), "N * C");
  if (count.ok()) count = CheckedMul(*count, HxW, op.name(), "N * C * HxW");
  const bool count_ok = N >= 0 && C >= 0 && HxW >= 0 && count.ok();
  if (!count_ok || dy.numel() != *count) {
    return Invalid(op, "Expected dY.numel() == N * C * HxW to be true, but got false.");
  }
  if (x.numel() != *count) {
    return Invalid(op, "Expected X.numel() == N * C * HxW to be true, but got false.");
  }
  absl::StatusOr<int64_t> stats = CheckedMul(N, group, op.name(), "N * group");
  if (!stats.ok() || mean.numel() != *stats) {
    return Invalid(op, "Expected mean.numel() == N * group to be true, but got false.");
  }
  if (rstd.numel() != *stats) {
    return Invalid(op, "Expected rstd.numel() == N * group to be true, but got false.");
  }
  if (has_gamma && s[4].tensor().numel() != C) {
    return Invalid(op,
                   "Expected !gamma.defined() || gamma.numel() == C to be true, but got false.");
  }
  // ATen's kernel divides C by group unchecked; its decomposition checks, with this message.
  if (group <= 0 || C % group != 0) {
    return Invalid(op, absl::StrFormat("Expect number of channels %d to be evenly-divisible by "
                                       "number of groups %d",
                                       C, group));
  }
  // The kernel reads rstd and gamma as mean's dtype (the parameters' type).
  for (const Tensor* t : {&rstd, has_gamma ? &s[4].tensor() : nullptr}) {
    if (t != nullptr && t->dtype() != mean.dtype()) {
      return Invalid(op, absl::StrFormat("expected scalar type %s but found %s",
                                         AtenTypeName(mean.dtype()), AtenTypeName(t->dtype())));
    }
  }
  const int64_t D = C / group;
  const Opmath math(x.dtype());
  TSR_ASSIGN_OR_RETURN(const Value g_in, math.In(r, s[0]));
  TSR_ASSIGN_OR_RETURN(const Value x_in, math.In(r, s[1]));
  TSR_ASSIGN_OR_RETURN(const Value mean_in, math.In(r, s[2]));
  TSR_ASSIGN_OR_RETURN(const Value rstd_in, math.In(r, s[3]));
  TSR_ASSIGN_OR_RETURN(const Tensor g3, Reshape(r, g_in, {N, C, HxW}));
  TSR_ASSIGN_OR_RETURN(const Tensor x3, Reshape(r, x_in, {N, C, HxW}));
  TSR_ASSIGN_OR_RETURN(const Tensor m3, Reshape(r, mean_in, {N, group, 1}));
  TSR_ASSIGN_OR_RETURN(const Tensor r3, Reshape(r, rstd_in, {N, group, 1}));
  TSR_ASSIGN_OR_RETURN(Tensor gx, Mul(r, Value(g3), Value(x3)));
  TSR_ASSIGN_OR_RETURN(const Tensor ds, Sum(r, Value(gx), {2}, false));  // [N, C]
  TSR_ASSIGN_OR_RETURN(const Tensor db, Sum(r, Value(g3), {2}, false));  // [N, C]
  std::optional<Value> gamma;
  if (has_gamma) {
    TSR_ASSIGN_OR_RETURN(Value w, math.In(r, s[4]));
    TSR_ASSIGN_OR_RETURN(Tensor flat, Reshape(r, w, {C}));
    gamma = Value(std::move(flat));
  }
  if (mask[0]) {
    const double scale = 1.0 / (static_cast<double>(D) * static_cast<double>(HxW));
    Value ds_w(ds), db_w(db);
    if (gamma) {
      TSR_ASSIGN_OR_RETURN(Tensor a, Mul(r, ds_w, *gamma));
      TSR_ASSIGN_OR_RETURN(Tensor b, Mul(r, db_w, *gamma));
      ds_w = Value(std::move(a));
      db_w = Value(std::move(b));
    }
    TSR_ASSIGN_OR_RETURN(Tensor ds_grouped, Reshape(r, ds_w, {N, group, D}));
    TSR_ASSIGN_OR_RETURN(Tensor db_grouped, Reshape(r, db_w, {N, group, D}));
    TSR_ASSIGN_OR_RETURN(const Tensor ds_g, Sum(r, Value(ds_grouped), {2}, true));  // [N, G, 1]
    TSR_ASSIGN_OR_RETURN(const Tensor db_g, Sum(r, Value(db_grouped), {2}, true));
    Tensor c1 = r3;  // rstd * gamma[c]: [N, G, D] or [N, G, 1]
    if (gamma) {
      TSR_ASSIGN_OR_RETURN(Tensor gamma_g, Reshape(r, *gamma, {1, group, D}));
      TSR_ASSIGN_OR_RETURN(c1, Mul(r, Value(r3), Value(gamma_g)));
    }
    TSR_ASSIGN_OR_RETURN(c1, CallOne(r, "unsqueeze", {Value(c1), Value(int64_t{3})}));
    TSR_ASSIGN_OR_RETURN(Tensor c2, Mul(r, Value(db_g), Value(m3)));
    TSR_ASSIGN_OR_RETURN(c2, Sub(r, Value(c2), Value(ds_g)));
    TSR_ASSIGN_OR_RETURN(Tensor r_cubed, Mul(r, Value(r3), Value(r3)));
    TSR_ASSIGN_OR_RETURN(r_cubed, Mul(r, Value(r_cubed), Value(r3)));
    TSR_ASSIGN_OR_RETURN(c2, Mul(r, Value(c2), Value(r_cubed)));
    TSR_ASSIGN_OR_RETURN(c2, Scale(r, Value(c2), scale));
    TSR_ASSIGN_OR_RETURN(Tensor c3, Mul(r, Value(c2), Value(m3)));
    TSR_ASSIGN_OR_RETURN(Tensor c3b, Mul(r, Value(db_g), Value(r3)));
    TSR_ASSIGN_OR_RETURN(c3b, Scale(r, Value(c3b), scale));
    TSR_ASSIGN_OR_RETURN(c3, Add(r, Value(c3), Value(c3b)));
    TSR_ASSIGN_OR_RETURN(c3, Scale(r, Value(c3), -1.0));
    TSR_ASSIGN_OR_RETURN(c2, Reshape(r, Value(c2), {N, group, 1, 1}));
    TSR_ASSIGN_OR_RETURN(c3, Reshape(r, Value(c3), {N, group, 1, 1}));
    TSR_ASSIGN_OR_RETURN(Tensor g4, Reshape(r, Value(g3), {N, group, D, HxW}));
    TSR_ASSIGN_OR_RETURN(Tensor x4, Reshape(r, Value(x3), {N, group, D, HxW}));
    TSR_ASSIGN_OR_RETURN(Tensor dx, Mul(r, Value(g4), Value(c1)));
    TSR_ASSIGN_OR_RETURN(Tensor xc2, Mul(r, Value(x4), Value(c2)));
    TSR_ASSIGN_OR_RETURN(dx, Add(r, Value(dx), Value(xc2)));
    TSR_ASSIGN_OR_RETURN(dx, Add(r, Value(dx), Value(c3)));
    TSR_ASSIGN_OR_RETURN(dx, Reshape(r, Value(dx), ToIntList(x.sizes())));
    TSR_ASSIGN_OR_RETURN(grads[0], math.Out(r, std::move(dx)));
  }
  const Opmath param_out(math.compute, param_dtype);
  if (mask[1]) {
    TSR_ASSIGN_OR_RETURN(Tensor ds_grouped, Reshape(r, Value(ds), {N, group, D}));
    TSR_ASSIGN_OR_RETURN(Tensor db_grouped, Reshape(r, Value(db), {N, group, D}));
    TSR_ASSIGN_OR_RETURN(Tensor term, Mul(r, Value(db_grouped), Value(m3)));
    TSR_ASSIGN_OR_RETURN(term, Sub(r, Value(ds_grouped), Value(term)));
    TSR_ASSIGN_OR_RETURN(term, Mul(r, Value(term), Value(r3)));
    TSR_ASSIGN_OR_RETURN(Tensor dgamma, Sum(r, Value(term), {0}, false));
    TSR_ASSIGN_OR_RETURN(dgamma, Reshape(r, Value(dgamma), {C}));
    TSR_ASSIGN_OR_RETURN(grads[1], param_out.Out(r, std::move(dgamma)));
  }
  if (mask[2]) {
    TSR_ASSIGN_OR_RETURN(Tensor dbeta, Sum(r, Value(db), {0}, false));
    TSR_ASSIGN_OR_RETURN(grads[2], param_out.Out(r, std::move(dbeta)));
  }
  return grads;
}

}  // namespace

absl::Status DefineGroupNormBackwardOps(OpRegistry& registry) {
  return DefineAll(
      registry,
      {
          {"native_group_norm_backward(Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, "
           "Tensor? weight, SymInt N, SymInt C, SymInt HxW, int group, bool[3] output_mask) -> "
           "(Tensor, Tensor, Tensor)",
           MakeKernel<Named<GroupNormBackward>>("core::native_group_norm_backward")},
          {"native_group_norm_backward.out(Tensor grad_out, Tensor input, Tensor mean, Tensor "
           "rstd, Tensor? weight, SymInt N, SymInt C, SymInt HxW, int group, bool[3] output_mask, "
           "*, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), "
           "Tensor(c!))",
           MakeKernel<Named<ComputeIntoOuts<GroupNormBackward, 10, 3>>>(
               "core::native_group_norm_backward_out")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera

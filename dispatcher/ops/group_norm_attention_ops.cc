// Op set 1.9's group normalization, scaled dot-product attention and the Core ATen batch-norm
// variants, composites over ops every backend has:
// - native_group_norm (and .out) and group_norm: the statistics of each (sample, group) over its
//   C / group channels and HxW positions, biased variance, as ATen's group_norm.cpp and its
//   math_group_norm; the 16-bit floats compute in float32 and round once (Opmath), as ATen's
//   CPU kernel. mean and rstd are [N, group], in the input's dtype, or float32 where a 16-bit
//   input has float32 weight and bias (ATen's "mixed type").
// - scaled_dot_product_attention: ATen's math path (_scaled_dot_product_attention_math), see
//   Note [Attention's math path].
// - _native_batch_norm_legit (and .no_stats, _native_batch_norm_legit_no_training, each with its
//   out= form): native_batch_norm with the Core ATen ops' argument conventions, as
//   torch/_decomp/decompositions.py writes them. Not training, save_mean and save_invstd are
//   empty ([0]), as ATen's CPU kernel and its decomposition on CPU return them.
#include <cmath>
#include <limits>

#include "absl/strings/str_format.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {
namespace {

// ---- group norm ----

// CheckGroupNormInputs: ATen's check_group_norm_inputs, for an input of `shape` (printed in the
// messages) with C channels. (ATen's bias message prints weight's shape, a slip: the bias's is
// printed here.)
absl::Status CheckGroupNormInputs(const OperatorHandle& op, IntArrayRef shape, const Value& weight,
                                  const Value& bias, int64_t C, int64_t group) {
  if (group <= 0) {
    return Invalid(op, absl::StrFormat("Expected num groups to be greater than 0, got %d", group));
  }
  if (C % group != 0) {
    return Invalid(op, absl::StrFormat("Expected number of channels in input to be divisible by "
                                       "num_groups, but got input of shape %s and num_groups=%d",
                                       ShapeToString(shape), group));
  }
  for (const auto& [arg, v] : {std::pair<const char*, const Value*>{"weight", &weight},
                               std::pair<const char*, const Value*>{"bias", &bias}}) {
    if (v->is_none()) continue;
    const Tensor& t = v->tensor();
    if (t.dim() != 1 || t.numel() != C) {
      return Invalid(op, absl::StrFormat("Expected %s to be a vector of size equal to the number "
                                         "of channels in input, but got %s of shape %s and input "
                                         "of shape %s",
                                         arg, arg, ShapeToString(t.sizes()), ShapeToString(shape)));
    }
  }
  return absl::OkStatus();
}

// GroupNormStatDtype: the dtype of mean and rstd, after ATen's mixed-type rules
// (native/cpu/mixed_data_type.h): weight and bias (those given) share one dtype; where it is
// not the input's, the input must be a 16-bit float and the parameters float32, and the
// statistics are float32.
absl::StatusOr<ScalarType> GroupNormStatDtype(const OperatorHandle& op, const Tensor& x,
                                              const Value& weight, const Value& bias) {
  std::optional<ScalarType> param;
  for (const Value* v : {&weight, &bias}) {
    if (v->is_none()) continue;
    if (param.has_value() && *param != v->tensor().dtype()) {
      return Invalid(op, "mixed dtype (CPU): all inputs must share same datatype.");
    }
    param = v->tensor().dtype();
  }
  if (!param.has_value() || *param == x.dtype()) return x.dtype();
  if (x.dtype() != ScalarType::kFloat16 && x.dtype() != ScalarType::kBFloat16) {
    return Invalid(op, "mixed dtype (CPU): all inputs must share same datatype.");
  }
  if (*param != ScalarType::kFloat32) {
    return Invalid(op, "mixed dtype (CPU): expect parameter to have scalar type of Float");
  }
  return ScalarType::kFloat32;
}

// native_group_norm(input, weight, bias, N, C, HxW, group, eps) -> (out, mean, rstd)
TensorsOr NativeGroupNormK(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& x = s[0].tensor();
  const int64_t N = s[3].to_int(), C = s[4].to_int(), HxW = s[5].to_int();
  const int64_t group = s[6].to_int();
  const double eps = s[7].to_double();
  TSR_RETURN_IF_ERROR(CheckGroupNormInputs(op, x.sizes(), s[1], s[2], C, group));
  TSR_ASSIGN_OR_RETURN(const ScalarType stat_dtype, GroupNormStatDtype(op, x, s[1], s[2]));
  if (!IsFloatingType(x.dtype())) return NotFloating(op, x.dtype());
  // ATen's kernel checks the element count (its empty early return does not; here a negative
  // or inconsistent N, C or HxW is refused on every path).
  absl::StatusOr<int64_t> count = CheckedMul(N, C, op.name(), "N * C");
  if (count.ok()) count = CheckedMul(*count, HxW, op.name(), "N * C * HxW");
  if (N < 0 || C < 0 || HxW < 0 || !count.ok() || *count != x.numel()) {
    return Invalid(op, absl::StrFormat("Expected X.numel() == N * C * HxW, but got input of "
                                       "shape %s and N=%d, C=%d, HxW=%d",
                                       ShapeToString(x.sizes()), N, C, HxW));
  }
  const IntList stat_shape{N, group};
  if (x.numel() == 0) {
    // ATen's early return: mean 0 and rstd NaN for each (sample, group) there is.
    TSR_ASSIGN_OR_RETURN(Tensor out, EmptyOf(r, x, x.sizes()));
    TSR_ASSIGN_OR_RETURN(Tensor mean, Zeros(r, stat_shape, stat_dtype, x.device()));
    TSR_ASSIGN_OR_RETURN(
        Tensor rstd,
        CallOne(r, "full",
                {Value(stat_shape), Value(Scalar(std::numeric_limits<double>::quiet_NaN())),
                 Value(stat_dtype), Value(), Value(x.device()), Value()}));
    return std::vector<Tensor>{out, mean, rstd};
  }
  const Opmath math(x.dtype());
  TSR_ASSIGN_OR_RETURN(Value xc, math.In(r, s[0]));
  TSR_ASSIGN_OR_RETURN(Tensor grouped,
                       CallOne(r, "reshape", {xc, Value(IntList{N, group, C / group * HxW})}));
  const Value dims(IntList{2});
  TSR_ASSIGN_OR_RETURN(
      Tensor var,
      CallOne(r, "var.correction", {Value(grouped), dims, Value(Scalar(int64_t{0})), Value(true)}));
  TSR_ASSIGN_OR_RETURN(Tensor mean,
                       CallOne(r, "mean.dim", {Value(grouped), dims, Value(true), Value()}));
  TSR_ASSIGN_OR_RETURN(
      Tensor shifted,
      CallOne(r, "add.Scalar", {Value(var), Value(Scalar(eps)), Value(Scalar(int64_t{1}))}));
  TSR_ASSIGN_OR_RETURN(Tensor rstd, CallOne(r, "rsqrt", {Value(shifted)}));
  TSR_ASSIGN_OR_RETURN(
      Tensor centered,
      CallOne(r, "sub.Tensor", {Value(grouped), Value(mean), Value(Scalar(int64_t{1}))}));
  TSR_ASSIGN_OR_RETURN(Tensor y, CallOne(r, "mul.Tensor", {Value(centered), Value(rstd)}));
  // The affine step per channel, on an [N, C, HxW] view (whatever shape the input has).
  TSR_ASSIGN_OR_RETURN(y, CallOne(r, "reshape", {Value(y), Value(IntList{N, C, HxW})}));
  if (s[1].is_tensor()) {
    TSR_ASSIGN_OR_RETURN(Value w, math.In(r, s[1]));
    TSR_ASSIGN_OR_RETURN(Tensor w3, View(w.tensor(), {C, 1}));
    TSR_ASSIGN_OR_RETURN(y, CallOne(r, "mul.Tensor", {Value(y), Value(w3)}));
  }
  if (s[2].is_tensor()) {
    TSR_ASSIGN_OR_RETURN(Value b, math.In(r, s[2]));
    TSR_ASSIGN_OR_RETURN(Tensor b3, View(b.tensor(), {C, 1}));
    TSR_ASSIGN_OR_RETURN(
        y, CallOne(r, "add.Tensor", {Value(y), Value(b3), Value(Scalar(int64_t{1}))}));
  }
  const std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
  TSR_ASSIGN_OR_RETURN(
      y, CallOne(r, "reshape", {Value(y), Value(IntList(shape.begin(), shape.end()))}));
  TSR_ASSIGN_OR_RETURN(y, math.Out(r, std::move(y)));
  std::vector<Tensor> stats;
  for (const Tensor& t : {mean, rstd}) {
    TSR_ASSIGN_OR_RETURN(Tensor flat, CallOne(r, "reshape", {Value(t), Value(stat_shape)}));
    TSR_ASSIGN_OR_RETURN(Tensor rounded, Opmath(t.dtype(), stat_dtype).Out(r, flat));
    stats.push_back(std::move(rounded));
  }
  return std::vector<Tensor>{y, stats[0], stats[1]};
}

// group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True): N and C
// are the input's first two dims, HxW the product of the rest; native_group_norm's output.
absl::StatusOr<Tensor> GroupNormOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& x = s[0].tensor();
  // ATen reads sizes 0 and 1 (sym_size), PyTorch's IndexError.
  if (x.dim() == 0) {
    return absl::OutOfRangeError(
        absl::StrCat(op.name(), ": Dimension specified as 0 but tensor has no dimensions"));
  }
  if (x.dim() == 1) {
    return absl::OutOfRangeError(absl::StrCat(
        op.name(), ": Dimension out of range (expected to be in range of [-1, 0], but got 1)"));
  }
  const int64_t N = x.sizes()[0], C = x.sizes()[1];
  // (An empty input's sizes may multiply past int64: checked.)
  int64_t HxW = 1;
  for (int64_t d = 2; d < x.dim(); ++d) {
    TSR_ASSIGN_OR_RETURN(HxW, CheckedMul(HxW, x.sizes()[d], op.name(), "HxW"));
  }
  TSR_RETURN_IF_ERROR(CheckGroupNormInputs(op, x.sizes(), s[2], s[3], C, s[1].to_int()));
  return CallOne(op.registry(), "native_group_norm",
                 {s[0], s[2], s[3], Value(N), Value(C), Value(HxW), s[1], s[4]});
}

// ---- scaled dot-product attention ----

// Note [Attention's math path]
// scaled_dot_product_attention follows ATen's _scaled_dot_product_attention_math (current
// PyTorch; 1.13 has no public op), the path every device can take:
// - query, key and value share a dtype and have 2 dims or more; batch dims broadcast (matmul).
// - The 16-bit floats compute in float32 and round once at the end (ATen converts q, k and v).
// - scale defaults to 1/sqrt(E), E = query.size(-1); sqrt(|scale|) multiplies query and key
//   each (and a negative scale negates query), as ATen scales them for stability.
// - attn_mask: bool (True takes part, False adds -inf), float32 or query's dtype (added); it
//   must broadcast to the attention weights' shape [..., L, S] (ATen adds it in place).
//   is_causal: the lower triangle of [L, S] takes part; an explicit mask with it is refused.
// - enable_gqa: key and value heads (dim -3) repeated to query's (repeat_interleave).
// - Softmax over S, except that a row whose scores are all -inf (fully masked) gives zeros:
//   current ATen's _safe_softmax (PyTorch 2.5 on; before it, such rows gave NaN).
// - dropout_p > 0: the weights go through `dropout` (train=True), which draws from the default
//   generator; the conformance samples use dropout_p = 0. dropout_p <= 0 applies no dropout
//   (ATen tests dropout_p > 0.0, so a negative one is not refused).
// Floating dtypes only (ATen's CPU kernels).

// RepeatHeads: `t` with each head (dim -3) repeated `times` times, the copies adjacent
// (repeat_interleave).
absl::StatusOr<Tensor> RepeatHeads(OpRegistry& r, const Tensor& t, int64_t times) {
  if (times == 1) return t;
  const int64_t heads_dim = t.dim() - 3;
  TSR_ASSIGN_OR_RETURN(Tensor split, Unsqueeze(t, heads_dim + 1));
  DimVector expanded(split.sizes().begin(), split.sizes().end());
  expanded[heads_dim + 1] = times;
  TSR_ASSIGN_OR_RETURN(Tensor wide, Expand(split, expanded));
  IntList shape(t.sizes().begin(), t.sizes().end());
  shape[heads_dim] *= times;
  return CallOne(r, "reshape", {Value(wide), Value(shape)});
}

// AdditiveMask: a tensor of masked_out's shape and `dtype`: -inf where `masked_out`, else 0.
absl::StatusOr<Tensor> AdditiveMask(OpRegistry& r, const Tensor& masked_out, ScalarType dtype) {
  TSR_ASSIGN_OR_RETURN(Tensor zeros, Zeros(r, masked_out.sizes(), dtype, masked_out.device()));
  return CallOne(
      r, "masked_fill.Scalar",
      {Value(zeros), Value(masked_out), Value(Scalar(-std::numeric_limits<double>::infinity()))});
}

// scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
// is_causal=False, *, scale=None, enable_gqa=False)
absl::StatusOr<Tensor> AttentionOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& q = s[0].tensor();
  const Tensor& k = s[1].tensor();
  const Tensor& v = s[2].tensor();
  const double dropout_p = s[4].to_double();
  const bool is_causal = s[5].to_bool();
  const bool enable_gqa = s[7].to_bool();
  // ATen's validate_sdpa_input.
  if (q.dtype() != k.dtype() || q.dtype() != v.dtype()) {
    return Invalid(op, absl::StrFormat("Expected query, key, and value to have the same dtype, "
                                       "but got query.dtype: %s key.dtype: %s and value.dtype: "
                                       "%s instead.",
                                       ScalarTypeName(q.dtype()), ScalarTypeName(k.dtype()),
                                       ScalarTypeName(v.dtype())));
  }
  if (q.dim() < 2 || k.dim() < 2 || v.dim() < 2) {
    return Invalid(op, absl::StrFormat("Expected query, key, and value to all be at least 2 "
                                       "dimensional, but got query.dim: %d key.dim: %d and "
                                       "value.dim: %d instead.",
                                       q.dim(), k.dim(), v.dim()));
  }
  if (s[3].is_tensor()) {
    const ScalarType mask_dtype = s[3].tensor().dtype();
    if (mask_dtype != ScalarType::kBool && mask_dtype != ScalarType::kFloat32 &&
        mask_dtype != q.dtype()) {
      return Invalid(op, absl::StrFormat("Expected attn_mask dtype to be bool or float or to "
                                         "match query dtype, but got attn_mask.dtype: %s and "
                                         "query.dtype: %s instead.",
                                         ScalarTypeName(mask_dtype), ScalarTypeName(q.dtype())));
    }
  }
  if (!IsFloatingType(q.dtype())) return NotFloating(op, q.dtype());
  // The products' shapes, checked here so that a mismatch names the arguments, not matmul's.
  if (q.sizes().back() != k.sizes().back()) {
    return Invalid(op, absl::StrFormat("Expected query and key to have the same last dim (the "
                                       "embedding E), but got query %s and key %s",
                                       ShapeToString(q.sizes()), ShapeToString(k.sizes())));
  }
  if (k.sizes()[k.dim() - 2] != v.sizes()[v.dim() - 2]) {
    return Invalid(op, absl::StrFormat("Expected key and value to have the same sequence length "
                                       "(dim -2), but got key %s and value %s",
                                       ShapeToString(k.sizes()), ShapeToString(v.sizes())));
  }
  if (is_causal && s[3].is_tensor()) {
    return Invalid(op,
                   "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                   "is_causal=True");
  }
  const Opmath math(q.dtype());
  // The mask, additive, in query's dtype (ATen's convert_boolean_attn_mask) or as given.
  std::optional<Tensor> mask;
  if (s[3].is_tensor()) {
    const Tensor& given = s[3].tensor();
    if (given.dtype() == ScalarType::kBool) {
      TSR_ASSIGN_OR_RETURN(Tensor out, CallOne(r, "logical_not", {s[3]}));
      TSR_ASSIGN_OR_RETURN(mask, AdditiveMask(r, out, q.dtype()));
    } else {
      mask = given;
    }
  }
  TSR_ASSIGN_OR_RETURN(Value qc, math.In(r, s[0]));
  TSR_ASSIGN_OR_RETURN(Value kc, math.In(r, s[1]));
  TSR_ASSIGN_OR_RETURN(Value vc, math.In(r, s[2]));
  const int64_t L = q.sizes()[q.dim() - 2], S = k.sizes()[k.dim() - 2];
  const int64_t E = q.sizes()[q.dim() - 1];
  const bool negative = !s[6].is_none() && s[6].to_double() < 0;
  const double factor = std::sqrt(s[6].is_none() ? 1.0 / std::sqrt(static_cast<double>(E))
                                                 : std::abs(s[6].to_double()));
  TSR_ASSIGN_OR_RETURN(Tensor qs,
                       CallOne(r, "mul.Scalar", {qc, Value(Scalar(negative ? -factor : factor))}));
  if (is_causal) {
    TSR_ASSIGN_OR_RETURN(Tensor ones, CallOne(r, "ones",
                                              {Value(IntList{L, S}), Value(ScalarType::kBool),
                                               Value(), Value(q.device()), Value()}));
    TSR_ASSIGN_OR_RETURN(Tensor above, CallOne(r, "triu", {Value(ones), Value(int64_t{1})}));
    TSR_ASSIGN_OR_RETURN(mask, AdditiveMask(r, above, math.compute));
  }
  Tensor keys = kc.tensor(), values = vc.tensor();
  if (enable_gqa) {
    // ATen's pre_process_group_query_attention_input reads dim -3 of each (an IndexError
    // below 3 dims).
    for (const Tensor* t : {&q, &k, &v}) {
      if (t->dim() < 3) {
        return absl::OutOfRangeError(absl::StrFormat(
            "%s: Dimension out of range (expected to be in range of [%d, %d], but got -3)",
            op.name(), -t->dim(), t->dim() - 1));
      }
    }
    const int64_t hq = q.sizes()[q.dim() - 3], hk = k.sizes()[k.dim() - 3],
                  hv = v.sizes()[v.dim() - 3];
    if (!(hq == hk && hk == hv)) {
      if (hk == 0 || hv == 0 || hq % hk != 0 || hq % hv != 0) {
        return Invalid(op, absl::StrFormat("Number of heads in key and value must divide the "
                                           "number of heads in query, but got %d query heads, "
                                           "%d key heads and %d value heads",
                                           hq, hk, hv));
      }
      TSR_ASSIGN_OR_RETURN(keys, RepeatHeads(r, keys, hq / hk));
      TSR_ASSIGN_OR_RETURN(values, RepeatHeads(r, values, hq / hv));
    }
  }
  TSR_ASSIGN_OR_RETURN(Tensor kt, Transpose(keys, keys.dim() - 2, keys.dim() - 1));
  TSR_ASSIGN_OR_RETURN(Tensor ks, CallOne(r, "mul.Scalar", {Value(kt), Value(Scalar(factor))}));
  TSR_ASSIGN_OR_RETURN(Tensor scores, CallOne(r, "matmul", {Value(qs), Value(ks)}));
  if (mask.has_value()) {
    TSR_RETURN_IF_ERROR(CheckBroadcastsTo(op, "attn_mask", mask->sizes(), scores.sizes(),
                                          "the attention weights' shape"));
    // The scores keep their dtype (ATen adds in place): a float32 mask under float64 scores
    // promotes to them, a 16-bit one under float32 (Opmath) scores as well.
    TSR_ASSIGN_OR_RETURN(
        scores, CallOne(r, "add.Tensor", {Value(scores), Value(*mask), Value(Scalar(int64_t{1}))}));
    if (scores.dtype() != math.compute) {
      TSR_ASSIGN_OR_RETURN(scores, CallOne(r, "_to_copy", {Value(scores), Value(math.compute)}));
    }
  }
  TSR_ASSIGN_OR_RETURN(Tensor weights,
                       CallOne(r, "_softmax", {Value(scores), Value(int64_t{-1}), Value(false)}));
  if (S > 0) {
    // _safe_softmax: a row of -inf scores only gives zeros (its softmax would be NaN).
    TSR_ASSIGN_OR_RETURN(
        Tensor is_neg_inf,
        CallOne(r, "eq.Scalar",
                {Value(scores), Value(Scalar(-std::numeric_limits<double>::infinity()))}));
    TSR_ASSIGN_OR_RETURN(
        Tensor masked_rows,
        CallOne(r, "all.dim", {Value(is_neg_inf), Value(int64_t{-1}), Value(true)}));
    TSR_ASSIGN_OR_RETURN(Tensor zero, Zeros(r, {}, weights.dtype(), weights.device()));
    TSR_ASSIGN_OR_RETURN(
        weights, CallOne(r, "where.self", {Value(masked_rows), Value(zero), Value(weights)}));
  }
  if (dropout_p > 0) {
    TSR_ASSIGN_OR_RETURN(weights,
                         CallOne(r, "dropout", {Value(weights), Value(dropout_p), Value(true)}));
  }
  TSR_ASSIGN_OR_RETURN(Tensor out, CallOne(r, "matmul", {Value(weights), Value(values)}));
  return math.Out(r, std::move(out));
}

// ---- the Core ATen batch-norm variants ----

// CallBatchNorm: native_batch_norm's three returns (running statistics None or as given).
TensorsOr CallBatchNorm(OpRegistry& r, const Stack& s, const Value& running_mean,
                        const Value& running_var, const Value& training, const Value& momentum,
                        const Value& eps) {
  TSR_ASSIGN_OR_RETURN(OperatorHandle native, r.Find("native_batch_norm"));
  Stack call{s[0], s[1], s[2], running_mean, running_var, training, momentum, eps};
  TSR_RETURN_IF_ERROR(r.Call(native, &call));
  return std::vector<Tensor>{call[0].tensor(), call[1].tensor(), call[2].tensor()};
}

// _native_batch_norm_legit(input, weight, bias, running_mean!, running_var!, training,
// momentum, eps): native_batch_norm with the running statistics required (updated in place
// when training).
TensorsOr BatchNormLegitK(const OperatorHandle& op, const Stack& s) {
  return CallBatchNorm(op.registry(), s, s[3], s[4], s[5], s[6], s[7]);
}

// _native_batch_norm_legit.no_stats(input, weight, bias, training, momentum, eps): without
// running statistics (not training, native_batch_norm refuses: it has none to use).
TensorsOr BatchNormLegitNoStatsK(const OperatorHandle& op, const Stack& s) {
  return CallBatchNorm(op.registry(), s, Value(), Value(), s[3], s[4], s[5]);
}

// _native_batch_norm_legit_no_training(input, weight, bias, running_mean, running_var,
// momentum, eps): inference with the running statistics, which stay unchanged.
TensorsOr BatchNormLegitNoTrainingK(const OperatorHandle& op, const Stack& s) {
  return CallBatchNorm(op.registry(), s, s[3], s[4], Value(false), s[5], s[6]);
}

}  // namespace

absl::Status DefineGroupNormAttentionOps(OpRegistry& registry) {
  return DefineAll(
      registry,
      {
          {"native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, "
           "SymInt HxW, int group, float eps) -> (Tensor, Tensor, Tensor)",
           MakeKernel<Named<NativeGroupNormK>>("core::native_group_norm")},
          {"native_group_norm.out(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, "
           "SymInt HxW, int group, float eps, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) "
           "out2) -> (Tensor(a!), Tensor(b!), Tensor(c!))",
           MakeKernel<Named<ComputeIntoOuts<NativeGroupNormK, 8, 3>>>(
               "core::native_group_norm_out")},
          {"group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, "
           "float eps=1e-05, bool cudnn_enabled=True) -> Tensor",
           MakeKernel<Named<ComputeOne<GroupNormOf>>>("core::group_norm")},
          {"scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? "
           "attn_mask=None, float dropout_p=0.0, bool is_causal=False, *, float? scale=None, "
           "bool enable_gqa=False) -> Tensor",
           MakeKernel<Named<ComputeOne<AttentionOf>>>("core::scaled_dot_product_attention")},
          {"_native_batch_norm_legit(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) "
           "running_mean, Tensor(b!) running_var, bool training, float momentum, float eps) -> "
           "(Tensor, Tensor, Tensor)",
           MakeKernel<Named<BatchNormLegitK>>("core::_native_batch_norm_legit")},
          {"_native_batch_norm_legit.out(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) "
           "running_mean, Tensor(b!) running_var, bool training, float momentum, float eps, *, "
           "Tensor(d!) out, Tensor(e!) save_mean, Tensor(f!) save_invstd) -> (Tensor(d!), "
           "Tensor(e!), Tensor(f!))",
           MakeKernel<Named<ComputeIntoOuts<BatchNormLegitK, 8, 3>>>(
               "core::_native_batch_norm_legit_out")},
          {"_native_batch_norm_legit.no_stats(Tensor input, Tensor? weight, Tensor? bias, bool "
           "training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
           MakeKernel<Named<BatchNormLegitNoStatsK>>("core::_native_batch_norm_legit_no_stats")},
          {"_native_batch_norm_legit.no_stats_out(Tensor input, Tensor? weight, Tensor? bias, "
           "bool training, float momentum, float eps, *, Tensor(a!) out, Tensor(b!) save_mean, "
           "Tensor(c!) save_invstd) -> (Tensor(a!), Tensor(b!), Tensor(c!))",
           MakeKernel<Named<ComputeIntoOuts<BatchNormLegitNoStatsK, 6, 3>>>(
               "core::_native_batch_norm_legit_no_stats_out")},
          {"_native_batch_norm_legit_no_training(Tensor input, Tensor? weight, Tensor? bias, "
           "Tensor running_mean, Tensor running_var, float momentum, float eps) -> (Tensor, "
           "Tensor, Tensor)",
           MakeKernel<Named<BatchNormLegitNoTrainingK>>(
               "core::_native_batch_norm_legit_no_training")},
          {"_native_batch_norm_legit_no_training.out(Tensor input, Tensor? weight, Tensor? bias, "
           "Tensor running_mean, Tensor running_var, float momentum, float eps, *, Tensor(a!) "
           "out0, Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), Tensor(c!))",
           MakeKernel<Named<ComputeIntoOuts<BatchNormLegitNoTrainingK, 7, 3>>>(
               "core::_native_batch_norm_legit_no_training_out")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera

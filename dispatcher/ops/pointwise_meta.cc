// Pointwise ops (unary, binary, ternary; op set v1): schemas and meta functions, and the plan
// every pointwise table's rows share (pointwise_table.h).
//
// The checks PyTorch makes in its meta functions
// (bool negation, bitwise ops on floats, rounding modes, alpha, gelu's approximate) are made
// here, on every device; kernels make none of them again.
#include <cmath>

#include "absl/strings/str_format.h"
#include "core/type_promotion.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"
#include "dispatcher/ops/plan_support.h"
#include "dispatcher/ops/pointwise_table.h"
#include "dispatcher/unboxed_call.h"
#include "tessera/base/op_checks.hpp"

namespace tessera {
namespace ops {
namespace {

constexpr ScalarType kDefaultFloat = ScalarType::kFloat32;

int32_t KindOf(const Scalar& s) {
  return s.is_bool() ? TSR_SCALAR_BOOL : s.is_floating_point() ? TSR_SCALAR_DOUBLE : TSR_SCALAR_INT;
}
tsr_dtype CDtype(ScalarType t) { return static_cast<tsr_dtype>(t); }

// add/sub's alpha (argument 2).
template <typename Args>
absl::Status CheckAlpha(const OperatorHandle& op, const Args& s, ScalarType compute) {
  if (!s[2].is_scalar()) return absl::OkStatus();
  return RefusedBy(op, base::alpha_error(CDtype(compute), KindOf(s[2].scalar())));
}

// gelu's approximate (argument 1).
template <typename Args>
absl::Status CheckGeluApproximate(const OperatorHandle& op, const Args& s, ScalarType) {
  return CheckGeluApproximateAt(op, s[1].string());
}

// pow.Tensor_Scalar: an integral self to a negative integral power has no integral result.
template <typename Args>
absl::Status CheckIntegerPower(const OperatorHandle& op, const Args& s, ScalarType) {
  const Scalar& exponent = s[1].scalar();
  return RefusedBy(op, base::integer_power_error(CDtype(s[0].tensor().dtype()), KindOf(exponent),
                                                 exponent.to_double() < 0));
}

// polygamma's order n (argument 0).
template <typename Args>
absl::Status CheckPolygammaOrder(const OperatorHandle& op, const Args& s, ScalarType) {
  if (s[0].to_int() >= 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: polygamma(n, x) does not support negative n, got n = %d", op.name(), s[0].to_int()));
}

// addcdiv on integers.
template <typename Args>
absl::Status CheckAddcdivFloating(const OperatorHandle& op, const Args&, ScalarType compute) {
  return RefusedBy(op, base::addcdiv_error(CDtype(compute)));
}

absl::Status RequireBool(const OperatorHandle& op, const char* arg, const Tensor& t) {
  if (t.dtype() == ScalarType::kBool) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat("%s: expected argument '%s' to be bool, got %s",
                                                    op.name(), arg, ScalarTypeName(t.dtype())));
}

}  // namespace

absl::Status CheckMaskedFillValue(const OperatorHandle& op, const Tensor& value) {
  if (value.dim() == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: only supports a 0-dimensional value tensor, but got tensor with %d "
                      "dimension(s)",
                      op.name(), value.dim()));
}

namespace {

// PointwisePlan: the op's plan (Note [Call plans]): the broadcast shape, contiguous, in the
// dtype the rule gives; the compute dtype is the promoted one (before kBool makes the output
// bool).
template <typename Args>
absl::Status PointwisePlan(const void* context, const OperatorHandle& op, const Args& s,
                           CallPlan* plan) {
  const PointwiseSpec& spec = *static_cast<const PointwiseSpec*>(context);
  // The one output is filled in place: its shape grows as the operands broadcast, so nothing is
  // copied or moved into the plan afterwards (a small call's plan is on its hot path).
  if (plan->outputs.empty()) {
    plan->outputs.emplace_back();  // cheaper than InlinedVector's general resize
  } else {
    plan->outputs.resize(1);
  }
  TensorSpec& out = plan->outputs[0];
  DimVector& shape = out.sizes;
  shape.clear();
  bool have_shape = false;
  ResultTypeBuilder promotion;
  for (int k = 0; k < spec.operands; ++k) {
    const int i = spec.at[k];
    const auto& v = s[i];
    if (v.is_tensor()) {
      const Tensor& t = v.tensor();
      if (!(spec.rule == Rule::kWhere && i == 0)) promotion.AddTensor(t.dtype(), t.dim());
      if (!have_shape || SameDims(shape, t.sizes())) {  // the common case: no broadcast
        if (!have_shape) shape.assign(t.sizes().begin(), t.sizes().end());
        have_shape = true;
        continue;
      }
      absl::StatusOr<DimVector> b = BroadcastShapes(shape, t.sizes());
      if (!b.ok()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: argument '%s' of shape %s does not broadcast with the other operands (%s)",
            op.name(), op.schema().arguments[i].name, ShapeToString(t.sizes()),
            b.status().message()));
      }
      shape = *std::move(b);
    } else if (v.is_scalar()) {
      promotion.AddScalar(v.scalar());
    }
  }
  ScalarType dtype = promotion.Result();
  switch (spec.rule) {
    case Rule::kPromote:
      break;
    case Rule::kIntToFloat:
      if (IsIntegralType(dtype, /*include_bool=*/true)) dtype = kDefaultFloat;
      break;
    case Rule::kBool:
      dtype = ScalarType::kBool;
      break;
    case Rule::kIntegral:
      if (IsFloatingType(dtype)) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: expected integral or bool operands, got %s (the promoted type)",
                            op.name(), ScalarTypeName(dtype)));
      }
      break;
    case Rule::kNoBool:
      // Each operand, before promotion, as PyTorch's sub_check: sub(bool, int) promotes to
      // int64 but is refused all the same; a bool Scalar counts as a bool operand.
      for (int i = 0; i < spec.operands; ++i) {
        const auto& v = s[i];
        if ((v.is_tensor() && v.tensor().dtype() == ScalarType::kBool) ||
            (v.is_scalar() && v.scalar().is_bool())) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "%s: argument '%s' is bool, which %s does not support; use logical_not to invert a "
              "mask%s",
              op.name(), op.schema().arguments[i].name,
              spec.operands == 1 ? "negation" : "subtraction",
              spec.operands == 1 ? "" : ", or logical_xor for the difference of two masks"));
        }
      }
      break;
    case Rule::kDivMode: {
      const auto& mode = s[2];
      if (mode.is_none()) {
        if (IsIntegralType(dtype, true)) dtype = kDefaultFloat;
      } else if (mode.string() != "trunc" && mode.string() != "floor") {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: expected rounding_mode to be one of None, 'trunc' or 'floor', got '%s'", op.name(),
            mode.string()));
      }
      break;
    }
    case Rule::kMaskedSelf:
      TSR_RETURN_IF_ERROR(RequireBool(op, "mask", s[1].tensor()));
      if (s[2].is_tensor()) TSR_RETURN_IF_ERROR(CheckMaskedFillValue(op, s[2].tensor()));
      dtype = s[0].tensor().dtype();
      // Converted to self's dtype, whether or not the mask selects anything (PyTorch's
      // value.to<scalar_t>(); masked_fill.Tensor's composite reaches this with the value read).
      if (s[2].is_scalar())
        TSR_RETURN_IF_ERROR(CheckScalarFits(s[2].scalar(), dtype, op.name(), "value"));
      break;
    case Rule::kWhere:
      TSR_RETURN_IF_ERROR(RequireBool(op, "condition", s[0].tensor()));
      break;
    case Rule::kSameDtype: {
      const ScalarType self_dtype = s[0].tensor().dtype();
      for (int i = 1; i < spec.operands; ++i) {
        if (s[i].is_tensor() && s[i].tensor().dtype() != self_dtype) {
          return absl::InvalidArgumentError(
              absl::StrFormat("%s: expected dtype %s for `%s` but got dtype %s", op.name(),
                              ScalarTypeName(self_dtype), op.schema().arguments[i].name,
                              ScalarTypeName(s[i].tensor().dtype())));
        }
      }
      break;
    }
    case Rule::kSecondOperandDtype:
      dtype = s[spec.at[1]].tensor().dtype();
      break;
    case Rule::kClamp:
      if (s[1].is_none() && s[2].is_none()) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: at least one of 'min' or 'max' must not be None", op.name()));
      }
      // Scalar bounds are converted to the result dtype (PyTorch's min.to<scalar_t>()), except
      // where both are given and one is NaN: PyTorch then fills NaN without converting either.
      if (s[1].is_scalar() && s[2].is_scalar() &&
          (std::isnan(s[1].scalar().to_double()) || std::isnan(s[2].scalar().to_double()))) {
        break;
      }
      for (int i : {1, 2}) {
        if (s[i].is_scalar()) {
          TSR_RETURN_IF_ERROR(
              CheckScalarFits(s[i].scalar(), dtype, op.name(), op.schema().arguments[i].name));
        }
      }
      break;
  }
  if (const ArgCheckOf<Args> check = spec.check.template For<Args>()) {
    TSR_RETURN_IF_ERROR(check(op, s, dtype));
  }
  if (absl::Status s = ContiguousStridesInto(shape, &out.strides); ABSL_PREDICT_FALSE(!s.ok())) {
    return absl::Status(s.code(), absl::StrFormat("%s: %s", op.name(), s.message()));
  }
  plan->compute_dtype = spec.rule == Rule::kBool || spec.rule == Rule::kSecondOperandDtype
                            ? promotion.Result()
                            : dtype;
  out.dtype = dtype;
  return absl::OkStatus();
}

// Unary ops: "name(Tensor self) -> Tensor".
struct UnarySpec {
  const char* name;
  Rule rule;
  bool inplace;  // PyTorch has `name_`
  OutDtypeRule out_dtype = OutDtypeRule::kCastable;
};
constexpr UnarySpec kUnary[] = {
    {"abs", Rule::kPromote, true},
    {"neg", Rule::kNoBool, true},
    {"sign", Rule::kPromote, true},
    {"sqrt", Rule::kIntToFloat, true},
    {"rsqrt", Rule::kIntToFloat, true},
    {"exp", Rule::kIntToFloat, true},
    {"exp2", Rule::kIntToFloat, true},
    {"expm1", Rule::kIntToFloat, true},
    {"log", Rule::kIntToFloat, true},
    {"log2", Rule::kIntToFloat, true},
    {"log10", Rule::kIntToFloat, true},
    {"log1p", Rule::kIntToFloat, true},
    {"sin", Rule::kIntToFloat, true},
    {"cos", Rule::kIntToFloat, true},
    {"tan", Rule::kIntToFloat, true},
    {"asin", Rule::kIntToFloat, true},
    {"acos", Rule::kIntToFloat, true},
    {"atan", Rule::kIntToFloat, true},
    {"sinh", Rule::kIntToFloat, true},
    {"cosh", Rule::kIntToFloat, true},
    {"tanh", Rule::kIntToFloat, true},
    {"sigmoid", Rule::kIntToFloat, true},
    {"relu", Rule::kPromote, true},
    {"silu", Rule::kPromote, true},
    {"erf", Rule::kIntToFloat, true},
    {"floor", Rule::kPromote, true},
    {"ceil", Rule::kPromote, true},
    {"round", Rule::kPromote, true},
    {"trunc", Rule::kPromote, true},
    {"reciprocal", Rule::kIntToFloat, true},
    {"bitwise_not", Rule::kIntegral, true},
    {"logical_not", Rule::kBool, true},
    {"isnan", Rule::kBool, false},
    {"isinf", Rule::kBool, false},
    {"isfinite", Rule::kBool, false},
    // op set 1.7: the rest of ATen's unary math
    {"frac", Rule::kPromote, true},
    {"sgn", Rule::kPromote, true},
    {"signbit", Rule::kBool, false, OutDtypeRule::kExact},
    {"deg2rad", Rule::kIntToFloat, true},
    {"rad2deg", Rule::kIntToFloat, true},
    {"erfc", Rule::kIntToFloat, true},
    {"erfinv", Rule::kIntToFloat, true},
    {"lgamma", Rule::kIntToFloat, true},
    {"digamma", Rule::kIntToFloat, true},
    {"i0", Rule::kIntToFloat, true},
    {"sinc", Rule::kIntToFloat, true},
    {"acosh", Rule::kIntToFloat, true},
    {"asinh", Rule::kIntToFloat, true},
    {"atanh", Rule::kIntToFloat, true},
};

// Ops with other schemas, written out.
constexpr PointwiseSpec kOther[] = {
    {"gelu(Tensor self, *, str approximate='none') -> Tensor", 1, Rule::kPromote, "gelu.out",
     "gelu_", ARG_CHECK(CheckGeluApproximate)},
    {"add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", 2, Rule::kPromote,
     "add.out", "add_.Tensor", ARG_CHECK(CheckAlpha)},
    {"add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", 2, Rule::kPromote,
     "add.Scalar_out", "add_.Scalar", ARG_CHECK(CheckAlpha)},
    {"sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", 2, Rule::kNoBool,
     "sub.out", "sub_.Tensor", ARG_CHECK(CheckAlpha)},
    {"sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", 2, Rule::kNoBool,
     "sub.Scalar_out", "sub_.Scalar", ARG_CHECK(CheckAlpha)},
    {"mul.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kPromote, "mul.out",
     "mul_.Tensor"},
    {"mul.Scalar(Tensor self, Scalar other) -> Tensor", 2, Rule::kPromote, "mul.Scalar_out",
     "mul_.Scalar"},
    {"div.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kIntToFloat, "div.out",
     "div_.Tensor"},
    {"div.Scalar(Tensor self, Scalar other) -> Tensor", 2, Rule::kIntToFloat, "div.Scalar_out",
     "div_.Scalar"},
    {"div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor", 2,
     Rule::kDivMode, "div.out_mode", "div_.Tensor_mode"},
    {"pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor", 2, Rule::kPromote,
     "pow.Tensor_Tensor_out", "pow_.Tensor"},
    {"pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor", 2, Rule::kPromote,
     "pow.Tensor_Scalar_out", "pow_.Scalar", ARG_CHECK(CheckIntegerPower)},
    {"pow.Scalar(Scalar self, Tensor exponent) -> Tensor", 2, Rule::kPromote, "pow.Scalar_out", ""},
    {"maximum(Tensor self, Tensor other) -> Tensor", 2, Rule::kPromote, "maximum.out", ""},
    {"minimum(Tensor self, Tensor other) -> Tensor", 2, Rule::kPromote, "minimum.out", ""},
    {"fmod.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kPromote, "fmod.Tensor_out",
     "fmod_.Tensor"},
    {"remainder.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kPromote,
     "remainder.Tensor_out", "remainder_.Tensor"},
    {"fmod.Scalar(Tensor self, Scalar other) -> Tensor", 2, Rule::kPromote, "fmod.Scalar_out",
     "fmod_.Scalar"},
    {"remainder.Scalar(Tensor self, Scalar other) -> Tensor", 2, Rule::kPromote,
     "remainder.Scalar_out", "remainder_.Scalar"},
    {"atan2(Tensor self, Tensor other) -> Tensor", 2, Rule::kIntToFloat, "atan2.out", "atan2_"},
    {"eq.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kBool, "eq.Tensor_out",
     "eq_.Tensor"},
    {"ne.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kBool, "ne.Tensor_out",
     "ne_.Tensor"},
    {"lt.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kBool, "lt.Tensor_out",
     "lt_.Tensor"},
    {"le.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kBool, "le.Tensor_out",
     "le_.Tensor"},
    {"gt.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kBool, "gt.Tensor_out",
     "gt_.Tensor"},
    {"ge.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kBool, "ge.Tensor_out",
     "ge_.Tensor"},
    {"eq.Scalar(Tensor self, Scalar other) -> Tensor", 2, Rule::kBool, "eq.Scalar_out",
     "eq_.Scalar"},
    {"ne.Scalar(Tensor self, Scalar other) -> Tensor", 2, Rule::kBool, "ne.Scalar_out",
     "ne_.Scalar"},
    {"lt.Scalar(Tensor self, Scalar other) -> Tensor", 2, Rule::kBool, "lt.Scalar_out",
     "lt_.Scalar"},
    {"le.Scalar(Tensor self, Scalar other) -> Tensor", 2, Rule::kBool, "le.Scalar_out",
     "le_.Scalar"},
    {"gt.Scalar(Tensor self, Scalar other) -> Tensor", 2, Rule::kBool, "gt.Scalar_out",
     "gt_.Scalar"},
    {"ge.Scalar(Tensor self, Scalar other) -> Tensor", 2, Rule::kBool, "ge.Scalar_out",
     "ge_.Scalar"},
    {"logical_and(Tensor self, Tensor other) -> Tensor", 2, Rule::kBool, "logical_and.out",
     "logical_and_"},
    {"logical_or(Tensor self, Tensor other) -> Tensor", 2, Rule::kBool, "logical_or.out",
     "logical_or_"},
    {"logical_xor(Tensor self, Tensor other) -> Tensor", 2, Rule::kBool, "logical_xor.out",
     "logical_xor_"},
    {"bitwise_and.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kIntegral,
     "bitwise_and.Tensor_out", "bitwise_and_.Tensor"},
    {"bitwise_or.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kIntegral,
     "bitwise_or.Tensor_out", "bitwise_or_.Tensor"},
    {"bitwise_xor.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kIntegral,
     "bitwise_xor.Tensor_out", "bitwise_xor_.Tensor"},
    {"bitwise_and.Scalar(Tensor self, Scalar other) -> Tensor", 2, Rule::kIntegral,
     "bitwise_and.Scalar_out", "bitwise_and_.Scalar"},
    {"bitwise_or.Scalar(Tensor self, Scalar other) -> Tensor", 2, Rule::kIntegral,
     "bitwise_or.Scalar_out", "bitwise_or_.Scalar"},
    {"bitwise_xor.Scalar(Tensor self, Scalar other) -> Tensor", 2, Rule::kIntegral,
     "bitwise_xor.Scalar_out", "bitwise_xor_.Scalar"},
    {"where.self(Tensor condition, Tensor self, Tensor other) -> Tensor", 3, Rule::kWhere,
     "where.self_out", ""},
    {"clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", 3, Rule::kClamp,
     "clamp.out", "clamp_"},
    {"clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor", 3, Rule::kClamp,
     "clamp.Tensor_out", "clamp_.Tensor"},
    {"addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor", 3,
     Rule::kPromote, "addcmul.out", "addcmul_"},
    {"addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor", 3,
     Rule::kPromote, "addcdiv.out", "addcdiv_", ARG_CHECK(CheckAddcdivFloating)},
    {"lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor", 2, Rule::kSameDtype,
     "lerp.Scalar_out", "lerp_.Scalar"},
    {"lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor", 3, Rule::kSameDtype,
     "lerp.Tensor_out", "lerp_.Tensor"},
    {"masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor", 2, Rule::kMaskedSelf,
     "masked_fill.Scalar_out", "masked_fill_.Scalar"},
    // A composite over masked_fill.Scalar (pointwise_composites.cc); this row is its Meta.
    {"masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor", 2, Rule::kMaskedSelf,
     "masked_fill.Tensor_out", "masked_fill_.Tensor"},
    {"round.decimals(Tensor self, *, int decimals) -> Tensor", 1, Rule::kPromote,
     "round.decimals_out", "round_.decimals"},
    // op set 1.7
    {"logit(Tensor self, float? eps=None) -> Tensor", 1, Rule::kIntToFloat, "logit.out", "logit_"},
    {"nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor",
     1, Rule::kPromote, "nan_to_num.out", "nan_to_num_"},
    // polygamma_(self, n) takes its arguments in another order: a composite
    // (pointwise_composites.cc).
    {"polygamma(int n, Tensor self) -> Tensor", 1, Rule::kIntToFloat, "polygamma.out", "",
     ARG_CHECK(CheckPolygammaOrder), OperandPositions{1, 0, 0}},
    {"copysign.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kIntToFloat, "copysign.out",
     "copysign_.Tensor"},
    {"copysign.Scalar(Tensor self, Scalar other) -> Tensor", 2, Rule::kIntToFloat,
     "copysign.Scalar_out", "copysign_.Scalar"},
    {"fmax(Tensor self, Tensor other) -> Tensor", 2, Rule::kPromote, "fmax.out", ""},
    {"fmin(Tensor self, Tensor other) -> Tensor", 2, Rule::kPromote, "fmin.out", ""},
    {"heaviside(Tensor self, Tensor values) -> Tensor", 2, Rule::kSameDtype, "heaviside.out",
     "heaviside_"},
    {"hypot(Tensor self, Tensor other) -> Tensor", 2, Rule::kPromote, "hypot.out", "hypot_"},
    {"nextafter(Tensor self, Tensor other) -> Tensor", 2, Rule::kPromote, "nextafter.out",
     "nextafter_"},
    {"logaddexp(Tensor self, Tensor other) -> Tensor", 2, Rule::kPromote, "logaddexp.out", ""},
    {"logaddexp2(Tensor self, Tensor other) -> Tensor", 2, Rule::kPromote, "logaddexp2.out", ""},
    {"xlogy.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kIntToFloat, "xlogy.OutTensor",
     "xlogy_.Tensor"},
    {"xlogy.Scalar_Other(Tensor self, Scalar other) -> Tensor", 2, Rule::kIntToFloat,
     "xlogy.OutScalar_Other", "xlogy_.Scalar_Other"},
    {"xlogy.Scalar_Self(Scalar self, Tensor other) -> Tensor", 2, Rule::kIntToFloat,
     "xlogy.OutScalar_Self", ""},
    {"gcd(Tensor self, Tensor other) -> Tensor", 2, Rule::kIntegral, "gcd.out", "gcd_"},
    {"lcm(Tensor self, Tensor other) -> Tensor", 2, Rule::kIntegral, "lcm.out", "lcm_"},
    {"bitwise_left_shift.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kIntegral,
     "bitwise_left_shift.Tensor_out", "bitwise_left_shift_.Tensor"},
    {"bitwise_left_shift.Tensor_Scalar(Tensor self, Scalar other) -> Tensor", 2, Rule::kIntegral,
     "bitwise_left_shift.Tensor_Scalar_out", "bitwise_left_shift_.Tensor_Scalar"},
    {"bitwise_left_shift.Scalar_Tensor(Scalar self, Tensor other) -> Tensor", 2, Rule::kIntegral,
     "bitwise_left_shift.Scalar_Tensor_out", ""},
    {"bitwise_right_shift.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kIntegral,
     "bitwise_right_shift.Tensor_out", "bitwise_right_shift_.Tensor"},
    {"bitwise_right_shift.Tensor_Scalar(Tensor self, Scalar other) -> Tensor", 2, Rule::kIntegral,
     "bitwise_right_shift.Tensor_Scalar_out", "bitwise_right_shift_.Tensor_Scalar"},
    {"bitwise_right_shift.Scalar_Tensor(Scalar self, Tensor other) -> Tensor", 2, Rule::kIntegral,
     "bitwise_right_shift.Scalar_Tensor_out", ""},
};

}  // namespace

absl::Status CheckGeluApproximateAt(const OperatorHandle& op, const std::string& approximate) {
  if (const char* why = base::gelu_approximate_error(approximate)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %s, got '%s'", op.name(), why, approximate));
  }
  return absl::OkStatus();
}

absl::Status RefusedBy(const OperatorHandle& op, const char* why) {
  if (why == nullptr) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s", op.name(), why));
}

PointwiseTable::PointwiseTable(std::vector<PointwiseSpec> specs) : specs_(std::move(specs)) {
  plans_.reserve(specs_.size());  // the rows stay put: the plans point at them
  for (const PointwiseSpec& spec : specs_) {
    plans_.push_back({&PointwisePlan<Stack>, &spec, &PointwisePlan<UnboxedArgs>});
  }
}

absl::Status PointwiseTable::Define(OpRegistry& registry) const {
  std::vector<OpDefinition> defs;
  for (const PointwiseSpec& spec : specs_) {
    defs.push_back({spec.schema, MetaKernelFromPlan("meta::pointwise")});
  }
  TSR_RETURN_IF_ERROR(DefineAll(registry, std::move(defs), KernelSlot::kMeta));
  for (size_t i = 0; i < specs_.size(); ++i) {
    const PointwiseSpec& spec = specs_[i];
    TSR_ASSIGN_OR_RETURN(FunctionSchema schema, ParseSchema(spec.schema));
    TSR_RETURN_IF_ERROR(registry.SetPlanFunction(schema.FullName(), &plans_[i]));
    if (*spec.out == '\0') continue;  // a functional op alone (ATen has no out= form)
    TSR_RETURN_IF_ERROR(registry.DefineVariants(schema.FullName(), spec.out, spec.inplace,
                                                spec.out_dtype, OutputAliasing::kElementwise));
  }
  return absl::OkStatus();
}

absl::Status DefinePointwiseOps(OpRegistry& registry) {
  // The table must outlive the registry: its rows are the plans' contexts.
  static const PointwiseTable* const table = [] {
    std::vector<PointwiseSpec> specs(std::begin(kOther), std::end(kOther));
    static std::vector<std::string>* const unary_schemas = new std::vector<std::string>();
    unary_schemas->reserve(3 * std::size(kUnary));  // c_str()s must stay put
    for (const UnarySpec& u : kUnary) {
      unary_schemas->push_back(absl::StrFormat("%s(Tensor self) -> Tensor", u.name));
      const char* schema = unary_schemas->back().c_str();
      unary_schemas->push_back(absl::StrFormat("%s.out", u.name));
      const char* out = unary_schemas->back().c_str();
      unary_schemas->push_back(u.inplace ? absl::StrFormat("%s_", u.name) : "");
      specs.push_back({schema,
                       1,
                       u.rule,
                       out,
                       unary_schemas->back().c_str(),
                       {},
                       kLeadingOperands,
                       u.out_dtype});
    }
    return new PointwiseTable(std::move(specs));
  }();
  return table->Define(registry);
}

}  // namespace ops
}  // namespace tessera

// Pointwise ops (unary, binary, ternary; op set v1): schemas and meta functions.
//
// One table row per op: its schema, how many leading arguments are operands (they broadcast
// together and, as tensors or Scalars, take part in type promotion), and the rule that turns
// the promoted type into the output type. The checks PyTorch makes in its meta functions
// (bool negation, bitwise ops on floats, rounding modes) are made here, on every device.
#include "absl/strings/str_format.h"
#include "core/type_promotion.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {
namespace {

enum class Rule {
  kPromote,     // the promoted type
  kIntToFloat,  // the promoted type, integers and bool computed in the default float
  kBool,        // comparisons and predicates: bool
  kIntegral,    // bitwise ops: integral or bool only
  kNoBool,      // neg and sub: not defined for bool
  kDivMode,     // div with rounding_mode: kIntToFloat for None, kPromote for trunc/floor
  kMaskedSelf,  // masked_fill: self's dtype and shape; mask (bool) broadcasts to self
  kWhere,       // where: first operand is the bool condition; it broadcasts, not promotes
};

struct PointwiseSpec {
  const char* schema;
  int operands;
  Rule rule;
};

constexpr ScalarType kDefaultFloat = ScalarType::kFloat32;

absl::Status RequireBool(const OperatorHandle& op, const char* arg, const Tensor& t) {
  if (t.dtype() == ScalarType::kBool) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat("%s: expected argument '%s' to be bool, got %s",
                                                    op.name(), arg, ScalarTypeName(t.dtype())));
}

absl::Status PointwiseMeta(void* context, const OperatorHandle& op, Stack* stack) {
  const PointwiseSpec& spec = *static_cast<const PointwiseSpec*>(context);
  const Stack& s = *stack;
  DimVector shape;
  ResultTypeBuilder promotion;
  for (int i = 0; i < spec.operands; ++i) {
    const Value& v = s[i];
    if (v.is_tensor()) {
      const Tensor& t = v.tensor();
      absl::StatusOr<DimVector> b = BroadcastShapes(shape, t.sizes());
      if (!b.ok()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: argument '%s' of shape %s does not broadcast with the other operands (%s)",
            op.name(), op.schema().arguments[i].name, ShapeToString(t.sizes()),
            b.status().message()));
      }
      shape = *std::move(b);
      if (!(spec.rule == Rule::kWhere && i == 0)) promotion.AddTensor(t.dtype(), t.dim());
    } else if (v.is_scalar()) {
      promotion.AddScalar(v.scalar());
    }
  }
  ScalarType dtype = promotion.Result();
  const Tensor& self = s[0].tensor();
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
      if (dtype == ScalarType::kBool) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: not supported for bool operands; use logical_not or logical_xor instead",
            op.name()));
      }
      break;
    case Rule::kDivMode: {
      const Value& mode = s[2];
      if (mode.is_none()) {
        if (IsIntegralType(dtype, true)) dtype = kDefaultFloat;
      } else if (mode.string() != "trunc" && mode.string() != "floor") {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: expected rounding_mode to be one of None, 'trunc' or 'floor', got '%s'", op.name(),
            mode.string()));
      }
      break;
    }
    case Rule::kMaskedSelf: {
      TSR_RETURN_IF_ERROR(RequireBool(op, "mask", s[1].tensor()));
      TSR_RETURN_IF_ERROR(
          CheckBroadcastsTo(op, "mask", s[1].tensor().sizes(), self.sizes(), "self's shape"));
      dtype = self.dtype();
      break;
    }
    case Rule::kWhere:
      TSR_RETURN_IF_ERROR(RequireBool(op, "condition", self));
      break;
  }
  TSR_ASSIGN_OR_RETURN(Tensor out, Empty(shape, dtype, Device(DeviceType::kMeta)));
  stack->clear();
  stack->push_back(std::move(out));
  return absl::OkStatus();
}

// Unary ops: "name(Tensor self) -> Tensor".
struct UnarySpec {
  const char* name;
  Rule rule;
};
constexpr UnarySpec kUnary[] = {
    {"abs", Rule::kPromote},          {"neg", Rule::kNoBool},
    {"sign", Rule::kPromote},         {"sqrt", Rule::kIntToFloat},
    {"rsqrt", Rule::kIntToFloat},     {"exp", Rule::kIntToFloat},
    {"exp2", Rule::kIntToFloat},      {"expm1", Rule::kIntToFloat},
    {"log", Rule::kIntToFloat},       {"log2", Rule::kIntToFloat},
    {"log10", Rule::kIntToFloat},     {"log1p", Rule::kIntToFloat},
    {"sin", Rule::kIntToFloat},       {"cos", Rule::kIntToFloat},
    {"tan", Rule::kIntToFloat},       {"asin", Rule::kIntToFloat},
    {"acos", Rule::kIntToFloat},      {"atan", Rule::kIntToFloat},
    {"sinh", Rule::kIntToFloat},      {"cosh", Rule::kIntToFloat},
    {"tanh", Rule::kIntToFloat},      {"sigmoid", Rule::kIntToFloat},
    {"relu", Rule::kPromote},         {"silu", Rule::kPromote},
    {"erf", Rule::kIntToFloat},       {"floor", Rule::kPromote},
    {"ceil", Rule::kPromote},         {"round", Rule::kPromote},
    {"trunc", Rule::kPromote},        {"reciprocal", Rule::kIntToFloat},
    {"bitwise_not", Rule::kIntegral}, {"logical_not", Rule::kBool},
    {"isnan", Rule::kBool},           {"isinf", Rule::kBool},
    {"isfinite", Rule::kBool},
};

// Ops with other schemas, written out.
constexpr PointwiseSpec kOther[] = {
    {"gelu(Tensor self, *, str approximate='none') -> Tensor", 1, Rule::kPromote},
    {"add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", 2, Rule::kPromote},
    {"add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", 2, Rule::kPromote},
    {"sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", 2, Rule::kNoBool},
    {"sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", 2, Rule::kNoBool},
    {"mul.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kPromote},
    {"mul.Scalar(Tensor self, Scalar other) -> Tensor", 2, Rule::kPromote},
    {"div.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kIntToFloat},
    {"div.Scalar(Tensor self, Scalar other) -> Tensor", 2, Rule::kIntToFloat},
    {"div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor", 2,
     Rule::kDivMode},
    {"pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor", 2, Rule::kPromote},
    {"pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor", 2, Rule::kPromote},
    {"maximum(Tensor self, Tensor other) -> Tensor", 2, Rule::kPromote},
    {"minimum(Tensor self, Tensor other) -> Tensor", 2, Rule::kPromote},
    {"fmod.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kPromote},
    {"remainder.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kPromote},
    {"atan2(Tensor self, Tensor other) -> Tensor", 2, Rule::kIntToFloat},
    {"eq.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kBool},
    {"ne.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kBool},
    {"lt.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kBool},
    {"le.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kBool},
    {"gt.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kBool},
    {"ge.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kBool},
    {"eq.Scalar(Tensor self, Scalar other) -> Tensor", 2, Rule::kBool},
    {"ne.Scalar(Tensor self, Scalar other) -> Tensor", 2, Rule::kBool},
    {"lt.Scalar(Tensor self, Scalar other) -> Tensor", 2, Rule::kBool},
    {"le.Scalar(Tensor self, Scalar other) -> Tensor", 2, Rule::kBool},
    {"gt.Scalar(Tensor self, Scalar other) -> Tensor", 2, Rule::kBool},
    {"ge.Scalar(Tensor self, Scalar other) -> Tensor", 2, Rule::kBool},
    {"logical_and(Tensor self, Tensor other) -> Tensor", 2, Rule::kBool},
    {"logical_or(Tensor self, Tensor other) -> Tensor", 2, Rule::kBool},
    {"logical_xor(Tensor self, Tensor other) -> Tensor", 2, Rule::kBool},
    {"bitwise_and.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kIntegral},
    {"bitwise_or.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kIntegral},
    {"bitwise_xor.Tensor(Tensor self, Tensor other) -> Tensor", 2, Rule::kIntegral},
    {"where.self(Tensor condition, Tensor self, Tensor other) -> Tensor", 3, Rule::kWhere},
    {"clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", 3, Rule::kPromote},
    {"addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor", 3,
     Rule::kPromote},
    {"addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor", 3,
     Rule::kPromote},
    {"lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor", 2, Rule::kPromote},
    {"masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor", 2, Rule::kMaskedSelf},
};

}  // namespace

absl::Status DefinePointwiseOps(OpRegistry& registry) {
  // Specs must outlive the registry: they are the meta kernels' contexts.
  static const std::vector<PointwiseSpec>* const specs = [] {
    auto* v = new std::vector<PointwiseSpec>(std::begin(kOther), std::end(kOther));
    static std::vector<std::string>* const unary_schemas = new std::vector<std::string>();
    unary_schemas->reserve(std::size(kUnary));
    for (const UnarySpec& u : kUnary) {
      unary_schemas->push_back(absl::StrFormat("%s(Tensor self) -> Tensor", u.name));
      v->push_back({unary_schemas->back().c_str(), 1, u.rule});
    }
    return v;
  }();
  std::vector<OpDefinition> defs;
  for (const PointwiseSpec& spec : *specs) {
    KernelFunction k;
    k.fn = &PointwiseMeta;
    k.context = const_cast<PointwiseSpec*>(&spec);
    k.name = "meta::pointwise";
    defs.push_back({spec.schema, std::move(k)});
  }
  return DefineAll(registry, std::move(defs), KernelSlot::kMeta);
}

}  // namespace ops
}  // namespace tessera

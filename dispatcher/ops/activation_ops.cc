// Activations and their backward ops (op set 1.2): hardtanh, leaky_relu, elu, celu, selu,
// hardswish, hardsigmoid, softplus, mish, threshold, hardshrink, softshrink, and the backward
// ops a traced training step calls for them and for the op set v1 activations (relu's
// threshold_backward, gelu, silu, sigmoid, tanh).
//
// They are pointwise: one table (pointwise_table.h) gives each its meta function, plan and
// out=/in-place forms with ATen's names (the backward ops' out= forms are ATen's
// `.grad_input`, whose out argument is `grad_input`). A backward op's operands are the incoming
// gradient and the forward's input or result; they broadcast and promote as a binary op's, as
// ATen's TensorIterator builds them. celu and selu are composites over elu, as ATen defines
// them, and mish_backward is one over softplus/tanh/sigmoid (ATen's math fallback for it), so
// that a backend needs no kernel for them.
#include <cmath>

#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "core/type_promotion.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"
#include "dispatcher/ops/pointwise_table.h"

namespace tessera {
namespace ops {
namespace {

// Every Scalar argument after the operands converts to the dtype the op computes in, as ATen's
// kernels convert them (`scalar.to<scalar_t>()`, which refuses an overflow).
template <typename Args>
absl::Status CheckScalarsFit(const OperatorHandle& op, const Args& s, ScalarType compute) {
  const std::vector<Argument>& params = op.schema().arguments;
  for (size_t i = 0; i < params.size() && i < s.size(); ++i) {
    if (params[i].type.base != BaseType::kScalar || !s[i].is_scalar()) continue;
    TSR_RETURN_IF_ERROR(CheckScalarFits(s[i].scalar(), compute, op.name(), params[i].name));
  }
  return absl::OkStatus();
}

// hardtanh (ATen's hardtanh_out): not for bool; on integers the limits are truncated to
// integers first (toLong), so only the truncated limits must fit, and an unsigned self takes
// no negative one.
template <typename Args>
absl::Status CheckHardtanh(const OperatorHandle& op, const Args& s, ScalarType compute) {
  if (compute == ScalarType::kBool) return Invalid(op, "Bool inputs not supported for hardtanh");
  if (!IsIntegralType(compute, /*include_bool=*/false)) return CheckScalarsFit(op, s, compute);
  const std::vector<Argument>& params = op.schema().arguments;
  for (int i : {1, 2}) {
    const Scalar& limit = s[i].scalar();
    const double t = std::trunc(limit.to_double());  // NaN and the huge stay (and overflow)
    const Scalar truncated = limit.is_floating_point() && std::fabs(t) < 9.2e18
                                 ? Scalar(static_cast<int64_t>(t))
                                 : limit;
    if (compute == ScalarType::kUInt8 && truncated.to_double() < 0) {
      return Invalid(op, absl::StrFormat("cannot do hardtanh on an unsigned type with negative "
                                         "limits, got %s = %s",
                                         params[i].name, limit.ToString()));
    }
    TSR_RETURN_IF_ERROR(CheckScalarFits(truncated, compute, op.name(), params[i].name));
  }
  return absl::OkStatus();
}

// softshrink's lambd is a half-width: never negative.
template <typename Args>
absl::Status CheckSoftshrink(const OperatorHandle& op, const Args& s, ScalarType compute) {
  const double lambd = s[1].scalar().to_double();
  if (!(lambd >= 0)) {
    return Invalid(
        op, absl::StrFormat("lambda must be greater or equal to 0, but found to be %g", lambd));
  }
  return CheckScalarsFit(op, s, compute);
}

// celu divides by alpha.
template <typename Args>
absl::Status CheckCelu(const OperatorHandle& op, const Args& s, ScalarType compute) {
  if (s[1].scalar().to_double() == 0) {
    return Invalid(op, "ZeroDivisionError: alpha cannot be 0 for CELU");
  }
  return CheckScalarsFit(op, s, compute);
}

// gelu_backward's approximate (argument 2).
template <typename Args>
absl::Status CheckGeluBackward(const OperatorHandle& op, const Args& s, ScalarType) {
  return CheckGeluApproximateAt(op, s[2].string());
}

// A backward op given the forward's result instead of its input (the in-place forward kept
// only that) cannot invert a negative slope: ATen refuses it.
template <typename Args>
absl::Status CheckLeakyReluBackward(const OperatorHandle& op, const Args& s, ScalarType compute) {
  if (s[3].to_bool() && s[2].scalar().to_double() < 0) {
    return Invalid(op,
                   "in-place leaky_relu backward (self_is_result=True) is not supported with a "
                   "negative slope, got negative_slope " +
                       s[2].scalar().ToString() + "; call the out-of-place leaky_relu instead");
  }
  return CheckScalarsFit(op, s, compute);
}
template <typename Args>
absl::Status CheckEluBackward(const OperatorHandle& op, const Args& s, ScalarType compute) {
  if (s[4].to_bool() && s[1].scalar().to_double() < 0) {
    return Invalid(op,
                   "in-place elu backward (is_result=True) is not supported with a negative "
                   "alpha, got alpha " +
                       s[1].scalar().ToString() + "; call the out-of-place elu instead");
  }
  return CheckScalarsFit(op, s, compute);
}

const ArgCheck kScalarsFit = ARG_CHECK(CheckScalarsFit);

// The grad_input out= form of a backward op: ATen's name for it, and its whole schema (the out
// argument is `grad_input`, not `out`).
#define TSR_GRAD_INPUT(NAME, ARGS)                \
  NAME "(" ARGS ") -> Tensor", 2, Rule::kPromote, \
      NAME ".grad_input(" ARGS ", *, Tensor(a!) grad_input) -> Tensor(a!)", ""

std::vector<PointwiseSpec> ActivationSpecs() {
  return {
      // ---- forward ----
      {"hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor", 1, Rule::kPromote,
       "hardtanh.out", "hardtanh_", ARG_CHECK(CheckHardtanh)},
      {"leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor", 1, Rule::kPromote,
       "leaky_relu.out", "leaky_relu_", kScalarsFit},
      {"elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor", 1,
       Rule::kPromote, "elu.out", "elu_", kScalarsFit},
      // Composites over elu (below); these rows are their Meta. ATen has no selu.out, so
      // selu_ is defined beside the table, not as selu's variant.
      {"celu(Tensor self, Scalar alpha=1.0) -> Tensor", 1, Rule::kPromote, "celu.out", "celu_",
       ARG_CHECK(CheckCelu)},
      {"selu(Tensor self) -> Tensor", 1, Rule::kPromote, "", ""},
      {"hardswish(Tensor self) -> Tensor", 1, Rule::kPromote, "hardswish.out", "hardswish_"},
      {"hardsigmoid(Tensor self) -> Tensor", 1, Rule::kPromote, "hardsigmoid.out", "hardsigmoid_"},
      {"softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor", 1, Rule::kPromote,
       "softplus.out", "", kScalarsFit},
      {"mish(Tensor self) -> Tensor", 1, Rule::kPromote, "mish.out", "mish_"},
      {"threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor", 1, Rule::kPromote,
       "threshold.out", "threshold_", kScalarsFit},
      {"hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor", 1, Rule::kPromote, "hardshrink.out",
       "", kScalarsFit},
      {"softshrink(Tensor self, Scalar lambd=0.5) -> Tensor", 1, Rule::kPromote, "softshrink.out",
       "", ARG_CHECK(CheckSoftshrink)},
      // ---- backward ----
      {TSR_GRAD_INPUT("threshold_backward", "Tensor grad_output, Tensor self, Scalar threshold"),
       kScalarsFit},
      {"gelu_backward(Tensor grad_output, Tensor self, *, str approximate='none') -> Tensor", 2,
       Rule::kPromote,
       "gelu_backward.grad_input(Tensor grad_output, Tensor self, *, str approximate='none', "
       "Tensor(a!) grad_input) -> Tensor(a!)",
       "", ARG_CHECK(CheckGeluBackward)},
      {TSR_GRAD_INPUT("silu_backward", "Tensor grad_output, Tensor self")},
      {TSR_GRAD_INPUT("sigmoid_backward", "Tensor grad_output, Tensor output")},
      {TSR_GRAD_INPUT("tanh_backward", "Tensor grad_output, Tensor output")},
      {TSR_GRAD_INPUT("hardtanh_backward",
                      "Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val"),
       kScalarsFit},
      {TSR_GRAD_INPUT(
           "leaky_relu_backward",
           "Tensor grad_output, Tensor self, Scalar negative_slope, bool self_is_result"),
       ARG_CHECK(CheckLeakyReluBackward)},
      {TSR_GRAD_INPUT("elu_backward",
                      "Tensor grad_output, Scalar alpha, Scalar scale, Scalar input_scale, bool "
                      "is_result, Tensor self_or_result"),
       ARG_CHECK(CheckEluBackward), OperandPositions{0, 5, 0}},
      // ATen names this one's out= form `.out`, with an argument `out`.
      {"hardswish_backward(Tensor grad_output, Tensor self) -> Tensor", 2, Rule::kPromote,
       "hardswish_backward.out", ""},
      {TSR_GRAD_INPUT("hardsigmoid_backward", "Tensor grad_output, Tensor self")},
      {TSR_GRAD_INPUT("softplus_backward",
                      "Tensor grad_output, Tensor self, Scalar beta, Scalar threshold"),
       kScalarsFit},
      {TSR_GRAD_INPUT("hardshrink_backward", "Tensor grad_out, Tensor self, Scalar lambd"),
       kScalarsFit},
      {TSR_GRAD_INPUT("softshrink_backward", "Tensor grad_output, Tensor self, Scalar lambd"),
       kScalarsFit},
      // A composite (below) without an out= form in ATen; this row is its Meta.
      {"mish_backward(Tensor grad_output, Tensor self) -> Tensor", 2, Rule::kSecondOperandDtype, "",
       ""},
  };
}
#undef TSR_GRAD_INPUT

// ---- composites ----

using Out = absl::StatusOr<std::vector<Tensor>>;

// SELU's constants (Klambauer et al., 2017), as ATen's selu.
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

// celu(self, alpha) = elu(self, alpha, 1, 1 / alpha), in each form. A composite runs no plan, so
// it makes celu's check itself before elu makes its own.
absl::StatusOr<Stack> CeluAsElu(const OperatorHandle& op, const Stack& s) {
  TSR_RETURN_IF_ERROR(CheckCelu(op, s, s[0].tensor().dtype()));
  const double alpha = s[1].scalar().to_double();
  Stack args = {s[0], s[1], Value(Scalar(1.0)), Value(Scalar(1.0 / alpha))};
  for (size_t i = 2; i < s.size(); ++i) args.push_back(s[i]);  // celu.out's out
  return args;
}
template <const char* kElu>
Out CeluK(const OperatorHandle& op, const Stack& s) {
  TSR_ASSIGN_OR_RETURN(Stack args, CeluAsElu(op, s));
  return One(CallOne(op.registry(), kElu, std::move(args)));
}
constexpr char kEluName[] = "elu";
constexpr char kEluOutName[] = "elu.out";
constexpr char kEluInplaceName[] = "elu_";

// selu(self) = elu(self, kSeluAlpha, kSeluScale, 1).
template <bool kInplace>
Out SeluK(const OperatorHandle& op, const Stack& s) {
  return One(
      CallOne(op.registry(), kInplace ? "elu_" : "elu",
              {s[0], Value(Scalar(kSeluAlpha)), Value(Scalar(kSeluScale)), Value(Scalar(1.0))}));
}

// mish_backward(g, x) = g * (t + x * sigmoid(x) * (1 - t^2)), t = tanh(softplus(x)): ATen's
// math_mish_backward, over ops every backend has. The 16-bit floats are computed in float32 and
// rounded once at the end, as a fused kernel computes them (nine roundings to float16 would
// leave the result several ulps off).
Out MishBackwardK(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  ResultTypeBuilder promotion;  // as the plan promotes the two operands
  for (int i : {0, 1}) promotion.AddTensor(s[i].tensor().dtype(), s[i].tensor().dim());
  const Opmath opmath(promotion.Result(), s[1].tensor().dtype());  // returned in self's dtype
  TSR_ASSIGN_OR_RETURN(const Value grad, opmath.In(r, s[0]));
  TSR_ASSIGN_OR_RETURN(const Value x, opmath.In(r, s[1]));
  TSR_ASSIGN_OR_RETURN(Tensor sp, CallOne(r, "softplus", {x}));
  TSR_ASSIGN_OR_RETURN(Tensor t, CallOne(r, "tanh", {Value(sp)}));
  TSR_ASSIGN_OR_RETURN(Tensor sig, CallOne(r, "sigmoid", {x}));
  TSR_ASSIGN_OR_RETURN(Tensor t2, CallOne(r, "mul.Tensor", {Value(t), Value(t)}));
  TSR_ASSIGN_OR_RETURN(Tensor minus_t2, CallOne(r, "neg", {Value(t2)}));
  TSR_ASSIGN_OR_RETURN(Tensor one_minus,
                       CallOne(r, "add.Scalar", {Value(minus_t2), Value(Scalar(int64_t{1}))}));
  TSR_ASSIGN_OR_RETURN(Tensor xs, CallOne(r, "mul.Tensor", {x, Value(sig)}));
  TSR_ASSIGN_OR_RETURN(Tensor term, CallOne(r, "mul.Tensor", {Value(xs), Value(one_minus)}));
  TSR_ASSIGN_OR_RETURN(Tensor sum, CallOne(r, "add.Tensor", {Value(t), Value(term)}));
  TSR_ASSIGN_OR_RETURN(Tensor g, CallOne(r, "mul.Tensor", {grad, Value(sum)}));
  return One(opmath.Out(r, std::move(g)));
}

}  // namespace

absl::Status DefineActivationOps(OpRegistry& registry) {
  // The table must outlive the registry: its rows are the plans' contexts.
  static const PointwiseTable* const table = new PointwiseTable(ActivationSpecs());
  TSR_RETURN_IF_ERROR(table->Define(registry));
  TSR_RETURN_IF_ERROR(DefineAll(
      registry, {{"selu_(Tensor(a!) self) -> Tensor(a!)", MakeKernel<SeluK<true>>("core::selu_")}},
      KernelSlot::kComposite));
  for (auto [name, kernel] : {
           std::pair{"celu", MakeKernel<CeluK<kEluName>>("core::celu")},
           std::pair{"celu.out", MakeKernel<CeluK<kEluOutName>>("core::celu_out")},
           std::pair{"celu_", MakeKernel<CeluK<kEluInplaceName>>("core::celu_")},
           std::pair{"selu", MakeKernel<SeluK<false>>("core::selu")},
           std::pair{"mish_backward", MakeKernel<MishBackwardK>("core::mish_backward")},
       }) {
    TSR_ASSIGN_OR_RETURN(RegistrationHandle handle,
                         registry.ImplComposite(name, std::move(kernel)));
    handle.KeepForever();
  }
  return absl::OkStatus();
}

}  // namespace ops
}  // namespace tessera

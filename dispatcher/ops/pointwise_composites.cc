// Pointwise overloads that are composites over another overload, so that a backend gets them
// without a kernel of its own: masked_fill.Tensor (a 0-dim value tensor) and its out= and
// in-place forms run masked_fill.Scalar's forms with the value read out as a Scalar. Their
// Meta functions are the pointwise table's rows (pointwise_meta.cc). polygamma_(self, n), whose
// arguments come in another order than polygamma's (n, self), is polygamma.out into self.
//
// Op set 1.7's ops that ATen itself defines over others, defined here the same way so that every
// backend has them: rsub (sub with the operands swapped), floor_divide (div with rounding_mode
// 'floor'), clamp_min and clamp_max (maximum and minimum); op set 1.9's div.Scalar_mode. Their
// Scalar overloads pass the Scalar as a 0-dim CPU tensor (WrappedScalar), as ATen's
// wrapped_scalar_tensor does. Their errors begin with the op called, then the op it ran (Named).
#include <deque>
#include <string>

#include "absl/strings/str_format.h"
#include "core/shape.h"
#include "core/type_promotion.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {
namespace {

using Out = absl::StatusOr<std::vector<Tensor>>;

// ItemOf: masked_fill's value tensor (0-dim, checked) as a Scalar (ReadScalar).
absl::StatusOr<Scalar> ItemOf(const OperatorHandle& op, const Tensor& value) {
  TSR_RETURN_IF_ERROR(CheckMaskedFillValue(op, value));
  return ReadScalar(op.registry(), value);
}

// masked_fill.Tensor(self, mask, value) and masked_fill_.Tensor(self, mask, value).
template <bool kInplace>
Out MaskedFillTensorK(const OperatorHandle& op, const Stack& s) {
  TSR_ASSIGN_OR_RETURN(const Scalar value, ItemOf(op, s[2].tensor()));
  // Named as this op's (masked_fill.Scalar's meta would check it again under its own name).
  TSR_RETURN_IF_ERROR(CheckScalarFits(value, s[0].tensor().dtype(), op.name(), "value"));
  return One(CallOne(op.registry(), kInplace ? "masked_fill_.Scalar" : "masked_fill.Scalar",
                     {s[0], s[1], Value(value)}));
}

// masked_fill.Tensor_out(self, mask, value, *, out)
Out MaskedFillTensorOutK(const OperatorHandle& op, const Stack& s) {
  TSR_ASSIGN_OR_RETURN(const Scalar value, ItemOf(op, s[2].tensor()));
  TSR_RETURN_IF_ERROR(CheckScalarFits(value, s[0].tensor().dtype(), op.name(), "value"));
  return One(CallOne(op.registry(), "masked_fill.Scalar_out", {s[0], s[1], Value(value), s[3]}));
}

// polygamma_(Tensor(a!) self, int n)
Out PolygammaInplaceK(const OperatorHandle& op, const Stack& s) {
  return One(CallOne(op.registry(), "polygamma.out", {s[1], s[0], s[0]}));
}

// WrappedScalar: `value` as a 0-dim CPU tensor that promotes with `self` as the Scalar does. Its
// dtype is the promoted one itself: within a category a dimensioned self keeps its dtype, a
// float Scalar lifts an integral self to float32, and a 0-dim self (which a 0-dim operand of
// another dtype would lift further) meets its own result. The value is made in its own kind's
// widest dtype (bool, int64, float64) and cast, unchecked, as ATen's TensorIterator casts a
// wrapped number to the common dtype: rsub(int8, 1000) wraps 1000 to -24, 7e4 is inf in float16.
absl::StatusOr<Tensor> WrappedScalar(OpRegistry& r, const Tensor& self, const Scalar& value) {
  ResultTypeBuilder promotion;
  promotion.AddTensor(self.dtype(), self.dim());
  promotion.AddScalar(value);
  const ScalarType wide = value.is_bool()             ? ScalarType::kBool
                          : value.is_floating_point() ? ScalarType::kFloat64
                                                      : ScalarType::kInt64;
  const Value cpu = Value(Device(DeviceType::kCPU));
  TSR_ASSIGN_OR_RETURN(
      Tensor held,
      CallOne(r, "full", {Value(IntList{}), Value(value), Value(wide), Value(std::nullopt), cpu}));
  if (wide == promotion.Result()) return held;
  return CallOne(r, "_to_copy", {held, Value(promotion.Result())});
}

// rsub.Tensor(self, other, *, alpha) and rsub.Tensor_out: other - alpha * self.
template <bool kOut>
Out RsubTensorK(const OperatorHandle& op, const Stack& s) {
  if constexpr (kOut) return One(CallOne(op.registry(), "sub.out", {s[1], s[0], s[2], s[3]}));
  return One(CallOne(op.registry(), "sub.Tensor", {s[1], s[0], s[2]}));
}

// rsub.Scalar(self, Scalar other, Scalar alpha) and rsub.Scalar_out.
template <bool kOut>
Out RsubScalarK(const OperatorHandle& op, const Stack& s) {
  TSR_ASSIGN_OR_RETURN(Tensor other, WrappedScalar(op.registry(), s[0].tensor(), s[1].scalar()));
  if constexpr (kOut) return One(CallOne(op.registry(), "sub.out", {other, s[0], s[2], s[3]}));
  return One(CallOne(op.registry(), "sub.Tensor", {other, s[0], s[2]}));
}

// floor_divide's forms: div with rounding_mode 'floor' (the Scalar forms' `other` wrapped).
template <bool kScalar, bool kOut>
Out FloorDivideK(const OperatorHandle& op, const Stack& s) {
  const bool inplace = op.schema().name.back() == '_';
  const char* div = kOut ? "div.out_mode" : inplace ? "div_.Tensor_mode" : "div.Tensor_mode";
  Value other = s[1];
  if constexpr (kScalar) {
    TSR_ASSIGN_OR_RETURN(Tensor wrapped,
                         WrappedScalar(op.registry(), s[0].tensor(), s[1].scalar()));
    other = Value(std::move(wrapped));
  }
  if constexpr (kOut) return One(CallOne(op.registry(), div, {s[0], other, "floor", s[2]}));
  return One(CallOne(op.registry(), div, {s[0], other, "floor"}));
}

// div.Scalar_mode(self, Scalar other, *, rounding_mode) in every form (op set 1.9): div's
// Tensor_mode forms with `other` wrapped.
template <bool kOut>
Out DivScalarModeK(const OperatorHandle& op, const Stack& s) {
  const bool inplace = op.schema().name.back() == '_';
  const char* div = kOut ? "div.out_mode" : inplace ? "div_.Tensor_mode" : "div.Tensor_mode";
  TSR_ASSIGN_OR_RETURN(Tensor wrapped, WrappedScalar(op.registry(), s[0].tensor(), s[1].scalar()));
  if constexpr (kOut) return One(CallOne(op.registry(), div, {s[0], Value(wrapped), s[2], s[3]}));
  return One(CallOne(op.registry(), div, {s[0], Value(wrapped), s[2]}));
}

// clamp_min / clamp_max in every form: maximum / minimum (NaN propagates from either side, a NaN
// bound included: clamp with one NaN bound would ignore it, clamp_min does not). A Scalar bound
// must fit the result dtype, as ATen's min.to<scalar_t>() (uint8 takes -3 as 253, not 300), and
// is then wrapped; the in-place forms write the out= form into self.
template <bool kMin>
Out ClampBoundK(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  const bool inplace = op.schema().name.back() == '_';
  const bool out_form = op.schema().HasWrittenArgument() && !inplace;
  Value bound = s[1];
  if (s[1].is_scalar()) {
    ResultTypeBuilder promotion;
    promotion.AddTensor(self.dtype(), self.dim());
    promotion.AddScalar(s[1].scalar());
    if (promotion.Result() == ScalarType::kBool) {  // ATen's Scalar kernels have no bool loop
      return absl::UnimplementedError(absl::StrFormat(
          "%s: not implemented for dtype bool (a bool tensor with a bool Scalar bound; a tensor "
          "bound or an int one computes)",
          op.name()));
    }
    TSR_RETURN_IF_ERROR(
        CheckScalarFits(s[1].scalar(), promotion.Result(), op.name(), kMin ? "min" : "max"));
    TSR_ASSIGN_OR_RETURN(Tensor wrapped, WrappedScalar(r, self, s[1].scalar()));
    bound = Value(std::move(wrapped));
  }
  const char* functional = kMin ? "maximum" : "minimum";
  const char* out = kMin ? "maximum.out" : "minimum.out";
  if (inplace) {
    // The out= form would resize self to a larger broadcast shape; in place it may not grow.
    const Tensor& b = bound.tensor();
    absl::StatusOr<DimVector> shape = BroadcastShapes(self.sizes(), b.sizes());
    if (shape.ok() && !SameDims(*shape, self.sizes())) {
      return Invalid(op,
                     absl::StrFormat("output with shape %s doesn't match the broadcast shape %s",
                                     ShapeToString(self.sizes()), ShapeToString(*shape)));
    }
    return One(CallOne(r, out, {s[0], bound, s[0]}));
  }
  if (out_form) return One(CallOne(r, out, {s[0], bound, s[2]}));
  return One(CallOne(r, functional, {s[0], bound}));
}

}  // namespace

absl::Status DefinePointwiseComposites(OpRegistry& registry) {
  std::vector<OpDefinition> defs = {
      {"polygamma_(Tensor(a!) self, int n) -> Tensor(a!)",
       MakeKernel<Named<PolygammaInplaceK>>("core::polygamma_")},
      {"rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
       MakeKernel<Named<RsubTensorK<false>>>("core::rsub")},
      {"rsub.Tensor_out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> "
       "Tensor(a!)",
       MakeKernel<Named<RsubTensorK<true>>>("core::rsub_out")},
      {"rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
       MakeKernel<Named<RsubScalarK<false>>>("core::rsub")},
      {"rsub.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, Tensor(a!) out) -> "
       "Tensor(a!)",
       MakeKernel<Named<RsubScalarK<true>>>("core::rsub_out")},
      {"floor_divide(Tensor self, Tensor other) -> Tensor",
       MakeKernel<Named<FloorDivideK<false, false>>>("core::floor_divide")},
      {"floor_divide.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
       MakeKernel<Named<FloorDivideK<false, true>>>("core::floor_divide_out")},
      {"floor_divide_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
       MakeKernel<Named<FloorDivideK<false, false>>>("core::floor_divide_")},
      {"floor_divide.Scalar(Tensor self, Scalar other) -> Tensor",
       MakeKernel<Named<FloorDivideK<true, false>>>("core::floor_divide")},
      {"floor_divide_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
       MakeKernel<Named<FloorDivideK<true, false>>>("core::floor_divide_")},
      {"div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor",
       MakeKernel<Named<DivScalarModeK<false>>>("core::div_scalar_mode")},
      {"div.Scalar_mode_out(Tensor self, Scalar other, *, str? rounding_mode, Tensor(a!) out) -> "
       "Tensor(a!)",
       MakeKernel<Named<DivScalarModeK<true>>>("core::div_scalar_mode_out")},
      {"div_.Scalar_mode(Tensor(a!) self, Scalar other, *, str? rounding_mode) -> Tensor(a!)",
       MakeKernel<Named<DivScalarModeK<false>>>("core::div_scalar_mode_")},
  };
  std::deque<std::string> schemas;  // the texts the definitions point at, until DefineAll
  for (const char* bound : {"min", "max"}) {
    const std::string b = bound;
    for (const std::string& text : {
             "clamp_" + b + "(Tensor self, Scalar " + b + ") -> Tensor",
             "clamp_" + b + ".Tensor(Tensor self, Tensor " + b + ") -> Tensor",
             "clamp_" + b + ".out(Tensor self, Scalar " + b + ", *, Tensor(a!) out) -> Tensor(a!)",
             "clamp_" + b + ".Tensor_out(Tensor self, Tensor " + b +
                 ", *, Tensor(a!) out) -> Tensor(a!)",
             "clamp_" + b + "_(Tensor(a!) self, Scalar " + b + ") -> Tensor(a!)",
             "clamp_" + b + "_.Tensor(Tensor(a!) self, Tensor " + b + ") -> Tensor(a!)",
         }) {
      schemas.push_back(text);
      defs.push_back({schemas.back().c_str(),
                      b == "min" ? MakeKernel<Named<ClampBoundK<true>>>("core::clamp_min")
                                 : MakeKernel<Named<ClampBoundK<false>>>("core::clamp_max")});
    }
  }
  TSR_RETURN_IF_ERROR(DefineAll(registry, std::move(defs), KernelSlot::kComposite));
  for (auto [name, kernel] : {
           std::pair{"masked_fill.Tensor",
                     MakeKernel<MaskedFillTensorK<false>>("core::masked_fill")},
           std::pair{"masked_fill_.Tensor",
                     MakeKernel<MaskedFillTensorK<true>>("core::masked_fill_")},
           std::pair{"masked_fill.Tensor_out",
                     MakeKernel<MaskedFillTensorOutK>("core::masked_fill_out")},
       }) {
    TSR_ASSIGN_OR_RETURN(RegistrationHandle handle,
                         registry.ImplComposite(name, std::move(kernel)));
    handle.KeepForever();
  }
  return absl::OkStatus();
}

}  // namespace ops
}  // namespace tessera

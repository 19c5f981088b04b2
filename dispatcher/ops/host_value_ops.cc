// The ops whose result is a value on the host, a bool or a Scalar, not a tensor (op set 1.10):
// `_local_scalar_dense` and `item` (Tensor.item()), `is_nonzero` (bool(tensor)), `equal`,
// `allclose` and `is_same_size`; with them `isclose`, the tensor allclose reduces. Composites
// over ops every backend has, so a plugin needs no kernel; the value goes on the stack as a
// bool or a Scalar, which the C ABI hands back as TSR_VALUE_BOOL / TSR_VALUE_SCALAR.
//
// Semantics are current ATen's (aten/src/ATen/native/Scalar.cpp, TensorCompare.cpp,
// ReduceOps.cpp's cpu_equal, TypeProperties.cpp):
//   - _local_scalar_dense reads the first element (the one at the storage offset) as a Scalar of
//     the dtype's kind: bool, int64 for the integers, double for the floats; item first requires
//     exactly one element. An empty tensor has no element to read: refused (ATen would read past
//     it).
//   - is_nonzero: item() as a bool (NaN is true), refusing 0 and several elements.
//   - equal: false for different shapes, else every element equal after type promotion (NaN is
//     never equal, so a tensor with a NaN is not equal to itself); tensors on two devices are
//     refused. Dtypes may differ (current ATen, and 1.13, promote).
//   - isclose: |self - other| <= atol + rtol * |other| where the difference is finite, or
//     self == other (infinities of one sign), or both NaN with equal_nan; ATen's order of ops,
//     so 16-bit floats round where ATen's do: an integral or bool `other` is cast to float32
//     first (and a bool self), so the difference cannot wrap. self and other must share a
//     dtype; rtol and atol must not be negative.
//   - allclose: every element isclose (broadcast).
// Each needs the values, which a meta tensor does not have: refused with UNIMPLEMENTED there, as
// ATen (no meta kernel); is_same_size reads only shapes and answers on meta too.
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {
namespace {

using ValueFn = absl::StatusOr<Value> (*)(const OperatorHandle& op, const Stack& args);

// BoxedValue: F's one return, a bool or a Scalar, as the kernel's returns.
template <ValueFn F>
absl::Status BoxedValue(void*, const OperatorHandle& op, Stack* stack) {
  absl::StatusOr<Value> result = F(op, *stack);
  if (!result.ok()) {
    if (absl::StartsWith(result.status().message(), op.name())) return result.status();
    return absl::Status(result.status().code(),
                        absl::StrCat(op.name(), ": ", result.status().message()));
  }
  stack->clear();
  stack->push_back(*std::move(result));
  return absl::OkStatus();
}

template <ValueFn F>
KernelFunction MakeValueKernel(std::string name) {
  KernelFunction k;
  k.fn = &BoxedValue<F>;
  k.name = std::move(name);
  return k;
}

absl::Status RefuseMetaValue(const OperatorHandle& op, const Tensor& t) {
  if (t.device().type != DeviceType::kMeta) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrFormat(
      "%s: the result is a value read from the tensor's elements, which a meta tensor does not "
      "have",
      op.name()));
}

// The element at the storage offset: index 0 along every dim, a view.
absl::StatusOr<Scalar> FirstElement(const OperatorHandle& op, const Tensor& self) {
  TSR_RETURN_IF_ERROR(RefuseMetaValue(op, self));
  if (self.numel() == 0) {
    return Invalid(op, "a Tensor with 0 elements cannot be converted to Scalar");
  }
  Tensor first = self;
  while (first.dim() > 0) {
    TSR_ASSIGN_OR_RETURN(first, Select(first, 0, 0));
  }
  return ReadScalar(op.registry(), first);
}

absl::StatusOr<Value> LocalScalarDenseOf(const OperatorHandle& op, const Stack& s) {
  TSR_ASSIGN_OR_RETURN(Scalar v, FirstElement(op, s[0].tensor()));
  return Value(v);
}

absl::StatusOr<Value> ItemOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  if (self.numel() != 1) {
    return Invalid(op, absl::StrFormat("a Tensor with %d elements cannot be converted to Scalar",
                                       self.numel()));
  }
  TSR_ASSIGN_OR_RETURN(Scalar v, FirstElement(op, self));
  return Value(v);
}

absl::StatusOr<Value> IsNonzeroOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  if (self.numel() == 0) return Invalid(op, "Boolean value of Tensor with no values is ambiguous");
  if (self.numel() > 1) {
    return Invalid(op, "Boolean value of Tensor with more than one value is ambiguous");
  }
  TSR_ASSIGN_OR_RETURN(Scalar v, FirstElement(op, self));
  return Value(v.to_bool());
}

absl::StatusOr<Value> IsSameSizeOf(const OperatorHandle&, const Stack& s) {
  return Value(s[0].tensor().sizes() == s[1].tensor().sizes());
}

// AllOf: whether every element of the bool tensor `t` is true.
absl::StatusOr<bool> AllOf(OpRegistry& r, const Tensor& t) {
  TSR_ASSIGN_OR_RETURN(Tensor all, CallOne(r, "all", {Value(t)}));
  TSR_ASSIGN_OR_RETURN(Scalar v, ReadScalar(r, all));
  return v.to_bool();
}

absl::StatusOr<Value> EqualOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  const Tensor& other = s[1].tensor();
  if (self.device() != other.device()) {
    return Invalid(op,
                   absl::StrFormat("Cannot compare two tensors on different devices. Got: %s "
                                   "and %s",
                                   DeviceToString(self.device()), DeviceToString(other.device())));
  }
  TSR_RETURN_IF_ERROR(RefuseMetaValue(op, self));
  if (self.sizes() != other.sizes()) return Value(false);
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Tensor same, CallOne(r, "eq.Tensor", {Value(self), Value(other)}));
  TSR_ASSIGN_OR_RETURN(bool all, AllOf(r, same));
  return Value(all);
}

absl::StatusOr<Tensor> IsCloseOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  const Tensor& other = s[1].tensor();
  const double rtol = s[2].to_double();
  const double atol = s[3].to_double();
  const bool equal_nan = s[4].to_bool();
  if (self.dtype() != other.dtype()) {
    return Invalid(op, absl::StrFormat("%s did not match %s", ScalarTypeName(self.dtype()),
                                       ScalarTypeName(other.dtype())));
  }
  if (!(rtol >= 0)) {
    return Invalid(op,
                   absl::StrFormat("rtol must be greater than or equal to zero, but got %g", rtol));
  }
  if (!(atol >= 0)) {
    return Invalid(op,
                   absl::StrFormat("atol must be greater than or equal to zero, but got %g", atol));
  }
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Tensor close, CallOne(r, "eq.Tensor", {Value(self), Value(other)}));
  if (equal_nan && IsFloatingType(self.dtype())) {
    TSR_ASSIGN_OR_RETURN(Tensor self_nan, CallOne(r, "isnan", {Value(self)}));
    TSR_ASSIGN_OR_RETURN(Tensor other_nan, CallOne(r, "isnan", {Value(other)}));
    TSR_ASSIGN_OR_RETURN(Tensor both_nan,
                         CallOne(r, "logical_and", {Value(self_nan), Value(other_nan)}));
    TSR_ASSIGN_OR_RETURN(close, CallOne(r, "logical_or", {Value(close), Value(both_nan)}));
  }
  // Zero tolerances: closeness is equality (no arithmetic, so no rounding to account for).
  if (rtol == 0 && atol == 0) return close;
  auto as_float = [&r](const Tensor& t) {
    return CallOne(
        r, "_to_copy",
        {Value(t), Value(ScalarType::kFloat32), Value(), Value(), Value(), Value(false), Value()});
  };
  Tensor cast_self = self, cast_other = other;
  if (self.dtype() == ScalarType::kBool) {
    TSR_ASSIGN_OR_RETURN(cast_self, as_float(self));
  }
  if (!IsFloatingType(self.dtype())) {
    TSR_ASSIGN_OR_RETURN(cast_other, as_float(other));
  }
  TSR_ASSIGN_OR_RETURN(Tensor scaled,
                       CallOne(r, "mul.Scalar", {Value(cast_other), Value(Scalar(rtol))}));
  TSR_ASSIGN_OR_RETURN(Tensor scaled_abs, CallOne(r, "abs", {Value(scaled)}));
  TSR_ASSIGN_OR_RETURN(
      Tensor allowed, CallOne(r, "add.Scalar",
                              {Value(scaled_abs), Value(Scalar(atol)), Value(Scalar(int64_t{1}))}));
  TSR_ASSIGN_OR_RETURN(
      Tensor diff,
      CallOne(r, "sub.Tensor", {Value(cast_self), Value(cast_other), Value(Scalar(int64_t{1}))}));
  TSR_ASSIGN_OR_RETURN(Tensor actual, CallOne(r, "abs", {Value(diff)}));
  TSR_ASSIGN_OR_RETURN(Tensor finite, CallOne(r, "isfinite", {Value(actual)}));
  TSR_ASSIGN_OR_RETURN(Tensor within, CallOne(r, "le.Tensor", {Value(actual), Value(allowed)}));
  TSR_ASSIGN_OR_RETURN(Tensor finite_within,
                       CallOne(r, "logical_and", {Value(finite), Value(within)}));
  return CallOne(r, "logical_or", {Value(close), Value(finite_within)});
}

absl::StatusOr<Value> AllCloseOf(const OperatorHandle& op, const Stack& s) {
  TSR_RETURN_IF_ERROR(RefuseMetaValue(op, s[0].tensor()));
  TSR_ASSIGN_OR_RETURN(Tensor close, IsCloseOf(op, s));
  TSR_ASSIGN_OR_RETURN(bool all, AllOf(op.registry(), close));
  return Value(all);
}

}  // namespace

absl::Status DefineHostValueOps(OpRegistry& registry) {
  return DefineAll(
      registry,
      {
          {"_local_scalar_dense(Tensor self) -> Scalar",
           MakeValueKernel<LocalScalarDenseOf>("core::_local_scalar_dense")},
          {"item(Tensor self) -> Scalar", MakeValueKernel<ItemOf>("core::item")},
          {"is_nonzero(Tensor self) -> bool", MakeValueKernel<IsNonzeroOf>("core::is_nonzero")},
          {"is_same_size(Tensor self, Tensor other) -> bool",
           MakeValueKernel<IsSameSizeOf>("core::is_same_size")},
          {"equal(Tensor self, Tensor other) -> bool", MakeValueKernel<EqualOf>("core::equal")},
          {"isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool "
           "equal_nan=False) -> Tensor",
           MakeKernel<Named<ComputeOne<IsCloseOf>>>("core::isclose")},
          {"allclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool "
           "equal_nan=False) -> bool",
           MakeValueKernel<AllCloseOf>("core::allclose")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera

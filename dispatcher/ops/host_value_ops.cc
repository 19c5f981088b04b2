// The ops whose result is a value on the host, a bool, an int or a Scalar, not a tensor.
// Op set 1.10: `_local_scalar_dense` and `item` (Tensor.item()), `is_nonzero` (bool(tensor)),
// `equal`, `allclose` and `is_same_size`; with them `isclose`, the tensor allclose reduces.
// Op set 1.11: the metadata queries torch.export leaves in a graph with dynamic shapes,
// `sym_size.int`, `sym_stride.int`, `sym_numel`, `sym_storage_offset` (-> SymInt) and
// `sym_is_contiguous` (-> SymBool). All are composites, so a plugin needs no kernel: the 1.10
// ops over ops every backend has, the queries over nothing at all (they read the tensor's sizes,
// strides and storage offset, never its data, so they answer on the Meta device too and cost no
// synchronization). The value goes on the stack as a bool, an int or a Scalar, which the C ABI
// hands back as TSR_VALUE_BOOL / TSR_VALUE_INT / TSR_VALUE_SCALAR. A SymInt or SymBool is a
// plain int or bool here, since Tessera's shapes are always concrete (the schema parser reads
// SymInt as int and SymBool as bool).
//
// Semantics are current ATen's (aten/src/ATen/native/Scalar.cpp, TensorCompare.cpp,
// ReduceOps.cpp's cpu_equal, TypeProperties.cpp, TensorProperties.cpp; c10/core/TensorImpl.h and
// Contiguity.h for the queries):
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
//   - sym_size.int / sym_stride.int: the size / stride of dim `dim`, wrapped as TensorImpl's
//     sym_size and TensorBase's sym_stride wrap it (maybe_wrap_dim with wrap_scalar=false), so
//     a 0-dim tensor has no dim to ask for, not even 0 or -1 (IndexError). 1.13 indexed the
//     sizes unchecked (garbage for a dim out of range); current ATen's checks are followed.
//   - sym_numel, sym_storage_offset: numel(), storage_offset() (in elements).
//   - sym_is_contiguous: TensorImpl::is_contiguous(memory_format). channels_last asks for a
//     4-D tensor whose strides run C, W, H, N innermost first (c10's
//     _compute_channels_last_contiguous_2d), channels_last_3d the same for 5-D (C, W, H, D, N),
//     both false at any other rank and with no empty-tensor shortcut; contiguous_format and
//     preserve_format ask for row-major order (which an empty tensor always has).
// The 1.10 ops but is_same_size need the values, which a meta tensor does not have: refused
// with UNIMPLEMENTED there, as ATen (no meta kernel); is_same_size and the 1.11 queries read
// only metadata and answer on meta too.
#include <initializer_list>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/layout.h"
#include "core/shape.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {
namespace {

using ValueFn = absl::StatusOr<Value> (*)(const OperatorHandle& op, const Stack& args);

// BoxedValue: F's one return, a bool, an int or a Scalar, as the kernel's returns.
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

// MetadataDim: `dim` of `self` wrapped into [0, dim()) as c10's maybe_wrap_dim with
// wrap_scalar=false (sym_size.int, sym_stride.int): a 0-dim tensor refuses every dim.
absl::StatusOr<int64_t> MetadataDim(const OperatorHandle& op, const Tensor& self, int64_t dim) {
  if (self.dim() == 0) {
    return OutOfRange(
        op, absl::StrFormat("Dimension specified as %d but tensor has no dimensions", dim));
  }
  return WrapDim(dim, self.dim(), op.name());
}

absl::StatusOr<Value> SymSizeOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  TSR_ASSIGN_OR_RETURN(const int64_t dim, MetadataDim(op, self, s[1].to_int()));
  return Value(self.sizes()[dim]);
}

absl::StatusOr<Value> SymStrideOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& self = s[0].tensor();
  TSR_ASSIGN_OR_RETURN(const int64_t dim, MetadataDim(op, self, s[1].to_int()));
  return Value(self.strides()[dim]);
}

absl::StatusOr<Value> SymNumelOf(const OperatorHandle&, const Stack& s) {
  return Value(s[0].tensor().numel());
}

absl::StatusOr<Value> SymStorageOffsetOf(const OperatorHandle&, const Stack& s) {
  return Value(s[0].tensor().storage_offset());
}

// DenseInOrder: whether the dims of `order`, innermost first, are laid out densely in that
// order, skipping dims of size 1 (whose stride does not matter), as c10's
// _compute_channels_last_contiguous_2d/3d walk them. An empty tensor's other dims may be huge:
// once the product of sizes passes int64, no later stride can equal it.
bool DenseInOrder(IntArrayRef sizes, IntArrayRef strides, std::initializer_list<size_t> order) {
  int64_t expected = 1;
  bool past_int64 = false;
  for (const size_t d : order) {
    if (sizes[d] == 1) continue;
    if (past_int64 || strides[d] != expected) return false;
    past_int64 = __builtin_mul_overflow(expected, sizes[d], &expected);
  }
  return true;
}

absl::StatusOr<Value> SymIsContiguousOf(const OperatorHandle&, const Stack& s) {
  const Tensor& self = s[0].tensor();
  const IntArrayRef sizes = self.sizes(), strides = self.strides();
  switch (static_cast<MemoryFormat>(s[1].to_int())) {
    case MemoryFormat::kChannelsLast:
      return Value(self.dim() == 4 && DenseInOrder(sizes, strides, {1, 3, 2, 0}));
    case MemoryFormat::kChannelsLast3d:
      return Value(self.dim() == 5 && DenseInOrder(sizes, strides, {1, 4, 3, 2, 0}));
    case MemoryFormat::kContiguous:
    case MemoryFormat::kPreserve:
      break;
  }
  return Value(IsContiguousLayout(sizes, strides));
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
          {"sym_size.int(Tensor self, int dim) -> SymInt",
           MakeValueKernel<SymSizeOf>("core::sym_size")},
          {"sym_stride.int(Tensor self, int dim) -> SymInt",
           MakeValueKernel<SymStrideOf>("core::sym_stride")},
          {"sym_numel(Tensor self) -> SymInt", MakeValueKernel<SymNumelOf>("core::sym_numel")},
          {"sym_storage_offset(Tensor self) -> SymInt",
           MakeValueKernel<SymStorageOffsetOf>("core::sym_storage_offset")},
          {"sym_is_contiguous(Tensor self, MemoryFormat memory_format=contiguous_format) -> "
           "SymBool",
           MakeValueKernel<SymIsContiguousOf>("core::sym_is_contiguous")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera

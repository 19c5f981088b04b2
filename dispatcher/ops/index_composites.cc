// Op set 1.9's slice-wise index ops, composites over scatter, scatter_add and index_select so
// every backend has them:
//   - index_add, index_copy, index_fill: whole slices of self along `dim`, chosen by a 1-D
//     index, added to, overwritten or filled (the index laid along dim and expanded over the
//     slice, AlongDim, then one scatter);
//   - take and put: self as if flat, indexed by any-shaped index (negative indices count from
//     the end).
// Checks, their order and messages are ATen's (TensorAdvancedIndexing.cpp, IndexKernel.cpp);
// an index out of range is OUT_OF_RANGE (PyTorch's IndexError), found by reading the index's
// least and greatest element back to the host (IndexRange: one synchronization per call).
#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"
#include "core/dtype.h"
#include "core/scalar.h"
#include "core/shape.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"
#include "dispatcher/ops/index_support.h"

namespace tessera {
namespace ops {
namespace {

// Restored: `result`, computed at least 1-D, back in `like`'s rank.
absl::StatusOr<Tensor> Restored(const Tensor& result, const Tensor& like) {
  if (like.dim() > 0) return result;
  return View(result, {});
}

// SliceShape: `t`'s sizes without `dim` (a 0-dim tensor's: none).
DimVector SliceShape(const Tensor& t, int64_t dim) {
  DimVector shape(t.sizes().begin(), t.sizes().end());
  if (!shape.empty()) shape.erase(shape.begin() + dim);
  return shape;
}

absl::StatusOr<Tensor> Clone(OpRegistry& r, const Tensor& t) {
  return CallOne(r, "clone", {Value(t), Value(kMemoryFormatContiguous)});
}

// The arguments index_add and index_copy share: (self, dim, index, source).
struct SliceArgs {
  Tensor self, index, source;
  int64_t dim = 0;
};

// ---- index_add(self, dim, index, source, *, alpha=1) ----

absl::StatusOr<SliceArgs> CheckIndexAdd(const OperatorHandle& op, const Stack& s) {
  SliceArgs a{s[0].tensor(), s[2].tensor(), s[3].tensor(), 0};
  TSR_ASSIGN_OR_RETURN(a.dim, WrapDim(s[1].to_int(), a.self.dim(), op.name()));
  if (a.index.dim() > 1) {
    return OutOfRange(
        op, absl::StrFormat("Index is supposed to be a vector, but got dim: %d", a.index.dim()));
  }
  if (a.index.dtype() != ScalarType::kInt64 && a.index.dtype() != ScalarType::kInt32) {
    return Invalid(op, absl::StrFormat("Expected dtype int32/int64 for index but got: %s",
                                       ScalarTypeName(a.index.dtype())));
  }
  if (a.self.dtype() != a.source.dtype()) {
    return Invalid(
        op, absl::StrFormat("self (%s) and source (%s) must have the same scalar type",
                            ScalarTypeName(a.self.dtype()), ScalarTypeName(a.source.dtype())));
  }
  if (a.dim != 0 && a.dim >= a.source.dim()) {
    return Invalid(op, absl::StrFormat("Indexing dim %d is out of bounds of the source tensor "
                                       "with dim %d",
                                       a.dim, a.source.dim()));
  }
  const int64_t at_dim = a.source.dim() == 0 ? 1 : a.source.sizes()[a.dim];
  if (a.index.numel() != at_dim) {
    return Invalid(op, absl::StrFormat("Number of indices (%d) should be equal to "
                                       "source.size(dim): (%d), for dim: %d",
                                       a.index.numel(), at_dim, a.dim));
  }
  // Alike outside dim (a 0-dim tensor on either side: compared whole).
  const bool scalar = a.self.dim() == 0 || a.source.dim() == 0;
  const DimVector self_rest =
      scalar ? DimVector(a.self.sizes().begin(), a.self.sizes().end()) : SliceShape(a.self, a.dim);
  const DimVector source_rest = scalar ? DimVector(a.source.sizes().begin(), a.source.sizes().end())
                                       : SliceShape(a.source, a.dim);
  if (!SameDims(self_rest, source_rest)) {
    return Invalid(op,
                   absl::StrFormat("source tensor shape must match self tensor shape, "
                                   "excluding the specified dimension. Got self.shape = %s "
                                   "source.shape = %s",
                                   ShapeToString(a.self.sizes()), ShapeToString(a.source.sizes())));
  }
  return a;
}

absl::StatusOr<Tensor> IndexAddOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(SliceArgs a, CheckIndexAdd(op, s));
  // An integral self takes alpha as its own type: a fractional one truncated (as ATen's
  // alpha.to<scalar_t>()).
  Scalar alpha = s[4].scalar();
  if (IsIntegralType(a.self.dtype(), /*include_bool=*/true) && alpha.is_floating_point()) {
    alpha = Scalar(static_cast<int64_t>(std::trunc(alpha.to_double())));
  }
  if (a.index.numel() == 0) return Clone(r, a.self);
  const int64_t size = a.self.dim() == 0 ? 1 : a.self.sizes()[a.dim];
  TSR_ASSIGN_OR_RETURN(std::optional<Range> range, IndexRange(r, a.index));
  if (range && (range->min < 0 || range->max >= size)) {
    return OutOfRange(op, "index out of range in self");
  }
  TSR_ASSIGN_OR_RETURN(Tensor self, AtLeast1d(a.self));
  TSR_ASSIGN_OR_RETURN(Tensor source, AtLeast1d(a.source));
  TSR_ASSIGN_OR_RETURN(Tensor index, AsLong(r, a.index));
  TSR_ASSIGN_OR_RETURN(Tensor along, AlongDim(index, a.dim, source.sizes()));
  const bool unit = alpha.is_integral() ? alpha.to_int() == 1 : alpha.to_double() == 1.0;
  if (!unit) {
    TSR_ASSIGN_OR_RETURN(source, CallOne(r, "mul.Scalar", {Value(source), Value(alpha)}));
  }
  TSR_ASSIGN_OR_RETURN(
      Tensor out,
      CallOne(r, "scatter_add", {Value(self), Value(a.dim), Value(along), Value(source)}));
  return Restored(out, a.self);
}

// ---- index_copy(self, dim, index, source) ----

absl::StatusOr<SliceArgs> CheckIndexCopy(const OperatorHandle& op, const Stack& s) {
  SliceArgs a{s[0].tensor(), s[2].tensor(), s[3].tensor(), 0};
  TSR_ASSIGN_OR_RETURN(a.dim, WrapDim(s[1].to_int(), a.self.dim(), op.name()));
  const int64_t n = a.index.numel();
  if (a.index.dim() >= 2) {
    return OutOfRange(
        op, absl::StrFormat("Index should have dimension 1 or 0 (got %d)", a.index.dim()));
  }
  if (a.source.dim() == 0 && n != 1) {
    return OutOfRange(op, absl::StrFormat("When source is scalar, index should have one element "
                                          "(got %d)",
                                          n));
  }
  if (a.source.dim() != a.self.dim() && a.source.dim() != 0 && a.self.dim() != 0) {
    return OutOfRange(op, absl::StrFormat("When source and destination are not scalars, their "
                                          "dimensionality must match. Source dimensionality "
                                          "(%d), destination dimensionality (%d)",
                                          a.source.dim(), a.self.dim()));
  }
  if (a.index.dtype() != ScalarType::kInt64) {
    return Invalid(op, absl::StrFormat("Expected a long tensor for index, but got %s",
                                       ScalarTypeName(a.index.dtype())));
  }
  if (a.self.dtype() != a.source.dtype()) {
    return Invalid(
        op, absl::StrFormat("self and source expected to have the same dtype, but got "
                            "(self) %s and (source) %s",
                            ScalarTypeName(a.self.dtype()), ScalarTypeName(a.source.dtype())));
  }
  const DimVector self_rest = SliceShape(a.self, a.dim);
  const DimVector source_rest = SliceShape(a.source, a.dim);
  if (!SameDims(self_rest, source_rest)) {
    return Invalid(op,
                   absl::StrFormat("Source/destination tensor must have same slice shapes. "
                                   "Destination slice shape: %s at dimension %d and source "
                                   "slice shape: %s at dimension 0.",
                                   ShapeToString(self_rest), a.dim, ShapeToString(source_rest)));
  }
  if (a.source.dim() != 0 && n != a.source.sizes()[a.dim]) {
    return OutOfRange(op, absl::StrFormat("Number of indices (%d) should be equal to "
                                          "source.size(dim) (%d)",
                                          n, a.source.sizes()[a.dim]));
  }
  return a;
}

absl::StatusOr<Tensor> IndexCopyOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(SliceArgs a, CheckIndexCopy(op, s));
  if (a.index.numel() == 0) return Clone(r, a.self);
  const int64_t size = a.self.dim() == 0 ? 1 : a.self.sizes()[a.dim];
  TSR_ASSIGN_OR_RETURN(std::optional<Range> range, IndexRange(r, a.index));
  if (range && (range->min < 0 || range->max >= size)) {
    return OutOfRange(op, absl::StrFormat("index %d is out of bounds for dimension %d with size %d",
                                          range->min < 0 ? range->min : range->max, a.dim, size));
  }
  TSR_ASSIGN_OR_RETURN(Tensor self, AtLeast1d(a.self));
  TSR_ASSIGN_OR_RETURN(Tensor source, AtLeast1d(a.source));
  TSR_ASSIGN_OR_RETURN(Tensor along, AlongDim(a.index, a.dim, source.sizes()));
  TSR_ASSIGN_OR_RETURN(
      Tensor out,
      CallOne(r, "scatter.src", {Value(self), Value(a.dim), Value(along), Value(source)}));
  return Restored(out, a.self);
}

// ---- index_fill(self, dim, index, value): value a Scalar or a 0-dim tensor ----

absl::StatusOr<Tensor> IndexFillOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self0 = s[0].tensor();
  const Tensor& index = s[2].tensor();
  if (s[3].is_tensor() && s[3].tensor().dim() != 0) {
    return Invalid(op, absl::StrFormat("index_fill_ only supports a 0-dimensional value tensor, "
                                       "but got tensor with %d dimension(s).",
                                       s[3].tensor().dim()));
  }
  if (index.dtype() != ScalarType::kInt64) {
    return OutOfRange(op, "Expected dtype int64 for index.");
  }
  TSR_ASSIGN_OR_RETURN(Tensor self, AtLeast1d(self0));
  TSR_ASSIGN_OR_RETURN(const int64_t dim, WrapDim(s[1].to_int(), self.dim(), op.name()));
  if (index.dim() > 1) return Invalid(op, "Index has to be a vector/scalar");
  if (index.numel() == 0) return Clone(r, self0);
  const int64_t size = self.sizes()[dim];
  TSR_ASSIGN_OR_RETURN(std::optional<Range> range, IndexRange(r, index));
  if (range && (range->min < -size || range->max >= size)) {
    return OutOfRange(op, absl::StrFormat("index %d is out of bounds for dimension %d with size %d",
                                          range->min < -size ? range->min : range->max, dim, size));
  }
  TSR_ASSIGN_OR_RETURN(Tensor wrapped, WrapNegative(r, index, size));
  TSR_ASSIGN_OR_RETURN(Tensor along, AlongDim(wrapped, dim, self.sizes()));
  // A value tensor is read back (as ATen's item()), from whichever device holds it; a meta
  // one has no value, and the fill's shape needs none.
  Scalar value;
  if (s[3].is_scalar()) {
    value = s[3].scalar();
  } else if (s[3].tensor().device().type != DeviceType::kMeta) {
    TSR_ASSIGN_OR_RETURN(value, ReadScalar(r, s[3].tensor()));
  }
  TSR_RETURN_IF_ERROR(CheckScalarFits(value, self.dtype(), op.name(), "value"));
  TSR_ASSIGN_OR_RETURN(Tensor out, CallOne(r, "scatter.value",
                                           {Value(self), Value(dim), Value(along), Value(value)}));
  return Restored(out, self0);
}

// ---- take(self, index) and put(self, index, source, accumulate=False): self as if flat ----

// CheckFlatRange: every index in [-numel, numel) (ATen's message for take and put).
absl::Status CheckFlatRange(const OperatorHandle& op, const Tensor& index, int64_t numel) {
  TSR_ASSIGN_OR_RETURN(std::optional<Range> range, IndexRange(op.registry(), index));
  if (!range || (range->min >= -numel && range->max < numel)) return absl::OkStatus();
  return OutOfRange(op, absl::StrFormat("out of range: tried to access index %d on a tensor of %d "
                                        "elements.",
                                        range->min < -numel ? range->min : range->max, numel));
}

absl::StatusOr<Tensor> Flat(OpRegistry& r, const Tensor& t) {
  return CallOne(r, "reshape", {Value(t), Value(IntList{-1})});
}

absl::StatusOr<Tensor> TakeOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  const Tensor& index = s[1].tensor();
  if (index.dtype() != ScalarType::kInt64) {
    return Invalid(op, absl::StrFormat("Expected a long tensor for index, but got %s",
                                       ScalarTypeName(index.dtype())));
  }
  if (self.numel() == 0 && index.numel() != 0) {
    return OutOfRange(op, "tried to take from an empty tensor");
  }
  const IntList shape(index.sizes().begin(), index.sizes().end());
  if (index.numel() == 0) return EmptyOf(r, self, index.sizes());
  TSR_RETURN_IF_ERROR(CheckFlatRange(op, index, self.numel()));
  TSR_ASSIGN_OR_RETURN(Tensor flat_index, Flat(r, index));
  TSR_ASSIGN_OR_RETURN(Tensor wrapped, WrapNegative(r, flat_index, self.numel()));
  TSR_ASSIGN_OR_RETURN(Tensor flat, Flat(r, self));
  TSR_ASSIGN_OR_RETURN(
      Tensor taken, CallOne(r, "index_select", {Value(flat), Value(int64_t{0}), Value(wrapped)}));
  return CallOne(r, "reshape", {Value(taken), Value(shape)});
}

absl::StatusOr<Tensor> PutOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  const Tensor& index = s[1].tensor();
  const Tensor& source = s[2].tensor();
  const bool accumulate = s[3].to_bool();
  if (index.dtype() != ScalarType::kInt64) {
    return Invalid(op, absl::StrFormat("Expected a long tensor for index, but got %s",
                                       ScalarTypeName(index.dtype())));
  }
  if (self.dtype() != source.dtype()) {
    return Invalid(op,
                   absl::StrFormat("self and source expected to have the same dtype, but got "
                                   "self.dtype = %s and source.dtype = %s",
                                   ScalarTypeName(self.dtype()), ScalarTypeName(source.dtype())));
  }
  if (source.numel() != index.numel()) {
    return OutOfRange(op, absl::StrFormat("Expected source and index to have the same number of "
                                          "elements, but got source.numel() = %d, index.numel() = "
                                          "%d",
                                          source.numel(), index.numel()));
  }
  if (self.numel() == 0 && index.numel() != 0) {
    return OutOfRange(op, "Tried to put elements into an empty tensor");
  }
  TSR_ASSIGN_OR_RETURN(Tensor out, Clone(r, self));
  if (index.numel() == 0) return out;
  TSR_RETURN_IF_ERROR(CheckFlatRange(op, index, self.numel()));
  TSR_ASSIGN_OR_RETURN(Tensor flat_index, Flat(r, index));
  TSR_ASSIGN_OR_RETURN(Tensor wrapped, WrapNegative(r, flat_index, self.numel()));
  TSR_ASSIGN_OR_RETURN(Tensor flat_source, Flat(r, source));
  TSR_ASSIGN_OR_RETURN(Tensor flat, Flat(r, out));  // a view: out is contiguous
  TSR_ASSIGN_OR_RETURN(
      Tensor put, CallOne(r, accumulate ? "scatter_add" : "scatter.src",
                          {Value(flat), Value(int64_t{0}), Value(wrapped), Value(flat_source)}));
  const IntList shape(self.sizes().begin(), self.sizes().end());
  return CallOne(r, "reshape", {Value(put), Value(shape)});
}

}  // namespace

absl::Status DefineIndexComposites(OpRegistry& registry) {
  return DefineAll(
      registry,
      {
          {"index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> "
           "Tensor",
           MakeKernel<Named<ComputeOne<IndexAddOf>>>("core::index_add")},
          {"index_add.out(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1, "
           "Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<IndexAddOf, 5>>>("core::index_add_out")},
          {"index_add_(Tensor(a!) self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) "
           "-> Tensor(a!)",
           MakeKernel<Named<IntoSelf<IndexAddOf>>>("core::index_add_")},
          {"index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor",
           MakeKernel<Named<ComputeOne<IndexCopyOf>>>("core::index_copy")},
          {"index_copy.out(Tensor self, int dim, Tensor index, Tensor source, *, Tensor(a!) out) "
           "-> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<IndexCopyOf, 4>>>("core::index_copy_out")},
          {"index_copy_(Tensor(a!) self, int dim, Tensor index, Tensor source) -> Tensor(a!)",
           MakeKernel<Named<IntoSelf<IndexCopyOf>>>("core::index_copy_")},
          {"index_fill.int_Scalar(Tensor self, int dim, Tensor index, Scalar value) -> Tensor",
           MakeKernel<Named<ComputeOne<IndexFillOf>>>("core::index_fill_scalar")},
          {"index_fill.int_Scalar_out(Tensor self, int dim, Tensor index, Scalar value, *, "
           "Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<IndexFillOf, 4, /*kCastable=*/true>>>(
               "core::index_fill_scalar_out")},
          {"index_fill_.int_Scalar(Tensor(a!) self, int dim, Tensor index, Scalar value) -> "
           "Tensor(a!)",
           MakeKernel<Named<IntoSelf<IndexFillOf>>>("core::index_fill_scalar_")},
          {"index_fill.int_Tensor(Tensor self, int dim, Tensor index, Tensor value) -> Tensor",
           MakeKernel<Named<ComputeOne<IndexFillOf>>>("core::index_fill_tensor")},
          {"index_fill.int_Tensor_out(Tensor self, int dim, Tensor index, Tensor value, *, "
           "Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<IndexFillOf, 4, /*kCastable=*/true>>>(
               "core::index_fill_tensor_out")},
          {"index_fill_.int_Tensor(Tensor(a!) self, int dim, Tensor index, Tensor value) -> "
           "Tensor(a!)",
           MakeKernel<Named<IntoSelf<IndexFillOf>>>("core::index_fill_tensor_")},
          {"take(Tensor self, Tensor index) -> Tensor",
           MakeKernel<Named<ComputeOne<TakeOf>>>("core::take")},
          {"take.out(Tensor self, Tensor index, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<TakeOf, 2>>>("core::take_out")},
          {"put(Tensor self, Tensor index, Tensor source, bool accumulate=False) -> Tensor",
           MakeKernel<Named<ComputeOne<PutOf>>>("core::put")},
          {"put.out(Tensor self, Tensor index, Tensor source, bool accumulate=False, *, "
           "Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<PutOf, 4, /*kCastable=*/true>>>("core::put_out")},
          {"put_(Tensor(a!) self, Tensor index, Tensor source, bool accumulate=False) -> "
           "Tensor(a!)",
           MakeKernel<Named<IntoSelf<PutOf>>>("core::put_")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera

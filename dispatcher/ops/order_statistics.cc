// Op set 1.9's order statistics, composites over a stable sort so every backend has them:
// kthvalue, median and nanmedian (whole or along a dim) and mode.
//
// Each sorts along the dim (sort.stable: NaN last, equal values in their original order) and
// picks one position per slice, read with gather from the sorted values and their indices:
//   - kthvalue: position k - 1;
//   - median: the lower median, (n - 1) / 2, unless the slice holds a NaN: then its first NaN
//     (ATen's median propagates NaN and reports where one is);
//   - nanmedian: the lower median of the slice's c non-NaN values, max(c - 1, 0) / 2 (a slice
//     of NaN only gives its first NaN);
//   - mode: the longest run of equal sorted values (NaN equals nothing, so each NaN is a run
//     of one), the first such run (the least value) on ties, at its last element (the greatest
//     original index of the value).
// With equal values ATen's index is whichever its selection algorithm meets; the stable sort
// gives one answer on every backend. Checks and messages are ATen's (Sorting.cpp,
// TensorCompare.cpp); an empty reduced dim is OUT_OF_RANGE (PyTorch's IndexError).
#include <cmath>

#include "absl/strings/str_format.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {
namespace {

struct Sorted {
  Tensor values, indices;
};

absl::StatusOr<Sorted> SortAlong(OpRegistry& r, const Tensor& self, int64_t dim) {
  TSR_ASSIGN_OR_RETURN(OperatorHandle sort, r.Find("sort.stable"));
  Stack s{Value(self), Value(true), Value(dim), Value(false)};
  TSR_RETURN_IF_ERROR(r.Call(sort, &s));
  return Sorted{s[0].tensor(), s[1].tensor()};
}

absl::Status RefuseBool(const OperatorHandle& op, const Tensor& self) {
  if (self.dtype() != ScalarType::kBool) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrFormat("%s: not implemented for dtype bool", op.name()));
}

absl::StatusOr<int64_t> ReducedDim(const OperatorHandle& op, const Tensor& self, int64_t dim_arg) {
  TSR_ASSIGN_OR_RETURN(const int64_t dim, WrapDim(dim_arg, self.dim(), op.name()));
  if (self.dim() > 0 && self.sizes()[dim] == 0) {
    return absl::OutOfRangeError(
        absl::StrFormat("%s: Expected reduction dim %d to have non-zero size.", op.name(), dim));
  }
  return dim;
}

// OfScalar: a 0-dim self's (values, indices): itself, at index 0.
TensorsOr OfScalar(OpRegistry& r, const Tensor& self) {
  TSR_ASSIGN_OR_RETURN(Tensor values,
                       CallOne(r, "clone", {Value(self), Value(kMemoryFormatContiguous)}));
  TSR_ASSIGN_OR_RETURN(Tensor zero, Zeros(r, {}, ScalarType::kInt64, self.device()));
  return std::vector<Tensor>{values, zero};
}

// Pick: sorted values and indices at `position` (int64, self's shape with 1 at dim), the dim
// kept or dropped.
TensorsOr Pick(OpRegistry& r, const Sorted& sorted, const Tensor& position, int64_t dim,
               bool keepdim) {
  std::vector<Tensor> out;
  for (const Tensor& t : {sorted.values, sorted.indices}) {
    TSR_ASSIGN_OR_RETURN(Tensor picked,
                         CallOne(r, "gather", {Value(t), Value(dim), Value(position)}));
    if (!keepdim) {
      TSR_ASSIGN_OR_RETURN(picked, SqueezeDims(picked, {dim}));
    }
    out.push_back(std::move(picked));
  }
  return out;
}

// Constant: an int64 tensor of `shape` holding v (expanded: no memory per element).
absl::StatusOr<Tensor> Constant(OpRegistry& r, int64_t v, IntArrayRef shape, Device device) {
  TSR_ASSIGN_OR_RETURN(Tensor one, CallOne(r, "scalar_tensor",
                                           {Value(Scalar(v)), Value(ScalarType::kInt64),
                                            Value(std::nullopt), Value(device)}));
  return Expand(one, shape);
}

DimVector KeptShape(const Tensor& self, int64_t dim) {
  DimVector shape(self.sizes().begin(), self.sizes().end());
  shape[dim] = 1;
  return shape;
}

// ---- kthvalue(self, k, dim=-1, keepdim=False) ----

TensorsOr KthvalueOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  const int64_t k = s[1].to_int();
  const bool keepdim = s[3].to_bool();
  TSR_ASSIGN_OR_RETURN(const int64_t dim, ReducedDim(op, self, s[2].to_int()));
  const int64_t n = self.dim() == 0 ? 1 : self.sizes()[dim];
  if (k < 1 || k > n) {
    return Invalid(
        op, absl::StrFormat("kthvalue(): selected number k out of range for dimension %d", dim));
  }
  TSR_RETURN_IF_ERROR(RefuseBool(op, self));
  if (self.dim() == 0) return OfScalar(r, self);
  TSR_ASSIGN_OR_RETURN(Sorted sorted, SortAlong(r, self, dim));
  TSR_ASSIGN_OR_RETURN(Tensor position, Constant(r, k - 1, KeptShape(self, dim), self.device()));
  return Pick(r, sorted, position, dim, keepdim);
}

// ---- median / nanmedian, along a dim ----

template <bool kIgnoreNan>
TensorsOr MedianDim(const OperatorHandle& op, const Tensor& self, int64_t dim_arg, bool keepdim) {
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(const int64_t dim, ReducedDim(op, self, dim_arg));
  TSR_RETURN_IF_ERROR(RefuseBool(op, self));
  if (self.dim() == 0) return OfScalar(r, self);
  const int64_t n = self.sizes()[dim];
  const DimVector kept = KeptShape(self, dim);
  TSR_ASSIGN_OR_RETURN(Sorted sorted, SortAlong(r, self, dim));
  Tensor position;
  if (!IsFloatingType(self.dtype())) {  // no NaN: the lower median of n
    TSR_ASSIGN_OR_RETURN(position, Constant(r, (n - 1) / 2, kept, self.device()));
    return Pick(r, sorted, position, dim, keepdim);
  }
  TSR_ASSIGN_OR_RETURN(Tensor nan, CallOne(r, "isnan", {Value(self)}));
  TSR_ASSIGN_OR_RETURN(Tensor nans, CallOne(r, "sum.dim_IntList",
                                            {Value(nan), Value(IntList{dim}), Value(true),
                                             Value(ScalarType::kInt64)}));
  // numbers = n - nans: NaN sorts last, so the first NaN is at `numbers`.
  TSR_ASSIGN_OR_RETURN(Tensor numbers, CallOne(r, "rsub.Scalar", {Value(nans), Value(Scalar(n))}));
  if (kIgnoreNan) {
    // max(numbers - 1, 0) / 2
    TSR_ASSIGN_OR_RETURN(Tensor below,
                         CallOne(r, "sub.Scalar", {Value(numbers), Value(Scalar(int64_t{1}))}));
    TSR_ASSIGN_OR_RETURN(Tensor clamped,
                         CallOne(r, "clamp_min", {Value(below), Value(Scalar(int64_t{0}))}));
    TSR_ASSIGN_OR_RETURN(
        position, CallOne(r, "floor_divide.Scalar", {Value(clamped), Value(Scalar(int64_t{2}))}));
  } else {
    TSR_ASSIGN_OR_RETURN(Tensor any_nan,
                         CallOne(r, "gt.Scalar", {Value(nans), Value(Scalar(int64_t{0}))}));
    TSR_ASSIGN_OR_RETURN(Tensor median, Constant(r, (n - 1) / 2, kept, self.device()));
    TSR_ASSIGN_OR_RETURN(position,
                         CallOne(r, "where.self", {Value(any_nan), Value(numbers), Value(median)}));
  }
  return Pick(r, sorted, position, dim, keepdim);
}

template <bool kIgnoreNan>
TensorsOr MedianDimOf(const OperatorHandle& op, const Stack& s) {
  return MedianDim<kIgnoreNan>(op, s[0].tensor(), s[1].to_int(), s[2].to_bool());
}

// median(self) / nanmedian(self): of every element; an empty self's is NaN.
template <bool kIgnoreNan>
absl::StatusOr<Tensor> MedianAllOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  TSR_RETURN_IF_ERROR(RefuseBool(op, self));
  if (self.numel() == 0) {
    if (!IsFloatingType(self.dtype())) {
      // ATen casts NaN to the integer type (an arbitrary value): refused instead.
      return Invalid(op,
                     absl::StrFormat("the median of an empty %s tensor has no value (NaN "
                                     "has no %s form)",
                                     ScalarTypeName(self.dtype()), ScalarTypeName(self.dtype())));
    }
    return CallOne(r, "full",
                   {Value(IntList{}), Value(Scalar(std::nan(""))), Value(self.dtype()),
                    Value(std::nullopt), Value(self.device())});
  }
  TSR_ASSIGN_OR_RETURN(Tensor flat, CallOne(r, "reshape", {Value(self), Value(IntList{-1})}));
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> picked, MedianDim<kIgnoreNan>(op, flat, 0, false));
  return picked[0];
}

// ---- mode(self, dim=-1, keepdim=False) ----

TensorsOr ModeOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  const bool keepdim = s[2].to_bool();
  TSR_ASSIGN_OR_RETURN(const int64_t dim, ReducedDim(op, self, s[1].to_int()));
  if (self.dim() == 0) return OfScalar(r, self);
  const int64_t last = self.dim() - 1;
  const int64_t n = self.sizes()[dim];
  // Along the last dim, so that the runs are along it.
  TSR_ASSIGN_OR_RETURN(Tensor moved, Transpose(self, dim, last));
  TSR_ASSIGN_OR_RETURN(Sorted sorted, SortAlong(r, moved, last));
  // starts[i]: i begins a run (the first element, or unequal to the one before).
  TSR_ASSIGN_OR_RETURN(Tensor rest, Narrow(sorted.values, last, 1, n - 1));
  TSR_ASSIGN_OR_RETURN(Tensor before, Narrow(sorted.values, last, 0, n - 1));
  TSR_ASSIGN_OR_RETURN(Tensor differs, CallOne(r, "ne.Tensor", {Value(rest), Value(before)}));
  DimVector first_shape(moved.sizes().begin(), moved.sizes().end());
  first_shape[last] = 1;
  TSR_ASSIGN_OR_RETURN(
      Tensor first,
      CallOne(r, "full",
              {Value(IntList(first_shape.begin(), first_shape.end())), Value(Scalar(true)),
               Value(ScalarType::kBool), Value(std::nullopt), Value(self.device())}));
  TSR_ASSIGN_OR_RETURN(
      Tensor starts, CallOne(r, "cat", {Value(std::vector<Tensor>{first, differs}), Value(last)}));
  // run length so far at i: i - (the latest start <= i) + 1; the latest start by cummax.
  TSR_ASSIGN_OR_RETURN(Tensor positions, CallOne(r, "arange",
                                                 {Value(Scalar(n)), Value(ScalarType::kInt64),
                                                  Value(std::nullopt), Value(self.device())}));
  TSR_ASSIGN_OR_RETURN(Tensor zero, Constant(r, 0, {}, self.device()));
  TSR_ASSIGN_OR_RETURN(Tensor start_at,
                       CallOne(r, "where.self", {Value(starts), Value(positions), Value(zero)}));
  TSR_ASSIGN_OR_RETURN(OperatorHandle cummax, r.Find("cummax"));
  Stack running{Value(start_at), Value(last)};
  TSR_RETURN_IF_ERROR(r.Call(cummax, &running));
  TSR_ASSIGN_OR_RETURN(
      Tensor length,
      CallOne(r, "sub.Tensor", {Value(positions), running[0], Value(Scalar(int64_t{1}))}));
  // argmax: the first longest run's last element.
  TSR_ASSIGN_OR_RETURN(Tensor best,
                       CallOne(r, "argmax", {Value(length), Value(last), Value(true)}));
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> picked, Pick(r, sorted, best, last, true));
  std::vector<Tensor> out;
  for (Tensor& t : picked) {
    TSR_ASSIGN_OR_RETURN(Tensor back, Transpose(t, dim, last));
    if (!keepdim) {
      TSR_ASSIGN_OR_RETURN(back, SqueezeDims(back, {dim}));
    }
    TSR_ASSIGN_OR_RETURN(back, CallOne(r, "clone", {Value(back), Value(kMemoryFormatContiguous)}));
    out.push_back(std::move(back));
  }
  return out;
}

}  // namespace

absl::Status DefineOrderStatistics(OpRegistry& registry) {
  return DefineAll(
      registry,
      {
          {"kthvalue(Tensor self, int k, int dim=-1, bool keepdim=False) -> (Tensor values, "
           "Tensor indices)",
           MakeKernel<Named<KthvalueOf>>("core::kthvalue")},
          {"kthvalue.values(Tensor self, int k, int dim=-1, bool keepdim=False, *, Tensor(a!) "
           "values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)",
           MakeKernel<Named<ComputeIntoOuts<KthvalueOf, 4, 2>>>("core::kthvalue_values")},
          {"median(Tensor self) -> Tensor",
           MakeKernel<Named<ComputeOne<MedianAllOf<false>>>>("core::median")},
          {"median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor "
           "indices)",
           MakeKernel<Named<MedianDimOf<false>>>("core::median_dim")},
          {"median.dim_values(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) values, "
           "Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)",
           MakeKernel<Named<ComputeIntoOuts<MedianDimOf<false>, 3, 2>>>("core::median_dim_values")},
          {"nanmedian(Tensor self) -> Tensor",
           MakeKernel<Named<ComputeOne<MedianAllOf<true>>>>("core::nanmedian")},
          {"nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor "
           "indices)",
           MakeKernel<Named<MedianDimOf<true>>>("core::nanmedian_dim")},
          {"nanmedian.dim_values(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) "
           "values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)",
           MakeKernel<Named<ComputeIntoOuts<MedianDimOf<true>, 3, 2>>>(
               "core::nanmedian_dim_values")},
          {"mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor "
           "indices)",
           MakeKernel<Named<ModeOf>>("core::mode")},
          {"mode.values(Tensor self, int dim=-1, bool keepdim=False, *, Tensor(a!) values, "
           "Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)",
           MakeKernel<Named<ComputeIntoOuts<ModeOf, 3, 2>>>("core::mode_values")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera

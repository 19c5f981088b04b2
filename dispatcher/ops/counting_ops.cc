// Op set 1.9's counting ops, composites over sort, cumsum, scatter_add and the comparisons so
// every backend has them:
//   - the unique family (_unique2, unique_consecutive, unique_dim): runs of equal values
//     (after a stable sort, except for unique_consecutive) found by comparing neighbours; NaN
//     equals nothing, so each NaN is a value of its own, as current ATen's;
//   - bincount and histc: a scatter_add of ones (or weights) into the bins;
//   - searchsorted and bucketize: ATen's binary search run for every value at once, step for
//     step (BinarySearch), so NaN values and boundaries land where ATen's do.
// The unique ops and bincount have result sizes that depend on values: they read counts back to
// the host, and refuse the meta device (UNIMPLEMENTED). Checks and messages are ATen's
// (Unique.cpp, SummaryOps.cpp, Bucketization.cpp, BucketizationUtils.h).
#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"
#include "core/dtype.h"
#include "core/host_copy.h"
#include "core/shape.h"
#include "core/type_promotion.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"
#include "dispatcher/ops/index_support.h"

namespace tessera {
namespace ops {
namespace {

absl::StatusOr<Tensor> EmptyLong(OpRegistry& r, Device device) {
  return Zeros(r, {0}, ScalarType::kInt64, device);
}

// Runs: where runs of equal elements start along dim 0 of `sorted` ([n] values, or [n, m] rows,
// compared whole), as bool [n]: the first element, and each unequal to the one before.
absl::StatusOr<Tensor> RunStarts(OpRegistry& r, const Tensor& sorted) {
  const int64_t n = sorted.sizes()[0];
  TSR_ASSIGN_OR_RETURN(Tensor first,
                       CallOne(r, "full",
                               {Value(IntList{1}), Value(Scalar(true)), Value(ScalarType::kBool),
                                Value(std::nullopt), Value(sorted.device())}));
  if (n == 1) return first;
  TSR_ASSIGN_OR_RETURN(Tensor rest, Narrow(sorted, 0, 1, n - 1));
  TSR_ASSIGN_OR_RETURN(Tensor before, Narrow(sorted, 0, 0, n - 1));
  TSR_ASSIGN_OR_RETURN(Tensor differs, CallOne(r, "ne.Tensor", {Value(rest), Value(before)}));
  if (sorted.dim() > 1) {
    TSR_ASSIGN_OR_RETURN(differs,
                         CallOne(r, "any.dim", {Value(differs), Value(int64_t{1}), Value(false)}));
  }
  return CallOne(r, "cat", {Value(std::vector<Tensor>{first, differs}), Value(int64_t{0})});
}

// Runs of `sorted` (RunStarts): where each starts, and the run of each element.
struct Runs {
  Tensor starts;  // int64 [u]: positions along dim 0 where the runs start
  Tensor run_of;  // int64 [n]: the run of each element
};

absl::StatusOr<Runs> FindRuns(const OperatorHandle& op, const Tensor& sorted) {
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Tensor starts, RunStarts(r, sorted));
  Runs runs;
  TSR_ASSIGN_OR_RETURN(runs.starts, FlatNonzero(op, starts));
  TSR_ASSIGN_OR_RETURN(
      Tensor numbered,
      CallOne(r, "cumsum", {Value(starts), Value(int64_t{0}), Value(ScalarType::kInt64)}));
  TSR_ASSIGN_OR_RETURN(runs.run_of,
                       CallOne(r, "sub.Scalar", {Value(numbered), Value(Scalar(int64_t{1}))}));
  return runs;
}

// Counts: how many elements each of `u` runs holds.
absl::StatusOr<Tensor> Counts(OpRegistry& r, const Runs& runs) {
  const int64_t u = runs.starts.numel();
  TSR_ASSIGN_OR_RETURN(Tensor zeros, Zeros(r, {u}, ScalarType::kInt64, runs.run_of.device()));
  TSR_ASSIGN_OR_RETURN(Tensor ones,
                       CallOne(r, "ones_like", {Value(runs.run_of), Value(std::nullopt)}));
  return CallOne(r, "scatter_add",
                 {Value(zeros), Value(int64_t{0}), Value(runs.run_of), Value(ones)});
}

// Inverse: each original element's run, where `order` took it from (the sort's indices), or
// the run ids as they are without one.
absl::StatusOr<Tensor> Inverse(OpRegistry& r, const Runs& runs, const Tensor& order) {
  if (!order.defined()) return runs.run_of;
  TSR_ASSIGN_OR_RETURN(Tensor zeros, CallOne(r, "zeros_like", {Value(runs.run_of)}));
  return CallOne(r, "scatter.src",
                 {Value(zeros), Value(int64_t{0}), Value(order), Value(runs.run_of)});
}

// ---- _unique2(self, sorted=True, return_inverse=False, return_counts=False) ----
// The values always sorted (ATen's CPU sorts too, except in a hashing path whose order is
// unspecified); an unrequested inverse or counts is an empty int64 tensor.

TensorsOr Unique2Of(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  const bool want_inverse = s[2].to_bool(), want_counts = s[3].to_bool();
  TSR_RETURN_IF_ERROR(RefuseMeta(op, self));
  TSR_ASSIGN_OR_RETURN(Tensor flat, CallOne(r, "reshape", {Value(self), Value(IntList{-1})}));
  TSR_ASSIGN_OR_RETURN(Tensor no_inverse, EmptyLong(r, self.device()));
  Tensor no_counts = no_inverse;
  if (self.numel() == 0) {
    Tensor inverse = no_inverse;
    if (want_inverse) {
      TSR_ASSIGN_OR_RETURN(inverse, Zeros(r, self.sizes(), ScalarType::kInt64, self.device()));
    }
    return std::vector<Tensor>{flat, inverse, no_counts};
  }
  TSR_ASSIGN_OR_RETURN(OperatorHandle sort, r.Find("sort.stable"));
  Stack sorted{Value(flat), Value(true), Value(int64_t{0}), Value(false)};
  TSR_RETURN_IF_ERROR(r.Call(sort, &sorted));
  TSR_ASSIGN_OR_RETURN(Runs runs, FindRuns(op, sorted[0].tensor()));
  std::vector<Tensor> out(3);
  TSR_ASSIGN_OR_RETURN(
      out[0], CallOne(r, "index_select", {sorted[0], Value(int64_t{0}), Value(runs.starts)}));
  out[1] = no_inverse;
  if (want_inverse) {
    TSR_ASSIGN_OR_RETURN(Tensor inverse, Inverse(r, runs, sorted[1].tensor()));
    TSR_ASSIGN_OR_RETURN(out[1],
                         CallOne(r, "reshape", {Value(inverse), Value(ToIntList(self.sizes()))}));
  }
  out[2] = no_counts;
  if (want_counts) {
    TSR_ASSIGN_OR_RETURN(out[2], Counts(r, runs));
  }
  return out;
}

// ---- slices along a dim: unique_dim and unique_consecutive's dim path ----

// SliceRows: self's slices along dim as the rows of [n, m] (in movedim(dim, 0)'s order), or
// the outputs for an empty self (`empty`: values self, inverse and counts [0]); ATen's checks
// of zero-size dims.
struct SliceRows {
  Tensor rows;
  std::optional<std::vector<Tensor>> empty;
};

absl::StatusOr<SliceRows> RowsOf(const OperatorHandle& op, const Tensor& self, int64_t dim_arg) {
  OpRegistry& r = op.registry();
  if (self.dim() == 0) {
    return absl::OutOfRangeError(absl::StrFormat(
        "%s: Dimension specified as %d but tensor has no dimensions", op.name(), dim_arg));
  }
  TSR_ASSIGN_OR_RETURN(const int64_t dim, WrapDim(dim_arg, self.dim(), op.name()));
  const int64_t zero_dims = std::count(self.sizes().begin(), self.sizes().end(), 0);
  const int64_t n = self.sizes()[dim];
  SliceRows out;
  if (n == 0) {
    if (zero_dims != 1) {
      return Invalid(op,
                     "Number of zero sized dimensions is more than one, so unique cannot be "
                     "applied ");
    }
    TSR_ASSIGN_OR_RETURN(Tensor values, CallOne(r, "clone", {Value(self), Value(std::nullopt)}));
    TSR_ASSIGN_OR_RETURN(Tensor none, EmptyLong(r, self.device()));
    out.empty = std::vector<Tensor>{values, none, none};
    return out;
  }
  if (zero_dims != 0) {
    return Invalid(op,
                   "There are 0 sized dimensions, and they aren't selected, so unique cannot "
                   "be applied");
  }
  // movedim(dim, 0): dim first, the others in their order.
  DimVector order{dim};
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (d != dim) order.push_back(d);
  }
  TSR_ASSIGN_OR_RETURN(Tensor moved, Permute(self, order));
  TSR_ASSIGN_OR_RETURN(out.rows,
                       CallOne(r, "reshape", {Value(moved), Value(IntList{n, self.numel() / n})}));
  return out;
}

// SliceOutputs: the distinct slices (the first of each run, as `order` took them), each slice's
// run, and each run's count: ATen returns all three whatever the flags say.
TensorsOr SliceOutputs(const OperatorHandle& op, const Tensor& self, int64_t dim, const Runs& runs,
                       const Tensor& order) {
  OpRegistry& r = op.registry();
  Tensor firsts = runs.starts;
  if (order.defined()) {
    TSR_ASSIGN_OR_RETURN(
        firsts, CallOne(r, "index_select", {Value(order), Value(int64_t{0}), Value(runs.starts)}));
  }
  std::vector<Tensor> out(3);
  TSR_ASSIGN_OR_RETURN(out[0],
                       CallOne(r, "index_select", {Value(self), Value(dim), Value(firsts)}));
  TSR_ASSIGN_OR_RETURN(out[1], Inverse(r, runs, order));
  TSR_ASSIGN_OR_RETURN(out[2], Counts(r, runs));
  return out;
}

// ---- unique_consecutive(self, return_inverse=False, return_counts=False, dim=None) ----
// Without a dim (or dim 0 of a 1-D self: ATen's flat path) runs of equal elements, the
// unrequested returns empty; with one, runs of equal slices (SliceOutputs).

TensorsOr UniqueConsecutiveOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  const bool want_inverse = s[1].to_bool(), want_counts = s[2].to_bool();
  TSR_RETURN_IF_ERROR(RefuseMeta(op, self));
  if (!s[3].is_none() && !(s[3].to_int() == 0 && self.dim() == 1)) {
    TSR_ASSIGN_OR_RETURN(SliceRows sliced, RowsOf(op, self, s[3].to_int()));
    if (sliced.empty) return *sliced.empty;
    TSR_ASSIGN_OR_RETURN(Runs runs, FindRuns(op, sliced.rows));
    TSR_ASSIGN_OR_RETURN(const int64_t dim, WrapDim(s[3].to_int(), self.dim(), op.name()));
    return SliceOutputs(op, self, dim, runs, Tensor());
  }
  TSR_ASSIGN_OR_RETURN(Tensor flat, CallOne(r, "reshape", {Value(self), Value(IntList{-1})}));
  TSR_ASSIGN_OR_RETURN(Tensor none, EmptyLong(r, self.device()));
  std::vector<Tensor> out{flat, none, none};
  if (self.numel() == 0) {
    if (want_inverse) {
      TSR_ASSIGN_OR_RETURN(out[1], Zeros(r, self.sizes(), ScalarType::kInt64, self.device()));
    }
    return out;
  }
  TSR_ASSIGN_OR_RETURN(Runs runs, FindRuns(op, flat));
  TSR_ASSIGN_OR_RETURN(
      out[0], CallOne(r, "index_select", {Value(flat), Value(int64_t{0}), Value(runs.starts)}));
  if (want_inverse) {
    TSR_ASSIGN_OR_RETURN(
        out[1], CallOne(r, "reshape", {Value(runs.run_of), Value(ToIntList(self.sizes()))}));
  }
  if (want_counts) {
    TSR_ASSIGN_OR_RETURN(out[2], Counts(r, runs));
  }
  return out;
}

// ---- unique_dim(self, dim, sorted=True, return_inverse=False, return_counts=False) ----
// The slices sorted lexicographically, then their runs (SliceOutputs). The order comes from
// ranks, in log2(m) rounds of one batched sort each, m the elements of a slice (a sort per
// element would be m rounds): each element position's dense rank among the n slices (equal
// values one rank, NaN after every number and unequal to itself, as the runs compare), then
// pairs of neighbouring positions folded into one rank (first * n + second, re-ranked), until
// one rank per slice orders them; a stable sort of it keeps equal slices in their order.

// DenseRanks: for each row of `keys` ([rows, n]), each element's rank among its row's values
// (0 for the least; equal values share one), by a stable sort along the row.
absl::StatusOr<Tensor> DenseRanks(OpRegistry& r, const Tensor& keys) {
  const int64_t n = keys.sizes()[1];
  TSR_ASSIGN_OR_RETURN(OperatorHandle sort, r.Find("sort.stable"));
  Stack sorted{Value(keys), Value(true), Value(int64_t{1}), Value(false)};
  TSR_RETURN_IF_ERROR(r.Call(sort, &sorted));
  const Tensor& values = sorted[0].tensor();
  TSR_ASSIGN_OR_RETURN(Tensor rest, Narrow(values, 1, 1, n - 1));
  TSR_ASSIGN_OR_RETURN(Tensor before, Narrow(values, 1, 0, n - 1));
  TSR_ASSIGN_OR_RETURN(Tensor rises, CallOne(r, "ne.Tensor", {Value(rest), Value(before)}));
  TSR_ASSIGN_OR_RETURN(Tensor first,
                       Zeros(r, {keys.sizes()[0], 1}, ScalarType::kBool, keys.device()));
  TSR_ASSIGN_OR_RETURN(
      Tensor steps,
      CallOne(r, "cat", {Value(std::vector<Tensor>{first, rises}), Value(int64_t{1})}));
  TSR_ASSIGN_OR_RETURN(
      Tensor in_order,
      CallOne(r, "cumsum", {Value(steps), Value(int64_t{1}), Value(ScalarType::kInt64)}));
  // Back to each element's own place.
  TSR_ASSIGN_OR_RETURN(Tensor ranks, CallOne(r, "zeros_like", {Value(in_order)}));
  return CallOne(r, "scatter.src", {Value(ranks), Value(int64_t{1}), sorted[1], Value(in_order)});
}

TensorsOr UniqueDimOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  TSR_RETURN_IF_ERROR(RefuseMeta(op, self));
  TSR_ASSIGN_OR_RETURN(SliceRows sliced, RowsOf(op, self, s[1].to_int()));
  if (sliced.empty) return *sliced.empty;
  TSR_ASSIGN_OR_RETURN(const int64_t dim, WrapDim(s[1].to_int(), self.dim(), op.name()));
  const int64_t n = sliced.rows.sizes()[0];
  TSR_ASSIGN_OR_RETURN(Tensor positions, Transpose(sliced.rows, 0, 1));  // [m, n]
  Tensor ranks;
  if (n == 1) {
    TSR_ASSIGN_OR_RETURN(ranks, Zeros(r, {1, 1}, ScalarType::kInt64, self.device()));
  } else {
    TSR_ASSIGN_OR_RETURN(ranks, DenseRanks(r, positions));
    // Fold neighbouring positions pairwise: ranks < n, so first * n + second < n^2, which fits
    // int64 while n <= floor(sqrt(2^63 - 1)).
    if (n > int64_t{3037000499}) {  // floor(sqrt(2^63 - 1))
      return Invalid(op, absl::StrFormat("unique_dim of %d slices: more than a rank pair of "
                                         "int64 can order",
                                         n));
    }
    while (ranks.sizes()[0] > 1) {
      const int64_t m = ranks.sizes()[0];
      if (m % 2 == 1) {  // an odd count: a last position of rank 0 everywhere pairs with it
        TSR_ASSIGN_OR_RETURN(Tensor pad, Zeros(r, {1, n}, ScalarType::kInt64, self.device()));
        TSR_ASSIGN_OR_RETURN(
            ranks, CallOne(r, "cat", {Value(std::vector<Tensor>{ranks, pad}), Value(int64_t{0})}));
      }
      TSR_ASSIGN_OR_RETURN(
          Tensor pairs, CallOne(r, "reshape", {Value(ranks), Value(IntList{(m + 1) / 2, 2, n})}));
      TSR_ASSIGN_OR_RETURN(Tensor first, Select(pairs, 1, 0));
      TSR_ASSIGN_OR_RETURN(Tensor second, Select(pairs, 1, 1));
      TSR_ASSIGN_OR_RETURN(Tensor scaled,
                           CallOne(r, "mul.Scalar", {Value(first), Value(Scalar(n))}));
      TSR_ASSIGN_OR_RETURN(
          Tensor folded,
          CallOne(r, "add.Tensor", {Value(scaled), Value(second), Value(Scalar(int64_t{1}))}));
      TSR_ASSIGN_OR_RETURN(ranks, DenseRanks(r, folded));
    }
  }
  TSR_ASSIGN_OR_RETURN(Tensor rank, Select(ranks, 0, 0));
  TSR_ASSIGN_OR_RETURN(OperatorHandle sort, r.Find("sort.stable"));
  Stack sorted{Value(rank), Value(true), Value(int64_t{0}), Value(false)};
  TSR_RETURN_IF_ERROR(r.Call(sort, &sorted));
  const Tensor order = sorted[1].tensor();
  TSR_ASSIGN_OR_RETURN(
      Tensor sorted_rows,
      CallOne(r, "index_select", {Value(sliced.rows), Value(int64_t{0}), Value(order)}));
  TSR_ASSIGN_OR_RETURN(Runs runs, FindRuns(op, sorted_rows));
  return SliceOutputs(op, self, dim, runs, order);
}

// ---- bincount(self, weights=None, minlength=0) ----
// Checks in ATen's order (SummaryOps.cpp): self integral, minlength, self 1-D and
// non-negative, then the weights; an empty self counts nothing (int64 zeros, weights unread).

absl::StatusOr<Tensor> BincountOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  const int64_t minlength = s[2].to_int();
  const bool weighted = s[1].is_tensor();
  if (self.dtype() == ScalarType::kBool || !IsIntegralType(self.dtype(), true)) {
    return absl::UnimplementedError(
        absl::StrFormat("%s: not implemented for dtype %s (expected an integral dtype)", op.name(),
                        ScalarTypeName(self.dtype())));
  }
  if (minlength < 0) return Invalid(op, "minlength should be >= 0");
  const char* kOneDim = "bincount only supports 1-d non-negative integral inputs.";
  if (self.dim() != 1) return Invalid(op, kOneDim);
  TSR_RETURN_IF_ERROR(RefuseMeta(op, self));
  if (self.numel() == 0) return Zeros(r, {minlength}, ScalarType::kInt64, self.device());
  TSR_ASSIGN_OR_RETURN(std::optional<Range> range, IndexRange(r, self));
  if (range->min < 0) return Invalid(op, kOneDim);
  if (range->max == INT64_MAX) {  // max + 1 bins: past int64
    return Invalid(op, absl::StrFormat("bincount of a value of %d needs more bins than int64 "
                                       "counts",
                                       range->max));
  }
  if (weighted && (s[1].tensor().dim() != 1 || s[1].tensor().sizes()[0] != self.sizes()[0])) {
    return Invalid(op, "weights should be 1-d and have the same length as input");
  }
  // float32 weights count in float32; any other weights in float64; no weights in int64.
  const ScalarType dtype = !weighted                                       ? ScalarType::kInt64
                           : s[1].tensor().dtype() == ScalarType::kFloat32 ? ScalarType::kFloat32
                                                                           : ScalarType::kFloat64;
  TSR_ASSIGN_OR_RETURN(Tensor counts,
                       Zeros(r, {std::max(minlength, range->max + 1)}, dtype, self.device()));
  TSR_ASSIGN_OR_RETURN(Tensor index, AsLong(r, self));
  Tensor added;
  if (weighted) {
    TSR_ASSIGN_OR_RETURN(added, CallOne(r, "_to_copy", {s[1], Value(dtype)}));
  } else {
    TSR_ASSIGN_OR_RETURN(added, CallOne(r, "ones_like", {Value(index), Value(std::nullopt)}));
  }
  return CallOne(r, "scatter_add", {Value(counts), Value(int64_t{0}), Value(index), Value(added)});
}

// ---- histc(self, bins=100, min=0, max=0) ----
// Equal-width bins over [min, max] (both equal: the data's least and greatest, widened by 1 each
// way where they too are equal), the edges in self's dtype; elements outside them, NaN and
// infinities are not counted; bin = trunc((x - left) * bins / (right - left)) with every step
// rounded to self's dtype, as ATen's kernel computes in it, and max in the last bin.

absl::StatusOr<Tensor> HistcOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  const int64_t bins = s[1].to_int();
  if (!IsFloatingType(self.dtype())) return NotFloating(op, self.dtype());
  if (bins <= 0) {
    return Invalid(op, absl::StrFormat("torch.histogram(): bins must be > 0, but got %d for "
                                       "dimension 0",
                                       bins));
  }
  double lo = s[2].scalar().to_double(), hi = s[3].scalar().to_double();
  TSR_ASSIGN_OR_RETURN(Tensor hist, Zeros(r, {bins}, self.dtype(), self.device()));
  if (self.device().type == DeviceType::kMeta) return hist;
  TSR_ASSIGN_OR_RETURN(Tensor flat, CallOne(r, "reshape", {s[0], Value(IntList{-1})}));
  if (lo == hi && self.numel() > 0) {  // the data's range (NaN in it makes it [nan, nan])
    TSR_ASSIGN_OR_RETURN(OperatorHandle aminmax, r.Find("aminmax"));
    Stack ends{Value(flat), Value(std::nullopt), Value(false)};
    TSR_RETURN_IF_ERROR(r.Call(aminmax, &ends));
    TSR_ASSIGN_OR_RETURN(Tensor both,
                         CallOne(r, "stack",
                                 {Value(std::vector<Tensor>{ends[0].tensor(), ends[1].tensor()}),
                                  Value(int64_t{0})}));
    TSR_ASSIGN_OR_RETURN(both, CallOne(r, "_to_copy", {Value(both), Value(ScalarType::kFloat64)}));
    double values[2] = {0, 0};
    TSR_RETURN_IF_ERROR(CopyTensorToHost(both, values));
    lo = values[0];
    hi = values[1];
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  if (!std::isfinite(lo) || !std::isfinite(hi)) {
    return Invalid(op, absl::StrFormat("torch.histc: range of [%g, %g] is not finite", lo, hi));
  }
  if (!(lo < hi)) return Invalid(op, "torch.histc: max must be larger than min");
  if (self.numel() == 0) return hist;
  // The edges and the bin count as 0-dim tensors of self's dtype: each step below rounds to it.
  auto constant = [&](double v) {
    return CallOne(r, "full",
                   {Value(IntList{}), Value(Scalar(v)), Value(self.dtype()), Value(std::nullopt),
                    Value(self.device())});
  };
  TSR_ASSIGN_OR_RETURN(Tensor left, constant(lo));
  TSR_ASSIGN_OR_RETURN(Tensor right, constant(hi));
  TSR_ASSIGN_OR_RETURN(Tensor count, constant(static_cast<double>(bins)));
  const Value one(Scalar(int64_t{1}));
  TSR_ASSIGN_OR_RETURN(Tensor above, CallOne(r, "ge.Tensor", {Value(flat), Value(left)}));
  TSR_ASSIGN_OR_RETURN(Tensor below, CallOne(r, "le.Tensor", {Value(flat), Value(right)}));
  TSR_ASSIGN_OR_RETURN(Tensor inside, CallOne(r, "logical_and", {Value(above), Value(below)}));
  TSR_ASSIGN_OR_RETURN(Tensor width, CallOne(r, "sub.Tensor", {Value(right), Value(left), one}));
  TSR_ASSIGN_OR_RETURN(Tensor offset, CallOne(r, "sub.Tensor", {Value(flat), Value(left), one}));
  TSR_ASSIGN_OR_RETURN(Tensor scaled, CallOne(r, "mul.Tensor", {Value(offset), Value(count)}));
  TSR_ASSIGN_OR_RETURN(Tensor position, CallOne(r, "div.Tensor", {Value(scaled), Value(width)}));
  // Elements not counted go to bin 0 with weight 0 (no cast of NaN or inf to an integer).
  TSR_ASSIGN_OR_RETURN(Tensor zero, CallOne(r, "zeros_like", {Value(position)}));
  TSR_ASSIGN_OR_RETURN(position,
                       CallOne(r, "where.self", {Value(inside), Value(position), Value(zero)}));
  TSR_ASSIGN_OR_RETURN(Tensor bin,
                       CallOne(r, "_to_copy", {Value(position), Value(ScalarType::kInt64)}));
  TSR_ASSIGN_OR_RETURN(
      bin, CallOne(r, "clamp", {Value(bin), Value(Scalar(int64_t{0})), Value(Scalar(bins - 1))}));
  TSR_ASSIGN_OR_RETURN(Tensor weight, CallOne(r, "_to_copy", {Value(inside), Value(self.dtype())}));
  return CallOne(r, "scatter_add", {Value(hist), Value(int64_t{0}), Value(bin), Value(weight)});
}

// ---- searchsorted / bucketize ----

struct SearchArgs {
  Tensor boundaries;  // sorted along the last dim (after the sorter)
  Tensor values;      // in the boundaries' dtype; a Scalar as a 0-dim tensor
  bool right = false;
  bool out_int32 = false;
};

// BinarySearch: ATen's binary search for every value at once, step for step, so that NaN values
// and boundaries land where ATen's do: start = 0, end = m; while start < end: mid = start +
// (end - start) / 2; go right (start = mid + 1) where !(b[mid] >= v) (left) or !(b[mid] > v)
// (right), else end = mid. Each search ends within floor(log2(m)) + 1 steps; values whose
// search has ended keep their (start, end).
absl::StatusOr<Tensor> BinarySearch(OpRegistry& r, const SearchArgs& a) {
  const Tensor& b = a.boundaries;
  const int64_t m = b.sizes().back();
  // values as rows matching the boundaries': [n] against 1-D boundaries, else [..., n].
  Tensor v = a.values;
  const bool flat = b.dim() == 1;
  if (flat) {
    TSR_ASSIGN_OR_RETURN(v, CallOne(r, "reshape", {Value(v), Value(IntList{-1})}));
  }
  TSR_ASSIGN_OR_RETURN(Tensor start, Zeros(r, v.sizes(), ScalarType::kInt64, v.device()));
  TSR_ASSIGN_OR_RETURN(
      Tensor end, CallOne(r, "full",
                          {Value(ToIntList(v.sizes())), Value(Scalar(m)), Value(ScalarType::kInt64),
                           Value(std::nullopt), Value(v.device())}));
  const char* stop = a.right ? "gt.Tensor" : "ge.Tensor";
  const Value one(Scalar(int64_t{1}));
  for (int64_t span = m; span > 0; span /= 2) {  // floor(log2(m)) + 1 steps
    TSR_ASSIGN_OR_RETURN(Tensor active, CallOne(r, "lt.Tensor", {Value(start), Value(end)}));
    TSR_ASSIGN_OR_RETURN(Tensor width, CallOne(r, "sub.Tensor", {Value(end), Value(start), one}));
    TSR_ASSIGN_OR_RETURN(
        Tensor half, CallOne(r, "floor_divide.Scalar", {Value(width), Value(Scalar(int64_t{2}))}));
    TSR_ASSIGN_OR_RETURN(Tensor mid, CallOne(r, "add.Tensor", {Value(start), Value(half), one}));
    // An ended search's mid may be m: read any boundary there, its answer is not used.
    TSR_ASSIGN_OR_RETURN(
        Tensor at,
        CallOne(r, "clamp", {Value(mid), Value(Scalar(int64_t{0})), Value(Scalar(m - 1))}));
    Tensor bound;
    if (flat) {
      TSR_ASSIGN_OR_RETURN(bound,
                           CallOne(r, "index_select", {Value(b), Value(int64_t{0}), Value(at)}));
    } else {
      TSR_ASSIGN_OR_RETURN(bound, CallOne(r, "gather", {Value(b), Value(int64_t{-1}), Value(at)}));
    }
    TSR_ASSIGN_OR_RETURN(Tensor stops, CallOne(r, stop, {Value(bound), Value(v)}));
    TSR_ASSIGN_OR_RETURN(Tensor goes, CallOne(r, "logical_not", {Value(stops)}));
    TSR_ASSIGN_OR_RETURN(Tensor right, CallOne(r, "logical_and", {Value(active), Value(goes)}));
    TSR_ASSIGN_OR_RETURN(Tensor left, CallOne(r, "logical_and", {Value(active), Value(stops)}));
    TSR_ASSIGN_OR_RETURN(Tensor past, CallOne(r, "add.Scalar", {Value(mid), one, one}));
    TSR_ASSIGN_OR_RETURN(start,
                         CallOne(r, "where.self", {Value(right), Value(past), Value(start)}));
    TSR_ASSIGN_OR_RETURN(end, CallOne(r, "where.self", {Value(left), Value(mid), Value(end)}));
  }
  TSR_ASSIGN_OR_RETURN(Tensor found,
                       CallOne(r, "reshape", {Value(start), Value(ToIntList(a.values.sizes()))}));
  if (!a.out_int32) return found;
  return CallOne(r, "_to_copy", {Value(found), Value(ScalarType::kInt32)});
}

// SearchsortedOf: searchsorted(sorted_sequence, self, *, out_int32, right, side, sorter), self
// a tensor or a Scalar; checks in ATen's order (BucketizationUtils.h), then both operands in
// their result type (a Scalar as a wrapped number).
absl::StatusOr<Tensor> SearchsortedOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& sequence = s[0].tensor();
  SearchArgs a;
  a.out_int32 = s[2].to_bool();
  a.right = s[3].to_bool();
  if (s[4].is_string()) {
    const std::string& side = s[4].string();
    if (side != "left" && side != "right") {
      return Invalid(op, absl::StrFormat("torch.searchsorted(): side can only be 'left' or "
                                         "'right' but got %s",
                                         side));
    }
    if (a.right && side == "left") {
      return Invalid(op,
                     "torch.searchsorted(): side and right can't be set to opposites, got "
                     "side of left while right was True");
    }
    a.right = side == "right";
  }
  a.boundaries = sequence;
  if (s[5].is_tensor()) {
    const Tensor& sorter = s[5].tensor();
    if (!SameDims(sorter.sizes(), sequence.sizes())) {
      return Invalid(
          op, absl::StrFormat("torch.searchsorted(): boundary and sorter must have the "
                              "same size, but got boundary tensor %s and got sorter "
                              "tensor %s",
                              ShapeToString(sequence.sizes()), ShapeToString(sorter.sizes())));
    }
    if (sorter.dtype() != ScalarType::kInt64) {
      return Invalid(op, absl::StrFormat("torch.searchsorted(): sorter must be a tensor of long "
                                         "dtype but got %s",
                                         ScalarTypeName(sorter.dtype())));
    }
    if (sorter.numel() > 0 && sequence.dim() > 0) {
      TSR_ASSIGN_OR_RETURN(std::optional<Range> range, IndexRange(r, sorter));
      const int64_t m = sequence.sizes().back();
      if (range && (range->min < 0 || range->max >= m)) {
        return Invalid(op, "torch.searchsorted(): sorter index out of range");
      }
    }
  }
  const bool scalar = s[1].is_scalar();
  const Tensor* values = scalar ? nullptr : &s[1].tensor();
  const int64_t values_dim = scalar ? 0 : values->dim();
  if (sequence.dim() != 1 && values_dim == 0) {
    return Invalid(op, absl::StrFormat("torch.searchsorted(): input value can be a scalar only "
                                       "when boundaries tensor dimension is 1, but we got "
                                       "boundaries tensor dim(%d) and input value's dim(%d) "
                                       "numel(%d)",
                                       sequence.dim(), values_dim, scalar ? 1 : values->numel()));
  }
  if (sequence.dim() == 0) {
    return Invalid(op,
                   "torch.searchsorted(): boundaries tensor should have positive dimension, "
                   "but got 0 dimension");
  }
  if (sequence.dim() != 1 &&
      (values_dim != sequence.dim() || !SameDims(sequence.sizes().subspan(0, sequence.dim() - 1),
                                                 values->sizes().subspan(0, values_dim - 1)))) {
    return Invalid(
        op, absl::StrFormat("torch.searchsorted(): boundaries tensor should be 1 "
                            "dimension or the first N-1 dimensions of boundaries "
                            "tensor and input value tensor must match, but we got "
                            "boundaries tensor %s and input value tensor %s",
                            ShapeToString(sequence.sizes()), ShapeToString(values->sizes())));
  }
  const ScalarType index_type = a.out_int32 ? ScalarType::kInt32 : ScalarType::kInt64;
  if (!scalar && values->numel() == 0) {  // before the dtype dispatch, as ATen's
    return Zeros(r, values->sizes(), index_type, values->device());
  }
  ResultTypeBuilder promotion;
  promotion.AddTensor(sequence.dtype(), sequence.dim());
  if (scalar) {
    promotion.AddScalar(s[1].scalar());
  } else {
    promotion.AddTensor(values->dtype(), values->dim());
  }
  const ScalarType dtype = promotion.Result();
  if (dtype == ScalarType::kBool) {
    return absl::UnimplementedError(
        absl::StrFormat("%s: not implemented for dtype bool", op.name()));
  }
  if (scalar) {
    TSR_ASSIGN_OR_RETURN(a.values, CallOne(r, "full",
                                           {Value(IntList{}), s[1], Value(dtype),
                                            Value(std::nullopt), Value(sequence.device())}));
  } else {
    TSR_ASSIGN_OR_RETURN(a.values, CallOne(r, "_to_copy", {s[1], Value(dtype)}));
  }
  if (s[5].is_tensor()) {
    TSR_ASSIGN_OR_RETURN(a.boundaries,
                         CallOne(r, "gather", {Value(sequence), Value(int64_t{-1}), s[5]}));
  }
  TSR_ASSIGN_OR_RETURN(a.boundaries, CallOne(r, "_to_copy", {Value(a.boundaries), Value(dtype)}));
  if (sequence.sizes().back() == 0)
    return Zeros(r, a.values.sizes(), index_type, a.values.device());
  return BinarySearch(r, a);
}

// bucketize(self, boundaries, *, out_int32, right): searchsorted with 1-D boundaries.
absl::StatusOr<Tensor> BucketizeOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& boundaries = s[1].tensor();
  if (boundaries.dim() != 1) {
    return Invalid(op, absl::StrFormat("boundaries tensor must be 1 dimension, but got dim(%d)",
                                       boundaries.dim()));
  }
  return SearchsortedOf(op, {s[1], s[0], s[2], s[3], Value(std::nullopt), Value(std::nullopt)});
}

}  // namespace

absl::Status DefineCountingOps(OpRegistry& registry) {
  return DefineAll(
      registry,
      {
          {"_unique2(Tensor self, bool sorted=True, bool return_inverse=False, bool "
           "return_counts=False) -> (Tensor, Tensor, Tensor)",
           MakeKernel<Named<Unique2Of>>("core::unique2")},
          {"unique_consecutive(Tensor self, bool return_inverse=False, bool return_counts=False, "
           "int? dim=None) -> (Tensor, Tensor, Tensor)",
           MakeKernel<Named<UniqueConsecutiveOf>>("core::unique_consecutive")},
          {"unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse=False, bool "
           "return_counts=False) -> (Tensor, Tensor, Tensor)",
           MakeKernel<Named<UniqueDimOf>>("core::unique_dim")},
          {"bincount(Tensor self, Tensor? weights=None, int minlength=0) -> Tensor",
           MakeKernel<Named<ComputeOne<BincountOf>>>("core::bincount")},
          {"histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor",
           MakeKernel<Named<ComputeOne<HistcOf>>>("core::histc")},
          {"histc.out(Tensor self, int bins=100, Scalar min=0, Scalar max=0, *, Tensor(a!) out) "
           "-> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<HistcOf, 4>>>("core::histc_out")},
          {"searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, "
           "bool right=False, str? side=None, Tensor? sorter=None) -> Tensor",
           MakeKernel<Named<ComputeOne<SearchsortedOf>>>("core::searchsorted")},
          {"searchsorted.Tensor_out(Tensor sorted_sequence, Tensor self, *, bool "
           "out_int32=False, bool right=False, str? side=None, Tensor? sorter=None, Tensor(a!) "
           "out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<SearchsortedOf, 6>>>("core::searchsorted_out")},
          {"searchsorted.Scalar(Tensor sorted_sequence, Scalar self, *, bool out_int32=False, "
           "bool right=False, str? side=None, Tensor? sorter=None) -> Tensor",
           MakeKernel<Named<ComputeOne<SearchsortedOf>>>("core::searchsorted_scalar")},
          {"bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, bool "
           "right=False) -> Tensor",
           MakeKernel<Named<ComputeOne<BucketizeOf>>>("core::bucketize")},
          {"bucketize.Tensor_out(Tensor self, Tensor boundaries, *, bool out_int32=False, bool "
           "right=False, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<BucketizeOf, 4>>>("core::bucketize_out")},
          {"bucketize.Scalar(Scalar self, Tensor boundaries, *, bool out_int32=False, bool "
           "right=False) -> Tensor",
           MakeKernel<Named<ComputeOne<BucketizeOf>>>("core::bucketize_scalar")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera

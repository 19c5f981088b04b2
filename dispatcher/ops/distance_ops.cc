// Op set 1.9's pairwise distances, composites so every backend has them: cdist and
// _cdist_forward (the p-norm distance between each row of x1 and each row of x2, batched) and
// pdist and _pdist_forward (between the rows of one matrix, each pair once).
//
// As ATen's Distance.cpp: p = 2 with more than 25 rows on either side (compute_mode None or 0),
// or compute_mode 1, takes the matrix-product path, sqrt(clamp_min(|x|^2 + |y|^2 - 2 x.y, 0));
// every other case the norm of the differences, computed in blocks of x1's rows so that each
// block's [rows, rows, columns] differences hold at most 2^24 elements (or one row of x1
// against all of x2, where that alone is more). pdist always takes the
// differences (ATen's pdist kernel computes them directly). float32 and float64 only, as ATen's
// kernels.
#include <algorithm>

#include "absl/strings/str_format.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"
#include "dispatcher/ops/distance_support.h"

namespace tessera {
namespace ops {
namespace {

// Differences: the p-norm of x1's rows minus x2's rows ([..., r1, c] and [..., r2, c], batch
// dims already equal), in blocks of x1's rows, into a new [..., r1, r2].
absl::StatusOr<Tensor> Differences(OpRegistry& r, const Tensor& x1, const Tensor& x2, double p,
                                   const DimVector& shape) {
  TSR_ASSIGN_OR_RETURN(Tensor out, EmptyOf(r, x1, shape));
  const int64_t rows_dim = x1.dim() - 2;
  const int64_t r1 = x1.sizes()[rows_dim];
  const int64_t block = RowBlock(x1, x2);
  TSR_ASSIGN_OR_RETURN(Tensor columns, Unsqueeze(x2, rows_dim));  // [..., 1, r2, c]
  for (int64_t start = 0; start < r1; start += block) {
    const int64_t length = std::min(block, r1 - start);
    TSR_ASSIGN_OR_RETURN(Tensor part, Narrow(x1, rows_dim, start, length));
    TSR_ASSIGN_OR_RETURN(Tensor rows, Unsqueeze(part, rows_dim + 1));  // [..., len, 1, c]
    TSR_ASSIGN_OR_RETURN(
        Tensor diff,
        CallOne(r, "sub.Tensor", {Value(rows), Value(columns), Value(Scalar(int64_t{1}))}));
    TSR_ASSIGN_OR_RETURN(
        Tensor norms, CallOne(r, "norm.ScalarOpt_dim",
                              {Value(diff), Value(Scalar(p)), Value(IntList{-1}), Value(false)}));
    TSR_ASSIGN_OR_RETURN(Tensor into, Narrow(out, rows_dim, start, length));
    TSR_RETURN_IF_ERROR(CallOne(r, "copy_", {Value(into), Value(norms)}).status());
  }
  return out;
}

// Euclidean: the matrix-product path (ATen's _euclidean_dist).
absl::StatusOr<Tensor> Euclidean(OpRegistry& r, const Tensor& x1, const Tensor& x2) {
  const Value one(Scalar(int64_t{1}));
  TSR_ASSIGN_OR_RETURN(Tensor sq1, CallOne(r, "mul.Tensor", {Value(x1), Value(x1)}));
  TSR_ASSIGN_OR_RETURN(
      Tensor n1, CallOne(r, "sum.dim_IntList", {Value(sq1), Value(IntList{-1}), Value(true)}));
  TSR_ASSIGN_OR_RETURN(Tensor sq2, CallOne(r, "mul.Tensor", {Value(x2), Value(x2)}));
  TSR_ASSIGN_OR_RETURN(
      Tensor n2, CallOne(r, "sum.dim_IntList", {Value(sq2), Value(IntList{-1}), Value(true)}));
  TSR_ASSIGN_OR_RETURN(Tensor n2_row, Transpose(n2, -1, -2));
  TSR_ASSIGN_OR_RETURN(Tensor x2_t, Transpose(x2, -1, -2));
  TSR_ASSIGN_OR_RETURN(Tensor product, CallOne(r, "matmul", {Value(x1), Value(x2_t)}));
  TSR_ASSIGN_OR_RETURN(Tensor sum, CallOne(r, "add.Tensor", {Value(n1), Value(n2_row), one}));
  TSR_ASSIGN_OR_RETURN(
      Tensor squared,
      CallOne(r, "sub.Tensor", {Value(sum), Value(product), Value(Scalar(int64_t{2}))}));
  TSR_ASSIGN_OR_RETURN(Tensor clamped,
                       CallOne(r, "clamp_min", {Value(squared), Value(Scalar(0.0))}));
  return CallOne(r, "sqrt", {Value(clamped)});
}

// _cdist_forward(x1, x2, p, compute_mode)
absl::StatusOr<Tensor> CdistOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& x1 = s[0].tensor();
  const Tensor& x2 = s[1].tensor();
  const double p = s[2].to_double();
  TSR_RETURN_IF_ERROR(CheckCdistRanks(op, x1, x2));
  if (!IsFloatingType(x1.dtype())) {
    return Invalid(op, absl::StrFormat("cdist only supports floating-point dtypes, X1 got: %s",
                                       ScalarTypeName(x1.dtype())));
  }
  if (!IsFloatingType(x2.dtype())) {
    return Invalid(op, absl::StrFormat("cdist only supports floating-point dtypes, X2 got: %s",
                                       ScalarTypeName(x2.dtype())));
  }
  for (const Tensor* x : {&x1, &x2}) TSR_RETURN_IF_ERROR(RefuseHalf(op, *x));
  if (x1.dtype() != x2.dtype()) {
    return Invalid(op, absl::StrFormat("X1 and X2 must have the same dtype, got %s and %s",
                                       ScalarTypeName(x1.dtype()), ScalarTypeName(x2.dtype())));
  }
  if (!(p >= 0)) return Invalid(op, "cdist only supports non-negative p values");
  std::optional<int64_t> mode;
  if (!s[3].is_none()) {
    mode = s[3].to_int();
    if (*mode < 0 || *mode > 2) {
      return Invalid(op, absl::StrFormat("possible modes: 0, 1, 2, but was: %d", *mode));
    }
  }
  // Batch dims broadcast; rows and columns are each side's own.
  TSR_ASSIGN_OR_RETURN(const CdistShapes shapes, CdistShapesOf(op, x1, x2));
  const DimVector& shape = shapes.out;
  const int64_t r1 = x1.sizes()[x1.dim() - 2], r2 = x2.sizes()[x2.dim() - 2];
  TSR_ASSIGN_OR_RETURN(Tensor a, Expand(x1, shapes.x1));
  TSR_ASSIGN_OR_RETURN(Tensor b, Expand(x2, shapes.x2));
  if (r1 == 0 || r2 == 0 || x1.sizes().back() == 0) {
    return Zeros(r, shape, x1.dtype(), x1.device());
  }
  const bool matrix_product =
      p == 2 && (mode == 1 || ((!mode || mode == 0) && (r1 > 25 || r2 > 25)));
  if (matrix_product) return Euclidean(r, a, b);
  return Differences(r, a, b, p, shape);
}

// cdist(x1, x2, p=2, compute_mode=None): _cdist_forward, as ATen's cdist calls it.
absl::StatusOr<Tensor> CdistComposite(const OperatorHandle& op, const Stack& s) {
  return CallOne(op.registry(), "_cdist_forward", {s[0], s[1], s[2], s[3]});
}

// _pdist_forward(self, p=2): the upper triangle (i < j, row-major) of self's distances.
absl::StatusOr<Tensor> PdistOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  const double p = s[1].to_double();
  if (self.dim() != 2) {
    return Invalid(op, absl::StrFormat("pdist only supports 2D tensors, got: %dD", self.dim()));
  }
  if (!IsFloatingType(self.dtype())) {
    return Invalid(op, "pdist only supports floating-point dtypes");
  }
  TSR_RETURN_IF_ERROR(RefuseHalf(op, self));
  if (!(p >= 0)) return Invalid(op, "pdist only supports non-negative p values");
  const int64_t n = self.sizes()[0];
  const int64_t pairs = n * (n - 1) / 2;
  if (pairs <= 0) return Zeros(r, {std::max<int64_t>(pairs, 0)}, self.dtype(), self.device());
  TSR_ASSIGN_OR_RETURN(Tensor all, Differences(r, self, self, p, {n, n}));
  // Each pair's position in the flattened [n, n]: i * n + j for the i < j of triu_indices.
  TSR_ASSIGN_OR_RETURN(Tensor pairs_ij,
                       CallOne(r, "triu_indices",
                               {Value(n), Value(n), Value(int64_t{1}), Value(ScalarType::kInt64),
                                Value(std::nullopt), Value(self.device())}));
  TSR_ASSIGN_OR_RETURN(Tensor i, Select(pairs_ij, 0, 0));
  TSR_ASSIGN_OR_RETURN(Tensor j, Select(pairs_ij, 0, 1));
  TSR_ASSIGN_OR_RETURN(Tensor flat_index,
                       CallOne(r, "add.Tensor", {Value(j), Value(i), Value(Scalar(n))}));
  TSR_ASSIGN_OR_RETURN(Tensor flat, CallOne(r, "reshape", {Value(all), Value(IntList{-1})}));
  return CallOne(r, "index_select", {Value(flat), Value(int64_t{0}), Value(flat_index)});
}

absl::StatusOr<Tensor> PdistComposite(const OperatorHandle& op, const Stack& s) {
  return CallOne(op.registry(), "_pdist_forward", {s[0], s[1]});
}

}  // namespace

absl::Status DefineDistanceOps(OpRegistry& registry) {
  return DefineAll(
      registry,
      {
          {"_cdist_forward(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor",
           MakeKernel<Named<ComputeOne<CdistOf>>>("core::cdist_forward")},
          {"_cdist_forward.out(Tensor x1, Tensor x2, float p, int? compute_mode, *, Tensor(a!) "
           "out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<CdistOf, 4, /*kCastable=*/true>>>(
               "core::cdist_forward_out")},
          {"cdist(Tensor x1, Tensor x2, float p=2, int? compute_mode=None) -> Tensor",
           MakeKernel<Named<ComputeOne<CdistComposite>>>("core::cdist")},
          {"_pdist_forward(Tensor self, float p=2) -> Tensor",
           MakeKernel<Named<ComputeOne<PdistOf>>>("core::pdist_forward")},
          {"_pdist_forward.out(Tensor self, float p=2, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<PdistOf, 2, /*kCastable=*/true>>>(
               "core::pdist_forward_out")},
          {"pdist(Tensor self, float p=2) -> Tensor",
           MakeKernel<Named<ComputeOne<PdistComposite>>>("core::pdist")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera

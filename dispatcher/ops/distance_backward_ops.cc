// The backward ops of op set 1.9's pairwise distances (op set 1.10): _cdist_backward and
// _pdist_backward with their out= forms, composites over the pointwise ops and sum so that every
// backend has them.
//
// For a distance d = ||x_i - y_j||_p with incoming gradient g, each of x_i's components gets
// T(diff, g, d), diff = x_i[k] - y_j[k], summed over j; as ATen's CPU kernel (Dist in
// DistanceOpsKernel.cpp) defines T, including where the p-norm has no derivative:
//
//   p = 0:          0 (the count of nonzero components is piecewise constant)
//   p = 1:          g sign(diff)                                   (sign(0) = 0)
//   p < 2, not 1:   d = 0 ? 0 : sign(diff) |diff|^(p-1) g / d^(p-1); and 0 where diff = 0 for
//                   p < 1, where |diff|^(p-1) is infinite
//   p = 2:          d = 0 ? 0 : g diff / d
//   p = inf:        g sign(diff) where |diff| = d (every component at the maximum), else 0
//   otherwise:      d = 0 ? 0 : diff |diff|^(p-2) g / d^(p-1)
//
// d is the forward's result, passed in (cdist), not recomputed. _cdist_backward gives x1's
// gradient only (derivatives.yaml calls it again with x1 and x2 exchanged for x2's), of x1's
// shape with the batch dims broadcast against x2's, as ATen's: autograd's engine sums a
// broadcast x1's gradient back. _pdist_backward is the same sum over the other rows (the pair
// (i, j) gives +T to row i and -T to row j; T is odd in diff): the pairs' g and d are laid out
// as symmetric [n, n] matrices with a zero diagonal (where T is 0) and the cdist sum taken.
//
// The differences are formed in blocks of x1's rows, each at most 2^24 elements (or one row), as
// the forward does. ATen's checks: float32 and float64 only; grad and the distances must have
// the forward output's shape and the input's dtype (ATen's kernel reads them as the input's
// dtype without a check). ATen's backward kernels do not check p (the forward refuses p < 0).
#include <algorithm>
#include <cmath>
#include <vector>

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

Value Number(double v) { return Value(Scalar(v)); }

// CheckDtypes: `x` floating (float32 or float64, as ATen's kernels), and each of `others` (by
// name) of its dtype.
absl::Status CheckDtypes(const OperatorHandle& op, const char* x_name, const Tensor& x,
                         std::vector<std::pair<const char*, const Tensor*>> others) {
  if (!IsFloatingType(x.dtype())) return NotFloating(op, x.dtype());
  TSR_RETURN_IF_ERROR(RefuseHalf(op, x));
  for (const auto& [name, t] : others) {
    if (t->dtype() != x.dtype()) {
      return Invalid(
          op, absl::StrFormat("expected %s of dtype %s (%s's), got %s", name,
                              ScalarTypeName(x.dtype()), x_name, ScalarTypeName(t->dtype())));
    }
  }
  return absl::OkStatus();
}

// CheckShape: `t` (argument `name`) has the forward output's `shape`.
absl::Status CheckShape(const OperatorHandle& op, const char* name, const Tensor& t,
                        IntArrayRef shape) {
  if (SameDims(t.sizes(), shape)) return absl::OkStatus();
  return Invalid(op, absl::StrFormat("expected %s of shape %s (the forward's output), got %s", name,
                                     ShapeToString(shape), ShapeToString(t.sizes())));
}

absl::StatusOr<Tensor> Call(OpRegistry& r, std::string_view name, Stack args) {
  return CallOne(r, name, std::move(args));
}

// Terms: T(diff, g, d) of the note above, for diff [..., rows, r2, c] and g, d [..., rows, r2, 1].
absl::StatusOr<Tensor> Terms(OpRegistry& r, const Tensor& diff, const Tensor& g, const Tensor& d,
                             double p) {
  TSR_ASSIGN_OR_RETURN(Tensor sign, Call(r, "sign", {Value(diff)}));
  if (p == 1) return Call(r, "mul.Tensor", {Value(g), Value(sign)});
  TSR_ASSIGN_OR_RETURN(Tensor magnitude, Call(r, "abs", {Value(diff)}));
  if (std::isinf(p) && p > 0) {
    // g sign(diff) (1 - min(1, ceil(| |diff| - d |))): 1 where |diff| = d, 0 elsewhere.
    TSR_ASSIGN_OR_RETURN(Tensor gap,
                         Call(r, "sub.Tensor", {Value(magnitude), Value(d), Number(1)}));
    TSR_ASSIGN_OR_RETURN(gap, Call(r, "abs", {Value(gap)}));
    TSR_ASSIGN_OR_RETURN(gap, Call(r, "ceil", {Value(gap)}));
    TSR_ASSIGN_OR_RETURN(gap, Call(r, "clamp_max", {Value(gap), Number(1)}));
    TSR_ASSIGN_OR_RETURN(Tensor at_max, Call(r, "rsub.Scalar", {Value(gap), Number(1), Number(1)}));
    TSR_ASSIGN_OR_RETURN(Tensor t, Call(r, "mul.Tensor", {Value(g), Value(sign)}));
    return Call(r, "mul.Tensor", {Value(t), Value(at_max)});
  }
  Tensor t;
  if (p == 2) {
    TSR_ASSIGN_OR_RETURN(t, Call(r, "mul.Tensor", {Value(g), Value(diff)}));
    TSR_ASSIGN_OR_RETURN(t, Call(r, "div.Tensor", {Value(t), Value(d)}));
  } else {
    // p < 2: sign(diff) |diff|^(p-1) g / d^(p-1); otherwise diff |diff|^(p-2) g / d^(p-1).
    const bool below_two = p < 2;
    TSR_ASSIGN_OR_RETURN(Tensor power, Call(r, "pow.Tensor_Scalar",
                                            {Value(magnitude), Number(below_two ? p - 1 : p - 2)}));
    TSR_ASSIGN_OR_RETURN(t, Call(r, "mul.Tensor", {Value(below_two ? sign : diff), Value(power)}));
    TSR_ASSIGN_OR_RETURN(t, Call(r, "mul.Tensor", {Value(t), Value(g)}));
    TSR_ASSIGN_OR_RETURN(Tensor scale, Call(r, "pow.Tensor_Scalar", {Value(d), Number(p - 1)}));
    TSR_ASSIGN_OR_RETURN(t, Call(r, "div.Tensor", {Value(t), Value(scale)}));
  }
  TSR_ASSIGN_OR_RETURN(Tensor coincide, Call(r, "eq.Scalar", {Value(d), Number(0)}));
  TSR_ASSIGN_OR_RETURN(t, Call(r, "masked_fill.Scalar", {Value(t), Value(coincide), Number(0)}));
  if (p < 1) {
    TSR_ASSIGN_OR_RETURN(Tensor flat, Call(r, "eq.Scalar", {Value(diff), Number(0)}));
    TSR_ASSIGN_OR_RETURN(t, Call(r, "masked_fill.Scalar", {Value(t), Value(flat), Number(0)}));
  }
  return t;
}

// PairGradient: sum over j of T(x1[..., i, :] - x2[..., j, :], grad[..., i, j], dist[..., i, j])
// for x1 [..., r1, c], x2 [..., r2, c], grad and dist [..., r1, r2] (batch dims equal), into a
// new [..., r1, c]; every dim nonempty.
absl::StatusOr<Tensor> PairGradient(OpRegistry& r, const Tensor& x1, const Tensor& x2,
                                    const Tensor& grad, const Tensor& dist, double p) {
  const int64_t rows_dim = x1.dim() - 2;
  if (p == 0) return Zeros(r, x1.sizes(), x1.dtype(), x1.device());
  TSR_ASSIGN_OR_RETURN(Tensor out, EmptyOf(r, x1, x1.sizes()));
  const int64_t r1 = x1.sizes()[rows_dim];
  const int64_t block = RowBlock(x1, x2);
  TSR_ASSIGN_OR_RETURN(const Tensor columns, Unsqueeze(x2, rows_dim));  // [..., 1, r2, c]
  for (int64_t start = 0; start < r1; start += block) {
    const int64_t length = std::min(block, r1 - start);
    TSR_ASSIGN_OR_RETURN(Tensor part, Narrow(x1, rows_dim, start, length));
    TSR_ASSIGN_OR_RETURN(Tensor rows, Unsqueeze(part, rows_dim + 1));  // [..., len, 1, c]
    TSR_ASSIGN_OR_RETURN(Tensor diff,
                         Call(r, "sub.Tensor", {Value(rows), Value(columns), Number(1)}));
    TSR_ASSIGN_OR_RETURN(Tensor g, Narrow(grad, rows_dim, start, length));
    TSR_ASSIGN_OR_RETURN(g, Unsqueeze(g, rows_dim + 2));  // [..., len, r2, 1]
    TSR_ASSIGN_OR_RETURN(Tensor d, Narrow(dist, rows_dim, start, length));
    TSR_ASSIGN_OR_RETURN(d, Unsqueeze(d, rows_dim + 2));
    TSR_ASSIGN_OR_RETURN(Tensor terms, Terms(r, diff, g, d, p));
    TSR_ASSIGN_OR_RETURN(
        Tensor sums, Call(r, "sum.dim_IntList", {Value(terms), Value(IntList{-2}), Value(false)}));
    TSR_ASSIGN_OR_RETURN(Tensor into, Narrow(out, rows_dim, start, length));
    TSR_RETURN_IF_ERROR(Call(r, "copy_", {Value(into), Value(sums)}).status());
  }
  return out;
}

// _cdist_backward(grad, x1, x2, p, cdist)
absl::StatusOr<Tensor> CdistBackwardOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& grad = s[0].tensor();
  const Tensor& x1 = s[1].tensor();
  const Tensor& x2 = s[2].tensor();
  const double p = s[3].to_double();
  const Tensor& cdist = s[4].tensor();
  TSR_RETURN_IF_ERROR(CheckCdistRanks(op, x1, x2));
  TSR_RETURN_IF_ERROR(CheckDtypes(op, "x1", x1, {{"x2", &x2}, {"grad", &grad}, {"cdist", &cdist}}));
  TSR_ASSIGN_OR_RETURN(const CdistShapes shapes, CdistShapesOf(op, x1, x2));
  TSR_RETURN_IF_ERROR(CheckShape(op, "grad", grad, shapes.out));
  TSR_RETURN_IF_ERROR(CheckShape(op, "cdist", cdist, shapes.out));
  OpRegistry& r = op.registry();
  // Nothing to differentiate: zeros of x1's own shape, as ATen returns (zeros_like(x1)).
  if (grad.numel() == 0 || x1.sizes().back() == 0) {
    return Zeros(r, x1.sizes(), x1.dtype(), x1.device());
  }
  TSR_ASSIGN_OR_RETURN(const Tensor a, Expand(x1, shapes.x1));
  TSR_ASSIGN_OR_RETURN(const Tensor b, Expand(x2, shapes.x2));
  return PairGradient(r, a, b, grad, cdist, p);
}

// Symmetric: the pairs' values `v` ([n (n - 1) / 2], i < j row-major) at (i, j) and (j, i) of a
// zero [n, n].
absl::StatusOr<Tensor> Symmetric(OpRegistry& r, const Tensor& v, const Tensor& ij_index,
                                 const Tensor& ji_index, int64_t n) {
  TSR_ASSIGN_OR_RETURN(Tensor m, Zeros(r, {n * n}, v.dtype(), v.device()));
  TSR_ASSIGN_OR_RETURN(
      m, Call(r, "index_add", {Value(m), Value(int64_t{0}), Value(ij_index), Value(v), Number(1)}));
  TSR_ASSIGN_OR_RETURN(
      m, Call(r, "index_add", {Value(m), Value(int64_t{0}), Value(ji_index), Value(v), Number(1)}));
  return Call(r, "reshape", {Value(m), Value(IntList{n, n})});
}

// _pdist_backward(grad, self, p, pdist)
absl::StatusOr<Tensor> PdistBackwardOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& grad = s[0].tensor();
  const Tensor& self = s[1].tensor();
  const double p = s[2].to_double();
  const Tensor& pdist = s[3].tensor();
  if (self.dim() != 2) {
    return Invalid(op, absl::StrFormat("pdist only supports 2D tensors, got: %dD", self.dim()));
  }
  TSR_RETURN_IF_ERROR(CheckDtypes(op, "self", self, {{"grad", &grad}, {"pdist", &pdist}}));
  const int64_t n = self.sizes()[0], m = self.sizes()[1];
  const int64_t pairs = std::max<int64_t>(n * (n - 1) / 2, 0);
  TSR_RETURN_IF_ERROR(CheckShape(op, "grad", grad, {pairs}));
  TSR_RETURN_IF_ERROR(CheckShape(op, "pdist", pdist, {pairs}));
  OpRegistry& r = op.registry();
  // No pair, or no component: zeros (ATen's kernel fills the result with 0 first; with no rows
  // at all it reads past the input, where this gives the empty result).
  if (pairs == 0 || m == 0 || p == 0) return Zeros(r, self.sizes(), self.dtype(), self.device());
  TSR_ASSIGN_OR_RETURN(Tensor pairs_ij,
                       Call(r, "triu_indices",
                            {Value(n), Value(n), Value(int64_t{1}), Value(ScalarType::kInt64),
                             Value(std::nullopt), Value(self.device())}));
  TSR_ASSIGN_OR_RETURN(Tensor i, Select(pairs_ij, 0, 0));
  TSR_ASSIGN_OR_RETURN(Tensor j, Select(pairs_ij, 0, 1));
  TSR_ASSIGN_OR_RETURN(Tensor ij_index,
                       Call(r, "add.Tensor", {Value(j), Value(i), Value(Scalar(n))}));
  TSR_ASSIGN_OR_RETURN(Tensor ji_index,
                       Call(r, "add.Tensor", {Value(i), Value(j), Value(Scalar(n))}));
  TSR_ASSIGN_OR_RETURN(Tensor g, Symmetric(r, grad, ij_index, ji_index, n));
  TSR_ASSIGN_OR_RETURN(Tensor d, Symmetric(r, pdist, ij_index, ji_index, n));
  return PairGradient(r, self, self, g, d, p);
}

}  // namespace

absl::Status DefineDistanceBackwardOps(OpRegistry& registry) {
  return DefineAll(
      registry,
      {
          {"_cdist_backward(Tensor grad, Tensor x1, Tensor x2, float p, Tensor cdist) -> Tensor",
           MakeKernel<Named<ComputeOne<CdistBackwardOf>>>("core::cdist_backward")},
          // Out= forms ATen generates (autogen): the result copied in, cast as copy_ casts it.
          {"_cdist_backward.out(Tensor grad, Tensor x1, Tensor x2, float p, Tensor cdist, *, "
           "Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<CdistBackwardOf, 5, /*kCastable=*/true>>>(
               "core::cdist_backward_out")},
          {"_pdist_backward(Tensor grad, Tensor self, float p, Tensor pdist) -> Tensor",
           MakeKernel<Named<ComputeOne<PdistBackwardOf>>>("core::pdist_backward")},
          {"_pdist_backward.out(Tensor grad, Tensor self, float p, Tensor pdist, *, Tensor(a!) "
           "out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<PdistBackwardOf, 4, /*kCastable=*/true>>>(
               "core::pdist_backward_out")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera

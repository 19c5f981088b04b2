// Op set 1.9's scans, composites so every backend has them: cummax and cummin (running extreme
// and where it was) and logcumsumexp (running log-sum-exp).
//
// Each is a prefix scan of an associative combine, computed by doubling (Hillis-Steele): after
// the step of span s, element i holds the combine of elements (i - 2s, i]; log2(n) steps, each a
// few whole-tensor ops along the dim (narrow, the combine, cat). The combines are ATen's
// (ReduceOps.cpp, cpu/LogcumsumexpKernel):
//   - cummax: the later element wins where it is NaN, or where neither is NaN and it is >= the
//     earlier one (so ties and NaN take the latest index, as ATen's loop does); cummin with <=.
//     This is the maximum under a total order (NaN above all, then value, then index), so it is
//     associative and the doubling gives the loop's answer exactly.
//   - logcumsumexp: logaddexp (infinities of one sign and NaN as ATen's), in float32 for the
//     16-bit floats (Opmath), rounded once.
#include "absl/strings/str_format.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {
namespace {

// A scan's running state: the values, and for cummax/cummin where each came from.
struct Running {
  Tensor values;
  Tensor indices;  // undefined for logcumsumexp
};

// Combine: the state of (earlier, later) pairs, elementwise.
using Combine = absl::StatusOr<Running> (*)(OpRegistry& r, const Running& earlier,
                                            const Running& later, bool max);

absl::StatusOr<Running> Narrowed(const Running& s, int64_t dim, int64_t start, int64_t length) {
  Running out;
  TSR_ASSIGN_OR_RETURN(out.values, Narrow(s.values, dim, start, length));
  if (s.indices.defined()) {
    TSR_ASSIGN_OR_RETURN(out.indices, Narrow(s.indices, dim, start, length));
  }
  return out;
}

absl::StatusOr<Tensor> Cat(OpRegistry& r, const Tensor& a, const Tensor& b, int64_t dim) {
  return CallOne(r, "cat", {Value(std::vector<Tensor>{a, b}), Value(dim)});
}

// Scan: the running combine of `start` along `dim` (size n > 0), by doubling.
absl::StatusOr<Running> Scan(OpRegistry& r, Running state, int64_t dim, Combine combine, bool max) {
  const int64_t n = state.values.sizes()[dim];
  for (int64_t span = 1; span < n; span *= 2) {
    TSR_ASSIGN_OR_RETURN(Running head, Narrowed(state, dim, 0, span));
    TSR_ASSIGN_OR_RETURN(Running earlier, Narrowed(state, dim, 0, n - span));
    TSR_ASSIGN_OR_RETURN(Running later, Narrowed(state, dim, span, n - span));
    TSR_ASSIGN_OR_RETURN(Running combined, combine(r, earlier, later, max));
    Running next;
    TSR_ASSIGN_OR_RETURN(next.values, Cat(r, head.values, combined.values, dim));
    if (state.indices.defined()) {
      TSR_ASSIGN_OR_RETURN(next.indices, Cat(r, head.indices, combined.indices, dim));
    }
    state = std::move(next);
  }
  return state;
}

// ---- cummax / cummin ----

absl::StatusOr<Running> Extreme(OpRegistry& r, const Running& earlier, const Running& later,
                                bool max) {
  const Value a(earlier.values), b(later.values);
  // later wins: isnan(b) | (!isnan(a) & b >= a)   (<= for cummin)
  TSR_ASSIGN_OR_RETURN(Tensor b_nan, CallOne(r, "isnan", {b}));
  TSR_ASSIGN_OR_RETURN(Tensor a_nan, CallOne(r, "isnan", {a}));
  TSR_ASSIGN_OR_RETURN(Tensor a_number, CallOne(r, "logical_not", {Value(a_nan)}));
  TSR_ASSIGN_OR_RETURN(Tensor reaches, CallOne(r, max ? "ge.Tensor" : "le.Tensor", {b, a}));
  TSR_ASSIGN_OR_RETURN(Tensor beats, CallOne(r, "logical_and", {Value(a_number), Value(reaches)}));
  TSR_ASSIGN_OR_RETURN(Tensor later_wins, CallOne(r, "logical_or", {Value(b_nan), Value(beats)}));
  Running out;
  TSR_ASSIGN_OR_RETURN(out.values, CallOne(r, "where.self", {Value(later_wins), b, a}));
  TSR_ASSIGN_OR_RETURN(
      out.indices,
      CallOne(r, "where.self", {Value(later_wins), Value(later.indices), Value(earlier.indices)}));
  return out;
}

template <bool kMax>
TensorsOr CumExtremeOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  TSR_ASSIGN_OR_RETURN(const int64_t dim, WrapDim(s[1].to_int(), self.dim(), op.name()));
  Running state;
  TSR_ASSIGN_OR_RETURN(state.values,
                       CallOne(r, "clone", {Value(self), Value(kMemoryFormatContiguous)}));
  if (self.dim() == 0 || self.numel() == 0) {
    TSR_ASSIGN_OR_RETURN(Tensor zeros, Zeros(r, self.sizes(), ScalarType::kInt64, self.device()));
    return std::vector<Tensor>{state.values, zeros};
  }
  // Each element starts as its own extreme, at its own index along dim.
  const int64_t n = self.sizes()[dim];
  TSR_ASSIGN_OR_RETURN(Tensor positions, CallOne(r, "arange",
                                                 {Value(Scalar(n)), Value(ScalarType::kInt64),
                                                  Value(std::nullopt), Value(self.device())}));
  DimVector along(self.dim(), 1);
  along[dim] = n;
  TSR_ASSIGN_OR_RETURN(Tensor laid, View(positions, along));
  TSR_ASSIGN_OR_RETURN(state.indices, Expand(laid, self.sizes()));
  TSR_ASSIGN_OR_RETURN(Running result, Scan(r, std::move(state), dim, &Extreme, kMax));
  // The first step's cat makes the indices a tensor of their own (n > 1); with n == 1 they are
  // still the expanded arange.
  if (n == 1) {
    TSR_ASSIGN_OR_RETURN(
        result.indices,
        CallOne(r, "clone", {Value(result.indices), Value(kMemoryFormatContiguous)}));
  }
  return std::vector<Tensor>{result.values, result.indices};
}

// ---- logcumsumexp ----

absl::StatusOr<Running> LogAddExp(OpRegistry& r, const Running& earlier, const Running& later,
                                  bool) {
  Running out;
  TSR_ASSIGN_OR_RETURN(out.values,
                       CallOne(r, "logaddexp", {Value(earlier.values), Value(later.values)}));
  return out;
}

absl::StatusOr<Tensor> LogCumSumExpOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  TSR_ASSIGN_OR_RETURN(const int64_t dim, WrapDim(s[1].to_int(), self.dim(), op.name()));
  if (!IsFloatingType(self.dtype())) return NotFloating(op, self.dtype());
  const Opmath math(self.dtype());
  TSR_ASSIGN_OR_RETURN(Value x, math.In(r, s[0]));
  Running state;
  TSR_ASSIGN_OR_RETURN(state.values, CallOne(r, "clone", {x, Value(kMemoryFormatContiguous)}));
  if (self.dim() > 0 && self.numel() > 0) {
    TSR_ASSIGN_OR_RETURN(state, Scan(r, std::move(state), dim, &LogAddExp, false));
  }
  return math.Out(r, std::move(state.values));
}

}  // namespace

absl::Status DefineScanComposites(OpRegistry& registry) {
  return DefineAll(
      registry,
      {
          {"cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)",
           MakeKernel<Named<CumExtremeOf<true>>>("core::cummax")},
          {"cummax.out(Tensor self, int dim, *, Tensor(a!) values, Tensor(b!) indices) -> "
           "(Tensor(a!) values, Tensor(b!) indices)",
           MakeKernel<Named<ComputeIntoOuts<CumExtremeOf<true>, 2, 2>>>("core::cummax_out")},
          {"cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)",
           MakeKernel<Named<CumExtremeOf<false>>>("core::cummin")},
          {"cummin.out(Tensor self, int dim, *, Tensor(a!) values, Tensor(b!) indices) -> "
           "(Tensor(a!) values, Tensor(b!) indices)",
           MakeKernel<Named<ComputeIntoOuts<CumExtremeOf<false>, 2, 2>>>("core::cummin_out")},
          {"logcumsumexp(Tensor self, int dim) -> Tensor",
           MakeKernel<Named<ComputeOne<LogCumSumExpOf>>>("core::logcumsumexp")},
          {"logcumsumexp.out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<LogCumSumExpOf, 2>>>("core::logcumsumexp_out")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera

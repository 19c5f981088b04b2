// The GPU plugin's scans (cumsum, cumprod; Note [GPU scans] in scan.h) and the reductions max,
// min, any, all, logsumexp and norm (Note [GPU reductions] in reduce.h), as typed out= kernels:
// each checks its arguments, refuses a dtype without a kernel before launching, plans and
// queues the launch on the current stream of the output's device. The runtime derives the
// functional and in-place forms (and has run the op's meta function, which settles the output's
// shape and dtype: PyTorch's rules, dispatcher/ops/reduction_meta.cc).
#include "scan_reduce_ops.h"

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "gpu_device.h"
#include "op_support.h"
#include "scan.h"
#include "shape_text.h"
#include "tessera/sdk/dtypes.hpp"
#include "tessera/sdk/stream.hpp"

namespace tessera {
namespace gpu {
namespace {

namespace sdk = ::tessera::sdk;
using sdk::Scalar;
using sdk::Tensor;

std::string ShapeOf(const Tensor& t) { return ShapeText(t.sizes().vec()); }

// max / min over zero elements have no identity (PyTorch refuses them too).
void CheckNonEmpty(const char* op, const Tensor& self, const std::vector<bool>& reduced) {
  for (size_t d = 0; d < reduced.size(); ++d) {
    if (reduced[d] && self.sizes()[d] == 0) {
      sdk::fail(TSR_INVALID_ARGUMENT,
                std::string(op) + ": expected reduction dim " + std::to_string(d) +
                    " to have non-zero size, got input of shape " + ShapeOf(self));
    }
  }
}

// --- cumsum, cumprod ------------------------------------------------------------------------

// cumsum.out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) out); cumprod.out
// likewise. The input is read in out's dtype (which the runtime planned from `dtype`; integers
// and bool without one give int64).
template <ScanKind kKind>
Tensor CumulativeOut(const Tensor& self, int64_t dim, std::optional<tsr_dtype> /*dtype: out's*/,
                     const Tensor& out) {
  const char* op = kKind == ScanKind::kCumsum ? "cumsum.out" : "cumprod.out";
  const std::vector<bool> reduced = ReducedDims(op, self.dim(), {dim});
  if (out.sizes().vec() != self.sizes().vec()) {
    sdk::fail(TSR_INVALID_ARGUMENT, std::string(op) + ": expected 'out' of the input's shape " +
                                        ShapeOf(self) + ", got " + ShapeOf(out));
  }
  const ReducePlan plan = PlanReduce(op, self, out, reduced, false, /*write_reduced=*/true);
  if (plan.blocks == 0 || plan.reduced() == 0) return out;
  DeviceGuard guard(out.device().index);
  Check(op, LaunchScan(kKind, out.dtype(), plan, sdk::current_stream(out.device())));
  return out;
}

// --- max, min -------------------------------------------------------------------------------

// max.unary_out(Tensor self, *, Tensor(a!) out); min likewise: over every element, NaN wins.
template <bool kMax>
Tensor MaxAllOut(const Tensor& self, const Tensor& out) {
  const char* op = kMax ? "max.unary_out" : "min.unary_out";
  const std::vector<bool> reduced = ReducedDims(op, self.dim(), {});
  CheckNonEmpty(op, self, reduced);
  RunReduce(op, kMax ? ReduceKind::kAmax : ReduceKind::kAmin, self.dtype(), self, out, reduced,
            false);
  return out;
}

// max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) values, Tensor(b!)
// indices) -> (Tensor(a!) values, Tensor(b!) indices); min.dim_min likewise. The first index
// of the extremum, a NaN counting as the extremum (PyTorch's GreaterOrNan / LessOrNan).
template <bool kMax>
std::tuple<Tensor, Tensor> MaxDimOut(const Tensor& self, int64_t dim, bool keepdim,
                                     const Tensor& values, const Tensor& indices) {
  const char* op = kMax ? "max.dim_max" : "min.dim_min";
  const std::vector<bool> reduced = ReducedDims(op, self.dim(), {dim});
  CheckNonEmpty(op, self, reduced);
  if (values.dtype() != self.dtype() || indices.dtype() != TSR_DTYPE_INT64) {
    sdk::fail(TSR_INVALID_ARGUMENT,
              std::string(op) + ": expected 'values' of dtype " + sdk::dtype_name(self.dtype()) +
                  " and 'indices' of dtype int64, got " + sdk::dtype_name(values.dtype()) +
                  " and " + sdk::dtype_name(indices.dtype()));
  }
  if (values.sizes().vec() != indices.sizes().vec()) {
    sdk::fail(TSR_INVALID_ARGUMENT, std::string(op) +
                                        ": expected 'values' and 'indices' of one shape, got " +
                                        ShapeOf(values) + " and " + ShapeOf(indices));
  }
  RunReduce(op, kMax ? ReduceKind::kMaxDim : ReduceKind::kMinDim, self.dtype(), self, values,
            reduced, keepdim, 1, &indices);
  return {values, indices};
}

// --- any, all -------------------------------------------------------------------------------

// any.all_out(Tensor self, *, Tensor(a!) out); all.all_out likewise: out is bool (uint8 for a
// uint8 input, as PyTorch).
template <bool kAny>
Tensor AnyAllOut(const Tensor& self, const Tensor& out) {
  const char* op = kAny ? "any.all_out" : "all.all_out";
  RunReduce(op, kAny ? ReduceKind::kAny : ReduceKind::kAll, self.dtype(), self, out,
            ReducedDims(op, self.dim(), {}), false);
  return out;
}
// any.out(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) out); all.out likewise.
template <bool kAny>
Tensor AnyDimOut(const Tensor& self, int64_t dim, bool keepdim, const Tensor& out) {
  const char* op = kAny ? "any.out" : "all.out";
  RunReduce(op, kAny ? ReduceKind::kAny : ReduceKind::kAll, self.dtype(), self, out,
            ReducedDims(op, self.dim(), {dim}), keepdim);
  return out;
}

// --- logsumexp, norm ------------------------------------------------------------------------

// logsumexp.out(Tensor self, int[1] dim, bool keepdim=False, *, Tensor(a!) out): computed in
// out's dtype (float32 for an integer input), dim=[] over every dimension.
Tensor LogSumExpOut(const Tensor& self, sdk::IntSpan dim, bool keepdim, const Tensor& out) {
  const char* op = "logsumexp.out";
  RunReduce(op, ReduceKind::kLogSumExp, out.dtype(), self, out,
            ReducedDims(op, self.dim(), dim.vec()), keepdim);
  return out;
}

// norm.out(Tensor self, Scalar? p, int[1] dim, bool keepdim=False, *, Tensor(a!) out): p
// defaults to 2; floating inputs only (the meta function refuses the others).
Tensor NormOut(const Tensor& self, std::optional<Scalar> p, sdk::IntSpan dim, bool keepdim,
               const Tensor& out) {
  const char* op = "norm.out";
  RunReduce(op, ReduceKind::kNorm, self.dtype(), self, out, ReducedDims(op, self.dim(), dim.vec()),
            keepdim, p ? p->to_double() : 2.0);
  return out;
}

// --- reductions and softmax (reduce.h, kernels_reduce.cu; Note [GPU reductions]) -----------

std::vector<int64_t> DimsOf(const std::optional<sdk::IntSpan>& dim) {
  return dim ? dim->vec() : std::vector<int64_t>{};
}

// sum / mean / prod: the input is read in the output's dtype (the meta function resolved
// `dtype` into it).
Tensor SumOut(const Tensor& self, std::optional<tsr_dtype> /*dtype: out's*/, const Tensor& out) {
  RunReduce("sum.out", ReduceKind::kSum, out.dtype(), self, out,
            ReducedDims("sum.out", self.dim(), {}), false);
  return out;
}
Tensor SumDimOut(const Tensor& self, std::optional<sdk::IntSpan> dim, bool keepdim,
                 std::optional<tsr_dtype> /*dtype: out's*/, const Tensor& out) {
  const char* op = "sum.IntList_out";
  RunReduce(op, ReduceKind::kSum, out.dtype(), self, out, ReducedDims(op, self.dim(), DimsOf(dim)),
            keepdim);
  return out;
}
Tensor MeanOut(const Tensor& self, std::optional<tsr_dtype> /*dtype: out's*/, const Tensor& out) {
  RunReduce("mean.dtype_out", ReduceKind::kMean, out.dtype(), self, out,
            ReducedDims("mean.dtype_out", self.dim(), {}), false);
  return out;
}
Tensor MeanDimOut(const Tensor& self, std::optional<sdk::IntSpan> dim, bool keepdim,
                  std::optional<tsr_dtype> /*dtype: out's*/, const Tensor& out) {
  const char* op = "mean.out";
  RunReduce(op, ReduceKind::kMean, out.dtype(), self, out, ReducedDims(op, self.dim(), DimsOf(dim)),
            keepdim);
  return out;
}
Tensor ProdOut(const Tensor& self, std::optional<tsr_dtype> /*dtype: out's*/, const Tensor& out) {
  RunReduce("prod.out", ReduceKind::kProd, out.dtype(), self, out,
            ReducedDims("prod.out", self.dim(), {}), false);
  return out;
}
Tensor ProdDimOut(const Tensor& self, int64_t dim, bool keepdim,
                  std::optional<tsr_dtype> /*dtype: out's*/, const Tensor& out) {
  const char* op = "prod.int_out";
  RunReduce(op, ReduceKind::kProd, out.dtype(), self, out, ReducedDims(op, self.dim(), {dim}),
            keepdim);
  return out;
}

// amax.out / amin.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out)
template <bool kMax>
Tensor AmaxOut(const Tensor& self, sdk::IntSpan dim, bool keepdim, const Tensor& out) {
  const char* op = kMax ? "amax.out" : "amin.out";
  RunReduce(op, kMax ? ReduceKind::kAmax : ReduceKind::kAmin, self.dtype(), self, out,
            ReducedDims(op, self.dim(), dim.vec()), keepdim);
  return out;
}

// argmax.out / argmin.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out):
// dim=None counts indices in the flattened input.
template <bool kMax>
Tensor ArgmaxOut(const Tensor& self, std::optional<int64_t> dim, bool keepdim, const Tensor& out) {
  const char* op = kMax ? "argmax.out" : "argmin.out";
  std::vector<int64_t> dims;
  if (dim) dims.push_back(*dim);
  RunReduce(op, kMax ? ReduceKind::kArgmax : ReduceKind::kArgmin, self.dtype(), self, out,
            ReducedDims(op, self.dim(), dims), keepdim);
  return out;
}

// var.correction_out / std.correction_out(Tensor self, int[1]? dim=None, *, Scalar?
// correction=None, bool keepdim=False, Tensor(a!) out)
template <bool kStd>
Tensor VarOut(const Tensor& self, std::optional<sdk::IntSpan> dim, std::optional<Scalar> correction,
              bool keepdim, const Tensor& out) {
  const char* op = kStd ? "std.correction_out" : "var.correction_out";
  RunReduce(op, kStd ? ReduceKind::kStd : ReduceKind::kVar, self.dtype(), self, out,
            ReducedDims(op, self.dim(), DimsOf(dim)), keepdim,
            correction ? correction->to_double() : 1.0);
  return out;
}

// _softmax.out / _log_softmax.out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out):
// computed in float (double for float64), written in out's dtype (float32 when half_to_float).
template <bool kLog>
Tensor SoftmaxOut(const Tensor& self, int64_t dim, bool /*half_to_float: out's dtype*/,
                  const Tensor& out) {
  const char* op = kLog ? "_log_softmax.out" : "_softmax.out";
  RunReduce(op, kLog ? ReduceKind::kLogSoftmax : ReduceKind::kSoftmax, self.dtype(), self, out,
            ReducedDims(op, self.dim(), {dim}), true);
  return out;
}

}  // namespace

void RegisterScanReduceOps(sdk::Library& lib) {
  lib.impl<&SumOut>(TESSERA_OP("sum.out"));
  lib.impl<&SumDimOut>(TESSERA_OP("sum.IntList_out"));
  lib.impl<&MeanOut>(TESSERA_OP("mean.dtype_out"));
  lib.impl<&MeanDimOut>(TESSERA_OP("mean.out"));
  lib.impl<&ProdOut>(TESSERA_OP("prod.out"));
  lib.impl<&ProdDimOut>(TESSERA_OP("prod.int_out"));
  lib.impl<&AmaxOut<true>>(TESSERA_OP("amax.out"));
  lib.impl<&AmaxOut<false>>(TESSERA_OP("amin.out"));
  lib.impl<&ArgmaxOut<true>>(TESSERA_OP("argmax.out"));
  lib.impl<&ArgmaxOut<false>>(TESSERA_OP("argmin.out"));
  lib.impl<&VarOut<false>>(TESSERA_OP("var.correction_out"));
  lib.impl<&VarOut<true>>(TESSERA_OP("std.correction_out"));
  lib.impl<&SoftmaxOut<false>>(TESSERA_OP("_softmax.out"));
  lib.impl<&SoftmaxOut<true>>(TESSERA_OP("_log_softmax.out"));
  lib.impl<&CumulativeOut<ScanKind::kCumsum>>(TESSERA_OP("cumsum.out"));
  lib.impl<&CumulativeOut<ScanKind::kCumprod>>(TESSERA_OP("cumprod.out"));
  lib.impl<&MaxAllOut<true>>(TESSERA_OP("max.unary_out"));
  lib.impl<&MaxAllOut<false>>(TESSERA_OP("min.unary_out"));
  lib.impl<&MaxDimOut<true>>(TESSERA_OP("max.dim_max"));
  lib.impl<&MaxDimOut<false>>(TESSERA_OP("min.dim_min"));
  lib.impl<&AnyAllOut<true>>(TESSERA_OP("any.all_out"));
  lib.impl<&AnyDimOut<true>>(TESSERA_OP("any.out"));
  lib.impl<&AnyAllOut<false>>(TESSERA_OP("all.all_out"));
  lib.impl<&AnyDimOut<false>>(TESSERA_OP("all.out"));
  lib.impl<&LogSumExpOut>(TESSERA_OP("logsumexp.out"));
  lib.impl<&NormOut>(TESSERA_OP("norm.out"));
}

}  // namespace gpu
}  // namespace tessera

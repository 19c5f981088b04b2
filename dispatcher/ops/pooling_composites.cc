// Op set 1.9's pooling ops, as runtime composites over the native 2-D pooling ops, so that
// every backend has them: 1-D pooling (avg_pool1d, max_pool1d, max_pool1d_with_indices,
// adaptive_avg_pool1d, adaptive_max_pool1d) as ATen writes them, over the 2-D ops with a
// unit row; 3-D pooling (avg_pool3d, max_pool3d, max_pool3d_with_indices) as two passes of the
// 2-D ops; adaptive pooling (adaptive_avg_pool2d/3d, _adaptive_avg_pool2d/3d,
// adaptive_max_pool2d/3d) one spatial dim at a time; max_unpool2d/3d as a scatter. Checks and
// messages are ATen's (Pool.h's pool3d_shape_check, MaxPooling.h's check_max_pool1d,
// AdaptiveAveragePooling*.cpp, AdaptiveMaxPooling*.cpp, MaxUnpooling.cpp).
//
// Note [Pooling one spatial dim at a time]
// Both kinds of pooling are separable over the spatial dims:
//   average: a window is a box, and its divisor a product of one factor per dim (ATen's
//     divisor_override, or the window clipped to the padded input, or to the input), so
//     summing dim by dim and dividing once by the product gives ATen's average.
//   max with indices: ATen's kernels scan a window in row-major order and let a value take the
//     place when `val > maxval || isnan(val)`: the first maximum in scan order, or the last NaN.
//     Reducing the last dim first and then each earlier dim over the survivors with the same
//     rule picks the same element: without NaN, the first row holding the maximum and its first
//     maximum; with NaN, the last row holding a NaN and its last NaN. The flat index is built
//     as position * (size of the dims after it) + the index kept so far, read at the position.
// max_pool3d is then max_pool2d_with_indices over (H, W) and again over (D, 1); avg_pool3d is
// avg_pool2d summing (divisor_override 1) over (H, W) and over (D, 1), divided by the host-made
// divisors. Adaptive windows vary in length (start = floor(i * in / out), end = ceil((i + 1) *
// in / out)): each output's window is gathered into K slots (K the longest window; the spare
// slots read an element appended to the dim, 0 for sums and -inf for maxima, which never takes
// the place of a window's first element), then summed or max-pooled K at a time. Averages of
// 16-bit floats are computed in float32 and rounded once (Opmath), as ATen's kernels accumulate.
#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/numeric/int128.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/dtype.h"
#include "core/host_copy.h"
#include "core/scalar.h"
#include "core/shape.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"
#include "dispatcher/ops/index_support.h"

namespace tessera {
namespace ops {
namespace {

using Out = absl::StatusOr<std::vector<Tensor>>;
using Wide = absl::int128;

// ---- helpers ----

absl::StatusOr<Tensor> Reshape(OpRegistry& r, const Tensor& t, IntList shape) {
  return CallOne(r, "reshape", {Value(t), Value(std::move(shape))});
}

// Calls an op with two tensor returns.
absl::StatusOr<std::pair<Tensor, Tensor>> CallTwo(OpRegistry& r, std::string_view name,
                                                  Stack args) {
  TSR_ASSIGN_OR_RETURN(OperatorHandle h, r.Find(name));
  TSR_RETURN_IF_ERROR(r.Call(h, &args));
  return std::make_pair(args[0].tensor(), args[1].tensor());
}

// HostTable: `values` (int64_t, float or double) as a 1-D tensor of `dtype` on `device`.
// Meta tensors hold no values: there it is only allocated.
template <typename T>
absl::StatusOr<Tensor> HostTable(const std::vector<T>& values, ScalarType dtype, Device device) {
  TSR_ASSIGN_OR_RETURN(Tensor t, Empty({static_cast<int64_t>(values.size())}, dtype, device));
  if (device.type != DeviceType::kMeta && !values.empty()) {
    TSR_RETURN_IF_ERROR(CopyHostToTensor(values.data(), t));
  }
  return t;
}

// A table of divisors or lengths in `dtype` (float32, float64 or int64).
absl::StatusOr<Tensor> NumberTable(const std::vector<double>& values, ScalarType dtype,
                                   Device device) {
  if (dtype == ScalarType::kFloat64) return HostTable(values, dtype, device);
  if (dtype == ScalarType::kInt64) {
    std::vector<int64_t> v;
    for (double d : values) v.push_back(static_cast<int64_t>(d));
    return HostTable(v, dtype, device);
  }
  std::vector<float> v(values.begin(), values.end());
  return HostTable(v, ScalarType::kFloat32, device);
}

// Divide: a / b, truncating toward zero for int64 (ATen's integer average pooling).
absl::StatusOr<Tensor> Divide(OpRegistry& r, const Tensor& a, const Tensor& b) {
  if (a.dtype() == ScalarType::kInt64) {
    return CallOne(r, "div.Tensor_mode", {Value(a), Value(b), Value("trunc")});
  }
  return CallOne(r, "div.Tensor", {Value(a), Value(b)});
}

std::string JoinSizes(IntArrayRef v) { return absl::StrJoin(v, ", "); }

// The flat shape "a x b x c" of pool3d_shape_check's messages.
std::string Xs(std::initializer_list<int64_t> v) { return absl::StrJoin(v, "x"); }

// PooledSize: ATen's pooling_output_shape (div_rtn, the ceil_mode rule), in 128 bits.
Wide PooledSize(Wide in, Wide k, Wide pad, Wide stride, Wide dilation, bool ceil_mode) {
  const Wide span = in + 2 * pad - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : Wide(0));
  Wide q = span / stride;
  if ((span % stride != 0) && ((span < 0) != (stride < 0))) --q;  // round toward -inf
  Wide out = q + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// Checks of ATen's pooling_output_shape, in its order.
absl::Status CheckOutputShapeArgs(const OperatorHandle& op, int64_t k, int64_t pad, int64_t stride,
                                  int64_t dilation) {
  if (stride == 0) return Invalid(op, "stride should not be zero");
  if (pad < 0)
    return Invalid(op, absl::StrFormat("pad must be non-negative, but got pad: %d", pad));
  if (Wide(pad) > ((Wide(k) - 1) * dilation + 1) / 2) {
    return Invalid(op, absl::StrFormat("pad should be at most half of effective kernel size, but "
                                       "got pad=%d, kernel_size=%d and dilation=%d",
                                       pad, k, dilation));
  }
  return absl::OkStatus();
}

// ---- 3-D pooling ----

struct Pool3d {
  std::array<int64_t, 3> k, stride, pad, dilation;
  bool ceil_mode = false;
  std::array<int64_t, 3> in, out;
};

// Pool3dArgs: max_pool3d's / avg_pool3d's argument checks and output sizes (ATen's meta
// functions and pool3d_shape_check). `is_max`: max_pool3d (dilation, its messages).
absl::StatusOr<Pool3d> Pool3dArgs(const OperatorHandle& op, const Stack& s, bool is_max) {
  const Tensor& in = s[0].tensor();
  const std::string fn = is_max ? "max_pool3d" : "avg_pool3d";
  IntArrayRef k = s[1].int_list(), st = s[2].int_list(), pd = s[3].int_list();
  if (k.size() != 1 && k.size() != 3) {
    return Invalid(op, is_max ? "max_pool3d: kernel_size must either be a single int, or a tuple "
                                "of three ints"
                              : "avg_pool3d: kernel_size must be a single int, or a tuple of "
                                "three ints");
  }
  if (!st.empty() && st.size() != 1 && st.size() != 3) {
    return Invalid(op, is_max ? "max_pool3d: stride must either be omitted, a single int, or a "
                                "tuple of three ints"
                              : "avg_pool3d: stride must be omitted, a single int, or a tuple of "
                                "three ints");
  }
  if (pd.size() != 1 && pd.size() != 3) {
    return Invalid(op, is_max ? "max_pool3d: padding must be either be a single int, or a tuple "
                                "of three ints"
                              : "avg_pool3d: padding must be a single int, or a tuple of three "
                                "ints");
  }
  Pool3d p;
  for (int i = 0; i < 3; ++i) {
    p.k[i] = k.size() == 1 ? k[0] : k[i];
    p.stride[i] = st.empty() ? p.k[i] : st.size() == 1 ? st[0] : st[i];
    p.pad[i] = pd.size() == 1 ? pd[0] : pd[i];
    p.dilation[i] = 1;
  }
  if (is_max) {
    IntArrayRef dl = s[4].int_list();
    if (dl.size() != 1 && dl.size() != 3) {
      return Invalid(op,
                     "max_pool3d: dilation must be either a single int, or a tuple of three "
                     "ints");
    }
    for (int i = 0; i < 3; ++i) p.dilation[i] = dl.size() == 1 ? dl[0] : dl[i];
    p.ceil_mode = s[5].to_bool();
  } else {
    p.ceil_mode = s[4].to_bool();
  }
  if (in.dim() != 4 && in.dim() != 5) {
    return Invalid(op, "non-empty 4D or 5D (batch mode) tensor expected for input");
  }
  if (!is_max && !s[6].is_none() && s[6].to_int() == 0) {
    return Invalid(op, "divisor must be not zero");
  }
  for (int i = 0; i < 3; ++i) p.in[i] = in.sizes()[in.dim() - 3 + i];
  std::array<Wide, 3> out;
  for (int i = 0; i < 3; ++i) {
    TSR_RETURN_IF_ERROR(CheckOutputShapeArgs(op, p.k[i], p.pad[i], p.stride[i], p.dilation[i]));
    out[i] = PooledSize(p.in[i], p.k[i], p.pad[i], p.stride[i], p.dilation[i], p.ceil_mode);
  }
  // pool3d_shape_check
  if (p.k[0] <= 0 || p.k[1] <= 0 || p.k[2] <= 0) {
    return Invalid(op, absl::StrFormat("kernel size should be greater than zero, but got kT: %d "
                                       "kH: %d kW: %d",
                                       p.k[0], p.k[1], p.k[2]));
  }
  if (p.stride[0] <= 0 || p.stride[1] <= 0 || p.stride[2] <= 0) {
    return Invalid(op, absl::StrFormat("stride should be greater than zero, but got dT: %d dH: %d "
                                       "dW: %d",
                                       p.stride[0], p.stride[1], p.stride[2]));
  }
  if (p.dilation[0] <= 0 || p.dilation[1] <= 0 || p.dilation[2] <= 0) {
    return Invalid(op, absl::StrFormat("dilation should be greater than zero, but got dilationT: "
                                       "%d dilationH: %d dilationW: %d",
                                       p.dilation[0], p.dilation[1], p.dilation[2]));
  }
  const std::string fn_name =
      is_max ? "max_pool3d_with_indices_out_cpu_template()" : "avg_pool3d()";
  for (int64_t i = in.dim() == 5 ? 1 : 0; i < in.dim(); ++i) {
    if (in.sizes()[i] > 0) continue;
    // ATen prints the dimension's length where it means its index.
    return Invalid(op, absl::StrFormat("%s: Expected input's non-batch dimensions to have "
                                       "positive length, but input has a shape of %s and "
                                       "non-batch dimension %d has length zero!",
                                       fn_name, ShapeToString(in.sizes()), in.sizes()[i]));
  }
  if (!is_max && (p.in[0] < p.k[0] || p.in[1] < p.k[1] || p.in[2] < p.k[2])) {
    return Invalid(op, absl::StrFormat("input image (T: %d H: %d W: %d) smaller than kernel size "
                                       "(kT: %d kH: %d kW: %d)",
                                       p.in[0], p.in[1], p.in[2], p.k[0], p.k[1], p.k[2]));
  }
  if (p.k[0] / 2 < p.pad[0] || p.k[2] / 2 < p.pad[2] || p.k[1] / 2 < p.pad[1]) {
    auto eff = [&](int i) { return (Wide(p.k[i]) - 1) * p.dilation[i] + 1; };
    return Invalid(op, absl::StrFormat("pad should be smaller than or equal to half of effective "
                                       "kernel size, but got padT: %d padW: %d padH: %d "
                                       "effectiveKT: %d effectiveKW: %d effectiveKH: %d",
                                       p.pad[0], p.pad[2], p.pad[1], static_cast<int64_t>(eff(0)),
                                       static_cast<int64_t>(eff(2)), static_cast<int64_t>(eff(1))));
  }
  const int64_t nslices = in.sizes()[in.dim() - 4];
  if (out[0] < 1 || out[1] < 1 || out[2] < 1) {
    return Invalid(
        op, absl::StrFormat("Given input size: (%s). Calculated output size: (%s). "
                            "Output size is too small",
                            Xs({nslices, p.in[0], p.in[1], p.in[2]}),
                            Xs({nslices, static_cast<int64_t>(out[0]), static_cast<int64_t>(out[1]),
                                static_cast<int64_t>(out[2])})));
  }
  for (int i = 0; i < 3; ++i) p.out[i] = static_cast<int64_t>(out[i]);
  return p;
}

// max_pool3d_with_indices(self, kernel_size, stride=[], padding=0, dilation=1, ceil_mode=False)
// Note [Pooling one spatial dim at a time]
Out MaxPool3dWithIndices(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(const Pool3d p, Pool3dArgs(op, s, /*is_max=*/true));
  Tensor x = s[0].tensor();
  if (!IsFloatingType(x.dtype())) return NotFloating(op, x.dtype());
  const bool batched = x.dim() == 5;
  const int64_t n = batched ? x.sizes()[0] : 1, c = x.sizes()[x.dim() - 4];
  const auto [d, h, w] = p.in;
  const auto [od, oh, ow] = p.out;
  // (H, W): [N, C * D, H, W] -> [N, C * D, OH, OW], indices h * W + w.
  TSR_ASSIGN_OR_RETURN(Tensor planes, Reshape(r, x, {n, c * d, h, w}));
  TSR_ASSIGN_OR_RETURN(
      auto hw,
      CallTwo(r, "max_pool2d_with_indices",
              {Value(planes), Value(IntList{p.k[1], p.k[2]}),
               Value(IntList{p.stride[1], p.stride[2]}), Value(IntList{p.pad[1], p.pad[2]}),
               Value(IntList{p.dilation[1], p.dilation[2]}), Value(p.ceil_mode)}));
  // (D, 1) over [N, C, D, OH * OW]: indices d * OH * OW + j.
  TSR_ASSIGN_OR_RETURN(Tensor rows, Reshape(r, hw.first, {n, c, d, oh * ow}));
  TSR_ASSIGN_OR_RETURN(
      auto dd,
      CallTwo(r, "max_pool2d_with_indices",
              {Value(rows), Value(IntList{p.k[0], 1}), Value(IntList{p.stride[0], 1}),
               Value(IntList{p.pad[0], 0}), Value(IntList{p.dilation[0], 1}), Value(p.ceil_mode)}));
  // The flat index of each (d, j): d * H * W + the (H, W) pass's index there, read at the
  // (D, 1) pass's choice.
  std::vector<int64_t> depth_offset(static_cast<size_t>(d));
  for (int64_t i = 0; i < d; ++i) depth_offset[i] = i * h * w;
  TSR_ASSIGN_OR_RETURN(Tensor offsets, HostTable(depth_offset, ScalarType::kInt64, x.device()));
  TSR_ASSIGN_OR_RETURN(offsets, Reshape(r, offsets, {d, 1}));
  TSR_ASSIGN_OR_RETURN(Tensor hw_index, Reshape(r, hw.second, {n, c, d, oh * ow}));
  TSR_ASSIGN_OR_RETURN(
      Tensor flat, CallOne(r, "add.Tensor", {Value(hw_index), Value(offsets), Value(Scalar(1))}));
  TSR_ASSIGN_OR_RETURN(flat, Reshape(r, flat, {n, c, d * oh * ow}));
  TSR_ASSIGN_OR_RETURN(Tensor chosen, Reshape(r, dd.second, {n, c, od * oh * ow}));
  TSR_ASSIGN_OR_RETURN(
      Tensor index,
      CallOne(r, "gather", {Value(flat), Value(int64_t{2}), Value(chosen), Value(false)}));
  IntList shape = batched ? IntList{n, c, od, oh, ow} : IntList{c, od, oh, ow};
  TSR_ASSIGN_OR_RETURN(Tensor values, Reshape(r, dd.first, shape));
  TSR_ASSIGN_OR_RETURN(index, Reshape(r, index, shape));
  return std::vector<Tensor>{values, index};
}

Out MaxPool3d(const OperatorHandle& op, const Stack& s) {
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> both, MaxPool3dWithIndices(op, s));
  return std::vector<Tensor>{both[0]};
}

// AvgDivisors: ATen's avg_pool divisor of each output position along one dim (the divisor of a
// window is their product over the dims, or divisor_override).
std::vector<double> AvgDivisors(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t pad,
                                bool count_include_pad) {
  std::vector<double> v(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    int64_t start = o * stride - pad;
    int64_t end = std::min(start + k, in + pad);
    if (!count_include_pad) {
      start = std::max<int64_t>(start, 0);
      end = std::min(end, in);
    }
    v[o] = static_cast<double>(end - start);
  }
  return v;
}

// avg_pool3d(self, kernel_size, stride=[], padding=0, ceil_mode=False, count_include_pad=True,
// divisor_override=None). Note [Pooling one spatial dim at a time]. The floating types and
// int64 (summed in int64, divided with truncation toward zero), as ATen's CPU kernel.
absl::StatusOr<Tensor> AvgPool3dOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(const Pool3d p, Pool3dArgs(op, s, /*is_max=*/false));
  const Tensor& x = s[0].tensor();
  if (!IsFloatingType(x.dtype()) && x.dtype() != ScalarType::kInt64) {
    return NotFloating(op, x.dtype());
  }
  const bool count_include_pad = s[5].to_bool();
  const bool batched = x.dim() == 5;
  const int64_t n = batched ? x.sizes()[0] : 1, c = x.sizes()[x.dim() - 4];
  const auto [d, h, w] = p.in;
  const auto [od, oh, ow] = p.out;
  // The divisors are a host table of od * oh * ow: an output no device holds is refused first,
  // and an empty one computes nothing.
  const IntList out_shape = batched ? IntList{n, c, od, oh, ow} : IntList{c, od, oh, ow};
  TSR_RETURN_IF_ERROR(CheckOutputFits(r, x, out_shape));
  if (absl::c_linear_search(out_shape, 0)) return EmptyOf(r, x, out_shape);
  const Opmath opmath(x.dtype());
  TSR_ASSIGN_OR_RETURN(const Value in, opmath.In(r, s[0]));
  TSR_ASSIGN_OR_RETURN(Tensor planes, Reshape(r, in.tensor(), {n, c * d, h, w}));
  // Sums (divisor 1) over (H, W), then over (D, 1).
  TSR_ASSIGN_OR_RETURN(Tensor hw, CallOne(r, "avg_pool2d",
                                          {Value(planes), Value(IntList{p.k[1], p.k[2]}),
                                           Value(IntList{p.stride[1], p.stride[2]}),
                                           Value(IntList{p.pad[1], p.pad[2]}), Value(p.ceil_mode),
                                           Value(true), Value(int64_t{1})}));
  TSR_ASSIGN_OR_RETURN(Tensor rows, Reshape(r, hw, {n, c, d, oh * ow}));
  TSR_ASSIGN_OR_RETURN(
      Tensor sum,
      CallOne(r, "avg_pool2d",
              {Value(rows), Value(IntList{p.k[0], 1}), Value(IntList{p.stride[0], 1}),
               Value(IntList{p.pad[0], 0}), Value(p.ceil_mode), Value(true), Value(int64_t{1})}));
  std::vector<double> divisor;
  if (!s[6].is_none()) {
    divisor.assign(static_cast<size_t>(od * oh * ow), static_cast<double>(s[6].to_int()));
  } else {
    std::array<std::vector<double>, 3> f;
    for (int i = 0; i < 3; ++i) {
      f[i] = AvgDivisors(p.in[i], p.out[i], p.k[i], p.stride[i], p.pad[i], count_include_pad);
    }
    for (double a : f[0]) {
      for (double b : f[1]) {
        for (double cc : f[2]) divisor.push_back(a * b * cc);
      }
    }
  }
  TSR_ASSIGN_OR_RETURN(Tensor divisors, NumberTable(divisor, opmath.compute, x.device()));
  TSR_ASSIGN_OR_RETURN(divisors, Reshape(r, divisors, {od, oh * ow}));
  TSR_ASSIGN_OR_RETURN(Tensor avg, Divide(r, sum, divisors));
  TSR_ASSIGN_OR_RETURN(
      avg, Reshape(r, avg, batched ? IntList{n, c, od, oh, ow} : IntList{c, od, oh, ow}));
  return opmath.Out(r, std::move(avg));
}

// ---- 1-D pooling (ATen's composites over the 2-D ops) ----

// ATen's checkDimRange(name, self, 2, 4).
absl::Status CheckDims2To3(const OperatorHandle& op, const Tensor& t, const char* name) {
  if (t.dim() == 2 || t.dim() == 3) return absl::OkStatus();
  return Invalid(op, absl::StrFormat("Expected 2 to 3 dimensions, but got %d-dimensional tensor "
                                     "for argument #1 'self' (while checking arguments for %s)",
                                     t.dim(), name));
}

// ATen's check1d(name, arg, list).
absl::Status Check1d(const OperatorHandle& op, const char* name, const char* arg,
                     IntArrayRef list) {
  if (list.size() == 1) return absl::OkStatus();
  return Invalid(op, absl::StrFormat("%s() argument '%s' should contain one int (got %d)", name,
                                     arg, list.size()));
}

absl::StatusOr<Tensor> Squeeze2(OpRegistry& r, const Tensor& t) {
  return CallOne(r, "squeeze.dim", {Value(t), Value(int64_t{-2})});
}
absl::StatusOr<Tensor> Unsqueeze2(OpRegistry& r, const Tensor& t) {
  return CallOne(r, "unsqueeze", {Value(t), Value(int64_t{-2})});
}

// avg_pool1d(self, kernel_size, stride=[], padding=0, ceil_mode=False, count_include_pad=True)
absl::StatusOr<Tensor> AvgPool1dOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& x = s[0].tensor();
  IntArrayRef k = s[1].int_list();
  IntArrayRef st = s[2].int_list().empty() ? k : s[2].int_list();
  TSR_RETURN_IF_ERROR(CheckDims2To3(op, x, "avg_pool1d"));
  TSR_RETURN_IF_ERROR(Check1d(op, "avg_pool1d", "kernel_size", k));
  TSR_RETURN_IF_ERROR(Check1d(op, "avg_pool1d", "stride", st));
  TSR_RETURN_IF_ERROR(Check1d(op, "avg_pool1d", "padding", s[3].int_list()));
  if (!IsFloatingType(x.dtype()) && x.dtype() != ScalarType::kInt64) {
    return NotFloating(op, x.dtype());
  }
  TSR_ASSIGN_OR_RETURN(Tensor x2, Unsqueeze2(r, x));
  TSR_ASSIGN_OR_RETURN(Tensor y,
                       CallOne(r, "avg_pool2d",
                               {Value(x2), Value(IntList{1, k[0]}), Value(IntList{1, st[0]}),
                                Value(IntList{0, s[3].int_list()[0]}), s[4], s[5], Value()}));
  return Squeeze2(r, y);
}

// max_pool1d_with_indices(self, kernel_size, stride=[], padding=0, dilation=1, ceil_mode=False)
Out MaxPool1dWithIndices(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& x = s[0].tensor();
  IntArrayRef k = s[1].int_list();
  IntArrayRef st = s[2].int_list().empty() ? k : s[2].int_list();
  TSR_RETURN_IF_ERROR(CheckDims2To3(op, x, "max_pool1d"));
  TSR_RETURN_IF_ERROR(Check1d(op, "max_pool1d", "kernel_size", k));
  TSR_RETURN_IF_ERROR(Check1d(op, "max_pool1d", "stride", st));
  TSR_RETURN_IF_ERROR(Check1d(op, "max_pool1d", "padding", s[3].int_list()));
  TSR_RETURN_IF_ERROR(Check1d(op, "max_pool1d", "dilation", s[4].int_list()));
  if (!IsFloatingType(x.dtype())) return NotFloating(op, x.dtype());
  TSR_ASSIGN_OR_RETURN(Tensor x2, Unsqueeze2(r, x));
  TSR_ASSIGN_OR_RETURN(auto both,
                       CallTwo(r, "max_pool2d_with_indices",
                               {Value(x2), Value(IntList{1, k[0]}), Value(IntList{1, st[0]}),
                                Value(IntList{0, s[3].int_list()[0]}),
                                Value(IntList{1, s[4].int_list()[0]}), s[5]}));
  TSR_ASSIGN_OR_RETURN(Tensor values, Squeeze2(r, both.first));
  TSR_ASSIGN_OR_RETURN(Tensor indices, Squeeze2(r, both.second));
  return std::vector<Tensor>{values, indices};
}

// max_pool1d: ATen's own checks (MaxPooling.h's check_max_pool1d), then the values of
// max_pool1d_with_indices.
Out MaxPool1d(const OperatorHandle& op, const Stack& s) {
  const Tensor& x = s[0].tensor();
  const bool dims_ok = (x.dim() == 2 && x.sizes()[0] != 0 && x.sizes()[1] != 0) ||
                       (x.dim() == 3 && x.sizes()[1] != 0 && x.sizes()[2] != 0);
  if (!dims_ok) {
    return Invalid(op, absl::StrFormat("max_pool1d: Expected 2D or 3D (batch mode) tensor with "
                                       "optional 0 dim batch size for input, but got:%s",
                                       ShapeToString(x.sizes())));
  }
  IntArrayRef k = s[1].int_list(), st = s[2].int_list(), pd = s[3].int_list(), dl = s[4].int_list();
  if (k.size() != 1) {
    return Invalid(op, absl::StrFormat("max_pool1d() kernel_size must be an int, list of ints or "
                                       "tuple of ints of size 1 but got size %d",
                                       k.size()));
  }
  if (!st.empty() && st.size() != 1) {
    return Invalid(op, absl::StrFormat("max_pool1d() stride must be None, an int, list of ints, "
                                       "or tuple of ints of size 1 but got size %d",
                                       st.size()));
  }
  if (pd.size() != 1) {
    return Invalid(op, absl::StrFormat("max_pool1d() padding must be an int, list of ints, or "
                                       "tuple of ints of size 1 but got size %d",
                                       pd.size()));
  }
  if (dl.size() != 1) {
    return Invalid(op, absl::StrFormat("max_pool1d() dilation must be an int, list of ints or "
                                       "tuple of ints of size 1 but got size %d",
                                       dl.size()));
  }
  const int64_t stride = st.empty() ? k[0] : st[0];
  if (k[0] <= 0) {
    return Invalid(op, absl::StrFormat("max_pool1d() kernel_size must be greater than zero, but "
                                       "got %d",
                                       k[0]));
  }
  if (stride <= 0) {
    return Invalid(
        op, absl::StrFormat("max_pool1d() stride must be greater than zero, but got %d", stride));
  }
  if (pd[0] < 0) {
    return Invalid(op,
                   absl::StrFormat("max_pool1d() padding must be non-negative, but got %d", pd[0]));
  }
  if (pd[0] > k[0] / 2) {
    return Invalid(op, absl::StrFormat("max_pool1d() padding should be at most half of kernel "
                                       "size, but got padding=%d and kernel_size=%d",
                                       pd[0], k[0]));
  }
  if (dl[0] <= 0) {
    return Invalid(op, absl::StrFormat("max_pool1d() dilation must be greater than zero, but got "
                                       "%d",
                                       dl[0]));
  }
  const Wide ow = PooledSize(x.sizes().back(), k[0], pd[0], stride, dl[0], s[5].to_bool());
  if (ow <= 0) {
    return Invalid(op, absl::StrFormat("max_pool1d() Invalid computed output size: %d",
                                       static_cast<int64_t>(ow)));
  }
  if (!IsFloatingType(x.dtype())) return NotFloating(op, x.dtype());
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> both, MaxPool1dWithIndices(op, s));
  return std::vector<Tensor>{both[0]};
}

// ---- adaptive pooling ----

// AdaptiveWindows: ATen's adaptive windows of `out` outputs over `in` inputs, laid into K slots
// each (K the longest window); a spare slot holds `in`, an element appended to the dim.
struct AdaptiveWindows {
  int64_t k = 1;
  std::vector<int64_t> slots;   // out * k: positions along the dim (in: the appended element)
  std::vector<double> lengths;  // out: each window's length
};

AdaptiveWindows WindowsOf(int64_t in, int64_t out) {
  AdaptiveWindows w;
  std::vector<int64_t> start(out), end(out);
  for (int64_t o = 0; o < out; ++o) {
    start[o] = static_cast<int64_t>(Wide(o) * in / out);
    end[o] = static_cast<int64_t>((Wide(o + 1) * in + out - 1) / out);
    w.k = std::max(w.k, end[o] - start[o]);
  }
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t i = 0; i < w.k; ++i) {
      w.slots.push_back(start[o] + i < end[o] ? start[o] + i : in);
    }
    w.lengths.push_back(static_cast<double>(end[o] - start[o]));
  }
  return w;
}

// Gathered: x's last dim (length L > 0) as out * K slots per row, spare slots reading `fill`:
// [..., out * K].
absl::StatusOr<Tensor> Gathered(OpRegistry& r, const Tensor& x, const AdaptiveWindows& w,
                                Scalar fill) {
  TSR_ASSIGN_OR_RETURN(
      Tensor padded, CallOne(r, "constant_pad_nd", {Value(x), Value(IntList{0, 1}), Value(fill)}));
  TSR_ASSIGN_OR_RETURN(Tensor slots, HostTable(w.slots, ScalarType::kInt64, x.device()));
  return CallOne(r, "index_select", {Value(padded), Value(x.dim() - 1), Value(slots)});
}

// AdaptiveAvgLast: adaptive average of x's last dim to `out` (> 0) outputs.
absl::StatusOr<Tensor> AdaptiveAvgLast(OpRegistry& r, const Tensor& x, int64_t out) {
  const AdaptiveWindows w = WindowsOf(x.sizes().back(), out);
  TSR_ASSIGN_OR_RETURN(Tensor g, Gathered(r, x, w, Scalar(int64_t{0})));
  IntList shape = ToIntList(x.sizes());
  shape.back() = out;
  shape.push_back(w.k);
  TSR_ASSIGN_OR_RETURN(g, Reshape(r, g, shape));
  TSR_ASSIGN_OR_RETURN(Tensor sum, CallOne(r, "sum.dim_IntList",
                                           {Value(g), Value(IntList{-1}), Value(false), Value()}));
  TSR_ASSIGN_OR_RETURN(Tensor lengths, NumberTable(w.lengths, x.dtype(), x.device()));
  return Divide(r, sum, lengths);
}

// AdaptiveMaxLast: adaptive maximum of x's last dim to `out` (> 0) outputs, with the position
// along the dim of each maximum (ATen's rule: the first maximum, or the last NaN). The K slots
// of each window are max-pooled K at a time by max_pool2d_with_indices, whose rule it is.
absl::StatusOr<std::pair<Tensor, Tensor>> AdaptiveMaxLast(OpRegistry& r, const Tensor& x,
                                                          int64_t out) {
  const int64_t len = x.sizes().back();
  const AdaptiveWindows w = WindowsOf(len, out);
  TSR_ASSIGN_OR_RETURN(Tensor g,
                       Gathered(r, x, w, Scalar(-std::numeric_limits<double>::infinity())));
  int64_t rows = 1;
  for (int64_t i = 0; i + 1 < x.dim(); ++i) rows *= x.sizes()[i];
  TSR_ASSIGN_OR_RETURN(g, Reshape(r, g, {rows, 1, 1, out * w.k}));
  TSR_ASSIGN_OR_RETURN(auto both,
                       CallTwo(r, "max_pool2d_with_indices",
                               {Value(g), Value(IntList{1, w.k}), Value(IntList{1, w.k}),
                                Value(IntList{0, 0}), Value(IntList{1, 1}), Value(false)}));
  // Slot -> position (a spare slot is never chosen: -inf does not take a window's first place).
  std::vector<int64_t> position(w.slots);
  for (size_t i = 0; i < position.size(); ++i) {
    if (position[i] == len) position[i] = w.slots[i - i % w.k];
  }
  TSR_ASSIGN_OR_RETURN(Tensor table, HostTable(position, ScalarType::kInt64, x.device()));
  TSR_ASSIGN_OR_RETURN(Tensor chosen, Reshape(r, both.second, {-1}));
  TSR_ASSIGN_OR_RETURN(
      Tensor pos, CallOne(r, "index_select", {Value(table), Value(int64_t{0}), Value(chosen)}));
  IntList shape = ToIntList(x.sizes());
  shape.back() = out;
  TSR_ASSIGN_OR_RETURN(Tensor values, Reshape(r, both.first, shape));
  TSR_ASSIGN_OR_RETURN(pos, Reshape(r, pos, shape));
  return std::make_pair(values, pos);
}

// AdaptiveAvg: the last `outs.size()` dims of x pooled to `outs` (each > 0), one at a time.
absl::StatusOr<Tensor> AdaptiveAvg(OpRegistry& r, Tensor x, IntArrayRef outs) {
  const int64_t nd = static_cast<int64_t>(outs.size());
  for (int64_t i = nd - 1; i >= 0; --i) {
    const int64_t dim = x.dim() - nd + i, last = x.dim() - 1;
    TSR_ASSIGN_OR_RETURN(Tensor moved, Transpose(x, dim, last));
    TSR_ASSIGN_OR_RETURN(Tensor pooled, AdaptiveAvgLast(r, moved, outs[i]));
    TSR_ASSIGN_OR_RETURN(x, Transpose(pooled, dim, last));
  }
  return x;
}

// AdaptiveMax: values and flat indices (into the last nd dims) of adaptive max pooling.
// Note [Pooling one spatial dim at a time]
Out AdaptiveMax(OpRegistry& r, Tensor x, IntArrayRef outs) {
  const int64_t nd = static_cast<int64_t>(outs.size());
  Tensor flat;
  int64_t after = 1;  // the product of the input sizes of the dims already reduced
  for (int64_t i = nd - 1; i >= 0; --i) {
    const int64_t dim = x.dim() - nd + i, last = x.dim() - 1;
    const int64_t len = x.sizes()[dim];
    TSR_ASSIGN_OR_RETURN(Tensor moved, Transpose(x, dim, last));
    TSR_ASSIGN_OR_RETURN(auto pooled, AdaptiveMaxLast(r, moved, outs[i]));
    Tensor index = pooled.second;
    if (flat.defined()) {
      TSR_ASSIGN_OR_RETURN(Tensor kept, Transpose(flat, dim, last));
      TSR_ASSIGN_OR_RETURN(
          Tensor read,
          CallOne(r, "gather", {Value(kept), Value(last), Value(pooled.second), Value(false)}));
      TSR_ASSIGN_OR_RETURN(Tensor scaled,
                           CallOne(r, "mul.Scalar", {Value(index), Value(Scalar(after))}));
      TSR_ASSIGN_OR_RETURN(
          index, CallOne(r, "add.Tensor", {Value(scaled), Value(read), Value(Scalar(1))}));
    }
    TSR_ASSIGN_OR_RETURN(x, Transpose(pooled.first, dim, last));
    TSR_ASSIGN_OR_RETURN(flat, Transpose(index, dim, last));
    after *= len;
  }
  TSR_ASSIGN_OR_RETURN(x, CallOne(r, "contiguous", {Value(x)}));
  TSR_ASSIGN_OR_RETURN(flat, CallOne(r, "contiguous", {Value(flat)}));
  return std::vector<Tensor>{x, flat};
}

// The pooled shape: x's leading dims, then `outs`.
IntList PooledShape(const Tensor& x, IntArrayRef outs) {
  IntList shape(x.sizes().begin(), x.sizes().end() - outs.size());
  shape.insert(shape.end(), outs.begin(), outs.end());
  return shape;
}

bool AnyZero(IntArrayRef v) {
  return std::any_of(v.begin(), v.end(), [](int64_t e) { return e == 0; });
}

absl::Status CheckNotNegative(const OperatorHandle& op, const Tensor& x, IntArrayRef outs) {
  for (int64_t o : outs) {
    if (o < 0) {
      return Invalid(op, absl::StrFormat("Trying to create tensor with negative dimension %d: %s",
                                         o, ShapeToString(PooledShape(x, outs))));
    }
  }
  return absl::OkStatus();
}

// _adaptive_avg_pool2d / _adaptive_avg_pool3d (kDims 2 or 3): ATen's CPU template's checks.
template <int kDims>
absl::StatusOr<Tensor> AdaptiveAvgKernelOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& x = s[0].tensor();
  IntArrayRef outs = s[1].int_list();
  const char* name = kDims == 2 ? "adaptive_avg_pool2d" : "adaptive_avg_pool3d";
  if (static_cast<int>(outs.size()) != kDims) {
    return Invalid(
        op, absl::StrFormat("%s: output_size must be %d, got %d values", name, kDims, outs.size()));
  }
  if (x.dim() != kDims + 1 && x.dim() != kDims + 2) {
    return Invalid(op, absl::StrFormat("%s(): Expected %dD or %dD tensor, but got %s", name,
                                       kDims + 1, kDims + 2, ShapeToString(x.sizes())));
  }
  for (int64_t i = x.dim() - kDims; i < x.dim(); ++i) {
    if (x.sizes()[i] > 0) continue;
    return Invalid(op, absl::StrFormat("%s(): Expected input to have non-zero size for non-batch "
                                       "dimensions, but input has sizes %s with dimension %d "
                                       "being empty",
                                       name, ShapeToString(x.sizes()), i));
  }
  TSR_RETURN_IF_ERROR(CheckNotNegative(op, x, outs));
  if (!IsFloatingType(x.dtype())) return NotFloating(op, x.dtype());
  const IntList shape = PooledShape(x, outs);
  if (AnyZero(shape)) return EmptyOf(r, x, shape);
  TSR_RETURN_IF_ERROR(CheckOutputFits(r, x, shape));  // before host windows as long as its dims
  // On the Meta device the shape is the whole result: no host windows, which a meta output of
  // any size (2^31 outputs) would otherwise make.
  if (x.device().type == DeviceType::kMeta) return EmptyOf(r, x, shape);
  const Opmath opmath(x.dtype());
  TSR_ASSIGN_OR_RETURN(const Value in, opmath.In(r, s[0]));
  TSR_ASSIGN_OR_RETURN(Tensor avg, AdaptiveAvg(r, in.tensor(), outs));
  TSR_ASSIGN_OR_RETURN(avg, CallOne(r, "contiguous", {Value(avg)}));
  return opmath.Out(r, std::move(avg));
}

// adaptive_avg_pool2d / adaptive_avg_pool3d: a 1 x 1 (x 1) output is the mean over the spatial
// dims (ATen's composite, which checks nothing more then), otherwise the kernel above.
template <int kDims>
absl::StatusOr<Tensor> AdaptiveAvgOf(const OperatorHandle& op, const Stack& s) {
  IntArrayRef outs = s[1].int_list();
  const char* name = kDims == 2 ? "adaptive_avg_pool2d" : "adaptive_avg_pool3d";
  if (static_cast<int>(outs.size()) != kDims) {
    return Invalid(
        op, absl::StrFormat("%s: output_size must be %d, got %d values", name, kDims, outs.size()));
  }
  if (std::any_of(outs.begin(), outs.end(), [](int64_t o) { return o < 0; })) {
    // ATen 1.13's adaptive_avg_pool3d names adaptive_avg_pool2d here; current ATen its own name.
    return Invalid(op, absl::StrFormat("%s: elements of output_size must be greater than or equal "
                                       "to 0 but received {%s}",
                                       name, JoinSizes(outs)));
  }
  if (std::all_of(outs.begin(), outs.end(), [](int64_t o) { return o == 1; })) {
    const ScalarType dtype = s[0].tensor().dtype();
    if (!IsFloatingType(dtype)) return NotFloating(op, dtype);  // named as this op's, not mean's
    IntList dims;
    for (int i = 1; i <= kDims; ++i) dims.push_back(-i);
    return CallOne(op.registry(), "mean.dim", {s[0], Value(std::move(dims)), Value(true), Value()});
  }
  return AdaptiveAvgKernelOf<kDims>(op, s);
}

// adaptive_avg_pool1d(self, output_size): adaptive_avg_pool2d of a unit row.
absl::StatusOr<Tensor> AdaptiveAvg1dOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& x = s[0].tensor();
  TSR_RETURN_IF_ERROR(CheckDims2To3(op, x, "adaptive_avg_pool1d"));
  TSR_RETURN_IF_ERROR(Check1d(op, "adaptive_avg_pool1d", "output_size", s[1].int_list()));
  TSR_ASSIGN_OR_RETURN(Tensor x2, Unsqueeze2(r, x));
  Stack inner{Value(x2), Value(IntList{1, s[1].int_list()[0]})};
  TSR_ASSIGN_OR_RETURN(Tensor y, AdaptiveAvgOf<2>(op, inner));
  return Squeeze2(r, y);
}

// adaptive_max_pool2d / adaptive_max_pool3d(self, output_size) -> (values, indices)
template <int kDims>
Out AdaptiveMaxOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& x = s[0].tensor();
  IntArrayRef outs = s[1].int_list();
  const char* name = kDims == 2 ? "adaptive_max_pool2d" : "adaptive_max_pool3d";
  if (x.dim() != kDims + 1 && x.dim() != kDims + 2) {
    return Invalid(op, absl::StrFormat("%s(): Expected %dD or %dD tensor, but got: %s", name,
                                       kDims + 1, kDims + 2, ShapeToString(x.sizes())));
  }
  for (int64_t i = 1; i < x.dim(); ++i) {
    if (x.sizes()[i] > 0) continue;
    return Invalid(op, absl::StrFormat("%s(): Expected input to have non-zero size for non-batch "
                                       "dimensions, but input has sizes %s with dimension %d "
                                       "being empty",
                                       name, ShapeToString(x.sizes()), i));
  }
  if (static_cast<int>(outs.size()) != kDims) {
    return Invalid(
        op, absl::StrFormat("%s(): internal error: output_size.size() must be %d", name, kDims));
  }
  TSR_RETURN_IF_ERROR(CheckNotNegative(op, x, outs));
  if (!IsFloatingType(x.dtype())) return NotFloating(op, x.dtype());
  const IntList shape = PooledShape(x, outs);
  TSR_RETURN_IF_ERROR(CheckOutputFits(op.registry(), x, shape));  // before host windows
  // An empty result, or any on the Meta device: the shapes are the result, and no host windows
  // (as long as the output's dims) are built.
  if (AnyZero(shape) || x.device().type == DeviceType::kMeta) {
    TSR_ASSIGN_OR_RETURN(Tensor values, Empty(shape, x.dtype(), x.device()));
    TSR_ASSIGN_OR_RETURN(Tensor indices, Empty(shape, ScalarType::kInt64, x.device()));
    return std::vector<Tensor>{values, indices};
  }
  return AdaptiveMax(op.registry(), x, outs);
}

// adaptive_max_pool1d(self, output_size): adaptive_max_pool2d of a unit row.
Out AdaptiveMax1d(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& x = s[0].tensor();
  TSR_RETURN_IF_ERROR(CheckDims2To3(op, x, "adaptive_max_pool1d"));
  TSR_RETURN_IF_ERROR(Check1d(op, "adaptive_max_pool1d", "output_size", s[1].int_list()));
  for (int64_t i = 1; i < x.dim(); ++i) {
    if (x.sizes()[i] > 0) continue;
    return Invalid(op, absl::StrFormat("adaptive_max_pool1d(): Expected input to have non-zero "
                                       "size for non-batch dimensions, but input has sizes %s "
                                       "with dimension %d being empty",
                                       ShapeToString(x.sizes()), i));
  }
  TSR_ASSIGN_OR_RETURN(Tensor x2, Unsqueeze2(r, x));
  Stack inner{Value(x2), Value(IntList{1, s[1].int_list()[0]})};
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> both, AdaptiveMaxOf<2>(op, inner));
  TSR_ASSIGN_OR_RETURN(Tensor values, Squeeze2(r, both[0]));
  TSR_ASSIGN_OR_RETURN(Tensor indices, Squeeze2(r, both[1]));
  return std::vector<Tensor>{values, indices};
}

// ---- max_unpool ----

// max_unpool2d(self, indices, output_size) (kDims 2) and max_unpool3d(self, indices,
// output_size, stride, padding) (kDims 3): each value written at its index into a zero plane of
// output_size; an index outside the plane is refused (ATen names one it found).
template <int kDims>
absl::StatusOr<Tensor> MaxUnpoolOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& x = s[0].tensor();
  const Tensor& indices = s[1].tensor();
  IntArrayRef outs = s[2].int_list();
  const char* dims = kDims == 2 ? "(height, width)" : "(depth, height, width)";
  if (indices.dtype() != ScalarType::kInt64) {
    return Invalid(op, absl::StrFormat("elements in indices should be type int64 but got: %s",
                                       ScalarTypeName(indices.dtype())));
  }
  if (kDims == 2 && outs.size() != 2) {
    return Invalid(op, absl::StrFormat("There should be exactly two elements %s in output_size, "
                                       "but got %d elements.",
                                       dims, outs.size()));
  }
  if (x.dim() != kDims + 1 && x.dim() != kDims + 2) {
    return Invalid(op, absl::StrFormat("Input to max_unpooling%dd should be a %dd or %dd Tensor, "
                                       "but got a tensor with %d dimensions.",
                                       kDims, kDims + 1, kDims + 2, x.dim()));
  }
  if (kDims == 3) {
    if (outs.size() != 3) {
      return Invalid(op, absl::StrFormat("There should be exactly three elements %s in "
                                         "output_size, but got %d elements.",
                                         dims, outs.size()));
    }
    IntArrayRef stride = s[3].int_list(), padding = s[4].int_list();
    if (stride.size() != 3) {
      return Invalid(op, absl::StrFormat("There should be exactly three elements %s in stride, "
                                         "but got: %d elements.",
                                         dims, stride.size()));
    }
    if (padding.size() != 3) {
      return Invalid(op, absl::StrFormat("There should be exactly three elements %s in padding, "
                                         "but got: %d elements.",
                                         dims, padding.size()));
    }
  }
  if (!std::equal(x.sizes().begin(), x.sizes().end(), indices.sizes().begin(),
                  indices.sizes().end())) {
    return Invalid(op, absl::StrFormat("Expected shape of indices to be same as that of the input "
                                       "tensor (%s) but got indices tensor with shape: %s",
                                       ShapeToString(x.sizes()), ShapeToString(indices.sizes())));
  }
  for (int64_t i = 1; i < x.dim(); ++i) {
    if (x.sizes()[i] > 0) continue;
    return Invalid(op, absl::StrFormat("max_unpooling%dd_forward_out_cpu(): Expected input to have "
                                       "non-zero size for non-batch dimensions, but got %s with "
                                       "dimension %d being empty.",
                                       kDims, ShapeToString(x.sizes()), i));
  }
  if (kDims == 3) {
    IntArrayRef stride = s[3].int_list();
    if (stride[0] <= 0 || stride[1] <= 0 || stride[2] <= 0) {
      return Invalid(op, absl::StrFormat("strides should be greater than zero, but got stride: %s",
                                         ShapeToString(stride)));
    }
  }
  if (!IsFloatingType(x.dtype())) return NotFloating(op, x.dtype());
  for (int64_t o : outs) {
    if (o < 0) {
      return Invalid(op, absl::StrFormat("Trying to create tensor with negative dimension %d: %s",
                                         o, ShapeToString(PooledShape(x, outs))));
    }
  }
  const IntList shape = PooledShape(x, outs);
  TSR_ASSIGN_OR_RETURN(Tensor zeros, Zeros(r, shape, x.dtype(), x.device()));
  int64_t numel = 1;
  for (int64_t e : shape) numel *= e;
  if (numel == 0) return zeros;  // ATen writes nothing (and checks no index) then
  int64_t plane = 1;
  for (int64_t o : outs) plane *= o;
  const int64_t channels = numel / plane;
  // The indices' range, read back to name an invalid one before anything is written (meta
  // tensors hold none).
  if (indices.numel() > 0) {
    TSR_ASSIGN_OR_RETURN(std::optional<Range> range, IndexRange(r, indices));
    if (range && (range->min < 0 || range->max >= plane)) {
      return Invalid(
          op, absl::StrFormat("Found an invalid max index: %d (output volumes are of "
                              "size %s)",
                              range->min < 0 ? range->min : range->max, absl::StrJoin(outs, "x")));
    }
  }
  TSR_ASSIGN_OR_RETURN(Tensor flat_out, Reshape(r, zeros, {channels, plane}));
  TSR_ASSIGN_OR_RETURN(Tensor flat_index, Reshape(r, indices, {channels, -1}));
  TSR_ASSIGN_OR_RETURN(Tensor flat_in, Reshape(r, x, {channels, -1}));
  TSR_ASSIGN_OR_RETURN(
      Tensor put, CallOne(r, "scatter.src",
                          {Value(flat_out), Value(int64_t{1}), Value(flat_index), Value(flat_in)}));
  return Reshape(r, put, shape);
}

// ---- registration ----

}  // namespace

absl::Status DefinePoolingComposites(OpRegistry& registry) {
  return DefineAll(
      registry,
      {
          {"adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor",
           MakeKernel<Named<ComputeOne<AdaptiveAvg1dOf>>>("core::adaptive_avg_pool1d")},
          {"adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",
           MakeKernel<Named<ComputeOne<AdaptiveAvgOf<2>>>>("core::adaptive_avg_pool2d")},
          {"adaptive_avg_pool2d.out(Tensor self, SymInt[2] output_size, *, Tensor(a!) out) -> "
           "Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<AdaptiveAvgOf<2>, 2>>>("core::adaptive_avg_pool2d_out")},
          {"_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",
           MakeKernel<Named<ComputeOne<AdaptiveAvgKernelOf<2>>>>("core::_adaptive_avg_pool2d")},
          {"_adaptive_avg_pool2d.out(Tensor self, SymInt[2] output_size, *, Tensor(a!) out) -> "
           "Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<AdaptiveAvgKernelOf<2>, 2, /*kCastable=*/true>>>(
               "core::_adaptive_avg_pool2d_out")},
          {"adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor",
           MakeKernel<Named<ComputeOne<AdaptiveAvgOf<3>>>>("core::adaptive_avg_pool3d")},
          {"adaptive_avg_pool3d.out(Tensor self, SymInt[3] output_size, *, Tensor(a!) out) -> "
           "Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<AdaptiveAvgOf<3>, 2>>>("core::adaptive_avg_pool3d_out")},
          {"_adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor",
           MakeKernel<Named<ComputeOne<AdaptiveAvgKernelOf<3>>>>("core::_adaptive_avg_pool3d")},
          {"_adaptive_avg_pool3d.out(Tensor self, SymInt[3] output_size, *, Tensor(a!) out) -> "
           "Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<AdaptiveAvgKernelOf<3>, 2, /*kCastable=*/true>>>(
               "core::_adaptive_avg_pool3d_out")},
          {"adaptive_max_pool1d(Tensor self, int[1] output_size) -> (Tensor, Tensor)",
           MakeKernel<Named<AdaptiveMax1d>>("core::adaptive_max_pool1d")},
          {"adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)",
           MakeKernel<Named<AdaptiveMaxOf<2>>>("core::adaptive_max_pool2d")},
          {"adaptive_max_pool2d.out(Tensor self, int[2] output_size, *, Tensor(a!) out, Tensor(b!) "
           "indices) -> (Tensor(a!), Tensor(b!))",
           MakeKernel<Named<ComputeIntoOuts<AdaptiveMaxOf<2>, 2, 2>>>(
               "core::adaptive_max_pool2d_out")},
          {"adaptive_max_pool3d(Tensor self, int[3] output_size) -> (Tensor, Tensor)",
           MakeKernel<Named<AdaptiveMaxOf<3>>>("core::adaptive_max_pool3d")},
          {"adaptive_max_pool3d.out(Tensor self, int[3] output_size, *, Tensor(a!) out, Tensor(b!) "
           "indices) -> (Tensor(a!), Tensor(b!))",
           MakeKernel<Named<ComputeIntoOuts<AdaptiveMaxOf<3>, 2, 2>>>(
               "core::adaptive_max_pool3d_out")},
          {"avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=0, bool "
           "ceil_mode=False, bool count_include_pad=True) -> Tensor",
           MakeKernel<Named<ComputeOne<AvgPool1dOf>>>("core::avg_pool1d")},
          {"avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, bool "
           "ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
           MakeKernel<Named<ComputeOne<AvgPool3dOf>>>("core::avg_pool3d")},
          {"avg_pool3d.out(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, "
           "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None, *, "
           "Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<AvgPool3dOf, 7>>>("core::avg_pool3d_out")},
          {"max_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=0, "
           "int[1] dilation=1, bool ceil_mode=False) -> Tensor",
           MakeKernel<Named<MaxPool1d>>("core::max_pool1d")},
          {"max_pool1d_with_indices(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] "
           "padding=0, int[1] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
           MakeKernel<Named<MaxPool1dWithIndices>>("core::max_pool1d_with_indices")},
          {"max_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, "
           "int[3] dilation=1, bool ceil_mode=False) -> Tensor",
           MakeKernel<Named<MaxPool3d>>("core::max_pool3d")},
          {"max_pool3d_with_indices(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] "
           "padding=0, int[3] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
           MakeKernel<Named<MaxPool3dWithIndices>>("core::max_pool3d_with_indices")},
          {"max_pool3d_with_indices.out(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] "
           "padding=0, int[3] dilation=1, bool ceil_mode=False, *, Tensor(a!) out, Tensor(b!) "
           "indices) -> (Tensor(a!), Tensor(b!))",
           MakeKernel<Named<ComputeIntoOuts<MaxPool3dWithIndices, 6, 2>>>(
               "core::max_pool3d_with_indices_out")},
          {"max_unpool2d(Tensor self, Tensor indices, SymInt[2] output_size) -> Tensor",
           MakeKernel<Named<ComputeOne<MaxUnpoolOf<2>>>>("core::max_unpool2d")},
          {"max_unpool2d.out(Tensor self, Tensor indices, SymInt[2] output_size, *, Tensor(a!) "
           "out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<MaxUnpoolOf<2>, 3>>>("core::max_unpool2d_out")},
          {"max_unpool3d(Tensor self, Tensor indices, SymInt[3] output_size, int[3] stride, "
           "int[3] padding) -> Tensor",
           MakeKernel<Named<ComputeOne<MaxUnpoolOf<3>>>>("core::max_unpool3d")},
          {"max_unpool3d.out(Tensor self, Tensor indices, SymInt[3] output_size, int[3] stride, "
           "int[3] padding, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<MaxUnpoolOf<3>, 5>>>("core::max_unpool3d_out")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera

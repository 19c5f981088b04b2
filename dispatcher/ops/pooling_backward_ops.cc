// The backward ops of op set 1.9's pooling forwards (op set 1.10): `_adaptive_avg_pool2d_backward`,
// `_adaptive_avg_pool3d_backward`, `adaptive_max_pool2d_backward`, `adaptive_max_pool3d_backward`,
// `avg_pool3d_backward` and `max_pool3d_with_indices_backward`, with their out= / grad_input=
// forms, as composites over ops every backend has (scatter_add, index_add, div), so that a plugin
// needs no kernel for them. What each computes, for the forward y = pool(x):
//
//   max pooling (adaptive or windowed): each output's gradient added at the input element its
//     index names. The indices are flat positions within each (N, C) plane (as the forwards in
//     pooling_composites.cc and ATen's kernels give them), so this is scatter_add over the
//     flattened spatial dims: ties and overlapping windows add up.
//   average pooling (adaptive or windowed): each output's gradient divided by its window's
//     divisor and added to every input element of the window. See Note [Spreading an average's
//     gradient one dim at a time].
//
// Note [Spreading an average's gradient one dim at a time]
// An average pooling's window is a box and its divisor a product of one factor per spatial dim
// (the adaptive window's length; avg_pool3d's window clipped to the padded input, or with
// count_include_pad false to the input; or 1 per dim and divisor_override once), so its
// adjoint is a Kronecker product: grad_input = (grad_output / divisor) x_D S_D x_H S_H x_W S_W,
// where S_d is the [out, in] 0/1 matrix of output o's window along d. S_d is never built: a
// window is at most ceil(in / out) + 1 long (adaptive: start = floor(o * in / out), end =
// ceil((o + 1) * in / out)) or k long (avg_pool3d), so the product along d is one index_add per
// window offset t, adding each output's slice at the t-th position of its window (or one per
// output, each slice expanded over its window, where outputs are fewer than offsets). Host
// tables are O(out) per dim and call, device work O(numel * window) per dim, as ATen's loops.
// The division comes first, as in ATen's kernels: adaptive pooling divides by each dim's factor
// in turn (grad / kd / kh / kw), avg_pool3d once by the factors' product (or divisor_override).
//
// Checks: ATen's, in its order and with its messages (AdaptivePooling.h's
// adaptive_pool_empty_output_check, the adaptive backward ops' meta functions and CPU
// templates; for avg_pool3d / max_pool3d the forward's own checks, made by running the forward on
// meta tensors, then Pool.h's check_dim_size of grad_output and indices against its output).
// Where ATen's CPU kernels read past a grad_output or indices of another batch or channel
// count, these refuse it. The 16-bit floats are computed in float32 and rounded once (Opmath).
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/host_copy.h"
#include "core/shape.h"
#include "core/status_macros.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/backward_support.h"
#include "dispatcher/ops/boxing.h"
#include "dispatcher/ops/upsample_support.h"

namespace tessera {
namespace ops {
namespace {

// ---- checks ----

// ATen's adaptive_pool_empty_output_check(grad_output, name).
absl::Status CheckNonEmpty(const OperatorHandle& op, const Tensor& grad, const char* name) {
  for (int64_t i = 1; i < grad.dim(); ++i) {
    if (grad.sizes()[i] > 0) continue;
    return Invalid(op, absl::StrFormat("%s(): Expected grad_output to have non-zero size for "
                                       "non-batch dimensions, but grad_output has sizes %s with "
                                       "dimension %d being empty",
                                       name, ShapeToString(grad.sizes()), i));
  }
  return absl::OkStatus();
}

// `t` (argument `arg`) has `dtype` (ATen's "expected dtype ... for `grad_output`").
absl::Status CheckDtype(const OperatorHandle& op, const char* arg, const Tensor& t,
                        ScalarType dtype) {
  if (t.dtype() == dtype) return absl::OkStatus();
  return Invalid(op, absl::StrFormat("expected dtype %s for `%s` but got dtype %s",
                                     ScalarTypeName(dtype), arg, ScalarTypeName(t.dtype())));
}

// An adaptive pooling's grad_output has the input's dims and its leading (batch and channel)
// sizes; the pooled sizes are grad_output's own. ATen's kernels read the leading sizes off the
// input and run past a grad_output that has fewer.
absl::Status CheckLeading(const OperatorHandle& op, const Tensor& grad, const Tensor& input,
                          int64_t nd) {
  const int64_t lead = input.dim() - nd;
  bool ok = grad.dim() == input.dim();
  for (int64_t i = 0; ok && i < lead; ++i) ok = grad.sizes()[i] == input.sizes()[i];
  if (ok) return absl::OkStatus();
  return Invalid(
      op, absl::StrFormat("expected grad_output of shape %s + %d pooled sizes (the "
                          "input's leading dims), got %s",
                          ShapeToString(input.sizes().subspan(0, std::max<int64_t>(lead, 0))), nd,
                          ShapeToString(grad.sizes())));
}

// Pool.h's check_dim_size over every dim: `t` (argument `arg`) has the forward's output shape.
absl::Status CheckDimSizes(const OperatorHandle& op, const char* arg, const Tensor& t,
                           IntArrayRef shape) {
  const int64_t ndim = static_cast<int64_t>(shape.size());
  for (int64_t d = 0; d < ndim; ++d) {
    if (t.dim() == ndim && t.sizes()[d] == shape[d]) continue;
    if (d < t.dim()) {
      return Invalid(op, absl::StrFormat("Expected a tensor of dimension %d and tensor.size[%d] == "
                                         "%d but got: dimension %d and tensor.size[%d] = %d (`%s`, "
                                         "for the pooling's output %s)",
                                         ndim, d, shape[d], t.dim(), d, t.sizes()[d], arg,
                                         ShapeToString(shape)));
    }
    return Invalid(op, absl::StrFormat("Expected a tensor of dimension %d but got: dimension %d "
                                       "(`%s`, for the pooling's output %s)",
                                       ndim, t.dim(), arg, ShapeToString(shape)));
  }
  return absl::OkStatus();
}

// ---- max pooling: scatter_add at the indices (MaxScatter) ----

// adaptive_max_pool2d_backward / adaptive_max_pool3d_backward(grad_output, self, indices)
template <int kDims>
absl::StatusOr<Tensor> AdaptiveMaxBackwardOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& grad = s[0].tensor();
  const Tensor& input = s[1].tensor();
  const Tensor& indices = s[2].tensor();
  const char* name = kDims == 2 ? "adaptive_max_pool2d_backward" : "adaptive_max_pool3d_backward";
  // ATen's meta functions. Its 3-D one has no rank check (its kernel indexes the dims it
  // expects); this one says it as the 2-D one does.
  if (grad.dim() != kDims + 1 && grad.dim() != kDims + 2) {
    return Invalid(op, absl::StrFormat("adaptive_max_pooling%dd_backward(): Expected %dD or %dD "
                                       "grad_output, but got: %s",
                                       kDims, kDims + 1, kDims + 2, ShapeToString(grad.sizes())));
  }
  TSR_RETURN_IF_ERROR(CheckNonEmpty(op, grad, name));
  if (input.dim() != indices.dim()) {
    return Invalid(op, absl::StrFormat("expected dimensions %d for `indices` but got dimensions %d",
                                       input.dim(), indices.dim()));
  }
  TSR_RETURN_IF_ERROR(CheckDtype(op, "grad_output", grad, input.dtype()));
  if (!SameDims(indices.sizes(), grad.sizes())) {
    return Invalid(op,
                   absl::StrFormat("expected sizes %s for `grad_output` but got sizes %s",
                                   ShapeToString(indices.sizes()), ShapeToString(grad.sizes())));
  }
  TSR_RETURN_IF_ERROR(CheckLeading(op, grad, input, kDims));
  TSR_RETURN_IF_ERROR(CheckDtype(op, "indices", indices, ScalarType::kInt64));
  if (!IsFloatingType(input.dtype())) return NotFloating(op, input.dtype());
  return MaxScatter(op, grad, input, indices, kDims, /*minus_one_is_nowhere=*/false,
                    ShapeToString(input.sizes().subspan(input.dim() - kDims)));
}

// max_pool3d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation,
// ceil_mode, indices)
absl::StatusOr<Tensor> MaxPool3dBackward(const OperatorHandle& op, const Stack& s) {
  const Tensor& grad = s[0].tensor();
  const Tensor& input = s[1].tensor();
  const Tensor& indices = s[7].tensor();
  TSR_ASSIGN_OR_RETURN(
      const DimVector out_shape,
      ForwardShape(op, "max_pool3d_with_indices", {s[1], s[2], s[3], s[4], s[5], s[6]}));
  TSR_RETURN_IF_ERROR(CheckDimSizes(op, "grad_output", grad, out_shape));
  TSR_RETURN_IF_ERROR(CheckDimSizes(op, "indices", indices, out_shape));
  TSR_RETURN_IF_ERROR(CheckDtype(op, "grad_output", grad, input.dtype()));
  TSR_RETURN_IF_ERROR(CheckDtype(op, "indices", indices, ScalarType::kInt64));
  if (!IsFloatingType(input.dtype())) return NotFloating(op, input.dtype());
  return MaxScatter(op, grad, input, indices, 3, /*minus_one_is_nowhere=*/true,
                    ShapeToString(input.sizes().subspan(input.dim() - 3)));
}

// ---- average pooling: Note [Spreading an average's gradient one dim at a time] ----

// Windows: one spatial dim's windows, O(out) on the host: output o reads the `in` input positions
// [start[o], start[o] + length[o]) and contributes factor[o] to its divisor.
struct Windows {
  int64_t in = 0;
  std::vector<int64_t> start, length;
  std::vector<double> factor;
  int64_t width = 0;  // the longest window

  void Add(int64_t first, int64_t end, double f) {
    start.push_back(first);
    length.push_back(std::max<int64_t>(end - first, 0));
    factor.push_back(f);
    width = std::max(width, length.back());
  }
  int64_t out() const { return static_cast<int64_t>(start.size()); }
};

// AdaptiveWindows: start = floor(o * in / out), end = ceil((o + 1) * in / out); the factor is the
// window's length (at most ceil(in / out) + 1).
Windows AdaptiveWindows(int64_t in, int64_t out) {
  Windows w;
  w.in = in;
  for (int64_t o = 0; o < out; ++o) {
    const int64_t start = (o * in) / out;                // floor
    const int64_t end = ((o + 1) * in + out - 1) / out;  // ceil
    w.Add(start, end, static_cast<double>(end - start));
  }
  return w;
}

// AvgWindows: avg_pool3d's window along one dim, [o * stride - pad, + k) clipped to the padded
// input (its divisor factor), then to the input (its positions, and with count_include_pad false
// its divisor factor). divisor_override ignores the factors.
Windows AvgWindows(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t pad,
                   bool count_include_pad) {
  Windows w;
  w.in = in;
  for (int64_t o = 0; o < out; ++o) {
    int64_t start = o * stride - pad;
    int64_t end = std::min(start + k, in + pad);
    const int64_t padded = end - start;
    start = std::max<int64_t>(start, 0);
    end = std::min(end, in);
    w.Add(start, end, static_cast<double>(count_include_pad ? padded : end - start));
  }
  return w;
}

// SpreadDim: `g` (the compute dtype) taken back along `dim` from w's outputs to its inputs, each
// output's slice added at every position of its window, by index_add: one call per window offset
// t (each output's t-th position; a window shorter than t sends its slice to a spare position
// past the input, cut off at the end, so that no masked slot adds 0 * inf), or, where there are
// fewer outputs than that (global pooling), one call per output (its slice expanded over its
// window). Host tables: O(out) per call.
absl::StatusOr<Tensor> SpreadDim(OpRegistry& r, const Tensor& g, int64_t dim, const Windows& w) {
  const int64_t out = w.out();
  bool identity = w.in == out, ragged = false;
  for (int64_t o = 0; o < out; ++o) {
    identity = identity && w.start[o] == o && w.length[o] == 1;
    ragged = ragged || w.length[o] < w.width;
  }
  if (identity) return g;  // same-size adaptive pooling along this dim
  DimVector shape(g.sizes().begin(), g.sizes().end());
  const bool per_output = out < w.width;
  shape[dim] = w.in + (ragged && !per_output ? 1 : 0);
  TSR_ASSIGN_OR_RETURN(Tensor sum, Zeros(r, shape, g.dtype(), g.device()));
  auto add = [&](const std::vector<int64_t>& positions, const Tensor& source) -> absl::Status {
    TSR_ASSIGN_OR_RETURN(
        Tensor index, upsample::OnDevice<int64_t>(r, positions, ScalarType::kInt64, g.device(),
                                                  IntList{static_cast<int64_t>(positions.size())}));
    TSR_ASSIGN_OR_RETURN(sum, CallOne(r, "index_add",
                                      {Value(sum), Value(dim), Value(std::move(index)),
                                       Value(source), Value(Scalar(int64_t{1}))}));
    return absl::OkStatus();
  };
  std::vector<int64_t> positions;
  if (per_output) {
    for (int64_t o = 0; o < out; ++o) {
      if (w.length[o] == 0) continue;
      positions.resize(static_cast<size_t>(w.length[o]));
      for (int64_t t = 0; t < w.length[o]; ++t) positions[t] = w.start[o] + t;
      TSR_ASSIGN_OR_RETURN(const Tensor slice, Narrow(g, dim, o, 1));
      DimVector spread(g.sizes().begin(), g.sizes().end());
      spread[dim] = w.length[o];
      TSR_ASSIGN_OR_RETURN(const Tensor source, Expand(slice, spread));
      TSR_RETURN_IF_ERROR(add(positions, source));
    }
    return sum;
  }
  positions.resize(static_cast<size_t>(out));
  for (int64_t t = 0; t < w.width; ++t) {
    for (int64_t o = 0; o < out; ++o) positions[o] = t < w.length[o] ? w.start[o] + t : w.in;
    TSR_RETURN_IF_ERROR(add(positions, g));
  }
  if (!ragged) return sum;
  return Narrow(sum, dim, 0, w.in);
}

// Divisor: how AverageBack divides grad_output, as ATen's kernels do: adaptive pooling by each
// dim's factor in turn (grad / kd / kh / kw), avg_pool3d once by their product (an integer, exact
// in the compute dtype) or by divisor_override.
enum class Divisor { kEachDim, kProduct, kOverride };

// AverageBack: grad_output divided as `divisor` says (`override` the divisor_override) and
// spread over the input by `windows` (its last spatial dims), in the compute dtype and rounded
// once.
absl::StatusOr<Tensor> AverageBack(OpRegistry& r, const Tensor& grad, const Tensor& input,
                                   const std::vector<Windows>& windows, Divisor divisor,
                                   int64_t override) {
  // Meta tensors hold no values: their result is the shape alone, with no host tables.
  if (input.numel() == 0 || grad.numel() == 0 || input.device().type == DeviceType::kMeta) {
    return Zeros(r, input.sizes(), input.dtype(), input.device());
  }
  const Opmath opmath(input.dtype());
  TSR_ASSIGN_OR_RETURN(const Value in, opmath.In(r, Value(grad)));
  Tensor g = in.tensor();
  const int64_t nd = static_cast<int64_t>(windows.size());
  if (divisor == Divisor::kOverride) {
    TSR_ASSIGN_OR_RETURN(g, CallOne(r, "div.Scalar", {Value(g), Value(Scalar(override))}));
  } else {
    Tensor product;  // kProduct: the factors multiplied, [out_d] broadcast over g's dims
    for (int64_t i = 0; i < nd; ++i) {
      const std::vector<double>& f = windows[i].factor;
      if (std::all_of(f.begin(), f.end(), [](double x) { return x == 1.0; })) continue;
      TSR_ASSIGN_OR_RETURN(Tensor factor, upsample::WeightOnDevice(r, f, g.dtype(), g.device(),
                                                                   g.dim(), g.dim() - nd + i));
      if (divisor == Divisor::kEachDim) {
        TSR_ASSIGN_OR_RETURN(g, CallOne(r, "div.Tensor", {Value(g), Value(std::move(factor))}));
      } else if (!product.defined()) {
        product = std::move(factor);
      } else {
        TSR_ASSIGN_OR_RETURN(product,
                             CallOne(r, "mul.Tensor", {Value(product), Value(std::move(factor))}));
      }
    }
    if (product.defined()) {
      TSR_ASSIGN_OR_RETURN(g, CallOne(r, "div.Tensor", {Value(g), Value(std::move(product))}));
    }
  }
  for (int64_t i = 0; i < nd; ++i) {
    TSR_ASSIGN_OR_RETURN(g, SpreadDim(r, g, g.dim() - nd + i, windows[i]));
  }
  TSR_ASSIGN_OR_RETURN(g, CallOne(r, "contiguous", {Value(g)}));
  return opmath.Out(r, std::move(g));
}

// _adaptive_avg_pool2d_backward / _adaptive_avg_pool3d_backward(grad_output, self)
template <int kDims>
absl::StatusOr<Tensor> AdaptiveAvgBackwardOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& grad = s[0].tensor();
  const Tensor& input = s[1].tensor();
  const char* name = kDims == 2 ? "adaptive_avg_pool2d_backward" : "adaptive_avg_pool3d_backward";
  // ATen's CPU templates (the 2-D one's rank check; its 3-D one has none and indexes the dims it
  // expects: this one says it as the 2-D one does).
  TSR_RETURN_IF_ERROR(CheckNonEmpty(op, grad, name));
  if (grad.dim() != kDims + 1 && grad.dim() != kDims + 2) {
    return Invalid(op, absl::StrFormat("%s(): Expected %dD or %dD tensor, but got %s", name,
                                       kDims + 1, kDims + 2, ShapeToString(input.sizes())));
  }
  TSR_RETURN_IF_ERROR(CheckDtype(op, "grad_output", grad, input.dtype()));
  TSR_RETURN_IF_ERROR(CheckLeading(op, grad, input, kDims));
  if (!IsFloatingType(input.dtype())) return NotFloating(op, input.dtype());
  std::vector<Windows> windows;
  for (int64_t i = 0; i < kDims; ++i) {
    windows.push_back(AdaptiveWindows(input.sizes()[input.dim() - kDims + i],
                                      grad.sizes()[grad.dim() - kDims + i]));
  }
  return AverageBack(op.registry(), grad, input, windows, Divisor::kEachDim, 0);
}

// avg_pool3d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode,
// count_include_pad, divisor_override)
absl::StatusOr<Tensor> AvgPool3dBackward(const OperatorHandle& op, const Stack& s) {
  const Tensor& grad = s[0].tensor();
  const Tensor& input = s[1].tensor();
  TSR_ASSIGN_OR_RETURN(const DimVector out_shape,
                       ForwardShape(op, "avg_pool3d", {s[1], s[2], s[3], s[4], s[5], s[6], s[7]}));
  TSR_RETURN_IF_ERROR(CheckDimSizes(op, "grad_output", grad, out_shape));
  TSR_RETURN_IF_ERROR(CheckDtype(op, "grad_output", grad, input.dtype()));
  if (!IsFloatingType(input.dtype())) return NotFloating(op, input.dtype());
  // The forward accepted these: one or three ints each, stride [] for the kernel's.
  IntArrayRef k = s[2].int_list(), st = s[3].int_list(), pd = s[4].int_list();
  const bool count_include_pad = s[6].to_bool();
  const bool override = !s[7].is_none();
  std::vector<Windows> windows;
  for (size_t i = 0; i < 3; ++i) {
    const int64_t ki = k.size() == 1 ? k[0] : k[i];
    const int64_t si = st.empty() ? ki : st.size() == 1 ? st[0] : st[i];
    const int64_t pi = pd.size() == 1 ? pd[0] : pd[i];
    windows.push_back(AvgWindows(input.sizes()[input.dim() - 3 + i],
                                 out_shape[out_shape.size() - 3 + i], ki, si, pi,
                                 count_include_pad));
  }
  return AverageBack(op.registry(), grad, input, windows,
                     override ? Divisor::kOverride : Divisor::kProduct,
                     override ? s[7].to_int() : 0);
}

}  // namespace

absl::Status DefinePoolingBackwardOps(OpRegistry& registry) {
  return DefineAll(
      registry,
      {
          {"_adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor",
           MakeKernel<Named<ComputeOne<AdaptiveAvgBackwardOf<2>>>>(
               "core::_adaptive_avg_pool2d_backward")},
          // An autogen out= form: ATen's copies the result in, casting.
          {"_adaptive_avg_pool2d_backward.out(Tensor grad_output, Tensor self, *, Tensor(a!) "
           "out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<AdaptiveAvgBackwardOf<2>, 2, /*kCastable=*/true>>>(
               "core::_adaptive_avg_pool2d_backward_out")},
          {"_adaptive_avg_pool3d_backward(Tensor grad_output, Tensor self) -> Tensor",
           MakeKernel<Named<ComputeOne<AdaptiveAvgBackwardOf<3>>>>(
               "core::_adaptive_avg_pool3d_backward")},
          {"_adaptive_avg_pool3d_backward.out(Tensor grad_output, Tensor self, *, Tensor(a!) "
           "out) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<AdaptiveAvgBackwardOf<3>, 2, /*kCastable=*/true>>>(
               "core::_adaptive_avg_pool3d_backward_out")},
          {"adaptive_max_pool2d_backward(Tensor grad_output, Tensor self, Tensor indices) -> "
           "Tensor",
           MakeKernel<Named<ComputeOne<AdaptiveMaxBackwardOf<2>>>>(
               "core::adaptive_max_pool2d_backward")},
          {"adaptive_max_pool2d_backward.grad_input(Tensor grad_output, Tensor self, Tensor "
           "indices, *, Tensor(a!) grad_input) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<AdaptiveMaxBackwardOf<2>, 3>>>(
               "core::adaptive_max_pool2d_backward_grad_input")},
          {"adaptive_max_pool3d_backward(Tensor grad_output, Tensor self, Tensor indices) -> "
           "Tensor",
           MakeKernel<Named<ComputeOne<AdaptiveMaxBackwardOf<3>>>>(
               "core::adaptive_max_pool3d_backward")},
          {"adaptive_max_pool3d_backward.grad_input(Tensor grad_output, Tensor self, Tensor "
           "indices, *, Tensor(a!) grad_input) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<AdaptiveMaxBackwardOf<3>, 3>>>(
               "core::adaptive_max_pool3d_backward_grad_input")},
          {"avg_pool3d_backward(Tensor grad_output, Tensor self, int[3] kernel_size, int[3] "
           "stride, int[3] padding, bool ceil_mode, bool count_include_pad, int? "
           "divisor_override) -> Tensor",
           MakeKernel<Named<ComputeOne<AvgPool3dBackward>>>("core::avg_pool3d_backward")},
          {"avg_pool3d_backward.grad_input(Tensor grad_output, Tensor self, int[3] kernel_size, "
           "int[3] stride, int[3] padding, bool ceil_mode, bool count_include_pad, int? "
           "divisor_override, *, Tensor(a!) grad_input) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<AvgPool3dBackward, 8>>>(
               "core::avg_pool3d_backward_grad_input")},
          {"max_pool3d_with_indices_backward(Tensor grad_output, Tensor self, int[3] kernel_size, "
           "int[3] stride, int[3] padding, int[3] dilation, bool ceil_mode, Tensor indices) -> "
           "Tensor",
           MakeKernel<Named<ComputeOne<MaxPool3dBackward>>>(
               "core::max_pool3d_with_indices_backward")},
          {"max_pool3d_with_indices_backward.grad_input(Tensor grad_output, Tensor self, int[3] "
           "kernel_size, int[3] stride, int[3] padding, int[3] dilation, bool ceil_mode, Tensor "
           "indices, *, Tensor(a!) grad_input) -> Tensor(a!)",
           MakeKernel<Named<ComputeIntoOut<MaxPool3dBackward, 8>>>(
               "core::max_pool3d_with_indices_backward_grad_input")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera

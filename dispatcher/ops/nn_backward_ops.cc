// The backward ops of convolution, pooling and embedding (op set 1.4): `convolution_backward`,
// `max_pool2d_with_indices_backward`, `avg_pool2d_backward` and `embedding_dense_backward`, with
// their out= forms, as composites over ops every backend has (convolution, scatter_add, sum,
// div), so that a plugin needs no kernel for them; a backend with a faster kernel registers it
// and is preferred. What each computes, for a forward y = f(x, w):
//
//   convolution, grad_input: the adjoint of the forward, a convolution of grad_output with the
//     same weight and the other `transposed` (a transposed convolution's adjoint is the plain
//     one). Its output_padding makes the plain convolution's floor division come out at the
//     input's size; a transposed forward whose output_padding reaches past a stride (allowed
//     where it is below the dilation) gives a longer result, cut to the input's size.
//   convolution, grad_weight[o, c, t] = sum over n, u of x[n, c, u*stride - pad + t*dilation] *
//     grad_output[n, o, u], per group: a convolution of x with channels and batch swapped, by
//     grad_output with channels and batch swapped, stride and dilation swapped, cut to the
//     kernel's size (a transposed forward: the same with x and grad_output exchanged).
//   convolution, grad_bias: grad_output summed over every dim but the channels.
//   max pooling: each output's gradient added at the input element its index names
//     (scatter_add over the flattened spatial dims), so ties and overlapping windows add up.
//   average pooling: each output's gradient divided by its window's divisor (PyTorch's
//     avg_pool2d rule: divisor_override, or the window clipped to the padded input, or with
//     count_include_pad false to the input), then spread over its window: a transposed
//     convolution with a kernel of ones, cut to the input's place inside the padding.
//   embedding: grad_output's rows added into the rows its indices name (scatter_add), none for
//     padding_idx, each divided by its index's count with scale_grad_by_freq.
//
// Each checks its arguments against the forward op's own checks: the forward runs on meta
// tensors of the input's shape (its meta function, so the messages are the forward's), and
// grad_output (and indices) must have the shape it gives. The 16-bit floats are computed in
// float32 and rounded once (Opmath).
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/host_copy.h"
#include "core/status_macros.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/backward_support.h"
#include "dispatcher/ops/boxing.h"
#include "dispatcher/ops/nn_args.h"

namespace tessera {
namespace ops {
namespace {

using Out = absl::StatusOr<std::vector<Tensor>>;

// CheckLike: `t` (argument `name`) has `shape` and `dtype`.
absl::Status CheckLike(const OperatorHandle& op, const char* name, const Tensor& t,
                       IntArrayRef shape, ScalarType dtype, const char* shape_of) {
  if (!SameDims(t.sizes(), shape)) {
    return Invalid(op, absl::StrFormat("expected %s of shape %s (%s), got %s", name,
                                       ShapeToString(shape), shape_of, ShapeToString(t.sizes())));
  }
  if (t.dtype() != dtype) {
    return Invalid(op, absl::StrFormat("expected %s of dtype %s, got %s", name,
                                       ScalarTypeName(dtype), ScalarTypeName(t.dtype())));
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> Reshape(OpRegistry& r, const Tensor& t, IntList shape) {
  return CallOne(r, "reshape", {t, Value(std::move(shape))});
}

// ---- convolution_backward ----

// ConvList: a per-spatial-dim argument read as the forward reads it (SpatialArg), as a list
// to pass on to the convolutions below.
absl::StatusOr<IntList> ConvList(const OperatorHandle& op, const char* arg, const Value& v,
                                 int64_t dims, int64_t fallback) {
  TSR_ASSIGN_OR_RETURN(const DimVector d, SpatialArg(op, arg, v, dims, fallback));
  return IntList(d.begin(), d.end());
}

struct ConvArgs {
  IntList stride, padding, dilation;
  bool transposed;
  int64_t groups;
};

// ConvWeightGrad: the weight's gradient, group by group. `a` is the tensor whose positions the
// kernel taps (the input; for a transposed forward, grad_output), `b` the one each tap's sum
// runs along with it (grad_output; for a transposed forward, the input): per group g, with
// a_g = a's channels of g and b_g likewise, conv(a_g^T, b_g^T, stride = dilation, dilation =
// stride) is [a_g channels, b_g channels, >= kernel], cut to the kernel and transposed to the
// weight's [b_g channels, a_g channels, kernel].
absl::StatusOr<Tensor> ConvWeightGrad(OpRegistry& r, const Tensor& a, const Tensor& b,
                                      IntArrayRef kernel, const ConvArgs& c) {
  const int64_t a_per = a.sizes()[1] / c.groups, b_per = b.sizes()[1] / c.groups;
  const int64_t dims = static_cast<int64_t>(kernel.size());
  std::vector<Tensor> groups;
  for (int64_t g = 0; g < c.groups; ++g) {
    Tensor ag = a, bg = b;
    if (c.groups > 1) {
      TSR_ASSIGN_OR_RETURN(ag, Narrow(a, 1, g * a_per, a_per));
      TSR_ASSIGN_OR_RETURN(bg, Narrow(b, 1, g * b_per, b_per));
    }
    TSR_ASSIGN_OR_RETURN(ag, Transpose(ag, 0, 1));
    TSR_ASSIGN_OR_RETURN(bg, Transpose(bg, 0, 1));
    TSR_ASSIGN_OR_RETURN(
        Tensor taps, CallOne(r, "convolution",
                             {ag, bg, Value(), Value(c.dilation), Value(c.padding), Value(c.stride),
                              Value(false), Value(IntList(dims, 0)), Value(int64_t{1})}));
    for (int64_t d = 0; d < dims; ++d) {
      if (taps.sizes()[2 + d] != kernel[d]) {
        TSR_ASSIGN_OR_RETURN(taps, Narrow(taps, 2 + d, 0, kernel[d]));
      }
    }
    TSR_ASSIGN_OR_RETURN(taps, Transpose(taps, 0, 1));
    groups.push_back(std::move(taps));
  }
  if (groups.size() == 1) return CallOne(r, "contiguous", {groups[0]});
  return CallOne(r, "cat", {Value(std::move(groups)), Value(int64_t{0})});
}

// convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
// transposed, output_padding, groups, output_mask) -> (grad_input, grad_weight, grad_bias)
Out ConvolutionBackward(const OperatorHandle& op, const Stack& s) {
  const Tensor& grad = s[0].tensor();
  const Tensor& input = s[1].tensor();
  const Tensor& weight = s[2].tensor();
  TSR_ASSIGN_OR_RETURN(const auto mask, OutputMask(op, s[10]));
  TSR_ASSIGN_OR_RETURN(const DimVector out_shape,
                       ForwardShape(op, "convolution",
                                    {input, weight, Value(), s[4], s[5], s[6], s[7], s[8], s[9]}));
  TSR_RETURN_IF_ERROR(
      CheckLike(op, "grad_output", grad, out_shape, input.dtype(), "the convolution's output"));
  if (!IsFloatingType(input.dtype())) return NotFloating(op, input.dtype());
  const int64_t out_channels = out_shape[1];
  if (!s[3].is_none()) {
    IntArrayRef bias = s[3].int_list();
    if (bias.size() != 1 || bias[0] != out_channels) {
      return Invalid(op, absl::StrFormat("expected bias_sizes [%d] (the output's channels), got %s",
                                         out_channels, ShapeToString(bias)));
    }
  }
  const int64_t dims = input.dim() - 2;
  ConvArgs c;
  TSR_ASSIGN_OR_RETURN(c.stride, ConvList(op, "stride", s[4], dims, 1));
  TSR_ASSIGN_OR_RETURN(c.padding, ConvList(op, "padding", s[5], dims, 0));
  TSR_ASSIGN_OR_RETURN(c.dilation, ConvList(op, "dilation", s[6], dims, 1));
  TSR_ASSIGN_OR_RETURN(const DimVector output_padding,
                       SpatialArg(op, "output_padding", s[8], dims, 0));
  c.transposed = s[7].to_bool();
  c.groups = s[9].to_int();
  // The forward ignores a plain convolution's output_padding; its backward refuses it, as
  // ATen's does.
  if (!c.transposed &&
      std::any_of(output_padding.begin(), output_padding.end(), [](int64_t p) { return p != 0; })) {
    return Invalid(op, absl::StrFormat("output_padding is not supported for non-transposed "
                                       "convolutions; got %s",
                                       ShapeToString(output_padding)));
  }
  OpRegistry& r = op.registry();
  std::vector<Tensor> grads(3);
  const Opmath opmath(input.dtype());
  // An empty input or grad_output: zero gradients, as ATen's empty-convolution backend gives
  // (for an input without channels that is also grad_bias, though grad_output need not be
  // empty then).
  if (grad.numel() == 0 || input.numel() == 0) {
    if (mask[0]) {
      TSR_ASSIGN_OR_RETURN(grads[0], Zeros(r, input.sizes(), input.dtype(), input.device()));
    }
    if (mask[1]) {
      TSR_ASSIGN_OR_RETURN(grads[1], Zeros(r, weight.sizes(), input.dtype(), input.device()));
    }
    if (mask[2]) {
      TSR_ASSIGN_OR_RETURN(grads[2], Zeros(r, {out_channels}, input.dtype(), input.device()));
    }
    return grads;
  }
  TSR_ASSIGN_OR_RETURN(const Value g, opmath.In(r, s[0]));
  if (mask[0]) {
    TSR_ASSIGN_OR_RETURN(const Value w, opmath.In(r, s[2]));
    IntList adjoint_padding(dims, 0);
    if (!c.transposed) {  // the transposed convolution's size, made the input's
      for (int64_t d = 0; d < dims; ++d) {
        const int64_t k = weight.sizes()[2 + d];
        adjoint_padding[d] =
            input.sizes()[2 + d] -
            ((out_shape[2 + d] - 1) * c.stride[d] - 2 * c.padding[d] + c.dilation[d] * (k - 1) + 1);
      }
    }
    TSR_ASSIGN_OR_RETURN(
        Tensor grad_input,
        CallOne(r, "convolution",
                {g, w, Value(), Value(c.stride), Value(c.padding), Value(c.dilation),
                 Value(!c.transposed), Value(std::move(adjoint_padding)), Value(c.groups)}));
    for (int64_t d = 0; d < dims; ++d) {
      if (grad_input.sizes()[2 + d] != input.sizes()[2 + d]) {
        TSR_ASSIGN_OR_RETURN(grad_input, Narrow(grad_input, 2 + d, 0, input.sizes()[2 + d]));
      }
    }
    TSR_ASSIGN_OR_RETURN(grads[0], opmath.Out(r, std::move(grad_input)));
    if (!grads[0].is_contiguous()) {
      TSR_ASSIGN_OR_RETURN(grads[0], CallOne(r, "contiguous", {grads[0]}));
    }
  }
  if (mask[1]) {
    TSR_ASSIGN_OR_RETURN(const Value x, opmath.In(r, s[1]));
    IntArrayRef kernel = weight.sizes().subspan(2);
    TSR_ASSIGN_OR_RETURN(Tensor grad_weight,
                         c.transposed ? ConvWeightGrad(r, g.tensor(), x.tensor(), kernel, c)
                                      : ConvWeightGrad(r, x.tensor(), g.tensor(), kernel, c));
    TSR_ASSIGN_OR_RETURN(grads[1], opmath.Out(r, std::move(grad_weight)));
  }
  if (mask[2]) {
    IntList over{0};
    for (int64_t d = 2; d < grad.dim(); ++d) over.push_back(d);
    TSR_ASSIGN_OR_RETURN(Tensor grad_bias,
                         CallOne(r, "sum.dim_IntList", {g, Value(std::move(over)), Value(false)}));
    TSR_ASSIGN_OR_RETURN(grads[2], opmath.Out(r, std::move(grad_bias)));
  }
  return grads;
}

// ---- pooling ----

// The pooled input's batch dims (all but the last two), flattened: [batch, H, W] -> batch.
int64_t PoolBatch(const Tensor& input) {
  int64_t batch = 1;
  for (int64_t d = 0; d + 2 < input.dim(); ++d) batch *= input.sizes()[d];
  return batch;
}

// max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation,
// ceil_mode, indices)
absl::StatusOr<Tensor> MaxPoolBackward(const OperatorHandle& op, const Stack& s) {
  const Tensor& grad = s[0].tensor();
  const Tensor& input = s[1].tensor();
  const Tensor& indices = s[7].tensor();
  TSR_ASSIGN_OR_RETURN(
      const DimVector out_shape,
      ForwardShape(op, "max_pool2d_with_indices", {input, s[2], s[3], s[4], s[5], s[6]}));
  TSR_RETURN_IF_ERROR(
      CheckLike(op, "grad_output", grad, out_shape, input.dtype(), "the pooling's output"));
  TSR_RETURN_IF_ERROR(
      CheckLike(op, "indices", indices, out_shape, ScalarType::kInt64, "the pooling's output"));
  if (!IsFloatingType(input.dtype())) return NotFloating(op, input.dtype());
  // -1: a window with no input element in it (all padding, with dilation), whose maximum the
  // forward could not place; its gradient goes nowhere, as in ATen's kernels.
  return MaxScatter(
      op, grad, input, indices, 2, /*minus_one_is_nowhere=*/true,
      absl::StrFormat("%d x %d", input.sizes()[input.dim() - 2], input.sizes()[input.dim() - 1]));
}

// Divisors: avg_pool2d's divisor of each output position along one spatial dim (the window's
// extent there; the divisor of a window is the product over both dims), as PyTorch's kernel
// computes them: the window [o * stride - pad, + kernel) clipped to the padded input, and with
// count_include_pad false to the input itself.
std::vector<double> Divisors(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t pad,
                             bool count_include_pad) {
  std::vector<double> d(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    int64_t start = o * stride - pad;
    int64_t end = std::min(start + k, in + pad);
    if (!count_include_pad) {
      start = std::max<int64_t>(start, 0);
      end = std::min(end, in);
    }
    d[o] = static_cast<double>(end - start);
  }
  return d;
}

// avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode,
// count_include_pad, divisor_override)
absl::StatusOr<Tensor> AvgPoolBackward(const OperatorHandle& op, const Stack& s) {
  const Tensor& grad = s[0].tensor();
  const Tensor& input = s[1].tensor();
  TSR_ASSIGN_OR_RETURN(const DimVector out_shape,
                       ForwardShape(op, "avg_pool2d", {input, s[2], s[3], s[4], s[5], s[6], s[7]}));
  TSR_RETURN_IF_ERROR(
      CheckLike(op, "grad_output", grad, out_shape, input.dtype(), "the pooling's output"));
  if (!IsFloatingType(input.dtype())) return NotFloating(op, input.dtype());
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(const auto kernel, Pair(op, "kernel_size", s[2], {0, 0}));
  TSR_ASSIGN_OR_RETURN(const auto stride, Pair(op, "stride", s[3], kernel));
  TSR_ASSIGN_OR_RETURN(const auto padding, Pair(op, "padding", s[4], {0, 0}));
  const bool count_include_pad = s[6].to_bool();
  const int64_t h = input.sizes()[input.dim() - 2], w = input.sizes()[input.dim() - 1];
  const int64_t oh = out_shape[out_shape.size() - 2], ow = out_shape.back();
  const int64_t batch = PoolBatch(input);
  const Opmath opmath(input.dtype());
  if (batch == 0 || h == 0 || w == 0) return Zeros(r, input.sizes(), input.dtype(), input.device());
  // Meta tensors hold no values: the divisors below are host values copied to the device.
  if (input.device().type == DeviceType::kMeta)
    return Empty(input.sizes(), input.dtype(), input.device());
  TSR_ASSIGN_OR_RETURN(const Value g, opmath.In(r, s[0]));
  TSR_ASSIGN_OR_RETURN(Tensor scaled, Reshape(r, g.tensor(), {batch, 1, oh, ow}));
  if (s[7].is_none()) {
    const std::vector<double> dh =
        Divisors(h, oh, kernel[0], stride[0], padding[0], count_include_pad);
    const std::vector<double> dw =
        Divisors(w, ow, kernel[1], stride[1], padding[1], count_include_pad);
    // The divisors, made on the host in the compute dtype (float32 or float64) and copied in.
    TSR_ASSIGN_OR_RETURN(Tensor divisor, Empty({oh, ow}, opmath.compute, input.device()));
    if (opmath.compute == ScalarType::kFloat64) {
      std::vector<double> values;
      for (double a : dh) {
        for (double b : dw) values.push_back(a * b);
      }
      TSR_RETURN_IF_ERROR(CopyHostToTensor(values.data(), divisor));
    } else {
      std::vector<float> values;
      for (double a : dh) {
        for (double b : dw) values.push_back(static_cast<float>(a * b));
      }
      TSR_RETURN_IF_ERROR(CopyHostToTensor(values.data(), divisor));
    }
    TSR_ASSIGN_OR_RETURN(scaled, CallOne(r, "div.Tensor", {scaled, divisor}));
  } else {
    TSR_ASSIGN_OR_RETURN(scaled, CallOne(r, "div.Scalar", {scaled, Value(Scalar(s[7].to_int()))}));
  }
  // Each window's share spread over its taps: positions of the padded input, from 0.
  TSR_ASSIGN_OR_RETURN(Tensor ones,
                       CallOne(r, "ones",
                               {Value(IntList{1, 1, kernel[0], kernel[1]}), Value(opmath.compute),
                                Value(), Value(input.device()), Value()}));
  TSR_ASSIGN_OR_RETURN(
      Tensor spread,
      CallOne(r, "convolution",
              {scaled, ones, Value(), Value(IntList{stride[0], stride[1]}), Value(IntList{0, 0}),
               Value(IntList{1, 1}), Value(true), Value(IntList{0, 0}), Value(int64_t{1})}));
  // The input's place in the padded positions; the rows and columns no window reached (the
  // floor mode's remainder) stay zero.
  const int64_t have_h = std::min(h, spread.sizes()[2] - padding[0]);
  const int64_t have_w = std::min(w, spread.sizes()[3] - padding[1]);
  TSR_ASSIGN_OR_RETURN(Tensor grad_input,
                       Zeros(r, {batch, 1, h, w}, opmath.compute, input.device()));
  if (have_h > 0 && have_w > 0) {
    TSR_ASSIGN_OR_RETURN(Tensor from, Narrow(spread, 2, padding[0], have_h));
    TSR_ASSIGN_OR_RETURN(from, Narrow(from, 3, padding[1], have_w));
    TSR_ASSIGN_OR_RETURN(Tensor into, Narrow(grad_input, 2, 0, have_h));
    TSR_ASSIGN_OR_RETURN(into, Narrow(into, 3, 0, have_w));
    TSR_RETURN_IF_ERROR(CallOne(r, "copy_", {into, from}).status());
  }
  TSR_ASSIGN_OR_RETURN(grad_input,
                       Reshape(r, grad_input, IntList(input.sizes().begin(), input.sizes().end())));
  return opmath.Out(r, std::move(grad_input));
}

// ---- embedding_dense_backward ----

// embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq)
absl::StatusOr<Tensor> EmbeddingBackward(const OperatorHandle& op, const Stack& s) {
  const Tensor& grad = s[0].tensor();
  const Tensor& indices = s[1].tensor();
  const int64_t num_weights = s[2].to_int();
  const int64_t padding_idx = s[3].to_int();
  const bool scale_grad_by_freq = s[4].to_bool();
  if (indices.dtype() != ScalarType::kInt64 && indices.dtype() != ScalarType::kInt32) {
    return Invalid(op, absl::StrFormat("expected indices of dtype int64 or int32, got %s",
                                       ScalarTypeName(indices.dtype())));
  }
  DimVector expected(indices.sizes().begin(), indices.sizes().end());
  if (grad.dim() != indices.dim() + 1 ||
      !SameDims(grad.sizes().subspan(0, indices.dim()), expected)) {
    return Invalid(op, absl::StrFormat("expected grad_output of shape %s + [embedding_dim] (the "
                                       "indices' shape and one more dim), got %s",
                                       ShapeToString(expected), ShapeToString(grad.sizes())));
  }
  if (num_weights < 0) {
    return Invalid(op, absl::StrFormat("expected num_weights >= 0, got %d", num_weights));
  }
  if (!IsFloatingType(grad.dtype())) return NotFloating(op, grad.dtype());
  OpRegistry& r = op.registry();
  const int64_t dim = grad.sizes().back(), count = indices.numel();
  const Opmath opmath(grad.dtype());
  TSR_ASSIGN_OR_RETURN(Tensor acc,
                       WithDoing(op, "the weight's gradient",
                                 Zeros(r, {num_weights, dim}, opmath.compute, grad.device())));
  if (count > 0 && dim > 0) {
    TSR_ASSIGN_OR_RETURN(const Value g, opmath.In(r, s[0]));
    TSR_ASSIGN_OR_RETURN(Tensor rows, Reshape(r, g.tensor(), {count, dim}));
    TSR_ASSIGN_OR_RETURN(Tensor index, Reshape(r, indices, {count}));
    if (index.dtype() != ScalarType::kInt64) {
      TSR_ASSIGN_OR_RETURN(Tensor wide, Empty({count}, ScalarType::kInt64, grad.device()));
      TSR_ASSIGN_OR_RETURN(index, CallOne(r, "copy_", {wide, index}));
    }
    Tensor padding_rows;  // bool [count, 1]: the rows that take no gradient
    if (padding_idx >= 0) {
      TSR_ASSIGN_OR_RETURN(Tensor is_pad,
                           CallOne(r, "eq.Scalar", {index, Value(Scalar(padding_idx))}));
      TSR_ASSIGN_OR_RETURN(padding_rows, Reshape(r, is_pad, {count, 1}));
      TSR_ASSIGN_OR_RETURN(
          rows, CallOne(r, "masked_fill.Scalar", {rows, padding_rows, Value(Scalar(0.0))}));
    }
    if (scale_grad_by_freq) {  // each row divided by how often its index occurs
      TSR_ASSIGN_OR_RETURN(Tensor counts, Zeros(r, {num_weights}, opmath.compute, grad.device()));
      TSR_ASSIGN_OR_RETURN(Tensor one, CallOne(r, "ones",
                                               {Value(IntList{count}), Value(opmath.compute),
                                                Value(), Value(grad.device()), Value()}));
      if (padding_rows.defined()) {
        TSR_ASSIGN_OR_RETURN(Tensor flat_pad, Reshape(r, padding_rows, {count}));
        TSR_ASSIGN_OR_RETURN(one,
                             CallOne(r, "masked_fill.Scalar", {one, flat_pad, Value(Scalar(0.0))}));
      }
      TSR_ASSIGN_OR_RETURN(
          counts,
          WithDoing(op, absl::StrFormat("expected indices in [0, num_weights = %d)", num_weights),
                    CallOne(r, "scatter_add", {counts, Value(int64_t{0}), index, one})));
      TSR_ASSIGN_OR_RETURN(Tensor per_row,
                           CallOne(r, "index_select", {counts, Value(int64_t{0}), index}));
      // A padding row counts 0 and carries 0: divided by 1, not 0.
      TSR_ASSIGN_OR_RETURN(per_row, CallOne(r, "clamp", {per_row, Value(Scalar(1.0)), Value()}));
      TSR_ASSIGN_OR_RETURN(per_row, Reshape(r, per_row, {count, 1}));
      TSR_ASSIGN_OR_RETURN(rows, CallOne(r, "div.Tensor", {rows, per_row}));
    }
    TSR_ASSIGN_OR_RETURN(Tensor column, Reshape(r, index, {count, 1}));
    TSR_ASSIGN_OR_RETURN(column, CallOne(r, "expand", {column, Value(IntList{count, dim})}));
    TSR_ASSIGN_OR_RETURN(
        acc,
        WithDoing(op, absl::StrFormat("expected indices in [0, num_weights = %d)", num_weights),
                  CallOne(r, "scatter_add", {acc, Value(int64_t{0}), column, rows})));
  }
  return opmath.Out(r, std::move(acc));
}

}  // namespace

absl::Status DefineNNBackwardOps(OpRegistry& registry) {
  return DefineAll(
      registry,
      {
          {"convolution_backward(Tensor grad_output, Tensor input, Tensor weight, SymInt[]? "
           "bias_sizes, int[] stride, int[] padding, int[] dilation, bool transposed, int[] "
           "output_padding, int groups, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
           MakeKernel<ConvolutionBackward>("core::convolution_backward")},
          {"convolution_backward.out(Tensor grad_output, Tensor input, Tensor weight, SymInt[]? "
           "bias_sizes, int[] stride, int[] padding, int[] dilation, bool transposed, int[] "
           "output_padding, int groups, bool[3] output_mask, *, Tensor(a!) out0, Tensor(b!) out1, "
           "Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), Tensor(c!))",
           MakeKernel<ComputeIntoOuts<ConvolutionBackward, 11, 3>>(
               "core::convolution_backward_out")},
          {"max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, int[2] kernel_size, "
           "int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices) -> "
           "Tensor",
           MakeKernel<ComputeOne<MaxPoolBackward>>("core::max_pool2d_with_indices_backward")},
          {"max_pool2d_with_indices_backward.grad_input(Tensor grad_output, Tensor self, int[2] "
           "kernel_size, int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, Tensor "
           "indices, *, Tensor(a!) grad_input) -> Tensor(a!)",
           MakeKernel<ComputeIntoOut<MaxPoolBackward, 8>>(
               "core::max_pool2d_with_indices_backward_grad_input")},
          {"avg_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] "
           "stride, int[2] padding, bool ceil_mode, bool count_include_pad, int? "
           "divisor_override) -> Tensor",
           MakeKernel<ComputeOne<AvgPoolBackward>>("core::avg_pool2d_backward")},
          {"avg_pool2d_backward.grad_input(Tensor grad_output, Tensor self, int[2] kernel_size, "
           "int[2] stride, int[2] padding, bool ceil_mode, bool count_include_pad, int? "
           "divisor_override, *, Tensor(a!) grad_input) -> Tensor(a!)",
           MakeKernel<ComputeIntoOut<AvgPoolBackward, 8>>("core::avg_pool2d_backward_grad_input")},
          {"embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, int "
           "padding_idx, bool scale_grad_by_freq) -> Tensor",
           MakeKernel<ComputeOne<EmbeddingBackward>>("core::embedding_dense_backward")},
          {"embedding_dense_backward.out(Tensor grad_output, Tensor indices, SymInt num_weights, "
           "int padding_idx, bool scale_grad_by_freq, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<ComputeIntoOut<EmbeddingBackward, 5>>("core::embedding_dense_backward_out")},
      },
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera

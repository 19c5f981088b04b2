// Linear algebra and NN ops of op set v1 beyond mm/bmm/addmm: schemas, meta functions with
// PyTorch's checks, and the user-facing composites over ATen's native ops (matmul, linear,
// conv2d -> convolution, max_pool2d -> max_pool2d_with_indices, layer_norm ->
// native_layer_norm, batch_norm -> native_batch_norm, softmax -> _softmax, embedding ->
// index_select).
#include <limits>
#include <string>

#include "absl/numeric/int128.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"
#include "dispatcher/ops/nn_args.h"
#include "dispatcher/ops/norm_checks.h"

namespace tessera {
namespace ops {
namespace {

using Out = absl::StatusOr<std::vector<Tensor>>;
const Device kMetaDevice(DeviceType::kMeta);

absl::Status CheckFloating(const OperatorHandle& op, const char* arg, const Tensor& t) {
  if (IsFloatingType(t.dtype())) return absl::OkStatus();
  return Invalid(op, absl::StrFormat("expected '%s' to be a floating point tensor, got %s", arg,
                                     ScalarTypeName(t.dtype())));
}

absl::Status CheckSameDtype(const OperatorHandle& op, const char* arg, const Tensor& t,
                            const Tensor& like) {
  if (t.dtype() == like.dtype()) return absl::OkStatus();
  return Invalid(op, absl::StrFormat("expected '%s' to have dtype %s (the input's), got %s", arg,
                                     ScalarTypeName(like.dtype()), ScalarTypeName(t.dtype())));
}

// Note [Window arithmetic in 128 bits]
// Convolution and pooling sizes come from arguments a caller chooses, any int64: input size,
// padding, kernel size, dilation, stride. Their formulas (input + 2 * padding, dilation *
// (kernel - 1) + 1, the output size) run in 128 bits, and what PyTorch's int64 formulas could
// not hold is refused: a padded input (input + 2 * padding), a kernel's extent (dilation *
// (kernel - 1) + 1) or an output size beyond int64, and for transposed convolution an output
// size plus the padding (its kernels solve output position + padding - tap * dilation for the
// input position). Any stride is taken, and 'same' padding's dilation * (kernel - 1) must fit.
// Within those bounds every formula here fits int64, and so does every window index a kernel
// computes (position * stride - padding + tap * dilation, and the offset of a tap inside the
// input); the CPU and GPU pooling kernels visit the taps inside the input alone
// (plugins/cpu/nn.cc, plugins/cuda/nn.h), so a kernel of 2^62 taps over a padded 4 x 4 input is
// legal and cheap, as in PyTorch.
using Wide = absl::int128;
constexpr int64_t kMaxInt64 = std::numeric_limits<int64_t>::max();

Wide Abs(Wide v) { return v < 0 ? -v : v; }

absl::Status CheckWindowExtent(const OperatorHandle& op, int64_t dim, Wide extent,
                               const std::string& what) {
  if (extent <= kMaxInt64) return absl::OkStatus();
  return Invalid(op, absl::StrFormat("the window arithmetic of spatial dim %d overflows int64 "
                                     "(%s); expected it to fit int64",
                                     dim, what));
}

// PooledSize: PyTorch's pooling_output_shape, in 128 bits (ceil_mode adds stride - 1); the
// result fits int64 once CheckWindowExtent has bounded the padded input.
int64_t PooledSize(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation,
                   bool ceil_mode) {
  const Wide span = Wide(in) + 2 * Wide(pad) - Wide(dilation) * (k - 1) - 1 +
                    (ceil_mode ? Wide(stride) - 1 : Wide(0));
  Wide out = (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;
  // With ceil_mode the last window must start inside the input or its left padding.
  if (ceil_mode && (out - 1) * stride >= Wide(in) + pad) --out;
  return static_cast<int64_t>(out);
}

// ---- convolution ----

// The dtypes PyTorch 1.13's CPU convolution computes: its slow paths (slow_conv2d,
// slow_conv3d, slow_conv_transpose2d/3d, slow_conv_dilated) dispatch over floating types and,
// depending on the path, integer ones; Tessera takes every integer type on every path (exact
// integer arithmetic, wrapping like PyTorch's integer GEMM) rather than copy which path refuses
// which. bool is refused, as in PyTorch.
bool ConvolutionDtype(ScalarType t) { return t != ScalarType::kBool; }

// convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
// with PyTorch's checks (Convolution.cpp's check_shape_forward) and messages. 1, 2 or 3 spatial
// dims; input [N, C_in, *], weight [C_out, C_in / groups, *k] or, transposed,
// [C_in, C_out / groups, *k].
Out ConvolutionMeta(const OperatorHandle& op, const Stack& s) {
  const Tensor& in = s[0].tensor();
  const Tensor& w = s[1].tensor();
  const bool transposed = s[6].to_bool();
  if (w.dim() < 3 || w.dim() > 5) {
    return Invalid(op, absl::StrFormat("expected a 3D, 4D or 5D weight (1, 2 or 3 spatial dims), "
                                       "got weight of size %s",
                                       ShapeToString(w.sizes())));
  }
  if (in.dim() != w.dim()) {
    return Invalid(
        op, absl::StrFormat("Expected %dD (batched) input to convolution for %dD weight "
                            "%s, but got input of size: %s",
                            w.dim(), w.dim(), ShapeToString(w.sizes()), ShapeToString(in.sizes())));
  }
  const int64_t dims = w.dim() - 2;
  TSR_ASSIGN_OR_RETURN(DimVector stride, SpatialArg(op, "stride", s[3], dims, 1));
  TSR_ASSIGN_OR_RETURN(DimVector padding, SpatialArg(op, "padding", s[4], dims, 0));
  TSR_ASSIGN_OR_RETURN(DimVector dilation, SpatialArg(op, "dilation", s[5], dims, 1));
  TSR_ASSIGN_OR_RETURN(DimVector output_padding, SpatialArg(op, "output_padding", s[7], dims, 0));
  const int64_t groups = s[8].to_int();
  for (int64_t i = 0; i < dims; ++i) {
    if (stride[i] <= 0) return Invalid(op, "non-positive stride is not supported");
    if (padding[i] < 0) return Invalid(op, "negative padding is not supported");
    if (output_padding[i] < 0) return Invalid(op, "negative output_padding is not supported");
    if (dilation[i] <= 0) return Invalid(op, "dilation should be greater than zero");
  }
  if (groups <= 0) return Invalid(op, "non-positive groups is not supported");
  const std::string wshape = ShapeToString(w.sizes());
  int64_t out_channels;
  if (!transposed) {
    if (w.sizes()[0] < groups) {
      return Invalid(op, absl::StrFormat("Given groups=%d, expected weight to be at least %d at "
                                         "dimension 0, but got weight of size %s instead",
                                         groups, groups, wshape));
    }
    if (w.sizes()[0] % groups != 0) {
      return Invalid(op, absl::StrFormat("Given groups=%d, expected weight to be divisible by %d "
                                         "at dimension 0, but got weight of size %s instead",
                                         groups, groups, wshape));
    }
    // An empty weight ([2^32, 2^32, 0]) passes groups = 2^32 above: the product may not fit.
    TSR_ASSIGN_OR_RETURN(const int64_t in_channels,
                         CheckedMul(w.sizes()[1], groups, op.name(), "input channels"));
    if (in.sizes()[1] != in_channels) {
      return Invalid(op, absl::StrFormat("expected input %s to have %d channels (weight %s, "
                                         "groups %d), but got %d channels instead",
                                         ShapeToString(in.sizes()), in_channels, wshape, groups,
                                         in.sizes()[1]));
    }
    out_channels = w.sizes()[0];
  } else {
    if (in.sizes()[1] != w.sizes()[0]) {
      return Invalid(
          op, absl::StrFormat("Given transposed=1, weight of size %s, expected input %s "
                              "to have %d channels, but got %d channels instead",
                              wshape, ShapeToString(in.sizes()), w.sizes()[0], in.sizes()[1]));
    }
    if (w.sizes()[0] % groups != 0) {
      return Invalid(op, absl::StrFormat("Given groups=%d, expected weight to be divisible by %d "
                                         "at dimension 0, but got weight of size %s instead",
                                         groups, groups, wshape));
    }
    for (int64_t i = 0; i < dims; ++i) {
      // PyTorch's slow_conv_transpose shape check: the extra output rows must not reach past
      // what one more stride or dilation step would produce.
      if (output_padding[i] >= stride[i] && output_padding[i] >= dilation[i]) {
        return Invalid(op, absl::StrFormat("output padding must be smaller than either stride or "
                                           "dilation, but got output_padding %s, stride %s, "
                                           "dilation %s",
                                           ShapeToString(output_padding), ShapeToString(stride),
                                           ShapeToString(dilation)));
      }
    }
    // An empty weight (0 at dim 0) passes any groups: the product may not fit.
    TSR_ASSIGN_OR_RETURN(out_channels,
                         CheckedMul(w.sizes()[1], groups, op.name(), "output channels"));
  }
  if (!ConvolutionDtype(in.dtype())) {
    return absl::UnimplementedError(
        absl::StrFormat("%s: not implemented for dtype %s", op.name(), ScalarTypeName(in.dtype())));
  }
  if (w.dtype() != in.dtype()) {
    return Invalid(op, absl::StrFormat("Input type (%s) and weight type (%s) should be the same",
                                       ScalarTypeName(in.dtype()), ScalarTypeName(w.dtype())));
  }
  if (s[2].is_tensor()) {
    const Tensor& b = s[2].tensor();
    if (b.dtype() != in.dtype()) {
      return Invalid(op, absl::StrFormat("Input type (%s) and bias type (%s) should be the same",
                                         ScalarTypeName(in.dtype()), ScalarTypeName(b.dtype())));
    }
    if (b.dim() != 1 || b.sizes()[0] != out_channels) {
      return Invalid(op, absl::StrFormat("Given weight of size %s, expected bias to be "
                                         "1-dimensional with %d elements, but got bias of size %s "
                                         "instead",
                                         wshape, out_channels, ShapeToString(b.sizes())));
    }
  }
  DimVector out{in.sizes()[0], out_channels};
  for (int64_t i = 0; i < dims; ++i) {
    const int64_t in_size = in.sizes()[2 + i], k = w.sizes()[2 + i];
    // Note [Window arithmetic in 128 bits]
    TSR_RETURN_IF_ERROR(CheckWindowExtent(
        op, i, Abs(Wide(dilation[i]) * (k - 1) + 1),
        absl::StrFormat("dilation %d * (kernel size %d - 1) + 1", dilation[i], k)));
    if (!transposed) {
      TSR_RETURN_IF_ERROR(CheckWindowExtent(
          op, i, Wide(in_size) + 2 * Wide(padding[i]),
          absl::StrFormat("input size %d + 2 * padding %d", in_size, padding[i])));
      const int64_t padded = in_size + 2 * padding[i], span = dilation[i] * (k - 1) + 1;
      if (padded < span) {
        return Invalid(op, absl::StrFormat("Calculated padded input size per channel: %d (dim %d). "
                                           "Kernel size: %d. Kernel size can't be greater than "
                                           "actual input size",
                                           padded, i, span));
      }
      // A kernel of size 0 has a span of 1 - dilation: the output may pass int64 (found by
      // the op_meta fuzzer).
      const Wide o = (Wide(padded) - span) / stride[i] + 1;
      TSR_RETURN_IF_ERROR(CheckWindowExtent(
          op, i, o,
          absl::StrFormat("output size (%d - %d) / stride %d + 1", padded, span, stride[i])));
      out.push_back(static_cast<int64_t>(o));
    } else {
      // An empty input (-1 * stride) with a large padding may pass below int64's range.
      const Wide o = Wide(in_size - 1) * stride[i] - 2 * Wide(padding[i]) +
                     Wide(dilation[i]) * (k - 1) + output_padding[i] + 1;
      // The kernels form output position + padding (Note [Window arithmetic in 128 bits]).
      TSR_RETURN_IF_ERROR(CheckWindowExtent(
          op, i, o + padding[i],
          absl::StrFormat("output size (input size %d - 1) * stride %d - 2 * padding %d + "
                          "dilation %d * (kernel size %d - 1) + output_padding %d + 1, plus the "
                          "padding",
                          in_size, stride[i], padding[i], dilation[i], k, output_padding[i])));
      if (o <= 0) {
        return Invalid(op, absl::StrFormat("Given input size per channel: %s. Calculated output "
                                           "size per channel: %d (dim %d). Output size is too "
                                           "small",
                                           ShapeToString(in.sizes()),
                                           static_cast<int64_t>(std::max(o, Wide(INT64_MIN))), i));
      }
      out.push_back(static_cast<int64_t>(o));
    }
  }
  return One(Empty(out, in.dtype(), kMetaDevice));
}

// Convolution composites (conv1d/2d/3d, conv_transpose1d/2d/3d): an input with no batch dim
// (one dim less than the weight) is an unbatched one, as in PyTorch; it gains a batch of 1 and
// loses it again.
absl::StatusOr<Tensor> ConvolutionOf(const OperatorHandle& op, Tensor in, const Value& weight,
                                     const Value& bias, const Value& stride, const Value& padding,
                                     const Value& dilation, bool transposed,
                                     const Value& output_padding, const Value& groups,
                                     int64_t dims) {
  if (in.dim() != dims + 1 && in.dim() != dims + 2) {
    return Invalid(op, absl::StrFormat("Expected %dD (unbatched) or %dD (batched) input to %s, but "
                                       "got input of size: %s",
                                       dims + 1, dims + 2, op.name(), ShapeToString(in.sizes())));
  }
  const bool unbatched = in.dim() == dims + 1;
  if (unbatched) {
    TSR_ASSIGN_OR_RETURN(in, Unsqueeze(in, 0));
  }
  TSR_ASSIGN_OR_RETURN(Tensor out, CallOne(op.registry(), "convolution",
                                           {in, weight, bias, stride, padding, dilation,
                                            Value(transposed), output_padding, groups}));
  if (unbatched) return SqueezeDims(out, {0});
  return out;
}

// conv{1,2,3}d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)
template <int kDims>
Out ConvK(const OperatorHandle& op, const Stack& s) {
  return One(ConvolutionOf(op, s[0].tensor(), s[1], s[2], s[3], s[4], s[5], false,
                           Value(IntList{0}), s[6], kDims));
}

// conv{1,2,3}d.padding(input, weight, bias=None, stride=1, str padding="valid", dilation=1,
// groups=1), as PyTorch's _convolution_mode: 'valid' is no padding; 'same' pads each spatial dim
// by dilation * (kernel - 1) in all, half on the left, and needs stride 1. An odd total puts
// the extra element on the right; convolution pads symmetrically, so that dim is padded one
// more on both sides and its first output dropped (with stride 1, the rest is the same).
template <int kDims>
Out ConvPaddingK(const OperatorHandle& op, const Stack& s) {
  const std::string& mode = s[4].string();
  if (mode == "valid") {
    return One(ConvolutionOf(op, s[0].tensor(), s[1], s[2], s[3], Value(IntList{0}), s[5], false,
                             Value(IntList{0}), s[6], kDims));
  }
  if (mode != "same") {
    return Invalid(op, absl::StrFormat("Invalid padding string: '%s'", mode));
  }
  const Tensor& w = s[1].tensor();
  if (w.dim() != kDims + 2) {
    return Invalid(op, absl::StrFormat("expected a %dD weight, got weight of size %s", kDims + 2,
                                       ShapeToString(w.sizes())));
  }
  TSR_ASSIGN_OR_RETURN(DimVector stride, SpatialArg(op, "stride", s[3], kDims, 1));
  TSR_ASSIGN_OR_RETURN(DimVector dilation, SpatialArg(op, "dilation", s[5], kDims, 1));
  for (int64_t st : stride) {
    if (st != 1) return Invalid(op, "padding='same' is not supported for strided convolutions");
  }
  IntList padding;
  std::vector<int> odd;
  for (int i = 0; i < kDims; ++i) {
    const Wide wide_total = Wide(dilation[i]) * (w.sizes()[2 + i] - 1);
    TSR_RETURN_IF_ERROR(
        CheckWindowExtent(op, i, Abs(wide_total),
                          absl::StrFormat("padding='same': dilation %d * (kernel size %d - 1)",
                                          dilation[i], w.sizes()[2 + i])));
    const int64_t total = static_cast<int64_t>(wide_total);
    padding.push_back(total / 2 + total % 2);
    if (total % 2 != 0) odd.push_back(i);
  }
  TSR_ASSIGN_OR_RETURN(
      Tensor out, ConvolutionOf(op, s[0].tensor(), s[1], s[2], s[3], Value(padding), s[5], false,
                                Value(IntList{0}), s[6], kDims));
  for (int i : odd) {
    TSR_ASSIGN_OR_RETURN(out, Slice(out, out.dim() - kDims + i, 1, std::nullopt, 1));
  }
  return std::vector<Tensor>{out};
}

// conv_transpose{1,2,3}d.input(input, weight, bias=None, stride=1, padding=0,
// output_padding=0, groups=1, dilation=1): note dilation comes last here, as in PyTorch.
template <int kDims>
Out ConvTransposeK(const OperatorHandle& op, const Stack& s) {
  return One(
      ConvolutionOf(op, s[0].tensor(), s[1], s[2], s[3], s[4], s[7], true, s[5], s[6], kDims));
}

// ---- pooling ----

struct PoolArgs {
  std::array<int64_t, 2> kernel, stride, padding, dilation;
  bool ceil_mode;
  std::array<int64_t, 2> out;
};

absl::StatusOr<PoolArgs> PoolShape(const OperatorHandle& op, const Tensor& in, const Stack& s,
                                   bool has_dilation) {
  // A 4-D input's batch may be empty, nothing else (PyTorch's check: the windows of an empty
  // plane would read nothing and write what they found).
  bool empty_plane = false;
  for (int64_t d = in.dim() == 4 ? 1 : 0; d < in.dim(); ++d) empty_plane |= in.sizes()[d] == 0;
  if ((in.dim() != 3 && in.dim() != 4) || empty_plane) {
    return Invalid(op, absl::StrFormat("expected a 3D or 4D (batch mode) input with optional 0 dim "
                                       "batch size, got %s",
                                       ShapeToString(in.sizes())));
  }
  PoolArgs a;
  TSR_ASSIGN_OR_RETURN(a.kernel, Pair(op, "kernel_size", s[1], {0, 0}));
  TSR_ASSIGN_OR_RETURN(a.stride, Pair(op, "stride", s[2], a.kernel));
  TSR_ASSIGN_OR_RETURN(a.padding, Pair(op, "padding", s[3], {0, 0}));
  a.dilation = {1, 1};
  if (has_dilation) {
    TSR_ASSIGN_OR_RETURN(a.dilation, Pair(op, "dilation", s[4], {1, 1}));
  }
  a.ceil_mode = s[has_dilation ? 5 : 4].to_bool();
  const int64_t h = in.sizes()[in.dim() - 2], w = in.sizes()[in.dim() - 1];
  for (int i = 0; i < 2; ++i) {
    if (a.kernel[i] <= 0 || a.stride[i] <= 0 || a.dilation[i] <= 0) {
      return Invalid(op, absl::StrFormat("expected kernel_size, stride and dilation > 0, got "
                                         "kernel_size %d, stride %d, dilation %d",
                                         a.kernel[i], a.stride[i], a.dilation[i]));
    }
    const Wide effective = Wide(a.dilation[i]) * (a.kernel[i] - 1) + 1;
    if (a.padding[i] < 0 || a.padding[i] > effective / 2) {
      return Invalid(op, absl::StrFormat("pad should be at most half of effective kernel size, "
                                         "but got pad=%d, kernel_size=%d and dilation=%d",
                                         a.padding[i], a.kernel[i], a.dilation[i]));
    }
    // Note [Window arithmetic in 128 bits]
    const int64_t in_size = i == 0 ? h : w;
    TSR_RETURN_IF_ERROR(CheckWindowExtent(
        op, i, Wide(in_size) + 2 * Wide(a.padding[i]),
        absl::StrFormat("input size %d + 2 * padding %d", in_size, a.padding[i])));
    TSR_RETURN_IF_ERROR(CheckWindowExtent(
        op, i, effective,
        absl::StrFormat("dilation %d * (kernel_size %d - 1) + 1", a.dilation[i], a.kernel[i])));
    a.out[i] =
        PooledSize(in_size, a.kernel[i], a.padding[i], a.stride[i], a.dilation[i], a.ceil_mode);
    if (a.out[i] <= 0) {
      return Invalid(op, absl::StrFormat("output size is too small (input %s, kernel %d)",
                                         ShapeToString(in.sizes()), a.kernel[i]));
    }
  }
  return a;
}

DimVector PooledShape(const Tensor& in, const PoolArgs& a) {
  DimVector out(in.sizes().begin(), in.sizes().end() - 2);
  out.push_back(a.out[0]);
  out.push_back(a.out[1]);
  return out;
}

// max_pool2d_with_indices(self, kernel_size, stride=[], padding=0, dilation=1, ceil_mode=False)
Out MaxPoolMeta(const OperatorHandle& op, const Stack& s) {
  const Tensor& in = s[0].tensor();
  TSR_ASSIGN_OR_RETURN(PoolArgs a, PoolShape(op, in, s, true));
  const DimVector shape = PooledShape(in, a);
  TSR_ASSIGN_OR_RETURN(Tensor values, Empty(shape, in.dtype(), kMetaDevice));
  TSR_ASSIGN_OR_RETURN(Tensor indices, Empty(shape, ScalarType::kInt64, kMetaDevice));
  return std::vector<Tensor>{values, indices};
}
Out MaxPool2dMeta(const OperatorHandle& op, const Stack& s) {
  TSR_ASSIGN_OR_RETURN(std::vector<Tensor> both, MaxPoolMeta(op, s));
  return std::vector<Tensor>{both[0]};
}
Out MaxPool2dK(const OperatorHandle& op, const Stack& s) {
  TSR_ASSIGN_OR_RETURN(OperatorHandle with, op.registry().Find("max_pool2d_with_indices"));
  Stack stack(s.begin(), s.end());
  TSR_RETURN_IF_ERROR(op.registry().Call(with, &stack));
  return std::vector<Tensor>{stack[0].tensor()};
}

// avg_pool2d(self, kernel_size, stride=[], padding=0, ceil_mode=False, count_include_pad=True,
// divisor_override=None)
Out AvgPoolMeta(const OperatorHandle& op, const Stack& s) {
  const Tensor& in = s[0].tensor();
  TSR_ASSIGN_OR_RETURN(PoolArgs a, PoolShape(op, in, s, false));
  if (!s[6].is_none() && s[6].to_int() == 0) return Invalid(op, "divisor must be not zero");
  return One(Empty(PooledShape(in, a), in.dtype(), kMetaDevice));
}

// ---- normalization ----

// native_layer_norm(input, normalized_shape, weight, bias, eps) -> (out, mean, rstd)
Out LayerNormMeta(const OperatorHandle& op, const Stack& s) {
  const Tensor& in = s[0].tensor();
  IntArrayRef norm = s[1].int_list();
  TSR_RETURN_IF_ERROR(CheckNormalizedShape(op, in, norm));
  const int64_t axis = in.dim() - static_cast<int64_t>(norm.size());
  TSR_RETURN_IF_ERROR(CheckFloating(op, "input", in));
  for (int i : {2, 3}) {
    if (!s[i].is_tensor()) continue;
    const Tensor& t = s[i].tensor();
    if (t.sizes() != norm) {
      return Invalid(op,
                     absl::StrFormat("expected %s of shape %s, got %s", i == 2 ? "weight" : "bias",
                                     ShapeToString(norm), ShapeToString(t.sizes())));
    }
    TSR_RETURN_IF_ERROR(CheckSameDtype(op, i == 2 ? "weight" : "bias", t, in));
  }
  DimVector stat(in.sizes().begin(), in.sizes().begin() + axis);
  stat.resize(in.dim(), 1);
  TSR_ASSIGN_OR_RETURN(Tensor out, Empty(in.sizes(), in.dtype(), kMetaDevice));
  TSR_ASSIGN_OR_RETURN(Tensor mean, Empty(stat, in.dtype(), kMetaDevice));
  TSR_ASSIGN_OR_RETURN(Tensor rstd, Empty(stat, in.dtype(), kMetaDevice));
  return std::vector<Tensor>{out, mean, rstd};
}
// layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True)
Out LayerNormK(const OperatorHandle& op, const Stack& s) {
  TSR_ASSIGN_OR_RETURN(OperatorHandle native, op.registry().Find("native_layer_norm"));
  Stack stack{s[0], s[1], s[2], s[3], s[4]};
  TSR_RETURN_IF_ERROR(op.registry().Call(native, &stack));
  return std::vector<Tensor>{stack[0].tensor()};
}

// native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)
// -> (out, save_mean, save_invstd). Training normalizes with the batch statistics, returns them
// ([C]: the mean and 1 / sqrt(biased var + eps)) and updates the running statistics in place
// when given; inference uses the running statistics and returns empty ([0]) save_* tensors, as
// PyTorch's batch_norm_cpu does.
Out BatchNormMeta(const OperatorHandle& op, const Stack& s) {
  const Tensor& in = s[0].tensor();
  TSR_RETURN_IF_ERROR(CheckChannelsInput(op, in));
  const bool training = s[5].to_bool();
  TSR_RETURN_IF_ERROR(CheckFloating(op, "input", in));
  const int64_t channels = in.sizes()[1];
  const char* names[] = {"", "weight", "bias", "running_mean", "running_var"};
  for (int i = 1; i <= 4; ++i) {
    if (!s[i].is_tensor()) {
      if (i >= 3 && !training) {
        return Invalid(op, absl::StrFormat("%s must be defined in evaluation mode", names[i]));
      }
      continue;
    }
    const Tensor& t = s[i].tensor();
    if (t.dim() != 1 || t.sizes()[0] != channels) {
      return Invalid(op, absl::StrFormat("expected %s of shape [%d] (the input's channels), got %s",
                                         names[i], channels, ShapeToString(t.sizes())));
    }
    TSR_RETURN_IF_ERROR(CheckSameDtype(op, names[i], t, in));
  }
  const int64_t stat = training ? channels : 0;
  TSR_ASSIGN_OR_RETURN(Tensor out, Empty(in.sizes(), in.dtype(), kMetaDevice));
  TSR_ASSIGN_OR_RETURN(Tensor mean, Empty({stat}, in.dtype(), kMetaDevice));
  TSR_ASSIGN_OR_RETURN(Tensor invstd, Empty({stat}, in.dtype(), kMetaDevice));
  return std::vector<Tensor>{out, mean, invstd};
}
// batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn)
// An empty input returns an empty copy and leaves the running statistics alone, as PyTorch's
// _batch_norm_impl_index does (its native op, given one in training, divides by zero: the
// statistics of nothing would turn the running ones into NaN).
absl::StatusOr<Tensor> BatchNormOf(OpRegistry& r, Stack stack) {
  const Tensor in = stack[0].tensor();
  if (in.defined() && in.numel() == 0) return CallOne(r, "clone", {in, Value()});
  TSR_ASSIGN_OR_RETURN(OperatorHandle native, r.Find("native_batch_norm"));
  TSR_RETURN_IF_ERROR(r.Call(native, &stack));
  return stack[0].tensor();
}
Out BatchNormK(const OperatorHandle& op, const Stack& s) {
  return One(BatchNormOf(op.registry(), Stack(s.begin(), s.begin() + 8)));
}

// instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
// cudnn_enabled), as PyTorch writes it: batch norm over the input seen as [1, N * C, ...], with
// weight, bias and the running statistics repeated N times; the running statistics then take
// the mean of their N updated copies.
Out InstanceNormK(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& in = s[0].tensor();
  const bool use_input_stats = s[5].to_bool();
  if (!use_input_stats && (!s[3].is_tensor() || !s[4].is_tensor())) {
    return Invalid(op,
                   "Expected running_mean and running_var to be defined when use_input_stats "
                   "is false");
  }
  TSR_RETURN_IF_ERROR(CheckChannelsInput(op, in));
  const int64_t b = in.sizes()[0], c = in.sizes()[1];
  // The folded channels b * c may pass int64 for an empty input (found by the op_meta fuzzer).
  TSR_ASSIGN_OR_RETURN(const int64_t bc, CheckedMul(b, c, op.name(), "batch * channels"));
  // t repeated b times ([c] -> [b * c]), a new tensor (batch norm may write the running stats).
  auto repeat = [&](const Value& v) -> absl::StatusOr<Value> {
    if (!v.is_tensor()) return v;
    const Tensor& t = v.tensor();
    if (t.dim() != 1 || t.sizes()[0] != c) {
      return Invalid(op, absl::StrFormat("expected weight, bias and running statistics of shape "
                                         "[%d] (the input's channels), got %s",
                                         c, ShapeToString(t.sizes())));
    }
    TSR_ASSIGN_OR_RETURN(Tensor row, Unsqueeze(t, 0));
    TSR_ASSIGN_OR_RETURN(Tensor grid, Expand(row, {b, c}));
    TSR_ASSIGN_OR_RETURN(Tensor dense, CallOne(r, "clone", {grid, Value()}));
    TSR_ASSIGN_OR_RETURN(Tensor flat, View(dense, {bc}));
    return Value(flat);
  };
  TSR_ASSIGN_OR_RETURN(Value weight, repeat(s[1]));
  TSR_ASSIGN_OR_RETURN(Value bias, repeat(s[2]));
  TSR_ASSIGN_OR_RETURN(Value running_mean, repeat(s[3]));
  TSR_ASSIGN_OR_RETURN(Value running_var, repeat(s[4]));
  DimVector shape(in.sizes().begin(), in.sizes().end());
  shape[0] = 1;
  shape[1] = bc;
  TSR_ASSIGN_OR_RETURN(Tensor folded,
                       CallOne(r, "reshape", {in, Value(IntList(shape.begin(), shape.end()))}));
  TSR_ASSIGN_OR_RETURN(const Tensor out, BatchNormOf(r, {folded, weight, bias, running_mean,
                                                         running_var, s[5], s[6], s[7]}));
  for (int i : {3, 4}) {
    if (!s[i].is_tensor()) continue;
    const Tensor& repeated = (i == 3 ? running_mean : running_var).tensor();
    TSR_ASSIGN_OR_RETURN(Tensor grid, View(repeated, {b, c}));
    TSR_ASSIGN_OR_RETURN(Tensor mean,
                         CallOne(r, "mean.dim", {grid, Value(IntList{0}), Value(false), Value()}));
    TSR_ASSIGN_OR_RETURN(Tensor copied, CallOne(r, "copy_", {s[i], mean, Value(false)}));
  }
  return One(View(out, in.sizes()));
}

// ---- linear, matmul ----

// linear(input, weight, bias=None): input [*, in], weight [out, in], bias [out].
Out LinearMeta(const OperatorHandle& op, const Stack& s) {
  const Tensor& in = s[0].tensor();
  const Tensor& w = s[1].tensor();
  if (in.dim() < 1 || w.dim() != 2 || in.sizes()[in.dim() - 1] != w.sizes()[1]) {
    return Invalid(op, absl::StrFormat("input %s and weight %s cannot be multiplied (expected "
                                       "input [*, in] and weight [out, in])",
                                       ShapeToString(in.sizes()), ShapeToString(w.sizes())));
  }
  TSR_RETURN_IF_ERROR(CheckSameDtype(op, "weight", w, in));
  if (s[2].is_tensor()) {
    const Tensor& b = s[2].tensor();
    TSR_RETURN_IF_ERROR(CheckSameDtype(op, "bias", b, in));
    if (b.numel() != w.sizes()[0] || b.dim() > 1) {
      return Invalid(op, absl::StrFormat("expected bias of shape [%d], got %s", w.sizes()[0],
                                         ShapeToString(b.sizes())));
    }
  }
  DimVector out(in.sizes().begin(), in.sizes().end() - 1);
  out.push_back(w.sizes()[0]);
  return One(Empty(out, in.dtype(), kMetaDevice));
}

// Matmul: PyTorch's torch.matmul over mm and bmm (1D operands gain and lose a dim, batch dims
// broadcast).
absl::StatusOr<Tensor> Matmul(OpRegistry& r, const Tensor& a, const Tensor& b) {
  if (a.dim() == 0 || b.dim() == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "matmul: both arguments need at least 1 dimension, got %dD and %dD", a.dim(), b.dim()));
  }
  if (a.dtype() == ScalarType::kBool || b.dtype() == ScalarType::kBool) {
    return absl::UnimplementedError("matmul: not implemented for dtype bool");
  }
  if (a.dim() == 1 && b.dim() == 1) {  // dot product
    if (a.sizes()[0] != b.sizes()[0]) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "matmul: inconsistent tensor size, expected tensor [%d] and src [%d] to have the same "
          "number of elements",
          a.sizes()[0], b.sizes()[0]));
    }
    TSR_ASSIGN_OR_RETURN(Tensor prod, CallOne(r, "mul.Tensor", {a, b}));
    return CallOne(r, "sum", {prod, Value(prod.dtype())});  // dot keeps the dtype
  }
  // The contracted sizes, checked here so that the error names matmul and its own operands,
  // not the mm or bmm it becomes and their unsqueezed shapes.
  const int64_t k_a = a.sizes()[a.dim() - 1];
  const int64_t k_b = b.sizes()[b.dim() == 1 ? 0 : b.dim() - 2];
  if (k_a != k_b) {
    return absl::InvalidArgumentError(
        absl::StrFormat("matmul: shapes %s and %s cannot be multiplied (%d != %d)",
                        ShapeToString(a.sizes()), ShapeToString(b.sizes()), k_a, k_b));
  }
  TSR_ASSIGN_OR_RETURN(Tensor a2, a.dim() == 1 ? Unsqueeze(a, 0) : absl::StatusOr<Tensor>(a));
  TSR_ASSIGN_OR_RETURN(Tensor b2, b.dim() == 1 ? Unsqueeze(b, 1) : absl::StatusOr<Tensor>(b));
  Tensor out;
  if (a2.dim() == 2 && b2.dim() == 2) {
    TSR_ASSIGN_OR_RETURN(out, CallOne(r, "mm", {a2, b2}));
  } else {
    const int64_t n = a2.sizes()[a2.dim() - 2], k = a2.sizes()[a2.dim() - 1];
    const int64_t k2 = b2.sizes()[b2.dim() - 2], m = b2.sizes()[b2.dim() - 1];
    TSR_ASSIGN_OR_RETURN(DimVector batch,
                         BroadcastShapes(IntArrayRef(a2.sizes().data(), a2.dim() - 2),
                                         IntArrayRef(b2.sizes().data(), b2.dim() - 2)));
    // The broadcast batch is flattened to one dim of `count` matrices; with n or k 0 its
    // product may pass int64 (found by the op_meta fuzzer): refused, even where the result
    // would be empty (PyTorch's int64 product overflows there).
    absl::StatusOr<int64_t> count = ComputeNumel(batch);
    if (!count.ok()) {
      return absl::Status(count.status().code(),
                          absl::StrCat("matmul: the broadcast batch: ", count.status().message()));
    }
    DimVector ea = batch, eb = batch, out_shape = batch;
    ea.insert(ea.end(), {n, k});
    eb.insert(eb.end(), {k2, m});
    out_shape.insert(out_shape.end(), {n, m});
    TSR_ASSIGN_OR_RETURN(Tensor xa, Expand(a2, ea));
    TSR_ASSIGN_OR_RETURN(Tensor xb, Expand(b2, eb));
    TSR_ASSIGN_OR_RETURN(Tensor ra, CallOne(r, "reshape", {xa, Value(IntList{*count, n, k})}));
    TSR_ASSIGN_OR_RETURN(Tensor rb, CallOne(r, "reshape", {xb, Value(IntList{*count, k2, m})}));
    TSR_ASSIGN_OR_RETURN(Tensor prod, CallOne(r, "bmm", {ra, rb}));
    TSR_ASSIGN_OR_RETURN(out, View(prod, out_shape));
  }
  if (a.dim() == 1) {
    TSR_ASSIGN_OR_RETURN(out, SqueezeDims(out, {out.dim() - 2}));
  }
  if (b.dim() == 1) {
    TSR_ASSIGN_OR_RETURN(out, SqueezeDims(out, {out.dim() - 1}));
  }
  return out;
}
Out MatmulK(const OperatorHandle& op, const Stack& s) {
  return One(Matmul(op.registry(), s[0].tensor(), s[1].tensor()));
}

// The composite linear: input @ weight.T (+ bias), through addmm for 2D inputs.
Out LinearK(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& in = s[0].tensor();
  TSR_ASSIGN_OR_RETURN(Tensor wt, T(s[1].tensor()));
  if (in.dim() == 2 && s[2].is_tensor()) return One(CallOne(r, "addmm", {s[2], in, wt}));
  TSR_ASSIGN_OR_RETURN(Tensor out, Matmul(r, in, wt));
  if (s[2].is_tensor()) return One(CallOne(r, "add.Tensor", {out, s[2]}));
  return std::vector<Tensor>{out};
}

absl::StatusOr<Tensor> MatmulOf(const OperatorHandle& op, const Stack& s) {
  return Matmul(op.registry(), s[0].tensor(), s[1].tensor());
}

// softmax.int / log_softmax.int(self, dim, dtype=None) -> _softmax / _log_softmax.
template <bool kLog>
Out SoftmaxK(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  Tensor in = s[0].tensor();
  if (!s[2].is_none()) {
    TSR_ASSIGN_OR_RETURN(in, CallOne(r, "_to_copy", {in, s[2]}));
  }
  return One(CallOne(r, kLog ? "_log_softmax" : "_softmax", {in, s[1], Value(false)}));
}

// embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False)
Out EmbeddingK(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& weight = s[0].tensor();
  const Tensor& indices = s[1].tensor();
  if (weight.dim() != 2) {
    return Invalid(op, absl::StrFormat("expected a 2D weight [num, dim], got %s",
                                       ShapeToString(weight.sizes())));
  }
  TSR_ASSIGN_OR_RETURN(Tensor flat, CallOne(r, "reshape", {indices, Value(IntList{-1})}));
  TSR_ASSIGN_OR_RETURN(Tensor rows, CallOne(r, "index_select", {weight, Value(int64_t{0}), flat}));
  std::vector<int64_t> shape(indices.sizes().begin(), indices.sizes().end());
  shape.push_back(weight.sizes()[1]);
  return One(View(rows, shape));
}

}  // namespace

// A pair argument (int[2]) given as one value applies to both dims; [] means `fallback`.
absl::StatusOr<std::array<int64_t, 2>> Pair(const OperatorHandle& op, const char* arg,
                                            const Value& v, std::array<int64_t, 2> fallback) {
  IntArrayRef list = v.int_list();
  if (list.empty()) return fallback;
  if (list.size() == 1) return std::array<int64_t, 2>{list[0], list[0]};
  if (list.size() == 2) return std::array<int64_t, 2>{list[0], list[1]};
  return Invalid(op,
                 absl::StrFormat("expected '%s' to have 1 or 2 values, got %d", arg, list.size()));
}

// A per-spatial-dim argument of convolution: one value applies to every dim, [] means
// `fallback`, otherwise one value per dim (PyTorch's expand_param_if_needed).
absl::StatusOr<DimVector> SpatialArg(const OperatorHandle& op, const char* arg, const Value& v,
                                     int64_t dims, int64_t fallback) {
  IntArrayRef list = v.int_list();
  if (list.empty()) return DimVector(dims, fallback);
  if (list.size() == 1) return DimVector(dims, list[0]);
  if (static_cast<int64_t>(list.size()) == dims) return DimVector(list.begin(), list.end());
  return Invalid(op, absl::StrFormat("expected %s to be a single integer value or a list of %d "
                                     "values to match the convolution dimensions, but got %s=%s",
                                     arg, dims, arg, ShapeToString(list)));
}

absl::Status DefineNNOps(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(DefineAll(
      registry,
      {
          {"convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] "
           "padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) "
           "-> Tensor",
           MakeKernel<ConvolutionMeta>("meta::convolution")},
          {"max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] "
           "padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
           MakeKernel<MaxPoolMeta>("meta::max_pool2d_with_indices")},
          {"avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool "
           "ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
           MakeKernel<AvgPoolMeta>("meta::avg_pool2d")},
          {"native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? "
           "bias, float eps) -> (Tensor, Tensor, Tensor)",
           MakeKernel<LayerNormMeta>("meta::native_layer_norm")},
          // running_mean and running_var are marked written (PyTorch 1.13's schema leaves them
          // unmarked; its later _native_batch_norm_legit marks them): training updates them,
          // and a backend on the CPU fallback must get the update copied back.
          {"native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!)? "
           "running_mean, Tensor(b!)? running_var, bool training, float momentum, float eps) -> "
           "(Tensor, Tensor, Tensor)",
           MakeKernel<BatchNormMeta>("meta::native_batch_norm")},
          {"linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
           MakeKernel<LinearMeta>("meta::linear")},
      },
      KernelSlot::kMeta));
  // The native ops' out= forms, PyTorch's schemas: a backend implements them and gets the
  // functional forms derived (allocated from the Meta function's plan; Note [Variants]). Their
  // outputs must have the dtype the op computes, as PyTorch's out= kernels require.
  // native_batch_norm writes running_mean and running_var (alias sets a and b), so its out
  // arguments take the next sets, as PyTorch's _native_batch_norm_legit.out does.
  for (const auto& [functional, out] : std::initializer_list<std::pair<const char*, const char*>>{
           {"convolution", "convolution.out"},
           {"max_pool2d_with_indices",
            "max_pool2d_with_indices.out(Tensor self, int[2] kernel_size, int[2] stride=[], "
            "int[2] padding=0, int[2] dilation=1, bool ceil_mode=False, *, Tensor(a!) out, "
            "Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))"},
           {"native_layer_norm",
            "native_layer_norm.out(Tensor input, SymInt[] normalized_shape, Tensor? weight, "
            "Tensor? bias, float eps, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> "
            "(Tensor(a!), Tensor(b!), Tensor(c!))"},
           {"native_batch_norm",
            "native_batch_norm.out(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!)? "
            "running_mean, Tensor(b!)? running_var, bool training, float momentum, float eps, *, "
            "Tensor(d!) out, Tensor(e!) save_mean, Tensor(f!) save_invstd) -> (Tensor(d!), "
            "Tensor(e!), Tensor(f!))"},
           {"avg_pool2d", "avg_pool2d.out"},
       }) {
    TSR_RETURN_IF_ERROR(registry.DefineVariants(functional, out, "", OutDtypeRule::kExact,
                                                OutputAliasing::kDisjoint));
  }
  TSR_RETURN_IF_ERROR(registry.DefineVariants("linear", "linear.out", "", OutDtypeRule::kExact,
                                              OutputAliasing::kDisjoint));
  TSR_ASSIGN_OR_RETURN(RegistrationHandle linear_composite,
                       registry.ImplComposite("linear", MakeKernel<LinearK>("core::linear")));
  linear_composite.KeepForever();
  TSR_RETURN_IF_ERROR(DefineAll(
      registry,
      {
          {"conv1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=1, SymInt[1] "
           "padding=0, SymInt[1] dilation=1, SymInt groups=1) -> Tensor",
           MakeKernel<ConvK<1>>("core::conv1d")},
          {"conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] "
           "padding=0, SymInt[2] dilation=1, SymInt groups=1) -> Tensor",
           MakeKernel<ConvK<2>>("core::conv2d")},
          {"conv3d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=1, SymInt[3] "
           "padding=0, SymInt[3] dilation=1, SymInt groups=1) -> Tensor",
           MakeKernel<ConvK<3>>("core::conv3d")},
          {"conv1d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=1, "
           "str padding='valid', SymInt[1] dilation=1, SymInt groups=1) -> Tensor",
           MakeKernel<ConvPaddingK<1>>("core::conv1d_padding")},
          {"conv2d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, "
           "str padding='valid', SymInt[2] dilation=1, SymInt groups=1) -> Tensor",
           MakeKernel<ConvPaddingK<2>>("core::conv2d_padding")},
          {"conv3d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=1, "
           "str padding='valid', SymInt[3] dilation=1, SymInt groups=1) -> Tensor",
           MakeKernel<ConvPaddingK<3>>("core::conv3d_padding")},
          {"conv_transpose1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=1, "
           "SymInt[1] padding=0, SymInt[1] output_padding=0, SymInt groups=1, SymInt[1] "
           "dilation=1) -> Tensor",
           MakeKernel<ConvTransposeK<1>>("core::conv_transpose1d")},
          {"conv_transpose2d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] "
           "stride=1, SymInt[2] padding=0, SymInt[2] output_padding=0, SymInt groups=1, "
           "SymInt[2] dilation=1) -> Tensor",
           MakeKernel<ConvTransposeK<2>>("core::conv_transpose2d")},
          {"conv_transpose3d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] "
           "stride=1, SymInt[3] padding=0, SymInt[3] output_padding=0, SymInt groups=1, "
           "SymInt[3] dilation=1) -> Tensor",
           MakeKernel<ConvTransposeK<3>>("core::conv_transpose3d")},
          {"max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
           "int[2] dilation=1, bool ceil_mode=False) -> Tensor",
           MakeKernel<MaxPool2dK>("core::max_pool2d")},
          {"layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? "
           "bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor",
           MakeKernel<LayerNormK>("core::layer_norm")},
          {"batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? "
           "running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor",
           MakeKernel<BatchNormK>("core::batch_norm")},
          {"instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
           "Tensor? running_var, bool use_input_stats, float momentum, float eps, bool "
           "cudnn_enabled) -> Tensor",
           MakeKernel<InstanceNormK>("core::instance_norm")},
          {"matmul(Tensor self, Tensor other) -> Tensor", MakeKernel<MatmulK>("core::matmul")},
          {"matmul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
           MakeKernel<ComputeIntoOut<MatmulOf, 2>>("core::matmul_out")},
          {"softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
           MakeKernel<SoftmaxK<false>>("core::softmax")},
          {"log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
           MakeKernel<SoftmaxK<true>>("core::log_softmax")},
          {"embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool "
           "scale_grad_by_freq=False, bool sparse=False) -> Tensor",
           MakeKernel<EmbeddingK>("core::embedding")},
      },
      KernelSlot::kComposite));
  // max_pool2d is a composite and also has a meta function, so that a backend's own
  // max_pool2d kernel, where it has one, gets its arguments checked first.
  TSR_ASSIGN_OR_RETURN(RegistrationHandle meta,
                       registry.Impl("max_pool2d", DispatchKey::kMeta,
                                     MakeKernel<MaxPool2dMeta>("meta::max_pool2d")));
  meta.KeepForever();
  return absl::OkStatus();
}

}  // namespace ops
}  // namespace tessera

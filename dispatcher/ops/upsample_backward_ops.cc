// Op set 1.10's upsampling backward ops as composites, so every backend has them:
// upsample_nearest{1,2,3}d_backward, _upsample_nearest_exact{1,2,3}d_backward,
// upsample_linear1d_backward, upsample_bilinear2d_backward, upsample_trilinear3d_backward and
// upsample_bicubic2d_backward, each with its .grad_input out= form.
//
// Note [Upsampling backward as scatters]
// The forward (upsample_ops.cc, Note [Upsampling as gathers]) is separable: along each resized
// dim an output position reads a few taps of self, each with a weight. Its adjoint is separable
// too: per resized dim, each tap's weighted slice of the incoming gradient is added back into the
// positions it read (index_add along the dim), so grad_input[i] is the sum of weight *
// grad_output over every output that read i. The taps are computed on the host as the forward
// computes them (ATen's nearest_idx and nearest_exact_idx; area_pixel_compute_scale,
// area_pixel_compute_source_index and guard_index_and_lambda; the cubic convolution with
// A = -0.75 and its taps clamped into self), except that the weights stay in opmath (float, or
// double for float64), as ATen's backward kernels keep them (the forward rounds them to self's
// dtype). The 16-bit floats accumulate in float32 and round once (Opmath), as ATen's backward
// kernels accumulate in an opmath buffer. The taps, the common checks and the list of ops are
// the forward's (upsample_support.h), the weights asked for with Weights::kOpmath.
//
// Where ATen's backward is not the forward's adjoint we follow ATen: upsample_bicubic2d_backward
// copies grad_output when input and output have the same size (both dims), whatever the scales
// (UpSampleBicubic2d.cpp), while the forward with a scale other than 1 does not copy.
//
// Checks as the meta functions (upsample_{1,2,3}d_common_check on input_size, then grad_output's
// shape: check_dim_size for the 1-d ops, "Expected grad_output to be a tensor of dimension" and
// "...the same shape as output" for the 2-d and 3-d ones); an empty batch or channel dim is
// allowed (the backward has no "Non-empty" check). Dtypes: floating, as ATen's CPU kernels.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/dtype.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"
#include "dispatcher/ops/upsample_support.h"

namespace tessera {
namespace ops {
namespace upsample {
namespace {

// ---- checks (the backward meta functions) ----

// upsample_{1,2,3}d_common_check on input_size: the full output shape it gives.
absl::StatusOr<IntList> CommonCheck(const OperatorHandle& op, const IntList& output_size,
                                    const IntList& input_size, int dims) {
  TSR_RETURN_IF_ERROR(CheckSizes(op, input_size, output_size, dims));
  IntList full{input_size[0], input_size[1]};
  full.insert(full.end(), output_size.begin(), output_size.end());
  return full;
}

// grad_output must have the forward's output shape `full`: check_dim_size per dim for the 1-d
// ops, a dimension check then a per-dim check for the others.
absl::Status CheckGradOutput(const OperatorHandle& op, const Tensor& grad_output,
                             const IntList& full, int dims) {
  const int64_t rank = grad_output.dim();
  const IntArrayRef sizes = grad_output.sizes();
  if (dims == 1) {
    for (int64_t i = 0; i < 3; ++i) {
      if (rank == 3 && sizes[i] == full[i]) continue;
      // The message reads grad_output.size(i), which is an IndexError past its dims.
      if (rank == 0) return OutOfRange(op, "Dimension specified as 0 but tensor has no dimensions");
      if (i >= rank) {
        return OutOfRange(op, absl::StrFormat("Dimension out of range (expected to be in range of "
                                              "[%d, %d], but got %d)",
                                              -rank, rank - 1, i));
      }
      return Invalid(op, absl::StrFormat("Expected a tensor of dimension 3 and tensor.size[%d] == "
                                         "%d but got: dimension %d and tensor.size[%d] = %d",
                                         i, full[i], rank, i, sizes[i]));
    }
    return absl::OkStatus();
  }
  if (rank != dims + 2) {
    return Invalid(op, absl::StrFormat("Expected grad_output to be a tensor of dimension %d but "
                                       "got: dimension %d",
                                       dims + 2, rank));
  }
  for (int64_t i = 0; i < rank; ++i) {
    if (sizes[i] != full[i]) {
      return Invalid(op, absl::StrFormat("Expected grad_output to have the same shape as output; "
                                         "output.size(%d) = %d but got grad_output.size(%d) = %d",
                                         i, full[i], i, sizes[i]));
    }
  }
  return absl::OkStatus();
}

// ---- the composite ----

// Scatter: `g` (a gradient in the compute dtype) taken back along `dim` from the forward's
// output positions to its `in` input positions: each tap's weighted slice added into the
// positions it read.
absl::StatusOr<Tensor> Scatter(OpRegistry& r, const Tensor& g, int64_t dim, int64_t in,
                               const Taps& taps) {
  const int64_t out = static_cast<int64_t>(taps.index[0].size());
  DimVector shape(g.sizes().begin(), g.sizes().end());
  shape[dim] = in;
  TSR_ASSIGN_OR_RETURN(Tensor sum, Zeros(r, shape, g.dtype(), g.device()));
  for (size_t t = 0; t < taps.index.size(); ++t) {
    TSR_ASSIGN_OR_RETURN(Tensor index, OnDevice<int64_t>(r, taps.index[t], ScalarType::kInt64,
                                                         g.device(), IntList{out}));
    Tensor source = g;
    if (!taps.weight.empty()) {
      TSR_ASSIGN_OR_RETURN(Tensor weight,
                           WeightOnDevice(r, taps.weight[t], g.dtype(), g.device(), g.dim(), dim));
      TSR_ASSIGN_OR_RETURN(source, CallOne(r, "mul.Tensor", {Value(g), Value(std::move(weight))}));
    }
    TSR_ASSIGN_OR_RETURN(sum, CallOne(r, "index_add",
                                      {Value(sum), Value(dim), Value(index), Value(source),
                                       Value(Scalar(int64_t{1}))}));
  }
  return sum;
}

// upsample_<mode><dims>d_backward(grad_output, output_size, input_size, [align_corners,]
// scales...)
template <Mode kMode, int kDims>
absl::StatusOr<Tensor> UpsampleBackwardOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& grad_output = s[0].tensor();
  const IntList& output_size = s[1].int_list();
  const IntList& input_size = s[2].int_list();
  const bool align_corners = Interpolates(kMode) && s[3].to_bool();
  const size_t first_scale = Interpolates(kMode) ? 4 : 3;
  TSR_ASSIGN_OR_RETURN(const IntList full, CommonCheck(op, output_size, input_size, kDims));
  TSR_RETURN_IF_ERROR(CheckGradOutput(op, grad_output, full, kDims));
  if (!IsFloatingType(grad_output.dtype())) return NotFloating(op, grad_output.dtype());
  const int64_t numel = grad_output.numel();
  // Empty, or on the Meta device (no host taps for a meta output of any size): zeros.
  if (numel == 0 || grad_output.device().type == DeviceType::kMeta) {
    return Zeros(r, input_size, grad_output.dtype(), grad_output.device());
  }
  const Opmath math(grad_output.dtype());
  if (kMode == Mode::kCubic && input_size[2] == output_size[0] && input_size[3] == output_size[1]) {
    // ATen's bicubic backward copies at the same size, whatever the scales (Note above).
    return CallOne(r, "clone", {Value(grad_output), Value()});
  }
  TSR_ASSIGN_OR_RETURN(Value g, math.In(r, Value(grad_output)));
  Tensor x = g.tensor();
  for (int d = 0; d < kDims; ++d) {
    const Value& scale_arg = s[first_scale + d];
    const std::optional<double> scale =
        scale_arg.is_none() ? std::nullopt : std::optional<double>(scale_arg.to_double());
    const int64_t dim = d + 2;
    const Taps taps = DimTaps(kMode, grad_output.dtype(), input_size[dim], output_size[d],
                              align_corners, scale, Weights::kOpmath);
    TSR_ASSIGN_OR_RETURN(x, Scatter(r, x, dim, input_size[dim], taps));
  }
  return math.Out(r, std::move(x));
}

// Definitions: the functional and .grad_input forms of one op. `base` is the forward's name,
// `scales` its scale arguments ("float? scales_h=None, float? scales_w=None").
template <Mode kMode, int kDims>
std::vector<Definition> Definitions(const std::string& forward, const std::string& scales) {
  const std::string base = forward + "_backward";
  const std::string args =
      absl::StrCat("Tensor grad_output, ",
                   absl::StrFormat("int[%d] output_size, int[%d] input_size", kDims, kDims + 2),
                   Interpolates(kMode) ? ", bool align_corners" : "", ", ", scales);
  constexpr int kOut = (Interpolates(kMode) ? 4 : 3) + kDims;
  const std::string kernel = "core::" + base;
  std::vector<Definition> defs;
  defs.push_back({absl::StrCat(base, "(", args, ") -> Tensor"),
                  MakeKernel<Named<ComputeOne<UpsampleBackwardOf<kMode, kDims>>>>(kernel)});
  defs.push_back(
      {absl::StrCat(base, ".grad_input(", args, ", *, Tensor(a!) grad_input) -> Tensor(a!)"),
       MakeKernel<Named<ComputeIntoOut<UpsampleBackwardOf<kMode, kDims>, kOut>>>(kernel +
                                                                                 "_grad_input")});
  return defs;
}

}  // namespace
}  // namespace upsample

absl::Status DefineUpsampleBackwardOps(OpRegistry& registry) {
  // Each op's functional and .grad_input forms.
  return upsample::DefineEach(
      registry, [](auto mode, auto dims, const std::string& name, const std::string& scales) {
        return upsample::Definitions<decltype(mode)::value, decltype(dims)::value>(name, scales);
      });
}

}  // namespace ops
}  // namespace tessera

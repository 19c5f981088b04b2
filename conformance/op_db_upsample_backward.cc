// The backward ops of op set 1.9's upsampling (op set 1.10, family "training"):
// upsample_nearest{1,2,3}d_backward, _upsample_nearest_exact{1,2,3}d_backward,
// upsample_linear1d_backward, upsample_bilinear2d_backward, upsample_trilinear3d_backward and
// upsample_bicubic2d_backward, each with its .grad_input form (composites,
// dispatcher/ops/upsample_backward_ops.cc).
//
// The references follow current PyTorch's backward kernels (cpu/UpSampleKernel.cpp's
// cpu_upsample_nearest_backward and cpu_upsample_linear_backward, UpSampleBicubic2d.cpp's
// upsample_bicubic2d_backward_out_frame): for each element of grad_output, the positions of the
// input the forward read for it (every combination of one tap per resized dim) each receive
// weight * grad_output, accumulated in long double and rounded once. The taps are computed per
// dim as UpSample.h computes them (nearest_idx, nearest_exact_idx, area_pixel_compute_scale,
// area_pixel_compute_source_index, guard_index_and_lambda, the cubic convolution with A = -0.75
// and its taps clamped into the input), in opmath (float, or double for float64), the weights
// left in opmath as the backward kernels leave them (upsample_reference.h's TapsFor, shared with
// the forward's references, with Weights::kOpmath). The bicubic backward copies grad_output at
// the same input and output size whatever the scales, as ATen's does.
//
// Samples as the forward's (op_db_upsample.cc, after sample_inputs_upsample /
// sample_inputs_interpolate): down- and up-sampling, twice, the same size, from and to size 1,
// non-integer scales given (and none), align_corners both ways, an empty batch and an empty
// channel dim (the backward allows both). Errors as the meta functions' checks. The gradient
// oracle checks each against its forward's plain overload.
//
// Checked against PyTorch 1.13 (/usr/bin/python3): the messages of every error input. Current
// PyTorch's CPU kernels take float16 too (1.13 refuses it) and clamp the source index and
// fraction (guard_index_and_lambda); we follow current PyTorch.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"
#include "conformance/upsample_reference.h"

namespace tessera {
namespace conformance {
namespace upsample {
namespace {

// Backward: the gradient for an input of `input_size`, given grad_output `g` (its spatial dims
// the output size).
HostTensor Backward(const HostTensor& g, Mode mode, const Shape& input_size, bool align_corners,
                    const Scales& scales) {
  const size_t dims = input_size.size() - 2;
  bool same = true;
  for (size_t d = 0; d < dims; ++d) same = same && g.shape[d + 2] == input_size[d + 2];
  if (mode == Mode::kCubic && same) return g;  // ATen's bicubic backward copies at the same size
  std::vector<DimTaps> taps;
  for (size_t d = 0; d < dims; ++d) {
    taps.push_back(TapsFor(mode, g.dtype, input_size[d + 2], g.shape[d + 2], align_corners,
                           scales[d], Weights::kOpmath));
  }
  std::vector<long double> acc(static_cast<size_t>(Full(input_size, g.dtype, 0).numel()), 0);
  for (int64_t f = 0; f < g.numel(); ++f) {
    const long double grad = static_cast<long double>(g.values[static_cast<size_t>(f)]);
    ForEachTapCombination(taps, Unravel(f, g.shape), [&](const Shape& src, long double weight) {
      acc[static_cast<size_t>(Ravel(src, input_size))] += weight * grad;
    });
  }
  return FromLong(input_size, g.dtype, acc);
}

Scales All(int dims, double v) { return Scales(static_cast<size_t>(dims), v); }

// A case: the forward's input shape, its output size, the scales given (empty: none).
struct Case {
  Shape input, size;
  Scales scales;
  std::string note;
};

std::vector<Case> Cases(int dims) {
  std::vector<Case> c;
  c.push_back({Cube(2, 3, dims, 4), Repeat(dims, 3), {}, " (down)"});
  c.push_back({Cube(2, 3, dims, 4), Repeat(dims, 5), {}, " (up)"});
  c.push_back({Cube(1, 2, dims, 3), Repeat(dims, 6), {}, " (twice)"});
  c.push_back({Cube(1, 2, dims, 3), Repeat(dims, 3), {}, " (same size)"});
  c.push_back({Cube(2, 1, dims, 1), Repeat(dims, 4), {}, " (from size 1)"});
  c.push_back({Cube(1, 2, dims, 5), Repeat(dims, 1), {}, " (to size 1)"});
  c.push_back({Cube(0, 2, dims, 3), Repeat(dims, 4), {}, " (empty batch)"});
  c.push_back({Cube(2, 0, dims, 3), Repeat(dims, 4), {}, " (no channels)"});
  c.push_back({Cube(1, 2, dims, 7), Repeat(dims, 2), {}, " (down by more than 3)"});
  Shape mixed_in{2, 2}, mixed_out;
  for (int d = 0; d < dims; ++d) {
    mixed_in.push_back(3 + 2 * d);
    mixed_out.push_back(d % 2 == 0 ? 7 - d : 2 + d);
  }
  c.push_back({mixed_in, mixed_out, {}, " (mixed sizes)"});
  c.push_back({Cube(1, 3, dims, 4), Repeat(dims, 6), All(dims, 1.7), " (scale 1.7)"});
  c.push_back({Cube(1, 3, dims, 4), Repeat(dims, 2), All(dims, 0.6), " (scale 0.6)"});
  c.push_back({Cube(1, 2, dims, 5), Repeat(dims, 7), All(dims, 1.5), " (scale 1.5)"});
  c.push_back({Cube(1, 2, dims, 3), Repeat(dims, 7), All(dims, 2.5), " (scale 2.5, past the end)"});
  // The same size with a scale that says otherwise: a copy for nearest and linear (and bicubic's
  // backward), not for nearest-exact.
  c.push_back({Cube(1, 2, dims, 4), Repeat(dims, 4), All(dims, 2.0), " (same size, scale 2)"});
  if (dims > 1) {
    Scales some(static_cast<size_t>(dims));
    some.back() = 2.5;
    c.push_back({Cube(1, 2, dims, 4), Repeat(dims, 10), some, " (a scale for the last dim only)"});
  }
  return c;
}

// The forward's output shape for a case.
Shape OutputOf(const Case& c) {
  Shape out{c.input[0], c.input[1]};
  out.insert(out.end(), c.size.begin(), c.size.end());
  return out;
}

Arg ScaleArg(const Scales& scales, int d) {
  const size_t i = static_cast<size_t>(d);
  return i < scales.size() && scales[i].has_value() ? Arg::Double(*scales[i]) : Arg::None();
}

// The backward's arguments: grad_output, output_size, input_size, [align_corners,] scales.
std::vector<Arg> BackwardArgs(HostTensor grad_output, const Shape& size, const Shape& input,
                              bool interp, bool align, const Scales& scales, int dims) {
  std::vector<Arg> args{Arg::Tensor(std::move(grad_output)), Arg::Ints(size), Arg::Ints(input)};
  if (interp) args.push_back(Arg::Bool(align));
  for (int d = 0; d < dims; ++d) args.push_back(ScaleArg(scales, d));
  return args;
}

// The gradient oracle's link: the forward's plain overload on small float64 inputs.
GradientSpec GradientOf(Mode mode, int dims) {
  const bool interp = Interpolates(mode);
  GradientSpec spec;
  spec.forward = OpName(mode, dims);
  spec.samples = [mode, dims, interp](Rng& rng) {
    std::vector<Case> cases{
        {Cube(1, 2, dims, 3), Repeat(dims, 5), {}, " (up)"},
        {Cube(1, 1, dims, 4), Repeat(dims, 3), {}, " (down)"},
        {Cube(1, 1, dims, 3), Repeat(dims, 4), All(dims, 1.7), " (scale 1.7)"},
        {Cube(1, 1, dims, 4), Repeat(dims, 2), All(dims, 0.6), " (scale 0.6)"},
        {Cube(1, 1, dims, 1), Repeat(dims, 3), {}, " (from size 1)"},
    };
    if (mode != Mode::kCubic) {  // bicubic's backward copies here, its forward does not
      cases.push_back({Cube(1, 1, dims, 3), Repeat(dims, 3), All(dims, 2.0), " (same, scale 2)"});
    }
    if (dims == 3) {  // 3-D inputs: fewer and smaller
      for (Case& c : cases) {
        for (size_t d = 2; d < c.input.size(); ++d) c.input[d] = std::min<int64_t>(c.input[d], 3);
        c.input[1] = 1;
      }
    }
    const std::vector<bool> aligns =
        interp ? std::vector<bool>{false, true} : std::vector<bool>{false};
    std::vector<Sample> samples;
    for (bool align : aligns) {
      for (const Case& c : cases) {
        MakeOptions range;
        range.low = -2;
        range.high = 2;
        std::vector<Arg> args{Arg::Tensor(MakeTensor(c.input, TSR_DTYPE_FLOAT64, rng, range)),
                              Arg::Ints(c.size)};
        if (interp) args.push_back(Arg::Bool(align));
        for (int d = 0; d < dims; ++d) args.push_back(ScaleArg(c.scales, d));
        samples.push_back(Described(std::move(args), c.note));
      }
    }
    return samples;
  };
  spec.wrt = {0};
  spec.backward_args = [dims, interp](const Sample& s, const std::vector<HostTensor>&,
                                      const HostTensor& grad) {
    const bool align = interp && s.args[2].boolean;
    const Scales scales = ScalesOf(s, interp ? 3 : 2, dims);
    return BackwardArgs(grad, s.args[1].ints, s.args[0].tensor.shape, interp, align, scales, dims);
  };
  return spec;
}

OpInfo Op(Mode mode, int dims) {
  const bool interp = Interpolates(mode);
  OpInfo op;
  op.name = OpName(mode, dims) + "_backward";
  op.out = op.name + ".grad_input";
  op.dtypes = kFloatingMask;
  // An input element sums the terms of every output that read it (many when upsampling), and
  // bicubic's weights go past [0, 1].
  op.tolerance_scale = mode == Mode::kCubic ? 4 : 2;
  op.samples = [dims, interp](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    const std::vector<bool> aligns =
        interp ? std::vector<bool>{false, true} : std::vector<bool>{false};
    for (bool align : aligns) {
      for (const Case& c : Cases(dims)) {
        s.push_back(Described(BackwardArgs(MakeTensor(OutputOf(c), dtype, rng), c.size, c.input,
                                           interp, align, c.scales, dims),
                              c.note));
      }
    }
    return s;
  };
  op.reference = [mode, dims, interp](const Sample& s) {
    const bool align = interp && s.args[3].boolean;
    return std::vector<HostTensor>{
        Backward(s.args[0].tensor, mode, s.args[2].ints, align, ScalesOf(s, interp ? 4 : 3, dims))};
  };
  op.errors = [dims, interp](Rng& rng) {
    auto call = [&](Shape grad, Shape size, Shape input, tsr_dtype dtype = TSR_DTYPE_FLOAT32) {
      return BackwardArgs(MakeTensor(std::move(grad), dtype, rng), size, input, interp, false, {},
                          dims);
    };
    const Shape input = Cube(2, 3, dims, 4), size = Repeat(dims, 5), grad = Cube(2, 3, dims, 5);
    const std::string n = std::to_string(dims + 2);
    std::vector<ErrorInput> e;
    e.push_back(RefusedSaying(call(grad, Repeat(dims + 1, 5), input), TSR_INVALID_ARGUMENT,
                              "It is expected output_size equals to " + std::to_string(dims)));
    e.push_back(RefusedSaying(
        call(grad, size, Cube(2, 3, dims + 1, 4)), TSR_INVALID_ARGUMENT,
        "It is expected input_size equals to " + n + ", but got size " + std::to_string(dims + 3)));
    e.push_back(RefusedSaying(call(grad, size, Shape(input.begin() + 1, input.end())),
                              TSR_INVALID_ARGUMENT, "It is expected input_size equals to " + n));
    Shape zero_out = size;
    zero_out.back() = 0;
    e.push_back(RefusedSaying(call(grad, zero_out, input), TSR_INVALID_ARGUMENT,
                              "Input and output sizes should be greater than 0, but got input ("));
    Shape empty_in = input;
    empty_in[2] = 0;
    e.push_back(RefusedSaying(call(grad, size, empty_in), TSR_INVALID_ARGUMENT,
                              "Input and output sizes should be greater than 0"));
    if (dims == 1) {
      e.push_back(RefusedSaying(call({2, 3, 4}, {0}, {2, 3, 4}), TSR_INVALID_ARGUMENT,
                                "but got input (W: 4) and output (W: 0)"));
      e.push_back(RefusedSaying(call({2, 3, 6}, {5}, {2, 3, 4}), TSR_INVALID_ARGUMENT,
                                "Expected a tensor of dimension 3 and tensor.size[2] == 5 but got: "
                                "dimension 3 and tensor.size[2] = 6"));
      e.push_back(RefusedSaying(call({2, 4, 5}, {5}, {2, 3, 4}), TSR_INVALID_ARGUMENT,
                                "Expected a tensor of dimension 3 and tensor.size[1] == 3 but got: "
                                "dimension 3 and tensor.size[1] = 4"));
      e.push_back(RefusedSaying(call({2, 3}, {5}, {2, 3, 4}), TSR_INVALID_ARGUMENT,
                                "Expected a tensor of dimension 3 and tensor.size[0] == 2 but got: "
                                "dimension 2 and tensor.size[0] = 2"));
      e.push_back(RefusedSaying(call({2, 3, 5, 1}, {5}, {2, 3, 4}), TSR_INVALID_ARGUMENT,
                                "Expected a tensor of dimension 3 and tensor.size[0] == 2 but got: "
                                "dimension 4"));
      e.push_back(RefusedSaying(call({}, {5}, {2, 3, 4}), TSR_OUT_OF_RANGE,
                                "Dimension specified as 0 but tensor has no dimensions"));
    } else {
      if (dims == 2) {
        e.push_back(RefusedSaying(call(grad, {0, 3}, {2, 3, 4, 5}), TSR_INVALID_ARGUMENT,
                                  "but got input (H: 4, W: 5) output (H: 0, W: 3)"));
      } else {
        e.push_back(RefusedSaying(call(grad, {3, 3, 3}, {2, 3, 0, 1, 1}), TSR_INVALID_ARGUMENT,
                                  "but got input (D: 0, H: 1, W: 1) output (D: 3, H: 3, W: 3)"));
      }
      e.push_back(RefusedSaying(call(Shape(grad.begin() + 1, grad.end()), size, input),
                                TSR_INVALID_ARGUMENT,
                                "Expected grad_output to be a tensor of dimension " + n +
                                    " but got: dimension " + std::to_string(dims + 1)));
      Shape wide = grad;
      wide.back() = 6;
      e.push_back(
          RefusedSaying(call(wide, size, input), TSR_INVALID_ARGUMENT,
                        "Expected grad_output to have the same shape as output; output.size(" +
                            std::to_string(dims + 1) + ") = 5 but got grad_output.size(" +
                            std::to_string(dims + 1) + ") = 6"));
      Shape channels = grad;
      channels[1] = 4;
      e.push_back(
          RefusedSaying(call(channels, size, input), TSR_INVALID_ARGUMENT,
                        "Expected grad_output to have the same shape as output; output.size(1) "
                        "= 3 but got grad_output.size(1) = 4"));
    }
    return e;
  };
  op.gradient = GradientOf(mode, dims);
  return op;
}

}  // namespace
}  // namespace upsample

void AddUpsampleBackwardOps(std::vector<OpInfo>& db) {
  for (const auto& [mode, dims] : upsample::Ops()) db.push_back(upsample::Op(mode, dims));
}

}  // namespace conformance
}  // namespace tessera

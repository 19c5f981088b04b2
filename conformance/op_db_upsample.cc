// Upsampling ops of op set 1.9: upsample_nearest{1,2,3}d, _upsample_nearest_exact{1,2,3}d,
// upsample_linear1d, upsample_bilinear2d, upsample_trilinear3d and upsample_bicubic2d, each with
// its .out, and its .vec with .vec_out (composites, dispatcher/ops/upsample_ops.cc).
//
// After current PyTorch's UpSample.h (nearest_idx, nearest_exact_idx, area_pixel_compute_scale,
// area_pixel_compute_source_index, guard_index_and_lambda, the cubic convolution with A = -0.75),
// cpu/UpSampleKernel.cpp (HelperInterpLinear / HelperInterpCubic: which taps each output position
// reads, their weights computed in opmath and stored in the input's dtype), UpSample.cpp
// (compute_output_size) and the meta functions' checks, with the samples of
// sample_inputs_upsample / sample_inputs_interpolate (down- and up-sampling, both align_corners,
// scale factors given and not, inputs of size 1). The references compute each dim's taps in the
// float type ATen uses (float for nearest's scale; float, or double for float64, elsewhere), then
// each output element as the sum over all tap combinations of the product of the weights times
// the element of self, in double, rounded once to the dtype. The tap arithmetic is shared with
// the backward ops' references (upsample_reference.h; defined here).
//
// Where PyTorch 1.13 differs (what /usr/bin/python3 runs): current PyTorch's CPU kernels take
// float16 too (1.13: float32, float64, bfloat16, and uint8 for nearest), and clamp the linear and
// cubic source index and fraction (guard_index_and_lambda), which changes results only where a
// given scale points past the end of self.
//
// scale_factors (float[]?) reach the op through an int list (the suite's arguments have no float
// list; the dispatcher widens one), so the .vec samples give whole factors; fractional scales are
// given to the other overloads' float? scales.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
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

// T: ATen's opmath for the index arithmetic of linear and cubic (double for float64).
template <typename T>
T ScaleFor(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners) return out > 1 ? static_cast<T>(in - 1) / static_cast<T>(out - 1) : T(0);
  if (scale && *scale > 0) return static_cast<T>(1.0 / *scale);
  return static_cast<T>(in) / static_cast<T>(out);
}

template <typename T>
T SourceIndex(T scale, int64_t o, bool align_corners, bool cubic) {
  if (align_corners) return scale * static_cast<T>(o);
  T src = scale * (static_cast<T>(o) + T(0.5)) - T(0.5);
  if (!cubic && src < T(0)) src = T(0);
  return src;
}

// Guarded: the floored index (floorf) kept below `in`, and the fraction clamped to [0, 1].
template <typename T>
std::pair<int64_t, T> Guarded(T real, int64_t in) {
  const int64_t index =
      std::min<int64_t>(static_cast<int64_t>(std::floor(static_cast<float>(real))), in - 1);
  T frac = real - static_cast<T>(index);
  frac = std::min(std::max(frac, T(0)), T(1));
  return {index, frac};
}

// Weight: the opmath weight v as the kernel keeps it: rounded to the input's dtype for the
// forward (Weights::kStoredInDtype), as it is for the backward (Weights::kOpmath).
double Weight(Weights weights, tsr_dtype dtype, double v) {
  return weights == Weights::kOpmath ? v : RoundTo(dtype, v);
}

// The first weight is 1 minus the second as kept (for kOpmath, 1 - frac in T).
template <typename T>
DimTaps LinearDim(Weights weights, tsr_dtype dtype, int64_t in, int64_t out, bool align_corners,
                  std::optional<double> scale) {
  DimTaps d;
  const T ratio = ScaleFor<T>(in, out, align_corners, scale);
  for (int64_t o = 0; o < out; ++o) {
    if (in == out) {  // compute_source_index_and_lambda: a copy, whatever the scale
      d.at.push_back({o, o});
      d.w.push_back({1, 0});
      continue;
    }
    const auto [i0, frac] = Guarded<T>(SourceIndex<T>(ratio, o, align_corners, false), in);
    const double w1 = Weight(weights, dtype, static_cast<double>(frac));
    const double w0 = Weight(weights, dtype, static_cast<double>(T(1) - static_cast<T>(w1)));
    d.at.push_back({i0, i0 < in - 1 ? i0 + 1 : i0});
    d.w.push_back({w0, w1});
  }
  return d;
}

template <typename T>
DimTaps CubicDim(Weights weights, tsr_dtype dtype, int64_t in, int64_t out, bool align_corners,
                 std::optional<double> scale) {
  DimTaps d;
  const T ratio = ScaleFor<T>(in, out, align_corners, scale);
  const T A = T(-0.75);
  // The convolution kernel for |x| <= 1 and for 1 < |x| < 2.
  auto inner = [A](T x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };
  auto outer = [A](T x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };
  for (int64_t o = 0; o < out; ++o) {
    const auto [index, t] = Guarded<T>(SourceIndex<T>(ratio, o, align_corners, true), in);
    const std::array<T, 4> k{outer(t + T(1)), inner(t), inner(T(1) - t), outer((T(1) - t) + T(1))};
    std::vector<int64_t> at;
    std::vector<double> w;
    for (int j = 0; j < 4; ++j) {
      at.push_back(std::clamp<int64_t>(index - 1 + j, 0, in - 1));
      w.push_back(Weight(weights, dtype, static_cast<double>(k[static_cast<size_t>(j)])));
    }
    d.at.push_back(at);
    d.w.push_back(w);
  }
  return d;
}

DimTaps NearestDim(bool exact, int64_t in, int64_t out, std::optional<double> scale) {
  DimTaps d;
  const float s = scale && *scale > 0 ? static_cast<float>(1.0 / *scale)
                                      : static_cast<float>(in) / static_cast<float>(out);
  for (int64_t o = 0; o < out; ++o) {
    int64_t i;
    if (exact) {
      // floorf((o + 0.5) * scale): a double product, floored as a float.
      const double p = (static_cast<double>(o) + 0.5) * static_cast<double>(s);
      i = static_cast<int64_t>(std::floor(static_cast<float>(p)));
    } else if (out == in) {
      i = o;  // nearest_idx's special cases ignore the scale
    } else if (out == 2 * in) {
      i = o / 2;
    } else {
      i = static_cast<int64_t>(std::floor(static_cast<float>(o) * s));
    }
    d.at.push_back({std::min(i, in - 1)});
    d.w.push_back({1});
  }
  return d;
}

}  // namespace

const std::vector<std::pair<Mode, int>>& Ops() {
  static const std::vector<std::pair<Mode, int>> kOps{
      {Mode::kNearest, 1},      {Mode::kNearest, 2},      {Mode::kNearest, 3},
      {Mode::kNearestExact, 1}, {Mode::kNearestExact, 2}, {Mode::kNearestExact, 3},
      {Mode::kLinear, 1},       {Mode::kLinear, 2},       {Mode::kLinear, 3},
      {Mode::kCubic, 2}};
  return kOps;
}

std::string OpName(Mode mode, int dims) {
  static const char* const kNames[4][3] = {
      {"upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d"},
      {"_upsample_nearest_exact1d", "_upsample_nearest_exact2d", "_upsample_nearest_exact3d"},
      {"upsample_linear1d", "upsample_bilinear2d", "upsample_trilinear3d"},
      {"", "upsample_bicubic2d", ""}};
  return kNames[static_cast<int>(mode)][dims - 1];
}

DimTaps TapsFor(Mode mode, tsr_dtype dtype, int64_t in, int64_t out, bool align_corners,
                std::optional<double> scale, Weights weights) {
  const bool wide = dtype == TSR_DTYPE_FLOAT64;
  switch (mode) {
    case Mode::kNearest:
      return NearestDim(false, in, out, scale);
    case Mode::kNearestExact:
      return NearestDim(true, in, out, scale);
    case Mode::kLinear:
      return wide ? LinearDim<double>(weights, dtype, in, out, align_corners, scale)
                  : LinearDim<float>(weights, dtype, in, out, align_corners, scale);
    case Mode::kCubic:
      return wide ? CubicDim<double>(weights, dtype, in, out, align_corners, scale)
                  : CubicDim<float>(weights, dtype, in, out, align_corners, scale);
  }
  return {};
}

Shape Cube(int64_t n, int64_t c, int dims, int64_t s) {
  Shape shape{n, c};
  for (int d = 0; d < dims; ++d) shape.push_back(s);
  return shape;
}

Shape Repeat(int dims, int64_t v) { return Shape(static_cast<size_t>(dims), v); }

Scales ScalesOf(const Sample& s, size_t first, int dims) {
  Scales scales;
  for (int d = 0; d < dims; ++d) {
    const size_t i = first + static_cast<size_t>(d);
    scales.push_back(Given(s, i) ? std::optional<double>(s.args[i].number) : std::nullopt);
  }
  return scales;
}

namespace {

// Upsampled: x resized to `size` (its spatial dims) with one scale per dim (or none).
HostTensor Upsampled(const HostTensor& x, Mode mode, const Shape& size, bool align_corners,
                     const Scales& scales) {
  const size_t dims = size.size();
  Shape shape = x.shape;
  std::vector<DimTaps> taps;
  for (size_t d = 0; d < dims; ++d) {
    shape[d + 2] = size[d];
    taps.push_back(TapsFor(mode, x.dtype, x.shape[d + 2], size[d], align_corners, scales[d],
                           Weights::kStoredInDtype));
  }
  HostTensor out = Full(shape, x.dtype, 0);
  for (int64_t f = 0; f < out.numel(); ++f) {
    long double sum = 0;
    ForEachTapCombination(taps, Unravel(f, shape), [&](const Shape& src, long double weight) {
      sum += weight * x.values[static_cast<size_t>(Ravel(src, x.shape))];
    });
    out.values[static_cast<size_t>(f)] = RoundTo(x.dtype, static_cast<double>(sum));
  }
  return out;
}

// A sample of the op's own form: self, the output size, the spatial sizes, scales.
struct Case {
  Shape shape, size;
  std::vector<std::optional<double>> scales;  // empty: none given
  std::string note;
};

std::vector<Case> Cases(Mode mode, int dims) {
  std::vector<Case> c;
  const std::vector<std::optional<double>> none;
  // sample_inputs_upsample: 4 -> 3 (down), 4 -> 5 (up).
  c.push_back({Cube(2, 3, dims, 4), Repeat(dims, 3), none, " (down)"});
  c.push_back({Cube(2, 3, dims, 4), Repeat(dims, 5), none, " (up)"});
  c.push_back({Cube(1, 2, dims, 4), Repeat(dims, 8), none, " (twice)"});
  c.push_back({Cube(1, 2, dims, 3), Repeat(dims, 3), none, " (same size)"});
  c.push_back({Cube(2, 1, dims, 1), Repeat(dims, 4), none, " (from size 1)"});
  c.push_back({Cube(1, 2, dims, 5), Repeat(dims, 1), none, " (to size 1)"});
  c.push_back({Cube(0, 2, dims, 3), Repeat(dims, 4), none, " (empty batch)"});
  c.push_back({Cube(1, 2, dims, 7), Repeat(dims, 2), none, " (down by more than 3)"});
  Shape mixed_in{2, 2}, mixed_out;
  for (int d = 0; d < dims; ++d) {
    mixed_in.push_back(3 + 2 * d);
    mixed_out.push_back(d % 2 == 0 ? 7 - d : 2 + d);
  }
  c.push_back({mixed_in, mixed_out, none, " (mixed sizes)"});
  // Scales given (interpolate's recompute_scale_factor=False): 4 * 1.7 -> 6, 4 * 0.6 -> 2, with
  // the scale used for the source positions.
  c.push_back({Cube(1, 3, dims, 4), Repeat(dims, 6),
               std::vector<std::optional<double>>(static_cast<size_t>(dims), 1.7), " (scale 1.7)"});
  c.push_back({Cube(1, 3, dims, 4), Repeat(dims, 2),
               std::vector<std::optional<double>>(static_cast<size_t>(dims), 0.6), " (scale 0.6)"});
  c.push_back({Cube(1, 2, dims, 5), Repeat(dims, 7),
               std::vector<std::optional<double>>(static_cast<size_t>(dims), 1.5), " (scale 1.5)"});
  if (Interpolates(mode)) {
    // Same size with a scale that says otherwise: a copy (compute_source_index_and_lambda).
    c.push_back({Cube(1, 2, dims, 4), Repeat(dims, 4),
                 std::vector<std::optional<double>>(static_cast<size_t>(dims), 2.0),
                 " (same size, scale 2)"});
  }
  if (dims > 1) {
    std::vector<std::optional<double>> some(static_cast<size_t>(dims));
    some.back() = 2.5;
    c.push_back({Cube(1, 2, dims, 4), Repeat(dims, 10), some, " (a scale for the last dim only)"});
  }
  return c;
}

DtypeMask DtypesOf(Mode mode) {
  // Current PyTorch's CPU kernels: floating (float16 included); nearest takes uint8 too.
  return Interpolates(mode) ? kFloatingMask : (kFloatingMask | Bit(TSR_DTYPE_UINT8));
}

// Base: the op's own form (self, output_size, [align_corners,] scales...).
OpInfo Base(Mode mode, int dims) {
  OpInfo op;
  op.name = OpName(mode, dims);
  op.out = op.name + ".out";
  op.dtypes = DtypesOf(mode);
  op.tolerance_scale = mode == Mode::kCubic ? 2 : 1;
  const bool interp = Interpolates(mode);
  op.samples = [mode, dims, interp](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    const std::vector<bool> aligns =
        interp ? std::vector<bool>{false, true} : std::vector<bool>{false};
    for (bool align : aligns) {
      for (const Case& c : Cases(mode, dims)) {
        std::vector<Arg> args{Arg::Tensor(MakeTensor(c.shape, dtype, rng)), Arg::Ints(c.size)};
        if (interp) args.push_back(Arg::Bool(align));
        for (int d = 0; d < dims; ++d) {
          const bool given = !c.scales.empty() && c.scales[static_cast<size_t>(d)].has_value();
          args.push_back(given ? Arg::Double(*c.scales[static_cast<size_t>(d)]) : Arg::None());
        }
        s.push_back(Described(std::move(args), c.note));
      }
    }
    return s;
  };
  op.reference = [mode, dims, interp](const Sample& s) {
    const bool align = interp && s.args[2].boolean;
    const size_t first = interp ? 3 : 2;
    return std::vector<HostTensor>{
        Upsampled(s.args[0].tensor, mode, s.args[1].ints, align, ScalesOf(s, first, dims))};
  };
  op.errors = [mode, dims, interp](Rng& rng) {
    auto call = [&](Shape shape, Shape size) {
      std::vector<Arg> args{Arg::Tensor(MakeTensor(std::move(shape), TSR_DTYPE_FLOAT32, rng)),
                            Arg::Ints(std::move(size))};
      if (interp) args.push_back(Arg::Bool(false));
      return args;
    };
    const Shape good = Cube(2, 3, dims, 4);
    std::vector<ErrorInput> e;
    e.push_back(RefusedSaying(call(good, Repeat(dims + 1, 3)), TSR_INVALID_ARGUMENT,
                              "It is expected output_size equals to " + std::to_string(dims)));
    e.push_back(RefusedSaying(call(Shape(good.begin() + 1, good.end()), Repeat(dims, 3)),
                              TSR_INVALID_ARGUMENT,
                              "It is expected input_size equals to " + std::to_string(dims + 2)));
    e.push_back(RefusedSaying(call(Cube(1, 2, dims + 1, 3), Repeat(dims, 3)), TSR_INVALID_ARGUMENT,
                              "It is expected input_size equals to " + std::to_string(dims + 2)));
    Shape zero_out = Repeat(dims, 3);
    zero_out.back() = 0;
    e.push_back(RefusedSaying(call(good, zero_out), TSR_INVALID_ARGUMENT,
                              "Input and output sizes should be greater than 0, but got input ("));
    Shape negative_out = Repeat(dims, 3);
    negative_out.front() = -2;
    e.push_back(RefusedSaying(call(good, negative_out), TSR_INVALID_ARGUMENT,
                              "Input and output sizes should be greater than 0"));
    Shape empty_in = good;
    empty_in[2] = 0;
    e.push_back(RefusedSaying(call(empty_in, Repeat(dims, 3)), TSR_INVALID_ARGUMENT,
                              "Input and output sizes should be greater than 0"));
    Shape no_channels = good;
    no_channels[1] = 0;
    e.push_back(RefusedSaying(call(no_channels, Repeat(dims, 3)), TSR_INVALID_ARGUMENT,
                              "Non-empty " + std::to_string(dims + 2) +
                                  "D data tensor expected but got a tensor with sizes [2, 0"));
    Shape none_at_all = no_channels;
    none_at_all[0] = 0;
    e.push_back(RefusedSaying(call(none_at_all, Repeat(dims, 3)), TSR_INVALID_ARGUMENT,
                              "Non-empty " + std::to_string(dims + 2) + "D data tensor expected"));
    if (dims == 1) {
      e.push_back(RefusedSaying(call({2, 3, 4}, {0}), TSR_INVALID_ARGUMENT,
                                "but got input (W: 4) and output (W: 0)"));
    } else if (dims == 2) {
      e.push_back(RefusedSaying(call({2, 3, 4, 5}, {0, 3}), TSR_INVALID_ARGUMENT,
                                "but got input (H: 4, W: 5) output (H: 0, W: 3)"));
    } else {
      e.push_back(RefusedSaying(call({2, 3, 0, 1, 1}, {3, 3, 3}), TSR_INVALID_ARGUMENT,
                                "but got input (D: 0, H: 1, W: 1) output (D: 3, H: 3, W: 3)"));
    }
    return e;
  };
  return op;
}

// Vec: the .vec form (input, output_size?, [align_corners,] scale_factors?).
OpInfo Vec(Mode mode, int dims) {
  OpInfo op;
  op.name = OpName(mode, dims) + ".vec";
  op.out = OpName(mode, dims) + ".vec_out";
  op.dtypes = DtypesOf(mode);
  op.tolerance_scale = mode == Mode::kCubic ? 2 : 1;
  const bool interp = Interpolates(mode);
  auto make = [interp](HostTensor x, Arg size, bool align, Arg factors) {
    std::vector<Arg> args{Arg::Tensor(std::move(x)), std::move(size)};
    if (interp) args.push_back(Arg::Bool(align));
    args.push_back(std::move(factors));
    return args;
  };
  op.samples = [dims, interp, make](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    const std::vector<bool> aligns =
        interp ? std::vector<bool>{false, true} : std::vector<bool>{false};
    for (bool align : aligns) {
      s.push_back(Described(make(MakeTensor(Cube(2, 3, dims, 4), dtype, rng),
                                 Arg::Ints(Repeat(dims, 3)), align, Arg::None()),
                            " (output_size, down)"));
      s.push_back(Described(make(MakeTensor(Cube(2, 3, dims, 4), dtype, rng),
                                 Arg::Ints(Repeat(dims, 5)), align, Arg::None()),
                            " (output_size, up)"));
      s.push_back(Described(make(MakeTensor(Cube(2, 2, dims, 3), dtype, rng), Arg::None(), align,
                                 Arg::Ints(Repeat(dims, 2))),
                            " (scale factors 2)"));
      s.push_back(Described(make(MakeTensor(Cube(1, 2, dims, 3), dtype, rng), Arg::None(), align,
                                 Arg::Ints(Repeat(dims, 3))),
                            " (scale factors 3)"));
      s.push_back(Described(make(MakeTensor(Cube(1, 2, dims, 1), dtype, rng), Arg::None(), align,
                                 Arg::Ints(Repeat(dims, 4))),
                            " (size 1, scale factors 4)"));
      s.push_back(Described(make(MakeTensor(Cube(0, 2, dims, 2), dtype, rng), Arg::None(), align,
                                 Arg::Ints(Repeat(dims, 1))),
                            " (empty batch, scale factors 1)"));
      if (dims > 1) {
        Shape factors = Repeat(dims, 1);
        factors.back() = 3;
        s.push_back(Described(make(MakeTensor(Cube(1, 2, dims, 3), dtype, rng), Arg::None(), align,
                                   Arg::Ints(factors)),
                              " (scale factors differ per dim)"));
      }
    }
    return s;
  };
  op.reference = [mode, dims, interp](const Sample& s) {
    const HostTensor& x = s.args[0].tensor;
    const bool align = interp && s.args[2].boolean;
    const Arg& factors = s.args[interp ? 3 : 2];
    Shape size;
    std::vector<std::optional<double>> scales(static_cast<size_t>(dims));
    if (Given(s, 1)) {
      size = s.args[1].ints;
    } else {
      for (int d = 0; d < dims; ++d) {
        const double f = static_cast<double>(factors.ints[static_cast<size_t>(d)]);
        size.push_back(static_cast<int64_t>(static_cast<double>(x.shape[d + 2]) * f));
        scales[static_cast<size_t>(d)] = f;
      }
    }
    return std::vector<HostTensor>{Upsampled(x, mode, size, align, scales)};
  };
  op.errors = [dims, make](Rng& rng) {
    auto x = [&rng, dims]() { return MakeTensor(Cube(2, 3, dims, 4), TSR_DTYPE_FLOAT32, rng); };
    std::vector<ErrorInput> e;
    e.push_back(RefusedSaying(
        make(x(), Arg::Ints(Repeat(dims, 3)), false, Arg::Ints(Repeat(dims, 2))),
        TSR_INVALID_ARGUMENT, "Must specify exactly one of output_size and scale_factors"));
    e.push_back(RefusedSaying(make(x(), Arg::None(), false, Arg::None()), TSR_INVALID_ARGUMENT,
                              "Must specify exactly one of output_size and scale_factors"));
    e.push_back(RefusedSaying(make(x(), Arg::Ints(Repeat(dims + 1, 3)), false, Arg::None()),
                              TSR_INVALID_ARGUMENT, "output_size->size()) == spatial_dimensions"));
    e.push_back(RefusedSaying(make(x(), Arg::None(), false, Arg::Ints(Repeat(dims + 1, 2))),
                              TSR_INVALID_ARGUMENT,
                              "scale_factors->size()) == spatial_dimensions"));
    e.push_back(RefusedSaying(
        make(x(), Arg::None(), false,
             Arg::Ints(Repeat(dims, std::numeric_limits<int64_t>::max() / 2))),
        TSR_INVALID_ARGUMENT, "value cannot be converted to type int64_t without overflow"));
    e.push_back(RefusedSaying(make(x(), Arg::None(), false, Arg::Ints(Repeat(dims, 0))),
                              TSR_INVALID_ARGUMENT,
                              "Input and output sizes should be greater than 0"));
    e.push_back(RefusedSaying(make(x(), Arg::None(), false, Arg::Ints(Repeat(dims, -1))),
                              TSR_INVALID_ARGUMENT,
                              "Input and output sizes should be greater than 0"));
    return e;
  };
  return op;
}

}  // namespace
}  // namespace upsample

void AddUpsampleOps(std::vector<OpInfo>& db) {
  for (const auto& [mode, dims] : upsample::Ops()) {
    db.push_back(upsample::Base(mode, dims));
    db.push_back(upsample::Vec(mode, dims));
  }
}

}  // namespace conformance
}  // namespace tessera

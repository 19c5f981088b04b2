// Op set 1.9's upsampling ops as composites, so every backend has them: upsample_nearest{1,2,3}d,
// _upsample_nearest_exact{1,2,3}d, upsample_linear1d, upsample_bilinear2d, upsample_trilinear3d
// and upsample_bicubic2d, each with its .out, its .vec (output_size or scale_factors) and the
// .vec_out that ATen generates for the .vec.
//
// Note [Upsampling as gathers]
// Every mode is separable: an output element is a sum over taps per resized dim of
// weight * self[source index], the taps of a dim depending only on the output position along
// it. So the ops compute, on the host, each dim's source indices (and weights) exactly as ATen's
// UpSample.h helpers and cpu/UpSampleKernel.cpp compute them (nearest_idx and nearest_exact_idx
// with a float scale; area_pixel_compute_scale, area_pixel_compute_source_index and
// guard_index_and_lambda in opmath; the cubic convolution coefficients with A = -0.75 and its
// clamped taps), copy them to self's device, and per dim gather with index_select. Linear and
// cubic then weight the gathered taps (weights broadcast along the dim) and sum them in tap order,
// the last dim first, as ATen's Interpolate recursion nests them (the last dim innermost); the
// weights are stored in self's dtype as ATen's CPU kernel stores them, and the 16-bit floats
// compute in float32 and round once (Opmath).
//
// Dtypes as current ATen's CPU kernels: nearest takes the floating dtypes and uint8; linear and
// cubic the floating dtypes (ATen's uint8 bilinear/bicubic is a separate fixed-point path with
// int16 weights and a rounding per pass; not taken here).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/dtype.h"
#include "core/half.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"
#include "dispatcher/ops/upsample_support.h"

namespace tessera {
namespace ops {
namespace upsample {
namespace {

// ---- ATen's index arithmetic (UpSample.h), in the float type it uses ----

// Nearest's scale: compute_scales_value<float>.
float NearestScale(std::optional<double> scale, int64_t in, int64_t out) {
  return scale.has_value() && *scale > 0. ? static_cast<float>(1.0 / *scale)
                                          : static_cast<float>(in) / static_cast<float>(out);
}

// nearest_idx: the BC special cases (same size, twice the size) ignore the scale.
int64_t NearestIndex(int64_t o, int64_t in, int64_t out, std::optional<double> scale) {
  if (out == in) return o;
  if (out == 2 * in) return o >> 1;
  const float s = NearestScale(scale, in, out);
  return std::min(static_cast<int64_t>(std::floor(static_cast<float>(o) * s)), in - 1);
}

// nearest_exact_idx: (o + 0.5) * scale is a double product, floored as a float (floorf).
int64_t NearestExactIndex(int64_t o, int64_t in, int64_t out, std::optional<double> scale) {
  const float s = NearestScale(scale, in, out);
  const double product = (static_cast<double>(o) + 0.5) * static_cast<double>(s);
  return std::min(static_cast<int64_t>(std::floor(static_cast<float>(product))), in - 1);
}

// area_pixel_compute_scale<T>.
template <typename T>
T AreaScale(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners) {
    return out > 1 ? static_cast<T>(in - 1) / static_cast<T>(out - 1) : T(0);
  }
  return scale.has_value() && *scale > 0. ? static_cast<T>(1.0 / *scale)
                                          : static_cast<T>(in) / static_cast<T>(out);
}

// area_pixel_compute_source_index<T>.
template <typename T>
T AreaSourceIndex(T scale, int64_t o, bool align_corners, bool cubic) {
  if (align_corners) return scale * static_cast<T>(o);
  const T src = scale * (static_cast<T>(o) + static_cast<T>(0.5)) - static_cast<T>(0.5);
  return !cubic && src < T(0) ? T(0) : src;
}

// guard_index_and_lambda: the index floored as a float (floorf) and kept inside self, the
// fraction clamped to [0, 1].
template <typename T>
void GuardIndexAndLambda(T real, int64_t in, int64_t* index, T* lambda) {
  *index = std::min(static_cast<int64_t>(std::floor(static_cast<float>(real))), in - 1);
  *lambda = std::min(std::max(real - static_cast<T>(*index), T(0)), T(1));
}

// Stored: the opmath weight v as the kernel keeps it (then widened to double): in `dtype` for
// the forward (Weights::kStoredInDtype), as it is for the backward (Weights::kOpmath).
template <typename T>
double Stored(Weights weights, ScalarType dtype, T v) {
  if (weights == Weights::kOpmath) return static_cast<double>(v);
  switch (dtype) {
    case ScalarType::kFloat16:
      return static_cast<float>(Half(static_cast<float>(v)));
    case ScalarType::kBFloat16:
      return static_cast<float>(BFloat16(static_cast<float>(v)));
    case ScalarType::kFloat32:
      return static_cast<float>(v);
    default:
      return static_cast<double>(v);
  }
}

// Linear taps: compute_source_index_and_lambda (same size: a copy, whatever the scale). The first
// weight is 1 minus the second as stored (for kOpmath, 1 - lambda in T).
template <typename T>
Taps LinearTaps(Weights weights, ScalarType dtype, int64_t in, int64_t out, bool align_corners,
                std::optional<double> scale) {
  Taps taps{std::vector<std::vector<int64_t>>(2, std::vector<int64_t>(out)),
            std::vector<std::vector<double>>(2, std::vector<double>(out))};
  const T ratio = AreaScale<T>(in, out, align_corners, scale);
  for (int64_t o = 0; o < out; ++o) {
    int64_t i0 = o, i1 = o;
    double l0 = 1, l1 = 0;
    if (out != in) {
      const T real = AreaSourceIndex<T>(ratio, o, align_corners, /*cubic=*/false);
      T lambda;
      GuardIndexAndLambda<T>(real, in, &i0, &lambda);
      i1 = i0 + (i0 < in - 1 ? 1 : 0);
      l1 = Stored<T>(weights, dtype, lambda);
      l0 = Stored<T>(weights, dtype, static_cast<T>(1) - static_cast<T>(l1));
    }
    taps.index[0][o] = i0;
    taps.index[1][o] = i1;
    taps.weight[0][o] = l0;
    taps.weight[1][o] = l1;
  }
  return taps;
}

// The cubic convolution kernel's two pieces (A = -0.75), as UpSample.h writes them.
template <typename T>
T CubicNear(T x, T a) {  // |x| <= 1
  return ((a + 2) * x - (a + 3)) * x * x + 1;
}
template <typename T>
T CubicFar(T x, T a) {  // 1 < |x| < 2
  return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
}

// Cubic taps: 4 per position around the floored source index, clamped into self
// (HelperInterpCubic::compute_indices_weights; the backward's get_cubic_upsample_coefficients
// and upsample_increment_value_bounded).
template <typename T>
Taps CubicTaps(Weights weights, ScalarType dtype, int64_t in, int64_t out, bool align_corners,
               std::optional<double> scale) {
  Taps taps{std::vector<std::vector<int64_t>>(4, std::vector<int64_t>(out)),
            std::vector<std::vector<double>>(4, std::vector<double>(out))};
  const T ratio = AreaScale<T>(in, out, align_corners, scale);
  const T a = static_cast<T>(-0.75);
  for (int64_t o = 0; o < out; ++o) {
    const T real = AreaSourceIndex<T>(ratio, o, align_corners, /*cubic=*/true);
    int64_t index = 0;
    T t;
    GuardIndexAndLambda<T>(real, in, &index, &t);
    const T near = static_cast<T>(1) - t;
    const std::array<T, 4> coeffs{CubicFar<T>(t + static_cast<T>(1), a), CubicNear<T>(t, a),
                                  CubicNear<T>(near, a), CubicFar<T>(near + static_cast<T>(1), a)};
    for (int j = 0; j < 4; ++j) {
      taps.index[j][o] = std::clamp<int64_t>(index + j - 1, 0, in - 1);
      taps.weight[j][o] = Stored<T>(weights, dtype, coeffs[j]);
    }
  }
  return taps;
}

}  // namespace

Taps DimTaps(Mode mode, ScalarType dtype, int64_t in, int64_t out, bool align_corners,
             std::optional<double> scale, Weights weights) {
  // ATen's opmath: double for float64, float otherwise.
  const bool wide = dtype == ScalarType::kFloat64;
  switch (mode) {
    case Mode::kNearest:
    case Mode::kNearestExact: {
      Taps taps{{std::vector<int64_t>(out)}, {}};
      for (int64_t o = 0; o < out; ++o) {
        taps.index[0][o] = mode == Mode::kNearest ? NearestIndex(o, in, out, scale)
                                                  : NearestExactIndex(o, in, out, scale);
      }
      return taps;
    }
    case Mode::kLinear:
      return wide ? LinearTaps<double>(weights, dtype, in, out, align_corners, scale)
                  : LinearTaps<float>(weights, dtype, in, out, align_corners, scale);
    case Mode::kCubic:
      return wide ? CubicTaps<double>(weights, dtype, in, out, align_corners, scale)
                  : CubicTaps<float>(weights, dtype, in, out, align_corners, scale);
  }
  return {};
}

absl::Status CheckSizes(const OperatorHandle& op, IntArrayRef input_size,
                        const IntList& output_size, int dims) {
  if (static_cast<int>(output_size.size()) != dims) {
    return Invalid(op, absl::StrFormat("It is expected output_size equals to %d, but got size %d",
                                       dims, output_size.size()));
  }
  if (static_cast<int64_t>(input_size.size()) != dims + 2) {
    return Invalid(op, absl::StrFormat("It is expected input_size equals to %d, but got size %d",
                                       dims + 2, input_size.size()));
  }
  bool positive = true;
  for (int d = 0; d < dims; ++d) positive = positive && input_size[d + 2] > 0 && output_size[d] > 0;
  if (!positive) {
    static const char* const kNames[] = {"D", "H", "W"};
    std::vector<std::string> ins, outs;
    for (int d = 0; d < dims; ++d) {
      const char* name = kNames[3 - dims + d];
      ins.push_back(absl::StrFormat("%s: %d", name, input_size[d + 2]));
      outs.push_back(absl::StrFormat("%s: %d", name, output_size[d]));
    }
    return Invalid(
        op, absl::StrFormat("Input and output sizes should be greater than 0, but got input (%s)%s "
                            "output (%s)",
                            absl::StrJoin(ins, ", "), dims == 1 ? " and" : "",
                            absl::StrJoin(outs, ", ")));
  }
  return absl::OkStatus();
}

namespace {

// ---- checks (the meta functions beyond upsample_{1,2,3}d_common_check) ----

std::string SizesString(IntArrayRef sizes) {
  return absl::StrCat("[", absl::StrJoin(sizes.begin(), sizes.end(), ", "), "]");
}

absl::Status CheckShapes(const OperatorHandle& op, const Tensor& self, const IntList& output_size,
                         int dims) {
  TSR_RETURN_IF_ERROR(CheckSizes(op, self.sizes(), output_size, dims));
  // An empty batch is allowed, an empty channel dim is not.
  if (self.sizes()[1] == 0) {
    return Invalid(op, absl::StrFormat("Non-empty %dD data tensor expected but got a tensor with "
                                       "sizes %s",
                                       dims + 2, SizesString(self.sizes())));
  }
  return absl::OkStatus();
}

absl::Status CheckDtype(const OperatorHandle& op, Mode mode, ScalarType dtype) {
  if (IsFloatingType(dtype)) return absl::OkStatus();
  if (!Interpolates(mode) && dtype == ScalarType::kUInt8) return absl::OkStatus();
  if (Interpolates(mode)) return NotFloating(op, dtype);
  return absl::UnimplementedError(
      absl::StrFormat("%s: not implemented for dtype %s (expected a floating dtype or uint8)",
                      op.name(), ScalarTypeName(dtype)));
}

// ---- the composite ----

// Resize: `x` (self, or self in the compute dtype) resized along `dim` by `taps`.
absl::StatusOr<Tensor> Resize(OpRegistry& r, const Tensor& x, int64_t dim, const Taps& taps,
                              ScalarType compute) {
  const int64_t out = static_cast<int64_t>(taps.index[0].size());
  Tensor sum;
  for (size_t t = 0; t < taps.index.size(); ++t) {
    TSR_ASSIGN_OR_RETURN(Tensor index, OnDevice<int64_t>(r, taps.index[t], ScalarType::kInt64,
                                                         x.device(), IntList{out}));
    TSR_ASSIGN_OR_RETURN(Tensor gathered,
                         CallOne(r, "index_select", {Value(x), Value(dim), Value(index)}));
    if (taps.weight.empty()) return gathered;  // nearest: one tap, no weight
    TSR_ASSIGN_OR_RETURN(Tensor weight,
                         WeightOnDevice(r, taps.weight[t], compute, x.device(), x.dim(), dim));
    TSR_ASSIGN_OR_RETURN(Tensor term,
                         CallOne(r, "mul.Tensor", {Value(gathered), Value(std::move(weight))}));
    if (t == 0) {
      sum = std::move(term);
    } else {
      TSR_ASSIGN_OR_RETURN(
          sum, CallOne(r, "add.Tensor", {Value(sum), Value(term), Value(Scalar(int64_t{1}))}));
    }
  }
  return sum;
}

// upsample_<mode><dims>d(self, output_size, [align_corners,] scales...)
template <Mode kMode, int kDims>
absl::StatusOr<Tensor> UpsampleOf(const OperatorHandle& op, const Stack& s) {
  OpRegistry& r = op.registry();
  const Tensor& self = s[0].tensor();
  const IntList& output_size = s[1].int_list();
  const bool align_corners = Interpolates(kMode) && s[2].to_bool();
  const size_t first_scale = Interpolates(kMode) ? 3 : 2;
  TSR_RETURN_IF_ERROR(CheckShapes(op, self, output_size, kDims));
  TSR_RETURN_IF_ERROR(CheckDtype(op, kMode, self.dtype()));
  // The taps below are host tables as long as the output's dims: an output no device holds is
  // refused first, and an empty one computes nothing.
  DimVector shape(self.sizes().begin(), self.sizes().begin() + 2);
  shape.insert(shape.end(), output_size.begin(), output_size.end());
  TSR_RETURN_IF_ERROR(CheckOutputFits(r, self, shape));
  TSR_ASSIGN_OR_RETURN(const int64_t numel, ComputeNumel(shape));
  // Empty, or on the Meta device (whose outputs may be of any size): the shape is the result.
  if (numel == 0 || self.device().type == DeviceType::kMeta) return EmptyOf(r, self, shape);
  const Opmath math(self.dtype());
  Tensor x = self;
  if (Interpolates(kMode)) {
    TSR_ASSIGN_OR_RETURN(Value in, math.In(r, Value(self)));
    x = in.tensor();
  }
  // The last dim first (Note [Upsampling as gathers]).
  for (int d = kDims - 1; d >= 0; --d) {
    const Value& scale_arg = s[first_scale + d];
    const std::optional<double> scale =
        scale_arg.is_none() ? std::nullopt : std::optional<double>(scale_arg.to_double());
    const int64_t dim = d + 2;
    const Taps taps = DimTaps(kMode, self.dtype(), self.sizes()[dim], output_size[d], align_corners,
                              scale, Weights::kStoredInDtype);
    TSR_ASSIGN_OR_RETURN(x, Resize(r, x, dim, taps, math.compute));
  }
  if (!Interpolates(kMode)) return x;
  return math.Out(r, std::move(x));
}

// upsample_<mode><dims>d.vec(input, output_size, [align_corners,] scale_factors): the output
// size from exactly one of output_size and scale_factors (upsample::compute_output_size), the
// scale factors passed on as the scales, as ATen's .vec composites do.
template <Mode kMode, int kDims>
absl::StatusOr<Tensor> UpsampleVecOf(const OperatorHandle& op, const Stack& s) {
  const Tensor& input = s[0].tensor();
  const Value& sizes = s[1];
  const Value& factors = s[Interpolates(kMode) ? 3 : 2];
  const int64_t spatial = input.dim() - 2;
  constexpr const char* kExactlyOne = "Must specify exactly one of output_size and scale_factors";
  IntList output_size;
  if (!sizes.is_none()) {
    if (!factors.is_none()) return Invalid(op, kExactlyOne);
    output_size = sizes.int_list();
    if (static_cast<int64_t>(output_size.size()) != spatial) {
      return Invalid(op, absl::StrFormat("Expected static_cast<int64_t>(output_size->size()) == "
                                         "spatial_dimensions to be true, but got false (%d "
                                         "sizes for the %d dims of input after the first two)",
                                         output_size.size(), spatial));
    }
  } else if (!factors.is_none()) {
    const std::vector<double>& f = factors.double_list();
    if (static_cast<int64_t>(f.size()) != spatial) {
      return Invalid(op, absl::StrFormat("Expected static_cast<int64_t>(scale_factors->size()) "
                                         "== spatial_dimensions to be true, but got false (%d "
                                         "factors for the %d dims of input after the first two)",
                                         f.size(), spatial));
    }
    for (int64_t d = 0; d < spatial; ++d) {
      const double size = static_cast<double>(input.sizes()[d + 2]) * f[d];
      // c10::checked_convert<int64_t>: the product must fit (2^63 itself does not).
      if (!(size >= -9223372036854775808.0 && size < 9223372036854775808.0)) {
        return Invalid(op, "value cannot be converted to type int64_t without overflow");
      }
      output_size.push_back(static_cast<int64_t>(size));
    }
  } else {
    return Invalid(op, kExactlyOne);
  }
  Stack args{s[0], Value(output_size)};
  if (Interpolates(kMode)) args.push_back(s[2]);
  for (int d = 0; d < kDims; ++d) {
    // get_scale_value: the factor of dim d, where there are as many as the op's dims.
    if (factors.is_none() || d >= static_cast<int>(factors.double_list().size())) {
      args.push_back(Value());
    } else {
      args.push_back(Value(factors.double_list()[d]));
    }
  }
  static const std::string kNames[4][3] = {
      {"upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d"},
      {"_upsample_nearest_exact1d", "_upsample_nearest_exact2d", "_upsample_nearest_exact3d"},
      {"upsample_linear1d", "upsample_bilinear2d", "upsample_trilinear3d"},
      {"", "upsample_bicubic2d", ""}};
  return CallOne(op.registry(), kNames[static_cast<int>(kMode)][kDims - 1], std::move(args));
}

// Definitions: the four overloads of one op. `base` is its name, `scales` its scale arguments
// ("float? scales_h=None, float? scales_w=None").
template <Mode kMode, int kDims>
std::vector<Definition> Definitions(const std::string& base, const std::string& scales) {
  constexpr bool kInterp = Interpolates(kMode);
  const std::string size = absl::StrFormat("int[%d] output_size", kDims);
  const std::string align = kInterp ? ", bool align_corners" : "";
  const std::string self_args = absl::StrCat("Tensor self, ", size, align, ", ", scales);
  const std::string vec_args =
      absl::StrCat("Tensor input, int[]? output_size", align, ", float[]? scale_factors");
  constexpr int kOut = (kInterp ? 3 : 2) + kDims;
  constexpr int kVecOut = kInterp ? 4 : 3;
  const std::string out = ", *, Tensor(a!) out) -> Tensor(a!)";
  const std::string kernel = "core::" + base;
  std::vector<Definition> defs;
  defs.push_back({absl::StrCat(base, "(", self_args, ") -> Tensor"),
                  MakeKernel<Named<ComputeOne<UpsampleOf<kMode, kDims>>>>(kernel)});
  defs.push_back(
      {absl::StrCat(base, ".out(", self_args, out),
       MakeKernel<Named<ComputeIntoOut<UpsampleOf<kMode, kDims>, kOut>>>(kernel + "_out")});
  defs.push_back({absl::StrCat(base, ".vec(", vec_args, ") -> Tensor"),
                  MakeKernel<Named<ComputeOne<UpsampleVecOf<kMode, kDims>>>>(kernel + "_vec")});
  defs.push_back(
      {absl::StrCat(base, ".vec_out(", vec_args, out),
       MakeKernel<Named<ComputeIntoOut<UpsampleVecOf<kMode, kDims>, kVecOut, /*kCastable=*/true>>>(
           kernel + "_vec_out")});
  return defs;
}

}  // namespace
}  // namespace upsample

absl::Status DefineUpsampleOps(OpRegistry& registry) {
  // Each op's four overloads.
  return upsample::DefineEach(
      registry, [](auto mode, auto dims, const std::string& name, const std::string& scales) {
        return upsample::Definitions<decltype(mode)::value, decltype(dims)::value>(name, scales);
      });
}

}  // namespace ops
}  // namespace tessera

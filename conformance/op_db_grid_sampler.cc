// Op set 1.10's grid sampling (linalg_nn family): grid_sampler_2d, grid_sampler_3d, their
// backward ops, affine_grid_generator and affine_grid_generator_backward. The references loop
// over the outputs in double as ATen's scalar CPU code does (GridSampler.cpp's
// _grid_sampler_2d_cpu_fallback, grid_sampler_3d_cpu_impl and their backwards, GridSampler.h's
// coordinate helpers, AffineGridGenerator.cpp), independently of the composites' tensor
// arithmetic. Samples cover every interpolation x padding x align_corners (bicubic in 2-D only,
// as ATen) with grids reaching past [-1, 1] (and far past it for reflection and border), batches
// and channels above 1, an empty output, a single-pixel input and nearest's ties; the gradient
// oracle checks the backward ops against the forward ops' central differences, for bilinear,
// trilinear and bicubic with source points kept off the cell borders and padding edges (where
// the forward has no derivative). NaN and +-inf grid coordinates, in every mode, get ATen's scalar
// CPU values (see Note [Non-finite grid coordinates] in dispatcher/ops/grid_sampler_ops.cc): the
// forward's clip_coordinates (std::min / std::max) sends NaN to size - 1, the backward's
// clip_coordinates_set_grad (comparisons) lets it through, and a position that is not a finite
// in-range number is out of bounds (ATen casts it to int64, which x86 makes INT64_MIN).
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"

namespace tessera {
namespace conformance {
namespace {

enum { kBilinear = 0, kNearest = 1, kBicubic = 2 };
enum { kZeros = 0, kBorder = 1, kReflection = 2 };
const char* const kInterpolationNames[] = {"bilinear", "nearest", "bicubic"};
const char* const kPaddingNames[] = {"zeros", "border", "reflection"};
constexpr double kA = -0.75;

// ---- GridSampler.h, in double ----

double Unnormalize(double c, int64_t size, bool align, double* grad = nullptr) {
  if (align) {
    if (grad) *grad = static_cast<double>(size - 1) / 2;
    return ((c + 1) / 2) * static_cast<double>(size - 1);
  }
  if (grad) *grad = static_cast<double>(size) / 2;
  return ((c + 1) * static_cast<double>(size) - 1) / 2;
}

// ClipForward: clip_coordinates, std::min(size - 1, std::max(in, 0)) spelled out: std::max(a, b)
// is (a < b) ? b : a and std::min(a, b) is (b < a) ? b : a, so NaN gives size - 1.
double ClipForward(double in, int64_t size) {
  const double max = static_cast<double>(size - 1);
  const double low = in < 0 ? 0 : in;
  return low < max ? low : max;
}

// Clip: clip_coordinates_set_grad (NaN passes through both comparisons, with derivative 1).
double Clip(double in, int64_t size, double* grad = nullptr) {
  const double max = static_cast<double>(size - 1);
  if (in <= 0) {
    if (grad) *grad = 0;
    return 0;
  }
  if (in >= max) {
    if (grad) *grad = 0;
    return max;
  }
  if (grad) *grad = 1;
  return in;
}

double Reflect(double in, int64_t twice_low, int64_t twice_high, double* grad = nullptr) {
  if (twice_low == twice_high) {
    if (grad) *grad = 0;
    return 0;
  }
  const double min = static_cast<double>(twice_low) / 2;
  const double span = static_cast<double>(twice_high - twice_low) / 2;
  in -= min;
  double mult = 1;
  if (in < 0) {
    mult = -1;
    in = -in;
  }
  const double extra = std::fmod(in, span);
  // ATen casts floor(in / span) to int, undefined for NaN and infinities (x86 gives INT_MIN, an
  // even count); the result is NaN either way. The parity is taken in double here.
  if (!std::isfinite(in) || std::fmod(std::floor(in / span), 2) == 0) {
    if (grad) *grad = mult;
    return extra + min;
  }
  if (grad) *grad = -mult;
  return span - extra + min;
}

// Padded: compute_coordinates (border clips, reflection reflects then clips), or with `grad` its
// _set_grad form and derivative.
double Padded(double c, int64_t size, int padding, bool align, double* grad = nullptr) {
  double g_clip = 1, g_refl = 1;
  auto clip = [&](double v) { return grad ? Clip(v, size, &g_clip) : ClipForward(v, size); };
  if (padding == kBorder) {
    c = clip(c);
  } else if (padding == kReflection) {
    c = align ? Reflect(c, 0, 2 * (size - 1), &g_refl) : Reflect(c, -1, 2 * size - 1, &g_refl);
    c = clip(c);
  }
  if (grad) *grad = g_clip * g_refl;
  return c;
}

// Source: grid_sampler_compute_source_index, or with `grad` its _set_grad form.
double Source(double c, int64_t size, int padding, bool align, double* grad = nullptr) {
  double g_un = 1, g_pad = 1;
  const double u = Unnormalize(c, size, align, &g_un);
  const double s = Padded(u, size, padding, align, grad ? &g_pad : nullptr);
  if (grad) *grad = g_un * g_pad;
  return s;
}

// Index: an integer-valued position as a tap index; NaN, the infinities and positions far
// outside any input give one far out of bounds (ATen's int64 cast of them is undefined; on x86 it
// is INT64_MIN), which stays out of bounds after +1.
int64_t Index(double v) {
  constexpr double kFar = 1e15;
  if (!(v > -kFar && v < kFar)) return -(int64_t{1} << 60);
  return static_cast<int64_t>(v);
}

// The cubic convolution weights of the 4 taps at fraction t, and their derivatives wrt t.
std::array<double, 4> CubicWeights(double t) {
  auto cc1 = [](double x) { return ((kA + 2) * x - (kA + 3)) * x * x + 1; };
  auto cc2 = [](double x) { return ((kA * x - 5 * kA) * x + 8 * kA) * x - 4 * kA; };
  return {cc2(t + 1), cc1(t), cc1(1 - t), cc2(2 - t)};
}
std::array<double, 4> CubicWeightDerivatives(double t) {
  auto d1 = [](double x) { return (3 * (kA + 2) * x - 2 * (kA + 3)) * x; };
  auto d2 = [](double x) { return (3 * kA * x - 10 * kA) * x + 8 * kA; };
  return {d2(t + 1), d1(t), -d1(1 - t), -d2(2 - t)};
}

// Geometry: a sample's sizes; positions are given per coordinate, x (the last dim) first.
struct Geometry {
  int64_t N, C, k, in_numel = 1, out_numel = 1;
  std::vector<int64_t> in_sp, out_sp;  // spatial sizes, outermost first
  Geometry(const HostTensor& input, const HostTensor& grid)
      : N(input.shape[0]), C(input.shape[1]), k(input.dim() - 2) {
    for (int64_t j = 0; j < k; ++j) {
      in_sp.push_back(input.shape[2 + j]);
      out_sp.push_back(grid.shape[1 + j]);
      in_numel *= in_sp.back();
      out_numel *= out_sp.back();
    }
  }
  int64_t Extent(int64_t d) const { return in_sp[k - 1 - d]; }  // along coordinate d
  bool Inside(const std::vector<int64_t>& at) const {
    for (int64_t d = 0; d < k; ++d) {
      if (at[d] < 0 || at[d] >= Extent(d)) return false;
    }
    return true;
  }
  int64_t In(int64_t n, int64_t c, const std::vector<int64_t>& at) const {
    int64_t i = 0;
    for (int64_t j = 0; j < k; ++j) i = i * in_sp[j] + at[k - 1 - j];
    return (n * C + c) * in_numel + i;
  }
  int64_t Out(int64_t n, int64_t c, int64_t p) const { return (n * C + c) * out_numel + p; }
  int64_t Grid(int64_t n, int64_t p, int64_t d) const { return (n * out_numel + p) * k + d; }
};

// GridSample: the forward (and with `grad_output`, the backward) of grid_sampler_2d / _3d.
struct GridSample {
  std::vector<double> out, grad_input, grad_grid;
};

GridSample RunGridSampler(const HostTensor& input, const HostTensor& grid, int interpolation,
                          int padding, bool align, const HostTensor* grad_output) {
  const Geometry g(input, grid);
  const int64_t k = g.k;
  GridSample r;
  r.out.assign(static_cast<size_t>(g.N * g.C * g.out_numel), 0);
  r.grad_input.assign(input.values.size(), 0);
  r.grad_grid.assign(grid.values.size(), 0);
  auto value = [&](int64_t n, int64_t c, const std::vector<int64_t>& at) {
    return g.Inside(at) ? input.values[g.In(n, c, at)] : 0.0;
  };
  auto add = [&](int64_t n, int64_t c, const std::vector<int64_t>& at, double v) {
    if (g.Inside(at)) r.grad_input[g.In(n, c, at)] += v;
  };
  auto go_at = [&](int64_t n, int64_t c, int64_t p) {
    return grad_output ? grad_output->values[g.Out(n, c, p)] : 0.0;
  };
  for (int64_t n = 0; n < g.N; ++n) {
    for (int64_t p = 0; p < g.out_numel; ++p) {
      std::vector<double> mult(k, 1), gi(k, 0);
      if (interpolation == kBicubic) {  // 2-D only
        std::array<double, 2> i0{}, t{};
        for (int d = 0; d < 2; ++d) {
          const double i = Unnormalize(grid.values[g.Grid(n, p, d)], g.Extent(d), align, &mult[d]);
          i0[d] = std::floor(i);
          t[d] = i - i0[d];
        }
        const auto wx = CubicWeights(t[0]), wy = CubicWeights(t[1]);
        const auto dwx = CubicWeightDerivatives(t[0]), dwy = CubicWeightDerivatives(t[1]);
        for (int64_t c = 0; c < g.C; ++c) {
          const double go = go_at(n, c, p);
          double acc = 0;
          for (int j = 0; j < 4; ++j) {
            double row = 0;
            for (int i = 0; i < 4; ++i) {
              // get_value_bounded / add_value_bounded: compute_coordinates on each tap, an
              // out-of-bounds tap reads 0 (times the weights, NaN for a non-finite coordinate).
              const std::vector<int64_t> at{
                  Index(Padded(i0[0] - 1 + i, g.Extent(0), padding, align)),
                  Index(Padded(i0[1] - 1 + j, g.Extent(1), padding, align))};
              const double v = value(n, c, at);
              row += v * wx[i];
              add(n, c, at, go * wx[i] * wy[j]);
              gi[0] += v * dwx[i] * wy[j] * go;
              gi[1] += v * wx[i] * dwy[j] * go;
            }
            acc += row * wy[j];
          }
          r.out[g.Out(n, c, p)] = acc;
        }
      } else {
        // The forward samples at compute_source_index's positions, the backward at its _set_grad
        // form's; they differ only where a NaN passes clip_coordinates_set_grad.
        std::vector<double> fwd(k), bwd(k);
        for (int64_t d = 0; d < k; ++d) {
          const double x = grid.values[g.Grid(n, p, d)];
          fwd[d] = Source(x, g.Extent(d), padding, align);
          bwd[d] = Source(x, g.Extent(d), padding, align, &mult[d]);
        }
        if (interpolation == kNearest) {
          std::vector<int64_t> at(k), back(k);
          for (int64_t d = 0; d < k; ++d) {
            at[d] = Index(std::nearbyint(fwd[d]));
            back[d] = Index(std::nearbyint(bwd[d]));
          }
          for (int64_t c = 0; c < g.C; ++c) {
            r.out[g.Out(n, c, p)] = value(n, c, at);
            add(n, c, back, go_at(n, c, p));
          }
          std::fill(mult.begin(), mult.end(), 0.0);
        } else {
          // The 2^k corners, bit d picking the upper neighbour along coordinate d; each weighs
          // the product of (upper - i) or (i - lower) over the coordinates. Only in-bounds
          // corners add anything (within_bounds_2d / _3d), NaN weights included.
          auto corners = [&](const std::vector<double>& i, bool backward) {
            for (int64_t b = 0; b < (int64_t{1} << k); ++b) {
              std::vector<int64_t> at(k);
              std::vector<double> f(k);
              for (int64_t d = 0; d < k; ++d) {
                const bool up = (b >> d) & 1;
                const double lower = std::floor(i[d]);
                at[d] = Index(lower + (up ? 1 : 0));
                f[d] = up ? i[d] - lower : lower + 1 - i[d];
              }
              if (!g.Inside(at)) continue;
              double w = 1;
              for (int64_t d = 0; d < k; ++d) w *= f[d];
              for (int64_t c = 0; c < g.C; ++c) {
                const double v = value(n, c, at);
                if (!backward) {
                  r.out[g.Out(n, c, p)] += v * w;
                  continue;
                }
                const double go = go_at(n, c, p);
                add(n, c, at, w * go);
                for (int64_t d = 0; d < k; ++d) {
                  double dw = ((b >> d) & 1) ? 1 : -1;
                  for (int64_t e = 0; e < k; ++e) {
                    if (e != d) dw *= f[e];
                  }
                  gi[d] += v * dw * go;
                }
              }
            }
          };
          corners(fwd, false);
          if (grad_output) corners(bwd, true);
        }
      }
      for (int64_t d = 0; d < k; ++d) r.grad_grid[g.Grid(n, p, d)] = mult[d] * gi[d];
    }
  }
  return r;
}

HostTensor Rounded(tsr_dtype dtype, std::vector<int64_t> shape, const std::vector<double>& v) {
  return Values(dtype, std::move(shape), v);
}

HostTensor Random(std::vector<int64_t> shape, tsr_dtype dtype, Rng& rng, double low = -2,
                  double high = 2) {
  MakeOptions range;
  range.low = low;
  range.high = high;
  return MakeTensor(std::move(shape), dtype, rng, range);
}

// ---- samples ----

struct GridCase {
  std::vector<int64_t> input, grid;  // grid: [N, spatial out..., k]
  std::string note;
};

std::string ModeString(int interpolation, int padding, bool align) {
  return std::string(" ") + kInterpolationNames[interpolation] + ", " + kPaddingNames[padding] +
         (align ? ", align_corners" : "");
}

std::vector<int64_t> OutputShape(const std::vector<int64_t>& input,
                                 const std::vector<int64_t>& grid) {
  std::vector<int64_t> out{input[0], input[1]};
  out.insert(out.end(), grid.begin() + 1, grid.end() - 1);
  return out;
}

// The forward's arguments (with `backward`, the backward's: grad_output first, output_mask last).
std::vector<Arg> SamplerArgs(Arg input, Arg grid, int64_t interpolation, int64_t padding,
                             bool align, const Arg* grad_output) {
  std::vector<Arg> args;
  if (grad_output) args.push_back(*grad_output);
  args.push_back(std::move(input));
  args.push_back(std::move(grid));
  args.push_back(Arg::Int(interpolation));
  args.push_back(Arg::Int(padding));
  args.push_back(Arg::Bool(align));
  if (grad_output) args.push_back(Arg::Bools({true, true}));
  return args;
}

// Samples of grid_sampler_{2,3}d (`k` spatial dims) or, with `backward`, of its backward: every
// mode (bicubic in 2-D only, as ATen) with grids reaching past [-1, 1], then the edge cases.
std::vector<Sample> SamplerSamples(int64_t k, tsr_dtype dtype, Rng& rng, bool backward) {
  std::vector<Sample> samples;
  auto add_with = [&](const GridCase& c, const HostTensor& grid, int interpolation, int padding,
                      bool align) {
    const HostTensor input = Random(c.input, dtype, rng);
    const Arg grad = Arg::Tensor(Random(OutputShape(c.input, c.grid), dtype, rng));
    samples.push_back({SamplerArgs(Arg::Tensor(input), Arg::Tensor(grid), interpolation, padding,
                                   align, backward ? &grad : nullptr),
                       ShapeString(c.input) + " grid " + ShapeString(c.grid) +
                           ModeString(interpolation, padding, align) +
                           (c.note.empty() ? "" : " (" + c.note + ")")});
  };
  auto add = [&](const GridCase& c, int interpolation, int padding, bool align,
                 double reach = 1.3) {
    add_with(c, Random(c.grid, dtype, rng, -reach, reach), interpolation, padding, align);
  };
  const int modes = k == 2 ? 3 : 2;
  const GridCase main = k == 2 ? GridCase{{2, 3, 4, 5}, {2, 3, 4, 2}, ""}
                               : GridCase{{2, 2, 3, 4, 5}, {2, 2, 3, 2, 3}, ""};
  for (int interpolation = 0; interpolation < modes; ++interpolation) {
    for (int padding = 0; padding < 3; ++padding) {
      for (const bool align : {false, true}) add(main, interpolation, padding, align);
    }
    // Far outside: reflection folds back several times, border clips everything.
    GridCase far = main;
    far.note = "grid in [-3.5, 3.5]";
    for (const bool align : {false, true}) add(far, interpolation, kReflection, align, 3.5);
    add(far, interpolation, kBorder, false, 3.5);
  }
  // NaN and +-inf coordinates (one or more per point, each kind along each coordinate) beside a
  // finite point: ATen's scalar values, never an index error.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const GridCase nonfinite =
      k == 2 ? GridCase{{2, 2, 3, 4}, {2, 1, 4, 2}, "NaN and inf in the grid"}
             : GridCase{{1, 2, 2, 3, 4}, {1, 1, 2, 4, 3}, "NaN and inf in the grid"};
  const std::vector<double> nonfinite_grid =
      k == 2 ? std::vector<double>{nan, 0.2, 0.3, nan,  inf,  -0.4,  -inf, 0.5,
                                   0.1, inf, nan, -inf, 0.25, -0.45, -0.6, -inf}
             : std::vector<double>{nan, 0.2, 0.1, 0.3, inf, -0.2, -inf, 0.5, 0.4, 0.1,  -0.3,  nan,
                                   inf, nan, 0.2, 0.6, 0.2, -inf, -0.7, 0.4, 0.9, 0.25, -0.45, 0.3};
  for (int interpolation = 0; interpolation < modes; ++interpolation) {
    for (int padding = 0; padding < 3; ++padding) {
      for (const bool align : {false, true}) {
        add_with(nonfinite, Values(dtype, nonfinite.grid, nonfinite_grid), interpolation, padding,
                 align);
      }
    }
  }
  if (k == 2) {
    for (int interpolation = 0; interpolation < modes; ++interpolation) {
      add({{1, 2, 3, 3}, {1, 0, 4, 2}, "empty output"}, interpolation, kZeros, false);
      add({{1, 2, 1, 1}, {1, 2, 3, 2}, "1x1 input"}, interpolation, kReflection, true);
      add({{1, 2, 1, 1}, {1, 2, 3, 2}, "1x1 input"}, interpolation, kReflection, false);
    }
    add({{3, 1, 5, 2}, {3, 2, 2, 2}, "one channel, narrow"}, kBilinear, kBorder, false);
    add({{2, 0, 3, 3}, {2, 2, 2, 2}, "no channels"}, kBilinear, kZeros, false);
    add({{0, 2, 3, 3}, {0, 2, 2, 2}, "empty batch"}, kBicubic, kZeros, false);
    // Source positions exactly halfway between pixels (1.5, 2.5, -0.5, 3.5 on a 4x4 input):
    // nearest rounds them half to even, as nearbyint.
    const GridCase ties{{2, 1, 4, 4}, {2, 1, 4, 2}, "nearest, ties to even"};
    add_with(
        ties,
        Values(dtype, ties.grid,
               {-0.75, -0.25, 0, 0.25, 0.5, 0.75, -1, 1, 0.25, 0, 0.5, 0.5, 0.75, -0.5, 1, -1}),
        kNearest, kZeros, false);
  } else {
    for (int interpolation = 0; interpolation < modes; ++interpolation) {
      add({{1, 2, 2, 3, 3}, {1, 2, 0, 4, 3}, "empty output"}, interpolation, kZeros, false);
      add({{1, 1, 1, 1, 1}, {1, 2, 1, 2, 3}, "1x1x1 input"}, interpolation, kReflection, true);
      add({{1, 1, 1, 1, 1}, {1, 2, 1, 2, 3}, "1x1x1 input"}, interpolation, kReflection, false);
    }
  }
  return samples;
}

// Grid points whose source positions lie at fractions 0.1-0.4 or 0.6-0.9 of a cell, off the
// cell borders and padding edges (where the forward has no derivative), some outside the input.
// `extent[d]`: the input's extent along coordinate d (x first).
HostTensor SmoothGrid(std::vector<int64_t> shape, const std::vector<int64_t>& extent, bool align,
                      Rng& rng) {
  HostTensor t;
  t.dtype = TSR_DTYPE_FLOAT64;
  t.shape = shape;
  int64_t count = 1;
  for (size_t d = 0; d + 1 < shape.size(); ++d) count *= shape[d];
  std::uniform_real_distribution<double> frac(0.1, 0.4);
  for (int64_t i = 0; i < count; ++i) {
    for (const int64_t size : extent) {
      std::uniform_int_distribution<int64_t> cell(-2, size);
      const double u = static_cast<double>(cell(rng)) + frac(rng) + (rng() % 2 ? 0.5 : 0.0);
      // back from the source position to the grid's [-1, 1] scale
      t.values.push_back(align ? u / static_cast<double>(size - 1) * 2 - 1
                               : (2 * u + 1) / static_cast<double>(size) - 1);
    }
  }
  return t;
}

// ---- checks' error inputs ----

Arg F32(std::vector<int64_t> shape, Rng& rng) {
  return Arg::Tensor(MakeTensor(std::move(shape), TSR_DTYPE_FLOAT32, rng));
}

std::vector<ErrorInput> SamplerErrors(int64_t k, Rng& rng, bool backward) {
  std::vector<ErrorInput> errors;
  // `message`: what the check's error says (RefusedSaying); `what`, where that does not
  // describe the input.
  auto add = [&](Arg input, Arg grid, std::vector<int64_t> out, int64_t interpolation,
                 int64_t padding, tsr_code code, std::string message, std::string what = "") {
    const Arg grad = F32(std::move(out), rng);
    std::vector<Arg> args = SamplerArgs(std::move(input), std::move(grid), interpolation, padding,
                                        false, backward ? &grad : nullptr);
    errors.push_back(
        what.empty() ? RefusedSaying(std::move(args), code, std::move(message))
                     : Saying(Refused(std::move(args), code, std::move(what)), std::move(message)));
  };
  // A well-formed call's shapes: input, grid and output.
  const std::vector<int64_t> in =
      k == 2 ? std::vector<int64_t>{2, 3, 4, 5} : std::vector<int64_t>{2, 3, 2, 4, 5};
  std::vector<int64_t> grid =
      k == 2 ? std::vector<int64_t>{2, 3, 3, 2} : std::vector<int64_t>{2, 2, 3, 3, 3};
  const std::vector<int64_t> out = OutputShape(in, grid);
  auto with = [](std::vector<int64_t> v, size_t i, int64_t value) {
    v[i] = value;
    return v;
  };
  const std::string dims = k == 2 ? "4D" : "5D";
  // Grid of one dim less, last dim still k: the dims check.
  std::vector<int64_t> short_grid(grid.begin() + 1, grid.end());
  short_grid[0] = in[0];
  add(F32(in, rng), F32(short_grid, rng), out, 0, 0, TSR_INVALID_ARGUMENT,
      "grid_sampler(): expected " + dims + " input and grid with same number of dimensions");
  // One dim less on both: the last-dim check fires first (it wants input.dim() - 2).
  std::vector<int64_t> small_in(in.begin() + 1, in.end());
  small_in[0] = in[0];
  add(F32(small_in, rng), F32(short_grid, rng), out, 0, 0, TSR_INVALID_ARGUMENT,
      "grid_sampler(): expected grid to have size " + std::to_string(k - 1) + " in last dimension",
      "one dim less on both");
  add(F32(with(in, 0, 1), rng), F32(grid, rng), with(out, 0, 1), 0, 0, TSR_INVALID_ARGUMENT,
      "grid_sampler(): expected grid and input to have same batch size");
  add(F32(in, rng), F32(with(grid, grid.size() - 1, k + 1), rng), out, 0, 0, TSR_INVALID_ARGUMENT,
      "grid_sampler(): expected grid to have size " + std::to_string(k) + " in last dimension");
  add(F32(with(in, 2, 0), rng), F32(grid, rng), out, 0, 0, TSR_INVALID_ARGUMENT,
      "grid_sampler(): expected input to have non-empty spatial dimensions");
  add(F32(in, rng), F32(grid, rng), out, 3, 0, TSR_INVALID_ARGUMENT,
      "grid_sampler(): expected interpolation_mode to be 0 (bilinear), 1 (nearest) or 2 "
      "(bicubic), but got 3",
      "interpolation_mode 3 (ATen leaves it unchecked)");
  add(F32(in, rng), F32(grid, rng), out, 0, -1, TSR_INVALID_ARGUMENT,
      "grid_sampler(): expected padding_mode to be 0 (zeros), 1 (border) or 2 (reflection), but "
      "got -1",
      "padding_mode -1 (ATen leaves it unchecked)");
  add(F32(in, rng), Arg::Tensor(MakeTensor(grid, TSR_DTYPE_FLOAT64, rng)), out, 0, 0,
      TSR_INVALID_ARGUMENT, "expected scalar type Float but found Double (grid)",
      "a float64 grid for a float32 input");
  // ATen: "grid_sampler_2d_cpu" not implemented for 'Int' (its dispatch macro's wording).
  add(Arg::Tensor(MakeTensor(in, TSR_DTYPE_INT32, rng)),
      Arg::Tensor(MakeTensor(grid, TSR_DTYPE_INT32, rng)), out, 0, 0, TSR_UNIMPLEMENTED,
      "not implemented for dtype int32 (expected a floating dtype)", "an int32 input and grid");
  if (k == 3) {
    add(F32(in, rng), F32(grid, rng), out, kBicubic, 0, TSR_UNIMPLEMENTED,
        "grid_sampler(): bicubic interpolation with 5D input is not implemented");
  }
  if (backward) {
    const Arg wrong = F32(with(out, out.size() - 1, out.back() + 1), rng);
    errors.push_back(RefusedSaying(
        SamplerArgs(F32(in, rng), F32(grid, rng), 0, 0, false, &wrong), TSR_INVALID_ARGUMENT,
        "grid_sampler(): expected grad_output to have sizes " + ShapeString(out) +
            " but got grad_output with sizes " + ShapeString(wrong.tensor.shape)));
    const Arg f64 = Arg::Tensor(MakeTensor(out, TSR_DTYPE_FLOAT64, rng));
    errors.push_back(Saying(Refused(SamplerArgs(F32(in, rng), F32(grid, rng), 0, 0, false, &f64),
                                    TSR_INVALID_ARGUMENT, "a float64 grad_output for float32"),
                            "expected scalar type Float but found Double (grad_output)"));
  }
  return errors;
}

// ---- grid_sampler_{2,3}d, grid_sampler_{2,3}d_backward ----

void AddGridSampler(std::vector<OpInfo>& db, int64_t k) {
  const std::string name = "grid_sampler_" + std::to_string(k) + "d";
  OpInfo op;
  op.name = name;
  op.out = name + ".out";
  op.dtypes = kFloatingMask;  // float32, float64 on ATen's CPU; the 16-bit floats on CUDA
  op.tolerance_scale = 2;
  op.samples = [k](tsr_dtype dtype, Rng& rng) { return SamplerSamples(k, dtype, rng, false); };
  op.reference = [](const Sample& s) {
    const HostTensor& input = s.args[0].tensor;
    const HostTensor& grid = s.args[1].tensor;
    const GridSample r =
        RunGridSampler(input, grid, static_cast<int>(s.args[2].integer),
                       static_cast<int>(s.args[3].integer), s.args[4].boolean, nullptr);
    return std::vector<HostTensor>{
        Rounded(input.dtype, OutputShape(input.shape, grid.shape), r.out)};
  };
  op.errors = [k](Rng& rng) { return SamplerErrors(k, rng, false); };
  db.push_back(std::move(op));

  OpInfo bw;
  bw.name = name + "_backward";
  // ATen computes the grid's gradient whatever output_mask[1] says (only the input's is masked).
  bw.unmasked_returns = {1};
  bw.out = name + "_backward.out";
  bw.dtypes = kFloatingMask;
  bw.tolerance_scale = 4;  // the grid's gradient sums over channels and taps
  bw.samples = [k](tsr_dtype dtype, Rng& rng) { return SamplerSamples(k, dtype, rng, true); };
  bw.reference = [](const Sample& s) {
    const HostTensor& input = s.args[1].tensor;
    const HostTensor& grid = s.args[2].tensor;
    const GridSample r =
        RunGridSampler(input, grid, static_cast<int>(s.args[3].integer),
                       static_cast<int>(s.args[4].integer), s.args[5].boolean, &s.args[0].tensor);
    return std::vector<HostTensor>{Rounded(input.dtype, input.shape, r.grad_input),
                                   Rounded(grid.dtype, grid.shape, r.grad_grid)};
  };
  bw.errors = [k](Rng& rng) { return SamplerErrors(k, rng, true); };
  // The gradients of bilinear (trilinear) and bicubic sampling wrt the input and the grid
  // (nearest's grid gradient is 0 where the forward's is, so it is left to the reference).
  GradientSpec spec;
  spec.forward = name;
  spec.samples = [k](Rng& rng) {
    std::vector<Sample> samples;
    const std::vector<int64_t> in =
        k == 2 ? std::vector<int64_t>{2, 2, 3, 4} : std::vector<int64_t>{1, 2, 2, 3, 4};
    const std::vector<int64_t> grid =
        k == 2 ? std::vector<int64_t>{2, 2, 3, 2} : std::vector<int64_t>{1, 2, 2, 2, 3};
    const std::vector<int64_t> extent(in.rbegin(), in.rend() - 2);  // x's first
    for (const int interpolation : {kBilinear, kBicubic}) {
      if (k == 3 && interpolation == kBicubic) continue;
      for (int padding = 0; padding < 3; ++padding) {
        for (const bool align : {false, true}) {
          samples.push_back(Described(SamplerArgs(Arg::Tensor(Random(in, TSR_DTYPE_FLOAT64, rng)),
                                                  Arg::Tensor(SmoothGrid(grid, extent, align, rng)),
                                                  interpolation, padding, align, nullptr),
                                      ModeString(interpolation, padding, align)));
        }
      }
    }
    return samples;
  };
  spec.wrt = {0, 1};
  spec.backward_args = [](const Sample& s, const std::vector<HostTensor>&, const HostTensor& g) {
    return std::vector<Arg>{
        Arg::Tensor(g),          s.args[0], s.args[1], s.args[2], s.args[3], s.args[4],
        Arg::Bools({true, true})};
  };
  bw.gradient = std::move(spec);
  db.push_back(std::move(bw));
}

// ---- affine_grid_generator, affine_grid_generator_backward ----

// BaseCoordinate: ATen's linspace_from_neg_one: position i of n along one dim (0 for n <= 1),
// linspace(-1, 1, n) as ATen computes it (from the nearer end), then times (n - 1) and over n
// without align_corners; ATen builds the base grid in theta's dtype, so each step rounds to it.
double BaseCoordinate(int64_t i, int64_t n, bool align, tsr_dtype dtype) {
  if (n <= 1) return 0;
  const double step = 2.0 / static_cast<double>(n - 1);
  double v = RoundTo(dtype, i < n / 2 ? -1 + step * static_cast<double>(i)
                                      : 1 - step * static_cast<double>(n - 1 - i));
  if (!align) {
    v = RoundTo(dtype, v * static_cast<double>(n - 1));
    v = RoundTo(dtype, v / static_cast<double>(n));
  }
  return v;
}

// ForEachBase: calls f(n, p, base) for each sample n and spatial position p (row-major over the
// spatial dims of `size`) with its base row (x, y(, z), 1) in `dtype`.
template <typename F>
void ForEachBase(const std::vector<int64_t>& size, bool align, tsr_dtype dtype, F f) {
  const int64_t k = static_cast<int64_t>(size.size()) - 2;
  int64_t P = 1;
  for (int64_t d = 0; d < k; ++d) P *= size[2 + d];
  std::vector<int64_t> spatial(size.begin() + 2, size.end());
  for (int64_t n = 0; n < size[0]; ++n) {
    for (int64_t p = 0; p < P; ++p) {
      const std::vector<int64_t> at = Unravel(p, spatial);
      std::vector<double> base;
      for (int64_t c = 0; c < k; ++c) {  // x along the last dim, y the one before, ...
        const int64_t d = k - 1 - c;
        base.push_back(BaseCoordinate(at[d], spatial[d], align, dtype));
      }
      base.push_back(1);
      f(n, p, base);
    }
  }
}

std::vector<int64_t> GridShape(const std::vector<int64_t>& size) {
  std::vector<int64_t> shape{size[0]};
  shape.insert(shape.end(), size.begin() + 2, size.end());
  shape.push_back(static_cast<int64_t>(size.size()) - 2);
  return shape;
}

struct AffineCase {
  std::vector<int64_t> size;
  std::string note;
};

std::vector<AffineCase> AffineCases() {
  return {{{2, 3, 4, 5}, "2-D"},
          {{1, 1, 1, 3}, "2-D, one row"},
          {{3, 2, 0, 2}, "2-D, empty"},
          {{2, 1, 2, 3, 4}, "3-D"},
          {{1, 1, 1, 1, 2}, "3-D, single depth and row"}};
}

void AddAffineGridGenerator(std::vector<OpInfo>& db) {
  OpInfo op;
  op.name = "affine_grid_generator";
  op.out = "affine_grid_generator.out";
  op.dtypes = kFloatingMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> samples;
    for (const AffineCase& c : AffineCases()) {
      const int64_t k = static_cast<int64_t>(c.size.size()) - 2;
      for (const bool align : {false, true}) {
        samples.push_back(Described({Arg::Tensor(Random({c.size[0], k, k + 1}, dtype, rng)),
                                     Arg::Ints(c.size), Arg::Bool(align)},
                                    " (" + c.note + ")"));
      }
    }
    return samples;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& theta = s.args[0].tensor;
    const std::vector<int64_t>& size = s.args[1].ints;
    const int64_t k = static_cast<int64_t>(size.size()) - 2;
    const std::vector<int64_t> shape = GridShape(size);
    std::vector<double> out;
    ForEachBase(size, s.args[2].boolean, s.args[0].tensor.dtype,
                [&](int64_t n, int64_t, const std::vector<double>& b) {
                  for (int64_t row = 0; row < k; ++row) {
                    long double acc = 0;
                    for (int64_t j = 0; j <= k; ++j) {
                      acc += static_cast<long double>(b[j]) *
                             theta.values[(n * k + row) * (k + 1) + j];
                    }
                    out.push_back(static_cast<double>(acc));
                  }
                });
    return std::vector<HostTensor>{Rounded(theta.dtype, shape, out)};
  };
  op.errors = [](Rng& rng) {
    return std::vector<ErrorInput>{
        RefusedSaying({F32({2, 2, 3}, rng), Arg::Ints({2, 3, 4}), Arg::Bool(false)},
                      TSR_INVALID_ARGUMENT,
                      "AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs."),
        Saying(Refused({F32({2, 3, 4}, rng), Arg::Ints({2, 3, 4, 5}), Arg::Bool(false)},
                       TSR_INVALID_ARGUMENT, "a 3-D theta for a 2-D grid (ATen: bmm's refusal)"),
               "expected theta of shape [2, 2, 3] for size [2, 3, 4, 5], got [2, 3, 4]"),
        Saying(Refused({Arg::Tensor(MakeTensor({2, 2, 3}, TSR_DTYPE_INT64, rng)),
                        Arg::Ints({2, 3, 4, 5}), Arg::Bool(false)},
                       TSR_UNIMPLEMENTED, "an int64 theta"),
               "not implemented for dtype int64 (expected a floating dtype)")};
  };
  db.push_back(std::move(op));

  OpInfo bw;
  bw.name = "affine_grid_generator_backward";
  bw.dtypes = kFloatingMask;
  bw.tolerance_scale = 2;
  bw.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> samples;
    for (const AffineCase& c : AffineCases()) {
      for (const bool align : {false, true}) {
        samples.push_back(Described({Arg::Tensor(Random(GridShape(c.size), dtype, rng)),
                                     Arg::Ints(c.size), Arg::Bool(align)},
                                    " (" + c.note + ")"));
      }
    }
    return samples;
  };
  bw.reference = [](const Sample& s) {
    const HostTensor& grad = s.args[0].tensor;
    const std::vector<int64_t>& size = s.args[1].ints;
    const int64_t k = static_cast<int64_t>(size.size()) - 2;
    std::vector<long double> theta(static_cast<size_t>(size[0] * k * (k + 1)), 0);
    int64_t P = 1;
    for (int64_t d = 0; d < k; ++d) P *= size[2 + d];
    ForEachBase(size, s.args[2].boolean, s.args[0].tensor.dtype,
                [&](int64_t n, int64_t p, const std::vector<double>& b) {
                  for (int64_t row = 0; row < k; ++row) {
                    for (int64_t j = 0; j <= k; ++j) {
                      theta[(n * k + row) * (k + 1) + j] +=
                          static_cast<long double>(b[j]) * grad.values[(n * P + p) * k + row];
                    }
                  }
                });
    return std::vector<HostTensor>{FromLong({size[0], k, k + 1}, grad.dtype, theta)};
  };
  bw.errors = [](Rng& rng) {
    return std::vector<ErrorInput>{
        RefusedSaying({F32({2, 4, 5, 2}, rng), Arg::Ints({2, 3, 4}), Arg::Bool(false)},
                      TSR_INVALID_ARGUMENT,
                      "AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs."),
        Saying(Refused({F32({2, 4, 5, 3}, rng), Arg::Ints({2, 3, 4, 5}), Arg::Bool(false)},
                       TSR_INVALID_ARGUMENT,
                       "a grad of another shape than the grid (ATen: an assert)"),
               "expected grad of shape [2, 4, 5, 2] (the grid's for size [2, 3, 4, 5]), got "
               "[2, 4, 5, 3]")};
  };
  GradientSpec spec;
  spec.forward = "affine_grid_generator";
  spec.samples = [](Rng& rng) {
    std::vector<Sample> samples;
    for (const AffineCase& c : AffineCases()) {
      const int64_t k = static_cast<int64_t>(c.size.size()) - 2;
      for (const bool align : {false, true}) {
        samples.push_back(
            Described({Arg::Tensor(Random({c.size[0], k, k + 1}, TSR_DTYPE_FLOAT64, rng)),
                       Arg::Ints(c.size), Arg::Bool(align)},
                      " (" + c.note + ")"));
      }
    }
    return samples;
  };
  spec.wrt = {0};
  spec.backward_args = [](const Sample& s, const std::vector<HostTensor>&, const HostTensor& g) {
    return std::vector<Arg>{Arg::Tensor(g), s.args[1], s.args[2]};
  };
  bw.gradient = std::move(spec);
  db.push_back(std::move(bw));
}

}  // namespace

void AddGridSamplerOps(std::vector<OpInfo>& db) {
  AddGridSampler(db, 2);
  AddGridSampler(db, 3);
  AddAffineGridGenerator(db);
}

}  // namespace conformance
}  // namespace tessera

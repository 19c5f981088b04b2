// Op set 1.10's grid sampling as composites, so every backend has them: grid_sampler_2d and
// grid_sampler_2d_backward (bilinear, nearest and bicubic; zeros, border and reflection padding),
// grid_sampler_3d and grid_sampler_3d_backward (trilinear and nearest; ATen has no 3-D bicubic),
// affine_grid_generator (2-D and 3-D) and affine_grid_generator_backward, with ATen's out= forms.
//
// Note [Grid sampling as gathers]
// An output position p of sample n reads grid[n, p] = (x, y(, z)), maps each coordinate to a
// source position in the input as ATen's GridSampler.h does (unnormalize from [-1, 1], then clip
// or reflect for border and reflection padding), and combines the input's values at a few
// integer taps around it: bilinear's 4 (trilinear's 8) corners weighted by the opposite areas
// (volumes), nearest's one position (nearbyint: half to even, as `round`), bicubic's 4x4 taps
// around floor(x), floor(y) with the cubic convolution weights (A = -0.75), each tap's position
// clipped or reflected on its own. All of that is pointwise arithmetic over [N, P] coordinate
// tensors (P: the output's spatial numel). A tap's values are one `gather` along the flattened
// spatial dim of the input ([N, C, D * H * W]) with the tap's flat index (0 where out of bounds)
// expanded over the channels; a tap outside the input counts 0 (`where` on its in-bounds mask), as
// ATen's within_bounds_2d / _3d skip it.
//
// Note [Non-finite grid coordinates]
// A NaN or +-inf grid coordinate gets ATen's scalar CPU values (GridSampler.h, as
// _grid_sampler_2d_cpu_fallback and the 3-D kernels use it), never an index error: every tap's
// gather / scatter index is `where(in bounds, position, 0)`, so it is a valid position whatever the
// coordinate, and the in-bounds mask (false for NaN) drops the tap. Exactly:
// - clip_coordinates is std::min(size - 1, std::max(in, 0)), which maps NaN (and +inf) to
//   size - 1 and -inf to 0; reflect_coordinates gives NaN for NaN and +-inf (fmod(inf) is NaN), so
//   border and reflection padding sample a non-finite coordinate at size - 1 (-inf at 0 for
//   border). Zeros padding leaves it non-finite: all its taps are out of bounds.
// - The backward's clip_coordinates_set_grad compares instead (in <= 0, in >= size - 1), so a NaN
//   (and reflection's NaN for +-inf) passes through it: the backward finds those taps out of bounds
//   and adds nothing for them, though the forward sampled size - 1.
// - Bilinear (trilinear) and nearest add a tap's value times its weight only where the tap is in
//   bounds, so a point whose taps are all out of bounds gives 0, not 0 * NaN; bicubic reads 0 for
//   an out-of-bounds tap (get_value_bounded) and multiplies it by the weights, which are NaN for a
//   non-finite coordinate: its output and grid gradient are NaN, and its input gradient NaN at
//   the in-bounds taps.
// ATen's other kernels differ here: the vectorized 2-D CPU kernel clips NaN to 0 and returns NaN
// for bilinear / zeros; CUDA clips NaN to 0 (fmaxf) and sends non-finite positions to -100
// (safe_downgrade_to_int_range). torch 1.13's CPU kernels crash on some of these inputs.
//
// The backward runs the same taps: grad_input adds each tap's weight times grad_output into the
// tap's position (`scatter_add`, out-of-bounds taps masked to 0), and grad_grid sums over the
// channels grad_output times each tap's value times its weight's derivative along each
// coordinate, times the source coordinate's own derivative wrt the grid (unnormalize's scale, and
// clip's and reflect's 0 / +-1, as ATen's *_set_grad helpers give them: a border counts as
// clipped). Nearest's grid gradient is 0, and bicubic's takes unnormalize's scale only, as ATen's.
// grad_grid is returned whatever output_mask[1] says, as ATen's kernels return it.
//
// ATen's checks (GridSamplerUtils.h, including current ATen's grad_output shape check) and
// messages; the modes, which ATen's kernels leave unchecked, are refused with a message of our
// own. The 16-bit floats (ATen's CUDA kernels take them) are computed in float32 and rounded once
// (Opmath).
#include <array>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "core/device.h"
#include "core/shape.h"
#include "core/status_macros.h"
#include "core/views.h"
#include "dispatcher/core_ops.h"
#include "dispatcher/ops/boxing.h"

namespace tessera {
namespace ops {
namespace {

using Out = absl::StatusOr<std::vector<Tensor>>;
using T = absl::StatusOr<Tensor>;

constexpr double kCubicA = -0.75;  // ATen's get_cubic_upsample_coefficients
enum Interpolation : int64_t { kBilinear = 0, kNearest = 1, kBicubic = 2 };
enum Padding : int64_t { kZeros = 0, kBorder = 1, kReflection = 2 };

Value S(double v) { return Value(Scalar(v)); }
const Value kOne = Value(Scalar(int64_t{1}));

// ---- pointwise helpers (each one op through the registry) ----

T Add(OpRegistry& r, const Tensor& a, const Tensor& b) {
  return CallOne(r, "add.Tensor", {a, b, kOne});
}
T Sub(OpRegistry& r, const Tensor& a, const Tensor& b) {
  return CallOne(r, "sub.Tensor", {a, b, kOne});
}
T Mul(OpRegistry& r, const Tensor& a, const Tensor& b) { return CallOne(r, "mul.Tensor", {a, b}); }
T AddS(OpRegistry& r, const Tensor& a, double v) {
  return CallOne(r, "add.Scalar", {a, S(v), kOne});
}
T MulS(OpRegistry& r, const Tensor& a, double v) { return CallOne(r, "mul.Scalar", {a, S(v)}); }
T DivS(OpRegistry& r, const Tensor& a, double v) { return CallOne(r, "div.Scalar", {a, S(v)}); }
T Clamp(OpRegistry& r, const Tensor& a, double lo, double hi) {
  return CallOne(r, "clamp", {a, S(lo), S(hi)});
}
T Unary(OpRegistry& r, const char* name, const Tensor& a) { return CallOne(r, name, {a}); }
T Compare(OpRegistry& r, const char* name, const Tensor& a, double v) {
  return CallOne(r, name, {a, S(v)});
}
T And(OpRegistry& r, const Tensor& a, const Tensor& b) { return CallOne(r, "logical_and", {a, b}); }
T Where(OpRegistry& r, const Tensor& c, const Tensor& a, const Tensor& b) {
  return CallOne(r, "where.self", {c, a, b});
}
T Unsqueeze(OpRegistry& r, const Tensor& a, int64_t dim) {
  return CallOne(r, "unsqueeze", {a, Value(dim)});
}
T ToDtype(OpRegistry& r, const Tensor& a, ScalarType dtype) {
  return CallOne(r, "to.dtype", {a, Value(dtype), Value(false), Value(false), Value()});
}
// Accumulate: `acc` += `term` (`term` itself while `acc` is undefined), so a sum over taps keeps
// one running tensor instead of every tap's term.
absl::Status Accumulate(OpRegistry& r, Tensor& acc, const Tensor& term) {
  if (!acc.defined()) {
    acc = term;
    return absl::OkStatus();
  }
  TSR_ASSIGN_OR_RETURN(acc, Add(r, acc, term));
  return absl::OkStatus();
}

// ---- ATen's coordinate arithmetic (GridSampler.h), on [N, P] tensors ----

// Unnormalize: [-1, 1] to [0, size - 1] (align_corners) or [-0.5, size - 0.5].
T Unnormalize(OpRegistry& r, const Tensor& c, int64_t size, bool align) {
  TSR_ASSIGN_OR_RETURN(Tensor t, AddS(r, c, 1));
  if (align) {
    TSR_ASSIGN_OR_RETURN(t, DivS(r, t, 2));
    return MulS(r, t, static_cast<double>(size - 1));
  }
  TSR_ASSIGN_OR_RETURN(t, MulS(r, t, static_cast<double>(size)));
  TSR_ASSIGN_OR_RETURN(t, AddS(r, t, -1));
  return DivS(r, t, 2);
}
double UnnormalizeScale(int64_t size, bool align) {
  return align ? static_cast<double>(size - 1) / 2 : static_cast<double>(size) / 2;
}

// Reflect: reflect_coordinates(c, twice_low, twice_high); `grad` (optional): its derivative
// (+-1, or 0 where the span is empty).
T Reflect(OpRegistry& r, const Tensor& c, int64_t twice_low, int64_t twice_high, Tensor* grad) {
  if (twice_low == twice_high) {
    TSR_ASSIGN_OR_RETURN(Tensor zero, Zeros(r, c.sizes(), c.dtype(), c.device()));
    if (grad != nullptr) *grad = zero;
    return zero;
  }
  const double min = static_cast<double>(twice_low) / 2;
  const double span = static_cast<double>(twice_high - twice_low) / 2;
  TSR_ASSIGN_OR_RETURN(const Tensor shifted, AddS(r, c, -min));
  TSR_ASSIGN_OR_RETURN(const Tensor in, Unary(r, "abs", shifted));
  TSR_ASSIGN_OR_RETURN(const Tensor extra, CallOne(r, "fmod.Scalar", {in, S(span)}));
  TSR_ASSIGN_OR_RETURN(Tensor flips, DivS(r, in, span));
  TSR_ASSIGN_OR_RETURN(flips, Unary(r, "floor", flips));
  TSR_ASSIGN_OR_RETURN(flips, CallOne(r, "remainder.Scalar", {flips, S(2)}));
  TSR_ASSIGN_OR_RETURN(const Tensor odd, Compare(r, "eq.Scalar", flips, 1));
  TSR_ASSIGN_OR_RETURN(const Tensor even_value, AddS(r, extra, min));
  TSR_ASSIGN_OR_RETURN(Tensor odd_value, MulS(r, extra, -1));
  TSR_ASSIGN_OR_RETURN(odd_value, AddS(r, odd_value, span));
  TSR_ASSIGN_OR_RETURN(odd_value, AddS(r, odd_value, min));
  if (grad != nullptr) {
    // +1 where c >= min, -1 below; negated after an odd number of flips.
    TSR_ASSIGN_OR_RETURN(const Tensor below, Compare(r, "lt.Scalar", shifted, 0));
    TSR_ASSIGN_OR_RETURN(const Tensor flipped, CallOne(r, "ne.Tensor", {below, odd}));
    TSR_ASSIGN_OR_RETURN(const Tensor ones,
                         CallOne(r, "ones_like", {c, Value(), Value(), Value(), Value(), Value()}));
    TSR_ASSIGN_OR_RETURN(const Tensor minus, MulS(r, ones, -1));
    TSR_ASSIGN_OR_RETURN(*grad, Where(r, flipped, minus, ones));
  }
  return Where(r, odd, odd_value, even_value);
}

// ClipGrad: clip_coordinates_set_grad's derivative, 1 strictly inside (0, size - 1), else 0.
T ClipGrad(OpRegistry& r, const Tensor& c, int64_t size) {
  TSR_ASSIGN_OR_RETURN(const Tensor above, Compare(r, "gt.Scalar", c, 0));
  TSR_ASSIGN_OR_RETURN(const Tensor below,
                       Compare(r, "lt.Scalar", c, static_cast<double>(size - 1)));
  TSR_ASSIGN_OR_RETURN(const Tensor inside, And(r, above, below));
  return ToDtype(r, inside, c.dtype());
}

// Pad: compute_coordinates: border clips, reflection reflects (by the pixel edges, or the corner
// pixels' centers with align_corners) and clips; zeros leaves `c`. With `grad`, the _set_grad
// form and its derivative, clip's times reflect's. The two clips differ on NaN, see
// Note [Non-finite grid coordinates].
T Pad(OpRegistry& r, const Tensor& c, int64_t size, int64_t padding, bool align, Tensor* grad) {
  Tensor t = c, reflect_grad;
  if (padding == kReflection) {
    TSR_ASSIGN_OR_RETURN(t, align
                                ? Reflect(r, c, 0, 2 * (size - 1), grad ? &reflect_grad : nullptr)
                                : Reflect(r, c, -1, 2 * size - 1, grad ? &reflect_grad : nullptr));
  }
  if (padding == kZeros) {
    if (grad != nullptr) {
      TSR_ASSIGN_OR_RETURN(
          *grad, CallOne(r, "ones_like", {c, Value(), Value(), Value(), Value(), Value()}));
    }
    return t;
  }
  const double last = static_cast<double>(size - 1);
  if (grad != nullptr) {
    TSR_ASSIGN_OR_RETURN(*grad, ClipGrad(r, t, size));
    if (padding == kReflection) {
      TSR_ASSIGN_OR_RETURN(*grad, Mul(r, *grad, reflect_grad));
    }
    return Clamp(r, t, 0, last);  // clip_coordinates_set_grad: NaN passes, as clamp's
  }
  // clip_coordinates: std::min(size - 1, std::max(NaN, 0)) is size - 1.
  TSR_ASSIGN_OR_RETURN(const Tensor clipped, Clamp(r, t, 0, last));
  TSR_ASSIGN_OR_RETURN(const Tensor nan, Unary(r, "isnan", clipped));
  TSR_ASSIGN_OR_RETURN(const Tensor bound, Zeros(r, {}, t.dtype(), t.device()));
  TSR_ASSIGN_OR_RETURN(const Tensor at_last, AddS(r, bound, last));
  return Where(r, nan, at_last, clipped);
}

// SourceIndex: grid_sampler_compute_source_index; `grad`: its derivative wrt the grid coordinate.
T SourceIndex(OpRegistry& r, const Tensor& c, int64_t size, int64_t padding, bool align,
              Tensor* grad) {
  TSR_ASSIGN_OR_RETURN(const Tensor u, Unnormalize(r, c, size, align));
  TSR_ASSIGN_OR_RETURN(Tensor t, Pad(r, u, size, padding, align, grad));
  if (grad != nullptr) {
    TSR_ASSIGN_OR_RETURN(*grad, MulS(r, *grad, UnnormalizeScale(size, align)));
  }
  return t;
}

// ---- taps ----

// Coords: one [N, P] tensor per coordinate, in the grid's order: x (along W) first, then y (H),
// then z (D).
using Coords = std::vector<Tensor>;

// Sampler: one call's tensors: the input flattened to [N, C, spatial numel] (compute dtype), and
// `size[d]`, the input's extent along coordinate d (W, H(, D)).
struct Sampler {
  OpRegistry& r;
  Tensor flat;
  int64_t N, C, P;
  std::vector<int64_t> size;
  ScalarType dtype;
  Device device;
};

// Tap: the integer positions `at` (floating, [N, P] each, possibly NaN or +-inf): its flat index
// ([N, C, P]; 0 along a coordinate where the tap is out of bounds, so always a valid position) and
// its in-bounds mask ([N, 1, P]; false for NaN).
struct Tap {
  Tensor index, valid;
};

absl::StatusOr<Tap> MakeTap(const Sampler& s, const Coords& at) {
  OpRegistry& r = s.r;
  TSR_ASSIGN_OR_RETURN(const Tensor zero, Zeros(r, {}, s.dtype, s.device));
  Tensor valid, index;
  for (size_t d = at.size(); d-- > 0;) {  // the outermost dim first: (z * H + y) * W + x
    const double n = static_cast<double>(s.size[d]);
    TSR_ASSIGN_OR_RETURN(const Tensor lo, Compare(r, "ge.Scalar", at[d], 0));
    TSR_ASSIGN_OR_RETURN(const Tensor hi, Compare(r, "lt.Scalar", at[d], n));
    TSR_ASSIGN_OR_RETURN(const Tensor inside, And(r, lo, hi));
    // Never convert a NaN, an infinity or a far position to int64: only in-bounds ones.
    TSR_ASSIGN_OR_RETURN(Tensor i, Where(r, inside, at[d], zero));
    TSR_ASSIGN_OR_RETURN(i, ToDtype(r, i, ScalarType::kInt64));
    if (valid.defined()) {
      TSR_ASSIGN_OR_RETURN(valid, And(r, valid, inside));
    } else {
      valid = inside;
    }
    if (index.defined()) {
      TSR_ASSIGN_OR_RETURN(index, CallOne(r, "mul.Scalar", {index, Value(Scalar(s.size[d]))}));
      TSR_ASSIGN_OR_RETURN(i, Add(r, index, i));
    }
    index = std::move(i);
  }
  TSR_ASSIGN_OR_RETURN(index, Unsqueeze(r, index, 1));
  TSR_ASSIGN_OR_RETURN(index,
                       CallOne(r, "expand", {index, Value(IntList{s.N, s.C, s.P}), Value(false)}));
  TSR_ASSIGN_OR_RETURN(valid, Unsqueeze(r, valid, 1));
  return Tap{std::move(index), std::move(valid)};
}

// Masked: `values` where the tap is in bounds, else 0.
T Masked(const Sampler& s, const Tap& tap, const Tensor& values) {
  TSR_ASSIGN_OR_RETURN(const Tensor zero, Zeros(s.r, {}, s.dtype, s.device));
  return Where(s.r, tap.valid, values, zero);
}

// Gather: the input's values at the tap's index ([N, C, P]), unmasked.
T Gather(const Sampler& s, const Tap& tap) {
  return CallOne(s.r, "gather", {s.flat, Value(int64_t{2}), tap.index, Value(false)});
}

// Read: the input's values at the tap, 0 out of bounds (ATen's get_value_bounded).
T Read(const Sampler& s, const Tap& tap) {
  TSR_ASSIGN_OR_RETURN(const Tensor v, Gather(s, tap));
  return Masked(s, tap, v);
}

// Spread: grad_input (flat) plus `contribution` at the tap (out-of-bounds taps dropped).
T Spread(const Sampler& s, const Tap& tap, const Tensor& grad_input, const Tensor& contribution) {
  TSR_ASSIGN_OR_RETURN(const Tensor c, Masked(s, tap, contribution));
  return CallOne(s.r, "scatter_add", {grad_input, Value(int64_t{2}), tap.index, c});
}

// Corner: one tap of bilinear (trilinear) interpolation: its position, its weight ([N, 1, P])
// and, for the backward, the weight's derivative along each coordinate.
struct Corner {
  Coords at;
  Tensor weight;
  std::vector<Tensor> dweight;
};

// LinearCorners: the 2^k corners around the source point `i`, in ATen's order (bit d of the
// corner's number picks the upper neighbour along coordinate d: nw, ne, sw, se, then the far
// face in 3-D), each weighted by the product over the coordinates of (upper - i) or
// (i - lower), x's factor first as ATen multiplies them.
absl::StatusOr<std::vector<Corner>> LinearCorners(OpRegistry& r, const Coords& i,
                                                  bool derivatives) {
  const size_t k = i.size();
  std::vector<Tensor> lower(k), upper(k), to_upper(k), from_lower(k);
  for (size_t d = 0; d < k; ++d) {
    TSR_ASSIGN_OR_RETURN(lower[d], Unary(r, "floor", i[d]));
    TSR_ASSIGN_OR_RETURN(upper[d], AddS(r, lower[d], 1));
    TSR_ASSIGN_OR_RETURN(to_upper[d], Sub(r, upper[d], i[d]));
    TSR_ASSIGN_OR_RETURN(to_upper[d], Unsqueeze(r, to_upper[d], 1));
    TSR_ASSIGN_OR_RETURN(from_lower[d], Sub(r, i[d], lower[d]));
    TSR_ASSIGN_OR_RETURN(from_lower[d], Unsqueeze(r, from_lower[d], 1));
  }
  // Product of the factors of `corner` over the coordinates but `skip` (none: k).
  auto product = [&](size_t corner, size_t skip) -> T {
    Tensor acc;
    for (size_t d = 0; d < k; ++d) {
      if (d == skip) continue;
      const Tensor& f = (corner >> d) & 1 ? from_lower[d] : to_upper[d];
      if (!acc.defined()) {
        acc = f;
        continue;
      }
      TSR_ASSIGN_OR_RETURN(acc, Mul(r, acc, f));
    }
    return acc;
  };
  std::vector<Corner> corners;
  for (size_t b = 0; b < (size_t{1} << k); ++b) {
    Corner c;
    for (size_t d = 0; d < k; ++d) c.at.push_back((b >> d) & 1 ? upper[d] : lower[d]);
    TSR_ASSIGN_OR_RETURN(c.weight, product(b, k));
    if (derivatives) {
      for (size_t d = 0; d < k; ++d) {
        TSR_ASSIGN_OR_RETURN(Tensor dw, product(b, d));
        if (!((b >> d) & 1)) {  // (upper - i)' = -1
          TSR_ASSIGN_OR_RETURN(dw, MulS(r, dw, -1));
        }
        c.dweight.push_back(std::move(dw));
      }
    }
    corners.push_back(std::move(c));
  }
  return corners;
}

// CubicWeights: the 4 taps' weights at fraction t (get_cubic_upsample_coefficients), or with
// `derivative` their derivatives wrt t; [N, 1, P] each.
absl::StatusOr<std::array<Tensor, 4>> CubicWeights(OpRegistry& r, const Tensor& t,
                                                   bool derivative) {
  const double A = kCubicA;
  // cc1(x) = ((A + 2) x - (A + 3)) x^2 + 1 for |x| <= 1; cc2(x) = ((A x - 5A) x + 8A) x - 4A
  // for 1 < |x| < 2; their derivatives 3(A + 2) x^2 - 2(A + 3) x and 3A x^2 - 10A x + 8A.
  auto cc1 = [&](const Tensor& x) -> T {
    if (derivative) {
      TSR_ASSIGN_OR_RETURN(Tensor v, MulS(r, x, 3 * (A + 2)));
      TSR_ASSIGN_OR_RETURN(v, AddS(r, v, -2 * (A + 3)));
      return Mul(r, v, x);
    }
    TSR_ASSIGN_OR_RETURN(Tensor v, MulS(r, x, A + 2));
    TSR_ASSIGN_OR_RETURN(v, AddS(r, v, -(A + 3)));
    TSR_ASSIGN_OR_RETURN(v, Mul(r, v, x));
    TSR_ASSIGN_OR_RETURN(v, Mul(r, v, x));
    return AddS(r, v, 1);
  };
  auto cc2 = [&](const Tensor& x) -> T {
    if (derivative) {
      TSR_ASSIGN_OR_RETURN(Tensor v, MulS(r, x, 3 * A));
      TSR_ASSIGN_OR_RETURN(v, AddS(r, v, -10 * A));
      TSR_ASSIGN_OR_RETURN(v, Mul(r, v, x));
      return AddS(r, v, 8 * A);
    }
    TSR_ASSIGN_OR_RETURN(Tensor v, MulS(r, x, A));
    TSR_ASSIGN_OR_RETURN(v, AddS(r, v, -5 * A));
    TSR_ASSIGN_OR_RETURN(v, Mul(r, v, x));
    TSR_ASSIGN_OR_RETURN(v, AddS(r, v, 8 * A));
    TSR_ASSIGN_OR_RETURN(v, Mul(r, v, x));
    return AddS(r, v, -4 * A);
  };
  TSR_ASSIGN_OR_RETURN(const Tensor t1, AddS(r, t, 1));
  TSR_ASSIGN_OR_RETURN(Tensor one_minus, MulS(r, t, -1));
  TSR_ASSIGN_OR_RETURN(const Tensor two_minus, AddS(r, one_minus, 2));
  TSR_ASSIGN_OR_RETURN(one_minus, AddS(r, one_minus, 1));
  std::array<Tensor, 4> w;
  TSR_ASSIGN_OR_RETURN(w[0], cc2(t1));
  TSR_ASSIGN_OR_RETURN(w[1], cc1(t));
  TSR_ASSIGN_OR_RETURN(w[2], cc1(one_minus));
  TSR_ASSIGN_OR_RETURN(w[3], cc2(two_minus));
  if (derivative) {  // taps 2 and 3 lie at 1 - t and 2 - t
    TSR_ASSIGN_OR_RETURN(w[2], MulS(r, w[2], -1));
    TSR_ASSIGN_OR_RETURN(w[3], MulS(r, w[3], -1));
  }
  for (Tensor& v : w) {  // [N, 1, P]
    TSR_ASSIGN_OR_RETURN(v, Unsqueeze(r, v, 1));
  }
  return w;
}

// Bicubic: the 4x4 taps of bicubic interpolation (2-D only): unnormalized source point, the
// fractions' weights (and their derivatives), and each tap's position padded on its own
// (compute_coordinates), as ATen's get_value_bounded / add_value_bounded read them.
struct Bicubic {
  std::array<Tensor, 4> wx, wy, dwx, dwy;
  std::array<Tensor, 4> cx, cy;
};

absl::StatusOr<Bicubic> BicubicTaps(const Sampler& s, const Coords& grid, int64_t padding,
                                    bool align, bool derivatives) {
  OpRegistry& r = s.r;
  Bicubic b;
  for (int d = 0; d < 2; ++d) {
    TSR_ASSIGN_OR_RETURN(const Tensor i, Unnormalize(r, grid[d], s.size[d], align));
    TSR_ASSIGN_OR_RETURN(const Tensor i0, Unary(r, "floor", i));
    TSR_ASSIGN_OR_RETURN(const Tensor t, Sub(r, i, i0));
    std::array<Tensor, 4>& w = d == 0 ? b.wx : b.wy;
    TSR_ASSIGN_OR_RETURN(w, CubicWeights(r, t, false));
    if (derivatives) {
      std::array<Tensor, 4>& dw = d == 0 ? b.dwx : b.dwy;
      TSR_ASSIGN_OR_RETURN(dw, CubicWeights(r, t, true));
    }
    std::array<Tensor, 4>& c = d == 0 ? b.cx : b.cy;
    for (int k = 0; k < 4; ++k) {
      TSR_ASSIGN_OR_RETURN(c[k], AddS(r, i0, k - 1));
      TSR_ASSIGN_OR_RETURN(c[k], Pad(r, c[k], s.size[d], padding, align, nullptr));
    }
  }
  return b;
}

// ---- checks ----

// C10Name: a dtype as ATen's "expected scalar type" message spells it.
std::string C10Name(ScalarType t) {
  switch (t) {
    case ScalarType::kFloat16:
      return "Half";
    case ScalarType::kBFloat16:
      return "BFloat16";
    case ScalarType::kFloat32:
      return "Float";
    case ScalarType::kFloat64:
      return "Double";
    case ScalarType::kInt64:
      return "Long";
    case ScalarType::kInt32:
      return "Int";
    case ScalarType::kInt16:
      return "Short";
    case ScalarType::kInt8:
      return "Char";
    case ScalarType::kUInt8:
      return "Byte";
    case ScalarType::kBool:
      return "Bool";
    default:
      return std::string(ScalarTypeName(t));
  }
}

// CheckGridSampler: check_grid_sampler_common, then check_grid_sampler_2d or _3d (`k` spatial
// dims) with the 3-D refusal of bicubic, then what ATen's kernels require: a floating input and
// a grid of its dtype. The modes, which ATen's kernels leave unchecked (a mode past the enum
// computes nothing there), are refused.
absl::Status CheckGridSampler(const OperatorHandle& op, const Tensor& input, const Tensor& grid,
                              int64_t interpolation, int64_t padding, int64_t k) {
  if (input.device() != grid.device()) {
    return Invalid(op,
                   absl::StrFormat("grid_sampler(): expected input and grid to be on same "
                                   "device, but input is on %s and grid is on %s",
                                   DeviceToString(input.device()), DeviceToString(grid.device())));
  }
  if (input.dim() >= 1 && grid.dim() >= 1) {
    if (input.sizes()[0] != grid.sizes()[0]) {
      return Invalid(op,
                     absl::StrFormat("grid_sampler(): expected grid and input to have same "
                                     "batch size, but got input with sizes %s and grid with "
                                     "sizes %s",
                                     ShapeToString(input.sizes()), ShapeToString(grid.sizes())));
    }
    if (grid.sizes().back() != input.dim() - 2) {
      return Invalid(op, absl::StrFormat("grid_sampler(): expected grid to have size %d in last "
                                         "dimension, but got grid with sizes %s",
                                         input.dim() - 2, ShapeToString(grid.sizes())));
    }
    for (int64_t i = 2; i < input.dim(); ++i) {
      if (input.sizes()[i] <= 0) {
        return Invalid(op, absl::StrFormat("grid_sampler(): expected input to have non-empty "
                                           "spatial dimensions, but input has sizes %s with "
                                           "dimension %d being empty",
                                           ShapeToString(input.sizes()), i));
      }
    }
  }
  if (input.dim() != k + 2 || grid.dim() != k + 2) {
    return Invalid(
        op, absl::StrFormat("grid_sampler(): expected %dD input and grid with same "
                            "number of dimensions, but got input with sizes %s and "
                            "grid with sizes %s",
                            k + 2, ShapeToString(input.sizes()), ShapeToString(grid.sizes())));
  }
  if (k == 3 && interpolation == kBicubic) {
    return absl::UnimplementedError(absl::StrFormat(
        "%s: grid_sampler(): bicubic interpolation with 5D input is not implemented for %s",
        op.name(), DeviceToString(input.device())));
  }
  if (!IsFloatingType(input.dtype())) return NotFloating(op, input.dtype());
  if (grid.dtype() != input.dtype()) {
    return Invalid(op, absl::StrFormat("expected scalar type %s but found %s (grid)",
                                       C10Name(input.dtype()), C10Name(grid.dtype())));
  }
  if (interpolation < 0 || interpolation > 2) {
    return Invalid(op, absl::StrFormat("grid_sampler(): expected interpolation_mode to be 0 "
                                       "(bilinear), 1 (nearest) or 2 (bicubic), but got %d",
                                       interpolation));
  }
  if (padding < 0 || padding > 2) {
    return Invalid(op, absl::StrFormat("grid_sampler(): expected padding_mode to be 0 (zeros), "
                                       "1 (border) or 2 (reflection), but got %d",
                                       padding));
  }
  return absl::OkStatus();
}

// OutputShape: [N, C, the grid's spatial sizes].
IntList OutputShape(const Tensor& input, const Tensor& grid) {
  IntList shape{input.sizes()[0], input.sizes()[1]};
  for (int64_t d = 1; d + 1 < grid.dim(); ++d) shape.push_back(grid.sizes()[d]);
  return shape;
}

// Prepared: the sampler and the grid's coordinates.
struct Prepared {
  Sampler s;
  Coords grid;
};

absl::StatusOr<Prepared> Prepare(OpRegistry& r, const Opmath& opmath, const Tensor& input,
                                 const Tensor& grid) {
  const int64_t k = input.dim() - 2;
  const int64_t N = input.sizes()[0], C = input.sizes()[1];
  int64_t spatial = 1, P = 1;
  std::vector<int64_t> size;
  for (int64_t d = 0; d < k; ++d) {
    spatial *= input.sizes()[2 + d];
    P *= grid.sizes()[1 + d];
    size.push_back(input.sizes()[input.dim() - 1 - d]);  // x's extent is the last dim
  }
  TSR_ASSIGN_OR_RETURN(const Value x, opmath.In(r, input));
  TSR_ASSIGN_OR_RETURN(const Value g, opmath.In(r, grid));
  TSR_ASSIGN_OR_RETURN(Tensor flat, CallOne(r, "reshape", {x, Value(IntList{N, C, spatial})}));
  TSR_ASSIGN_OR_RETURN(const Tensor coords, CallOne(r, "reshape", {g, Value(IntList{N, P, k})}));
  Coords per;
  for (int64_t d = 0; d < k; ++d) {
    TSR_ASSIGN_OR_RETURN(per.emplace_back(),
                         CallOne(r, "select.int", {coords, Value(int64_t{2}), Value(d)}));
  }
  return Prepared{
      Sampler{r, std::move(flat), N, C, P, std::move(size), opmath.compute, input.device()},
      std::move(per)};
}

// ---- grid_sampler_2d, grid_sampler_3d ----

template <int64_t kDims>
T GridSamplerOf(const OperatorHandle& op, const Stack& st) {
  const Tensor& input = st[0].tensor();
  const Tensor& grid = st[1].tensor();
  const int64_t interpolation = st[2].to_int(), padding = st[3].to_int();
  const bool align = st[4].to_bool();
  TSR_RETURN_IF_ERROR(CheckGridSampler(op, input, grid, interpolation, padding, kDims));
  OpRegistry& r = op.registry();
  const IntList out_shape = OutputShape(input, grid);
  TSR_ASSIGN_OR_RETURN(const int64_t numel, ComputeNumel(out_shape));
  if (numel == 0) return Zeros(r, out_shape, input.dtype(), input.device());
  const Opmath opmath(input.dtype());
  TSR_ASSIGN_OR_RETURN(const Prepared p, Prepare(r, opmath, input, grid));
  const Sampler& s = p.s;
  Tensor out;
  if (interpolation == kBicubic) {
    TSR_ASSIGN_OR_RETURN(const Bicubic b, BicubicTaps(s, p.grid, padding, align, false));
    for (int j = 0; j < 4; ++j) {  // cubic_interp1d along x per row, then along y
      Tensor row;
      for (int i = 0; i < 4; ++i) {
        TSR_ASSIGN_OR_RETURN(const Tap tap, MakeTap(s, {b.cx[i], b.cy[j]}));
        TSR_ASSIGN_OR_RETURN(const Tensor v, Read(s, tap));  // 0 out of bounds, times the weight
        TSR_ASSIGN_OR_RETURN(const Tensor term, Mul(r, v, b.wx[i]));
        TSR_RETURN_IF_ERROR(Accumulate(r, row, term));
      }
      TSR_ASSIGN_OR_RETURN(row, Mul(r, row, b.wy[j]));
      TSR_RETURN_IF_ERROR(Accumulate(r, out, row));
    }
  } else {
    Coords i;
    for (int64_t d = 0; d < kDims; ++d) {
      TSR_ASSIGN_OR_RETURN(i.emplace_back(),
                           SourceIndex(r, p.grid[d], s.size[d], padding, align, nullptr));
    }
    if (interpolation == kNearest) {
      for (Tensor& c : i) {
        TSR_ASSIGN_OR_RETURN(c, Unary(r, "round", c));  // nearbyint: half to even
      }
      TSR_ASSIGN_OR_RETURN(const Tap tap, MakeTap(s, i));
      TSR_ASSIGN_OR_RETURN(out, Read(s, tap));
    } else {
      TSR_ASSIGN_OR_RETURN(const std::vector<Corner> corners, LinearCorners(r, i, false));
      for (const Corner& c : corners) {
        TSR_ASSIGN_OR_RETURN(const Tap tap, MakeTap(s, c.at));
        TSR_ASSIGN_OR_RETURN(const Tensor v, Gather(s, tap));
        TSR_ASSIGN_OR_RETURN(Tensor term, Mul(r, v, c.weight));
        // Only in-bounds corners count, so a NaN weight of an out-of-bounds corner is dropped.
        TSR_ASSIGN_OR_RETURN(term, Masked(s, tap, term));
        TSR_RETURN_IF_ERROR(Accumulate(r, out, term));
      }
    }
  }
  TSR_ASSIGN_OR_RETURN(out, CallOne(r, "reshape", {out, Value(out_shape)}));
  TSR_ASSIGN_OR_RETURN(out, opmath.Out(r, std::move(out)));
  return CallOne(r, "contiguous", {out, Value(int64_t{0})});
}

// ---- grid_sampler_2d_backward, grid_sampler_3d_backward ----

template <int64_t kDims>
Out GridSamplerBackward(const OperatorHandle& op, const Stack& st) {
  const Tensor& grad = st[0].tensor();
  const Tensor& input = st[1].tensor();
  const Tensor& grid = st[2].tensor();
  const int64_t interpolation = st[3].to_int(), padding = st[4].to_int();
  const bool align = st[5].to_bool();
  const BoolList& mask = st[6].bool_list();
  if (mask.size() != 2) {
    return Invalid(op, absl::StrFormat("expected output_mask of 2 bools, got %d", mask.size()));
  }
  TSR_RETURN_IF_ERROR(CheckGridSampler(op, input, grid, interpolation, padding, kDims));
  const IntList out_shape = OutputShape(input, grid);
  if (!SameDims(grad.sizes(), out_shape)) {  // check_grid_sampler_backward (current ATen)
    return Invalid(op, absl::StrFormat("grid_sampler(): expected grad_output to have sizes %s but "
                                       "got grad_output with sizes %s",
                                       ShapeToString(out_shape), ShapeToString(grad.sizes())));
  }
  if (grad.device() != input.device()) {
    return Invalid(op,
                   absl::StrFormat("expected grad_output on %s (the input's device), got %s",
                                   DeviceToString(input.device()), DeviceToString(grad.device())));
  }
  if (grad.dtype() != input.dtype()) {
    return Invalid(op, absl::StrFormat("expected scalar type %s but found %s (grad_output)",
                                       C10Name(input.dtype()), C10Name(grad.dtype())));
  }
  OpRegistry& r = op.registry();
  // grad_grid comes back whatever output_mask[1] says, as ATen's kernels return it.
  const bool want_input = mask[0] != 0;
  std::vector<Tensor> grads(2);
  if (grad.numel() == 0) {
    if (want_input) {
      TSR_ASSIGN_OR_RETURN(grads[0], Zeros(r, input.sizes(), input.dtype(), input.device()));
    }
    TSR_ASSIGN_OR_RETURN(grads[1], Zeros(r, grid.sizes(), grid.dtype(), grid.device()));
    return grads;
  }
  const Opmath opmath(input.dtype());
  TSR_ASSIGN_OR_RETURN(const Prepared p, Prepare(r, opmath, input, grid));
  const Sampler& s = p.s;
  TSR_ASSIGN_OR_RETURN(const Value gv, opmath.In(r, grad));
  TSR_ASSIGN_OR_RETURN(const Tensor g, CallOne(r, "reshape", {gv, Value(IntList{s.N, s.C, s.P})}));
  Tensor gin;
  if (want_input) {
    TSR_ASSIGN_OR_RETURN(gin, Zeros(r, {s.N, s.C, s.flat.sizes()[2]}, s.dtype, s.device));
  }
  // running[d]: the sum over the taps so far of each tap's value times its weight's derivative
  // along coordinate d ([N, C, P]); one running sum per coordinate keeps the peak at a few
  // [N, C, P] tensors whatever the number of taps.
  std::vector<Tensor> running(kDims);
  Coords mult(kDims);  // the source coordinates' derivatives wrt the grid ([N, P])
  // `bicubic`: an out-of-bounds tap reads 0 times its weight's derivative (get_value_bounded);
  // otherwise it adds nothing (ATen's within_bounds checks). See
  // Note [Non-finite grid coordinates].
  auto tap_step = [&](const Coords& at, const Tensor& weight, const std::vector<Tensor>& dweight,
                      bool bicubic) -> absl::Status {
    TSR_ASSIGN_OR_RETURN(const Tap tap, MakeTap(s, at));
    if (want_input) {
      TSR_ASSIGN_OR_RETURN(const Tensor contribution, Mul(r, g, weight));
      TSR_ASSIGN_OR_RETURN(gin, Spread(s, tap, gin, contribution));
    }
    if (dweight.empty()) return absl::OkStatus();
    TSR_ASSIGN_OR_RETURN(const Tensor v, bicubic ? Read(s, tap) : Gather(s, tap));
    for (int64_t d = 0; d < kDims; ++d) {
      TSR_ASSIGN_OR_RETURN(Tensor term, Mul(r, v, dweight[d]));
      if (!bicubic) {
        TSR_ASSIGN_OR_RETURN(term, Masked(s, tap, term));
      }
      TSR_RETURN_IF_ERROR(Accumulate(r, running[d], term));
    }
    return absl::OkStatus();
  };
  if (interpolation == kBicubic) {
    TSR_ASSIGN_OR_RETURN(const Bicubic b, BicubicTaps(s, p.grid, padding, align, true));
    for (int j = 0; j < 4; ++j) {
      for (int i = 0; i < 4; ++i) {
        TSR_ASSIGN_OR_RETURN(const Tensor w, Mul(r, b.wx[i], b.wy[j]));
        TSR_ASSIGN_OR_RETURN(const Tensor dx, Mul(r, b.dwx[i], b.wy[j]));
        TSR_ASSIGN_OR_RETURN(const Tensor dy, Mul(r, b.wx[i], b.dwy[j]));
        TSR_RETURN_IF_ERROR(tap_step({b.cx[i], b.cy[j]}, w, {dx, dy}, true));
      }
    }
    // Bicubic pads each tap on its own: the coordinate's derivative is unnormalize's scale.
    for (int64_t d = 0; d < kDims; ++d) {
      TSR_ASSIGN_OR_RETURN(mult[d], CallOne(r, "full_like",
                                            {p.grid[d], S(UnnormalizeScale(s.size[d], align)),
                                             Value(), Value(), Value(), Value(), Value()}));
    }
  } else {
    Coords i;
    for (int64_t d = 0; d < kDims; ++d) {
      TSR_ASSIGN_OR_RETURN(i.emplace_back(),
                           SourceIndex(r, p.grid[d], s.size[d], padding, align, &mult[d]));
    }
    if (interpolation == kNearest) {
      for (Tensor& c : i) {
        TSR_ASSIGN_OR_RETURN(c, Unary(r, "round", c));
      }
      TSR_ASSIGN_OR_RETURN(const Tensor one, CallOne(r, "ones",
                                                     {Value(IntList{}), Value(s.dtype), Value(),
                                                      Value(s.device), Value()}));
      TSR_RETURN_IF_ERROR(tap_step(i, one, {}, false));
    } else {
      TSR_ASSIGN_OR_RETURN(const std::vector<Corner> corners, LinearCorners(r, i, true));
      for (const Corner& c : corners) {
        TSR_RETURN_IF_ERROR(tap_step(c.at, c.weight, c.dweight, false));
      }
    }
  }
  if (want_input) {
    TSR_ASSIGN_OR_RETURN(gin, CallOne(r, "reshape", {gin, Value(ToIntList(input.sizes()))}));
    TSR_ASSIGN_OR_RETURN(grads[0], opmath.Out(r, std::move(gin)));
  }
  if (interpolation == kNearest) {  // no grid gradient
    TSR_ASSIGN_OR_RETURN(grads[1], Zeros(r, grid.sizes(), grid.dtype(), grid.device()));
    return grads;
  }
  std::vector<Tensor> along(kDims);
  for (int64_t d = 0; d < kDims; ++d) {
    TSR_ASSIGN_OR_RETURN(Tensor sum, Mul(r, running[d], g));
    running[d] = Tensor();
    TSR_ASSIGN_OR_RETURN(
        sum, CallOne(r, "sum.dim_IntList", {sum, Value(IntList{1}), Value(false), Value()}));
    TSR_ASSIGN_OR_RETURN(along[d], Mul(r, sum, mult[d]));
  }
  TSR_ASSIGN_OR_RETURN(Tensor gg,
                       CallOne(r, "stack", {Value(std::move(along)), Value(int64_t{-1})}));
  TSR_ASSIGN_OR_RETURN(gg, CallOne(r, "reshape", {gg, Value(ToIntList(grid.sizes()))}));
  TSR_ASSIGN_OR_RETURN(grads[1], opmath.Out(r, std::move(gg)));
  return grads;
}

// ---- affine_grid_generator ----

// CheckAffineSize: `size` must be N, C, then 2 or 3 spatial sizes.
absl::Status CheckAffineSize(const OperatorHandle& op, IntArrayRef size) {
  if (size.size() != 4 && size.size() != 5) {
    return Invalid(op, "AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.");
  }
  return absl::OkStatus();
}

// BaseGrid: ATen's make_base_grid_4D / 5D: [N, (D,) H, W, k + 1] of (x, y(, z), 1), each
// coordinate linspace(-1, 1, n), scaled by (n - 1) / n without align_corners, 0 for n <= 1.
T BaseGrid(OpRegistry& r, IntArrayRef size, bool align, ScalarType dtype, Device device) {
  const int64_t k = static_cast<int64_t>(size.size()) - 2;  // spatial dims
  IntList shape{size[0]};
  for (int64_t d = 0; d < k; ++d) shape.push_back(size[2 + d]);
  std::vector<Tensor> parts;
  for (int64_t c = 0; c < k; ++c) {       // x runs along the last dim, y the one before, ...
    const int64_t dim = 1 + (k - 1 - c);  // the base grid's dim it varies along
    const int64_t n = shape[dim];
    Tensor range;
    if (n <= 1) {
      TSR_ASSIGN_OR_RETURN(range, Zeros(r, {n}, dtype, device));
    } else {
      TSR_ASSIGN_OR_RETURN(
          range, CallOne(r, "linspace",
                         {S(-1), S(1), Value(n), Value(dtype), Value(), Value(device), Value()}));
      if (!align) {
        TSR_ASSIGN_OR_RETURN(range, MulS(r, range, static_cast<double>(n - 1)));
        TSR_ASSIGN_OR_RETURN(range, DivS(r, range, static_cast<double>(n)));
      }
    }
    IntList view(shape.size(), 1);
    view[dim] = n;
    TSR_ASSIGN_OR_RETURN(range, CallOne(r, "reshape", {range, Value(view)}));
    TSR_ASSIGN_OR_RETURN(range, CallOne(r, "expand", {range, Value(shape), Value(false)}));
    parts.push_back(std::move(range));
  }
  TSR_ASSIGN_OR_RETURN(
      Tensor ones,
      CallOne(r, "ones", {Value(shape), Value(dtype), Value(), Value(device), Value()}));
  parts.push_back(std::move(ones));
  return CallOne(r, "stack", {Value(std::move(parts)), Value(int64_t{-1})});
}

int64_t SpatialNumel(IntArrayRef size) {
  int64_t n = 1;
  for (size_t d = 2; d < size.size(); ++d) n *= size[d];
  return n;
}

T AffineGridGeneratorOf(const OperatorHandle& op, const Stack& st) {
  const Tensor& theta = st[0].tensor();
  IntArrayRef size = st[1].int_list();
  const bool align = st[2].to_bool();
  TSR_RETURN_IF_ERROR(CheckAffineSize(op, size));
  if (!IsFloatingType(theta.dtype())) return NotFloating(op, theta.dtype());
  const int64_t k = static_cast<int64_t>(size.size()) - 2;
  if (theta.dim() != 3 || theta.sizes()[0] != size[0] || theta.sizes()[1] != k ||
      theta.sizes()[2] != k + 1) {
    // ATen leaves this to bmm and view, whose messages name their own arguments.
    return Invalid(
        op, absl::StrFormat("expected theta of shape [%d, %d, %d] for size %s, got %s", size[0], k,
                            k + 1, ShapeToString(size), ShapeToString(theta.sizes())));
  }
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Tensor base, BaseGrid(r, size, align, theta.dtype(), theta.device()));
  TSR_ASSIGN_OR_RETURN(
      base, CallOne(r, "reshape", {base, Value(IntList{size[0], SpatialNumel(size), k + 1})}));
  TSR_ASSIGN_OR_RETURN(const Tensor theta_t, Transpose(theta, 1, 2));
  TSR_ASSIGN_OR_RETURN(Tensor grid, CallOne(r, "bmm", {base, theta_t}));
  IntList shape{size[0]};
  for (int64_t d = 0; d < k; ++d) shape.push_back(size[2 + d]);
  shape.push_back(k);
  return CallOne(r, "reshape", {grid, Value(shape)});
}

T AffineGridGeneratorBackwardOf(const OperatorHandle& op, const Stack& st) {
  const Tensor& grad = st[0].tensor();
  IntArrayRef size = st[1].int_list();
  const bool align = st[2].to_bool();
  TSR_RETURN_IF_ERROR(CheckAffineSize(op, size));
  if (!IsFloatingType(grad.dtype())) return NotFloating(op, grad.dtype());
  const int64_t k = static_cast<int64_t>(size.size()) - 2;
  IntList shape{size[0]};
  for (int64_t d = 0; d < k; ++d) shape.push_back(size[2 + d]);
  shape.push_back(k);
  if (!SameDims(grad.sizes(), shape)) {  // an internal assert in ATen
    return Invalid(op, absl::StrFormat("expected grad of shape %s (the grid's for size %s), got %s",
                                       ShapeToString(shape), ShapeToString(size),
                                       ShapeToString(grad.sizes())));
  }
  OpRegistry& r = op.registry();
  TSR_ASSIGN_OR_RETURN(Tensor base, BaseGrid(r, size, align, grad.dtype(), grad.device()));
  const int64_t n = SpatialNumel(size);
  TSR_ASSIGN_OR_RETURN(base, CallOne(r, "reshape", {base, Value(IntList{size[0], n, k + 1})}));
  TSR_ASSIGN_OR_RETURN(base, Transpose(base, 1, 2));
  TSR_ASSIGN_OR_RETURN(const Tensor g,
                       CallOne(r, "reshape", {grad, Value(IntList{size[0], n, k})}));
  TSR_ASSIGN_OR_RETURN(Tensor theta, CallOne(r, "bmm", {base, g}));  // [N, k + 1, k]
  TSR_ASSIGN_OR_RETURN(theta, Transpose(theta, 1, 2));
  return CallOne(r, "contiguous", {theta, Value(int64_t{0})});
}

}  // namespace

absl::Status DefineGridSamplerOps(OpRegistry& registry) {
  return DefineAll(
      registry,
      {{"grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "
        "bool align_corners) -> Tensor",
        MakeKernel<Named<ComputeOne<GridSamplerOf<2>>>>("core::grid_sampler_2d")},
       {"grid_sampler_2d.out(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "
        "bool align_corners, *, Tensor(a!) out) -> Tensor(a!)",
        MakeKernel<Named<ComputeIntoOut<GridSamplerOf<2>, 5>>>("core::grid_sampler_2d_out")},
       {"grid_sampler_2d_backward(Tensor grad_output, Tensor input, Tensor grid, "
        "int interpolation_mode, int padding_mode, bool align_corners, bool[2] output_mask) -> "
        "(Tensor, Tensor)",
        MakeKernel<Named<GridSamplerBackward<2>>>("core::grid_sampler_2d_backward")},
       {"grid_sampler_2d_backward.out(Tensor grad_output, Tensor input, Tensor grid, "
        "int interpolation_mode, int padding_mode, bool align_corners, bool[2] output_mask, *, "
        "Tensor(a!) out0, Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))",
        MakeKernel<Named<ComputeIntoOuts<GridSamplerBackward<2>, 7, 2>>>(
            "core::grid_sampler_2d_backward_out")},
       {"grid_sampler_3d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "
        "bool align_corners) -> Tensor",
        MakeKernel<Named<ComputeOne<GridSamplerOf<3>>>>("core::grid_sampler_3d")},
       {"grid_sampler_3d.out(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "
        "bool align_corners, *, Tensor(a!) out) -> Tensor(a!)",
        MakeKernel<Named<ComputeIntoOut<GridSamplerOf<3>, 5>>>("core::grid_sampler_3d_out")},
       {"grid_sampler_3d_backward(Tensor grad_output, Tensor input, Tensor grid, "
        "int interpolation_mode, int padding_mode, bool align_corners, bool[2] output_mask) -> "
        "(Tensor, Tensor)",
        MakeKernel<Named<GridSamplerBackward<3>>>("core::grid_sampler_3d_backward")},
       {"grid_sampler_3d_backward.out(Tensor grad_output, Tensor input, Tensor grid, "
        "int interpolation_mode, int padding_mode, bool align_corners, bool[2] output_mask, *, "
        "Tensor(a!) out0, Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))",
        MakeKernel<Named<ComputeIntoOuts<GridSamplerBackward<3>, 7, 2>>>(
            "core::grid_sampler_3d_backward_out")},
       {"affine_grid_generator(Tensor theta, int[] size, bool align_corners) -> Tensor",
        MakeKernel<Named<ComputeOne<AffineGridGeneratorOf>>>("core::affine_grid_generator")},
       {"affine_grid_generator.out(Tensor theta, int[] size, bool align_corners, *, "
        "Tensor(a!) out) -> Tensor(a!)",
        MakeKernel<Named<ComputeIntoOut<AffineGridGeneratorOf, 3>>>(
            "core::affine_grid_generator_out")},
       {"affine_grid_generator_backward(Tensor grad, int[] size, bool align_corners) -> Tensor",
        MakeKernel<Named<ComputeOne<AffineGridGeneratorBackwardOf>>>(
            "core::affine_grid_generator_backward")}},
      KernelSlot::kComposite);
}

}  // namespace ops
}  // namespace tessera

// The backward ops of op set 1.9's pooling forwards (op set 1.10, family "training"):
// _adaptive_avg_pool2d_backward, _adaptive_avg_pool3d_backward, adaptive_max_pool2d_backward,
// adaptive_max_pool3d_backward, avg_pool3d_backward and max_pool3d_with_indices_backward, with
// their out= / grad_input= forms (composites, dispatcher/ops/pooling_backward_ops.cc).
//
// References in long double, element by element, after ATen's CPU backward kernels rather than
// the composites' formulas (which are scatters and matmuls): a max pooling's gradient goes to the
// element its index names (a flat position within its (N, C) plane; -1, a window with no input
// element, takes none); an average pooling's to every element of its window, divided by the
// window's divisor (adaptive: the window's volume, windows [floor(o * in / out), ceil((o + 1) *
// in / out)); avg_pool3d: divisor_override, or the window clipped to the padded input, or with
// count_include_pad false to the input, as avg_pool3d_backward_out_frame). Each op's GradientSpec
// links it to its forward (derivatives.yaml: `self: _adaptive_avg_pool2d_backward(grad, self)`,
// `self: adaptive_max_pool2d_backward(grad, self, result1)`, `self: avg_pool3d_backward(grad,
// self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)`, `self:
// max_pool3d_with_indices_backward(grad, self, kernel_size, stride, padding, dilation,
// ceil_mode, result1)`).
//
// Samples follow the forwards' OpInfos (sample_inputs_adaptive_avg_pool2d/3d,
// sample_inputs_adaptive_max_pool2d/3d, sample_inputs_avgpool3d, sample_inputs_max_pool):
// batched and unbatched, overlapping windows (adaptive ones too), outputs larger than inputs,
// ceil_mode, padding, count_include_pad false, divisor_override, dilation, empty batches. The
// max ops' indices are the forward's, computed here from the sample's input.
//
// Where PyTorch 1.13 (/usr/bin/python3) differs, current PyTorch is followed: its CPU kernels
// take float16 and bfloat16 in every op here (1.13 refused most), and its meta functions check
// indices' rank and sizes. Error codes: PyTorch's RuntimeError is TSR_INVALID_ARGUMENT; a dtype
// the kernels do not take is TSR_UNIMPLEMENTED. ATen's kernels read past a grad_output or
// indices of another batch or channel count (1.13 crashes); the composites refuse them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "conformance/gradient_samples.h"
#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"

namespace tessera {
namespace conformance {
namespace {

using Shape = std::vector<int64_t>;
using Args = std::vector<Arg>;
using Returns = std::vector<HostTensor>;

HostTensor Random(Shape shape, tsr_dtype dtype, Rng& rng) {
  return Uniform(std::move(shape), dtype, rng, -2, 2);
}

int64_t Numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t e : s) n *= e;
  return n;
}

// ---- window geometry ----

// Window1d: the input positions [start, end) of each output along one dim, and the divisor
// factor of each (avg pooling), or the taps (max pooling, with dilation).
struct Window1d {
  std::vector<int64_t> start, end;  // clipped to the input
  std::vector<double> factor;       // divisor factor (avg)
};

Window1d AdaptiveWindows(int64_t in, int64_t out) {
  Window1d w;
  for (int64_t o = 0; o < out; ++o) {
    const int64_t s = o * in / out;                    // floor
    const int64_t e = ((o + 1) * in + out - 1) / out;  // ceil
    w.start.push_back(s);
    w.end.push_back(e);
    w.factor.push_back(static_cast<double>(e - s));
  }
  return w;
}

// Pool.h's pooling_output_shape (non-negative spans, as in the cases here).
int64_t PooledSize(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil) {
  const int64_t span = in + 2 * pad - dil * (k - 1) - 1 + (ceil ? stride - 1 : 0);
  int64_t out = span / stride + 1;
  if (ceil && (out - 1) * stride >= in + pad) --out;
  return out;
}

// avg_pool3d_backward_out_frame's window along one dim: [o * s - p, + k) clipped to the padded
// input gives the counted size, then to the input.
Window1d AvgWindows(int64_t in, int64_t k, int64_t s, int64_t p, bool ceil, bool include_pad) {
  Window1d w;
  const int64_t out = PooledSize(in, k, p, s, 1, ceil);
  for (int64_t o = 0; o < out; ++o) {
    int64_t a = o * s - p;
    int64_t b = std::min(a + k, in + p);
    const int64_t padded = b - a;
    a = std::max<int64_t>(a, 0);
    b = std::min(b, in);
    w.start.push_back(a);
    w.end.push_back(b);
    w.factor.push_back(static_cast<double>(include_pad ? padded : b - a));
  }
  return w;
}

// Per-dim argument as the ops read it: one value for every dim, [] for the fallback.
Shape Three(const Shape& v, const Shape& fallback) {
  if (v.empty()) return fallback;
  if (v.size() == 1) return Shape(3, v[0]);
  return v;
}

// ---- references ----

// BoxBackward: each output's gradient / divisor added over its box of windows (nd dims, one
// Window1d per dim); `divisor`: divisor_override, or the product of the factors.
HostTensor BoxBackward(const HostTensor& grad, const HostTensor& x,
                       const std::vector<Window1d>& windows, std::optional<int64_t> divisor) {
  const int nd = static_cast<int>(windows.size());
  const Shape in_sp(x.shape.end() - nd, x.shape.end());
  Shape out_sp;
  for (const Window1d& w : windows) out_sp.push_back(static_cast<int64_t>(w.start.size()));
  const int64_t in_plane = Numel(in_sp), out_plane = Numel(out_sp);
  const int64_t planes = in_plane == 0 ? 0 : x.numel() / in_plane;
  std::vector<long double> dx(x.values.size(), 0);
  for (int64_t n = 0; n < planes; ++n) {
    for (int64_t o = 0; o < out_plane; ++o) {
      const Shape oi = Unravel(o, out_sp);
      Shape lo(nd), extent(nd);
      long double div = 1;
      for (int d = 0; d < nd; ++d) {
        lo[d] = windows[d].start[oi[d]];
        extent[d] = windows[d].end[oi[d]] - lo[d];
        div *= windows[d].factor[oi[d]];
      }
      if (divisor) div = static_cast<long double>(*divisor);
      const int64_t taps = Numel(extent);
      if (taps <= 0) continue;
      const long double share = static_cast<long double>(grad.values[n * out_plane + o]) / div;
      for (int64_t t = 0; t < taps; ++t) {
        Shape at = Unravel(t, extent);
        for (int d = 0; d < nd; ++d) at[d] += lo[d];
        dx[n * in_plane + Ravel(at, in_sp)] += share;
      }
    }
  }
  return FromLong(x.shape, x.dtype, dx);
}

// MaxBackward: each output's gradient added at the flat position its index names in its plane
// (the last `nd` dims); -1 takes none.
HostTensor MaxBackward(const HostTensor& grad, const HostTensor& x, const HostTensor& idx, int nd) {
  int64_t in_plane = 1, out_plane = 1;
  for (int d = 1; d <= nd; ++d) {
    in_plane *= x.shape[x.shape.size() - d];
    out_plane *= grad.shape[grad.shape.size() - d];
  }
  std::vector<long double> dx(x.values.size(), 0);
  for (int64_t i = 0; i < grad.numel(); ++i) {
    if (idx.values[i] < 0) continue;
    dx[(i / out_plane) * in_plane + static_cast<int64_t>(idx.values[i])] += grad.values[i];
  }
  return FromLong(x.shape, x.dtype, dx);
}

// MaxIndices: the forward's indices of x, for windows given per dim as taps (positions, -1 for
// padding): the first maximum in row-major scan order, NaN winning (ATen's `val > maxval ||
// isnan(val)`); -1 for a window with no input element.
HostTensor MaxIndices(const HostTensor& x, const std::vector<std::vector<Shape>>& taps) {
  const int nd = static_cast<int>(taps.size());
  const Shape in_sp(x.shape.end() - nd, x.shape.end());
  Shape out_sp;
  for (const auto& t : taps) out_sp.push_back(static_cast<int64_t>(t.size()));
  const int64_t in_plane = Numel(in_sp), out_plane = Numel(out_sp);
  const int64_t planes = in_plane == 0 ? 0 : x.numel() / in_plane;
  std::vector<double> idx;
  for (int64_t n = 0; n < planes; ++n) {
    for (int64_t o = 0; o < out_plane; ++o) {
      const Shape oi = Unravel(o, out_sp);
      Shape extent(nd);
      for (int d = 0; d < nd; ++d) extent[d] = static_cast<int64_t>(taps[d][oi[d]].size());
      int64_t best = -1;
      double best_v = 0;
      for (int64_t t = 0; t < Numel(extent); ++t) {
        const Shape ti = Unravel(t, extent);
        Shape at(nd);
        bool inside = true;
        for (int d = 0; d < nd; ++d) {
          at[d] = taps[d][oi[d]][ti[d]];
          inside = inside && at[d] >= 0 && at[d] < in_sp[d];
        }
        if (!inside) continue;
        const int64_t flat = Ravel(at, in_sp);
        const double v = x.values[n * in_plane + flat];
        if (best < 0 || v > best_v || std::isnan(v)) {
          best = flat;
          best_v = v;
        }
      }
      idx.push_back(static_cast<double>(best));
    }
  }
  Shape shape(x.shape.begin(), x.shape.end() - nd);
  shape.insert(shape.end(), out_sp.begin(), out_sp.end());
  return Values(TSR_DTYPE_INT64, shape, idx);
}

std::vector<Shape> AdaptiveTaps(int64_t in, int64_t out) {
  const Window1d w = AdaptiveWindows(in, out);
  std::vector<Shape> taps;
  for (size_t o = 0; o < w.start.size(); ++o) {
    Shape t;
    for (int64_t i = w.start[o]; i < w.end[o]; ++i) t.push_back(i);
    taps.push_back(t);
  }
  return taps;
}

std::vector<Shape> DilatedTaps(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil) {
  std::vector<Shape> taps;
  const int64_t out = PooledSize(in, k, p, s, d, ceil);
  for (int64_t o = 0; o < out; ++o) {
    Shape t;
    for (int64_t j = 0; j < k; ++j) t.push_back(o * s - p + j * d);
    taps.push_back(t);
  }
  return taps;
}

// The adaptive pooled shape: x's leading dims, then `outs`.
Shape PooledShape(const Shape& in, const Shape& outs) {
  Shape s(in.begin(), in.end() - outs.size());
  s.insert(s.end(), outs.begin(), outs.end());
  return s;
}

std::vector<std::vector<Shape>> AdaptiveTapsOf(const Shape& in, const Shape& outs) {
  std::vector<std::vector<Shape>> taps;
  const size_t nd = outs.size();
  for (size_t d = 0; d < nd; ++d) taps.push_back(AdaptiveTaps(in[in.size() - nd + d], outs[d]));
  return taps;
}

// ---- adaptive ops ----

struct AdaptiveCase {
  Shape in, outs;
  std::string note;
};

std::vector<AdaptiveCase> AdaptiveCases(int nd) {
  if (nd == 2) {
    return {{{1, 2, 5, 7}, {3, 4}, "overlapping windows"},
            {{3, 6, 5}, {4, 3}, "unbatched"},
            {{2, 1, 4, 4}, {4, 4}, "identity"},
            {{2, 3, 3, 2}, {5, 4}, "output larger than the input"},
            {{1, 1, 7, 5}, {1, 1}, "global"},
            {{0, 2, 4, 4}, {2, 2}, "empty batch"}};
  }
  return {{{1, 2, 5, 4, 3}, {3, 2, 2}, "overlapping windows"},
          {{2, 4, 5, 3}, {3, 4, 2}, "unbatched"},
          {{1, 1, 3, 2, 2}, {4, 3, 3}, "output larger than the input"},
          {{2, 1, 3, 4, 5}, {1, 1, 1}, "global"},
          {{0, 2, 3, 3, 3}, {2, 2, 2}, "empty batch"}};
}

// AdaptiveGradientSamples: the adaptive forwards' float64 samples for the gradient oracle (the
// nonempty cases, small enough for central differences).
std::vector<Sample> AdaptiveGradientSamples(int nd, Rng& rng) {
  std::vector<Sample> samples;
  for (const AdaptiveCase& c : AdaptiveCases(nd)) {
    if (Numel(c.in) == 0 || Numel(c.in) > 130) continue;
    samples.push_back(
        {{Arg::Tensor(Uniform(c.in, TSR_DTYPE_FLOAT64, rng, -4, 4)), Arg::Ints(c.outs)},
         ShapeString(c.in) + " to " + ShapeString(c.outs) + " (" + c.note + ")"});
  }
  return samples;
}

OpInfo AdaptiveAvgBackwardOp(int nd) {
  OpInfo op;
  const std::string name =
      nd == 2 ? "_adaptive_avg_pool2d_backward" : "_adaptive_avg_pool3d_backward";
  op.name = name;
  op.out = name + ".out";
  op.dtypes = kFloatingMask;
  op.samples = [nd](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> samples;
    for (const AdaptiveCase& c : AdaptiveCases(nd)) {
      samples.push_back({{Arg::Tensor(Random(PooledShape(c.in, c.outs), dtype, rng)),
                          Arg::Tensor(Random(c.in, dtype, rng))},
                         ShapeString(c.in) + " to " + ShapeString(c.outs) + " (" + c.note + ")"});
    }
    return samples;
  };
  op.reference = [nd](const Sample& s) {
    const HostTensor& g = s.args[0].tensor;
    const HostTensor& x = s.args[1].tensor;
    std::vector<Window1d> windows;
    for (int d = 0; d < nd; ++d) {
      windows.push_back(AdaptiveWindows(x.shape[x.dim() - nd + d], g.shape[g.dim() - nd + d]));
    }
    return Returns{BoxBackward(g, x, windows, std::nullopt)};
  };
  op.errors = [nd](Rng& rng) {
    auto f = [&rng](Shape shape, tsr_dtype dtype = TSR_DTYPE_FLOAT32) {
      return Arg::Tensor(MakeTensor(std::move(shape), dtype, rng));
    };
    const Shape in = nd == 2 ? Shape{1, 2, 4, 4} : Shape{1, 2, 4, 4, 4};
    const Shape out = nd == 2 ? Shape{1, 2, 2, 2} : Shape{1, 2, 2, 2, 2};
    Shape empty = out, other_channels = out;
    empty[2] = 0;
    other_channels[1] = 3;
    const std::string ranks = nd == 2 ? "3D or 4D" : "4D or 5D";
    const std::string leading =
        "expected grad_output of shape [1, 2] + " + std::to_string(nd) + " pooled sizes";
    return std::vector<ErrorInput>{
        RefusedSaying({f(empty), f(in)}, TSR_INVALID_ARGUMENT,
                      "Expected grad_output to have non-zero size for non-batch dimensions"),
        // ATen checks grad_output's rank but names the input's sizes in the message.
        Saying(Refused({f({2, 2}), f(in)}, TSR_INVALID_ARGUMENT, "a 2-D grad_output"),
               std::string("_backward(): Expected ") + ranks + " tensor, but got"),
        RefusedSaying({f(out, TSR_DTYPE_FLOAT64), f(in)}, TSR_INVALID_ARGUMENT,
                      "expected dtype float32 for `grad_output` but got dtype float64"),
        Saying(Refused({f(other_channels), f(in)}, TSR_INVALID_ARGUMENT,
                       "a grad_output of other channels than the input's"),
               leading),
        Saying(Refused({f(out, TSR_DTYPE_INT64), f(in, TSR_DTYPE_INT64)}, TSR_UNIMPLEMENTED,
                       "an int64 input"),
               "not implemented for dtype int64")};
  };
  GradientSpec spec;
  spec.forward = nd == 2 ? "_adaptive_avg_pool2d" : "_adaptive_avg_pool3d";
  spec.samples = [nd](Rng& rng) { return AdaptiveGradientSamples(nd, rng); };
  spec.wrt = {0};
  spec.backward_args = [](const Sample& s, const Returns&, const HostTensor& g) {
    return Args{Arg::Tensor(g), s.args[0]};
  };
  op.gradient = std::move(spec);
  return op;
}

OpInfo AdaptiveMaxBackwardOp(int nd) {
  OpInfo op;
  const std::string name =
      nd == 2 ? "adaptive_max_pool2d_backward" : "adaptive_max_pool3d_backward";
  op.name = name;
  op.out = name + ".grad_input";
  op.dtypes = kFloatingMask;
  op.samples = [nd](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> samples;
    for (const AdaptiveCase& c : AdaptiveCases(nd)) {
      const HostTensor x = Random(c.in, dtype, rng);
      samples.push_back({{Arg::Tensor(Random(PooledShape(c.in, c.outs), dtype, rng)),
                          Arg::Tensor(x), Arg::Tensor(MaxIndices(x, AdaptiveTapsOf(c.in, c.outs)))},
                         ShapeString(c.in) + " to " + ShapeString(c.outs) + " (" + c.note + ")"});
    }
    return samples;
  };
  op.reference = [nd](const Sample& s) {
    return Returns{MaxBackward(s.args[0].tensor, s.args[1].tensor, s.args[2].tensor, nd)};
  };
  op.errors = [nd](Rng& rng) {
    auto f = [&rng](Shape shape, tsr_dtype dtype = TSR_DTYPE_FLOAT32) {
      return Arg::Tensor(MakeTensor(std::move(shape), dtype, rng));
    };
    const Shape in = nd == 2 ? Shape{1, 2, 4, 4} : Shape{1, 2, 4, 4, 4};
    const Shape out = nd == 2 ? Shape{1, 2, 2, 2} : Shape{1, 2, 2, 2, 2};
    auto idx = [](Shape shape, double at = 0) {
      std::vector<double> v(static_cast<size_t>(Numel(shape)), 0);
      if (!v.empty()) v.back() = at;
      return Arg::Tensor(Values(TSR_DTYPE_INT64, std::move(shape), std::move(v)));
    };
    Shape empty = out, other_channels = out, other_sizes = out;
    empty[2] = 0;
    other_channels[1] = 3;
    other_sizes.back() = 3;
    const Shape lower(out.begin() + 1, out.end());
    const double plane = nd == 2 ? 16 : 64;
    const std::string rank = std::to_string(nd + 2);
    const std::string into_plane = std::string("expected indices into the input's ") +
                                   (nd == 2 ? "[4, 4]" : "[4, 4, 4]") + " plane";
    return std::vector<ErrorInput>{
        Saying(Refused({f({2, 2}), f(in), idx({2, 2})}, TSR_INVALID_ARGUMENT,
                       "a 2-D grad_output: adaptive_max_pooling backward expects 3D or 4D (4D or "
                       "5D)"),
               std::string("Expected ") + (nd == 2 ? "3D or 4D" : "4D or 5D") +
                   " grad_output, but got: [2, 2]"),
        RefusedSaying({f(empty), f(in), idx(empty)}, TSR_INVALID_ARGUMENT,
                      "Expected grad_output to have non-zero size for non-batch dimensions"),
        Saying(Refused({f(out), f(in), idx(lower)}, TSR_INVALID_ARGUMENT,
                       "expected dimensions for `indices` but got dimensions"),
               "expected dimensions " + rank + " for `indices` but got dimensions " +
                   std::to_string(nd + 1)),
        RefusedSaying({f(out, TSR_DTYPE_FLOAT64), f(in), idx(out)}, TSR_INVALID_ARGUMENT,
                      "expected dtype float32 for `grad_output` but got dtype float64"),
        Saying(Refused({f(out), f(in), idx(other_sizes)}, TSR_INVALID_ARGUMENT,
                       "expected sizes (indices') for `grad_output` but got sizes"),
               "expected sizes " + ShapeString(other_sizes) + " for `grad_output` but got sizes " +
                   ShapeString(out)),
        Saying(Refused({f(other_channels), f(in), idx(other_channels)}, TSR_INVALID_ARGUMENT,
                       "grad_output and indices of other channels than the input's"),
               "expected grad_output of shape [1, 2] + " + std::to_string(nd) + " pooled sizes"),
        Saying(Refused({f(out), f(in), f(out)}, TSR_INVALID_ARGUMENT, "float32 indices"),
               "expected dtype int64 for `indices` but got dtype float32"),
        Saying(Refused({f(out), f(in), idx(out, plane)}, TSR_INVALID_ARGUMENT,
                       "an index past the input's plane"),
               into_plane),
        Saying(Refused({f(out), f(in), idx(out, -1)}, TSR_INVALID_ARGUMENT, "an index -1"),
               into_plane),
        Saying(Refused({f(out, TSR_DTYPE_INT64), f(in, TSR_DTYPE_INT64), idx(out)},
                       TSR_UNIMPLEMENTED, "an int64 input"),
               "not implemented for dtype int64")};
  };
  GradientSpec spec;
  spec.forward = nd == 2 ? "adaptive_max_pool2d" : "adaptive_max_pool3d";
  spec.samples = [nd](Rng& rng) { return AdaptiveGradientSamples(nd, rng); };
  spec.wrt = {0};
  spec.output = 0;
  spec.backward_args = [](const Sample& s, const Returns& r, const HostTensor& g) {
    return Args{Arg::Tensor(g), s.args[0], Arg::Tensor(r[1])};
  };
  op.gradient = std::move(spec);
  return op;
}

// ---- avg_pool3d_backward ----

struct Pool3dCase {
  Shape in, k, stride, pad, dilation;
  bool ceil;
  bool include_pad;
  std::optional<int64_t> divisor;
  std::string note;
};

std::vector<Pool3dCase> AvgCases() {
  return {
      {{1, 2, 5, 5, 5}, {3}, {2}, {1}, {}, false, true, std::nullopt, "padding, counted"},
      {{1, 2, 5, 5, 5}, {3}, {2}, {1}, {}, false, false, std::nullopt, "padding, not counted"},
      {{2, 1, 6, 6, 6}, {3}, {2}, {1}, {}, true, true, std::nullopt, "ceil_mode"},
      {{2, 1, 6, 5, 6}, {3}, {2}, {1}, {}, true, false, std::nullopt, "ceil_mode, not counted"},
      {{2, 4, 5, 6},
       {2, 3, 2},
       {1},
       {0, 1, 1},
       {},
       false,
       true,
       std::nullopt,
       "unbatched, overlapping, per-dim"},
      {{1, 2, 4, 4, 4}, {2}, {}, {0}, {}, false, true, 3, "divisor_override, stride []"},
      {{1, 1, 5, 7, 5}, {3, 2, 2}, {2}, {1}, {}, true, false, 5, "divisor_override with padding"},
      {{1, 1, 5, 7, 5}, {2}, {3}, {0}, {}, false, true, std::nullopt, "stride past the kernel"},
      {{0, 2, 4, 4, 4}, {2}, {2}, {0}, {}, false, true, std::nullopt, "empty batch"}};
}

std::vector<Window1d> AvgWindowsOf(const Shape& in, const Shape& k, const Shape& stride,
                                   const Shape& pad, bool ceil, bool include_pad) {
  const Shape kk = Three(k, {}), ss = Three(stride, kk), pp = Three(pad, {0, 0, 0});
  std::vector<Window1d> w;
  for (size_t d = 0; d < 3; ++d) {
    w.push_back(AvgWindows(in[in.size() - 3 + d], kk[d], ss[d], pp[d], ceil, include_pad));
  }
  return w;
}

Shape Pooled3d(const Shape& in, const std::vector<Window1d>& w) {
  Shape s(in.begin(), in.end() - 3);
  for (const Window1d& d : w) s.push_back(static_cast<int64_t>(d.start.size()));
  return s;
}

OpInfo AvgPool3dBackwardOp() {
  OpInfo op;
  op.name = "avg_pool3d_backward";
  op.out = "avg_pool3d_backward.grad_input";
  op.dtypes = kFloatingMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> samples;
    for (const Pool3dCase& c : AvgCases()) {
      const auto w = AvgWindowsOf(c.in, c.k, c.stride, c.pad, c.ceil, c.include_pad);
      samples.push_back({{Arg::Tensor(Random(Pooled3d(c.in, w), dtype, rng)),
                          Arg::Tensor(Random(c.in, dtype, rng)), Arg::Ints(c.k),
                          Arg::Ints(c.stride), Arg::Ints(c.pad), Arg::Bool(c.ceil),
                          Arg::Bool(c.include_pad), c.divisor ? Arg::Int(*c.divisor) : Arg::None()},
                         ShapeString(c.in) + " (" + c.note + ")"});
    }
    return samples;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& x = s.args[1].tensor;
    const auto w = AvgWindowsOf(x.shape, s.args[2].ints, s.args[3].ints, s.args[4].ints,
                                s.args[5].boolean, s.args[6].boolean);
    std::optional<int64_t> divisor;
    if (s.args[7].kind == Arg::Kind::kInt) divisor = s.args[7].integer;
    return Returns{BoxBackward(s.args[0].tensor, x, w, divisor)};
  };
  op.errors = [](Rng& rng) {
    auto f = [&rng](Shape shape, tsr_dtype dtype = TSR_DTYPE_FLOAT32) {
      return Arg::Tensor(MakeTensor(std::move(shape), dtype, rng));
    };
    auto call = [&](Arg g, Arg x, Shape k, Arg divisor) {
      return Args{g,
                  x,
                  Arg::Ints(std::move(k)),
                  Arg::Ints({2}),
                  Arg::Ints({0}),
                  Arg::Bool(false),
                  Arg::Bool(true),
                  divisor};
    };
    const Shape in{1, 2, 4, 4, 4}, out{1, 2, 2, 2, 2};
    return std::vector<ErrorInput>{
        Saying(Refused(call(f({1, 2, 3, 2, 2}), f(in), {2}, Arg::None()), TSR_INVALID_ARGUMENT,
                       "Expected a tensor of dimension 5 and tensor.size[2] == 2"),
               "Expected a tensor of dimension 5 and tensor.size[2] == 2 but got: dimension 5 and "
               "tensor.size[2] = 3"),
        Saying(Refused(call(f({1, 3, 2, 2, 2}), f(in), {2}, Arg::None()), TSR_INVALID_ARGUMENT,
                       "grad_output of other channels: tensor.size[1] == 2"),
               "Expected a tensor of dimension 5 and tensor.size[1] == 2 but got: dimension 5 and "
               "tensor.size[1] = 3"),
        Saying(Refused(call(f({2, 2, 2, 2}), f(in), {2}, Arg::None()), TSR_INVALID_ARGUMENT,
                       "a 4-D grad_output for a 5-D input"),
               "Expected a tensor of dimension 5 and tensor.size[0] == 1 but got: dimension 4"),
        RefusedSaying(call(f(out), f(in), {2}, Arg::Int(0)), TSR_INVALID_ARGUMENT,
                      "divisor must be not zero"),
        RefusedSaying(call(f(out), f(in), {2, 2}, Arg::None()), TSR_INVALID_ARGUMENT,
                      "avg_pool3d: kernel_size must be a single int, or a tuple of three ints"),
        Saying(Refused(call(f(out), f({1, 2, 1, 4, 4}), {2}, Arg::None()), TSR_INVALID_ARGUMENT,
                       "input image smaller than kernel size"),
               "input image (T: 1 H: 4 W: 4) smaller than kernel size (kT: 2 kH: 2 kW: 2)"),
        RefusedSaying(call(f(out, TSR_DTYPE_FLOAT64), f(in), {2}, Arg::None()),
                      TSR_INVALID_ARGUMENT,
                      "expected dtype float32 for `grad_output` but got dtype float64"),
        Saying(Refused(call(f(out, TSR_DTYPE_INT64), f(in, TSR_DTYPE_INT64), {2}, Arg::None()),
                       TSR_UNIMPLEMENTED, "an int64 input (current ATen's CPU kernel takes it)"),
               "not implemented for dtype int64")};
  };
  GradientSpec spec;
  spec.forward = "avg_pool3d";
  spec.samples = [](Rng& rng) {
    std::vector<Sample> samples;
    for (const Pool3dCase& c : AvgCases()) {
      if (Numel(c.in) == 0 || Numel(c.in) > 260) continue;
      samples.push_back({{Arg::Tensor(Uniform(c.in, TSR_DTYPE_FLOAT64, rng, -4, 4)), Arg::Ints(c.k),
                          Arg::Ints(c.stride), Arg::Ints(c.pad), Arg::Bool(c.ceil),
                          Arg::Bool(c.include_pad), c.divisor ? Arg::Int(*c.divisor) : Arg::None()},
                         ShapeString(c.in) + " (" + c.note + ")"});
    }
    return samples;
  };
  spec.wrt = {0};
  spec.backward_args = GradThenForwardArgs;
  op.gradient = std::move(spec);
  return op;
}

// ---- max_pool3d_with_indices_backward ----

std::vector<Pool3dCase> MaxCases() {
  return {
      {{1, 2, 4, 4, 4}, {2}, {2}, {0}, {1}, false, true, std::nullopt, "2x2x2, stride 2"},
      {{2, 1, 5, 6, 5},
       {3},
       {2},
       {1},
       {1},
       true,
       true,
       std::nullopt,
       "overlapping, padding, ceil_mode"},
      {{2, 5, 5, 5},
       {3, 2, 2},
       {1},
       {1, 0, 1},
       {1},
       false,
       true,
       std::nullopt,
       "unbatched, stride 1, per-dim"},
      {{1, 1, 6, 7, 6}, {2}, {1}, {0}, {2}, false, true, std::nullopt, "dilation 2"},
      {{0, 2, 4, 4, 4}, {2}, {}, {0}, {1}, false, true, std::nullopt, "empty batch, stride []"}};
}

std::vector<std::vector<Shape>> MaxTapsOf(const Shape& in, const Shape& k, const Shape& stride,
                                          const Shape& pad, const Shape& dilation, bool ceil) {
  const Shape kk = Three(k, {}), ss = Three(stride, kk), pp = Three(pad, {0, 0, 0}),
              dd = Three(dilation, {1, 1, 1});
  std::vector<std::vector<Shape>> taps;
  for (size_t d = 0; d < 3; ++d) {
    taps.push_back(DilatedTaps(in[in.size() - 3 + d], kk[d], ss[d], pp[d], dd[d], ceil));
  }
  return taps;
}

OpInfo MaxPool3dBackwardOp() {
  OpInfo op;
  op.name = "max_pool3d_with_indices_backward";
  op.out = "max_pool3d_with_indices_backward.grad_input";
  op.dtypes = kFloatingMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> samples;
    for (const Pool3dCase& c : MaxCases()) {
      const HostTensor x = Random(c.in, dtype, rng);
      const HostTensor idx =
          MaxIndices(x, MaxTapsOf(c.in, c.k, c.stride, c.pad, c.dilation, c.ceil));
      samples.push_back({{Arg::Tensor(Random(idx.shape, dtype, rng)), Arg::Tensor(x),
                          Arg::Ints(c.k), Arg::Ints(c.stride), Arg::Ints(c.pad),
                          Arg::Ints(c.dilation), Arg::Bool(c.ceil), Arg::Tensor(idx)},
                         ShapeString(c.in) + " (" + c.note + ")"});
    }
    return samples;
  };
  op.reference = [](const Sample& s) {
    return Returns{MaxBackward(s.args[0].tensor, s.args[1].tensor, s.args[7].tensor, 3)};
  };
  op.errors = [](Rng& rng) {
    auto f = [&rng](Shape shape, tsr_dtype dtype = TSR_DTYPE_FLOAT32) {
      return Arg::Tensor(MakeTensor(std::move(shape), dtype, rng));
    };
    auto idx = [](Shape shape, double at = 0) {
      std::vector<double> v(static_cast<size_t>(Numel(shape)), 0);
      if (!v.empty()) v.back() = at;
      return Arg::Tensor(Values(TSR_DTYPE_INT64, std::move(shape), std::move(v)));
    };
    auto call = [&](Arg g, Arg x, Shape pad, Arg indices) {
      return Args{g,
                  x,
                  Arg::Ints({2}),
                  Arg::Ints({2}),
                  Arg::Ints(std::move(pad)),
                  Arg::Ints({1}),
                  Arg::Bool(false),
                  indices};
    };
    const Shape in{1, 2, 4, 4, 4}, out{1, 2, 2, 2, 2};
    return std::vector<ErrorInput>{
        Saying(Refused(call(f({1, 2, 3, 2, 2}), f(in), {0}, idx(out)), TSR_INVALID_ARGUMENT,
                       "Expected a tensor of dimension 5 and tensor.size[2] == 2 (grad_output)"),
               "Expected a tensor of dimension 5 and tensor.size[2] == 2 but got: dimension 5 and "
               "tensor.size[2] = 3 (`grad_output`"),
        Saying(Refused(call(f(out), f(in), {0}, idx({1, 2, 2, 2, 3})), TSR_INVALID_ARGUMENT,
                       "Expected a tensor of dimension 5 and tensor.size[4] == 2 (indices)"),
               "Expected a tensor of dimension 5 and tensor.size[4] == 2 but got: dimension 5 and "
               "tensor.size[4] = 3 (`indices`"),
        Saying(Refused(call(f(out), f(in), {0}, f(out)), TSR_INVALID_ARGUMENT, "float32 indices"),
               "expected dtype int64 for `indices` but got dtype float32"),
        RefusedSaying(call(f(out, TSR_DTYPE_FLOAT64), f(in), {0}, idx(out)), TSR_INVALID_ARGUMENT,
                      "expected dtype float32 for `grad_output` but got dtype float64"),
        Saying(Refused(call(f(out), f(in), {3, 0, 0}, idx(out)), TSR_INVALID_ARGUMENT,
                       "the forward's checks: pad should be at most half of effective kernel size"),
               "pad should be at most half of effective kernel size, but got pad=3, kernel_size=2 "
               "and dilation=1"),
        Saying(Refused(call(f(out), f(in), {0}, idx(out, 64)), TSR_INVALID_ARGUMENT,
                       "index 64 in a 4 x 4 x 4 plane"),
               "expected indices into the input's [4, 4, 4] plane (or -1)"),
        // The forward's checks run first and refuse the dtype (ATen's backward kernel would too).
        Saying(Refused(call(f(out, TSR_DTYPE_INT64), f(in, TSR_DTYPE_INT64), {0}, idx(out)),
                       TSR_UNIMPLEMENTED, "an int64 input"),
               "not implemented for dtype int64")};
  };
  GradientSpec spec;
  spec.forward = "max_pool3d_with_indices";
  spec.samples = [](Rng& rng) {
    std::vector<Sample> samples;
    MakeOptions range;
    range.low = -4;
    range.high = 4;
    for (const Pool3dCase& c : MaxCases()) {
      if (Numel(c.in) == 0 || Numel(c.in) > 260) continue;
      samples.push_back(
          {{Arg::Tensor(MakeTensor(c.in, TSR_DTYPE_FLOAT64, rng, range)), Arg::Ints(c.k),
            Arg::Ints(c.stride), Arg::Ints(c.pad), Arg::Ints(c.dilation), Arg::Bool(c.ceil)},
           ShapeString(c.in) + " (" + c.note + ")"});
    }
    return samples;
  };
  spec.wrt = {0};
  spec.output = 0;
  spec.backward_args = [](const Sample& s, const Returns& r, const HostTensor& g) {
    Args args{Arg::Tensor(g)};
    args.insert(args.end(), s.args.begin(), s.args.end());
    args.push_back(Arg::Tensor(r[1]));
    return args;
  };
  op.gradient = std::move(spec);
  return op;
}

}  // namespace

void AddPoolingBackwardOps(std::vector<OpInfo>& db) {
  db.push_back(AdaptiveAvgBackwardOp(2));
  db.push_back(AdaptiveAvgBackwardOp(3));
  db.push_back(AdaptiveMaxBackwardOp(2));
  db.push_back(AdaptiveMaxBackwardOp(3));
  db.push_back(AvgPool3dBackwardOp());
  db.push_back(MaxPool3dBackwardOp());
}

}  // namespace conformance
}  // namespace tessera

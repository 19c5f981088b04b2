// Pooling ops of op set 1.9: avg_pool1d, avg_pool3d, max_pool1d, max_pool1d_with_indices,
// max_pool3d, max_pool3d_with_indices, adaptive_avg_pool1d/2d/3d, _adaptive_avg_pool2d/3d,
// adaptive_max_pool1d/2d/3d and max_unpool2d/3d, with their out= forms (composites,
// dispatcher/ops/pooling_composites.cc).
//
// After current PyTorch's Pool.h (pooling_output_shape, pool3d_shape_check), MaxPooling.h
// (check_max_pool1d), Pooling.cpp (the 1-D ops over the 2-D ones), the CPU kernels (a max
// window scanned in row-major order, a value taking the place when `val > maxval ||
// isnan(val)`, its index flat in the input's spatial dims; adaptive windows [floor(i * in /
// out), ceil((i + 1) * in / out)); average divisors: divisor_override, or the window clipped to
// the padded input, or to the input) and MaxUnpooling.cpp, with the samples of the OpInfos
// nn.functional.avg_pool1d/3d, max_pool1d/3d, adaptive_avg_pool1d/2d/3d, adaptive_max_pool1d/2d/3d
// and max_unpool2d/3d (whose indices come from a max pool of distinct values). The references
// visit every tap of every window directly.
//
// Where PyTorch 1.13 (what /usr/bin/python3 runs) differs, current PyTorch is followed: its CPU
// kernels take float16 and bfloat16 in every op here (1.13 refused some), max_pool1d refuses
// an empty output ("Invalid computed output size"; 1.13 returned one), and the pad check of
// pooling_output_shape speaks of the effective kernel size.
//
// Error codes: PyTorch's RuntimeError is TSR_INVALID_ARGUMENT; a dtype the kernels do not take
// is TSR_UNIMPLEMENTED.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"

namespace tessera {
namespace conformance {
namespace {

using Shape = std::vector<int64_t>;

// ---- references ----

// PoolSpec: a window pooling over the last `nd` dims.
struct PoolSpec {
  int nd = 2;
  Shape k, stride, pad, dilation;
  bool ceil = false;
  bool max = true;
  bool include_pad = true;
  std::optional<int64_t> divisor;
};

// PerDim: a pooling argument as the ops read it: [] -> fallback, one value -> every dim.
Shape PerDim(const Shape& v, int nd, const Shape& fallback) {
  if (v.empty()) return fallback;
  if (v.size() == 1) return Shape(static_cast<size_t>(nd), v[0]);
  return v;
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

int64_t PooledSize(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil) {
  int64_t o = FloorDiv(in + 2 * pad - dil * (k - 1) - 1 + (ceil ? stride - 1 : 0), stride) + 1;
  if (ceil && (o - 1) * stride >= in + pad) --o;
  return o;
}

// Spatial: x's last nd sizes; Planes: the number of planes before them.
Shape Spatial(const HostTensor& x, int nd) { return Shape(x.shape.end() - nd, x.shape.end()); }
int64_t Numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t e : s) n *= e;
  return n;
}

// WithSpatial: x's leading dims followed by `spatial`.
Shape WithSpatial(const HostTensor& x, int nd, const Shape& spatial) {
  Shape s(x.shape.begin(), x.shape.end() - nd);
  s.insert(s.end(), spatial.begin(), spatial.end());
  return s;
}

// MaxRule: PyTorch's max-pooling kernels' step.
void MaxRule(double v, int64_t at, double& best, int64_t& best_i) {
  if (best_i < 0 || std::isnan(v) || v > best) {
    best = v;
    best_i = at;
  }
}

// WindowPool: values (and, for max, indices) of a window pooling.
std::vector<HostTensor> WindowPool(const HostTensor& x, const PoolSpec& p) {
  const int nd = p.nd;
  const Shape in = Spatial(x, nd);
  Shape out(nd);
  for (int i = 0; i < nd; ++i) {
    out[i] = PooledSize(in[i], p.k[i], p.pad[i], p.stride[i], p.dilation[i], p.ceil);
  }
  const int64_t in_n = Numel(in), out_n = Numel(out);
  const int64_t planes = in_n == 0 ? 0 : x.numel() / in_n;
  std::vector<long double> values, indices;
  for (int64_t plane = 0; plane < planes; ++plane) {
    for (int64_t f = 0; f < out_n; ++f) {
      const Shape o = Unravel(f, out);
      if (p.max) {
        double best = -INFINITY;
        int64_t best_i = -1;
        for (int64_t t = 0; t < Numel(p.k); ++t) {
          const Shape tap = Unravel(t, p.k);
          Shape pos(nd);
          bool inside = true;
          for (int i = 0; i < nd; ++i) {
            pos[i] = o[i] * p.stride[i] - p.pad[i] + tap[i] * p.dilation[i];
            inside = inside && pos[i] >= 0 && pos[i] < in[i];
          }
          if (!inside) continue;
          const int64_t at = Ravel(pos, in);
          MaxRule(x.values[static_cast<size_t>(plane * in_n + at)], at, best, best_i);
        }
        values.push_back(best);
        indices.push_back(best_i);
        continue;
      }
      Shape lo(nd), hi(nd);
      long double padded = 1, clipped = 1;
      for (int i = 0; i < nd; ++i) {
        lo[i] = o[i] * p.stride[i] - p.pad[i];
        hi[i] = std::min(lo[i] + p.k[i], in[i] + p.pad[i]);
        padded *= hi[i] - lo[i];
        lo[i] = std::max<int64_t>(lo[i], 0);
        hi[i] = std::min(hi[i], in[i]);
        clipped *= hi[i] - lo[i];
      }
      Shape box(nd);
      for (int i = 0; i < nd; ++i) box[i] = hi[i] - lo[i];
      long double sum = 0;
      for (int64_t t = 0; t < Numel(box); ++t) {
        Shape pos = Unravel(t, box);
        for (int i = 0; i < nd; ++i) pos[i] += lo[i];
        sum += x.values[static_cast<size_t>(plane * in_n + Ravel(pos, in))];
      }
      const long double divisor = p.divisor ? *p.divisor : p.include_pad ? padded : clipped;
      // int64: ATen's integer division truncates toward zero, as FromLong's cast does.
      long double avg = sum / divisor;
      if (x.dtype == TSR_DTYPE_INT64) avg = std::trunc(avg);
      values.push_back(avg);
    }
  }
  const Shape shape = WithSpatial(x, nd, out);
  std::vector<HostTensor> r{FromLong(shape, x.dtype, values)};
  if (p.max) r.push_back(FromLong(shape, TSR_DTYPE_INT64, indices));
  return r;
}

// AdaptivePool: ATen's adaptive windows over the last outs.size() dims.
std::vector<HostTensor> AdaptivePool(const HostTensor& x, const Shape& outs, bool max) {
  const int nd = static_cast<int>(outs.size());
  const Shape in = Spatial(x, nd);
  const int64_t in_n = Numel(in), out_n = Numel(outs);
  const int64_t planes = in_n == 0 ? 0 : x.numel() / in_n;
  std::vector<long double> values, indices;
  for (int64_t plane = 0; plane < planes; ++plane) {
    for (int64_t f = 0; f < out_n; ++f) {
      const Shape o = Unravel(f, outs);
      Shape lo(nd), box(nd);
      for (int i = 0; i < nd; ++i) {
        lo[i] = o[i] * in[i] / outs[i];
        box[i] = ((o[i] + 1) * in[i] + outs[i] - 1) / outs[i] - lo[i];
      }
      double best = -INFINITY;
      int64_t best_i = -1;
      long double sum = 0;
      for (int64_t t = 0; t < Numel(box); ++t) {
        Shape pos = Unravel(t, box);
        for (int i = 0; i < nd; ++i) pos[i] += lo[i];
        const int64_t at = Ravel(pos, in);
        const double v = x.values[static_cast<size_t>(plane * in_n + at)];
        if (max) {
          MaxRule(v, at, best, best_i);
        } else {
          sum += v;
        }
      }
      values.push_back(max ? best : sum / Numel(box));
      indices.push_back(best_i);
    }
  }
  const Shape shape = WithSpatial(x, nd, outs);
  std::vector<HostTensor> r{FromLong(shape, x.dtype, values)};
  if (max) r.push_back(FromLong(shape, TSR_DTYPE_INT64, indices));
  return r;
}

// Unpool: each value of x written at its index into zero planes of `outs`.
HostTensor Unpool(const HostTensor& x, const HostTensor& index, const Shape& outs) {
  const int nd = static_cast<int>(outs.size());
  const int64_t in_n = Numel(Spatial(x, nd)), out_n = Numel(outs);
  HostTensor r = Full(WithSpatial(x, nd, outs), x.dtype, 0);
  const int64_t planes = in_n == 0 ? 0 : x.numel() / in_n;
  for (int64_t plane = 0; plane < planes; ++plane) {
    for (int64_t i = 0; i < in_n; ++i) {
      const size_t at = static_cast<size_t>(plane * in_n + i);
      const int64_t to = static_cast<int64_t>(index.values[at]);
      r.values[static_cast<size_t>(plane * out_n + to)] = x.values[at];
    }
  }
  return r;
}

// ---- samples ----

// A window-pooling case: input shape, kernel, stride, padding, dilation, ceil_mode, and for
// average pooling count_include_pad and divisor_override (0: None).
struct Case {
  Shape in, k, stride, pad, dilation;
  bool ceil = false;
  bool include_pad = true;
  int64_t divisor = 0;
};

std::string Describe(const Case& c) {
  std::string d = ShapeString(c.in) + " kernel " + ShapeString(c.k) + " stride " +
                  ShapeString(c.stride) + " pad " + ShapeString(c.pad);
  if (!c.dilation.empty()) d += " dil " + ShapeString(c.dilation);
  if (c.ceil) d += " ceil";
  if (!c.include_pad) d += " exclude_pad";
  if (c.divisor != 0) d += " divisor " + std::to_string(c.divisor);
  return d;
}

// A tensor of distinct values (a permutation of small integers, exact in every float dtype up
// to 256 elements; beyond, bfloat16 rounds some together), so that maxima are unique.
HostTensor Distinct(const Shape& shape, tsr_dtype dtype, Rng& rng) {
  const int64_t n = Numel(shape);
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<double>(i - n / 2);
  std::shuffle(v.begin(), v.end(), rng);
  return Values(dtype, shape, v);
}

// Ties: values from {0, 1, 2}: many ties, where the first maximum in scan order counts.
HostTensor Ties(const Shape& shape, tsr_dtype dtype, Rng& rng) {
  std::uniform_int_distribution<int> pick(0, 2);
  std::vector<double> v;
  for (int64_t i = 0; i < Numel(shape); ++i) v.push_back(pick(rng));
  return Values(dtype, shape, v);
}

// NaNs: values with NaNs (two in some windows, where the last counts) and -inf.
HostTensor WithNaNs(const Shape& shape, tsr_dtype dtype, Rng& rng) {
  HostTensor t = MakeTensor(shape, dtype, rng);
  for (size_t i = 0; i < t.values.size(); ++i) {
    if (i % 5 == 1 || i % 7 == 3) t.values[i] = NAN;
    if (i % 11 == 4) t.values[i] = -INFINITY;
  }
  return t;
}

std::optional<int64_t> DivisorOf(const Arg& a) {
  if (a.kind == Arg::Kind::kInt) return a.integer;
  return std::nullopt;
}

// ---- the ops ----

// Window pooling ops: nd = 1 or 3; max (with or without indices) or average.
OpInfo WindowOp(int nd, bool max, bool with_indices) {
  const std::string base = std::string(max ? "max_pool" : "avg_pool") + std::to_string(nd) + "d";
  OpInfo op;
  op.name = base + (with_indices ? "_with_indices" : "");
  op.out = nd == 3 && (with_indices || !max) ? op.name + ".out" : "";
  op.dtypes = max ? kFloatingMask : kFloatingMask | Bit(TSR_DTYPE_INT64);
  op.tolerance_scale = 4;
  op.samples = [nd, max](tsr_dtype dtype, Rng& rng) {
    std::vector<Case> cases;
    if (nd == 1) {
      cases = {{{2, 3, 9}, {3}, {}, {0}, {1}},
               {{1, 3, 9}, {3}, {1}, {1}, {2}, false, false},
               {{1, 3, 9}, {6}, {3}, {2}, {1}, true, true},
               {{3, 9}, {2}, {2}, {1}, {1}, true, false},
               {{1, 2, 7}, {3}, {2}, {1}, {1}, true, true},
               {{2, 2, 8}, {4}, {3}, {2}, {2}, false, true},
               {{0, 3, 5}, {2}, {}, {0}, {1}},
               {{2, 3, 1}, {1}, {1}, {0}, {1}}};
    } else {
      cases = {{{2, 3, 5, 5, 5}, {2}, {}, {0}, {1}},
               {{2, 3, 3, 4, 4}, {2, 2, 2}, {1, 1, 1}, {0, 1, 0}, {1}, true, false, 2},
               {{1, 2, 4, 4, 4}, {2}, {1}, {1}, {1}, true, true, -2},
               {{1, 2, 6, 5, 7}, {2, 3, 2}, {2, 1, 2}, {1, 1, 0}, {1}, false, false},
               {{1, 1, 7, 7, 7}, {3}, {2}, {1}, {2, 1, 2}, true, true},
               {{3, 4, 4, 4}, {2}, {1}, {0}, {1}, true, true},
               {{1, 2, 5, 6, 4}, {3, 2, 2}, {2, 2, 1}, {1, 0, 1}, {1}, true, false},
               {{0, 2, 3, 3, 3}, {2}, {}, {0}, {1}}};
    }
    std::vector<Sample> s;
    for (const Case& c : cases) {
      if (max && c.divisor != 0) continue;
      std::vector<Arg> args{
          Arg::Tensor(max ? Distinct(c.in, dtype, rng) : MakeTensor(c.in, dtype, rng)),
          Arg::Ints(c.k), Arg::Ints(c.stride), Arg::Ints(c.pad)};
      if (max) {
        args.push_back(Arg::Ints(c.dilation));
        args.push_back(Arg::Bool(c.ceil));
      } else {
        args.push_back(Arg::Bool(c.ceil));
        args.push_back(Arg::Bool(c.include_pad));
        if (nd == 3) args.push_back(c.divisor != 0 ? Arg::Int(c.divisor) : Arg::None());
      }
      Case shown = c;
      if (!max) shown.dilation.clear();
      s.push_back({args, Describe(shown)});
    }
    if (max) {
      // Ties (the first maximum in row-major window order) and NaNs (the last NaN of a window),
      // with windows that overlap.
      const Shape in = nd == 1 ? Shape{2, 2, 11} : Shape{1, 2, 4, 5, 6};
      const Shape k = nd == 1 ? Shape{3} : Shape{2, 3, 2};
      for (int which = 0; which < 2; ++which) {
        HostTensor x = which == 0 ? Ties(in, dtype, rng) : WithNaNs(in, dtype, rng);
        s.push_back({{Arg::Tensor(x), Arg::Ints(k), Arg::Ints({1}), Arg::Ints({1}), Arg::Ints({1}),
                      Arg::Bool(false)},
                     ShapeString(in) + (which == 0 ? " with ties" : " with NaNs and -inf")});
      }
    }
    return s;
  };
  op.reference = [nd, max, with_indices](const Sample& s) {
    PoolSpec p;
    p.nd = nd;
    p.max = max;
    p.k = PerDim(s.args[1].ints, nd, {});
    p.stride = PerDim(s.args[2].ints, nd, p.k);
    p.pad = PerDim(s.args[3].ints, nd, Shape(nd, 0));
    if (max) {
      p.dilation = PerDim(s.args[4].ints, nd, Shape(nd, 1));
      p.ceil = s.args[5].boolean;
    } else {
      p.dilation = Shape(nd, 1);
      p.ceil = s.args[4].boolean;
      p.include_pad = s.args[5].boolean;
      if (nd == 3) p.divisor = DivisorOf(s.args[6]);
    }
    std::vector<HostTensor> r = WindowPool(s.args[0].tensor, p);
    if (max && !with_indices) r.resize(1);
    return r;
  };
  op.errors = [nd, max, with_indices](Rng& rng) {
    auto x = [&](const Shape& shape, tsr_dtype d = TSR_DTYPE_FLOAT32) {
      return Arg::Tensor(MakeTensor(shape, d, rng));
    };
    const Shape good = nd == 1 ? Shape{2, 3, 6} : Shape{1, 2, 4, 4, 4};
    // call: the op's arguments with the given kernel, stride, padding (and dilation 1, or for
    // average pooling ceil_mode False, count_include_pad True, divisor None).
    auto call = [&](Arg in, Shape k, Shape stride, Shape pad, Shape dil = {1}) {
      std::vector<Arg> a{std::move(in), Arg::Ints(std::move(k)), Arg::Ints(std::move(stride)),
                         Arg::Ints(std::move(pad))};
      if (max) {
        a.push_back(Arg::Ints(std::move(dil)));
        a.push_back(Arg::Bool(false));
      } else {
        a.push_back(Arg::Bool(false));
        a.push_back(Arg::Bool(true));
        if (nd == 3) a.push_back(Arg::None());
      }
      return a;
    };
    // words: the refusal in this op's words. avg_pool1d and max_pool1d_with_indices check their
    // lists, then refuse as the 2-d op they call; max_pool1d has its own checks (MaxPooling.cpp);
    // avg_pool3d and max_pool3d word their list checks apart and share pool3d_shape_check's.
    const bool own_1d = nd == 1 && max && !with_indices;
    auto words = [nd, max, own_1d](std::string via_2d, std::string max_1d, std::string avg_3d,
                                   std::string max_3d) {
      if (nd == 3) return max ? max_3d : avg_3d;
      return own_1d ? max_1d : via_2d;
    };
    std::vector<ErrorInput> e;
    e.push_back(
        Saying(Refused(call(x(good), {2, 2}, {}, {0}), TSR_INVALID_ARGUMENT,
                       "a kernel_size of two values"),
               words("argument 'kernel_size' should contain one int (got 2)",
                     "kernel_size must be an int, list of ints or tuple of ints of size 1 but got "
                     "size 2",
                     "kernel_size must be a single int, or a tuple of three ints",
                     "kernel_size must either be a single int, or a tuple of three ints")));
    e.push_back(Saying(
        Refused(call(x(good), {2}, {1, 1}, {0}), TSR_INVALID_ARGUMENT, "a stride of two values"),
        words(
            "argument 'stride' should contain one int (got 2)",
            "stride must be None, an int, list of ints, or tuple of ints of size 1 but got size 2",
            "stride must be omitted, a single int, or a tuple of three ints",
            "stride must either be omitted, a single int, or a tuple of three ints")));
    e.push_back(Saying(
        Refused(call(x(good), {2}, {1}, {0, 0}), TSR_INVALID_ARGUMENT, "a padding of two values"),
        words("argument 'padding' should contain one int (got 2)",
              "padding must be an int, list of ints, or tuple of ints of size 1 but got size 2",
              "padding must be a single int, or a tuple of three ints",
              "padding must be either be a single int, or a tuple of three ints")));
    // The 2-d ops refuse a negative pad with their "at most half" message (ATen's
    // pooling_output_shape: "pad must be non-negative").
    e.push_back(Saying(
        Refused(call(x(good), {2}, {1}, {-1}), TSR_INVALID_ARGUMENT, "pad must be non-negative"),
        words("pad should be at most half of effective kernel size, but got pad=-1",
              "padding must be non-negative, but got -1",
              "pad must be non-negative, but got pad: -1",
              "pad must be non-negative, but got pad: -1")));
    e.push_back(
        Saying(Refused(call(x(good), {2}, {1}, {2}), TSR_INVALID_ARGUMENT,
                       "pad should be at most half of (effective) kernel size"),
               words("pad should be at most half of effective kernel size, but got pad=2",
                     "padding should be at most half of kernel size, but got padding=2 and "
                     "kernel_size=2",
                     "pad should be at most half of effective kernel size, but got pad=2",
                     "pad should be at most half of effective kernel size, but got pad=2")));
    e.push_back(Saying(
        Refused(call(x(good), {2}, {0}, {0}), TSR_INVALID_ARGUMENT, "stride should not be zero"),
        words("expected kernel_size, stride and dilation > 0, got kernel_size 2, stride 0",
              "stride must be greater than zero, but got 0", "stride should not be zero",
              "stride should not be zero")));
    e.push_back(
        Saying(Refused(call(x(good), {0}, {1}, {0}), TSR_INVALID_ARGUMENT, "a kernel of size 0"),
               words("expected kernel_size, stride and dilation > 0, got kernel_size 0",
                     "kernel_size must be greater than zero, but got 0",
                     "kernel size should be greater than zero, but got kT: 0 kH: 0 kW: 0",
                     "kernel size should be greater than zero, but got kT: 0 kH: 0 kW: 0")));
    const Shape low = nd == 1 ? Shape{6} : Shape{4, 4, 4};
    const Shape high = nd == 1 ? Shape{1, 2, 3, 6} : Shape{1, 1, 2, 4, 4, 4};
    const std::string own_dims =
        "Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:";
    const std::string dims_3d = "non-empty 4D or 5D (batch mode) tensor expected for input";
    e.push_back(Saying(
        Refused(call(x(low), {2}, {}, {0}), TSR_INVALID_ARGUMENT, "an input of too few dims"),
        words("Expected 2 to 3 dimensions, but got 1-dimensional tensor for argument #1 'self'",
              own_dims + "[6]", dims_3d, dims_3d)));
    e.push_back(Saying(
        Refused(call(x(high), {2}, {}, {0}), TSR_INVALID_ARGUMENT, "an input of too many dims"),
        words("Expected 2 to 3 dimensions, but got 4-dimensional tensor for argument #1 'self'",
              own_dims + "[1, 2, 3, 6]", dims_3d, dims_3d)));
    const Shape small = nd == 1 ? Shape{2, 3, 1} : Shape{1, 2, 1, 4, 4};
    e.push_back(Saying(Refused(call(x(small), {3}, {1}, {0}), TSR_INVALID_ARGUMENT,
                               "an input smaller than the kernel: output size is too small"),
                       words("output size is too small (input [2, 3, 1, 1], kernel 3)",
                             "Invalid computed output size: -1",
                             "input image (T: 1 H: 4 W: 4) smaller than kernel size (kT: 3 kH: 3 "
                             "kW: 3)",
                             "Calculated output size: (2x-1x2x2). Output size is too small")));
    const Shape empty_channel = nd == 1 ? Shape{2, 0, 6} : Shape{1, 0, 4, 4, 4};
    const std::string empty_3d =
        "Expected input's non-batch dimensions to have positive length, but input has a shape of "
        "[1, 0, 4, 4, 4]";
    e.push_back(Saying(Refused(call(x(empty_channel), {2}, {}, {0}), TSR_INVALID_ARGUMENT,
                               "an empty non-batch dim"),
                       words("expected a 3D or 4D (batch mode) input with optional 0 dim batch "
                             "size, got [2, 0, 1, 6]",
                             own_dims + "[2, 0, 6]", empty_3d, empty_3d)));
    e.push_back(Saying(
        Refused(call(x(good, TSR_DTYPE_INT32), {2}, {}, {0}), TSR_UNIMPLEMENTED, "an int32 input"),
        "not implemented for dtype int32"));
    if (max) {
      e.push_back(Saying(Refused(call(x(good), {2}, {1}, {0}, {0}), TSR_INVALID_ARGUMENT,
                                 "dilation should be greater than zero"),
                         words("expected kernel_size, stride and dilation > 0, got kernel_size 2, "
                               "stride 1, dilation 0",
                               "dilation must be greater than zero, but got 0", "",
                               "dilation should be greater than zero, but got dilationT: 0 "
                               "dilationH: 0 dilationW: 0")));
      e.push_back(Saying(Refused(call(x(good, TSR_DTYPE_INT64), {2}, {}, {0}), TSR_UNIMPLEMENTED,
                                 "an int64 input"),
                         "not implemented for dtype int64"));
      e.push_back(
          Saying(Refused(call(x(good), {2}, {1}, {0}, {1, 1}), TSR_INVALID_ARGUMENT,
                         "a dilation of two values"),
                 words("argument 'dilation' should contain one int (got 2)",
                       "dilation must be an int, list of ints or tuple of ints of size 1 "
                       "but got size 2",
                       "", "dilation must be either a single int, or a tuple of three ints")));
    }
    if (nd == 3) {
      // pool3d_shape_check's pad rule is against the kernel size itself, also with dilation.
      if (max) {
        e.push_back(Saying(Refused(call(x({1, 1, 9, 9, 9}), {3}, {1}, {2}, {2}),
                                   TSR_INVALID_ARGUMENT, "pad 2 for kernel 3 with dilation 2"),
                           "pad should be smaller than or equal to half of effective kernel size, "
                           "but got padT: 2 padW: 2 padH: 2"));
      } else {
        std::vector<Arg> a = call(x(good), {2}, {}, {0});
        a[6] = Arg::Int(0);
        e.push_back(RefusedSaying(a, TSR_INVALID_ARGUMENT, "divisor must be not zero"));
      }
    }
    return e;
  };
  return op;
}

// Adaptive pooling ops: nd = 1, 2 or 3; `kernel`: the _adaptive_avg_pool forms.
OpInfo AdaptiveOp(int nd, bool max, bool kernel) {
  OpInfo op;
  op.name = std::string(kernel ? "_" : "") + (max ? "adaptive_max_pool" : "adaptive_avg_pool") +
            std::to_string(nd) + "d";
  op.out = nd == 1 ? "" : op.name + ".out";
  op.dtypes = kFloatingMask;
  op.tolerance_scale = 4;
  op.samples = [nd, max, kernel](tsr_dtype dtype, Rng& rng) {
    std::vector<std::pair<Shape, Shape>> cases;
    if (nd == 1) {
      cases = {{{2, 3, 8}, {3}}, {{3, 7}, {4}},    {{1, 3, 5}, {7}}, {{2, 2, 9}, {2}},
               {{0, 3, 5}, {2}}, {{2, 3, 6}, {1}}, {{1, 2, 6}, {6}}};
    } else if (nd == 2) {
      cases = {{{2, 3, 7, 9}, {3, 4}}, {{3, 5, 5}, {2, 2}},    {{1, 2, 4, 6}, {7, 5}},
               {{2, 3, 5, 5}, {1, 1}}, {{0, 3, 5, 5}, {2, 2}}, {{1, 2, 6, 6}, {6, 6}},
               {{1, 2, 5, 8}, {1, 3}}, {{2, 3, 5, 5}, {0, 2}}};
      if (!max) cases.push_back({{2, 0, 4, 4}, {2, 2}});
      if (!max && !kernel) cases.push_back({{5, 6}, {1, 1}});  // the mean path checks no dims
    } else {
      cases = {{{2, 3, 5, 6, 7}, {2, 3, 4}}, {{3, 4, 5, 6}, {3, 2, 5}},
               {{1, 2, 3, 3, 3}, {1, 1, 1}}, {{1, 1, 3, 4, 2}, {5, 6, 3}},
               {{0, 2, 3, 3, 3}, {2, 2, 2}}, {{1, 2, 4, 4, 4}, {2, 0, 2}}};
    }
    std::vector<Sample> s;
    for (const auto& [in, outs] : cases) {
      HostTensor x = max ? Distinct(in, dtype, rng) : MakeTensor(in, dtype, rng);
      s.push_back(
          {{Arg::Tensor(x), Arg::Ints(outs)}, ShapeString(in) + " to " + ShapeString(outs)});
    }
    if (max) {
      const Shape in = nd == 1   ? Shape{2, 2, 11}
                       : nd == 2 ? Shape{2, 2, 7, 9}
                                 : Shape{1, 2, 5, 6, 7};
      const Shape outs = nd == 1 ? Shape{4} : nd == 2 ? Shape{3, 4} : Shape{2, 4, 3};
      s.push_back({{Arg::Tensor(Ties(in, dtype, rng)), Arg::Ints(outs)},
                   ShapeString(in) + " to " + ShapeString(outs) + " with ties"});
      s.push_back({{Arg::Tensor(WithNaNs(in, dtype, rng)), Arg::Ints(outs)},
                   ShapeString(in) + " to " + ShapeString(outs) + " with NaNs and -inf"});
    } else {
      // Infinities stay in their own windows (a weighted sum would spread them as NaN).
      const Shape in = nd == 1   ? Shape{1, 2, 9}
                       : nd == 2 ? Shape{1, 2, 7, 9}
                                 : Shape{1, 1, 5, 6, 7};
      const Shape outs = nd == 1 ? Shape{4} : nd == 2 ? Shape{3, 4} : Shape{2, 4, 3};
      HostTensor x = MakeTensor(in, dtype, rng);
      x.values[3] = INFINITY;
      x.values[x.values.size() - 2] = -INFINITY;
      s.push_back({{Arg::Tensor(x), Arg::Ints(outs)},
                   ShapeString(in) + " to " + ShapeString(outs) + " with inf and -inf"});
    }
    return s;
  };
  op.reference = [max](const Sample& s) {
    return AdaptivePool(s.args[0].tensor, s.args[1].ints, max);
  };
  op.errors = [nd, max, kernel](Rng& rng) {
    auto x = [&](const Shape& shape, tsr_dtype d = TSR_DTYPE_FLOAT32) {
      return Arg::Tensor(MakeTensor(shape, d, rng));
    };
    const Shape good = nd == 1   ? Shape{2, 3, 6}
                       : nd == 2 ? Shape{2, 3, 6, 6}
                                 : Shape{1, 2, 4, 4, 4};
    const Shape outs(static_cast<size_t>(nd), 2);
    const std::string n = std::to_string(nd);
    std::vector<ErrorInput> e;
    Shape long_outs = outs;
    long_outs.push_back(2);
    const std::string too_long =
        nd == 1 ? "argument 'output_size' should contain one int (got 2)"
        : max   ? "internal error: output_size.size() must be " + n
                : "output_size must be " + n + ", got " + std::to_string(nd + 1) + " values";
    e.push_back(Saying(Refused({x(good), Arg::Ints(long_outs)}, TSR_INVALID_ARGUMENT,
                               "an output_size one too long"),
                       too_long));
    const Shape low(good.begin() + 2, good.end());
    Shape high = good;
    high.insert(high.begin(), 1);
    // dims: the message for an input of `shape`, of a wrong number of dims.
    auto dims = [nd, max](const Shape& shape) {
      if (nd == 1) {
        return "Expected 2 to 3 dimensions, but got " + std::to_string(shape.size()) +
               "-dimensional tensor for argument #1 'self'";
      }
      return "Expected " + std::to_string(nd + 1) + "D or " + std::to_string(nd + 2) +
             "D tensor, but got" + (max ? ": " : " ") + ShapeString(shape);
    };
    e.push_back(
        Saying(Refused({x(low), Arg::Ints(outs)}, TSR_INVALID_ARGUMENT, "an input of too few dims"),
               dims(low)));
    e.push_back(Saying(
        Refused({x(high), Arg::Ints(outs)}, TSR_INVALID_ARGUMENT, "an input of too many dims"),
        dims(high)));
    const std::string empty = "Expected input to have non-zero size for non-batch dimensions";
    Shape empty_last = good;
    empty_last.back() = 0;
    e.push_back(Saying(
        Refused({x(empty_last), Arg::Ints(outs)}, TSR_INVALID_ARGUMENT, "an empty spatial dim"),
        empty));
    // adaptive_avg_pool checks output_size; the kernels (and adaptive_max_pool) refuse it as
    // the output's size, as ATen does.
    Shape negative = outs;
    negative[0] = -1;
    e.push_back(Saying(
        Refused({x(good), Arg::Ints(negative)}, TSR_INVALID_ARGUMENT, "a negative output size"),
        max || kernel ? "Trying to create tensor with negative dimension -1"
                      : "elements of output_size must be greater than or equal to 0"));
    e.push_back(Saying(
        Refused({x(good, TSR_DTYPE_INT64), Arg::Ints(outs)}, TSR_UNIMPLEMENTED, "an int64 input"),
        "not implemented for dtype int64"));
    if (max) {
      Shape empty_channel = good;
      empty_channel[1] = 0;
      e.push_back(Saying(Refused({x(empty_channel), Arg::Ints(outs)}, TSR_INVALID_ARGUMENT,
                                 "an empty non-batch dim"),
                         empty));
    }
    return e;
  };
  return op;
}

// max_unpool2d / max_unpool3d: samples from a max pool of distinct values (ATen's OpInfo),
// whose indices the op scatters back.
OpInfo UnpoolOp(int nd) {
  OpInfo op;
  op.name = "max_unpool" + std::to_string(nd) + "d";
  op.out = op.name + ".out";
  op.dtypes = kFloatingMask;
  op.samples = [nd](tsr_dtype dtype, Rng& rng) {
    struct U {
      Shape in, k, stride, pad, outs;  // outs empty: the pooled input's own sizes
    };
    std::vector<U> cases;
    if (nd == 2) {
      cases = {{{2, 3, 6, 8}, {2}, {2}, {0}, {}},
               {{3, 5, 7}, {3}, {2}, {1}, {}},
               {{1, 2, 6, 8}, {2, 3}, {2, 3}, {0}, {7, 9}},
               {{1, 2, 5, 5}, {3}, {1}, {1}, {}},
               {{0, 2, 4, 4}, {2}, {2}, {0}, {}}};
    } else {
      cases = {{{1, 2, 4, 4, 6}, {2}, {2}, {0}, {}},
               {{2, 4, 4, 4}, {2}, {2}, {0}, {}},
               {{1, 1, 5, 5, 5}, {3}, {2}, {1}, {}},
               {{1, 2, 4, 4, 4}, {2}, {2}, {0}, {5, 4, 6}},
               {{0, 2, 4, 4, 4}, {2}, {2}, {0}, {}}};
    }
    std::vector<Sample> s;
    for (const U& c : cases) {
      PoolSpec p;
      p.nd = nd;
      p.k = PerDim(c.k, nd, {});
      p.stride = PerDim(c.stride, nd, p.k);
      p.pad = PerDim(c.pad, nd, Shape(nd, 0));
      p.dilation = Shape(nd, 1);
      HostTensor x = Distinct(c.in, dtype, rng);
      std::vector<HostTensor> pooled = WindowPool(x, p);
      const Shape outs = c.outs.empty() ? Spatial(x, nd) : c.outs;
      std::vector<Arg> args{Arg::Tensor(pooled[0]), Arg::Tensor(pooled[1]), Arg::Ints(outs)};
      if (nd == 3) {
        args.push_back(Arg::Ints(p.stride));
        args.push_back(Arg::Ints(p.pad));
      }
      s.push_back({args, "max_pool of " + ShapeString(c.in) + " kernel " + ShapeString(c.k) +
                             " stride " + ShapeString(c.stride) + " pad " + ShapeString(c.pad) +
                             " unpooled to " + ShapeString(outs)});
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    return std::vector<HostTensor>{Unpool(s.args[0].tensor, s.args[1].tensor, s.args[2].ints)};
  };
  op.errors = [nd](Rng& rng) {
    const Shape in = nd == 2 ? Shape{1, 2, 2, 2} : Shape{1, 2, 2, 2, 2};
    const Shape outs(static_cast<size_t>(nd), 4);
    auto index = [&](int64_t v, tsr_dtype d = TSR_DTYPE_INT64, Shape shape = {}) {
      return Arg::Tensor(Full(shape.empty() ? in : shape, d, v));
    };
    auto call = [&](Arg self, Arg idx, Shape o, Shape stride = {2, 2, 2}) {
      std::vector<Arg> a{std::move(self), std::move(idx), Arg::Ints(std::move(o))};
      if (nd == 3) {
        a.push_back(Arg::Ints(std::move(stride)));
        a.push_back(Arg::Ints({0, 0, 0}));
      }
      return a;
    };
    auto x = [&](const Shape& shape, tsr_dtype d = TSR_DTYPE_FLOAT32) {
      return Arg::Tensor(MakeTensor(shape, d, rng));
    };
    const int64_t plane = nd == 2 ? 16 : 64;
    const std::string volume = nd == 2 ? "4x4" : "4x4x4";
    std::vector<ErrorInput> e;
    e.push_back(RefusedSaying(call(x(in), index(1, TSR_DTYPE_INT32), outs), TSR_INVALID_ARGUMENT,
                              "elements in indices should be type int64"));
    e.push_back(Saying(Refused(call(x(in), index(plane), outs), TSR_INVALID_ARGUMENT,
                               "Found an invalid max index (past the plane)"),
                       "Found an invalid max index: " + std::to_string(plane) +
                           " (output volumes are of size " + volume + ")"));
    e.push_back(
        Saying(Refused(call(x(in), index(-1), outs), TSR_INVALID_ARGUMENT,
                       "Found an invalid max index (negative)"),
               "Found an invalid max index: -1 (output volumes are of size " + volume + ")"));
    Shape short_outs(static_cast<size_t>(nd - 1), 4);
    e.push_back(Saying(Refused(call(x(in), index(1), short_outs), TSR_INVALID_ARGUMENT,
                               "an output_size one too short"),
                       nd == 2 ? "There should be exactly two elements (height, width) in "
                                 "output_size, but got 1 elements."
                               : "There should be exactly three elements (depth, height, width) "
                                 "in output_size, but got 2 elements."));
    const Shape low(in.begin() + 2, in.end());
    e.push_back(Saying(Refused(call(x(low), index(1, TSR_DTYPE_INT64, low), outs),
                               TSR_INVALID_ARGUMENT, "an input of too few dims"),
                       nd == 2 ? "Input to max_unpooling2d should be a 3d or 4d Tensor, but got a "
                                 "tensor with 2 dimensions."
                               : "Input to max_unpooling3d should be a 4d or 5d Tensor, but got a "
                                 "tensor with 3 dimensions."));
    Shape other = in;
    other.back() = 1;
    e.push_back(Saying(Refused(call(x(in), index(1, TSR_DTYPE_INT64, other), outs),
                               TSR_INVALID_ARGUMENT, "indices of another shape than self"),
                       "Expected shape of indices to be same as that of the input tensor (" +
                           ShapeString(in) +
                           ") but got indices tensor with shape: " + ShapeString(other)));
    Shape empty_channel = in;
    empty_channel[1] = 0;
    e.push_back(
        Saying(Refused(call(x(empty_channel), index(1, TSR_DTYPE_INT64, empty_channel), outs),
                       TSR_INVALID_ARGUMENT, "an empty non-batch dim"),
               "Expected input to have non-zero size for non-batch dimensions, but got " +
                   ShapeString(empty_channel) + " with dimension 1 being empty."));
    e.push_back(Saying(
        Refused(call(x(in, TSR_DTYPE_INT64), index(1), outs), TSR_UNIMPLEMENTED, "an int64 self"),
        "not implemented for dtype int64"));
    if (nd == 3) {
      e.push_back(RefusedSaying(call(x(in), index(1), outs, {0, 2, 2}), TSR_INVALID_ARGUMENT,
                                "strides should be greater than zero"));
      e.push_back(Saying(Refused(call(x(in), index(1), outs, {2, 2}), TSR_INVALID_ARGUMENT,
                                 "a stride of two values"),
                         "There should be exactly three elements (depth, height, width) in "
                         "stride, but got: 2 elements."));
    }
    return e;
  };
  return op;
}

}  // namespace

void AddPoolingOps(std::vector<OpInfo>& db) {
  db.push_back(WindowOp(1, /*max=*/false, false));
  db.push_back(WindowOp(3, /*max=*/false, false));
  db.push_back(WindowOp(1, /*max=*/true, false));
  db.push_back(WindowOp(1, /*max=*/true, true));
  db.push_back(WindowOp(3, /*max=*/true, false));
  db.push_back(WindowOp(3, /*max=*/true, true));
  for (int nd : {1, 2, 3}) {
    db.push_back(AdaptiveOp(nd, /*max=*/false, false));
    if (nd != 1) db.push_back(AdaptiveOp(nd, /*max=*/false, /*kernel=*/true));
    db.push_back(AdaptiveOp(nd, /*max=*/true, false));
  }
  db.push_back(UnpoolOp(2));
  db.push_back(UnpoolOp(3));
}

}  // namespace conformance
}  // namespace tessera

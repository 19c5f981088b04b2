// The backward ops of convolution, pooling and embedding (op set 1.4, family "training"):
// convolution_backward, max_pool2d_with_indices_backward, avg_pool2d_backward and
// embedding_dense_backward with their out= forms. References in long double, loop by loop, from
// each forward's own definition rather than from the composites' formulas (which are
// convolutions and scatters): the convolution's (input element, tap, output element) triples
// (conv_reference.h) give grad_input += w * g, grad_weight += x * g; a max pooling's gradient
// goes to the element its index names; an average pooling's to every element of its window,
// divided by PyTorch's divisor (avg_pool2d_backward_out_frame); an embedding's to the row its
// index names. The gradient oracle (op_db_gradients.cc) checks them against the forward ops.
//
// Samples follow PyTorch's OpInfo entries for the forward ops (sample_inputs_conv*,
// sample_inputs_max_pool, sample_inputs_avgpool2d, sample_inputs_embedding), whose gradients are
// what OpInfo checks: strides past the kernel, padding, dilation, groups (depthwise too),
// transposed with output_padding, 1-D and 3-D, empty batches; overlapping windows, ceil_mode,
// unbatched inputs, divisor_override; repeated indices, padding_idx, scale_grad_by_freq.
#include <algorithm>
#include <cmath>

#include "conformance/conv_reference.h"
#include "conformance/op_db.h"

namespace tessera {
namespace conformance {
namespace {

const std::vector<bool> kAllGradients{true, true, true};

HostTensor Random(std::vector<int64_t> shape, tsr_dtype dtype, Rng& rng) {
  MakeOptions range;
  range.low = -2;
  range.high = 2;
  return MakeTensor(std::move(shape), dtype, rng, range);
}

HostTensor Int64(std::vector<int64_t> shape, std::vector<double> values) {
  HostTensor t;
  t.dtype = TSR_DTYPE_INT64;
  t.shape = std::move(shape);
  t.values = std::move(values);
  return t;
}

// ---- convolution_backward ----

struct ConvBackwardCase {
  std::vector<int64_t> in, w, stride, padding, dilation;
  bool transposed;
  std::vector<int64_t> output_padding;
  int64_t groups;
  std::string note;
};

std::vector<ConvBackwardCase> ConvBackwardCases() {
  return {
      {{1, 3, 5}, {2, 3, 3}, {1}, {0}, {1}, false, {0}, 1, "1-D"},
      {{2, 4, 7},
       {4, 2, 3},
       {2},
       {1},
       {2},
       false,
       {0},
       2,
       "1-D, stride, padding, dilation, groups"},
      {{1, 3, 5, 5}, {4, 3, 3, 3}, {1}, {1}, {1}, false, {0}, 1, "3x3 same size"},
      {{2, 2, 7, 6}, {3, 2, 2, 3}, {2, 3}, {1, 0}, {1, 2}, false, {0}, 1, "per-dim arguments"},
      {{1, 4, 5, 5}, {4, 1, 3, 3}, {2}, {1}, {1}, false, {0}, 4, "depthwise"},
      {{1, 2, 6, 6}, {2, 2, 2, 2}, {3}, {0}, {1}, false, {0}, 1, "stride past the kernel"},
      {{2, 3, 4, 4}, {5, 3, 1, 1}, {1}, {0}, {1}, false, {0}, 1, "1x1"},
      {{2, 3, 4, 4}, {3, 2, 3, 3}, {2}, {1}, {1}, true, {1}, 1, "transposed, output_padding"},
      {{1, 4, 3, 3},
       {4, 1, 2, 2},
       {1},
       {0},
       {2},
       true,
       {1},
       2,
       "transposed, groups, output_padding below the dilation"},
      {{1, 2, 3, 3, 3}, {2, 2, 2, 2, 2}, {1}, {0}, {1}, false, {0}, 1, "3-D"},
      {{0, 3, 5, 5}, {2, 3, 3, 3}, {1}, {0}, {1}, false, {0}, 1, "empty batch"},
  };
}

ConvArgs ConvOf(const Sample& s) {
  ConvArgs a;
  a.x = &s.args[1].tensor;
  a.w = &s.args[2].tensor;
  a.bias = nullptr;
  a.stride = s.args[4].ints;
  a.padding = s.args[5].ints;
  a.dilation = s.args[6].ints;
  a.transposed = s.args[7].boolean;
  a.output_padding = s.args[8].ints;
  a.groups = s.args[9].integer;
  return a;
}

void AddConvolutionBackward(std::vector<OpInfo>& db) {
  OpInfo op;
  op.name = "convolution_backward";
  op.out = "convolution_backward.out";
  op.dtypes = kFloatingMask;
  op.tolerance_scale = 4;  // the weight's gradient sums over the batch and every position
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> samples;
    for (const ConvBackwardCase& c : ConvBackwardCases()) {
      Sample s;
      s.args = {Arg::None(), Arg::Tensor(Random(c.in, dtype, rng)),
                Arg::Tensor(Random(c.w, dtype, rng))};
      const Sample forward{{Arg::None(), s.args[1], s.args[2], Arg::None(), Arg::Ints(c.stride),
                            Arg::Ints(c.padding), Arg::Ints(c.dilation), Arg::Bool(c.transposed),
                            Arg::Ints(c.output_padding), Arg::Int(c.groups)},
                           ""};
      const std::vector<int64_t> out = ConvOutputShape(ConvOf(forward));
      s.args[0] = Arg::Tensor(Random(out, dtype, rng));
      s.args.push_back(Arg::Ints({out[1]}));
      for (const std::vector<int64_t>* v : {&c.stride, &c.padding, &c.dilation}) {
        s.args.push_back(Arg::Ints(*v));
      }
      s.args.push_back(Arg::Bool(c.transposed));
      s.args.push_back(Arg::Ints(c.output_padding));
      s.args.push_back(Arg::Int(c.groups));
      s.args.push_back(Arg::Bools(kAllGradients));
      s.desc = ShapeString(c.in) + (c.transposed ? " *T " : " * ") + ShapeString(c.w) + " (" +
               c.note + ")";
      samples.push_back(std::move(s));
    }
    return samples;
  };
  op.reference = [](const Sample& s) {
    const ConvArgs a = ConvOf(s);
    const HostTensor& g = s.args[0].tensor;
    std::vector<long double> dx(a.x->values.size(), 0), dw(a.w->values.size(), 0);
    ForEachConvTerm(a, [&](int64_t xi, int64_t wi, int64_t yi) {
      dx[xi] += static_cast<long double>(a.w->values[wi]) * g.values[yi];
      dw[wi] += static_cast<long double>(a.x->values[xi]) * g.values[yi];
    });
    const int64_t O = g.shape[1], per = g.shape[0] == 0 || O == 0 ? 0 : g.numel() / g.shape[0] / O;
    std::vector<long double> db(static_cast<size_t>(O), 0);
    for (int64_t i = 0; i < g.numel(); ++i) db[(i / per) % O] += g.values[i];
    return std::vector<HostTensor>{FromLong(a.x->shape, a.x->dtype, dx),
                                   FromLong(a.w->shape, a.x->dtype, dw),
                                   FromLong({O}, a.x->dtype, db)};
  };
  op.errors = [](Rng& rng) {
    auto f = [&rng](std::vector<int64_t> shape) {
      return Arg::Tensor(MakeTensor(std::move(shape), TSR_DTYPE_FLOAT32, rng));
    };
    auto args = [&](Arg g, Arg x, Arg w, std::vector<int64_t> bias) {
      return std::vector<Arg>{g,
                              x,
                              w,
                              Arg::Ints(std::move(bias)),
                              Arg::Ints({1}),
                              Arg::Ints({0}),
                              Arg::Ints({1}),
                              Arg::Bool(false),
                              Arg::Ints({0}),
                              Arg::Int(1),
                              Arg::Bools(kAllGradients)};
    };
    return std::vector<ErrorInput>{
        {{args(f({1, 2, 4, 4}), f({1, 3, 5, 5}), f({2, 3, 3, 3}), {2}),
          "grad_output [1, 2, 4, 4] for an output [1, 2, 3, 3]"},
         TSR_INVALID_ARGUMENT,
         "a grad_output of another shape than the forward's output",
         "expected grad_output of shape [1, 2, 3, 3] (the convolution's output), got [1, 2, 4, 4]"},
        {{args(f({1, 2, 3, 3}), f({1, 4, 5, 5}), f({2, 3, 3, 3}), {2}),
          "input of 4 channels, weight of 3"},
         TSR_INVALID_ARGUMENT,
         "arguments the forward refuses (its message)",
         "to have 3 channels (weight [2, 3, 3, 3], groups 1), but got 4 channels instead"},
        {{args(f({1, 2, 3, 3}), f({1, 3, 5, 5}), f({2, 3, 3, 3}), {3}), "bias_sizes [3], 2 out"},
         TSR_INVALID_ARGUMENT,
         "bias_sizes that are not the output's channels",
         "expected bias_sizes [2] (the output's channels), got [3]"},
        {{args(Arg::Tensor(MakeTensor({1, 2, 3, 3}, TSR_DTYPE_FLOAT64, rng)), f({1, 3, 5, 5}),
               f({2, 3, 3, 3}), {2}),
          "float64 grad_output, float32 input"},
         TSR_INVALID_ARGUMENT,
         "a grad_output of another dtype than the input's",
         "expected grad_output of dtype float32, got float64"}};
  };
  db.push_back(std::move(op));
}

// ---- pooling ----

struct PoolCase {
  std::vector<int64_t> in, kernel, stride, padding, dilation;
  bool ceil_mode;
  std::string note;
};

// The pooled size along one dim (PyTorch's pooling_output_shape).
int64_t Pooled(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  const int64_t span = in + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
  int64_t out = span / s + 1;  // span >= 0 for the cases here
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

struct PoolGeometry {
  int64_t planes, h, w, oh, ow;
  std::array<int64_t, 2> k, s, p, d;
};

PoolGeometry GeometryOf(const std::vector<int64_t>& in, const std::vector<int64_t>& kernel,
                        const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                        const std::vector<int64_t>& dilation, bool ceil_mode) {
  PoolGeometry g;
  g.planes = 1;
  for (size_t i = 0; i + 2 < in.size(); ++i) g.planes *= in[i];
  g.h = in[in.size() - 2];
  g.w = in.back();
  for (size_t i = 0; i < 2; ++i) {
    g.k[i] = PerDim(kernel, i);
    g.s[i] = stride.empty() ? g.k[i] : PerDim(stride, i);
    g.p[i] = PerDim(padding, i);
    g.d[i] = dilation.empty() ? 1 : PerDim(dilation, i);
  }
  g.oh = Pooled(g.h, g.k[0], g.s[0], g.p[0], g.d[0], ceil_mode);
  g.ow = Pooled(g.w, g.k[1], g.s[1], g.p[1], g.d[1], ceil_mode);
  return g;
}

std::vector<int64_t> PooledShape(const std::vector<int64_t>& in, const PoolGeometry& g) {
  std::vector<int64_t> out(in.begin(), in.end() - 2);
  out.push_back(g.oh);
  out.push_back(g.ow);
  return out;
}

// MaxIndices: the forward's indices for `x` (the flat position in the plane of each window's
// maximum, the first of equal ones, NaN winning; -1 for a window with no input element), as
// max_pool2d_with_indices returns them.
HostTensor MaxIndices(const HostTensor& x, const PoolGeometry& g) {
  std::vector<double> idx;
  for (int64_t n = 0; n < g.planes; ++n)
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        int64_t best = -1;
        double best_v = 0;
        for (int64_t ky = 0; ky < g.k[0]; ++ky)
          for (int64_t kx = 0; kx < g.k[1]; ++kx) {
            const int64_t y = oy * g.s[0] - g.p[0] + ky * g.d[0];
            const int64_t xx = ox * g.s[1] - g.p[1] + kx * g.d[1];
            if (y < 0 || y >= g.h || xx < 0 || xx >= g.w) continue;
            const double v = x.values[(n * g.h + y) * g.w + xx];
            if (best < 0 || v > best_v || std::isnan(v)) {
              best = y * g.w + xx;
              best_v = v;
            }
          }
        idx.push_back(static_cast<double>(best));
      }
  std::vector<int64_t> shape = x.shape;
  shape[shape.size() - 2] = g.oh;
  shape.back() = g.ow;
  return Int64(shape, idx);
}

void AddMaxPoolBackward(std::vector<OpInfo>& db) {
  OpInfo op;
  op.name = "max_pool2d_with_indices_backward";
  op.out = "max_pool2d_with_indices_backward.grad_input";
  op.dtypes = kFloatingMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    const std::vector<PoolCase> cases{
        {{1, 2, 4, 4}, {2}, {2}, {0}, {1}, false, "2x2, stride 2"},
        {{2, 3, 6, 7}, {3}, {2}, {1}, {1}, true, "overlapping, padding, ceil_mode"},
        {{3, 5, 5}, {3, 2}, {1}, {1, 0}, {1}, false, "unbatched, stride 1, per-dim"},
        {{1, 1, 7, 7}, {2}, {1}, {0}, {2}, false, "dilation 2"},
        {{0, 2, 4, 4}, {2}, {}, {0}, {1}, false, "empty batch, stride = kernel"},
        {{1, 2, 3, 1}, {2}, {1}, {1}, {2}, false, "windows in the padding alone: index -1"},
    };
    std::vector<Sample> samples;
    for (const PoolCase& c : cases) {
      const PoolGeometry g =
          GeometryOf(c.in, c.kernel, c.stride, c.padding, c.dilation, c.ceil_mode);
      const HostTensor x = Random(c.in, dtype, rng);
      samples.push_back(
          {{Arg::Tensor(Random(PooledShape(c.in, g), dtype, rng)), Arg::Tensor(x),
            Arg::Ints(c.kernel), Arg::Ints(c.stride), Arg::Ints(c.padding), Arg::Ints(c.dilation),
            Arg::Bool(c.ceil_mode), Arg::Tensor(MaxIndices(x, g))},
           ShapeString(c.in) + " (" + c.note + ")"});
    }
    return samples;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& g = s.args[0].tensor;
    const HostTensor& x = s.args[1].tensor;
    const HostTensor& idx = s.args[7].tensor;
    const int64_t plane = x.shape[x.dim() - 2] * x.shape.back();
    const int64_t pooled = g.shape[g.dim() - 2] * g.shape.back();
    std::vector<long double> dx(x.values.size(), 0);
    for (int64_t i = 0; i < g.numel(); ++i) {
      if (idx.values[i] == -1) continue;  // a window with no input element: no gradient
      dx[(i / pooled) * plane + static_cast<int64_t>(idx.values[i])] += g.values[i];
    }
    return std::vector<HostTensor>{FromLong(x.shape, x.dtype, dx)};
  };
  op.errors = [](Rng& rng) {
    auto f = [&rng](std::vector<int64_t> shape) {
      return Arg::Tensor(MakeTensor(std::move(shape), TSR_DTYPE_FLOAT32, rng));
    };
    auto args = [&](Arg g, Arg indices) {
      return std::vector<Arg>{g,
                              f({1, 1, 4, 4}),
                              Arg::Ints({2}),
                              Arg::Ints({2}),
                              Arg::Ints({0}),
                              Arg::Ints({1}),
                              Arg::Bool(false),
                              indices};
    };
    return std::vector<ErrorInput>{
        {{args(f({1, 1, 3, 3}), Arg::Tensor(Int64({1, 1, 3, 3}, std::vector<double>(9, 0)))),
          "grad_output [1, 1, 3, 3] for an output [1, 1, 2, 2]"},
         TSR_INVALID_ARGUMENT,
         "a grad_output of another shape than the forward's output",
         "expected grad_output of shape [1, 1, 2, 2] (the pooling's output), got [1, 1, 3, 3]"},
        {{args(f({1, 1, 2, 2}), f({1, 1, 2, 2})), "float32 indices"},
         TSR_INVALID_ARGUMENT,
         "indices that are not int64",
         "expected indices of dtype int64, got float32"},
        {{args(f({1, 1, 2, 2}), Arg::Tensor(Int64({1, 1, 2, 2}, {0, 3, 16, 5}))),
          "index 16 in a 4 x 4 plane"},
         TSR_INVALID_ARGUMENT,
         "an index outside the input's plane",
         "expected indices into the input's 4 x 4 plane (or -1)"}};
  };
  db.push_back(std::move(op));
}

void AddAvgPoolBackward(std::vector<OpInfo>& db) {
  OpInfo op;
  op.name = "avg_pool2d_backward";
  op.out = "avg_pool2d_backward.grad_input";
  op.dtypes = kFloatingMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    struct C {
      PoolCase pool;
      bool count_include_pad;
      std::optional<int64_t> divisor;
    };
    const std::vector<C> cases{
        {{{1, 2, 5, 5}, {3}, {2}, {1}, {}, false, "padding, counted"}, true, std::nullopt},
        {{{1, 2, 5, 5}, {3}, {2}, {1}, {}, false, "padding, not counted"}, false, std::nullopt},
        {{{2, 1, 6, 6}, {3}, {2}, {1}, {}, true, "ceil_mode"}, true, std::nullopt},
        {{{2, 1, 6, 6}, {3}, {2}, {1}, {}, true, "ceil_mode, not counted"}, false, std::nullopt},
        {{{3, 4, 5}, {2, 3}, {1}, {0, 1}, {}, false, "unbatched, overlapping"}, true, std::nullopt},
        {{{1, 2, 4, 4}, {2}, {}, {0}, {}, false, "divisor_override"}, true, 3},
        {{{1, 1, 7, 5}, {2}, {3}, {0}, {}, false, "stride past the kernel"}, true, std::nullopt},
        {{{0, 2, 4, 4}, {2}, {2}, {0}, {}, false, "empty batch"}, true, std::nullopt},
    };
    std::vector<Sample> samples;
    for (const C& c : cases) {
      const PoolCase& p = c.pool;
      const PoolGeometry g = GeometryOf(p.in, p.kernel, p.stride, p.padding, {}, p.ceil_mode);
      samples.push_back(
          {{Arg::Tensor(Random(PooledShape(p.in, g), dtype, rng)),
            Arg::Tensor(Random(p.in, dtype, rng)), Arg::Ints(p.kernel), Arg::Ints(p.stride),
            Arg::Ints(p.padding), Arg::Bool(p.ceil_mode), Arg::Bool(c.count_include_pad),
            c.divisor ? Arg::Int(*c.divisor) : Arg::None()},
           ShapeString(p.in) + " (" + p.note + ")"});
    }
    return samples;
  };
  // PyTorch's avg_pool2d_backward_out_frame: each window's gradient over its divisor, added to
  // every input element of the window.
  op.reference = [](const Sample& s) {
    const HostTensor& grad = s.args[0].tensor;
    const HostTensor& x = s.args[1].tensor;
    const PoolGeometry g =
        GeometryOf(x.shape, s.args[2].ints, s.args[3].ints, s.args[4].ints, {}, s.args[5].boolean);
    const bool count_include_pad = s.args[6].boolean;
    const bool override = s.args[7].kind == Arg::Kind::kInt;
    std::vector<long double> dx(x.values.size(), 0);
    for (int64_t n = 0; n < g.planes; ++n)
      for (int64_t oy = 0; oy < g.oh; ++oy)
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          int64_t y0 = oy * g.s[0] - g.p[0], x0 = ox * g.s[1] - g.p[1];
          int64_t y1 = std::min(y0 + g.k[0], g.h + g.p[0]),
                  x1 = std::min(x0 + g.k[1], g.w + g.p[1]);
          const int64_t pool_size = (y1 - y0) * (x1 - x0);
          y0 = std::max<int64_t>(y0, 0);
          x0 = std::max<int64_t>(x0, 0);
          y1 = std::min(y1, g.h);
          x1 = std::min(x1, g.w);
          const int64_t divisor = override            ? s.args[7].integer
                                  : count_include_pad ? pool_size
                                                      : (y1 - y0) * (x1 - x0);
          const long double share =
              static_cast<long double>(grad.values[(n * g.oh + oy) * g.ow + ox]) / divisor;
          for (int64_t y = y0; y < y1; ++y)
            for (int64_t xx = x0; xx < x1; ++xx) dx[(n * g.h + y) * g.w + xx] += share;
        }
    return std::vector<HostTensor>{FromLong(x.shape, x.dtype, dx)};
  };
  op.errors = [](Rng& rng) {
    auto f = [&rng](std::vector<int64_t> shape) {
      return Arg::Tensor(MakeTensor(std::move(shape), TSR_DTYPE_FLOAT32, rng));
    };
    auto args = [&](Arg g, Arg divisor) {
      return std::vector<Arg>{g,
                              f({1, 1, 4, 4}),
                              Arg::Ints({2}),
                              Arg::Ints({2}),
                              Arg::Ints({0}),
                              Arg::Bool(false),
                              Arg::Bool(true),
                              divisor};
    };
    return std::vector<ErrorInput>{
        {{args(f({1, 1, 3, 3}), Arg::None()),
          "grad_output [1, 1, 3, 3] for an output [1, 1, 2, 2]"},
         TSR_INVALID_ARGUMENT,
         "a grad_output of another shape than the forward's output",
         "expected grad_output of shape [1, 1, 2, 2] (the pooling's output), got [1, 1, 3, 3]"},
        {{args(f({1, 1, 2, 2}), Arg::Int(0)), "divisor_override 0"},
         TSR_INVALID_ARGUMENT,
         "arguments the forward refuses (its message)",
         "divisor must be not zero"}};
  };
  db.push_back(std::move(op));
}

// ---- embedding_dense_backward ----

void AddEmbeddingBackward(std::vector<OpInfo>& db) {
  OpInfo op;
  op.name = "embedding_dense_backward";
  op.out = "embedding_dense_backward.out";
  op.dtypes = kFloatingMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    struct C {
      std::vector<int64_t> indices_shape;
      std::vector<double> indices;
      tsr_dtype index_dtype;
      int64_t num_weights, padding_idx;
      bool scale;
      std::string note;
    };
    const std::vector<C> cases{
        {{4}, {0, 2, 4, 1}, TSR_DTYPE_INT64, 5, -1, false, "distinct indices"},
        {{2, 3}, {1, 3, 1, 0, 3, 1}, TSR_DTYPE_INT64, 4, -1, false, "repeated indices, 2-D"},
        {{2, 3}, {1, 3, 1, 0, 3, 1}, TSR_DTYPE_INT64, 4, 1, false, "padding_idx"},
        {{2, 3}, {1, 3, 1, 0, 3, 1}, TSR_DTYPE_INT64, 4, -1, true, "scale_grad_by_freq"},
        {{2, 3}, {1, 3, 1, 0, 3, 1}, TSR_DTYPE_INT64, 4, 3, true, "both"},
        {{5}, {2, 0, 2, 2, 1}, TSR_DTYPE_INT32, 3, -1, false, "int32 indices"},
        {{0}, {}, TSR_DTYPE_INT64, 3, -1, false, "no indices"},
    };
    std::vector<Sample> samples;
    for (const C& c : cases) {
      HostTensor idx = Int64(c.indices_shape, c.indices);
      idx.dtype = c.index_dtype;
      std::vector<int64_t> grad_shape = c.indices_shape;
      grad_shape.push_back(3);
      samples.push_back({{Arg::Tensor(Random(grad_shape, dtype, rng)), Arg::Tensor(idx),
                          Arg::Int(c.num_weights), Arg::Int(c.padding_idx), Arg::Bool(c.scale)},
                         c.note});
    }
    return samples;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& g = s.args[0].tensor;
    const HostTensor& idx = s.args[1].tensor;
    const int64_t num = s.args[2].integer, padding_idx = s.args[3].integer;
    const bool scale = s.args[4].boolean;
    const int64_t dim = g.shape.back();
    std::vector<int64_t> counts(static_cast<size_t>(num), 0);
    for (double i : idx.values) ++counts[static_cast<size_t>(i)];
    std::vector<long double> dw(static_cast<size_t>(num * dim), 0);
    for (int64_t r = 0; r < idx.numel(); ++r) {
      const int64_t row = static_cast<int64_t>(idx.values[r]);
      if (row == padding_idx) continue;
      for (int64_t j = 0; j < dim; ++j) {
        const long double v = g.values[r * dim + j];
        dw[row * dim + j] += scale ? v / counts[row] : v;
      }
    }
    return std::vector<HostTensor>{FromLong({num, dim}, g.dtype, dw)};
  };
  op.errors = [](Rng& rng) {
    auto f = [&rng](std::vector<int64_t> shape) {
      return Arg::Tensor(MakeTensor(std::move(shape), TSR_DTYPE_FLOAT32, rng));
    };
    auto args = [](Arg g, Arg indices) {
      return std::vector<Arg>{g, indices, Arg::Int(4), Arg::Int(-1), Arg::Bool(false)};
    };
    return std::vector<ErrorInput>{
        {{args(f({3, 2}), f({3})), "float32 indices"},
         TSR_INVALID_ARGUMENT,
         "indices that are not int64 or int32",
         "expected indices of dtype int64 or int32, got float32"},
        {{args(f({2, 2}), Arg::Tensor(Int64({3}, {0, 1, 2}))), "grad_output [2, 2], indices [3]"},
         TSR_INVALID_ARGUMENT,
         "a grad_output whose leading shape is not the indices'",
         "expected grad_output of shape [3] + [embedding_dim]"},
        {{args(f({3, 2}), Arg::Tensor(Int64({3}, {0, 4, 1}))), "index 4 of 4 rows"},
         TSR_INVALID_ARGUMENT,
         "an index outside [0, num_weights)",
         "expected indices in [0, num_weights = 4)"}};
  };
  db.push_back(std::move(op));
}

}  // namespace

void AddNNBackwardOps(std::vector<OpInfo>& db) {
  AddConvolutionBackward(db);
  AddMaxPoolBackward(db);
  AddAvgPoolBackward(db);
  AddEmbeddingBackward(db);
}

}  // namespace conformance
}  // namespace tessera

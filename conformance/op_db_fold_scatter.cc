// Op set 1.9's fold ops and scatter variants (composites, dispatcher/ops/fold_scatter_ops.cc):
// im2col and col2im (nn.functional.unfold and fold), scatter_reduce.two and
// as_strided_scatter, after ATen's Im2Col.cpp, Col2Im.cpp, im2col_shape_check.h,
// TensorAdvancedIndexing.cpp, ScatterGatherKernel.cpp and TensorShape.cpp, with samples after
// their OpInfos. The references index every element directly.
//
// Error codes: PyTorch's RuntimeError is TSR_INVALID_ARGUMENT; a dtype a kernel has no loop for
// ("... not implemented for 'Long'") is TSR_UNIMPLEMENTED.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"

namespace tessera {
namespace conformance {
namespace {

using Shape = std::vector<int64_t>;

// The window of a fold sample: (height, width) pairs.
struct Window {
  int64_t kh, kw, dh, dw, ph, pw, sh, sw;
};

Window WindowOf(const Sample& s, size_t first) {
  const auto& k = s.args[first].ints;
  const auto& d = s.args[first + 1].ints;
  const auto& p = s.args[first + 2].ints;
  const auto& st = s.args[first + 3].ints;
  return {k[0], k[1], d[0], d[1], p[0], p[1], st[0], st[1]};
}

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t Blocks(int64_t size, int64_t pad, int64_t dilation, int64_t kernel, int64_t stride) {
  return FloorDiv(size + 2 * pad - (dilation * (kernel - 1) + 1), stride) + 1;
}

std::vector<Arg> WindowArgs(const Window& w) {
  return {Arg::Ints({w.kh, w.kw}), Arg::Ints({w.dh, w.dw}), Arg::Ints({w.ph, w.pw}),
          Arg::Ints({w.sh, w.sw})};
}

// The windows the samples use: nn.functional.unfold's OpInfo crosses kernel 2, (2, 2), (2, 3),
// dilation 1, 2, (1, 2), padding 0, 1, (1, 2) and stride 1, 2, (1, 2); a spread of those.
const std::vector<Window>& Windows() {
  static const std::vector<Window> w{
      {2, 2, 1, 1, 0, 0, 1, 1}, {2, 3, 1, 1, 0, 0, 1, 1}, {2, 2, 2, 2, 1, 1, 1, 1},
      {2, 3, 1, 2, 1, 2, 1, 2}, {2, 2, 1, 1, 1, 1, 2, 2}, {2, 3, 2, 2, 1, 2, 2, 2},
      {1, 1, 1, 1, 0, 0, 1, 1}, {3, 3, 1, 1, 1, 1, 3, 3},
  };
  return w;
}

// ---- im2col ----

HostTensor Im2colReference(const HostTensor& x, const Window& w) {
  const bool batched = x.dim() == 4;
  const int64_t n = batched ? x.shape[0] : 1;
  const int64_t c = x.shape[batched ? 1 : 0], h = x.shape[batched ? 2 : 1],
                wd = x.shape[batched ? 3 : 2];
  const int64_t bh = Blocks(h, w.ph, w.dh, w.kh, w.sh), bw = Blocks(wd, w.pw, w.dw, w.kw, w.sw);
  HostTensor out;
  out.dtype = x.dtype;
  out.shape = batched ? Shape{n, c * w.kh * w.kw, bh * bw} : Shape{c * w.kh * w.kw, bh * bw};
  out.values.assign(static_cast<size_t>(out.numel()), 0.0);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t i = 0; i < w.kh; ++i) {
        for (int64_t j = 0; j < w.kw; ++j) {
          const int64_t row = (ch * w.kh + i) * w.kw + j;
          for (int64_t y = 0; y < bh; ++y) {
            for (int64_t z = 0; z < bw; ++z) {
              const int64_t iy = y * w.sh - w.ph + i * w.dh, ix = z * w.sw - w.pw + j * w.dw;
              double v = 0;
              if (iy >= 0 && iy < h && ix >= 0 && ix < wd) {
                v = x.values[((b * c + ch) * h + iy) * wd + ix];
              }
              out.values[(b * c * w.kh * w.kw + row) * bh * bw + y * bw + z] = v;
            }
          }
        }
      }
    }
  }
  return out;
}

void AddIm2col(std::vector<OpInfo>& db) {
  OpInfo op;
  op.name = "im2col";
  op.out = "im2col.out";
  op.dtypes = kFloatingMask | Bit(TSR_DTYPE_BOOL);
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    const std::vector<Shape> shapes{{2, 3, 5, 5}, {0, 1, 5, 5}, {3, 5, 5}, {1, 2, 4, 7}};
    for (size_t k = 0; k < Windows().size(); ++k) {
      const Window& w = Windows()[k];
      const Shape& shape = shapes[k % shapes.size()];
      std::vector<Arg> args{Arg::Tensor(MakeTensor(shape, dtype, rng))};
      for (Arg& a : WindowArgs(w)) args.push_back(std::move(a));
      s.push_back(Described(std::move(args)));
    }
    // The OpInfo's sample with default arguments: kernel (2, 3) over [1, 3, 5, 5].
    std::vector<Arg> args{Arg::Tensor(MakeTensor({1, 3, 5, 5}, dtype, rng))};
    for (Arg& a : WindowArgs({2, 3, 1, 1, 0, 0, 1, 1})) args.push_back(std::move(a));
    s.push_back(Described(std::move(args), " (nn.functional.unfold's defaults)"));
    return s;
  };
  op.reference = [](const Sample& s) {
    return std::vector<HostTensor>{Im2colReference(s.args[0].tensor, WindowOf(s, 1))};
  };
  op.errors = [](Rng& rng) {
    auto call = [&](Shape shape, std::vector<Arg> window, tsr_dtype dtype = TSR_DTYPE_FLOAT32) {
      std::vector<Arg> args{Arg::Tensor(MakeTensor(std::move(shape), dtype, rng))};
      for (Arg& a : window) args.push_back(std::move(a));
      return args;
    };
    const auto win = [](Window w) { return WindowArgs(w); };
    std::vector<Arg> one_kernel = win({2, 2, 1, 1, 0, 0, 1, 1});
    one_kernel[0] = Arg::Ints({2});
    return std::vector<ErrorInput>{
        RefusedSaying(call({1, 2, 5, 5}, one_kernel), TSR_INVALID_ARGUMENT,
                      "It is expected kernel_size equals to 2, but got size 1"),
        RefusedSaying(
            call({1, 2, 5, 5}, win({0, 2, 1, 1, 0, 0, 1, 1})), TSR_INVALID_ARGUMENT,
            "kernel size should be greater than zero, but got kernel_height: 0 kernel_width: "
            "2"),
        RefusedSaying(call({1, 2, 5, 5}, win({2, 2, 1, 0, 0, 0, 1, 1})), TSR_INVALID_ARGUMENT,
                      "dilation should be greater than zero, but got dilation_height: 1 "
                      "dilation_width: 0"),
        RefusedSaying(call({1, 2, 5, 5}, win({2, 2, 1, 1, -1, 0, 1, 1})), TSR_INVALID_ARGUMENT,
                      "padding should be non-negative, but got pad_height: -1 pad_width: 0"),
        RefusedSaying(
            call({1, 2, 5, 5}, win({2, 2, 1, 1, 0, 0, 0, 1})), TSR_INVALID_ARGUMENT,
            "stride should be greater than zero, but got stride_height: 0 stride_width: 1"),
        // ATen reads input.size(2) before it checks the rank: IndexError.
        RefusedSaying(call({5, 5}, win({2, 2, 1, 1, 0, 0, 1, 1})), TSR_OUT_OF_RANGE,
                      "ension out of range (expected to be in range of [-2, 1], but got 2)"),
        RefusedSaying(call({1, 2, 3, 5, 5}, win({2, 2, 1, 1, 0, 0, 1, 1})), TSR_INVALID_ARGUMENT,
                      "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other "
                      "non-zero dimensions for input, but got: [1, 2, 3, 5, 5]"),
        RefusedSaying(call({1, 0, 5, 5}, win({2, 2, 1, 1, 0, 0, 1, 1})), TSR_INVALID_ARGUMENT,
                      "other non-zero dimensions for input, but got: [1, 0, 5, 5]"),
        RefusedSaying(
            call({1, 2, 3, 3}, win({2, 4, 1, 1, 0, 0, 1, 1})), TSR_INVALID_ARGUMENT,
            "Given input with spatial size (3, 3), kernel_size=(2, 4), dilation=(1, 1), "
            "padding=(0, 0), calculated shape of the array of sliding blocks as (2, 0), but "
            "its components must be at least one."),
        Saying(Refused(call({1, 2, 5, 5}, win({2, 2, 1, 1, 0, 0, 1, 1}), TSR_DTYPE_INT64),
                       TSR_UNIMPLEMENTED, "\"im2col_out_cpu\" not implemented for 'Long'"),
               "\"im2col_out_cpu\" not implemented for 'int64'"),
    };
  };
  db.push_back(std::move(op));
}

// ---- col2im ----

// Col2imReference: each column entry added into its image position, the kernel offsets in
// ATen's order and every addition rounded to the dtype, as ATen's loop adds.
HostTensor Col2imReference(const HostTensor& cols, int64_t h, int64_t wd, const Window& w) {
  const bool batched = cols.dim() == 3;
  const int64_t n = batched ? cols.shape[0] : 1;
  const int64_t planes = cols.shape[batched ? 1 : 0];
  const int64_t c = planes / (w.kh * w.kw);
  const int64_t bh = Blocks(h, w.ph, w.dh, w.kh, w.sh), bw = Blocks(wd, w.pw, w.dw, w.kw, w.sw);
  HostTensor out;
  out.dtype = cols.dtype;
  out.shape = batched ? Shape{n, c, h, wd} : Shape{c, h, wd};
  out.values.assign(static_cast<size_t>(out.numel()), 0.0);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t i = 0; i < w.kh; ++i) {
        for (int64_t j = 0; j < w.kw; ++j) {
          const int64_t row = (ch * w.kh + i) * w.kw + j;
          for (int64_t y = 0; y < bh; ++y) {
            for (int64_t z = 0; z < bw; ++z) {
              const int64_t iy = y * w.sh - w.ph + i * w.dh, ix = z * w.sw - w.pw + j * w.dw;
              if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
              double& dst = out.values[((b * c + ch) * h + iy) * wd + ix];
              dst =
                  RoundTo(out.dtype, dst + cols.values[(b * planes + row) * bh * bw + y * bw + z]);
            }
          }
        }
      }
    }
  }
  return out;
}

void AddCol2im(std::vector<OpInfo>& db) {
  OpInfo op;
  op.name = "col2im";
  op.out = "col2im.out";
  op.dtypes = kFloatingMask | Bit(TSR_DTYPE_BOOL);
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    // (batch or -1 for unbatched, channels, output size); the columns' shape follows.
    struct Case {
      int64_t batch, channels, h, w;
    };
    const std::vector<Case> cases{{2, 3, 5, 5}, {0, 1, 5, 5}, {-1, 3, 5, 5}, {1, 2, 4, 7}};
    // Small integers (halves for floating dtypes) so that the sums are exact in every dtype.
    MakeOptions small;
    small.low = -4;
    small.high = 4;
    for (size_t k = 0; k < Windows().size(); ++k) {
      const Window& w = Windows()[k];
      const Case& c = cases[k % cases.size()];
      const int64_t blocks =
          Blocks(c.h, w.ph, w.dh, w.kh, w.sh) * Blocks(c.w, w.pw, w.dw, w.kw, w.sw);
      const int64_t planes = c.channels * w.kh * w.kw;
      const Shape shape = c.batch < 0 ? Shape{planes, blocks} : Shape{c.batch, planes, blocks};
      HostTensor cols = MakeTensor(shape, dtype, rng, small);
      if (IsFloating(dtype)) {
        for (double& v : cols.values) v = std::round(v * 2) / 2;
      }
      std::vector<Arg> args{Arg::Tensor(cols), Arg::Ints({c.h, c.w})};
      for (Arg& a : WindowArgs(w)) args.push_back(std::move(a));
      s.push_back(Described(std::move(args)));
    }
    // Random values where blocks overlap: rounding follows ATen's order of additions.
    std::vector<Arg> args{Arg::Tensor(MakeTensor({1, 12, 9}, dtype, rng)), Arg::Ints({4, 5})};
    for (Arg& a : WindowArgs({2, 3, 1, 1, 0, 0, 1, 1})) args.push_back(std::move(a));
    s.push_back(Described(std::move(args), " (random values)"));
    return s;
  };
  op.reference = [](const Sample& s) {
    return std::vector<HostTensor>{
        Col2imReference(s.args[0].tensor, s.args[1].ints[0], s.args[1].ints[1], WindowOf(s, 2))};
  };
  op.errors = [](Rng& rng) {
    auto call = [&](Shape shape, Shape out, Window w, tsr_dtype dtype = TSR_DTYPE_FLOAT32) {
      std::vector<Arg> args{Arg::Tensor(MakeTensor(std::move(shape), dtype, rng)),
                            Arg::Ints(std::move(out))};
      for (Arg& a : WindowArgs(w)) args.push_back(std::move(a));
      return args;
    };
    const Window k22{2, 2, 1, 1, 0, 0, 1, 1};
    return std::vector<ErrorInput>{
        RefusedSaying(call({1, 4, 16}, {5}, k22), TSR_INVALID_ARGUMENT,
                      "It is expected output_size equals to 2, but got size 1"),
        RefusedSaying(
            call({1, 4, 16}, {5, 5}, {2, 2, 1, 1, 0, 0, 0, 1}), TSR_INVALID_ARGUMENT,
            "stride should be greater than zero, but got stride_height: 0 stride_width: 1"),
        RefusedSaying(call({1, 4, 16}, {5, 5}, {2, 2, 1, 1, 0, -1, 1, 1}), TSR_INVALID_ARGUMENT,
                      "padding should be non-negative, but got pad_height: 0 pad_width: -1"),
        RefusedSaying(
            call({4}, {5, 5}, k22), TSR_INVALID_ARGUMENT,
            "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
            "non-zero dimensions for input, but got: [4]"),
        RefusedSaying(call({1, 5, 16}, {5, 5}, k22), TSR_INVALID_ARGUMENT,
                      "Expected size of input's dimension 1 to be divisible by the product of "
                      "kernel_size, but got input.size(1)=5 and kernel_size=(2, 2)."),
        RefusedSaying(
            call({1, 4, 15}, {5, 5}, k22), TSR_INVALID_ARGUMENT,
            "Given output_size=(5, 5), kernel_size=(2, 2), dilation=(1, 1), padding=(0, 0), "
            "stride=(1, 1), expected size of input's dimension 2 to match the calculated "
            "number of sliding blocks 4 * 4 = 16, but got input.size(2)=15."),
        Saying(Refused(call({4, 16}, {5, 5}, k22, TSR_DTYPE_INT32), TSR_UNIMPLEMENTED,
                       "\"col2im_out_cpu\" not implemented for 'Int'"),
               "\"col2im_out_cpu\" not implemented for 'int32'"),
    };
  };
  db.push_back(std::move(op));
}

// ---- scatter_reduce.two ----

int64_t IntegerArg(const Sample& s, size_t i) { return s.args[i].integer; }

bool IncludeSelf(const Sample& s) { return !Given(s, 5) || s.args[5].boolean; }

// ScatterReduceReference: ATen's CPU kernel element by element: positions src reaches start
// from the reduction's identity where self is left out, then each src element in the index's
// row-major order combines into its position (rounded to the dtype after each step); mean
// divides by the count (1 for self where it is included, at least 1), floor division for
// integers; amax/amin take NaN from src and keep a NaN already there.
HostTensor ScatterReduceReference(const Sample& s) {
  const HostTensor& self = s.args[0].tensor;
  const HostTensor& index = s.args[2].tensor;
  const HostTensor& src = s.args[3].tensor;
  const std::string& reduce = s.args[4].string;
  const bool include_self = IncludeSelf(s);
  const int64_t nd = std::max<int64_t>(self.dim(), 1);
  int64_t dim = IntegerArg(s, 1);
  if (dim < 0) dim += nd;
  const auto at = [](const HostTensor& t, const Shape& idx) {
    return t.shape.empty() ? int64_t{0} : Ravel(idx, t.shape);
  };
  const Shape index_shape = index.shape.empty() ? Shape{1} : index.shape;
  HostTensor out = self;
  std::vector<double> count(static_cast<size_t>(self.numel()), include_self ? 1 : 0);
  const double inf = std::numeric_limits<double>::infinity();
  const double identity = reduce == "prod"   ? 1
                          : reduce == "amax" ? -inf
                          : reduce == "amin" ? inf
                                             : 0;
  if (!include_self) {
    for (int64_t f = 0; f < index.numel(); ++f) {
      Shape idx = Unravel(f, index_shape);
      idx[dim] = static_cast<int64_t>(index.values[f]);
      out.values[at(out, idx)] = identity;
    }
  }
  for (int64_t f = 0; f < index.numel(); ++f) {
    Shape idx = Unravel(f, index_shape);
    const double v = src.values[at(src, idx)];
    idx[dim] = static_cast<int64_t>(index.values[f]);
    const int64_t o = at(out, idx);
    double& dst = out.values[o];
    count[o] += 1;
    if (reduce == "sum" || reduce == "mean") {
      dst = RoundTo(out.dtype, dst + v);
    } else if (reduce == "prod") {
      dst = RoundTo(out.dtype, dst * v);
    } else if (reduce == "amax") {
      dst = std::isnan(v) ? v : (dst < v ? v : dst);
    } else {
      dst = std::isnan(v) ? v : (v < dst ? v : dst);
    }
  }
  if (reduce == "mean") {
    for (size_t i = 0; i < out.values.size(); ++i) {
      const double c = count[i] == 0 ? 1 : count[i];
      out.values[i] = IsFloating(out.dtype) ? RoundTo(out.dtype, out.values[i] / c)
                                            : RoundTo(out.dtype, std::floor(out.values[i] / c));
    }
  }
  return out;
}

HostTensor LongTensor(Shape shape, const std::vector<double>& values) {
  return Values(TSR_DTYPE_INT64, std::move(shape), values);
}

// RandomIndex: values in [0, bound), repeats on purpose (they are what the reductions combine).
HostTensor RandomIndex(Shape shape, int64_t bound, Rng& rng) {
  MakeOptions o;
  o.low = 0;
  o.high = static_cast<double>(bound);
  return MakeTensor(std::move(shape), TSR_DTYPE_INT64, rng, o);
}

void AddScatterReduce(std::vector<OpInfo>& db) {
  OpInfo op;
  op.name = "scatter_reduce.two";
  op.out = "scatter_reduce.two_out";
  op.inplace = "scatter_reduce_.two";
  op.dtypes = kAllMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    // Small integers: sums, products and their order of combination stay exact in every dtype
    // (ATen's CPU combines sequentially; another backend may not).
    MakeOptions small;
    small.low = dtype == TSR_DTYPE_UINT8 ? 0 : -2;
    small.high = 3;
    auto arg = [&](Shape shape) {
      return Arg::Tensor(MakeTensor(std::move(shape), dtype, rng, small));
    };
    constexpr int64_t M = 10, S = 5;  // scatter_reduce's OpInfo: (M, S) self
    struct Case {
      Shape self;
      int64_t dim;
      Shape index;
      int64_t bound;
      Shape src;
    };
    const std::vector<Case> cases{
        {{M, S}, 0, {S, S}, M, {S, S}},
        {{M, S}, 1, {S, S}, S, {S, S}},
        {{M, S}, -1, {S, S}, S, {S, S}},
        {{M, S}, 0, {M, S / 2}, M, {M, S / 2}},
        {{M, S}, 1, {M, S / 2}, S, {M, S / 2}},
        {{M, S}, -1, {M, S / 2}, S, {M, S}},  // src larger than index
        {{3, 4, 2}, 1, {2, 6, 2}, 4, {2, 6, 3}},
    };
    std::vector<std::string> reductions{"sum", "prod", "amax", "amin"};
    if (dtype != TSR_DTYPE_BOOL) reductions.push_back("mean");  // ATen has no bool mean
    for (const std::string& reduce : reductions) {
      for (const bool include_self : {false, true}) {
        const std::string note = " " + reduce + (include_self ? "" : " include_self=False");
        for (const Case& c : cases) {
          s.push_back(Described(
              {arg(c.self), Arg::Int(c.dim), Arg::Tensor(RandomIndex(c.index, c.bound, rng)),
               arg(c.src), Arg::String(reduce), Arg::Bool(include_self)},
              note));
        }
        // 0-dim self, index and src; and a 0-dim self with index [1].
        s.push_back(Described({arg({}), Arg::Int(0), Arg::Tensor(LongTensor({}, {0})), arg({}),
                               Arg::String(reduce), Arg::Bool(include_self)},
                              note + " 0-dim"));
        s.push_back(Described({arg({}), Arg::Int(-1), Arg::Tensor(LongTensor({1}, {0})), arg({}),
                               Arg::String(reduce), Arg::Bool(include_self)},
                              note + " 0-dim self, index [1]"));
        // An empty index (any dtype) leaves self as it is.
        s.push_back(
            Described({arg({4, 3}), Arg::Int(0), Arg::Tensor(Values(TSR_DTYPE_INT32, {0, 3}, {})),
                       arg({0, 3}), Arg::String(reduce), Arg::Bool(include_self)},
                      note + " empty int32 index"));
      }
      s.push_back(Described({arg({M, S}), Arg::Int(0), Arg::Tensor(RandomIndex({S, S}, M, rng)),
                             arg({S, S}), Arg::String(reduce)},
                            " include_self left to its default"));
    }
    // prod's OpInfo sample: zeros reduced from self and from src.
    if (dtype != TSR_DTYPE_BOOL) {
      s.push_back(
          Described({Arg::Tensor(Values(dtype, {3, 2}, {0, 13, 0, 17, 0, 19})), Arg::Int(1),
                     Arg::Tensor(LongTensor({3, 4}, {1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1})),
                     Arg::Tensor(Values(dtype, {3, 4}, {0, 1, 2, 3, 0, 4, 0, 1, 2, 3, 5, 6})),
                     Arg::String("prod"), Arg::Bool(true)},
                    " (zeros reduced)"));
    }
    // NaN in self and in src: amax and amin propagate it, as ATen's CPU kernel.
    if (IsFloating(dtype)) {
      const double nan = std::nan("");
      for (const char* reduce : {"amax", "amin", "sum", "mean"}) {
        for (const bool include_self : {true, false}) {
          s.push_back(Described({Arg::Tensor(Values(dtype, {4}, {1, nan, 3, -2})), Arg::Int(0),
                                 Arg::Tensor(LongTensor({6}, {0, 1, 0, 2, 2, 0})),
                                 Arg::Tensor(Values(dtype, {6}, {nan, 2, 5, -1, 4, 0.5})),
                                 Arg::String(reduce), Arg::Bool(include_self)},
                                " (NaN)"));
        }
      }
      s.push_back(
          Described({Arg::Tensor(Values(dtype, {3}, {1, 2, 3})), Arg::Int(0),
                     Arg::Tensor(LongTensor({4}, {0, 0, 1, 1})),
                     Arg::Tensor(Values(dtype, {4},
                                        {-std::numeric_limits<double>::infinity(), 7, 0.25, 0.5})),
                     Arg::String("amin"), Arg::Bool(false)},
                    " (inf)"));
    }
    // Integer mean rounds down: (7 + 1 + 2 + 4) / 4 = 3, (-3 - 4) / 2 = -4.
    if (IsIntegral(dtype, false) && dtype != TSR_DTYPE_UINT8) {
      s.push_back(Described({Arg::Tensor(Values(dtype, {3}, {7, 5, 9})), Arg::Int(0),
                             Arg::Tensor(LongTensor({5}, {0, 0, 0, 1, 1})),
                             Arg::Tensor(Values(dtype, {5}, {1, 2, 4, -3, -4})),
                             Arg::String("mean"), Arg::Bool(true)},
                            " (floor division)"));
      s.push_back(Described({Arg::Tensor(Values(dtype, {3}, {7, 5, 9})), Arg::Int(0),
                             Arg::Tensor(LongTensor({5}, {0, 0, 0, 1, 1})),
                             Arg::Tensor(Values(dtype, {5}, {1, 2, 4, -3, -4})),
                             Arg::String("mean"), Arg::Bool(false)},
                            " (floor division)"));
    }
    return s;
  };
  op.reference = [](const Sample& s) { return std::vector<HostTensor>{ScatterReduceReference(s)}; };
  op.errors = [](Rng& rng) {
    const auto f32 = [&](Shape shape) {
      return Arg::Tensor(MakeTensor(std::move(shape), TSR_DTYPE_FLOAT32, rng));
    };
    const Arg index = Arg::Tensor(LongTensor({2}, {0, 1}));
    return std::vector<ErrorInput>{
        RefusedSaying({f32({3}), Arg::Int(0), index, f32({2}), Arg::String("add"), Arg::Bool(true)},
                      TSR_INVALID_ARGUMENT,
                      "reduce argument must be either sum, prod, mean, amax or amin, got add"),
        RefusedSaying({f32({3}), Arg::Int(0), Arg::Tensor(Values(TSR_DTYPE_INT32, {2}, {0, 1})),
                       f32({2}), Arg::String("sum"), Arg::Bool(true)},
                      TSR_INVALID_ARGUMENT, "scatter(): Expected dtype int64 for index"),
        RefusedSaying(
            {f32({3}), Arg::Int(0), index, Arg::Tensor(MakeTensor({2}, TSR_DTYPE_FLOAT64, rng)),
             Arg::String("sum"), Arg::Bool(true)},
            TSR_INVALID_ARGUMENT, "scatter(): Expected self.dtype to be equal to src.dtype"),
        RefusedSaying({f32({3}), Arg::Int(0), Arg::Tensor(LongTensor({2}, {0, 3})), f32({2}),
                       Arg::String("amax"), Arg::Bool(true)},
                      TSR_INVALID_ARGUMENT, "index 3 is out of bounds for dimension 0 with size 3"),
        RefusedSaying({f32({3}), Arg::Int(0), Arg::Tensor(LongTensor({2}, {-1, 0})), f32({2}),
                       Arg::String("sum"), Arg::Bool(true)},
                      TSR_INVALID_ARGUMENT,
                      "index -1 is out of bounds for dimension 0 with size 3"),
        RefusedSaying(
            {f32({2, 2}), Arg::Int(0), index, f32({2}), Arg::String("sum"), Arg::Bool(true)},
            TSR_INVALID_ARGUMENT,
            "Index tensor must have the same number of dimensions as self tensor"),
        RefusedSaying(
            {f32({2, 2}), Arg::Int(0), Arg::Tensor(LongTensor({1, 3}, {0, 1, 0})), f32({2, 2}),
             Arg::String("sum"), Arg::Bool(true)},
            TSR_INVALID_ARGUMENT,
            "Expected index [1, 3] to be smaller than self [2, 2] apart from dimension 0 and "
            "to be smaller size than src [2, 2]"),
        RefusedSaying(
            {f32({2, 2}), Arg::Int(0), Arg::Tensor(LongTensor({1, 2}, {0, 1})), f32({1, 1}),
             Arg::String("mean"), Arg::Bool(true)},
            TSR_INVALID_ARGUMENT,
            "Expected index [1, 2] to be smaller than self [2, 2] apart from dimension 0 and "
            "to be smaller size than src [1, 1]"),
        RefusedSaying({f32({2, 2}), Arg::Int(2), Arg::Tensor(LongTensor({1, 2}, {0, 1})),
                       f32({2, 2}), Arg::String("sum"), Arg::Bool(true)},
                      TSR_OUT_OF_RANGE,
                      "ension out of range (expected to be in range of [-2, 1], but got 2)"),
        Saying(Refused({Arg::Tensor(Values(TSR_DTYPE_BOOL, {2}, {1, 0})), Arg::Int(0), index,
                        Arg::Tensor(Values(TSR_DTYPE_BOOL, {2}, {1, 1})), Arg::String("mean"),
                        Arg::Bool(true)},
                       TSR_UNIMPLEMENTED,
                       "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'"),
               "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'bool'"),
    };
  };
  db.push_back(std::move(op));
}

// ---- as_strided_scatter ----

// AsStridedScatterReference: self's elements in row-major order are the storage; src's
// elements written at offset + sum(index * stride), in src's row-major order.
HostTensor AsStridedScatterReference(const Sample& s) {
  HostTensor out = CastTo(s.args[0].tensor, s.args[0].tensor.dtype);
  const HostTensor& src = s.args[1].tensor;
  const Shape& stride = s.args[3].ints;
  const int64_t offset = Given(s, 4) ? s.args[4].integer : 0;
  for (int64_t f = 0; f < src.numel(); ++f) {
    const Shape idx = Unravel(f, src.shape);
    int64_t p = offset;
    for (size_t d = 0; d < idx.size(); ++d) p += idx[d] * stride[d];
    out.values[p] = RoundTo(out.dtype, src.values[f]);
  }
  return out;
}

// PositionValued: a src for an as_strided view whose elements may share a position: each
// element's value follows from its position, so those that share one are equal and the result
// does not depend on the order of the writes.
HostTensor PositionValued(tsr_dtype dtype, const Shape& shape, const Shape& stride,
                          int64_t offset) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = shape;
  for (int64_t f = 0; f < t.numel(); ++f) {
    const Shape idx = Unravel(f, shape);
    int64_t p = offset;
    for (size_t d = 0; d < idx.size(); ++d) p += idx[d] * stride[d];
    t.values.push_back(RoundTo(dtype, dtype == TSR_DTYPE_BOOL ? p % 2 : (p % 7) - 3));
  }
  return t;
}

void AddAsStridedScatter(std::vector<OpInfo>& db) {
  OpInfo op;
  op.name = "as_strided_scatter";
  op.out = "as_strided_scatter.out";
  op.dtypes = kAllMask;
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    struct Case {
      Shape input, size, stride;
      int64_t offset;
    };
    // as_strided_scatter's OpInfo cases (the last two views share positions), then others.
    const std::vector<Case> cases{
        {{1}, {1}, {1}, 0},
        {{3, 3}, {2, 2}, {1, 2}, 0},
        {{3, 3}, {2, 2}, {1, 2}, 1},
        {{16}, {2, 2, 2, 2}, {1, 1, 1, 1}, 0},
        {{16}, {2, 1, 1, 2}, {1, 7, 7, 1}, 0},
        {{4, 5}, {3, 2}, {5, 2}, 3},
        {{2, 3, 4}, {4, 3}, {1, 8}, 0},
        {{5}, {0, 3}, {1, 1}, 9},
    };
    for (const Case& c : cases) {
      s.push_back(Described({Arg::Tensor(MakeTensor(c.input, dtype, rng)),
                             Arg::Tensor(PositionValued(dtype, c.size, c.stride, c.offset)),
                             Arg::Ints(c.size), Arg::Ints(c.stride), Arg::Int(c.offset)}));
    }
    // storage_offset left to None: 0; a 0-dim self and view.
    s.push_back(Described({Arg::Tensor(MakeTensor({3, 3}, dtype, rng)),
                           Arg::Tensor(MakeTensor({3}, dtype, rng)), Arg::Ints({3}), Arg::Ints({4}),
                           Arg::None()}));
    s.push_back(
        Described({Arg::Tensor(MakeTensor({}, dtype, rng)), Arg::Tensor(MakeTensor({}, dtype, rng)),
                   Arg::Ints({}), Arg::Ints({}), Arg::None()}));
    // src of another dtype: copied into the view as copy_ converts it.
    MakeOptions digits;
    digits.low = 0;
    digits.high = 2;
    s.push_back(Described({Arg::Tensor(MakeTensor({2, 4}, dtype, rng)),
                           Arg::Tensor(MakeTensor({2, 2}, TSR_DTYPE_INT64, rng, digits)),
                           Arg::Ints({2, 2}), Arg::Ints({4, 1}), Arg::Int(1)},
                          " (int64 src)"));
    return s;
  };
  op.reference = [](const Sample& s) {
    return std::vector<HostTensor>{AsStridedScatterReference(s)};
  };
  op.errors = [](Rng& rng) {
    const auto f32 = [&](Shape shape) {
      return Arg::Tensor(MakeTensor(std::move(shape), TSR_DTYPE_FLOAT32, rng));
    };
    return std::vector<ErrorInput>{
        RefusedSaying({f32({4}), f32({3}), Arg::Ints({3}), Arg::Ints({0}), Arg::None()},
                      TSR_INVALID_ARGUMENT, "more than one element of the written-to tensor"),
        RefusedSaying(
            {f32({4}), f32({3}), Arg::Ints({3}), Arg::Ints({2}), Arg::None()}, TSR_INVALID_ARGUMENT,
            "setStorage: sizes [3], strides [2], storage offset 0, and itemsize 4 requiring "
            "a storage size of 20 are out of bounds for storage of size 16"),
        RefusedSaying(
            {f32({4}), f32({2}), Arg::Ints({3}), Arg::Ints({1}), Arg::None()}, TSR_INVALID_ARGUMENT,
            "expected src to have a size equal to the slice of self. src size = [2], slice "
            "size = [3]"),
        RefusedSaying({f32({4}), f32({2, 2}), Arg::Ints({2, 2}), Arg::Ints({1, 2}), Arg::Int(-1)},
                      TSR_INVALID_ARGUMENT, "Tensor: invalid storage offset -1"),
        RefusedSaying({f32({4}), f32({3}), Arg::Ints({3}), Arg::Ints({-1}), Arg::Int(3)},
                      TSR_INVALID_ARGUMENT,
                      "as_strided: Negative strides are not supported at the moment, got strides: "
                      "[-1]"),
        RefusedSaying({f32({4}), f32({3}), Arg::Ints({3}), Arg::Ints({1, 1}), Arg::None()},
                      TSR_INVALID_ARGUMENT, "mismatch in length of strides and shape"),
    };
  };
  db.push_back(std::move(op));
}

}  // namespace

void AddFoldScatterOps(std::vector<OpInfo>& db) {
  AddIm2col(db);
  AddCol2im(db);
  AddScatterReduce(db);
  AddAsStridedScatter(db);
}

}  // namespace conformance
}  // namespace tessera

// Matrix products and NN ops. References are direct loops in long double.
#include <cmath>
#include <cstdint>
#include <limits>

#include "conformance/conv_reference.h"
#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"

namespace tessera {
namespace conformance {
namespace {

MakeOptions Unit(tsr_dtype dtype) {
  MakeOptions o;
  if (IsFloating(dtype)) {
    o.low = -1;
    o.high = 1;
  }
  return o;
}

constexpr DtypeMask kMatmulDtypes = kNumericMask;  // PyTorch's CPU mm: every numeric type

// ---- batch norm ----

// After PyTorch's sample_inputs_batch_norm: inference and training, with and without weight,
// bias and running statistics, 2D to 5D inputs, a batch of 1 (statistics over the spatial
// dims), momentum 0 and 1, a large eps.
struct BatchNormCase {
  std::vector<int64_t> shape;
  bool weight, bias, running, training;
  double momentum, eps;
};

const std::vector<BatchNormCase>& BatchNormCases() {
  static const std::vector<BatchNormCase> cases{
      {{4, 3, 5, 5}, true, true, true, false, 0.1, 1e-5},
      {{6, 3}, true, true, true, false, 0.1, 1e-5},
      {{3, 2, 4}, false, false, true, false, 0.1, 1e-5},
      {{4, 3, 5, 5}, true, true, true, true, 0.1, 1e-5},
      {{6, 3}, true, false, true, true, 0.3, 1e-5},
      {{2, 3, 2, 3, 2}, false, true, true, true, 1.0, 1e-3},
      {{1, 2, 7}, true, true, true, true, 0.0, 0.5},
      {{5, 4}, false, false, false, true, 0.1, 1e-5},
      {{2, 3, 3, 3}, true, true, false, true, 0.1, 1e-5}};
  return cases;
}

std::vector<Arg> BatchNormArgs(const BatchNormCase& c, tsr_dtype dtype, Rng& rng) {
  MakeOptions positive;
  positive.positive = true;
  const std::vector<int64_t> ch{c.shape[1]};
  auto opt = [&](bool present, const MakeOptions& o) {
    return present ? Arg::Tensor(MakeTensor(ch, dtype, rng, o)) : Arg::None();
  };
  return {Arg::Tensor(MakeTensor(c.shape, dtype, rng)),
          opt(c.weight, {}),
          opt(c.bias, {}),
          opt(c.running, {}),
          opt(c.running, positive),
          Arg::Bool(c.training),
          Arg::Double(c.momentum),
          Arg::Double(c.eps)};
}

std::string BatchNormDesc(const BatchNormCase& c) {
  std::string d = ShapeString(c.shape) + (c.training ? " training" : " inference");
  if (c.weight) d += " weight";
  if (c.bias) d += " bias";
  if (c.running) d += " running stats";
  return d + " momentum " + std::to_string(c.momentum) + " eps " + std::to_string(c.eps);
}

// (out, save_mean, save_invstd) and then the updated running statistics (when given).
std::vector<HostTensor> BatchNormReference(const Sample& s) {
  const HostTensor& x = s.args[0].tensor;
  const int64_t N = x.shape[0], C = x.shape[1];
  if (x.numel() == 0) {
    // The composite's early return (PyTorch's _batch_norm_impl_index): an empty copy, the
    // running statistics untouched. (Only batch_norm has such samples.)
    std::vector<HostTensor> r{x, HostTensor{}, HostTensor{}};
    if (s.args[3].kind == Arg::Kind::kTensor) {
      r.push_back(s.args[3].tensor);
      r.push_back(s.args[4].tensor);
    }
    return r;
  }
  const int64_t inner = x.numel() / (N * C), n = N * inner;
  const bool training = s.args[5].boolean, running = s.args[3].kind == Arg::Kind::kTensor;
  const double momentum = s.args[6].number, eps = s.args[7].number;
  HostTensor out = x, save_mean, save_invstd;
  save_mean.dtype = save_invstd.dtype = x.dtype;
  save_mean.shape = save_invstd.shape = {training ? C : 0};
  HostTensor rm = running ? s.args[3].tensor : HostTensor{},
             rv = running ? s.args[4].tensor : HostTensor{};
  for (int64_t c = 0; c < C; ++c) {
    long double mean, var;
    if (training) {
      long double sum = 0, sq = 0;
      for (int64_t b = 0; b < N; ++b)
        for (int64_t i = 0; i < inner; ++i) sum += x.values[(b * C + c) * inner + i];
      mean = sum / n;
      for (int64_t b = 0; b < N; ++b)
        for (int64_t i = 0; i < inner; ++i) {
          const long double d = x.values[(b * C + c) * inner + i] - mean;
          sq += d * d;
        }
      var = sq / n;
      save_mean.values.push_back(RoundTo(x.dtype, static_cast<double>(mean)));
      save_invstd.values.push_back(RoundTo(x.dtype, 1 / std::sqrt(static_cast<double>(var) + eps)));
      if (running) {
        rm.values[c] =
            RoundTo(rm.dtype, static_cast<double>(momentum * mean + (1 - momentum) * rm.values[c]));
        rv.values[c] = RoundTo(rv.dtype, static_cast<double>(momentum * (sq / (n - 1)) +
                                                             (1 - momentum) * rv.values[c]));
      }
    } else {
      mean = s.args[3].tensor.values[c];
      var = s.args[4].tensor.values[c];
    }
    const long double inv = 1 / std::sqrt(static_cast<double>(var) + eps);
    for (int64_t b = 0; b < N; ++b)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t k = (b * C + c) * inner + i;
        long double v = (x.values[k] - mean) * inv;
        if (s.args[1].kind == Arg::Kind::kTensor) v *= s.args[1].tensor.values[c];
        if (s.args[2].kind == Arg::Kind::kTensor) v += s.args[2].tensor.values[c];
        out.values[k] = RoundTo(x.dtype, static_cast<double>(v));
      }
  }
  std::vector<HostTensor> r{out, save_mean, save_invstd};
  if (running) {
    r.push_back(rm);
    r.push_back(rv);
  }
  return r;
}

// ---- convolution ----

// The forms that reach convolution, with their argument orders.
enum class ConvForm { kNative, kConv, kConvTranspose, kConvPadding };

// One convolution case: shapes and the per-dim arguments as the user writes them (one value
// or one per spatial dim).
struct ConvCase {
  std::vector<int64_t> in, w;
  bool bias;
  std::vector<int64_t> stride, padding, dilation, output_padding;
  int64_t groups;
  bool transposed;
  std::string note;          // the edge case it stands for
  std::string padding_mode;  // conv*d.padding: 'same' or 'valid'
};

ConvArgs ReadConv(const Sample& s, ConvForm form) {
  ConvArgs a;
  a.x = &s.args[0].tensor;
  a.w = &s.args[1].tensor;
  a.bias = s.args[2].kind == Arg::Kind::kTensor ? &s.args[2].tensor : nullptr;
  a.stride = s.args[3].ints;
  if (form != ConvForm::kConvPadding) a.padding = s.args[4].ints;
  switch (form) {
    case ConvForm::kConvPadding: {
      // 'valid': none; 'same': dilation * (k - 1) per dim in all, the odd one on the right.
      a.dilation = s.args[5].ints;
      a.transposed = false;
      a.output_padding = {0};
      a.groups = s.args[6].integer;
      const size_t dims = a.w->dim() - 2;
      for (size_t d = 0; d < dims; ++d) {
        const int64_t total =
            s.args[4].string == "same" ? PerDim(a.dilation, d) * (a.w->shape[2 + d] - 1) : 0;
        a.padding.push_back(total / 2);
        a.padding_right.push_back(total - total / 2);
      }
      break;
    }
    case ConvForm::kNative:
      a.dilation = s.args[5].ints;
      a.transposed = s.args[6].boolean;
      a.output_padding = s.args[7].ints;
      a.groups = s.args[8].integer;
      break;
    case ConvForm::kConv:
      a.dilation = s.args[5].ints;
      a.transposed = false;
      a.output_padding = {0};
      a.groups = s.args[6].integer;
      break;
    case ConvForm::kConvTranspose:
      a.output_padding = s.args[5].ints;
      a.groups = s.args[6].integer;
      a.dilation = s.args[7].ints;
      a.transposed = true;
      break;
  }
  return a;
}

std::string ConvDesc(const ConvCase& c) {
  auto list = [](const std::vector<int64_t>& v) { return ShapeString(v); };
  std::string d = ShapeString(c.in) + (c.transposed ? " *T " : " * ") + ShapeString(c.w) +
                  (c.bias ? " +bias" : "") + " stride " + list(c.stride) + " pad " +
                  (c.padding_mode.empty() ? list(c.padding) : "'" + c.padding_mode + "'") +
                  " dil " + list(c.dilation);
  if (c.transposed) d += " out_pad " + list(c.output_padding);
  if (c.groups != 1) d += " groups " + std::to_string(c.groups);
  if (!c.note.empty()) d += " (" + c.note + ")";
  return d;
}

// Our own cases after the edge cases of PyTorch's sample_inputs_conv*/conv_transpose*: a
// stride larger than the kernel, padding larger than the kernel's reach, dilation, groups
// (depthwise too), per-dim values, no bias, a 1x1 kernel, an empty batch, the unbatched input
// of the composites, and output_padding below stride or dilation.
std::vector<ConvCase> ConvCases(int dims, bool transposed, bool unbatched_too) {
  auto sp = [dims](std::vector<int64_t> v) {  // spatial sizes from up to 3 values
    v.resize(static_cast<size_t>(dims));
    return v;
  };
  auto shape = [&](int64_t a, int64_t b, std::vector<int64_t> rest) {
    std::vector<int64_t> v{a, b};
    for (int64_t e : sp(rest)) v.push_back(e);
    return v;
  };
  std::vector<ConvCase> cs;
  if (!transposed) {
    cs.push_back({shape(1, 3, {4, 4, 4}),
                  shape(3, 3, {3, 3, 3}),
                  true,
                  {2},
                  {2},
                  {1},
                  {0},
                  1,
                  false,
                  "stride 2 pad 2",
                  ""});
    cs.push_back({shape(2, 4, {6, 5, 4}),
                  shape(6, 2, {3, 2, 2}),
                  false,
                  {1},
                  {1},
                  {2},
                  {0},
                  2,
                  false,
                  "groups, dilation, no bias",
                  ""});
    cs.push_back({shape(1, 4, {5, 5, 3}),
                  shape(4, 1, {3, 3, 3}),
                  true,
                  {1},
                  {1},
                  {1},
                  {0},
                  4,
                  false,
                  "depthwise",
                  ""});
    cs.push_back({shape(2, 2, {7, 6, 5}),
                  shape(3, 2, {2, 3, 1}),
                  true,
                  sp({3, 2, 1}),
                  sp({1, 0, 2}),
                  sp({1, 2, 1}),
                  {0},
                  1,
                  false,
                  "per-dim values",
                  ""});
    cs.push_back({shape(1, 2, {3, 3, 3}),
                  shape(2, 2, {1, 1, 1}),
                  true,
                  {3},
                  {0},
                  {1},
                  {0},
                  1,
                  false,
                  "1x1 kernel, stride above the size",
                  ""});
    cs.push_back({shape(0, 2, {4, 4, 4}),
                  shape(3, 2, {3, 3, 3}),
                  true,
                  {1},
                  {0},
                  {1},
                  {0},
                  1,
                  false,
                  "empty batch",
                  ""});
  } else {
    cs.push_back({shape(1, 3, {4, 3, 2}),
                  shape(3, 2, {3, 3, 3}),
                  true,
                  {2},
                  {1},
                  {1},
                  {1},
                  1,
                  true,
                  "stride 2, output_padding 1",
                  ""});
    cs.push_back({shape(2, 4, {3, 4, 2}),
                  shape(4, 3, {2, 3, 2}),
                  false,
                  {1},
                  {0},
                  {2},
                  {1},
                  2,
                  true,
                  "groups, dilation 2, output_padding below it, no bias",
                  ""});
    cs.push_back({shape(1, 2, {3, 2, 3}), shape(2, 2, {3, 2, 2}), true, sp({3, 2, 1}),
                  sp({2, 1, 0}), sp({1, 1, 2}), sp({2, 1, 1}), 1, true, "per-dim values", ""});
    cs.push_back({shape(1, 2, {3, 3, 2}),
                  shape(2, 1, {1, 1, 1}),
                  true,
                  {1},
                  {0},
                  {1},
                  {0},
                  1,
                  true,
                  "1x1 kernel",
                  ""});
    cs.push_back({shape(0, 2, {3, 3, 3}),
                  shape(2, 2, {3, 3, 3}),
                  true,
                  {2},
                  {1},
                  {1},
                  {0},
                  1,
                  true,
                  "empty batch",
                  ""});
  }
  if (unbatched_too) {
    ConvCase u = cs[0];
    u.in.erase(u.in.begin());
    u.note = "unbatched";
    cs.push_back(u);
  }
  return cs;
}

// conv*d.padding after PyTorch's sample_inputs_conv*d string-padding cases: 'same' with odd
// and even kernels (the extra element of an odd total on the right), with dilation, 'valid',
// groups, and an unbatched input.
std::vector<ConvCase> ConvPaddingCases(int dims) {
  auto sp = [dims](std::vector<int64_t> v) {
    v.resize(static_cast<size_t>(dims));
    return v;
  };
  auto shape = [&](int64_t a, int64_t b, std::vector<int64_t> rest) {
    std::vector<int64_t> v{a, b};
    for (int64_t e : sp(rest)) v.push_back(e);
    return v;
  };
  std::vector<ConvCase> cs{{shape(1, 2, {5, 4, 3}),
                            shape(3, 2, {3, 3, 3}),
                            true,
                            {1},
                            {},
                            {1},
                            {0},
                            1,
                            false,
                            "odd kernel",
                            "same"},
                           {shape(2, 2, {6, 5, 4}),
                            shape(2, 2, {4, 2, 2}),
                            false,
                            {1},
                            {},
                            {1},
                            {0},
                            1,
                            false,
                            "even kernel: one more on the right",
                            "same"},
                           {shape(1, 4, {7, 6, 5}),
                            shape(4, 2, {2, 3, 2}),
                            true,
                            {1},
                            {},
                            sp({3, 2, 1}),
                            {0},
                            2,
                            false,
                            "dilation, groups",
                            "same"},
                           {shape(1, 2, {6, 5, 4}),
                            shape(3, 2, {3, 2, 2}),
                            true,
                            {2},
                            {},
                            {1},
                            {0},
                            1,
                            false,
                            "stride 2",
                            "valid"}};
  ConvCase u = cs[1];
  u.in.erase(u.in.begin());
  u.note = "unbatched";
  cs.push_back(u);
  return cs;
}

// An OpInfo for convolution or one of its composites over `dims` spatial dims (0: the native
// op, whose samples cover 1, 2 and 3).
OpInfo ConvOp(std::string name, ConvForm form, int dims, DtypeMask dtypes) {
  OpInfo op;
  op.name = std::move(name);
  op.dtypes = dtypes;
  op.tolerance_scale = 10;
  op.samples = [form, dims](tsr_dtype dtype, Rng& rng) {
    std::vector<ConvCase> cases;
    if (form == ConvForm::kConvPadding) cases = ConvPaddingCases(dims);
    for (int d = 1; d <= 3 && form != ConvForm::kConvPadding; ++d) {
      if (dims != 0 && d != dims) continue;
      for (bool transposed : {false, true}) {
        if (form == ConvForm::kConv && transposed) continue;
        if (form == ConvForm::kConvTranspose && !transposed) continue;
        for (ConvCase& c : ConvCases(d, transposed, form != ConvForm::kNative)) {
          cases.push_back(std::move(c));
        }
      }
    }
    std::vector<Sample> s;
    for (const ConvCase& c : cases) {
      std::vector<int64_t> out_channels{c.transposed ? c.w[1] * c.groups : c.w[0]};
      std::vector<Arg> args{
          Arg::Tensor(MakeTensor(c.in, dtype, rng, Unit(dtype))),
          Arg::Tensor(MakeTensor(c.w, dtype, rng, Unit(dtype))),
          c.bias ? Arg::Tensor(MakeTensor(out_channels, dtype, rng, Unit(dtype))) : Arg::None(),
          Arg::Ints(c.stride), Arg::Ints(c.padding)};
      switch (form) {
        case ConvForm::kNative:
          args.push_back(Arg::Ints(c.dilation));
          args.push_back(Arg::Bool(c.transposed));
          args.push_back(Arg::Ints(c.output_padding));
          args.push_back(Arg::Int(c.groups));
          break;
        case ConvForm::kConv:
          args.push_back(Arg::Ints(c.dilation));
          args.push_back(Arg::Int(c.groups));
          break;
        case ConvForm::kConvTranspose:
          args.push_back(Arg::Ints(c.output_padding));
          args.push_back(Arg::Int(c.groups));
          args.push_back(Arg::Ints(c.dilation));
          break;
        case ConvForm::kConvPadding:
          args[4] = Arg::String(c.padding_mode);
          args.push_back(Arg::Ints(c.dilation));
          args.push_back(Arg::Int(c.groups));
          break;
      }
      s.push_back({args, ConvDesc(c)});
    }
    return s;
  };
  op.reference = [form](const Sample& s) {
    return std::vector<HostTensor>{ConvReference(ReadConv(s, form))};
  };
  return op;
}

ErrorInput ConvError(Rng& rng, std::vector<int64_t> in, std::vector<int64_t> w, tsr_dtype wdt,
                     std::vector<int64_t> stride, std::vector<int64_t> output_padding,
                     bool transposed, int64_t groups, std::string what, std::string message) {
  return {{{Arg::Tensor(MakeTensor(in, TSR_DTYPE_FLOAT32, rng)),
            Arg::Tensor(MakeTensor(w, wdt, rng)), Arg::None(), Arg::Ints(stride), Arg::Ints({0}),
            Arg::Ints({1}), Arg::Bool(transposed), Arg::Ints(output_padding), Arg::Int(groups)},
           what},
          TSR_INVALID_ARGUMENT,
          what,
          std::move(message)};
}

}  // namespace

void AddLinalgNNOps(std::vector<OpInfo>& db) {
  {
    OpInfo op;
    op.name = "mm";
    op.out = "mm.out";
    op.dtypes = kMatmulDtypes;
    op.tolerance_scale = 10;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      for (const auto& [m, k, n] : std::vector<std::array<int64_t, 3>>{
               {5, 7, 11}, {1, 13, 1}, {0, 3, 4}, {3, 0, 2}, {16, 16, 16}}) {
        s.push_back({{Arg::Tensor(MakeTensor({m, k}, dtype, rng, Unit(dtype))),
                      Arg::Tensor(MakeTensor({k, n}, dtype, rng, Unit(dtype)))},
                     ShapeString({m, k}) + " @ " + ShapeString({k, n})});
      }
      return s;
    };
    op.reference = [](const Sample& s) {
      const HostTensor &a = s.args[0].tensor, &b = s.args[1].tensor;
      const int64_t M = a.shape[0], K = a.shape[1], N = b.shape[1];
      return std::vector<HostTensor>{FromLong({M, N}, a.dtype, MatMul(a, b, 1, M, K, N))};
    };
    op.errors = [](Rng& rng) {
      return std::vector<ErrorInput>{
          Saying({{{Arg::Tensor(MakeTensor({2, 3}, TSR_DTYPE_FLOAT32, rng)),
                    Arg::Tensor(MakeTensor({4, 2}, TSR_DTYPE_FLOAT32, rng))},
                   "[2, 3] @ [4, 2]"},
                  TSR_INVALID_ARGUMENT,
                  "inner sizes that differ"},
                 "shapes [2, 3] and [4, 2] cannot be multiplied (3 != 4)"),
          Saying({{{Arg::Tensor(MakeTensor({2, 3}, TSR_DTYPE_FLOAT32, rng)),
                    Arg::Tensor(MakeTensor({3, 2}, TSR_DTYPE_FLOAT64, rng))},
                   "float32 @ float64"},
                  TSR_INVALID_ARGUMENT,
                  "different dtypes"},
                 "expected both matrices to have the same dtype, but got float32 != float64"),
          Saying({{{Arg::Tensor(MakeTensor({2, 3, 1}, TSR_DTYPE_FLOAT32, rng)),
                    Arg::Tensor(MakeTensor({3, 2}, TSR_DTYPE_FLOAT32, rng))},
                   "3D @ 2D"},
                  TSR_INVALID_ARGUMENT,
                  "a 3D operand"},
                 "expected 'self' to be a 2D tensor, got 3D")};
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op;
    op.name = "bmm";
    op.out = "bmm.out";
    op.dtypes = kMatmulDtypes;
    op.tolerance_scale = 10;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      for (const auto& [b, m, k, n] :
           std::vector<std::array<int64_t, 4>>{{3, 5, 7, 2}, {1, 1, 1, 1}, {0, 2, 3, 4}}) {
        s.push_back({{Arg::Tensor(MakeTensor({b, m, k}, dtype, rng, Unit(dtype))),
                      Arg::Tensor(MakeTensor({b, k, n}, dtype, rng, Unit(dtype)))},
                     ShapeString({b, m, k}) + " @ " + ShapeString({b, k, n})});
      }
      return s;
    };
    op.reference = [](const Sample& s) {
      const HostTensor &a = s.args[0].tensor, &b = s.args[1].tensor;
      const int64_t B = a.shape[0], M = a.shape[1], K = a.shape[2], N = b.shape[2];
      return std::vector<HostTensor>{FromLong({B, M, N}, a.dtype, MatMul(a, b, B, M, K, N))};
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op;
    op.name = "addmm";
    op.out = "addmm.out";
    op.inplace = "addmm_";
    op.dtypes = kMatmulDtypes;
    op.tolerance_scale = 10;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      const bool f = IsFloating(dtype);
      std::vector<Sample> s;
      for (const auto& self_shape : std::vector<std::vector<int64_t>>{{5, 4}, {4}, {}}) {
        s.push_back({{Arg::Tensor(MakeTensor(self_shape, dtype, rng, Unit(dtype))),
                      Arg::Tensor(MakeTensor({5, 3}, dtype, rng, Unit(dtype))),
                      Arg::Tensor(MakeTensor({3, 4}, dtype, rng, Unit(dtype))),
                      f ? Arg::ScalarDouble(0.5) : Arg::ScalarInt(2),
                      f ? Arg::ScalarDouble(-1.5) : Arg::ScalarInt(3)},
                     "self " + ShapeString(self_shape) + " + [5, 3] @ [3, 4]"});
      }
      return s;
    };
    op.reference = [](const Sample& s) {
      const HostTensor &self = s.args[0].tensor, &a = s.args[1].tensor, &b = s.args[2].tensor;
      const double beta = s.args[3].number, alpha = s.args[4].number;
      const int64_t M = a.shape[0], K = a.shape[1], N = b.shape[1];
      std::vector<long double> c = MatMul(a, b, 1, M, K, N);
      Arg expanded = Arg::Tensor(self);
      HostTensor bias = Elementwise({&expanded}, self.dtype, [](const double* x) { return x[0]; });
      for (int64_t i = 0; i < M; ++i) {
        for (int64_t j = 0; j < N; ++j) {
          // self broadcasts to [M, N]
          double sv = self.dim() == 0   ? self.values[0]
                      : self.dim() == 1 ? self.values[j]
                                        : self.values[i * N + j];
          c[i * N + j] = alpha * c[i * N + j] + beta * sv;
        }
      }
      (void)bias;
      return std::vector<HostTensor>{FromLong({M, N}, a.dtype, c)};
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op;
    op.name = "matmul";
    op.out = "matmul.out";
    op.dtypes = kMatmulDtypes;
    op.tolerance_scale = 10;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      for (const auto& [a, b] : std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
               {{7}, {7}},
               {{5, 7}, {7}},
               {{7}, {7, 3}},
               {{5, 7}, {7, 3}},
               {{2, 5, 7}, {7, 3}},
               {{2, 1, 5, 7}, {3, 7, 4}}}) {
        s.push_back({{Arg::Tensor(MakeTensor(a, dtype, rng, Unit(dtype))),
                      Arg::Tensor(MakeTensor(b, dtype, rng, Unit(dtype)))},
                     ShapeString(a) + " @ " + ShapeString(b)});
      }
      return s;
    };
    op.reference = [](const Sample& s) {
      HostTensor a = s.args[0].tensor, b = s.args[1].tensor;
      const bool a1 = a.dim() == 1, b1 = b.dim() == 1;
      if (a1) a.shape.insert(a.shape.begin(), 1);
      if (b1) b.shape.push_back(1);
      const int64_t M = a.shape[a.dim() - 2], K = a.shape[a.dim() - 1], N = b.shape[b.dim() - 1];
      std::vector<int64_t> batch =
          BroadcastShape({std::vector<int64_t>(a.shape.begin(), a.shape.end() - 2),
                          std::vector<int64_t>(b.shape.begin(), b.shape.end() - 2)});
      int64_t B = 1;
      for (int64_t d : batch) B *= d;
      // Expand both to batch and gather per-batch matrices.
      auto expand = [&](const HostTensor& t, int64_t rows, int64_t cols) {
        HostTensor e;
        e.dtype = t.dtype;
        std::vector<int64_t> tb(t.shape.begin(), t.shape.end() - 2);
        for (int64_t bi = 0; bi < B; ++bi) {
          int64_t rest = bi, off = 0, mul = 1;
          std::vector<int64_t> idx(batch.size());
          for (size_t d = batch.size(); d-- > 0;) {
            idx[d] = rest % batch[d];
            rest /= batch[d];
          }
          const size_t lead = batch.size() - tb.size();
          for (size_t d = tb.size(); d-- > 0;) {
            off += (tb[d] == 1 ? 0 : idx[lead + d]) * mul;
            mul *= tb[d];
          }
          for (int64_t k = 0; k < rows * cols; ++k)
            e.values.push_back(t.values[off * rows * cols + k]);
        }
        return e;
      };
      const std::vector<long double> c = MatMul(expand(a, M, K), expand(b, K, N), B, M, K, N);
      std::vector<int64_t> shape = batch;
      if (!a1) shape.push_back(M);
      if (!b1) shape.push_back(N);
      return std::vector<HostTensor>{FromLong(shape, a.dtype, c)};
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op;
    op.name = "linear";
    op.out = "linear.out";
    op.dtypes = kMatmulDtypes;
    op.tolerance_scale = 10;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      for (const auto& in : std::vector<std::vector<int64_t>>{{5, 7}, {2, 3, 7}, {7}}) {
        s.push_back({{Arg::Tensor(MakeTensor(in, dtype, rng, Unit(dtype))),
                      Arg::Tensor(MakeTensor({4, 7}, dtype, rng, Unit(dtype))),
                      Arg::Tensor(MakeTensor({4}, dtype, rng, Unit(dtype)))},
                     ShapeString(in) + " with bias"});
      }
      s.push_back({{Arg::Tensor(MakeTensor({5, 7}, dtype, rng, Unit(dtype))),
                    Arg::Tensor(MakeTensor({4, 7}, dtype, rng, Unit(dtype))), Arg::None()},
                   "[5, 7] without bias"});
      return s;
    };
    op.reference = [](const Sample& s) {
      const HostTensor &x = s.args[0].tensor, &w = s.args[1].tensor;
      const int64_t K = w.shape[1], N = w.shape[0], M = x.numel() / K;
      std::vector<long double> c(static_cast<size_t>(M * N));
      for (int64_t i = 0; i < M; ++i) {
        for (int64_t j = 0; j < N; ++j) {
          long double acc = s.args[2].kind == Arg::Kind::kTensor ? s.args[2].tensor.values[j] : 0;
          for (int64_t k = 0; k < K; ++k)
            acc += static_cast<long double>(x.values[i * K + k]) * w.values[j * K + k];
          c[i * N + j] = acc;
        }
      }
      std::vector<int64_t> shape(x.shape.begin(), x.shape.end() - 1);
      shape.push_back(N);
      return std::vector<HostTensor>{FromLong(shape, x.dtype, c)};
    };
    db.push_back(std::move(op));
  }
  {
    // PyTorch 1.13's CPU convolution takes every integer type on its plain paths (int64 only
    // when dilated or transposed, where Tessera takes them all, computed exactly) and refuses
    // float16; Tessera's loops take float16 as well.
    constexpr DtypeMask kConvDtypes = kNumericMask;
    OpInfo op = ConvOp("convolution", ConvForm::kNative, 0, kConvDtypes);
    op.out = "convolution.out";
    op.errors = [](Rng& rng) {
      const tsr_dtype f = TSR_DTYPE_FLOAT32;
      return std::vector<ErrorInput>{
          ConvError(rng, {1, 3, 5, 5}, {2, 4, 3, 3}, f, {1}, {0}, false, 1,
                    "input channels that do not match the weight",
                    "expected input [1, 3, 5, 5] to have 4 channels"),
          ConvError(rng, {1, 4, 5, 5}, {3, 2, 3, 3}, f, {1}, {0}, false, 2,
                    "output channels not divisible by groups",
                    "Given groups=2, expected weight to be divisible by 2 at dimension 0"),
          ConvError(rng, {1, 4, 5}, {2, 4, 3, 3}, f, {1}, {0}, false, 1,
                    "a 3D input for a 4D weight",
                    "Expected 4D (batched) input to convolution for 4D weight [2, 4, 3, 3], but "
                    "got input of size: [1, 4, 5]"),
          ConvError(rng, {1, 3, 2, 2}, {2, 3, 3, 3}, f, {1}, {0}, false, 1,
                    "a kernel larger than the padded input",
                    "Kernel size can't be greater than actual input size"),
          ConvError(rng, {1, 3, 5, 5}, {2, 3, 3, 3}, TSR_DTYPE_FLOAT64, {1}, {0}, false, 1,
                    "a weight of another dtype",
                    "Input type (float32) and weight type (float64) should be the same"),
          ConvError(rng, {1, 3, 5, 5}, {2, 3, 3, 3}, f, {0}, {0}, false, 1, "stride 0",
                    "non-positive stride is not supported"),
          ConvError(rng, {1, 3, 5, 5}, {2, 3, 3, 3}, f, {1, 1, 1}, {0}, false, 1,
                    "three strides for two spatial dims",
                    "expected stride to be a single integer value or a list of 2 values to match "
                    "the convolution dimensions, but got stride=[1, 1, 1]"),
          ConvError(rng, {1, 3, 5, 5}, {3, 2, 3, 3}, f, {2}, {2}, true, 1,
                    "output_padding not below stride or dilation",
                    "output padding must be smaller than either stride or dilation"),
          ConvError(rng, {1, 2, 5, 5}, {3, 2, 3, 3}, f, {1}, {0}, true, 1,
                    "transposed: input channels that do not match weight dim 0",
                    "Given transposed=1, weight of size [3, 2, 3, 3], expected input [1, 2, 5, 5] "
                    "to have 3 channels, but got 2 channels instead"),
      };
    };
    db.push_back(std::move(op));
    db.push_back(ConvOp("conv1d", ConvForm::kConv, 1, kConvDtypes));
    db.push_back(ConvOp("conv2d", ConvForm::kConv, 2, kConvDtypes));
    db.push_back(ConvOp("conv3d", ConvForm::kConv, 3, kConvDtypes));
    for (int d = 1; d <= 3; ++d) {
      OpInfo padded =
          ConvOp("conv" + std::to_string(d) + "d.padding", ConvForm::kConvPadding, d, kConvDtypes);
      padded.errors = [d](Rng& rng) {
        std::vector<int64_t> in{1, 2}, w{2, 2};
        for (int i = 0; i < d; ++i) {
          in.push_back(5);
          w.push_back(3);
        }
        auto sample = [&](std::string mode, int64_t stride, std::string what) {
          return ErrorInput{{{Arg::Tensor(MakeTensor(in, TSR_DTYPE_FLOAT32, rng)),
                              Arg::Tensor(MakeTensor(w, TSR_DTYPE_FLOAT32, rng)), Arg::None(),
                              Arg::Ints({stride}), Arg::String(mode), Arg::Ints({1}), Arg::Int(1)},
                             what},
                            TSR_INVALID_ARGUMENT,
                            what};
        };
        return std::vector<ErrorInput>{
            Saying(sample("same", 2, "'same' with stride 2"),
                   "padding='same' is not supported for strided convolutions"),
            Saying(sample("full", 1, "padding 'full'"), "Invalid padding string: 'full'")};
      };
      db.push_back(std::move(padded));
    }
    db.push_back(ConvOp("conv_transpose1d", ConvForm::kConvTranspose, 1, kConvDtypes));
    db.push_back(ConvOp("conv_transpose2d.input", ConvForm::kConvTranspose, 2, kConvDtypes));
    db.push_back(ConvOp("conv_transpose3d.input", ConvForm::kConvTranspose, 3, kConvDtypes));
  }
  // Pooling: max_pool2d (values), max_pool2d_with_indices (values and indices, the native op
  // with its out= form) and avg_pool2d. PyTorch 1.13's CPU avg_pool2d also takes int64 (summed
  // in int64, divided with truncation toward zero); max pooling only floating types.
  for (const std::string name : {"max_pool2d", "max_pool2d_with_indices", "avg_pool2d"}) {
    const bool is_max = name != "avg_pool2d";
    const bool with_indices = name == "max_pool2d_with_indices";
    OpInfo op;
    op.name = name;
    op.out = with_indices ? "max_pool2d_with_indices.out" : is_max ? "" : "avg_pool2d.out";
    op.dtypes = is_max ? kFloatingMask : kFloatingMask | Bit(TSR_DTYPE_INT64);
    op.tolerance_scale = 4;
    op.samples = [is_max](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      // After PyTorch's sample_inputs_avgpool2d / max_pool2d: per-dim kernels, a default
      // stride ([] = the kernel), ceil_mode, padding counted or not, divisor_override, a
      // single-row input with a kernel of one row, dilation (max pooling: its last ceil_mode
      // window loses taps past the input) and an empty batch.
      struct C {
        std::vector<int64_t> in, k, stride, pad;
        bool ceil;
        bool include_pad;
        int64_t divisor;  // 0: None
        std::vector<int64_t> dilation;
      };
      // A window of 2^40 + 1 taps a side over a 3 x 3 plane, legal with the padding to match:
      // its taps inside the input are what count (a loop over every tap would never finish),
      // and average pooling divides by its padded area, 2^80 (past int64: PyTorch's int64
      // area overflows there).
      constexpr int64_t kWide = (int64_t{1} << 40) + 1;
      for (const C& c :
           std::vector<C>{{{2, 3, 7, 7}, {2}, {2}, {0}, false, true, 0, {1}},
                          {{2, 3, 3}, {kWide}, {1}, {kWide / 2}, false, true, 0, {1}},
                          {{1, 3, 3}, {kWide}, {1}, {kWide / 2}, false, false, 0, {1}},
                          {{1, 1, 3, 3}, {kWide, 3}, {1}, {kWide - 1, 1}, false, true, 0, {2, 1}},
                          {{1, 2, 9, 8}, {3}, {2}, {1}, true, true, 0, {1}},
                          {{3, 5, 5}, {3}, {1}, {1}, false, false, 0, {1}},
                          {{1, 1, 6, 6}, {3}, {3}, {1}, true, false, 0, {1}},
                          {{2, 3, 1, 9}, {1, 3}, {1, 3}, {0}, false, true, 0, {1}},
                          {{1, 2, 5, 6}, {3, 2}, {}, {1, 0}, false, true, 0, {1}},
                          {{1, 2, 6, 6}, {2, 3}, {2, 1}, {1}, false, true, 3, {1}},
                          {{2, 4, 4}, {3}, {2}, {1}, true, false, -2, {1}},
                          {{0, 2, 5, 5}, {2}, {2}, {0}, true, true, 0, {1}},
                          {{1, 2, 6, 6}, {2}, {2}, {0}, true, true, 0, {2}},
                          {{2, 7, 9}, {3, 2}, {2, 1}, {2, 1}, false, true, 0, {2, 3}}}) {
        if (is_max && c.divisor != 0) continue;
        if (!is_max && c.dilation != std::vector<int64_t>{1}) continue;
        std::vector<Arg> args{Arg::Tensor(MakeTensor(c.in, dtype, rng)), Arg::Ints(c.k),
                              Arg::Ints(c.stride), Arg::Ints(c.pad)};
        if (is_max) {
          args.push_back(Arg::Ints(c.dilation));
          args.push_back(Arg::Bool(c.ceil));
        } else {
          args.push_back(Arg::Bool(c.ceil));
          args.push_back(Arg::Bool(c.include_pad));
          args.push_back(c.divisor != 0 ? Arg::Int(c.divisor) : Arg::None());
        }
        s.push_back(
            {args,
             ShapeString(c.in) + " kernel " + ShapeString(c.k) + " stride " +
                 ShapeString(c.stride) + " pad " + ShapeString(c.pad) +
                 (c.dilation != std::vector<int64_t>{1} ? " dil " + ShapeString(c.dilation) : "") +
                 (c.ceil ? " ceil" : "") + (!is_max && !c.include_pad ? " exclude_pad" : "") +
                 (c.divisor != 0 ? " divisor " + std::to_string(c.divisor) : "")});
      }
      if (is_max) {
        // Two NaNs in one window: PyTorch's kernels (CPU and CUDA) keep the last one's index.
        const HostTensor x{dtype, {1, 1, 2, 4}, {NAN, 1, 3, NAN, NAN, 2, 5, 4}};
        s.push_back({{Arg::Tensor(x), Arg::Ints({2}), Arg::Ints({2}), Arg::Ints({0}),
                      Arg::Ints({1}), Arg::Bool(false)},
                     "[1, 1, 2, 4] kernel [2] with NaNs: the last NaN of a window wins"});
      }
      return s;
    };
    op.reference = [is_max, with_indices](const Sample& s) {
      const HostTensor& x = s.args[0].tensor;
      auto per = [](const std::vector<int64_t>& v, int d, const std::vector<int64_t>& fallback) {
        return v.empty() ? fallback[d] : v.size() == 1 ? v[0] : v[d];
      };
      const std::vector<int64_t>& kv = s.args[1].ints;
      const int64_t k[2] = {per(kv, 0, kv), per(kv, 1, kv)};
      const std::vector<int64_t> kk{k[0], k[1]};
      const int64_t st[2] = {per(s.args[2].ints, 0, kk), per(s.args[2].ints, 1, kk)};
      const int64_t pad[2] = {per(s.args[3].ints, 0, {0, 0}), per(s.args[3].ints, 1, {0, 0})};
      const int64_t dil[2] = {is_max ? per(s.args[4].ints, 0, {1, 1}) : 1,
                              is_max ? per(s.args[4].ints, 1, {1, 1}) : 1};
      const bool ceil = is_max ? s.args[5].boolean : s.args[4].boolean;
      const bool include_pad = is_max ? true : s.args[5].boolean;
      const bool has_divisor = !is_max && s.args[6].kind == Arg::Kind::kInt;
      const int64_t H = x.shape[x.dim() - 2], W = x.shape[x.dim() - 1],
                    planes = x.numel() / (H * W);
      auto size = [&](int64_t in, int d) {
        const int64_t span = in + 2 * pad[d] - dil[d] * (k[d] - 1) - 1;
        int64_t o = (span + (ceil ? st[d] - 1 : 0)) / st[d] + 1;
        if (ceil && (o - 1) * st[d] >= in + pad[d]) --o;
        return o;
      };
      const int64_t OH = size(H, 0), OW = size(W, 1);
      std::vector<long double> out;
      std::vector<long double> indices;
      for (int64_t p = 0; p < planes; ++p)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            if (is_max) {
              // The first maximum in row-major window order; a NaN beats everything, and a
              // later NaN the earlier one (PyTorch's `val > maxval || isnan(val)`).
              // The window's taps are the input positions base + i * dil for i in [0, k):
              // walking the input (not the taps) keeps the order and visits H * W at most.
              double best = -INFINITY;
              int64_t best_i = -1;
              const int64_t h_base = oh * st[0] - pad[0], w_base = ow * st[1] - pad[1];
              auto is_tap = [](int64_t pos, int64_t base, int64_t d, int64_t taps) {
                const int64_t t = pos - base;
                return t >= 0 && t % d == 0 && t / d < taps;
              };
              for (int64_t h = 0; h < H; ++h)
                for (int64_t w = 0; w < W; ++w) {
                  if (!is_tap(h, h_base, dil[0], k[0]) || !is_tap(w, w_base, dil[1], k[1])) {
                    continue;
                  }
                  const double v = x.values[(p * H + h) * W + w];
                  if (best_i < 0 || std::isnan(v) || v > best) {
                    best = v;
                    best_i = h * W + w;
                  }
                }
              out.push_back(best);
              indices.push_back(best_i);
              continue;
            }
            int64_t h0 = oh * st[0] - pad[0], w0 = ow * st[1] - pad[1];
            int64_t h1 = std::min(h0 + k[0], H + pad[0]), w1 = std::min(w0 + k[1], W + pad[1]);
            const long double pool = static_cast<long double>(h1 - h0) * (w1 - w0);
            h0 = std::max<int64_t>(h0, 0);
            w0 = std::max<int64_t>(w0, 0);
            h1 = std::min(h1, H);
            w1 = std::min(w1, W);
            long double acc = 0;
            for (int64_t h = h0; h < h1; ++h)
              for (int64_t w = w0; w < w1; ++w) acc += x.values[(p * H + h) * W + w];
            const long double divisor = has_divisor   ? s.args[6].integer
                                        : include_pad ? pool
                                                      : (h1 - h0) * (w1 - w0);
            // Integer division truncates toward zero, which RoundTo's cast does.
            out.push_back(acc / divisor);
          }
      std::vector<int64_t> shape(x.shape.begin(), x.shape.end() - 2);
      shape.push_back(OH);
      shape.push_back(OW);
      std::vector<HostTensor> r{FromLong(shape, x.dtype, out)};
      if (with_indices) r.push_back(FromLong(shape, TSR_DTYPE_INT64, indices));
      return r;
    };
    op.errors = [](Rng& rng) {
      return std::vector<ErrorInput>{
          Saying({{{Arg::Tensor(MakeTensor({1, 1, 4, 4}, TSR_DTYPE_FLOAT32, rng)), Arg::Ints({2}),
                    Arg::Ints({2}), Arg::Ints({2})},
                   "padding 2 for kernel 2"},
                  TSR_INVALID_ARGUMENT,
                  "padding above half the kernel"},
                 "pad should be at most half of effective kernel size, but got pad=2, "
                 "kernel_size=2 and dilation=1"),
          Saying({{{Arg::Tensor(MakeTensor({1, 1, 1}, TSR_DTYPE_FLOAT32, rng)), Arg::Ints({3}),
                    Arg::Ints({3}), Arg::Ints({0})},
                   "[1, 1, 1] kernel 3 stride 3"},
                  TSR_INVALID_ARGUMENT,
                  "an input smaller than the kernel (a negative span)"},
                 "output size is too small (input [1, 1, 1], kernel 3)"),
          // Note [Window arithmetic in 128 bits] in dispatcher/ops/nn_ops.cc: the padded
          // input, 4 + 2 * (2^62 - 1), passes int64 (signed overflow before the fix).
          Saying({{{Arg::Tensor(MakeTensor({1, 1, 4, 4}, TSR_DTYPE_FLOAT32, rng)),
                    Arg::Ints({std::numeric_limits<int64_t>::max()}), Arg::Ints({1}),
                    Arg::Ints({(int64_t{1} << 62) - 1})},
                   "[1, 1, 4, 4] kernel INT64_MAX pad 2^62 - 1"},
                  TSR_INVALID_ARGUMENT,
                  "a padded input beyond int64"},
                 "the window arithmetic of spatial dim 0 overflows int64")};
    };
    db.push_back(std::move(op));
  }
  // Layer norm: the composite (its output) and the native op with its out= form (the output,
  // and per row the mean and 1 / sqrt(biased variance + eps), of shape [*, 1, ...]).
  for (const bool native : {false, true}) {
    OpInfo op;
    op.name = native ? "native_layer_norm" : "layer_norm";
    op.out = native ? "native_layer_norm.out" : "";
    op.dtypes = kFloatingMask;
    op.tolerance_scale = 10;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      s.push_back({{Arg::Tensor(MakeTensor({4, 7}, dtype, rng)), Arg::Ints({7}),
                    Arg::Tensor(MakeTensor({7}, dtype, rng)),
                    Arg::Tensor(MakeTensor({7}, dtype, rng)), Arg::Double(1e-5)},
                   "[4, 7] over [7] with weight and bias"});
      s.push_back({{Arg::Tensor(MakeTensor({2, 3, 5}, dtype, rng)), Arg::Ints({3, 5}), Arg::None(),
                    Arg::None(), Arg::Double(1e-3)},
                   "[2, 3, 5] over [3, 5]"});
      // After PyTorch's sample_inputs_native_layer_norm: a 1-D input over all of it, rows of
      // one element (variance 0: 1 / sqrt(eps)), and an empty batch.
      s.push_back({{Arg::Tensor(MakeTensor({6}, dtype, rng)), Arg::Ints({6}),
                    Arg::Tensor(MakeTensor({6}, dtype, rng)), Arg::None(), Arg::Double(1e-5)},
                   "[6] over [6] with weight"});
      s.push_back({{Arg::Tensor(MakeTensor({3, 1}, dtype, rng)), Arg::Ints({1}), Arg::None(),
                    Arg::Tensor(MakeTensor({1}, dtype, rng)), Arg::Double(0.5)},
                   "[3, 1] over [1] with bias"});
      s.push_back({{Arg::Tensor(MakeTensor({0, 7}, dtype, rng)), Arg::Ints({7}), Arg::None(),
                    Arg::None(), Arg::Double(1e-5)},
                   "[0, 7] over [7]"});
      return s;
    };
    op.reference = [native](const Sample& s) {
      const HostTensor& x = s.args[0].tensor;
      int64_t n = 1;
      for (int64_t d : s.args[1].ints) n *= d;
      const double eps = s.args[4].number;
      HostTensor out = x;
      HostTensor mean_t, rstd_t;
      mean_t.dtype = rstd_t.dtype = x.dtype;
      mean_t.shape = x.shape;
      for (size_t d = x.shape.size() - s.args[1].ints.size(); d < x.shape.size(); ++d) {
        mean_t.shape[d] = 1;
      }
      rstd_t.shape = mean_t.shape;
      for (int64_t r = 0; r < x.numel() / n; ++r) {
        long double mean = 0, var = 0;
        for (int64_t i = 0; i < n; ++i) mean += x.values[r * n + i];
        mean /= n;
        for (int64_t i = 0; i < n; ++i)
          var += (x.values[r * n + i] - mean) * (x.values[r * n + i] - mean);
        var /= n;
        const double rstd = 1 / std::sqrt(static_cast<double>(var) + eps);
        for (int64_t i = 0; i < n; ++i) {
          long double v = (x.values[r * n + i] - mean) * rstd;
          if (s.args[2].kind == Arg::Kind::kTensor) v *= s.args[2].tensor.values[i];
          if (s.args[3].kind == Arg::Kind::kTensor) v += s.args[3].tensor.values[i];
          out.values[r * n + i] = RoundTo(x.dtype, static_cast<double>(v));
        }
        mean_t.values.push_back(RoundTo(x.dtype, static_cast<double>(mean)));
        rstd_t.values.push_back(RoundTo(x.dtype, rstd));
      }
      if (!native) return std::vector<HostTensor>{out};
      return std::vector<HostTensor>{out, mean_t, rstd_t};
    };
    if (native) {
      op.errors = [](Rng& rng) {
        const tsr_dtype f = TSR_DTYPE_FLOAT32;
        return std::vector<ErrorInput>{
            Saying({{{Arg::Tensor(MakeTensor({2, 3}, f, rng)), Arg::Ints({4}), Arg::None(),
                      Arg::None(), Arg::Double(1e-5)},
                     "[2, 3] over [4]"},
                    TSR_INVALID_ARGUMENT,
                    "normalized_shape that is not the input's trailing shape"},
                   "given normalized_shape=[4], expected input with shape [*, 4], but got input "
                   "of size [2, 3]"),
            Saying({{{Arg::Tensor(MakeTensor({2, 3}, f, rng)), Arg::Ints({3}),
                      Arg::Tensor(MakeTensor({3}, TSR_DTYPE_FLOAT64, rng)), Arg::None(),
                      Arg::Double(1e-5)},
                     "a float64 weight for a float32 input"},
                    TSR_INVALID_ARGUMENT,
                    "a weight of another dtype"},
                   "expected 'weight' to have dtype float32 (the input's), got float64")};
      };
    }
    db.push_back(std::move(op));
  }
  // Batch norm (native, composite) and instance norm.
  for (const char* name : {"native_batch_norm", "batch_norm"}) {
    const bool native = std::string(name) == "native_batch_norm";
    OpInfo op;
    op.name = name;
    op.out = native ? "native_batch_norm.out" : "";
    op.dtypes = kFloatingMask;
    op.tolerance_scale = 10;
    op.mutated_args = {3, 4};
    op.samples = [native](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      std::vector<BatchNormCase> cases = BatchNormCases();
      // An empty batch: the composite returns early (PyTorch's native op divides by zero).
      if (!native) cases.push_back({{0, 3, 4}, true, true, true, true, 0.1, 1e-5});
      for (const BatchNormCase& c : cases) {
        std::vector<Arg> args = BatchNormArgs(c, dtype, rng);
        if (!native) args.push_back(Arg::Bool(false));  // cudnn_enabled
        s.push_back({args, BatchNormDesc(c)});
      }
      return s;
    };
    op.reference = [native](const Sample& s) {
      std::vector<HostTensor> r = BatchNormReference(s);
      if (!native) r.erase(r.begin() + 1, r.begin() + 3);  // the composite returns out only
      return r;
    };
    op.errors = [](Rng& rng) {
      const tsr_dtype f = TSR_DTYPE_FLOAT32;
      return std::vector<ErrorInput>{
          Saying({{{Arg::Tensor(MakeTensor({2, 3}, f, rng)), Arg::None(), Arg::None(),
                    Arg::None(), Arg::None(), Arg::Bool(false), Arg::Double(0.1),
                    Arg::Double(1e-5)},
                   "inference without running statistics"},
                  TSR_INVALID_ARGUMENT,
                  "running_mean must be defined in evaluation mode"},
                 "running_mean must be defined in evaluation mode"),
          Saying({{{Arg::Tensor(MakeTensor({2, 3}, f, rng)), Arg::Tensor(MakeTensor({4}, f, rng)),
                    Arg::None(), Arg::None(), Arg::None(), Arg::Bool(true), Arg::Double(0.1),
                    Arg::Double(1e-5)},
                   "weight of 4 for 3 channels"},
                  TSR_INVALID_ARGUMENT,
                  "a weight that does not match the channels"},
                 "expected weight of shape [3] (the input's channels), got [4]"),
          Saying({{{Arg::Tensor(MakeTensor({2, 3}, TSR_DTYPE_INT64, rng)), Arg::None(),
                    Arg::None(), Arg::None(), Arg::None(), Arg::Bool(true), Arg::Double(0.1),
                    Arg::Double(1e-5)},
                   "an int64 input"},
                  TSR_INVALID_ARGUMENT,
                  "an integer input"},
                 "expected 'input' to be a floating point tensor, got int64")};
    };
    if (!native) op.errors = nullptr;
    db.push_back(std::move(op));
  }
  {
    OpInfo op;
    op.name = "instance_norm";
    op.dtypes = kFloatingMask;
    op.tolerance_scale = 10;
    op.mutated_args = {3, 4};
    // After PyTorch's sample_inputs_instance_norm: with and without weight, bias and running
    // statistics, 3D to 5D inputs, a batch of 1, momentum 0 and 1; and the running statistics
    // alone (use_input_stats=False).
    struct C {
      std::vector<int64_t> shape;
      bool affine, running, use_input_stats;
      double momentum, eps;
    };
    static const std::vector<C> cases{{{2, 3, 5}, true, true, true, 0.1, 1e-5},
                                      {{3, 2, 4, 3}, false, true, true, 0.5, 1e-3},
                                      {{1, 3, 2, 2, 3}, true, false, true, 0.1, 1e-5},
                                      {{2, 2, 6}, false, false, true, 0.0, 1e-5},
                                      {{2, 3, 4}, true, true, true, 1.0, 1e-5},
                                      {{2, 3, 4}, true, true, false, 0.1, 1e-5}};
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      MakeOptions positive;
      positive.positive = true;
      std::vector<Sample> s;
      for (const C& c : cases) {
        const int64_t ch = c.shape[1];
        auto opt = [&](bool present, bool pos) {
          return present ? Arg::Tensor(MakeTensor({ch}, dtype, rng, pos ? positive : MakeOptions{}))
                         : Arg::None();
        };
        s.push_back({{Arg::Tensor(MakeTensor(c.shape, dtype, rng)), opt(c.affine, false),
                      opt(c.affine, false), opt(c.running, false), opt(c.running, true),
                      Arg::Bool(c.use_input_stats), Arg::Double(c.momentum), Arg::Double(c.eps),
                      Arg::Bool(false)},
                     ShapeString(c.shape) + (c.affine ? " affine" : "") +
                         (c.running ? " running stats" : "") +
                         (c.use_input_stats ? "" : " use_input_stats=False") + " momentum " +
                         std::to_string(c.momentum)});
      }
      return s;
    };
    op.reference = [](const Sample& s) {
      // Each (n, c) plane is its own batch-norm channel; the running statistics take the
      // mean over n of the per-plane updates.
      const HostTensor& x = s.args[0].tensor;
      const int64_t N = x.shape[0], C = x.shape[1], inner = x.numel() / (N * C);
      const bool use_input_stats = s.args[5].boolean;
      const double momentum = s.args[6].number, eps = s.args[7].number;
      const bool running = s.args[3].kind == Arg::Kind::kTensor;
      HostTensor out = x;
      HostTensor rm = running ? s.args[3].tensor : HostTensor{},
                 rv = running ? s.args[4].tensor : HostTensor{};
      std::vector<long double> rm_sum(static_cast<size_t>(C), 0), rv_sum(static_cast<size_t>(C), 0);
      for (int64_t n = 0; n < N; ++n) {
        for (int64_t c = 0; c < C; ++c) {
          const double* p = &x.values[(n * C + c) * inner];
          long double mean, var;
          if (use_input_stats) {
            long double sum = 0, sq = 0;
            for (int64_t i = 0; i < inner; ++i) sum += p[i];
            mean = sum / inner;
            for (int64_t i = 0; i < inner; ++i) sq += (p[i] - mean) * (p[i] - mean);
            var = sq / inner;
            if (running) {
              rm_sum[c] += momentum * mean + (1 - momentum) * s.args[3].tensor.values[c];
              rv_sum[c] +=
                  momentum * (sq / (inner - 1)) + (1 - momentum) * s.args[4].tensor.values[c];
            }
          } else {
            mean = s.args[3].tensor.values[c];
            var = s.args[4].tensor.values[c];
          }
          const long double inv = 1 / std::sqrt(static_cast<double>(var) + eps);
          for (int64_t i = 0; i < inner; ++i) {
            long double v = (p[i] - mean) * inv;
            if (s.args[1].kind == Arg::Kind::kTensor) v *= s.args[1].tensor.values[c];
            if (s.args[2].kind == Arg::Kind::kTensor) v += s.args[2].tensor.values[c];
            out.values[(n * C + c) * inner + i] = RoundTo(x.dtype, static_cast<double>(v));
          }
        }
      }
      std::vector<HostTensor> r{out};
      if (running) {
        if (use_input_stats) {
          for (int64_t c = 0; c < C; ++c) {
            rm.values[c] = RoundTo(rm.dtype, static_cast<double>(rm_sum[c] / N));
            rv.values[c] = RoundTo(rv.dtype, static_cast<double>(rv_sum[c] / N));
          }
        }
        r.push_back(rm);
        r.push_back(rv);
      }
      return r;
    };
    op.errors = [](Rng& rng) {
      return std::vector<ErrorInput>{
          Saying({{{Arg::Tensor(MakeTensor({2, 3, 4}, TSR_DTYPE_FLOAT32, rng)), Arg::None(),
                    Arg::None(), Arg::None(), Arg::None(), Arg::Bool(false), Arg::Double(0.1),
                    Arg::Double(1e-5), Arg::Bool(false)},
                   "use_input_stats=False without running statistics"},
                  TSR_INVALID_ARGUMENT,
                  "no statistics to normalize with"},
                 "Expected running_mean and running_var to be defined when use_input_stats is "
                 "false")};
    };
    db.push_back(std::move(op));
  }
  AddLinalgProductOps(db);       // op set 1.8: mv, dot, addmv, addr, baddbmm, ...
  AddUpsampleOps(db);            // op set 1.9: upsample_* (nearest, linear, cubic)
  AddPoolingOps(db);             // op set 1.9: 1-D/3-D and adaptive pooling, max_unpool
  AddGroupNormAttentionOps(db);  // op set 1.9: group_norm, scaled_dot_product_attention
  AddEmbeddingBagOps(db);        // op set 1.10
  AddGridSamplerOps(db);         // op set 1.10
}

}  // namespace conformance
}  // namespace tessera

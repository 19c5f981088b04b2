// Matrix products and NN ops. References are direct loops in long double.
#include <cmath>

#include "conformance/op_db.h"

namespace tessera {
namespace conformance {
namespace {

// C[b] = A[b] @ B[b] for [B, M, K] x [B, K, N] (B = 1 for 2D), in long double.
std::vector<long double> MatMul(const HostTensor& a, const HostTensor& b, int64_t batches,
                                int64_t M, int64_t K, int64_t N) {
  std::vector<long double> c(static_cast<size_t>(batches * M * N), 0);
  for (int64_t t = 0; t < batches; ++t) {
    for (int64_t i = 0; i < M; ++i) {
      for (int64_t j = 0; j < N; ++j) {
        long double acc = 0;
        for (int64_t k = 0; k < K; ++k) {
          acc += static_cast<long double>(a.values[(t * M + i) * K + k]) *
                 b.values[(t * K + k) * N + j];
        }
        c[(t * M + i) * N + j] = acc;
      }
    }
  }
  return c;
}

HostTensor FromLong(std::vector<int64_t> shape, tsr_dtype dtype,
                    const std::vector<long double>& v) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  for (long double x : v) t.values.push_back(RoundTo(dtype, static_cast<double>(x)));
  return t;
}

MakeOptions Unit(tsr_dtype dtype) {
  MakeOptions o;
  if (IsFloating(dtype)) {
    o.low = -1;
    o.high = 1;
  }
  return o;
}

constexpr DtypeMask kMatmulDtypes = kNumericMask;  // PyTorch's CPU mm: every numeric type

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
      return std::vector<ErrorInput>{{{{Arg::Tensor(MakeTensor({2, 3}, TSR_DTYPE_FLOAT32, rng)),
                                        Arg::Tensor(MakeTensor({4, 2}, TSR_DTYPE_FLOAT32, rng))},
                                       "[2, 3] @ [4, 2]"},
                                      TSR_INVALID_ARGUMENT,
                                      "inner sizes that differ"},
                                     {{{Arg::Tensor(MakeTensor({2, 3}, TSR_DTYPE_FLOAT32, rng)),
                                        Arg::Tensor(MakeTensor({3, 2}, TSR_DTYPE_FLOAT64, rng))},
                                       "float32 @ float64"},
                                      TSR_INVALID_ARGUMENT,
                                      "different dtypes"},
                                     {{{Arg::Tensor(MakeTensor({2, 3, 1}, TSR_DTYPE_FLOAT32, rng)),
                                        Arg::Tensor(MakeTensor({3, 2}, TSR_DTYPE_FLOAT32, rng))},
                                       "3D @ 2D"},
                                      TSR_INVALID_ARGUMENT,
                                      "a 3D operand"}};
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
    OpInfo op;
    op.name = "conv2d";
    op.dtypes = Bit(TSR_DTYPE_FLOAT32) | Bit(TSR_DTYPE_FLOAT64) | Bit(TSR_DTYPE_BFLOAT16) |
                Bit(TSR_DTYPE_FLOAT16);
    op.tolerance_scale = 10;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      struct C {
        std::vector<int64_t> in, w;
        int64_t stride, pad, dil, groups;
      };
      for (const C& c : std::vector<C>{{{2, 4, 7, 7}, {6, 4, 3, 3}, 1, 1, 1, 1},
                                       {{1, 4, 9, 8}, {4, 2, 3, 2}, 2, 0, 1, 2},
                                       {{1, 3, 11, 11}, {2, 3, 3, 3}, 1, 2, 2, 1},
                                       {{3, 5, 5}, {2, 3, 1, 1}, 1, 0, 1, 1}}) {
        s.push_back(
            {{Arg::Tensor(MakeTensor(c.in, dtype, rng, Unit(dtype))),
              Arg::Tensor(MakeTensor(c.w, dtype, rng, Unit(dtype))),
              Arg::Tensor(MakeTensor({c.w[0]}, dtype, rng, Unit(dtype))), Arg::Ints({c.stride}),
              Arg::Ints({c.pad}), Arg::Ints({c.dil}), Arg::Int(c.groups)},
             ShapeString(c.in) + " * " + ShapeString(c.w) + " stride " + std::to_string(c.stride) +
                 " pad " + std::to_string(c.pad) + " dil " + std::to_string(c.dil) + " groups " +
                 std::to_string(c.groups)});
      }
      return s;
    };
    op.reference = [](const Sample& s) {
      HostTensor x = s.args[0].tensor;
      const HostTensor &w = s.args[1].tensor, &bias = s.args[2].tensor;
      const bool unbatched = x.dim() == 3;
      if (unbatched) x.shape.insert(x.shape.begin(), 1);
      const int64_t st = s.args[3].ints[0], pad = s.args[4].ints[0], dil = s.args[5].ints[0],
                    g = s.args[6].integer;
      const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
      const int64_t O = w.shape[0], IG = w.shape[1], KH = w.shape[2], KW = w.shape[3];
      const int64_t OH = (H + 2 * pad - dil * (KH - 1) - 1) / st + 1,
                    OW = (W + 2 * pad - dil * (KW - 1) - 1) / st + 1;
      (void)C;
      std::vector<long double> out;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t o = 0; o < O; ++o)
          for (int64_t oh = 0; oh < OH; ++oh)
            for (int64_t ow = 0; ow < OW; ++ow) {
              long double acc = bias.values[o];
              const int64_t grp = o / (O / g);
              for (int64_t c = 0; c < IG; ++c)
                for (int64_t kh = 0; kh < KH; ++kh)
                  for (int64_t kw = 0; kw < KW; ++kw) {
                    const int64_t h = oh * st - pad + kh * dil, ww = ow * st - pad + kw * dil;
                    if (h < 0 || h >= H || ww < 0 || ww >= W) continue;
                    acc += static_cast<long double>(
                               x.values[((n * x.shape[1] + grp * IG + c) * H + h) * W + ww]) *
                           w.values[((o * IG + c) * KH + kh) * KW + kw];
                  }
              out.push_back(acc);
            }
      std::vector<int64_t> shape{N, O, OH, OW};
      if (unbatched) shape.erase(shape.begin());
      return std::vector<HostTensor>{FromLong(shape, x.dtype, out)};
    };
    op.errors = [](Rng& rng) {
      return std::vector<ErrorInput>{
          {{{Arg::Tensor(MakeTensor({1, 3, 5, 5}, TSR_DTYPE_FLOAT32, rng)),
             Arg::Tensor(MakeTensor({2, 4, 3, 3}, TSR_DTYPE_FLOAT32, rng)), Arg::None()},
            "3 input channels for a weight of 4"},
           TSR_INVALID_ARGUMENT,
           "channels that do not match"}};
    };
    db.push_back(std::move(op));
  }
  // Pooling: values of max_pool2d and avg_pool2d.
  for (bool is_max : {true, false}) {
    OpInfo op;
    op.name = is_max ? "max_pool2d" : "avg_pool2d";
    op.out = is_max ? "" : "avg_pool2d.out";
    op.dtypes = kFloatingMask;
    op.tolerance_scale = 4;
    op.samples = [is_max](tsr_dtype dtype, Rng& rng) {
      std::vector<Sample> s;
      struct C {
        std::vector<int64_t> in;
        int64_t k, stride, pad;
        bool ceil;
        bool include_pad;
      };
      for (const C& c : std::vector<C>{{{2, 3, 7, 7}, 2, 2, 0, false, true},
                                       {{1, 2, 9, 8}, 3, 2, 1, true, true},
                                       {{3, 5, 5}, 3, 1, 1, false, false},
                                       {{1, 1, 6, 6}, 3, 3, 1, true, false}}) {
        std::vector<Arg> args{Arg::Tensor(MakeTensor(c.in, dtype, rng)), Arg::Ints({c.k}),
                              Arg::Ints({c.stride}), Arg::Ints({c.pad})};
        if (is_max) {
          args.push_back(Arg::Ints({1}));
          args.push_back(Arg::Bool(c.ceil));
        } else {
          args.push_back(Arg::Bool(c.ceil));
          args.push_back(Arg::Bool(c.include_pad));
        }
        s.push_back({args, ShapeString(c.in) + " kernel " + std::to_string(c.k) + " stride " +
                               std::to_string(c.stride) + " pad " + std::to_string(c.pad) +
                               (c.ceil ? " ceil" : "") +
                               (!is_max && !c.include_pad ? " exclude_pad" : "")});
      }
      return s;
    };
    op.reference = [is_max](const Sample& s) {
      const HostTensor& x = s.args[0].tensor;
      const int64_t k = s.args[1].ints[0], st = s.args[2].ints[0], pad = s.args[3].ints[0];
      const bool ceil = is_max ? s.args[5].boolean : s.args[4].boolean;
      const bool include_pad = is_max ? true : s.args[5].boolean;
      const int64_t H = x.shape[x.dim() - 2], W = x.shape[x.dim() - 1],
                    planes = x.numel() / (H * W);
      auto size = [&](int64_t in) {
        int64_t o = (in + 2 * pad - k + (ceil ? st - 1 : 0)) / st + 1;
        if (ceil && (o - 1) * st >= in + pad) --o;
        return o;
      };
      const int64_t OH = size(H), OW = size(W);
      std::vector<long double> out;
      for (int64_t p = 0; p < planes; ++p)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            int64_t h0 = oh * st - pad, w0 = ow * st - pad;
            int64_t h1 = std::min(h0 + k, H + pad), w1 = std::min(w0 + k, W + pad);
            const int64_t pool = (h1 - h0) * (w1 - w0);
            h0 = std::max<int64_t>(h0, 0);
            w0 = std::max<int64_t>(w0, 0);
            h1 = std::min(h1, H);
            w1 = std::min(w1, W);
            long double acc = is_max ? -INFINITY : 0;
            for (int64_t h = h0; h < h1; ++h)
              for (int64_t w = w0; w < w1; ++w) {
                const double v = x.values[(p * H + h) * W + w];
                acc = is_max ? (std::isnan(v) || v > acc ? v : acc) : acc + v;
              }
            out.push_back(is_max ? acc : acc / (include_pad ? pool : (h1 - h0) * (w1 - w0)));
          }
      std::vector<int64_t> shape(x.shape.begin(), x.shape.end() - 2);
      shape.push_back(OH);
      shape.push_back(OW);
      return std::vector<HostTensor>{FromLong(shape, x.dtype, out)};
    };
    op.errors = [](Rng& rng) {
      return std::vector<ErrorInput>{
          {{{Arg::Tensor(MakeTensor({1, 1, 4, 4}, TSR_DTYPE_FLOAT32, rng)), Arg::Ints({2}),
             Arg::Ints({2}), Arg::Ints({2})},
            "padding 2 for kernel 2"},
           TSR_INVALID_ARGUMENT,
           "padding above half the kernel"}};
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op;
    op.name = "layer_norm";
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
      return s;
    };
    op.reference = [](const Sample& s) {
      const HostTensor& x = s.args[0].tensor;
      int64_t n = 1;
      for (int64_t d : s.args[1].ints) n *= d;
      const double eps = s.args[4].number;
      HostTensor out = x;
      for (int64_t r = 0; r < x.numel() / n; ++r) {
        long double mean = 0, var = 0;
        for (int64_t i = 0; i < n; ++i) mean += x.values[r * n + i];
        mean /= n;
        for (int64_t i = 0; i < n; ++i)
          var += (x.values[r * n + i] - mean) * (x.values[r * n + i] - mean);
        var /= n;
        for (int64_t i = 0; i < n; ++i) {
          long double v = (x.values[r * n + i] - mean) / std::sqrt(static_cast<double>(var) + eps);
          if (s.args[2].kind == Arg::Kind::kTensor) v *= s.args[2].tensor.values[i];
          if (s.args[3].kind == Arg::Kind::kTensor) v += s.args[3].tensor.values[i];
          out.values[r * n + i] = RoundTo(x.dtype, static_cast<double>(v));
        }
      }
      return std::vector<HostTensor>{out};
    };
    db.push_back(std::move(op));
  }
  {
    OpInfo op;
    op.name = "batch_norm";
    op.dtypes = kFloatingMask;
    op.tolerance_scale = 10;
    op.samples = [](tsr_dtype dtype, Rng& rng) {
      MakeOptions positive;
      positive.positive = true;
      std::vector<Sample> s;
      for (const auto& shape : std::vector<std::vector<int64_t>>{{4, 3, 5, 5}, {6, 3}}) {
        s.push_back(
            {{Arg::Tensor(MakeTensor(shape, dtype, rng)), Arg::Tensor(MakeTensor({3}, dtype, rng)),
              Arg::Tensor(MakeTensor({3}, dtype, rng)), Arg::Tensor(MakeTensor({3}, dtype, rng)),
              Arg::Tensor(MakeTensor({3}, dtype, rng, positive)), Arg::Bool(false),
              Arg::Double(0.1), Arg::Double(1e-5), Arg::Bool(false)},
             ShapeString(shape) + " inference"});
      }
      return s;
    };
    op.reference = [](const Sample& s) {
      const HostTensor& x = s.args[0].tensor;
      const int64_t C = x.shape[1], inner = x.numel() / (x.shape[0] * C);
      const double eps = s.args[7].number;
      HostTensor out = x;
      for (int64_t i = 0; i < x.numel(); ++i) {
        const int64_t c = (i / inner) % C;
        const double v = (x.values[i] - s.args[3].tensor.values[c]) /
                             std::sqrt(s.args[4].tensor.values[c] + eps) *
                             s.args[1].tensor.values[c] +
                         s.args[2].tensor.values[c];
        out.values[i] = RoundTo(x.dtype, v);
      }
      return std::vector<HostTensor>{out};
    };
    db.push_back(std::move(op));
  }
}

}  // namespace conformance
}  // namespace tessera

// The normalizations' backward ops (op set 1.3, family "training"): native_layer_norm_backward
// and native_batch_norm_backward with their out= forms. References in double from the math
// (the gradients of y = (x - mean) * invstd * w + b, with the statistics as the forward gave
// them; docs/conformance.md), loop by loop, where the composites call ops; the formulas are
// the same derivation, so it is the gradient oracle (op_db_gradients.cc) that checks them
// independently, against the forward ops:
//   layer norm, per row of N elements: x_hat = (x - mean) * rstd, gx = g * w,
//     dx = rstd / N * (N gx - sum gx - x_hat sum(gx x_hat)), dw = sum over rows g x_hat,
//     db = sum over rows g
//   batch norm, per channel of N elements: x_hat = (x - mean) * invstd,
//     training  dx = w invstd (g - sum(g) / N - x_hat sum(g x_hat) / N)
//     inference dx = w invstd g, with invstd = 1 / sqrt(running_var + eps)
//     dw = sum g x_hat, db = sum g
// The samples follow PyTorch's OpInfo entries for the forward ops (their gradients are what
// OpInfo checks): real statistics of the input, with and without weight, empty batches. Every
// sample asks for all three gradients with the affine parameters given; output_mask's None
// returns and a missing weight are unit-tested (plugins/cpu/tests/norm_backward_test.cc), since
// the oracles compare tensors.
#include <cmath>

#include "conformance/op_db.h"

namespace tessera {
namespace conformance {
namespace {

const std::vector<bool> kAllGradients{true, true, true};

// The rows of `x` over its trailing `n` elements: each row's mean and 1 / sqrt(var + eps).
void RowStatistics(const HostTensor& x, int64_t n, double eps, std::vector<double>* mean,
                   std::vector<double>* rstd) {
  const int64_t rows = n == 0 ? 0 : x.numel() / n;
  for (int64_t r = 0; r < rows; ++r) {
    long double sum = 0, sq = 0;
    for (int64_t i = 0; i < n; ++i) sum += x.values[r * n + i];
    const long double m = sum / n;
    for (int64_t i = 0; i < n; ++i) sq += (x.values[r * n + i] - m) * (x.values[r * n + i] - m);
    mean->push_back(static_cast<double>(m));
    rstd->push_back(1 / std::sqrt(static_cast<double>(sq / n) + eps));
  }
}

HostTensor Rounded(tsr_dtype dtype, std::vector<int64_t> shape, const std::vector<double>& v) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  for (double x : v) t.values.push_back(RoundTo(dtype, x));
  return t;
}

void AddLayerNormBackward(std::vector<OpInfo>& db) {
  OpInfo op;
  op.name = "native_layer_norm_backward";
  op.out = "native_layer_norm_backward.out";
  op.dtypes = kFloatingMask;
  op.tolerance_scale = 20;  // two sums per row, and N gx minus them
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    struct C {
      std::vector<int64_t> shape, norm;
    };
    std::vector<Sample> s;
    for (const C& c : std::vector<C>{
             {{4, 7}, {7}}, {{2, 3, 5}, {3, 5}}, {{6}, {6}}, {{3, 1}, {1}}, {{0, 7}, {7}}}) {
      const HostTensor x = MakeTensor(c.shape, dtype, rng);
      int64_t n = 1;
      for (int64_t d : c.norm) n *= d;
      std::vector<double> mean, rstd;
      RowStatistics(x, n, 1e-5, &mean, &rstd);
      std::vector<int64_t> stat_shape = c.shape;
      for (size_t d = c.shape.size() - c.norm.size(); d < c.shape.size(); ++d) stat_shape[d] = 1;
      s.push_back({{Arg::Tensor(MakeTensor(c.shape, dtype, rng)), Arg::Tensor(x), Arg::Ints(c.norm),
                    Arg::Tensor(Rounded(dtype, stat_shape, mean)),
                    Arg::Tensor(Rounded(dtype, stat_shape, rstd)),
                    Arg::Tensor(MakeTensor(c.norm, dtype, rng)),
                    Arg::Tensor(MakeTensor(c.norm, dtype, rng)), Arg::Bools(kAllGradients)},
                   ShapeString(c.shape) + " over " + ShapeString(c.norm)});
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& g = s.args[0].tensor;
    const HostTensor& x = s.args[1].tensor;
    const std::vector<int64_t>& norm = s.args[2].ints;
    const HostTensor& mean = s.args[3].tensor;
    const HostTensor& rstd = s.args[4].tensor;
    const HostTensor& w = s.args[5].tensor;
    int64_t n = 1;
    for (int64_t d : norm) n *= d;
    const int64_t rows = n == 0 ? 0 : x.numel() / n;
    std::vector<double> dx(static_cast<size_t>(x.numel()), 0.0);
    std::vector<long double> dw(static_cast<size_t>(n), 0), dbias(static_cast<size_t>(n), 0);
    for (int64_t r = 0; r < rows; ++r) {
      long double sum_gx = 0, sum_gx_xhat = 0;
      auto x_hat = [&](int64_t i) {
        return (x.values[r * n + i] - mean.values[r]) * rstd.values[r];
      };
      for (int64_t i = 0; i < n; ++i) {
        const double gx = g.values[r * n + i] * w.values[i];
        sum_gx += gx;
        sum_gx_xhat += gx * x_hat(i);
        dw[i] += g.values[r * n + i] * x_hat(i);
        dbias[i] += g.values[r * n + i];
      }
      for (int64_t i = 0; i < n; ++i) {
        const long double gx = g.values[r * n + i] * w.values[i];
        dx[r * n + i] =
            static_cast<double>(rstd.values[r] / n * (n * gx - sum_gx - x_hat(i) * sum_gx_xhat));
      }
    }
    std::vector<double> dw_d(dw.begin(), dw.end()), db_d(dbias.begin(), dbias.end());
    return std::vector<HostTensor>{Rounded(x.dtype, x.shape, dx), Rounded(x.dtype, norm, dw_d),
                                   Rounded(x.dtype, norm, db_d)};
  };
  op.errors = [](Rng& rng) {
    auto f = [&rng](std::vector<int64_t> shape, tsr_dtype dtype = TSR_DTYPE_FLOAT32) {
      return Arg::Tensor(MakeTensor(std::move(shape), dtype, rng));
    };
    const Arg mask = Arg::Bools(kAllGradients);
    return std::vector<ErrorInput>{
        {{{f({2, 3}), f({2, 3}), Arg::Ints({4}), f({2, 1}), f({2, 1}), Arg::None(), Arg::None(),
           mask},
          "[2, 3] over [4]"},
         TSR_INVALID_ARGUMENT,
         "normalized_shape that is not the input's trailing shape",
         "expected input with shape [*, 4], but got input of size [2, 3]"},
        {{{f({2, 4}), f({2, 3}), Arg::Ints({3}), f({2, 1}), f({2, 1}), Arg::None(), Arg::None(),
           mask},
          "grad_out [2, 4] for an input [2, 3]"},
         TSR_INVALID_ARGUMENT,
         "a gradient of another shape than the input",
         "expected grad_out of shape [2, 3], got [2, 4]"},
        {{{f({2, 3}), f({2, 3}), Arg::Ints({3}), f({3, 1}), f({2, 1}), Arg::None(), Arg::None(),
           mask},
          "mean of 3 rows for 2"},
         TSR_INVALID_ARGUMENT,
         "a mean with another number of rows",
         "expected mean with 2 elements"},
        {{{f({2, 3}), f({2, 3}), Arg::Ints({3}), f({2, 1}), f({2, 1}), f({3}, TSR_DTYPE_FLOAT64),
           Arg::None(), mask},
          "a float64 weight for a float32 input"},
         TSR_INVALID_ARGUMENT,
         "a weight of another dtype",
         "expected weight to have the input's dtype float32, got float64"}};
  };
  db.push_back(std::move(op));
}

void AddBatchNormBackward(std::vector<OpInfo>& db) {
  OpInfo op;
  op.name = "native_batch_norm_backward";
  op.out = "native_batch_norm_backward.out";
  op.dtypes = kFloatingMask;
  op.tolerance_scale = 20;  // sums over each channel
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    struct C {
      std::vector<int64_t> shape;
      bool train, weight;
    };
    MakeOptions positive;
    positive.positive = true;
    std::vector<Sample> s;
    for (const C& c : std::vector<C>{{{3, 2, 4}, true, true},
                                     {{2, 3, 2, 2}, true, false},
                                     {{5, 4}, true, true},
                                     {{2, 3, 4}, false, true},
                                     {{4, 2}, false, false},
                                     {{0, 3, 2}, false, true}}) {
      const int64_t channels = c.shape[1];
      const HostTensor x = MakeTensor(c.shape, dtype, rng);
      const double eps = 1e-5;
      // The batch statistics per channel, as the forward saved them.
      const int64_t planes = c.shape[0] * channels;
      const int64_t inner = planes == 0 ? 0 : x.numel() / planes;
      std::vector<double> mean(static_cast<size_t>(channels)), invstd(mean.size());
      for (int64_t ch = 0; ch < channels; ++ch) {
        long double sum = 0, sq = 0;
        int64_t count = 0;
        for (int64_t b = 0; b < c.shape[0]; ++b) {
          for (int64_t i = 0; i < inner; ++i, ++count)
            sum += x.values[(b * channels + ch) * inner + i];
        }
        const long double m = count ? sum / count : 0;
        for (int64_t b = 0; b < c.shape[0]; ++b) {
          for (int64_t i = 0; i < inner; ++i) {
            const long double d = x.values[(b * channels + ch) * inner + i] - m;
            sq += d * d;
          }
        }
        mean[ch] = static_cast<double>(m);
        invstd[ch] = 1 / std::sqrt(static_cast<double>(count ? sq / count : 0) + eps);
      }
      const Arg running_mean = Arg::Tensor(MakeTensor({channels}, dtype, rng));
      const Arg running_var = Arg::Tensor(MakeTensor({channels}, dtype, rng, positive));
      s.push_back(
          {{Arg::Tensor(MakeTensor(c.shape, dtype, rng)), Arg::Tensor(x),
            c.weight ? Arg::Tensor(MakeTensor({channels}, dtype, rng)) : Arg::None(), running_mean,
            running_var, c.train ? Arg::Tensor(Rounded(dtype, {channels}, mean)) : Arg::None(),
            c.train ? Arg::Tensor(Rounded(dtype, {channels}, invstd)) : Arg::None(),
            Arg::Bool(c.train), Arg::Double(eps), Arg::Bools(kAllGradients)},
           ShapeString(c.shape) + (c.train ? " training" : " inference") +
               (c.weight ? " with weight" : "")});
    }
    return s;
  };
  op.reference = [](const Sample& s) {
    const HostTensor& g = s.args[0].tensor;
    const HostTensor& x = s.args[1].tensor;
    const bool has_weight = s.args[2].kind == Arg::Kind::kTensor;
    const bool train = s.args[7].boolean;
    const double eps = s.args[8].number;
    const int64_t batch = x.shape[0], channels = x.shape[1];
    const int64_t inner = batch * channels == 0 ? 0 : x.numel() / (batch * channels);
    const int64_t n = batch * inner;
    std::vector<double> dx(static_cast<size_t>(x.numel())), dw(static_cast<size_t>(channels)),
        dbias(static_cast<size_t>(channels));
    for (int64_t ch = 0; ch < channels; ++ch) {
      const double mean = train ? s.args[5].tensor.values[ch] : s.args[3].tensor.values[ch];
      const double invstd =
          train ? s.args[6].tensor.values[ch] : 1 / std::sqrt(s.args[4].tensor.values[ch] + eps);
      const double w = has_weight ? s.args[2].tensor.values[ch] : 1.0;
      auto at = [&](int64_t b, int64_t i) { return (b * channels + ch) * inner + i; };
      long double sum_g = 0, sum_g_xhat = 0;
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t i = 0; i < inner; ++i) {
          sum_g += g.values[at(b, i)];
          sum_g_xhat += g.values[at(b, i)] * (x.values[at(b, i)] - mean) * invstd;
        }
      }
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t i = 0; i < inner; ++i) {
          const long double x_hat = (x.values[at(b, i)] - mean) * invstd;
          const long double term =
              train ? g.values[at(b, i)] - sum_g / n - x_hat * sum_g_xhat / n : g.values[at(b, i)];
          dx[at(b, i)] = static_cast<double>(w * invstd * term);
        }
      }
      dw[ch] = static_cast<double>(sum_g_xhat);
      dbias[ch] = static_cast<double>(sum_g);
    }
    return std::vector<HostTensor>{Rounded(x.dtype, x.shape, dx), Rounded(x.dtype, {channels}, dw),
                                   Rounded(x.dtype, {channels}, dbias)};
  };
  op.errors = [](Rng& rng) {
    auto f = [&rng](std::vector<int64_t> shape, tsr_dtype dtype = TSR_DTYPE_FLOAT32) {
      return Arg::Tensor(MakeTensor(std::move(shape), dtype, rng));
    };
    const Arg mask = Arg::Bools(kAllGradients);
    const Arg eps = Arg::Double(1e-5);
    return std::vector<ErrorInput>{
        {{{f({2, 3}), f({2, 3}), Arg::None(), f({3}), f({3}), Arg::None(), Arg::None(),
           Arg::Bool(true), eps, mask},
          "training without save_mean and save_invstd"},
         TSR_INVALID_ARGUMENT,  // PyTorch 1.13's CPU kernel crashes here (docs/conformance.md)
         "training without the saved statistics",
         "expected save_mean and save_invstd to be defined when train is true"},
        {{{f({2, 3}), f({2, 3}), Arg::None(), Arg::None(), Arg::None(), f({3}), f({3}),
           Arg::Bool(false), eps, mask},
          "inference without running statistics"},
         TSR_INVALID_ARGUMENT,
         "inference without the running statistics",
         "expected running_mean and running_var to be defined when train is false"},
        {{{f({2, 3}), f({2, 3}), f({4}), Arg::None(), Arg::None(), f({3}), f({3}), Arg::Bool(true),
           eps, mask},
          "weight of 4 for 3 channels"},
         TSR_INVALID_ARGUMENT,
         "a weight that does not match the channels",
         "expected weight of shape [3], got [4]"},
        {{{f({3}), f({3}), Arg::None(), Arg::None(), Arg::None(), f({3}), f({3}), Arg::Bool(true),
           eps, mask},
          "a 1-D input"},
         TSR_INVALID_ARGUMENT,
         "an input without a channel dim",
         "expected an input with at least 2 dims [N, C, ...], got [3]"}};
  };
  db.push_back(std::move(op));
}

}  // namespace

void AddNormBackwardOps(std::vector<OpInfo>& db) {
  AddLayerNormBackward(db);
  AddBatchNormBackward(db);
}

}  // namespace conformance
}  // namespace tessera

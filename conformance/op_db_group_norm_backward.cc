// Group normalization's backward op (op set 1.10, family "training"): native_group_norm_backward
// and its out= form. The reference is the gradient of y = (x - mean) * rstd * w + b in its
// textbook form, per (sample, group) of M = C / group * HxW elements, with the statistics as
// the forward gave them:
//   x_hat = (x - mean) * rstd, gy = g * w[c] (or g),
//   dx = rstd * (gy - sum(gy) / M - x_hat * sum(gy * x_hat) / M)
//   dw[c] = sum over n and HxW of g * x_hat,  db[c] = sum over n and HxW of g
// where the composite follows ATen's kernel's rearrangement (c1, c2, c3 per group); the gradient
// oracle checks both against central differences of native_group_norm. Samples: several shapes
// and group counts, with and without a weight (grad_weight and grad_bias are returned either
// way, as ATen's), an empty batch, and for the 16-bit floats ATen's mixed type (float32
// statistics and weight, float32 grad_weight and grad_bias). Every sample asks for all three
// gradients; the gradient oracle's undefined-gradient cases try the other output_masks.
#include <cmath>
#include <string>
#include <vector>

#include "conformance/op_db.h"
#include "conformance/op_db_helpers.h"

namespace tessera {
namespace conformance {
namespace {

const std::vector<bool> kAllGradients{true, true, true};

// GroupStatistics: each (sample, group)'s mean and 1 / sqrt(biased var + eps) of `x` ([N, C,
// ...] as N * C * HxW row-major values), as native_group_norm returns them.
void GroupStatistics(const HostTensor& x, int64_t N, int64_t C, int64_t HxW, int64_t group,
                     double eps, std::vector<double>* mean, std::vector<double>* rstd) {
  const int64_t m = C / group * HxW;
  for (int64_t ng = 0; ng < N * group; ++ng) {
    long double sum = 0, sq = 0;
    for (int64_t i = 0; i < m; ++i) sum += x.values[ng * m + i];
    const long double mu = sum / m;
    for (int64_t i = 0; i < m; ++i) sq += (x.values[ng * m + i] - mu) * (x.values[ng * m + i] - mu);
    mean->push_back(static_cast<double>(mu));
    rstd->push_back(1 / std::sqrt(static_cast<double>(sq / m) + eps));
  }
}

struct Shape {
  std::vector<int64_t> shape;
  int64_t group;
  bool weight;
};

// The backward's sample for an input of `c.shape`: real statistics of the input.
Sample GroupNormSample(const Shape& c, tsr_dtype dtype, tsr_dtype param_dtype, Rng& rng) {
  const int64_t N = c.shape[0], C = c.shape.size() > 1 ? c.shape[1] : 1;
  int64_t HxW = 1;
  for (size_t d = 2; d < c.shape.size(); ++d) HxW *= c.shape[d];
  const HostTensor x = MakeTensor(c.shape, dtype, rng);
  std::vector<double> mean, rstd;
  GroupStatistics(x, N, C, HxW, c.group, 1e-5, &mean, &rstd);
  std::string desc = ShapeString(c.shape) + " in " + std::to_string(c.group) + " groups" +
                     (c.weight ? " with weight" : "");
  if (param_dtype != dtype) desc += " (mixed type)";
  return {{Arg::Tensor(MakeTensor(c.shape, dtype, rng)), Arg::Tensor(x),
           Arg::Tensor(Values(param_dtype, {N, c.group}, mean)),
           Arg::Tensor(Values(param_dtype, {N, c.group}, rstd)),
           c.weight ? Arg::Tensor(MakeTensor({C}, param_dtype, rng)) : Arg::None(), Arg::Int(N),
           Arg::Int(C), Arg::Int(HxW), Arg::Int(c.group), Arg::Bools(kAllGradients)},
          desc};
}

std::vector<HostTensor> GroupNormBackwardReference(const Sample& s) {
  const HostTensor& g = s.args[0].tensor;
  const HostTensor& x = s.args[1].tensor;
  const HostTensor& mean = s.args[2].tensor;
  const HostTensor& rstd = s.args[3].tensor;
  const bool has_weight = Given(s, 4);
  const int64_t N = s.args[5].integer, C = s.args[6].integer, HxW = s.args[7].integer;
  const int64_t group = s.args[8].integer;
  // grad_weight and grad_bias: the weight's dtype, or the input's without one.
  const tsr_dtype param_dtype = has_weight ? s.args[4].tensor.dtype : x.dtype;
  std::vector<double> dx(static_cast<size_t>(x.numel()), 0.0);
  std::vector<long double> dw(static_cast<size_t>(C), 0), dbias(static_cast<size_t>(C), 0);
  if (x.numel() > 0) {
    const int64_t D = C / group, M = D * HxW;
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t grp = 0; grp < group; ++grp) {
        const int64_t ng = n * group + grp;
        const double mu = mean.values[ng], rs = rstd.values[ng];
        auto at = [&](int64_t d, int64_t i) { return ((n * C) + grp * D + d) * HxW + i; };
        auto gy = [&](int64_t d, int64_t i) {
          return g.values[at(d, i)] * (has_weight ? s.args[4].tensor.values[grp * D + d] : 1.0);
        };
        long double sum_gy = 0, sum_gy_xhat = 0;
        for (int64_t d = 0; d < D; ++d) {
          for (int64_t i = 0; i < HxW; ++i) {
            const long double x_hat = (x.values[at(d, i)] - mu) * rs;
            sum_gy += gy(d, i);
            sum_gy_xhat += gy(d, i) * x_hat;
            dw[grp * D + d] += g.values[at(d, i)] * x_hat;
            dbias[grp * D + d] += g.values[at(d, i)];
          }
        }
        for (int64_t d = 0; d < D; ++d) {
          for (int64_t i = 0; i < HxW; ++i) {
            const long double x_hat = (x.values[at(d, i)] - mu) * rs;
            dx[at(d, i)] =
                static_cast<double>(rs * (gy(d, i) - sum_gy / M - x_hat * sum_gy_xhat / M));
          }
        }
      }
    }
  }
  return {Values(x.dtype, x.shape, dx),
          Values(param_dtype, {C}, std::vector<double>(dw.begin(), dw.end())),
          Values(param_dtype, {C}, std::vector<double>(dbias.begin(), dbias.end()))};
}

std::vector<ErrorInput> GroupNormBackwardErrors(Rng& rng) {
  auto t = [&rng](std::vector<int64_t> shape, tsr_dtype dtype = TSR_DTYPE_FLOAT32) {
    return Arg::Tensor(MakeTensor(std::move(shape), dtype, rng));
  };
  const Arg mask = Arg::Bools(kAllGradients);
  auto call = [&](Arg g, Arg x, Arg mean, Arg rstd, Arg w, int64_t N, int64_t C, int64_t HxW,
                  int64_t group) {
    return std::vector<Arg>{
        g, x, mean, rstd, w, Arg::Int(N), Arg::Int(C), Arg::Int(HxW), Arg::Int(group), mask};
  };
  const tsr_dtype f64 = TSR_DTYPE_FLOAT64, i64 = TSR_DTYPE_INT64;
  return {
      RefusedSaying(
          call(t({2, 4, 3}, f64), t({2, 4, 3}), t({2, 2}), t({2, 2}), Arg::None(), 2, 4, 3, 2),
          TSR_INVALID_ARGUMENT, "Expected scalar types of X and dY are same."),
      RefusedSaying(call(t({2, 4, 2}), t({2, 4, 3}), t({2, 2}), t({2, 2}), Arg::None(), 2, 4, 3, 2),
                    TSR_INVALID_ARGUMENT, "Expected dY.numel() == N * C * HxW"),
      RefusedSaying(call(t({2, 4, 3}), t({2, 4, 3}), t({1, 2}), t({2, 2}), Arg::None(), 2, 4, 3, 2),
                    TSR_INVALID_ARGUMENT, "Expected mean.numel() == N * group"),
      RefusedSaying(call(t({2, 4, 3}), t({2, 4, 3}), t({2, 2}), t({2, 2}), t({3}), 2, 4, 3, 2),
                    TSR_INVALID_ARGUMENT, "gamma.numel() == C"),
      RefusedSaying(
          call(t({2, 4, 3}), t({2, 4, 3}), t({2, 2}, f64), t({2, 2}, f64), Arg::None(), 2, 4, 3, 2),
          TSR_INVALID_ARGUMENT, "mixed dtype (CPU): all inputs must share same datatype."),
      RefusedSaying(
          call(t({2, 4, 3}), t({2, 4, 3}), t({2, 2}), t({2, 2}, f64), Arg::None(), 2, 4, 3, 2),
          TSR_INVALID_ARGUMENT, "expected scalar type Float but found Double"),
      RefusedSaying(call(t({2, 4, 3}), t({2, 4, 3}), t({2, 3}), t({2, 3}), Arg::None(), 2, 4, 3, 3),
                    TSR_INVALID_ARGUMENT, "to be evenly-divisible by number of groups"),
      RefusedSaying(call(t({2, 4, 3}, i64), t({2, 4, 3}, i64), t({2, 2}, i64), t({2, 2}, i64),
                         Arg::None(), 2, 4, 3, 2),
                    TSR_UNIMPLEMENTED, "not implemented for dtype int64"),
  };
}

// The gradient oracle's link: native_group_norm(input, weight, bias, N, C, HxW, group, eps), its
// gradients for input, weight and bias from native_group_norm_backward(grad, input, result1,
// result2, weight, N, C, HxW, group, grad_input_mask), as derivatives.yaml calls it.
GradientSpec GroupNormGradient() {
  GradientSpec spec;
  spec.forward = "native_group_norm";
  spec.samples = [](Rng& rng) {
    MakeOptions range;
    range.low = -4;
    range.high = 4;
    auto f64 = [&](std::vector<int64_t> shape) {
      return Arg::Tensor(MakeTensor(std::move(shape), TSR_DTYPE_FLOAT64, rng, range));
    };
    struct C {
      std::vector<int64_t> shape;
      int64_t group;
    };
    std::vector<Sample> samples;
    for (const C& c : std::vector<C>{
             {{2, 4, 3}, 2}, {{3, 6, 2, 2}, 3}, {{2, 3, 4}, 1}, {{2, 4}, 2}, {{1, 6, 5}, 2}}) {
      const int64_t N = c.shape[0], C = c.shape[1];
      int64_t HxW = 1;
      for (size_t d = 2; d < c.shape.size(); ++d) HxW *= c.shape[d];
      samples.push_back({{f64(c.shape), f64({C}), f64({C}), Arg::Int(N), Arg::Int(C), Arg::Int(HxW),
                          Arg::Int(c.group), Arg::Double(1e-5)},
                         ShapeString(c.shape) + " in " + std::to_string(c.group) + " groups"});
    }
    return samples;
  };
  spec.wrt = {0, 1, 2};
  spec.output = 0;
  spec.backward_args = [](const Sample& s, const std::vector<HostTensor>& r, const HostTensor& g) {
    return std::vector<Arg>{
        Arg::Tensor(g), s.args[0], Arg::Tensor(r[1]), Arg::Tensor(r[2]), s.args[1],
        s.args[3],      s.args[4], s.args[5],         s.args[6],         Arg::Bools(kAllGradients)};
  };
  return spec;
}

}  // namespace

void AddGroupNormBackwardOps(std::vector<OpInfo>& db) {
  OpInfo op;
  op.name = "native_group_norm_backward";
  op.out = "native_group_norm_backward.out";
  op.dtypes = kFloatingMask;
  op.tolerance_scale = 20;  // sums over each channel and group, then differences of them
  op.samples = [](tsr_dtype dtype, Rng& rng) {
    std::vector<Sample> s;
    for (const Shape& c : std::vector<Shape>{{{2, 4, 3}, 2, true},
                                             {{3, 6, 2, 2}, 3, true},
                                             {{2, 6, 5}, 1, false},
                                             {{2, 4}, 2, true},
                                             {{1, 4, 7}, 2, false},
                                             {{4, 2, 3}, 2, true},
                                             {{0, 4, 3}, 2, true}}) {
      s.push_back(GroupNormSample(c, dtype, dtype, rng));
    }
    if (dtype == TSR_DTYPE_FLOAT16 || dtype == TSR_DTYPE_BFLOAT16) {
      // ATen's mixed type: float32 statistics and weight for a 16-bit input.
      s.push_back(GroupNormSample({{2, 4, 3}, 2, true}, dtype, TSR_DTYPE_FLOAT32, rng));
      s.push_back(GroupNormSample({{2, 6, 2}, 3, false}, dtype, TSR_DTYPE_FLOAT32, rng));
    }
    return s;
  };
  op.reference = GroupNormBackwardReference;
  op.errors = GroupNormBackwardErrors;
  op.gradient = GroupNormGradient();
  db.push_back(std::move(op));
}

}  // namespace conformance
}  // namespace tessera

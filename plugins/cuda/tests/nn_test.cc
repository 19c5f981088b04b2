// The GPU nn ops on the host (Note [GPU nn kernels] in nn.h): the plans, and each kernel's
// per-thread work run for every thread of every block, phase by phase between the barriers, as
// kernels_nn.cu runs it on a GPU, against float64 references written here.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nn_plan.h"

namespace tessera {
namespace gpu {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// --- host tensors ---------------------------------------------------------------------------

template <typename S>
double ToD(S v) {
  return static_cast<double>(Widen(v));
}
template <typename S>
S FromD(double d) {
  if constexpr (kIsFloat<S>) {
    return Narrow<S>(static_cast<OpMath<S>>(d));
  } else {
    return static_cast<S>(static_cast<int64_t>(d));
  }
}

std::vector<int64_t> Unravel(const std::vector<int64_t>& sizes, int64_t i) {
  std::vector<int64_t> idx(sizes.size());
  for (size_t d = sizes.size(); d-- > 0;) {
    idx[d] = i % sizes[d];
    i /= sizes[d];
  }
  return idx;
}

int64_t Numel(const std::vector<int64_t>& sizes) {
  return std::accumulate(sizes.begin(), sizes.end(), int64_t{1}, std::multiplies<int64_t>());
}

// HostTensor: `sizes` laid out in memory in `order` (outermost first; empty: row-major), the
// innermost stride `gap` (> 1: not dense), every other element of the buffer a poison value.
template <typename S>
struct HostTensor {
  std::vector<S> data;
  std::vector<int64_t> sizes, strides;

  HostTensor() = default;
  HostTensor(std::vector<int64_t> s, std::vector<int> order = {}, int64_t gap = 1) : sizes(s) {
    if (order.empty()) {
      order.resize(sizes.size());
      std::iota(order.begin(), order.end(), 0);
    }
    strides.assign(sizes.size(), 0);
    int64_t step = gap;
    for (size_t k = order.size(); k-- > 0;) {
      strides[order[k]] = step;
      step *= std::max<int64_t>(sizes[order[k]], 1);
    }
    S poison;
    if constexpr (kIsFloat<S>) {
      poison = FromD<S>(kNan);
    } else {
      poison = static_cast<S>(99);
    }
    data.assign(static_cast<size_t>(std::max<int64_t>(step, 1)), poison);
  }
  int64_t Offset(const std::vector<int64_t>& idx) const {
    int64_t o = 0;
    for (size_t d = 0; d < idx.size(); ++d) o += idx[d] * strides[d];
    return o;
  }
  double At(const std::vector<int64_t>& idx) const { return ToD(data[Offset(idx)]); }
  double Flat(int64_t i) const { return At(Unravel(sizes, i)); }
  void Set(const std::vector<int64_t>& idx, double v) { data[Offset(idx)] = FromD<S>(v); }
  NnOperand Op() {
    NnOperand o;
    o.data = reinterpret_cast<char*>(data.data());
    o.sizes = sizes;
    o.strides = strides;
    return o;
  }
  // Fills the logical elements with values from `gen` (rounded to S).
  void Fill(const std::function<double()>& gen) {
    for (int64_t i = 0; i < Numel(sizes); ++i) Set(Unravel(sizes, i), gen());
  }
};

std::function<double()> Uniform(uint32_t seed, double lo = -2, double hi = 2) {
  auto rng = std::make_shared<std::mt19937>(seed);
  return [rng, lo, hi] { return std::uniform_real_distribution<double>(lo, hi)(*rng); };
}
std::function<double()> Ints(uint32_t seed, int lo, int hi) {
  auto rng = std::make_shared<std::mt19937>(seed);
  return [rng, lo, hi] { return std::uniform_int_distribution<int>(lo, hi)(*rng); };
}

// Tolerance of a float64 reference against a result computed in S.
template <typename S>
double Tol() {
  if constexpr (std::is_same_v<S, double>) return 1e-12;
  if constexpr (std::is_same_v<S, float>) return 2e-5;
  if constexpr (std::is_same_v<S, Half>) return 4e-3;
  return 2e-2;  // bfloat16
}
// want rounded to S first (a reduced-precision result is the exact one rounded once).
template <typename S>
void ExpectNear(double got, double want, const std::string& where) {
  const double w = ToD(FromD<S>(want));
  if (std::isnan(w)) {
    EXPECT_TRUE(std::isnan(got)) << where << ": got " << got << ", want NaN";
    return;
  }
  EXPECT_NEAR(got, w, Tol<S>() * std::max(1.0, std::fabs(w))) << where;
}

// --- host launches --------------------------------------------------------------------------

template <typename S>
void RunLayerNormOnHost(const LayerNormArgs& a, uint32_t blocks) {
  using F = NormFloat<S>;
  std::vector<Welford<F>> shared(kNnThreads);
  for (uint32_t b = 0; b < blocks; ++b) {
    for (int64_t row = b; row < a.rows; row += blocks) {
      for (uint32_t t = 0; t < kNnThreads; ++t) shared[t] = LayerNormPartial<S>(a, row, t);
      for (uint32_t half = kNnThreads / 2; half > 0; half /= 2) {
        for (uint32_t t = 0; t < kNnThreads; ++t) WelfordStep(shared.data(), t, half);
      }
      for (uint32_t t = 0; t < kNnThreads; ++t) {
        LayerNormWrite<S>(a, row, t, LayerNormStats(shared[0], a.eps));
      }
    }
  }
}

template <typename S>
void RunBatchNormOnHost(const BatchNormArgs& a, uint32_t blocks) {
  using F = NormFloat<S>;
  std::vector<Welford<F>> shared(kNnThreads);
  std::vector<NormStats<F>> stats(kNnThreads);
  for (uint32_t b = 0; b < blocks; ++b) {
    for (int64_t c = b; c < a.channels; c += blocks) {
      for (uint32_t t = 0; t < kNnThreads; ++t) shared[t] = BatchNormPartial<S>(a, c, t);
      for (uint32_t half = kNnThreads / 2; half > 0; half /= 2) {
        for (uint32_t t = 0; t < kNnThreads; ++t) WelfordStep(shared.data(), t, half);
      }
      for (uint32_t t = 0; t < kNnThreads; ++t) stats[t] = BatchNormStats<S>(a, c, t, shared[0]);
      for (uint32_t t = 0; t < kNnThreads; ++t) BatchNormWrite<S>(a, c, t, stats[t]);
    }
  }
}

// Every thread of a one-thread-per-element kernel, striding over the grid as the kernels do.
template <typename Body>
void RunElementsOnHost(int64_t elements, uint32_t blocks, const Body& body) {
  const int64_t step = int64_t{blocks} * kNnThreads;
  for (uint32_t b = 0; b < blocks; ++b) {
    for (uint32_t t = 0; t < kNnThreads; ++t) {
      for (int64_t o = int64_t{b} * kNnThreads + t; o < elements; o += step) body(o);
    }
  }
}

// --- native_layer_norm ----------------------------------------------------------------------

template <typename S>
void CheckLayerNorm(std::vector<int64_t> sizes, int axis, bool affine, std::vector<int> order,
                    int64_t gap, uint32_t blocks_override = 0, double eps = 1e-5) {
  SCOPED_TRACE(::testing::Message() << "dtype " << kDtypeOf<S> << " axis " << axis);
  HostTensor<S> x(sizes, order, gap), y(sizes, {}, 2);
  std::vector<int64_t> stat = sizes, norm(sizes.begin() + axis, sizes.end());
  for (size_t d = axis; d < stat.size(); ++d) stat[d] = 1;
  HostTensor<S> mean(stat), rstd(stat, {}, 3), w(norm, {}, 2), b(norm);
  x.Fill(Uniform(1, -3, 5));
  w.Fill(Uniform(2));
  b.Fill(Uniform(3));
  LayerNormArgs args;
  uint32_t blocks;
  std::string error;
  NnOperand none;
  ASSERT_TRUE(MakeLayerNormArgs(x.Op(), y.Op(), affine ? w.Op() : none, affine ? b.Op() : none,
                                mean.Op(), rstd.Op(), axis, eps, &args, &blocks, &error))
      << error;
  const int64_t rows = Numel(std::vector<int64_t>(sizes.begin(), sizes.begin() + axis));
  const int64_t cols = Numel(norm);
  EXPECT_EQ(blocks, std::min<int64_t>(rows, kNnMaxBlocks));
  RunLayerNormOnHost<S>(args, blocks_override ? blocks_override : blocks);
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0, sq = 0;
    for (int64_t c = 0; c < cols; ++c) sum += x.Flat(r * cols + c);
    const double mu = sum / cols;
    for (int64_t c = 0; c < cols; ++c)
      sq += (x.Flat(r * cols + c) - mu) * (x.Flat(r * cols + c) - mu);
    const double inv = 1 / std::sqrt(sq / cols + eps);
    ExpectNear<S>(mean.Flat(r), mu, "mean row " + std::to_string(r));
    ExpectNear<S>(rstd.Flat(r), inv, "rstd row " + std::to_string(r));
    for (int64_t c = 0; c < cols; ++c) {
      double v = (x.Flat(r * cols + c) - mu) * inv;
      if (affine) v = v * w.Flat(c) + b.Flat(c);
      // The result's error is relative to the normalized magnitude (~1), not to v.
      ExpectNear<S>(y.Flat(r * cols + c), v, "y " + std::to_string(r) + "," + std::to_string(c));
    }
  }
  // The gaps of the strided output stay untouched.
  for (size_t i = 1; i < y.data.size(); i += 2) {
    if constexpr (kIsFloat<S>) {
      ASSERT_TRUE(std::isnan(ToD(y.data[i]))) << i;
    }
  }
}

TEST(GpuLayerNorm, NormalizesRowsWithWeightAndBiasInEveryFloatingDtype) {
  CheckLayerNorm<float>({3, 5, 7}, 1, true, {}, 1);
  CheckLayerNorm<double>({3, 5, 7}, 2, true, {}, 1);
  CheckLayerNorm<Half>({4, 33}, 1, true, {}, 1);
  CheckLayerNorm<BFloat16>({4, 33}, 1, false, {}, 1);
}

TEST(GpuLayerNorm, LongRowsUseEveryThreadAndRowsStrideOverTheGrid) {
  CheckLayerNorm<float>({2, 1000}, 1, true, {}, 1);
  CheckLayerNorm<double>({3, 3, 301}, 1, false, {}, 1);
  // 10 rows on a grid of 3 blocks: blocks take rows b, b + 3, ...
  CheckLayerNorm<float>({10, 9}, 1, true, {}, 1, 3);
  // A row of one element: mean = x, rstd = 1 / sqrt(eps).
  CheckLayerNorm<float>({6, 1}, 1, false, {}, 1);
}

TEST(GpuLayerNorm, NonContiguousInputsAndOutputs) {
  // [4, 6, 5] stored as [5, 6, 4] (transposed) and with a gap in the innermost stride.
  CheckLayerNorm<float>({4, 6, 5}, 1, true, {2, 1, 0}, 1);
  CheckLayerNorm<double>({4, 6, 5}, 2, true, {1, 0, 2}, 3);
  CheckLayerNorm<Half>({4, 6, 5}, 1, true, {2, 0, 1}, 2);
  // All dims normalized: one row; a 1-dim input.
  CheckLayerNorm<float>({7}, 0, true, {}, 2);
}

TEST(GpuLayerNorm, EmptyBatchLaunchesNothingAndEmptyRowsAreNan) {
  HostTensor<float> x({0, 4}), y({0, 4}), mean({0, 1}), rstd({0, 1});
  LayerNormArgs args;
  uint32_t blocks = 7;
  std::string error;
  ASSERT_TRUE(MakeLayerNormArgs(x.Op(), y.Op(), {}, {}, mean.Op(), rstd.Op(), 1, 1e-5, &args,
                                &blocks, &error));
  EXPECT_EQ(blocks, 0u);
  HostTensor<float> x2({3, 0}), y2({3, 0}), mean2({3, 1}), rstd2({3, 1});
  ASSERT_TRUE(MakeLayerNormArgs(x2.Op(), y2.Op(), {}, {}, mean2.Op(), rstd2.Op(), 1, 1e-5, &args,
                                &blocks, &error));
  EXPECT_EQ(blocks, 3u);
  mean2.data.assign(3, 0);
  rstd2.data.assign(3, 0);
  RunLayerNormOnHost<float>(args, blocks);
  for (int r = 0; r < 3; ++r) {
    EXPECT_TRUE(std::isnan(mean2.data[r]));
    EXPECT_TRUE(std::isnan(rstd2.data[r]));
  }
  // More rows than a grid holds: the grid stops at kNnMaxBlocks.
  HostTensor<float> big({100000, 1});
  ASSERT_TRUE(MakeLayerNormArgs(big.Op(), big.Op(), {}, {}, big.Op(), big.Op(), 1, 1e-5, &args,
                                &blocks, &error));
  EXPECT_EQ(blocks, kNnMaxBlocks);
  // More dims than the kernel indexes: 13 dims that do not merge (a reversed layout).
  std::vector<int> reversed(kMaxDims + 1);
  std::iota(reversed.rbegin(), reversed.rend(), 0);
  HostTensor<float> deep(std::vector<int64_t>(kMaxDims + 1, 2), reversed);
  EXPECT_FALSE(MakeLayerNormArgs(deep.Op(), deep.Op(), {}, {}, deep.Op(), deep.Op(), 0, 1e-5, &args,
                                 &blocks, &error));
  EXPECT_THAT(error, HasSubstr("at most"));
}

TEST(GpuNnPlan, DenseDimsMergeAndSizeOneDimsDrop) {
  // [2, 3, 4, 5] normalized over [4, 5]: one row dim, one column dim, whatever the rank.
  HostTensor<float> x({2, 3, 4, 5}), mean({2, 3, 1, 1}), w({4, 5});
  LayerNormArgs ln;
  uint32_t blocks;
  std::string error;
  ASSERT_TRUE(MakeLayerNormArgs(x.Op(), x.Op(), w.Op(), {}, mean.Op(), mean.Op(), 2, 1e-5, &ln,
                                &blocks, &error));
  EXPECT_EQ(ln.row_shape.ndim, 1);
  EXPECT_EQ(ln.row_shape.sizes[0], 6);
  EXPECT_EQ(ln.col_shape.ndim, 1);
  EXPECT_EQ(ln.col_shape.sizes[0], 20);
  EXPECT_EQ(ln.x_col[0], 1);
  EXPECT_EQ(ln.mean_row[0], 1);
  // A transposed weight keeps the column dims apart; 13 dims of which the size-1 ones drop.
  HostTensor<float> wt({4, 5}, {1, 0});
  ASSERT_TRUE(MakeLayerNormArgs(x.Op(), x.Op(), wt.Op(), {}, mean.Op(), mean.Op(), 2, 1e-5, &ln,
                                &blocks, &error));
  EXPECT_EQ(ln.col_shape.ndim, 2);
  std::vector<int64_t> many(kMaxDims + 1, 1);
  many[3] = 7;
  HostTensor<float> wide(many);
  ASSERT_TRUE(MakeLayerNormArgs(wide.Op(), wide.Op(), {}, {}, wide.Op(), wide.Op(), 5, 1e-5, &ln,
                                &blocks, &error))
      << error;
  EXPECT_EQ(ln.row_shape.ndim, 1);
  EXPECT_EQ(ln.col_shape.ndim, 0);
  EXPECT_EQ(ln.rows, 7);
  EXPECT_EQ(ln.cols, 1);
  // Channels last: batch norm's spatial dims merge ([H, W] strided by C as one dim).
  HostTensor<float> cl({2, 3, 4, 5}, {0, 2, 3, 1});
  BatchNormArgs bn;
  ASSERT_TRUE(MakeBatchNormArgs(cl.Op(), x.Op(), {}, {}, {}, {}, {}, {}, true, 0.1, 1e-5, &bn,
                                &blocks, &error));
  EXPECT_EQ(bn.inner_shape.ndim, 1);
  EXPECT_EQ(bn.x_inner[0], 3);
}

TEST(GpuLayerNorm, NanAndInfinityPropagateThroughTheirRow) {
  HostTensor<float> x({2, 3}), y({2, 3}), mean({2, 1}), rstd({2, 1});
  x.Set({0, 0}, 1);
  x.Set({0, 1}, kNan);
  x.Set({0, 2}, 2);
  x.Set({1, 0}, 1);
  x.Set({1, 1}, 2);
  x.Set({1, 2}, 4);
  LayerNormArgs args;
  uint32_t blocks;
  std::string error;
  ASSERT_TRUE(MakeLayerNormArgs(x.Op(), y.Op(), {}, {}, mean.Op(), rstd.Op(), 1, 0, &args, &blocks,
                                &error));
  RunLayerNormOnHost<float>(args, blocks);
  EXPECT_TRUE(std::isnan(mean.data[0]));
  EXPECT_TRUE(std::isnan(y.data[0]));
  EXPECT_FLOAT_EQ(mean.data[1], 7.0f / 3);
}

// --- native_batch_norm ----------------------------------------------------------------------

template <typename S>
void CheckBatchNorm(std::vector<int64_t> sizes, bool training, bool affine, bool running,
                    std::vector<int> order, int64_t gap, double eps = 1e-5, double momentum = 0.1,
                    uint32_t blocks_override = 0) {
  SCOPED_TRACE(::testing::Message() << "dtype " << kDtypeOf<S> << " training " << training);
  const int64_t N = sizes[0], C = sizes[1];
  const int64_t inner = Numel(std::vector<int64_t>(sizes.begin() + 2, sizes.end()));
  HostTensor<S> x(sizes, order, gap), y(sizes, {}, 2), w({C}, {}, 2), b({C}), rm({C}, {}, 3),
      rv({C}), sm({training ? C : 0}), si({training ? C : 0}, {}, 2);
  x.Fill(Uniform(4, -1, 3));
  w.Fill(Uniform(5));
  b.Fill(Uniform(6));
  rm.Fill(Uniform(7));
  rv.Fill(Uniform(8, 0.5, 2));
  const HostTensor<S> rm0 = rm, rv0 = rv;
  NnOperand none;
  BatchNormArgs args;
  uint32_t blocks;
  std::string error;
  ASSERT_TRUE(MakeBatchNormArgs(x.Op(), y.Op(), affine ? w.Op() : none, affine ? b.Op() : none,
                                running ? rm.Op() : none, running ? rv.Op() : none, sm.Op(),
                                si.Op(), training, momentum, eps, &args, &blocks, &error))
      << error;
  EXPECT_EQ(blocks, static_cast<uint32_t>(C));
  RunBatchNormOnHost<S>(args, blocks_override ? blocks_override : blocks);
  const int64_t n = N * inner;
  for (int64_t c = 0; c < C; ++c) {
    auto at = [&](int64_t j) {
      std::vector<int64_t> idx = Unravel(sizes, 0);
      const std::vector<int64_t> rest =
          Unravel(std::vector<int64_t>(sizes.begin() + 2, sizes.end()), j % inner);
      idx[0] = j / inner;
      idx[1] = c;
      std::copy(rest.begin(), rest.end(), idx.begin() + 2);
      return idx;
    };
    double mu, invstd;
    if (training) {
      double sum = 0, sq = 0;
      for (int64_t j = 0; j < n; ++j) sum += x.At(at(j));
      mu = sum / n;
      for (int64_t j = 0; j < n; ++j) sq += (x.At(at(j)) - mu) * (x.At(at(j)) - mu);
      const double var = sq / n;
      invstd = var == 0 && eps == 0 ? 0 : 1 / std::sqrt(var + eps);
      ExpectNear<S>(sm.Flat(c), mu, "save_mean");
      ExpectNear<S>(si.Flat(c), invstd, "save_invstd");
      if (running) {
        ExpectNear<S>(rm.Flat(c), momentum * mu + (1 - momentum) * rm0.Flat(c), "running_mean");
        ExpectNear<S>(rv.Flat(c), momentum * (sq / (n - 1)) + (1 - momentum) * rv0.Flat(c),
                      "running_var");
      }
    } else {
      mu = rm0.Flat(c);
      invstd = 1 / std::sqrt(rv0.Flat(c) + eps);
      EXPECT_EQ(rm.Flat(c), rm0.Flat(c));
      EXPECT_EQ(rv.Flat(c), rv0.Flat(c));
    }
    for (int64_t j = 0; j < n; ++j) {
      double v = (x.At(at(j)) - mu) * invstd;
      if (affine) v = v * w.Flat(c) + b.Flat(c);
      ExpectNear<S>(y.At(at(j)), v, "y channel " + std::to_string(c) + " j " + std::to_string(j));
    }
  }
}

TEST(GpuBatchNorm, TrainingUsesBatchStatisticsAndUpdatesTheRunningOnes) {
  CheckBatchNorm<float>({4, 3, 5, 2}, true, true, true, {}, 1);
  CheckBatchNorm<double>({7, 2, 40}, true, false, true, {}, 1, 1e-3, 0.3);
  CheckBatchNorm<Half>({3, 4, 6}, true, true, true, {}, 1);
  CheckBatchNorm<BFloat16>({3, 4, 6}, true, true, false, {}, 1);
  // No spatial dims ([N, C]); a long channel (N * inner > a block).
  CheckBatchNorm<float>({300, 5}, true, true, true, {}, 1);
  CheckBatchNorm<float>({2, 3, 700}, true, true, true, {}, 1);
  // Channels stride over a grid of 2 blocks.
  CheckBatchNorm<float>({2, 5, 3}, true, true, true, {}, 1, 1e-5, 0.1, 2);
}

TEST(GpuBatchNorm, InferenceUsesTheRunningStatisticsAndLeavesThemAlone) {
  CheckBatchNorm<float>({4, 3, 5, 2}, false, true, true, {}, 1);
  CheckBatchNorm<double>({2, 6}, false, false, true, {}, 1);
  CheckBatchNorm<Half>({2, 3, 4}, false, true, true, {}, 1);
  CheckBatchNorm<BFloat16>({2, 3, 4}, false, true, true, {}, 1);
}

TEST(GpuBatchNorm, NonContiguousInputs) {
  // Channels last ([N, C, H, W] stored as [N, H, W, C]), and a gap.
  CheckBatchNorm<float>({2, 3, 4, 5}, true, true, true, {0, 2, 3, 1}, 1);
  CheckBatchNorm<double>({2, 3, 4, 5}, false, true, true, {0, 2, 3, 1}, 2);
  CheckBatchNorm<float>({3, 2, 4}, true, false, true, {2, 1, 0}, 3);
}

TEST(GpuBatchNorm, ConstantChannelWithZeroEpsAndSingleElementChannels) {
  // var 0 and eps 0: invstd 0 (PyTorch's rule), y = bias.
  HostTensor<float> x({2, 1, 2}), y({2, 1, 2}), sm({1}), si({1}), rm({1}), rv({1});
  x.Fill([] { return 3.0; });
  rm.data[0] = 0;
  rv.data[0] = 1;
  BatchNormArgs args;
  uint32_t blocks;
  std::string error;
  ASSERT_TRUE(MakeBatchNormArgs(x.Op(), y.Op(), {}, {}, rm.Op(), rv.Op(), sm.Op(), si.Op(), true,
                                0.5, 0, &args, &blocks, &error));
  RunBatchNormOnHost<float>(args, blocks);
  EXPECT_EQ(sm.data[0], 3);
  EXPECT_EQ(si.data[0], 0);
  EXPECT_EQ(y.data[0], 0);
  EXPECT_EQ(rm.data[0], 1.5);
  EXPECT_EQ(rv.data[0], 0.5);
  // One element per channel: the unbiased variance divides by 0 (NaN in the running var, as
  // PyTorch's and the CPU backend's).
  HostTensor<float> x1({1, 2}), y1({1, 2}), sm1({2}), si1({2}), rm1({2}), rv1({2});
  x1.Fill([] { return 2.0; });
  rm1.data.assign(2, 0);
  rv1.data.assign(2, 1);
  ASSERT_TRUE(MakeBatchNormArgs(x1.Op(), y1.Op(), {}, {}, rm1.Op(), rv1.Op(), sm1.Op(), si1.Op(),
                                true, 0.1, 1e-5, &args, &blocks, &error));
  RunBatchNormOnHost<float>(args, blocks);
  EXPECT_FLOAT_EQ(rm1.data[1], 0.2f);
  EXPECT_TRUE(std::isnan(rv1.data[1]));
  EXPECT_EQ(y1.data[0], 0);
  // An empty batch (the native op called directly; batch_norm itself returns early): the
  // statistics of nothing are NaN, as the CPU backend's 0 / 0.
  HostTensor<float> x0({0, 2, 3}), sm0({2}), si0({2}), rm0({2});
  rm0.data.assign(2, 0);
  ASSERT_TRUE(MakeBatchNormArgs(x0.Op(), x0.Op(), {}, {}, rm0.Op(), {}, sm0.Op(), si0.Op(), true,
                                0.1, 1e-5, &args, &blocks, &error));
  EXPECT_EQ(blocks, 2u);
  RunBatchNormOnHost<float>(args, blocks);
  EXPECT_TRUE(std::isnan(sm0.data[1]));
  EXPECT_TRUE(std::isnan(si0.data[1]));
  EXPECT_TRUE(std::isnan(rm0.data[1]));
}

TEST(GpuBatchNorm, RefusesWhatItCannotRun) {
  HostTensor<float> x({2, 3}), y({2, 3});
  BatchNormArgs args;
  uint32_t blocks;
  std::string error;
  EXPECT_FALSE(MakeBatchNormArgs(x.Op(), y.Op(), {}, {}, {}, {}, {}, {}, false, 0.1, 1e-5, &args,
                                 &blocks, &error));
  EXPECT_THAT(error, HasSubstr("evaluation mode"));
  HostTensor<float> x1({3});
  EXPECT_FALSE(MakeBatchNormArgs(x1.Op(), x1.Op(), {}, {}, {}, {}, {}, {}, true, 0.1, 1e-5, &args,
                                 &blocks, &error));
  EXPECT_THAT(error, HasSubstr("at least 2 dims"));
  // No channels: nothing to launch.
  HostTensor<float> x0({4, 0, 2});
  ASSERT_TRUE(MakeBatchNormArgs(x0.Op(), x0.Op(), {}, {}, {}, {}, {}, {}, true, 0.1, 1e-5, &args,
                                &blocks, &error));
  EXPECT_EQ(blocks, 0u);
}

// --- pooling --------------------------------------------------------------------------------

int64_t PooledSize(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation,
                   bool ceil_mode) {
  int64_t out = (in + 2 * pad - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0)) / stride + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

struct PoolCase {
  std::vector<int64_t> sizes;  // [*, H, W]
  PoolWindow window;
  bool ceil_mode = false;
  std::vector<int> order = {};
  int64_t gap = 1;
};

std::vector<int64_t> PooledShape(const PoolCase& pc) {
  std::vector<int64_t> out = pc.sizes;
  const size_t nd = out.size();
  for (int i = 0; i < 2; ++i) {
    out[nd - 2 + i] = PooledSize(pc.sizes[nd - 2 + i], pc.window.kernel[i], pc.window.padding[i],
                                 pc.window.stride[i], pc.window.dilation[i], pc.ceil_mode);
  }
  return out;
}

// The reference max pool: the window's maximum, the last NaN winning (PyTorch's rule: a larger
// value or a NaN takes the place); index h * W + w.
template <typename S>
void CheckMaxPool(const PoolCase& pc, const std::function<double()>& gen, uint32_t grid = 0) {
  SCOPED_TRACE(::testing::Message() << "dtype " << kDtypeOf<S>);
  HostTensor<S> x(pc.sizes, pc.order, pc.gap);
  const std::vector<int64_t> out_sizes = PooledShape(pc);
  HostTensor<S> y(out_sizes, {}, 2);
  HostTensor<int64_t> idx(out_sizes);
  x.Fill(gen);
  Pool2dArgs args;
  uint32_t blocks;
  std::string error;
  ASSERT_TRUE(MakePool2dArgs(x.Op(), y.Op(), idx.Op(), pc.window, false, 0, &args, &blocks, &error))
      << error;
  RunElementsOnHost(PoolElements(args), grid ? grid : blocks,
                    [&](int64_t o) { MaxPoolThread<S>(args, o); });
  const size_t nd = pc.sizes.size();
  const int64_t H = pc.sizes[nd - 2], W = pc.sizes[nd - 1];
  const PoolWindow& pw = pc.window;
  for (int64_t o = 0; o < Numel(out_sizes); ++o) {
    std::vector<int64_t> oi = Unravel(out_sizes, o);
    const int64_t oh = oi[nd - 2], ow = oi[nd - 1];
    double best = -kInf;
    int64_t best_i = -1;
    for (int64_t kh = 0; kh < pw.kernel[0]; ++kh) {
      for (int64_t kw = 0; kw < pw.kernel[1]; ++kw) {
        const int64_t h = oh * pw.stride[0] - pw.padding[0] + kh * pw.dilation[0];
        const int64_t w = ow * pw.stride[1] - pw.padding[1] + kw * pw.dilation[1];
        if (h < 0 || h >= H || w < 0 || w >= W) continue;
        std::vector<int64_t> xi = oi;
        xi[nd - 2] = h;
        xi[nd - 1] = w;
        const double v = x.At(xi);
        if (best_i < 0 || v > best || std::isnan(v)) {
          best = v;
          best_i = h * W + w;
        }
      }
    }
    if (std::isnan(best)) {
      EXPECT_TRUE(std::isnan(y.At(oi))) << o;
    } else {
      EXPECT_EQ(y.At(oi), best) << o;
    }
    EXPECT_EQ(idx.At(oi), best_i) << o;
  }
}

template <typename S>
void CheckAvgPool(const PoolCase& pc, bool count_include_pad, int64_t divisor,
                  const std::function<double()>& gen) {
  SCOPED_TRACE(::testing::Message() << "dtype " << kDtypeOf<S> << " include_pad "
                                    << count_include_pad << " divisor " << divisor);
  HostTensor<S> x(pc.sizes, pc.order, pc.gap);
  const std::vector<int64_t> out_sizes = PooledShape(pc);
  HostTensor<S> y(out_sizes, {}, 3);
  x.Fill(gen);
  Pool2dArgs args;
  uint32_t blocks;
  std::string error;
  ASSERT_TRUE(MakePool2dArgs(x.Op(), y.Op(), {}, pc.window, count_include_pad, divisor, &args,
                             &blocks, &error))
      << error;
  RunElementsOnHost(PoolElements(args), blocks, [&](int64_t o) { AvgPoolThread<S>(args, o); });
  const size_t nd = pc.sizes.size();
  const int64_t H = pc.sizes[nd - 2], W = pc.sizes[nd - 1];
  const PoolWindow& pw = pc.window;
  for (int64_t o = 0; o < Numel(out_sizes); ++o) {
    std::vector<int64_t> oi = Unravel(out_sizes, o);
    const int64_t oh = oi[nd - 2], ow = oi[nd - 1];
    // The window, its part inside the padded input, its part inside the input.
    const int64_t hs = oh * pw.stride[0] - pw.padding[0], ws = ow * pw.stride[1] - pw.padding[1];
    double sum = 0;
    int64_t inside = 0, padded = 0;
    for (int64_t h = hs; h < hs + pw.kernel[0]; ++h) {
      for (int64_t w = ws; w < ws + pw.kernel[1]; ++w) {
        if (h < H + pw.padding[0] && w < W + pw.padding[1]) ++padded;
        if (h < 0 || h >= H || w < 0 || w >= W) continue;
        std::vector<int64_t> xi = oi;
        xi[nd - 2] = h;
        xi[nd - 1] = w;
        sum += x.At(xi);
        ++inside;
      }
    }
    const int64_t count = divisor ? divisor : count_include_pad ? padded : inside;
    if constexpr (kIsFloat<S>) {
      ExpectNear<S>(y.At(oi), sum / count, "avg " + std::to_string(o));
    } else {
      EXPECT_EQ(y.At(oi), static_cast<double>(static_cast<int64_t>(sum) / count)) << o;
    }
  }
}

PoolWindow Window(int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t ph, int64_t pw,
                  int64_t dh = 1, int64_t dw = 1) {
  return PoolWindow{{kh, kw}, {sh, sw}, {ph, pw}, {dh, dw}};
}

TEST(GpuMaxPool, WindowsWithStridePaddingDilationAndCeilMode) {
  const auto gen = Uniform(11, -5, 5);
  CheckMaxPool<float>({{2, 3, 7, 8}, Window(3, 3, 2, 2, 1, 1)}, gen);
  CheckMaxPool<double>({{2, 3, 7, 8}, Window(2, 3, 1, 2, 1, 1, 2, 1)}, gen);
  CheckMaxPool<float>({{1, 2, 7, 8}, Window(3, 2, 2, 3, 1, 1)}, gen);
  CheckMaxPool<float>({{2, 5, 5}, Window(2, 2, 2, 2, 0, 0)}, gen);  // 3D input
  // ceil_mode: the last window runs past the input.
  PoolCase ceil{{2, 2, 6, 7}, Window(3, 3, 2, 2, 1, 0), true};
  EXPECT_EQ(PooledShape(ceil)[2], 4);
  CheckMaxPool<float>(ceil, gen);
  CheckMaxPool<Half>(ceil, gen);
  CheckMaxPool<BFloat16>(ceil, gen);
  // 1x1 windows: a copy with indices h * W + w.
  CheckMaxPool<double>({{3, 4, 5}, Window(1, 1, 1, 1, 0, 0)}, gen);
  // A grid of 2 blocks: each thread strides over several elements.
  CheckMaxPool<float>({{2, 3, 17, 16}, Window(2, 2, 1, 1, 1, 1)}, gen, 2);
  // The grid stops at kNnMaxBlocks; the threads stride over the rest.
  uint32_t blocks;
  std::string error;
  ASSERT_TRUE(ElementBlocks(int64_t{1} << 40, &blocks, &error));
  EXPECT_EQ(blocks, kNnMaxBlocks);
  ASSERT_TRUE(ElementBlocks(257, &blocks, &error));
  EXPECT_EQ(blocks, 2u);
}

TEST(GpuMaxPool, NanWinsItsWindowAndNonContiguousInputs) {
  // Values with NaN and infinities: the last NaN of a window wins (value and index).
  std::mt19937 rng(12);
  auto gen = [&rng] {
    const int r = static_cast<int>(rng() % 10);
    return r == 0 ? kNan : r == 1 ? -kInf : r == 2 ? kInf : static_cast<double>(r);
  };
  CheckMaxPool<float>({{2, 3, 6, 6}, Window(3, 3, 1, 1, 1, 1)}, gen);
  CheckMaxPool<double>({{1, 9, 9}, Window(2, 2, 2, 2, 1, 1, 1, 1)}, gen);
  CheckMaxPool<Half>({{1, 9, 9}, Window(3, 2, 2, 1, 0, 1)}, gen);
  // A window of -inf only: -inf, the first index.
  CheckMaxPool<float>({{1, 2, 2}, Window(2, 2, 1, 1, 0, 0)}, [] { return -kInf; });
  // Channels last and a gapped layout.
  const auto u = Uniform(13);
  CheckMaxPool<float>({{2, 3, 5, 6}, Window(2, 2, 1, 2, 1, 0), false, {0, 2, 3, 1}, 1}, u);
  CheckMaxPool<double>({{2, 3, 5, 6}, Window(3, 3, 2, 2, 1, 1), true, {1, 0, 3, 2}, 2}, u);
}

TEST(GpuAvgPool, DivisorRulesCeilModeAndPadding) {
  const auto gen = Uniform(14, -4, 4);
  for (bool include : {true, false}) {
    CheckAvgPool<float>({{2, 3, 7, 8}, Window(3, 3, 2, 2, 1, 1)}, include, 0, gen);
    CheckAvgPool<double>({{2, 3, 7, 8}, Window(3, 2, 2, 1, 1, 1), true}, include, 0, gen);
    // ceil_mode windows past the input: the padded count stops at the input plus padding.
    CheckAvgPool<float>({{1, 2, 6, 7}, Window(3, 3, 2, 2, 1, 0), true}, include, 0, gen);
    CheckAvgPool<Half>({{1, 2, 6, 7}, Window(2, 3, 2, 2, 1, 1), true}, include, 0, gen);
    CheckAvgPool<BFloat16>({{2, 6, 7}, Window(2, 2, 2, 2, 1, 0), true}, include, 0, gen);
  }
  CheckAvgPool<float>({{2, 3, 7, 8}, Window(3, 3, 2, 2, 1, 1)}, true, 5, gen);
  CheckAvgPool<double>({{2, 3, 7, 8}, Window(2, 2, 1, 1, 1, 1), true}, false, -3, gen);
  // 1x1 windows, and non-contiguous inputs.
  CheckAvgPool<float>({{3, 4, 5}, Window(1, 1, 1, 1, 0, 0)}, true, 0, gen);
  CheckAvgPool<float>({{2, 3, 5, 6}, Window(2, 2, 1, 2, 1, 0), false, {0, 2, 3, 1}, 1}, false, 0,
                      gen);
  CheckAvgPool<double>({{2, 3, 5, 6}, Window(3, 3, 2, 2, 1, 1), true, {3, 2, 1, 0}, 2}, true, 0,
                       gen);
}

TEST(GpuAvgPool, Int64SumsExactlyAndTruncatesTowardZero) {
  const auto gen = Ints(15, -50, 50);
  for (bool include : {true, false}) {
    CheckAvgPool<int64_t>({{2, 3, 7, 8}, Window(3, 3, 2, 2, 1, 1), true}, include, 0, gen);
  }
  CheckAvgPool<int64_t>({{2, 5, 5}, Window(2, 2, 1, 1, 1, 0)}, true, 3, gen);
  // Large values sum in int64: (2^60 + 2^60) / 2 with no overflow in the sum.
  HostTensor<int64_t> x({1, 1, 2}), y({1, 1, 1});
  x.data = {int64_t{1} << 60, int64_t{1} << 60};
  Pool2dArgs args;
  uint32_t blocks;
  std::string error;
  ASSERT_TRUE(MakePool2dArgs(x.Op(), y.Op(), {}, Window(1, 2, 1, 2, 0, 0), true, 0, &args, &blocks,
                             &error));
  RunElementsOnHost(PoolElements(args), blocks,
                    [&](int64_t o) { AvgPoolThread<int64_t>(args, o); });
  EXPECT_EQ(y.data[0], int64_t{1} << 60);
}

// A window of 2^40 + 1 taps a side over a 3 x 3 plane, legal with the padding to match: the
// threads visit the taps inside the input alone (a loop over every tap would never finish);
// average pooling with the padding counted divides by a padded area no int64 holds.
TEST(GpuPool, WindowsFarLargerThanTheInputVisitOnlyTheTapsInside) {
  constexpr int64_t kWide = (int64_t{1} << 40) + 1;
  HostTensor<float> x({1, 3, 3}), y({1, 3, 3});
  HostTensor<int64_t> idx({1, 3, 3});
  x.data = {1, 9, 2, 4, 8, 3, 7, 5, 6};
  Pool2dArgs args;
  uint32_t blocks;
  std::string error;
  // Dilated by 2 in height: window rows base + 2k, so each output sees every other row.
  const PoolWindow wide = Window(kWide, kWide, 1, 1, kWide - 1, kWide / 2, 2, 1);
  ASSERT_TRUE(MakePool2dArgs(x.Op(), y.Op(), idx.Op(), wide, false, 0, &args, &blocks, &error))
      << error;
  RunElementsOnHost(PoolElements(args), blocks, [&](int64_t o) { MaxPoolThread<float>(args, o); });
  // Output row oh starts at oh - 2^40 (even for oh = 0, 2): rows 0 and 2 (max 9 at index 1);
  // for oh = 1: row 1 (max 8 at index 4). Every window spans all three columns.
  EXPECT_THAT(y.data, ElementsAre(9, 9, 9, 8, 8, 8, 9, 9, 9));
  EXPECT_THAT(idx.data, ElementsAre(1, 1, 1, 4, 4, 4, 1, 1, 1));

  // Sides of 2^32 + 1: the padded area (2^32 + 1)^2 wraps in int64 to 2^33 + 1, which would
  // make the mean of nine 2^37s about 143; it is 9 * 2^37 / 2^64 (float) and 0 (int64).
  constexpr int64_t kSide = (int64_t{1} << 32) + 1;
  const PoolWindow counted = Window(kSide, kSide, 1, 1, kSide / 2, kSide / 2);
  x.data.assign(9, std::ldexp(1.0f, 37));
  ASSERT_TRUE(MakePool2dArgs(x.Op(), y.Op(), {}, counted, true, 0, &args, &blocks, &error))
      << error;
  RunElementsOnHost(PoolElements(args), blocks, [&](int64_t o) { AvgPoolThread<float>(args, o); });
  for (float v : y.data) EXPECT_FLOAT_EQ(v, std::ldexp(9.0f, 37 - 64));
  HostTensor<int64_t> xi({1, 3, 3}), yi({1, 3, 3});
  xi.data.assign(9, int64_t{1} << 37);
  ASSERT_TRUE(MakePool2dArgs(xi.Op(), yi.Op(), {}, counted, true, 0, &args, &blocks, &error))
      << error;
  RunElementsOnHost(PoolElements(args), blocks,
                    [&](int64_t o) { AvgPoolThread<int64_t>(args, o); });
  EXPECT_THAT(yi.data, ElementsAre(0, 0, 0, 0, 0, 0, 0, 0, 0));
}

TEST(GpuPool, EmptyBatchLaunchesNothingAndRefusesOtherRanks) {
  HostTensor<float> x({0, 3, 4, 4}), y({0, 3, 2, 2});
  HostTensor<int64_t> idx({0, 3, 2, 2});
  Pool2dArgs args;
  uint32_t blocks = 9;
  std::string error;
  ASSERT_TRUE(MakePool2dArgs(x.Op(), y.Op(), idx.Op(), Window(2, 2, 2, 2, 0, 0), false, 0, &args,
                             &blocks, &error));
  EXPECT_EQ(blocks, 0u);
  HostTensor<float> x5({1, 1, 1, 4, 4});
  EXPECT_FALSE(MakePool2dArgs(x5.Op(), x5.Op(), {}, Window(2, 2, 2, 2, 0, 0), false, 0, &args,
                              &blocks, &error));
  EXPECT_THAT(error, HasSubstr("3D or 4D"));
}

// --- convolution ----------------------------------------------------------------------------

struct ConvCase {
  std::vector<int64_t> x;  // [N, C, *I]
  std::vector<int64_t> w;  // [O, C/G, *K] or transposed [C, O/G, *K]
  std::vector<int64_t> stride, padding, dilation, output_padding;
  int64_t groups = 1;
  bool transposed = false;
  bool bias = true;
  std::vector<int> x_order = {};
  int64_t x_gap = 1;
  std::vector<int> w_order = {};
};

std::vector<int64_t> ConvShape(const ConvCase& cc) {
  std::vector<int64_t> out = {cc.x[0], cc.transposed ? cc.w[1] * cc.groups : cc.w[0]};
  for (size_t d = 0; d + 2 < cc.x.size(); ++d) {
    const int64_t in = cc.x[2 + d], k = cc.w[2 + d];
    if (!cc.transposed) {
      out.push_back((in + 2 * cc.padding[d] - cc.dilation[d] * (k - 1) - 1) / cc.stride[d] + 1);
    } else {
      out.push_back((in - 1) * cc.stride[d] - 2 * cc.padding[d] + cc.dilation[d] * (k - 1) +
                    cc.output_padding[d] + 1);
    }
  }
  return out;
}

// The reference: each (input element, weight element) pair scattered to the output it feeds,
// in float64 (floating) or wrapping uint64 (integers).
template <typename S>
void CheckConv(const ConvCase& cc) {
  SCOPED_TRACE(::testing::Message() << "dtype " << kDtypeOf<S> << " transposed " << cc.transposed
                                    << " groups " << cc.groups);
  const std::vector<int64_t> out_sizes = ConvShape(cc);
  HostTensor<S> x(cc.x, cc.x_order, cc.x_gap), w(cc.w, cc.w_order), y(out_sizes, {}, 2);
  HostTensor<S> b({out_sizes[1]}, {}, 2);
  if constexpr (kIsFloat<S>) {
    x.Fill(Uniform(21));
    w.Fill(Uniform(22));
    b.Fill(Uniform(23));
  } else {
    x.Fill(Ints(21, -100, 100));
    w.Fill(Ints(22, -100, 100));
    b.Fill(Ints(23, -100, 100));
  }
  ConvArgs args;
  uint32_t blocks;
  std::string error;
  ASSERT_TRUE(MakeConvArgs(x.Op(), w.Op(), cc.bias ? b.Op() : NnOperand{}, y.Op(), cc.stride,
                           cc.padding, cc.dilation, cc.transposed, cc.groups, &args, &blocks,
                           &error))
      << error;
  RunElementsOnHost(ConvElements(args), blocks, [&](int64_t o) { ConvThread<S>(args, o); });
  const int dims = static_cast<int>(cc.x.size()) - 2;
  const int64_t O = out_sizes[1], C = cc.x[1], G = cc.groups, OG = O / G, CG = C / G;
  std::vector<double> ref(static_cast<size_t>(Numel(out_sizes)));
  std::vector<uint64_t> iref(ref.size());
  for (int64_t o = 0; o < Numel(out_sizes); ++o) {
    const int64_t oc = Unravel(out_sizes, o)[1];
    ref[o] = cc.bias ? b.Flat(oc) : 0;
    iref[o] = cc.bias ? static_cast<uint64_t>(static_cast<int64_t>(b.Flat(oc))) : 0;
  }
  const std::vector<int64_t> kernel(cc.w.begin() + 2, cc.w.end());
  for (int64_t xi = 0; xi < Numel(cc.x); ++xi) {
    const std::vector<int64_t> xidx = Unravel(cc.x, xi);
    const int64_t n = xidx[0], c = xidx[1], g = c / CG;
    for (int64_t ki = 0; ki < Numel(kernel); ++ki) {
      const std::vector<int64_t> k = Unravel(kernel, ki);
      std::vector<int64_t> yidx = {n, 0};
      bool inside = true;
      for (int d = 0; d < dims && inside; ++d) {
        int64_t p;
        if (!cc.transposed) {
          // y[p] takes x[p * s - pad + k * dil]: solve for p.
          const int64_t t = xidx[2 + d] + cc.padding[d] - k[d] * cc.dilation[d];
          if (t < 0 || t % cc.stride[d] != 0) {
            inside = false;
            break;
          }
          p = t / cc.stride[d];
        } else {
          p = xidx[2 + d] * cc.stride[d] - cc.padding[d] + k[d] * cc.dilation[d];
        }
        inside = p >= 0 && p < out_sizes[2 + d];
        yidx.push_back(p);
      }
      if (!inside) continue;
      for (int64_t og = 0; og < OG; ++og) {
        yidx[1] = g * OG + og;
        std::vector<int64_t> widx = {cc.transposed ? c : g * OG + og,
                                     cc.transposed ? og : c - g * CG};
        widx.insert(widx.end(), k.begin(), k.end());
        int64_t yo = 0;
        for (size_t d = 0; d < yidx.size(); ++d) yo = yo * out_sizes[d] + yidx[d];
        ref[yo] += x.At(xidx) * w.At(widx);
        iref[yo] += static_cast<uint64_t>(static_cast<int64_t>(x.At(xidx))) *
                    static_cast<uint64_t>(static_cast<int64_t>(w.At(widx)));
      }
    }
  }
  for (int64_t o = 0; o < Numel(out_sizes); ++o) {
    const std::vector<int64_t> oi = Unravel(out_sizes, o);
    if constexpr (kIsFloat<S>) {
      // Sums of up to ~100 products of magnitude <= 4.
      const double tol = std::is_same_v<S, double>  ? 1e-10
                         : std::is_same_v<S, float> ? 1e-4
                         : std::is_same_v<S, Half>  ? 2e-2
                                                    : 2e-1;
      EXPECT_NEAR(y.At(oi), ref[o], tol * std::max(1.0, std::fabs(ref[o]))) << o;
    } else {
      EXPECT_EQ(y.data[y.Offset(oi)], static_cast<S>(iref[o])) << o;
    }
  }
}

TEST(GpuConvolution, TwoDimsWithStridePaddingDilationGroupsAndBias) {
  CheckConv<float>({{2, 4, 7, 6}, {6, 2, 3, 2}, {2, 1}, {1, 2}, {1, 2}, {0, 0}, 2});
  CheckConv<double>({{1, 3, 5, 5}, {4, 3, 3, 3}, {1, 1}, {0, 0}, {1, 1}, {0, 0}, 1, false, false});
  // Depthwise (groups = channels), padding larger than the input where legal (1x1 input).
  CheckConv<float>({{2, 3, 1, 1}, {3, 1, 3, 3}, {1, 1}, {2, 2}, {1, 1}, {0, 0}, 3});
  CheckConv<Half>({{1, 2, 6, 5}, {4, 1, 2, 2}, {2, 2}, {1, 0}, {2, 1}, {0, 0}, 2});
  CheckConv<BFloat16>({{1, 2, 6, 5}, {2, 2, 3, 1}, {1, 1}, {1, 0}, {1, 1}, {0, 0}, 1});
  // 1x1 kernel: a per-pixel product.
  CheckConv<float>({{2, 5, 4, 3}, {7, 5, 1, 1}, {1, 1}, {0, 0}, {1, 1}, {0, 0}, 1});
}

TEST(GpuConvolution, OneAndThreeSpatialDims) {
  CheckConv<float>({{2, 4, 11}, {6, 2, 3}, {2}, {1}, {2}, {0}, 2});
  CheckConv<double>({{1, 2, 9}, {3, 2, 4}, {1}, {3}, {1}, {0}, 1, false, false});
  CheckConv<float>({{1, 2, 4, 5, 3}, {3, 2, 2, 3, 2}, {1, 2, 1}, {1, 0, 1}, {1, 1, 2}, {0, 0, 0}});
}

TEST(GpuConvolution, TransposedGathersWhatTheForwardScatters) {
  CheckConv<float>({{2, 4, 3, 4}, {4, 3, 3, 2}, {2, 1}, {1, 0}, {1, 2}, {1, 0}, 2, true});
  CheckConv<double>({{1, 2, 5}, {2, 3, 3}, {3}, {1}, {1}, {2}, 1, true, false});
  CheckConv<float>(
      {{1, 2, 2, 3, 2}, {2, 2, 2, 2, 3}, {2, 1, 2}, {0, 1, 1}, {1, 1, 1}, {1, 0, 0}, 1, true});
  CheckConv<Half>({{1, 2, 4, 4}, {2, 1, 3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 2, true});
}

TEST(GpuConvolution, IntegerTypesWrapLikeTheIntegerGemm) {
  CheckConv<int32_t>({{2, 4, 5, 5}, {6, 2, 3, 3}, {1, 2}, {1, 1}, {1, 1}, {0, 0}, 2});
  CheckConv<int8_t>({{1, 3, 4, 4}, {2, 3, 2, 2}, {1, 1}, {0, 0}, {1, 1}, {0, 0}, 1});
  CheckConv<int64_t>({{1, 2, 6}, {2, 2, 3}, {2}, {1}, {1}, {0}, 1, true});
  CheckConv<uint8_t>({{1, 1, 4, 4}, {1, 1, 2, 2}, {1, 1}, {0, 0}, {1, 1}, {0, 0}, 1});
  CheckConv<int16_t>({{1, 2, 4, 4}, {2, 2, 2, 2}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 1});
}

TEST(GpuConvolution, NonContiguousOperandsAndEmptyBatch) {
  ConvCase cl{{2, 3, 5, 4}, {4, 3, 2, 2}, {1, 1}, {1, 0}, {1, 1}, {0, 0}};
  cl.x_order = {0, 2, 3, 1};  // channels last
  cl.w_order = {3, 2, 1, 0};
  CheckConv<float>(cl);
  cl.x_order = {};
  cl.x_gap = 3;
  CheckConv<double>(cl);
  HostTensor<float> x({0, 3, 5, 5}), w({4, 3, 3, 3}), y({0, 4, 3, 3});
  ConvArgs args;
  uint32_t blocks = 5;
  std::string error;
  ASSERT_TRUE(MakeConvArgs(x.Op(), w.Op(), {}, y.Op(), {1, 1}, {0, 0}, {1, 1}, false, 1, &args,
                           &blocks, &error));
  EXPECT_EQ(blocks, 0u);
  EXPECT_FALSE(MakeConvArgs(x.Op(), w.Op(), {}, y.Op(), {1}, {0, 0}, {1, 1}, false, 1, &args,
                            &blocks, &error));
  EXPECT_THAT(error, HasSubstr("stride, padding and dilation of 2 values"));
  EXPECT_THAT(error, HasSubstr("got 1, 2 and 2 values and groups=1"));
  EXPECT_FALSE(MakeConvArgs(x.Op(), w.Op(), {}, y.Op(), {1, 1}, {0, 0}, {1, 1, 1}, false, 0, &args,
                            &blocks, &error));
  EXPECT_THAT(error, HasSubstr("got 2, 2 and 3 values and groups=0"));
  // 3 input and 4 output channels in 2 groups: the input's do not divide.
  EXPECT_FALSE(MakeConvArgs(x.Op(), w.Op(), {}, y.Op(), {1, 1}, {0, 0}, {1, 1}, false, 2, &args,
                            &blocks, &error));
  EXPECT_THAT(error, HasSubstr("divisible by groups=2, got 3 input and 4 output channels"));
}

}  // namespace
}  // namespace gpu
}  // namespace tessera

// The vectorized float32 math of the unary ops (plugins/cpu/vector_math.hpp), compiled in:
// each function against float64 std:: references over a sweep of 100,000 values in
// [-100, 100], the special values and every array length from 0 to 20 (the padded last vector
// gives the same result as a full one), with the accuracy docs/cpu_backend.md states.
#include "vector_math.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tessera {
namespace cpu {
namespace {

using Fn = void (*)(const float*, float*, int64_t);

struct Case {
  const char* name;
  Fn fn;
  std::function<double(double)> ref;
  double max_ulps;  // the bound checked (and stated in docs/cpu_backend.md)
  // The magnitude whose ulp is the unit at x (the result's, unless said): gelu's formula
  // 1 + erf(x / sqrt(2)) cancels for negative x, in PyTorch's kernel as in ours, so its error
  // is measured against x / 2, the size of the terms that cancel.
  std::function<double(double x, double ref)> scale = [](double, double r) { return r; };
};

double Sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double Gelu(double x) { return x * 0.5 * (1 + std::erf(x * M_SQRT1_2)); }
double GeluTanh(double x) {
  return 0.5 * x * (1 + std::tanh(M_2_SQRTPI * M_SQRT1_2 * (x + 0.044715 * x * x * x)));
}

double HalfX(double x, double ref) { return std::max(std::fabs(ref), std::fabs(x) / 2); }

std::vector<Case> Cases() {
  return {
      {"exp", &vector_math::exp, [](double x) { return std::exp(x); }, 1},
      {"log", &vector_math::log, [](double x) { return std::log(x); }, 1},
      {"tanh", &vector_math::tanh, [](double x) { return std::tanh(x); }, 2},
      {"erf", &vector_math::erf, [](double x) { return std::erf(x); }, 1},
      {"sigmoid", &vector_math::sigmoid, &Sigmoid, 3},
      {"silu", &vector_math::silu, [](double x) { return x * Sigmoid(x); }, 3},
      // PyTorch 1.13's own float32 gelu (the same erf approximation) measures 4.8 here, its
      // tanh 1.0, its exp 0.95.
      {"gelu", &vector_math::gelu, &Gelu, 6, &HalfX},
      {"gelu_tanh", &vector_math::gelu_tanh, &GeluTanh, 3, &HalfX},
  };
}

// Ulps: |got - want| in units of the last place of `scale` as a float, at least 2^-100's (so
// results near 0, down among the subnormals, are measured against a resolution no float
// computation of these formulas keeps there).
double Ulps(float got, double want, double scale) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : INFINITY;
  if (std::isinf(want)) return got == static_cast<float>(want) ? 0 : INFINITY;
  const float m = std::max(static_cast<float>(std::fabs(scale)), std::ldexp(1.0f, -100));
  const double ulp = std::nextafter(m, INFINITY) - m;
  return std::fabs(static_cast<double>(got) - want) / ulp;
}

// Each test runs on each vector unit this CPU has (skipped for the others).
class VectorMath : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    chosen_ = vector_math::isa();
    if (!vector_math::internal::limit_isa(GetParam())) {
      GTEST_SKIP() << "this CPU (or build) has no " << GetParam();
    }
  }
  void TearDown() override { vector_math::internal::limit_isa(chosen_.c_str()); }
  std::string chosen_;  // the unit chosen before the test
};
INSTANTIATE_TEST_SUITE_P(Units, VectorMath, ::testing::Values("avx512", "avx2", "sse2"),
                         [](const auto& info) { return std::string(info.param); });

TEST_P(VectorMath, WithinTheStatedUlpsOfFloat64) {
  std::vector<float> x;
  for (int i = 0; i < 100000; ++i) x.push_back(-100.0f + 200.0f * static_cast<float>(i) / 99999);
  const float special[] = {0.0f,  -0.0f,  1e-30f, -1e-30f, 1e-7f,  -1e-7f, 0.5f,
                           -0.5f, 3.0f,   -3.0f,  88.0f,   -88.0f, 89.0f,  -104.0f,
                           1.0f,  0.999f, 1.001f, 1e20f,   1e-38f};
  using Limits = std::numeric_limits<float>;
  x.insert(x.end(), {Limits::denorm_min(), Limits::max(), -Limits::max()});
  for (float v : special) {
    x.push_back(v);
  }
  std::vector<float> y(x.size());
  for (const Case& c : Cases()) {
    c.fn(x.data(), y.data(), static_cast<int64_t>(x.size()));
    double worst = 0;
    float at = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = c.ref(x[i]);
      const double u = Ulps(y[i], want, c.scale(x[i], want));
      if (u > worst) worst = u, at = x[i];
    }
    std::printf("%-10s worst %.2f ulps (bound %.0f, %s)\n", c.name, worst, c.max_ulps,
                vector_math::isa());
    EXPECT_LE(worst, c.max_ulps) << c.name << " at x = " << at << " (" << vector_math::isa() << ")";
  }
}

TEST_P(VectorMath, SpecialValuesAsPyTorch) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {inf, -inf, nan, 0.0f, -0.0f};
  std::vector<float> y(x.size());
  auto run = [&](Fn fn) {
    fn(x.data(), y.data(), static_cast<int64_t>(x.size()));
    return y;
  };
  std::vector<float> e = run(&vector_math::exp);
  EXPECT_EQ(e[0], inf);
  EXPECT_EQ(e[1], 0.0f);
  EXPECT_TRUE(std::isnan(e[2]));
  EXPECT_EQ(e[3], 1.0f);
  std::vector<float> l = run(&vector_math::log);
  EXPECT_EQ(l[0], inf);
  EXPECT_TRUE(std::isnan(l[1])) << "log(-inf) is NaN";
  EXPECT_TRUE(std::isnan(l[2]));
  EXPECT_EQ(l[3], -inf);
  EXPECT_EQ(l[4], -inf) << "log(-0) is -inf";
  std::vector<float> t = run(&vector_math::tanh);
  EXPECT_EQ(t[0], 1.0f);
  EXPECT_EQ(t[1], -1.0f);
  EXPECT_TRUE(std::isnan(t[2]));
  EXPECT_TRUE(std::signbit(t[4])) << "tanh(-0) is -0";
  std::vector<float> s = run(&vector_math::sigmoid);
  EXPECT_EQ(s[0], 1.0f);
  EXPECT_EQ(s[1], 0.0f);
  EXPECT_TRUE(std::isnan(s[2]));
  std::vector<float> g = run(&vector_math::gelu);
  EXPECT_EQ(g[0], inf);
  EXPECT_TRUE(std::isnan(g[1])) << "-inf * 0, as PyTorch's gelu(-inf)";
  EXPECT_TRUE(std::isnan(g[2]));
}

TEST_P(VectorMath, EveryLengthGivesTheSameResultPerValue) {
  std::vector<float> x(20);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.37f * static_cast<float>(i) - 3.1f;
  for (const Case& c : Cases()) {
    std::vector<float> full(x.size());
    c.fn(x.data(), full.data(), static_cast<int64_t>(x.size()));
    for (int64_t n = 0; n <= static_cast<int64_t>(x.size()); ++n) {
      for (int64_t off = 0; off + n <= static_cast<int64_t>(x.size()) && off < 3; ++off) {
        std::vector<float> part(static_cast<size_t>(n) + 1, -7.0f);
        c.fn(x.data() + off, part.data(), n);
        for (int64_t i = 0; i < n; ++i) {
          ASSERT_EQ(std::memcmp(&part[i], &full[off + i], sizeof(float)), 0)
              << c.name << " length " << n << " offset " << off << " element " << i;
        }
        EXPECT_EQ(part[n], -7.0f) << c.name << ": wrote past the end (length " << n << ")";
      }
    }
    // In place (y == x).
    std::vector<float> inplace = x;
    c.fn(inplace.data(), inplace.data(), static_cast<int64_t>(x.size()));
    EXPECT_EQ(std::memcmp(inplace.data(), full.data(), x.size() * sizeof(float)), 0) << c.name;
  }
}

// softmax_row against float64 softmax and log_softmax of the float differences x - max (below),
// lengths 0 to 70 (each vector unit's partial last vector) and a row of a million values, in
// place too; within 4 ulps of each result (softmax: exp's 1 ulp, the sum's and the reciprocal's
// rounding), and for log_softmax within 4 ulps of the larger of the result and the row's max.
TEST_P(VectorMath, SoftmaxRowsWithinUlpsOfFloat64) {
  for (int64_t n : {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 64, 70, 1 << 20}) {
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[i] = std::sin(0.7f * static_cast<float>(i)) * 9 - 2;
    for (bool log : {false, true}) {
      std::vector<float> y(x.size() + 1, -7.0f);
      vector_math::softmax_row(x.data(), y.data(), n, log);
      EXPECT_EQ(y[x.size()], -7.0f) << "wrote past the end (length " << n << ")";
      double max = -INFINITY, sum = 0;
      for (float v : x) max = std::max<double>(max, v);
      for (float v : x) sum += std::exp(v - max);
      double worst = 0;
      for (int64_t i = 0; i < n; ++i) {
        // x - max rounded to float, as PyTorch's kernel (and ours) computes it: that rounding
        // is the algorithm's, not the math functions' (it alone moves exp by up to ~15 ulps).
        const double d = static_cast<float>(x[i] - static_cast<float>(max));
        const double want = log ? d - std::log(sum) : std::exp(d) / sum;
        worst = std::max(worst,
                         Ulps(y[i], want, log ? std::max(std::fabs(want), std::fabs(max)) : want));
      }
      EXPECT_LE(worst, 4) << (log ? "log_softmax" : "softmax") << " length " << n << " ("
                          << vector_math::isa() << ")";
      std::vector<float> inplace = x;
      vector_math::softmax_row(inplace.data(), inplace.data(), n, log);
      EXPECT_TRUE(std::equal(inplace.begin(), inplace.end(), y.begin(),
                             [](float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }))
          << "in place, length " << n;
    }
  }
}

// As PyTorch's: a row holding a NaN or +inf, or only -infs, is NaN throughout; -infs beside
// finite values give 0 (log: -inf); huge values do not overflow (the max is subtracted first).
TEST_P(VectorMath, SoftmaxRowsSpecialValuesAsPyTorch) {
  const float inf = INFINITY, nan = NAN;
  auto row = [](std::vector<float> x, bool log) {
    std::vector<float> y(x.size());
    vector_math::softmax_row(x.data(), y.data(), static_cast<int64_t>(x.size()), log);
    return y;
  };
  for (bool log : {false, true}) {
    // The special value in a full vector (index 0 of a long row) and in the padded last one.
    std::vector<float> nan_first(37, 1.0f), inf_first(37, 1.0f);
    nan_first[0] = nan;
    inf_first[0] = inf;
    for (const std::vector<float>& x :
         {std::vector<float>{1, nan, 2}, std::vector<float>{1, inf, 2},
          std::vector<float>{-inf, -inf}, std::vector<float>(37, nan), nan_first, inf_first}) {
      for (float v : row(x, log)) EXPECT_TRUE(std::isnan(v)) << (log ? "log " : "") << x.size();
    }
    std::vector<float> x(19, 3.0f);
    x[5] = -inf;
    const std::vector<float> y = row(x, log);
    EXPECT_EQ(y[5], log ? -inf : 0.0f);
    EXPECT_FLOAT_EQ(y[0], log ? -std::log(18.0f) : 1.0f / 18);
    const std::vector<float> big = row({3e38f, 3e38f}, log);
    EXPECT_FLOAT_EQ(big[1], log ? -std::log(2.0f) : 0.5f);
  }
}

}  // namespace
}  // namespace cpu
}  // namespace tessera

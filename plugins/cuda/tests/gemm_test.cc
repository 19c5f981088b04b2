// The tiled matrix product (gemm.h; Note [GPU tiled GEMM]) on the host: every thread of every
// block, phase by phase between the barriers, as kernels_gemm.cu runs it on a GPU.
#include "gemm.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessera {
namespace gpu {
namespace {

template <typename S>
void RunGemmOnHost(const GemmProblem& p) {
  uint32_t gx, gy, gz;
  ASSERT_TRUE(GemmGrid(p, &gx, &gy, &gz));
  const GemmArgs<S> g = MakeGemmArgs<S>(p);
  using A = GemmAcc<S>;
  A tile_a[kGemmTile][kGemmTile], tile_b[kGemmTile][kGemmTile];
  for (uint32_t bz = 0; bz < gz; ++bz) {
    for (uint32_t by = 0; by < gy; ++by) {
      for (uint32_t bx = 0; bx < gx; ++bx) {
        std::vector<A> acc(kGemmTile * kGemmTile, 0);
        for (int64_t k0 = 0; k0 < p.k; k0 += kGemmTile) {
          for (uint32_t ty = 0; ty < kGemmTile; ++ty) {
            for (uint32_t tx = 0; tx < kGemmTile; ++tx) {
              LoadTiles(g, bx, by, bz, tx, ty, k0, tile_a, tile_b);
            }
          }
          for (uint32_t ty = 0; ty < kGemmTile; ++ty) {
            for (uint32_t tx = 0; tx < kGemmTile; ++tx) {
              acc[ty * kGemmTile + tx] =
                  AccumulateTile<S>(acc[ty * kGemmTile + tx], tx, ty, tile_a, tile_b);
            }
          }
        }
        for (uint32_t ty = 0; ty < kGemmTile; ++ty) {
          for (uint32_t tx = 0; tx < kGemmTile; ++tx) {
            StoreTile(g, bx, by, bz, tx, ty, acc[ty * kGemmTile + tx]);
          }
        }
      }
    }
  }
}

// A plain reference in double: c[b][i][j] = beta * self + alpha * sum_k a[b][i][k] b[b][k][j].
std::vector<double> Reference(const std::vector<double>& a, const std::vector<double>& b,
                              const std::vector<double>* self, int64_t batch, int64_t m, int64_t n,
                              int64_t k, double alpha, double beta, bool a_t) {
  std::vector<double> c(static_cast<size_t>(batch * m * n));
  for (int64_t z = 0; z < batch; ++z) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t q = 0; q < k; ++q) {
          const double av = a_t ? a[z * m * k + q * m + i] : a[z * m * k + i * k + q];
          s += av * b[z * k * n + q * n + j];
        }
        c[z * m * n + i * n + j] = alpha * s + (self ? beta * (*self)[i * n + j] : 0);
      }
    }
  }
  return c;
}

TEST(GpuGemm, BatchedProductsOfOddShapesWithATransposedOperand) {
  const int64_t batch = 3, m = 37, n = 21, k = 50;
  std::mt19937 rng(9);
  std::vector<double> a(batch * m * k), b(batch * k * n), c(batch * m * n, -1);
  for (double& x : a) x = static_cast<int>(rng() % 7) - 3;
  for (double& x : b) x = static_cast<int>(rng() % 9) - 4;
  for (bool a_t : {false, true}) {
    SCOPED_TRACE(a_t);
    GemmProblem p;
    p.a = a.data();
    p.b = b.data();
    p.c = c.data();
    p.batch = batch;
    p.m = m;
    p.n = n;
    p.k = k;
    p.a_batch = m * k;
    p.a_row = a_t ? 1 : k;  // a_t: A stored as [k, m] and read transposed
    p.a_col = a_t ? m : 1;
    p.b_batch = k * n;
    p.b_row = n;
    p.b_col = 1;
    p.c_batch = m * n;
    p.c_row = n;
    p.c_col = 1;
    RunGemmOnHost<double>(p);
    EXPECT_EQ(c, Reference(a, b, nullptr, batch, m, n, k, 1, 0, a_t));
  }
}

TEST(GpuGemm, AddmmScalesAndAddsABroadcastSelfAndBetaZeroIgnoresNan) {
  const int64_t m = 5, n = 18, k = 3;
  std::vector<float> a(m * k), b(k * n), bias(n), c(m * n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 5);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 3) - 1;
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = static_cast<float>(i);
  GemmProblem p;
  p.a = a.data();
  p.b = b.data();
  p.self = bias.data();
  p.c = c.data();
  p.m = m;
  p.n = n;
  p.k = k;
  p.a_row = k;
  p.a_col = 1;
  p.b_row = n;
  p.b_col = 1;
  p.self_row = 0;  // a row vector broadcast over the rows
  p.self_col = 1;
  p.c_row = n;
  p.c_col = 1;
  p.alpha = 2;
  p.beta = 0.5;
  RunGemmOnHost<float>(p);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t q = 0; q < k; ++q) s += a[i * k + q] * b[q * n + j];
      ASSERT_EQ(c[i * n + j], static_cast<float>(2 * s + 0.5 * bias[j])) << i << " " << j;
    }
  }
  // beta = 0 (the plugin passes no self): a NaN in self does not reach the result.
  bias[0] = NAN;
  p.self = nullptr;
  RunGemmOnHost<float>(p);
  EXPECT_FALSE(std::isnan(c[0]));
}

TEST(GpuGemm, HalfAccumulatesInFloatAndRoundsOnce) {
  // 4096 products of 2^-12: summed in float16 the sum would stall at 0.5 (where the spacing
  // is 2^-11 and adding 2^-12 rounds to even); accumulated in float it is 1.
  const int64_t k = 4096;
  std::vector<uint16_t> a(k), b(k), c(1);
  for (int64_t i = 0; i < k; ++i) {
    a[i] = ToHalf(1.0f / 4096).bits;
    b[i] = ToHalf(1.0f).bits;
  }
  GemmProblem p;
  p.a = a.data();
  p.b = b.data();
  p.c = c.data();
  p.m = 1;
  p.n = 1;
  p.k = k;
  p.a_row = k;
  p.a_col = 1;
  p.b_row = 1;
  p.b_col = 1;
  p.c_row = 1;
  p.c_col = 1;
  RunGemmOnHost<Half>(p);
  EXPECT_EQ(ToFloat(Half{c[0]}), 1.0f);
  // An empty K: the product is 0 (C = beta * self only).
  p.k = 0;
  c[0] = ToHalf(5.0f).bits;
  RunGemmOnHost<Half>(p);
  EXPECT_EQ(ToFloat(Half{c[0]}), 0.0f);
}

TEST(GpuGemm, GridLimits) {
  GemmProblem p;
  p.m = 65535 * kGemmTile + 1;
  p.n = 1;
  uint32_t x, y, z;
  EXPECT_FALSE(GemmGrid(p, &x, &y, &z));
  p.m = 33;
  p.n = 17;
  p.batch = 4;
  ASSERT_TRUE(GemmGrid(p, &x, &y, &z));
  EXPECT_EQ(x, 2u);
  EXPECT_EQ(y, 3u);
  EXPECT_EQ(z, 4u);
}

}  // namespace
}  // namespace gpu
}  // namespace tessera

// The float32/float64 leaf sums (lane_sum.hpp): the vectorized contiguous sum, each vector
// unit's variant and the strided sum do the same additions in the same order, so their results
// are bitwise equal, for every length around the lane and block boundaries.
#include "lane_sum.hpp"

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace tessera {
namespace cpu {
namespace {

// Values whose sum depends on the order of the additions: magnitudes over 12 decades, both signs.
template <typename T>
std::vector<T> OrderSensitive(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> mantissa(-1, 1);
  std::uniform_int_distribution<int> exponent(-6, 6);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(mantissa(gen) * std::pow(10.0, exponent(gen)));
  return v;
}

// The documented order written out plainly: lane i % kLanes takes element i; lanes gather in
// fours, then halve.
template <typename T>
T ReferenceOrder(const std::vector<T>& v) {
  constexpr int kL = 128 / sizeof(T), kG = kL / 4;
  T lane[kL] = {};
  for (size_t i = 0; i < v.size(); ++i) lane[i % kL] += v[i];
  T g[kG];
  for (int j = 0; j < kG; ++j)
    g[j] = (lane[j] + lane[j + kG]) + (lane[j + 2 * kG] + lane[j + 3 * kG]);
  for (int w = kG / 2; w > 0; w /= 2) {
    for (int j = 0; j < w; ++j) g[j] += g[j + w];
  }
  return g[0];
}

template <typename T>
void ExpectEveryVariantEqual() {
  bool avx2_seen = false, avx512_seen = false;
  // Every length up to 300, then around the longest leaf (4096, reductions.cc's kLeaf).
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 300; ++n) lengths.push_back(n);
  for (size_t n : {1023, 1024, 4063, 4095, 4096}) lengths.push_back(n);
  for (size_t n : lengths) {
    const std::vector<T> v = OrderSensitive<T>(n, static_cast<uint32_t>(n));
    const T expected = ReferenceOrder(v);
    SCOPED_TRACE(testing::Message() << "n = " << n);
    EXPECT_EQ(contiguous_lane_sum(v.data(), static_cast<int64_t>(n)), expected);
    EXPECT_EQ(internal::portable_lane_sum(v.data(), static_cast<int64_t>(n)), expected);
    T avx2 = 0;
    if (internal::avx2_lane_sum(v.data(), static_cast<int64_t>(n), &avx2)) {
      avx2_seen = true;
      EXPECT_EQ(avx2, expected);
    }
    T avx512 = 0;
    if (internal::avx512_lane_sum(v.data(), static_cast<int64_t>(n), &avx512)) {
      avx512_seen = true;
      EXPECT_EQ(avx512, expected);
    }
    // The same values every third element of a larger buffer.
    std::vector<T> spread(3 * n + 1, T(1e30));
    for (size_t i = 0; i < n; ++i) spread[3 * i] = v[i];
    EXPECT_EQ(strided_lane_sum<T>(reinterpret_cast<const char*>(spread.data()), 3 * sizeof(T),
                                  static_cast<int64_t>(n)),
              expected);
  }
  if (!avx2_seen) std::printf("note: no AVX2 here; the AVX2 variant was not compared\n");
  if (!avx512_seen) std::printf("note: no AVX-512 here; the AVX-512 variant was not compared\n");
}

TEST(LaneSum, FloatVariantsAddInTheSameOrder) { ExpectEveryVariantEqual<float>(); }
TEST(LaneSum, DoubleVariantsAddInTheSameOrder) { ExpectEveryVariantEqual<double>(); }

TEST(LaneSum, UnalignedStartsAndSpecialValues) {
  std::vector<float> v = OrderSensitive<float>(300, 7);
  for (size_t offset = 1; offset < 8; ++offset) {
    const std::vector<float> tail(v.begin() + static_cast<long>(offset), v.end());
    EXPECT_EQ(contiguous_lane_sum(v.data() + offset, static_cast<int64_t>(tail.size())),
              ReferenceOrder(tail));
  }
  std::vector<float> special(70, 1.0f);
  special[40] = std::nanf("");
  EXPECT_TRUE(std::isnan(contiguous_lane_sum(special.data(), 70)));
  special[40] = INFINITY;
  EXPECT_EQ(contiguous_lane_sum(special.data(), 70), INFINITY);
  special[41] = -INFINITY;
  EXPECT_TRUE(std::isnan(contiguous_lane_sum(special.data(), 70)));
  // -0.0 alone sums to +0.0, as PyTorch's (its accumulator starts at +0.0).
  const double negative_zero[3] = {-0.0, -0.0, -0.0};
  EXPECT_FALSE(std::signbit(contiguous_lane_sum(negative_zero, 3)));
}

}  // namespace
}  // namespace cpu
}  // namespace tessera

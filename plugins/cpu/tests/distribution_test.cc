// The distributions of op set 1.6 (docs/random.md) on the CPU backend: each fits its law
// (Kolmogorov-Smirnov for the continuous ones, chi-square for the discrete ones, at significance
// 0.001 under fixed seeds), draws as many times as documented, gives the same bits on the sample
// NPU, and refuses what ATen refuses with its messages. The exact value of each element against
// the documented formula is the conformance suite's reference oracle (op_db_distributions.cc).
#include <cmath>
#include <functional>
#include <numeric>
#include <set>

#include "cpu_test_util.hpp"
#include "gmock/gmock.h"
#include "statistics.hpp"

namespace tessera {
namespace cpu_test {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kN = 20000;
const double kCritical = 1.95 / std::sqrt(static_cast<double>(kN));  // KS, significance 0.001

Tensor Empty(tsr_dtype dtype, std::vector<int64_t> size = {kN}) {
  return op("empty.memory_format", size, dtype);
}

std::vector<double> AsDoubles(const Tensor& t) {
  return values<double>(op("to.dtype", t, TSR_DTYPE_FLOAT64));
}

double Phi(double x) { return 0.5 * std::erfc(-x / M_SQRT2); }

TEST(Distributions, ContinuousOnesPassKolmogorovSmirnov) {
  ensure_runtime();
  Generator g(2027);
  for (tsr_dtype dtype : {TSR_DTYPE_FLOAT32, TSR_DTYPE_FLOAT64}) {
    SCOPED_TRACE(sdk::dtype_name(dtype));
    const std::vector<double> e = AsDoubles(op("exponential_", Empty(dtype), 2.0, g));
    EXPECT_LT(KsDistance(e, [](double x) { return 1 - std::exp(-2 * x); }), kCritical);
    EXPECT_GE(*std::min_element(e.begin(), e.end()), 0.0);
    const std::vector<double> l = AsDoubles(op("log_normal_", Empty(dtype), 0.5, 0.75, g));
    EXPECT_LT(KsDistance(l, [](double x) { return Phi((std::log(x) - 0.5) / 0.75); }), kCritical);
    const std::vector<double> c = AsDoubles(op("cauchy_", Empty(dtype), 1.0, 2.0, g));
    EXPECT_LT(KsDistance(c, [](double x) { return 0.5 + std::atan((x - 1) / 2) / M_PI; }),
              kCritical);
  }
  // normal with tensor parameters: (x - mean) / std is standard normal, element by element.
  std::vector<double> mean(kN), std(kN);
  for (int64_t i = 0; i < kN; ++i) {
    mean[i] = static_cast<double>(i % 7) - 3;
    std[i] = 0.5 + static_cast<double>(i % 5);
  }
  const std::vector<double> x =
      values<double>(op("normal.Tensor_Tensor", f64(mean, {kN}), f64(std, {kN}), g));
  std::vector<double> z(kN);
  for (int64_t i = 0; i < kN; ++i) z[i] = (x[i] - mean[i]) / std[i];
  EXPECT_LT(KsDistance(z, Phi), kCritical);
  const std::vector<double> ff = values<double>(
      op("normal.float_float", -2.0, 3.0, std::vector<int64_t>{kN}, g, TSR_DTYPE_FLOAT64));
  EXPECT_LT(KsDistance(ff, [](double v) { return Phi((v + 2) / 3); }), kCritical);
}

TEST(Distributions, DiscreteOnesPassChiSquare) {
  ensure_runtime();
  Generator g(2028);
  // geometric_(p = 0.3): P(k) = 0.7^(k-1) 0.3 for k = 1..10, the tail beyond; 10 degrees of
  // freedom, 29.59 at significance 0.001.
  const std::vector<int64_t> k = values<int64_t>(op("geometric_", Empty(TSR_DTYPE_INT64), 0.3, g));
  std::vector<double> observed(11, 0), expected(11, 0);
  for (int64_t v : k) {
    ASSERT_GE(v, 1);
    ++observed[static_cast<size_t>(std::min<int64_t>(v, 11) - 1)];
  }
  for (int j = 0; j < 10; ++j) expected[j] = kN * std::pow(0.7, j) * 0.3;
  expected[10] = kN * std::pow(0.7, 10);
  EXPECT_LT(ChiSquare(observed, expected), 29.59);
  // random_.from(-3, 7) in int32: ten values evenly; 9 degrees of freedom, 27.88.
  const std::vector<int32_t> r =
      values<int32_t>(op("random_.from", Empty(TSR_DTYPE_INT32), int64_t{-3}, int64_t{7}, g));
  std::vector<double> counts(10, 0);
  for (int32_t v : r) {
    ASSERT_TRUE(v >= -3 && v < 7) << v;
    ++counts[static_cast<size_t>(v + 3)];
  }
  EXPECT_LT(ChiSquare(counts, std::vector<double>(10, kN / 10.0)), 27.88);
  // random_ over int64's 2^63 values (two draws): its top three bits evenly; 7 degrees of
  // freedom, 24.32.
  const std::vector<int64_t> wide = values<int64_t>(op("random_", Empty(TSR_DTYPE_INT64), g));
  std::vector<double> top(8, 0);
  for (int64_t v : wide) {
    ASSERT_GE(v, 0);
    ++top[static_cast<size_t>(v >> 60)];
  }
  EXPECT_LT(ChiSquare(top, std::vector<double>(8, kN / 8.0)), 24.32);
  // ... and its low three bits (the second draw's).
  std::vector<double> low(8, 0);
  for (int64_t v : wide) ++low[static_cast<size_t>(v & 7)];
  EXPECT_LT(ChiSquare(low, std::vector<double>(8, kN / 8.0)), 24.32);
}

TEST(Distributions, MultinomialFrequenciesPassChiSquare) {
  ensure_runtime();
  Generator g(2029);
  const std::vector<float> p = {0.1f, 0.0f, 0.4f, 0.2f, 0.3f};
  // With replacement: each category's frequency is its probability (category 1 never); 3
  // degrees of freedom over the four others, 16.27 at significance 0.001.
  const std::vector<int64_t> with = values<int64_t>(op("multinomial", f32(p, {5}), kN, true, g));
  std::vector<double> counts(5, 0);
  for (int64_t v : with) ++counts[static_cast<size_t>(v)];
  EXPECT_EQ(counts[1], 0);
  EXPECT_LT(ChiSquare({counts[0], counts[2], counts[3], counts[4]},
                      {kN * 0.1, kN * 0.4, kN * 0.2, kN * 0.3}),
            16.27);
  // One sample per row without replacement, over many rows: the same frequencies.
  std::vector<float> rows;
  for (int64_t i = 0; i < kN; ++i) rows.insert(rows.end(), p.begin(), p.end());
  const std::vector<int64_t> first =
      values<int64_t>(op("multinomial", f32(rows, {kN, 5}), int64_t{1}, false, g));
  std::fill(counts.begin(), counts.end(), 0);
  for (int64_t v : first) ++counts[static_cast<size_t>(v)];
  EXPECT_EQ(counts[1], 0);
  EXPECT_LT(ChiSquare({counts[0], counts[2], counts[3], counts[4]},
                      {kN * 0.1, kN * 0.4, kN * 0.2, kN * 0.3}),
            16.27);
  // Without replacement: distinct categories, every non-zero one before a zero one.
  const std::vector<int64_t> all =
      values<int64_t>(op("multinomial", f32(p, {5}), int64_t{5}, false, g));
  EXPECT_EQ(std::set<int64_t>(all.begin(), all.end()).size(), 5u);
  EXPECT_EQ(all.back(), 1);
  // The out= form takes int64 only.
  Tensor out = i64({}, {0});
  op("multinomial.out", f32(p, {5}), int64_t{3}, true, g, out);
  EXPECT_EQ(shape(out), (std::vector<int64_t>{3}));
  EXPECT_THAT(error_of("multinomial.out", f32(p, {5}), int64_t{3}, true, g, f32({}, {0})),
              HasSubstr("multinomial expects Long tensor out, got: float32"));
  EXPECT_THAT(error_of("multinomial", f32({0, 0}, {2}), int64_t{1}, true),
              HasSubstr("invalid multinomial distribution (sum of probabilities <= 0)"));
  EXPECT_THAT(error_of("multinomial", f32({1, NAN}, {2}), int64_t{1}, true),
              HasSubstr("probability tensor contains either `inf`, `nan` or element < 0"));
  EXPECT_THAT(error_of("multinomial", f32(p, {5}), int64_t{6}, false),
              HasSubstr("cannot sample n_sample > prob_dist.size(-1) samples without replacement"));
}

TEST(Distributions, RandomDrawsIntegersOfTheDtypesRange) {
  ensure_runtime();
  Generator g(9);
  // Without bounds: [0, 2^digits] for a floating dtype, [0, max] otherwise.
  const std::vector<double> f = AsDoubles(op("random_", Empty(TSR_DTYPE_FLOAT16), g));
  EXPECT_LE(*std::max_element(f.begin(), f.end()), 2048.0);
  for (double v : f) ASSERT_EQ(v, std::floor(v));
  const std::vector<uint8_t> u8 = values<uint8_t>(op("random_", Empty(TSR_DTYPE_UINT8), g));
  EXPECT_EQ(*std::max_element(u8.begin(), u8.end()), 255);
  EXPECT_EQ(*std::min_element(u8.begin(), u8.end()), 0);
  // bool: 0 and 1 evenly (1 degree of freedom, 10.83).
  const std::vector<uint8_t> b = values<uint8_t>(op("random_", Empty(TSR_DTYPE_BOOL), g));
  const double ones = std::count(b.begin(), b.end(), uint8_t{1});
  EXPECT_EQ(std::count(b.begin(), b.end(), uint8_t{0}) + ones, kN) << "only 0 and 1";
  EXPECT_LT(ChiSquare({ones, kN - ones}, {kN / 2.0, kN / 2.0}), 10.83);
  // random_.to(to) is [0, to); random_.from(from, None) reaches the top.
  const std::vector<int8_t> to =
      values<int8_t>(op("random_.to", Empty(TSR_DTYPE_INT8), int64_t{3}, g));
  EXPECT_EQ(*std::max_element(to.begin(), to.end()), 2);
  const std::vector<int8_t> from =
      values<int8_t>(op("random_.from", Empty(TSR_DTYPE_INT8), int64_t{120}, std::nullopt, g));
  EXPECT_EQ(*std::min_element(from.begin(), from.end()), 120);
  EXPECT_EQ(*std::max_element(from.begin(), from.end()), 127);
  // Bounds beyond 2^53 stay exact: the sum is an int64 one.
  const int64_t base = (int64_t{1} << 60) + 256;
  const std::vector<int64_t> big =
      values<int64_t>(op("random_.from", Empty(TSR_DTYPE_INT64), base, base + 200, g));
  for (int64_t v : big) ASSERT_TRUE(v >= base && v < base + 200) << v;
  // float16's values near 65504 round: [0, 65504) moves `to` down to 65472 (ATen's update_to),
  // so no value rounds up to 65504.
  const std::vector<double> h =
      AsDoubles(op("random_.from", Empty(TSR_DTYPE_FLOAT16), int64_t{60000}, int64_t{65504}, g));
  EXPECT_LT(*std::max_element(h.begin(), h.end()), 65504.0);
  // randint_like: self's shape, self's dtype unless given.
  const Tensor like = op("randint_like", f32({1, 2, 3, 4, 5, 6}, {2, 3}), int64_t{4});
  EXPECT_EQ(like.dtype(), TSR_DTYPE_FLOAT32);
  EXPECT_EQ(shape(like), (std::vector<int64_t>{2, 3}));
  for (float v : values<float>(like)) EXPECT_TRUE(v >= 0 && v < 4 && v == std::floor(v)) << v;
  EXPECT_EQ(
      op("randint_like.low_dtype", f32({1}, {1}), int64_t{-2}, int64_t{2}, TSR_DTYPE_INT16).dtype(),
      TSR_DTYPE_INT16);
}

TEST(Distributions, EachCallDrawsAsDocumented) {
  ensure_runtime();
  Generator g(3);
  auto offset_after = [&](const std::function<void()>& call) {
    g.set_state({3, 0});
    call();
    return g.state().offset;
  };
  EXPECT_EQ(offset_after([&] { op("exponential_", Empty(TSR_DTYPE_FLOAT32, {4}), 1.0, g); }), 1u);
  EXPECT_EQ(offset_after([&] { op("cauchy_", Empty(TSR_DTYPE_FLOAT32, {4}), 0.0, 1.0, g); }), 1u);
  // A range of at most 2^53 values takes one draw, a larger one two.
  EXPECT_EQ(offset_after([&] { op("random_", Empty(TSR_DTYPE_INT32, {4}), g); }), 1u);
  EXPECT_EQ(offset_after([&] { op("random_", Empty(TSR_DTYPE_INT64, {4}), g); }), 2u);
  EXPECT_EQ(offset_after([&] { op("random_", Empty(TSR_DTYPE_FLOAT64, {4}), g); }), 2u);
  // random_.from over [low, high) gives randint's numbers for the same draw.
  g.set_state({3, 5});
  const std::vector<int64_t> a =
      values<int64_t>(op("random_.from", Empty(TSR_DTYPE_INT64, {50}), int64_t{-4}, int64_t{9}, g));
  g.set_state({3, 5});
  EXPECT_EQ(a, values<int64_t>(op("randint.low_generator", int64_t{-4}, int64_t{9},
                                  std::vector<int64_t>{50}, g)));
  // A refused call draws nothing.
  EXPECT_EQ(offset_after([&] { error_of("exponential_", Empty(TSR_DTYPE_FLOAT32, {4}), -1.0, g); }),
            0u);
}

TEST(Distributions, RefusalsNameWhatWasExpectedAndFound) {
  ensure_runtime();
  const Tensor x = Empty(TSR_DTYPE_FLOAT32, {3});
  EXPECT_THAT(error_of("exponential_", x, 0.0),
              HasSubstr("exponential_: expects lambda > 0.0, but found lambda=0"));
  EXPECT_THAT(error_of("exponential_", Empty(TSR_DTYPE_INT64, {3}), 1.0),
              HasSubstr("expected a floating-point tensor, got int64"));
  EXPECT_THAT(error_of("geometric_", x, 1.0),
              HasSubstr("geometric_: expects p to be in (0, 1), but got p=1"));
  EXPECT_THAT(error_of("geometric_", Empty(TSR_DTYPE_BOOL, {3}), 0.5),
              HasSubstr("expected a numeric tensor, got bool"));
  EXPECT_THAT(error_of("log_normal_", x, 1.0, -2.0),
              HasSubstr("log_normal_: expects std > 0.0, but found std=-2"));
  EXPECT_THAT(error_of("cauchy_", Empty(TSR_DTYPE_INT32, {3}), 0.0, 1.0),
              HasSubstr("Cauchy distribution is a continuous probability distribution. dtype "
                        "must be a floating point but you specified int32"));
  EXPECT_THAT(error_of("random_.from", Empty(TSR_DTYPE_INT64, {3}), int64_t{5}, int64_t{5}),
              HasSubstr("random_ expects 'from' to be less than 'to', but got from=5 >= to=5"));
  EXPECT_THAT(error_of("random_.to", Empty(TSR_DTYPE_UINT8, {3}), int64_t{300}),
              HasSubstr("random_.to: to - 1 is out of bounds for uint8 (got 299)"));
  EXPECT_THAT(error_of("random_.from", Empty(TSR_DTYPE_INT64, {3}), INT64_MIN, std::nullopt),
              HasSubstr("a range of more than 2^63 values is not supported"));
  EXPECT_THAT(error_of("normal.Tensor_float", x, -1.0),
              HasSubstr("normal expects std >= 0.0, but found std -1"));
  EXPECT_THAT(error_of("normal.float_Tensor", 0.0, f32({1, -1}, {2})),
              HasSubstr("normal expects all elements of std >= 0.0"));
  EXPECT_THAT(error_of("normal.Tensor_Tensor", f32({0, 0}, {2}), f32({1, 1, 1}, {3})),
              HasSubstr("normal.Tensor_Tensor: the size of tensor a (2) must match the size of "
                        "tensor b (3)"));
  EXPECT_THAT(error_of("normal.Tensor_float", i64({1}, {1}), 1.0),
              HasSubstr("expected a floating-point mean, got int64"));
}

// The sample NPU runs uniform_ natively and the rest of each composite natively or through the
// CPU fallback: the same bits as the CPU backend for the same draw. Where one of its float32-only
// kernels refuses the composite's float64 arithmetic (its neg, exp, add), the op is
// UNIMPLEMENTED there, naming that kernel: a registered kernel's refusal does not reach the
// fallback (docs/random.md, "For backend authors").
TEST(Distributions, TheSampleNpuGivesTheSameBits) {
  ensure_runtime();
  const tsr_device npu = LoadSampleNpu();
  const tsr_device cpu{TSR_DEVICE_CPU, 0};
  auto both = [&](const std::function<Tensor(const Tensor&, const Generator&)>& call,
                  tsr_dtype dtype) {
    Generator a(41), b(41);
    const Tensor on_cpu = call(Tensor::empty({2, 40}, dtype, cpu), a);
    const Tensor on_npu = call(Tensor::empty({2, 40}, dtype, npu), b);
    EXPECT_EQ(AsDoubles(on_cpu), AsDoubles(to(on_npu, cpu)));
    EXPECT_EQ(a.state().offset, b.state().offset);
  };
  both([](const Tensor& t, const Generator& g) { return op("cauchy_", t, 0.0, 1.0, g); },
       TSR_DTYPE_FLOAT32);
  both([](const Tensor& t, const Generator& g) { return op("random_", t, g); }, TSR_DTYPE_INT32);
  both([](const Tensor& t,
          const Generator& g) { return op("random_.from", t, int64_t{-5}, int64_t{5}, g); },
       TSR_DTYPE_FLOAT32);
  both(
      [](const Tensor& t, const Generator& g) {
        return op("normal.Tensor_float", op("fill_.Scalar", t, 2.0), 0.5, g);
      },
      TSR_DTYPE_FLOAT32);
  Generator g(41);
  EXPECT_THAT(error_of("exponential_", Tensor::empty({4}, TSR_DTYPE_FLOAT32, npu), 1.0, g),
              HasSubstr("exponential_: npu neg: not implemented for dtype float64"));
}

}  // namespace
}  // namespace cpu_test
}  // namespace tessera

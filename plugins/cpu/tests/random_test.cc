// The random ops of op set 1.5 on the CPU backend (docs/random.md): Philox's published answers,
// each element's value as the documented mapping computes it from the call's draw, the
// generator's state (seeded, advanced once per kernel call, restorable), the distributions
// (Kolmogorov-Smirnov and chi-square at fixed seeds), dropout's expectation, the same bits at
// any thread count, any layout, and on the sample NPU plugin, and the errors.
#include "tessera/sdk/random.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "cpu_test_util.hpp"
#include "gmock/gmock.h"
#include "statistics.hpp"
#include "tessera/sdk/ops.hpp"

namespace tessera {
namespace cpu_test {
namespace {

using ::testing::HasSubstr;

// Random123's known-answer vectors for Philox-4x32-10 (its kat_vectors file).
TEST(Philox, KnownAnswers) {
  auto block = [](uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0, uint32_t k1) {
    const sdk::PhiloxBlock b = sdk::philox4x32_10(c0, c1, c2, c3, k0, k1);
    return std::vector<uint32_t>(b.x, b.x + 4);
  };
  EXPECT_EQ(block(0, 0, 0, 0, 0, 0),
            (std::vector<uint32_t>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(block(~0u, ~0u, ~0u, ~0u, ~0u, ~0u),
            (std::vector<uint32_t>{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(block(0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0),
            (std::vector<uint32_t>{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

// The draw's counter is (element index, offset) and its key the seed, word by word.
TEST(Philox, DrawBlockIsTheDocumentedCounter) {
  const sdk::RandomDraw draw{0x299f31d0a4093822ull, 0x037073441319 * 0x10000ull + 0x8a2e};
  const sdk::PhiloxBlock a = draw.block(0x85a308d3243f6a88ull);
  const sdk::PhiloxBlock b =
      sdk::philox4x32_10(0x243f6a88, 0x85a308d3, static_cast<uint32_t>(draw.offset),
                         static_cast<uint32_t>(draw.offset >> 32), 0xa4093822, 0x299f31d0);
  EXPECT_EQ(std::vector<uint32_t>(a.x, a.x + 4), std::vector<uint32_t>(b.x, b.x + 4));
}

Tensor rand_with(const Generator& g, std::vector<int64_t> size, tsr_dtype dtype) {
  return op("rand.generator", size, g, dtype);
}

TEST(Random, EachElementIsTheDocumentedValueOfItsBlock) {
  ensure_runtime();
  Generator g(1234);
  g.set_state({1234, 77});
  const std::vector<float> u = values<float>(rand_with(g, {5, 7}, TSR_DTYPE_FLOAT32));
  const std::vector<double> d =
      values<double>(op("normal_", f64(std::vector<double>(9, 0), {9}), 2.0, 3.0, g));
  const sdk::RandomDraw first{1234, 77}, second{1234, 78};
  for (size_t i = 0; i < u.size(); ++i) {
    const float want = sdk::uniform_float(first.block(i), 0.0f, 1.0f);
    ASSERT_EQ(u[i], want) << i;
    ASSERT_GE(u[i], 0.0f);
    ASSERT_LT(u[i], 1.0f);
  }
  for (size_t i = 0; i < d.size(); ++i) ASSERT_EQ(d[i], sdk::normal(second.block(i), 2.0, 3.0));
  EXPECT_EQ(g.state().offset, 79u) << "one offset per random kernel call";
}

TEST(Random, SeedGivesTheSameBitsAndStateReplays) {
  ensure_runtime();
  Generator a(7), b(7), c(8);
  const std::vector<float> x = values<float>(rand_with(a, {100}, TSR_DTYPE_FLOAT32));
  EXPECT_EQ(x, values<float>(rand_with(b, {100}, TSR_DTYPE_FLOAT32)));
  EXPECT_NE(x, values<float>(rand_with(c, {100}, TSR_DTYPE_FLOAT32)));
  const Generator::State saved = a.state();
  const std::vector<float> y = values<float>(rand_with(a, {100}, TSR_DTYPE_FLOAT32));
  EXPECT_NE(x, y) << "the next call draws the next offset";
  a.set_state(saved);
  EXPECT_EQ(y, values<float>(rand_with(a, {100}, TSR_DTYPE_FLOAT32)));
  // The default generator: manual_seed restarts it.
  manual_seed(99);
  const std::vector<float> z = values<float>(op("rand", std::vector<int64_t>{50}));
  manual_seed(99);
  EXPECT_EQ(z, values<float>(op("rand", std::vector<int64_t>{50})));
  EXPECT_EQ(Generator::default_for({TSR_DEVICE_CPU, 0}).state().offset, 1u);
}

TEST(Random, SameBitsAtAnyThreadCountAndLayout) {
  ensure_runtime();
  const int32_t threads = tsr_num_threads();
  Generator g(5);
  const Generator::State s = g.state();
  sdk::check(tsr_set_num_threads(1));
  const std::vector<float> one = values<float>(rand_with(g, {300000}, TSR_DTYPE_FLOAT32));
  sdk::check(tsr_set_num_threads(4));
  g.set_state(s);
  const std::vector<float> four = values<float>(rand_with(g, {300000}, TSR_DTYPE_FLOAT32));
  sdk::check(tsr_set_num_threads(threads));
  EXPECT_EQ(one, four);
  // uniform_ on a transposed view: element (i, j) of the view is row-major position i * 4 + j.
  const Tensor base = f32(std::vector<float>(12, 0), {4, 3});
  const Tensor view = op("t", base);  // [3, 4], strides [1, 3]
  g.set_state({5, 0});
  op("uniform_", view, -2.0, 2.0, g);
  g.set_state({5, 0});
  const Tensor dense = op("uniform_", f32(std::vector<float>(12, 0), {3, 4}), -2.0, 2.0, g);
  EXPECT_EQ(values<float>(view), values<float>(dense));
}

TEST(Random, DistributionsPassKolmogorovSmirnov) {
  ensure_runtime();
  constexpr int64_t n = 20000;
  // At significance 0.001 the critical distance is 1.95 / sqrt(n); the seeds are fixed, so the
  // test is deterministic.
  const double critical = 1.95 / std::sqrt(static_cast<double>(n));
  Generator g(2026);
  for (tsr_dtype dtype : {TSR_DTYPE_FLOAT32, TSR_DTYPE_FLOAT64}) {
    SCOPED_TRACE(sdk::dtype_name(dtype));
    std::vector<double> u =
        values<double>(op("to.dtype", rand_with(g, {n}, dtype), TSR_DTYPE_FLOAT64));
    EXPECT_LT(KsDistance(u, [](double x) { return x; }), critical);
    Tensor z =
        op("normal_", op("empty.memory_format", std::vector<int64_t>{n}, dtype), 1.5, 2.0, g);
    std::vector<double> zd = values<double>(op("to.dtype", z, TSR_DTYPE_FLOAT64));
    EXPECT_LT(
        KsDistance(zd, [](double x) { return 0.5 * std::erfc(-(x - 1.5) / (2.0 * M_SQRT2)); }),
        critical);
  }
  // uniform_ with a range, in float16 and bfloat16 too.
  for (tsr_dtype dtype : {TSR_DTYPE_FLOAT16, TSR_DTYPE_BFLOAT16}) {
    Tensor t =
        op("uniform_", op("empty.memory_format", std::vector<int64_t>{n}, dtype), -3.0, 5.0, g);
    std::vector<double> v = values<double>(op("to.dtype", t, TSR_DTYPE_FLOAT64));
    EXPECT_GE(*std::min_element(v.begin(), v.end()), -3.0);
    EXPECT_LE(*std::max_element(v.begin(), v.end()), 5.0);
    const double mean = std::accumulate(v.begin(), v.end(), 0.0) / n;
    EXPECT_NEAR(mean, 1.0, 0.05);
  }
}

TEST(Random, BernoulliFrequenciesPassChiSquare) {
  ensure_runtime();
  Generator g(11);
  constexpr int64_t n = 40000;
  for (double p : {0.1, 0.5, 0.9}) {
    SCOPED_TRACE(p);
    Tensor t = op("bernoulli.p", f32(std::vector<float>(n, 0), {n}), p, g);
    const std::vector<float> v = values<float>(t);
    const double ones = std::count(v.begin(), v.end(), 1.0f);
    EXPECT_EQ(std::count(v.begin(), v.end(), 0.0f) + ones, n) << "only 0 and 1";
    const double expected1 = n * p, expected0 = n * (1 - p);
    const double chi2 = (ones - expected1) * (ones - expected1) / expected1 +
                        (n - ones - expected0) * (n - ones - expected0) / expected0;
    EXPECT_LT(chi2, 10.83);  // 1 degree of freedom, significance 0.001
  }
  // Probabilities per element; p = 0 and p = 1 are exact; any dtype in place.
  const std::vector<float> b = values<float>(op("bernoulli", f32({0, 1, 0, 1, 0, 1}, {6}), g));
  EXPECT_EQ(b, (std::vector<float>{0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(values<int64_t>(op("bernoulli_.float", i64({5, 5, 5}, {3}), 1.0, g)),
            (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(values<uint8_t>(op("bernoulli_.float", b8({1, 1}, {2}), 0.0, g)),
            (std::vector<uint8_t>{0, 0}));
  EXPECT_THAT(error_of("bernoulli_.float", f32({0}, {1}), 1.5),
              HasSubstr("bernoulli_.float: expects p to be in [0, 1], but got p=1.5"));
  EXPECT_THAT(error_of("bernoulli", i64({0}, {1})),
              HasSubstr("expected a floating-point tensor of probabilities, got int64"));
}

TEST(Random, NativeDropoutKeepsTheExpectation) {
  ensure_runtime();
  manual_seed(3);
  constexpr int64_t n = 50000;
  const Tensor input = f32(std::vector<float>(n, 2.0f), {n});
  std::vector<Tensor> r = ops("native_dropout", input, 0.25, true);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[1].dtype(), TSR_DTYPE_BOOL);
  const std::vector<float> out = values<float>(r[0]);
  const std::vector<uint8_t> mask = values<uint8_t>(r[1]);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(out[i], mask[i] ? 2.0f / 0.75f : 0.0f) << i;
  }
  const double mean = std::accumulate(out.begin(), out.end(), 0.0) / n;
  EXPECT_NEAR(mean, 2.0, 0.03);
  // The backward: grad * mask * scale.
  const std::vector<float> grad = values<float>(
      op("native_dropout_backward", f32(std::vector<float>(n, 1.0f), {n}), r[1], 1.0 / 0.75));
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(grad[i], mask[i] ? 1.0f / 0.75f : 0.0f);
  // Outside training: a copy and an all-true mask; p = 1: all dropped, scale 0.
  r = ops("native_dropout", input, 0.5, false);
  EXPECT_EQ(values<float>(r[0]), std::vector<float>(n, 2.0f));
  EXPECT_EQ(values<uint8_t>(r[1]), std::vector<uint8_t>(n, 1));
  EXPECT_NE(r[0].get(), input.get());
  r = ops("native_dropout", f32({1, 2}, {2}), 1.0, std::nullopt);  // train None: training
  EXPECT_EQ(values<float>(r[0]), (std::vector<float>{0, 0}));
  // An empty input: an empty output and an empty mask of the input's dtype (as ATen).
  r = ops("native_dropout", f32({}, {0, 3}), 0.5, true);
  EXPECT_EQ(shape(r[0]), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(r[1].dtype(), TSR_DTYPE_FLOAT32);
}

TEST(Random, DropoutAsATen) {
  ensure_runtime();
  const Tensor input = f32({1, 2, 3, 4}, {4});
  EXPECT_EQ(op("dropout", input, 0.5, false).get(), input.get()) << "eval: the input itself";
  EXPECT_EQ(op("dropout", input, 0.0, true).get(), input.get());
  EXPECT_EQ(values<float>(op("dropout", input, 1.0, true)), (std::vector<float>{0, 0, 0, 0}));
  const std::vector<float> v = values<float>(op("dropout", input, 0.5, true));
  for (size_t i = 0; i < v.size(); ++i) EXPECT_TRUE(v[i] == 0 || v[i] == 2 * (i + 1)) << i;
  EXPECT_THAT(error_of("dropout", input, 1.5, true),
              HasSubstr("dropout: dropout probability has to be between 0 and 1, but got 1.5"));
}

TEST(Random, FactoriesTheirFormsAndErrors) {
  ensure_runtime();
  Generator g(1);
  EXPECT_EQ(shape(op("randn", std::vector<int64_t>{2, 3})), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(op("randn", std::vector<int64_t>{2}, TSR_DTYPE_FLOAT64).dtype(), TSR_DTYPE_FLOAT64);
  const Tensor like = op("t", f32(std::vector<float>(6, 0), {2, 3}));
  Tensor t = op("rand_like", like);
  EXPECT_EQ(t.strides().vec(), like.strides().vec());
  EXPECT_EQ(op("randn_like", like, TSR_DTYPE_BFLOAT16).dtype(), TSR_DTYPE_BFLOAT16);
  const Tensor out = f64({0}, {1});
  op("rand.generator_out", std::vector<int64_t>{4, 2}, g, out);
  EXPECT_EQ(shape(out), (std::vector<int64_t>{4, 2}));
  op("randn.out", std::vector<int64_t>{3}, out);
  EXPECT_EQ(shape(out), (std::vector<int64_t>{3}));
  EXPECT_EQ(shape(op("rand", std::vector<int64_t>{0})), (std::vector<int64_t>{0}));
  EXPECT_EQ(op("rand", std::vector<int64_t>{}).dim(), 0);

  EXPECT_THAT(error_of("rand", std::vector<int64_t>{2}, TSR_DTYPE_INT64),
              HasSubstr("rand: expected a floating-point dtype, got int64"));
  EXPECT_THAT(error_of("rand", std::vector<int64_t>{-1}), HasSubstr("-1"));
  EXPECT_THAT(error_of("uniform_", i64({1}, {1})),
              HasSubstr("uniform_: expected a floating-point tensor, got int64"));
  EXPECT_THAT(error_of("uniform_", f32({1}, {1}), 2.0, 1.0),
              HasSubstr("uniform_: expects to return a [from, to) range, but found from=2 > to=1"));
  EXPECT_THAT(error_of("uniform_", f32({1}, {1}), -1e308, 1e308), HasSubstr("finite"));
  EXPECT_THAT(error_of("normal_", f32({1}, {1}), 0.0, -1.0),
              HasSubstr("normal_: expects std >= 0.0, but found std -1"));
  // Bounds within the dtype, as ATen's check_uniform_bounds (no infinities from a float range).
  EXPECT_THAT(error_of("uniform_", f32({1}, {1}), -3e38, 3e38),
              HasSubstr("uniform_: expects to-from <= the largest float32"));
  EXPECT_THAT(error_of("uniform_", f16({1}, {1}), 0.0, 1e5),
              HasSubstr("uniform_: to is out of bounds for float16"));
  EXPECT_THAT(error_of("bernoulli", f32({0.5, 1.5}, {2})),
              HasSubstr("bernoulli: expects all elements of p to be in [0, 1]"));
  EXPECT_THAT(error_of("bernoulli", f32({NAN}, {1})), HasSubstr("in [0, 1]"));
  // A refused call draws nothing: a bad argument, or a self whose elements overlap.
  const Generator::State before = g.state();
  error_of("normal_", f32({1}, {1}), 0.0, -1.0, g);
  const Tensor overlapping = op("expand", f32({1}, {1}), std::vector<int64_t>{4});
  EXPECT_THAT(error_of("uniform_", overlapping, 0.0, 1.0, g),
              HasSubstr("a single memory location"));
  EXPECT_EQ(g.state().offset, before.offset);
}

TEST(Random, RandintAndRandpermFromOneUniformDraw) {
  ensure_runtime();
  Generator g(21);
  g.set_state({21, 4});
  const std::vector<int64_t> r = values<int64_t>(
      op("randint.low_generator", int64_t{-3}, int64_t{7}, std::vector<int64_t>{1000}, g));
  const sdk::RandomDraw draw{21, 4};
  std::vector<int> counts(10, 0);
  for (size_t i = 0; i < r.size(); ++i) {
    ASSERT_EQ(r[i],
              static_cast<int64_t>(std::floor(sdk::uniform_double(draw.block(i), 0, 1) * 10)) - 3)
        << i;
    ++counts[static_cast<size_t>(r[i] + 3)];
  }
  double chi2 = 0;  // 9 degrees of freedom; 27.88 at significance 0.001
  for (int c : counts) chi2 += (c - 100.0) * (c - 100.0) / 100.0;
  EXPECT_LT(chi2, 27.88);
  EXPECT_EQ(op("randint", int64_t{5}, std::vector<int64_t>{2, 2}).dtype(), TSR_DTYPE_INT64);
  EXPECT_EQ(ops::randint(0, 10, {3}, g, TSR_DTYPE_INT8).dtype(), TSR_DTYPE_INT8);
  // randperm: every index once, the same for the same state, any dtype that holds n - 1.
  g.set_state({21, 9});
  std::vector<int64_t> p = values<int64_t>(op("randperm.generator", int64_t{500}, g));
  g.set_state({21, 9});
  EXPECT_EQ(p, values<int64_t>(op("randperm.generator", int64_t{500}, g)));
  std::vector<int64_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> iota(500);
  std::iota(iota.begin(), iota.end(), 0);
  EXPECT_EQ(sorted, iota);
  EXPECT_NE(p, iota);
  EXPECT_EQ(shape(op("randperm", int64_t{0})), (std::vector<int64_t>{0}));
  EXPECT_EQ(values<float>(op("randperm", int64_t{1}, TSR_DTYPE_FLOAT32)), (std::vector<float>{0}));

  EXPECT_THAT(error_of("randint.low", int64_t{5}, int64_t{5}, std::vector<int64_t>{1}),
              HasSubstr("random_ expects 'from' to be less than 'to', but got from=5 >= to=5"));
  EXPECT_THAT(error_of("randint", int64_t{300}, std::vector<int64_t>{1}, TSR_DTYPE_UINT8),
              HasSubstr("randint: [0, 300) does not fit dtype uint8"));
  EXPECT_THAT(error_of("randint", int64_t{1} << 60, std::vector<int64_t>{1}),
              HasSubstr("bounds beyond +-2^53 are not supported"));
  EXPECT_THAT(error_of("randperm", int64_t{-1}),
              HasSubstr("randperm: n must be non-negative, got -1"));
  EXPECT_THAT(error_of("randperm", int64_t{300}, TSR_DTYPE_INT8),
              HasSubstr("n=300 does not fit dtype int8"));
}

// The sample NPU plugin implements uniform_ with the SDK's mapping and leaves normal_ to the CPU
// fallback: both give the CPU backend's bits for the same draw, also from the default
// generators (each device's own, seeded alike).
TEST(Random, TheSampleNpuGivesTheSameBits) {
  ensure_runtime();
  const tsr_device npu = LoadSampleNpu();
  const tsr_device cpu{TSR_DEVICE_CPU, 0};
  for (const char* kernel : {"uniform_", "normal_"}) {
    SCOPED_TRACE(kernel);
    Generator a(31), b(31);
    const Tensor on_cpu = op(kernel, Tensor::empty({3, 50}, TSR_DTYPE_FLOAT32, cpu), 0.5, 2.0, a);
    const Tensor on_npu = op(kernel, Tensor::empty({3, 50}, TSR_DTYPE_FLOAT32, npu), 0.5, 2.0, b);
    EXPECT_EQ(values<float>(on_cpu), values<float>(to(on_npu, cpu)));
    EXPECT_EQ(b.state().offset, 1u);
  }
  // Every floating dtype natively (the composites draw in float64), and the composites on top.
  for (tsr_dtype dtype :
       {TSR_DTYPE_FLOAT64, TSR_DTYPE_FLOAT16, TSR_DTYPE_BFLOAT16, TSR_DTYPE_FLOAT32}) {
    SCOPED_TRACE(sdk::dtype_name(dtype));
    Generator a(5), b(5);
    const Tensor c = op("uniform_", Tensor::empty({33}, dtype, cpu), -1.0, 3.0, a);
    const Tensor n = op("uniform_", Tensor::empty({33}, dtype, npu), -1.0, 3.0, b);
    EXPECT_EQ(values<double>(op("to.dtype", c, TSR_DTYPE_FLOAT64)),
              values<double>(op("to.dtype", to(n, cpu), TSR_DTYPE_FLOAT64)));
  }
  {
    Generator a(8), b(8);
    const Tensor c = op("bernoulli_.float", Tensor::empty({64}, TSR_DTYPE_FLOAT32, cpu), 0.5, a);
    const Tensor n = op("bernoulli_.float", Tensor::empty({64}, TSR_DTYPE_FLOAT32, npu), 0.5, b);
    EXPECT_EQ(values<float>(c), values<float>(to(n, cpu)));
  }
  // None: each device's default generator, the fallback's call included (not the CPU's).
  manual_seed(17);
  const std::vector<float> cpu_bits = values<float>(op("randn", std::vector<int64_t>{40}));
  EXPECT_EQ(Generator::default_for(npu).state().offset, 0u);
  const Tensor npu_randn = op("randn", std::vector<int64_t>{40}, std::nullopt, std::nullopt, npu);
  EXPECT_EQ(cpu_bits, values<float>(to(npu_randn, cpu)));
  EXPECT_EQ(Generator::default_for(npu).state().offset, 1u);
  EXPECT_EQ(Generator::default_for(cpu).state().offset, 1u);
}

}  // namespace
}  // namespace cpu_test
}  // namespace tessera

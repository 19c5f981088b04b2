// Reductions, scans and softmax of the CPU plugin: hand-checked values, edge cases, numerics
// and determinism.
#include <cmath>
#include <cstdlib>
#include <limits>

#include "cpu_test_util.hpp"
#include "gmock/gmock.h"

namespace tessera {
namespace cpu_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const float kNan = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();
using Dims = std::vector<int64_t>;

TEST(CpuReduce, SumOverDimsKeepdimAndDtype) {
  Tensor a = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_THAT(values<float>(op("sum", a)), ElementsAre(21));
  Tensor rows = op("sum.dim_IntList", a, Dims{1}, true);
  EXPECT_THAT(shape(rows), ElementsAre(2, 1));
  EXPECT_THAT(values<float>(rows), ElementsAre(6, 15));
  EXPECT_THAT(values<float>(op("sum.dim_IntList", a, Dims{0})), ElementsAre(5, 7, 9));
  Tensor as_double = op("sum.dim_IntList", a, Dims{-1}, false, TSR_DTYPE_FLOAT64);
  EXPECT_EQ(as_double.dtype(), TSR_DTYPE_FLOAT64);
  Tensor ints = op("sum", i32({1, 2, 3}, {3}));
  EXPECT_EQ(ints.dtype(), TSR_DTYPE_INT64);  // integers widen, as in PyTorch
  EXPECT_THAT(values<int64_t>(ints), ElementsAre(6));
  EXPECT_THAT(values<int64_t>(op("sum", b8({1, 1, 0}, {3}))), ElementsAre(2));
  // Transposed input, empty input, 0-dim input.
  EXPECT_THAT(values<float>(op("sum.dim_IntList", op("t", a), Dims{0})), ElementsAre(6, 15));
  EXPECT_THAT(values<float>(op("sum", f32({}, {0, 4}))), ElementsAre(0));
  EXPECT_THAT(values<float>(op("sum.dim_IntList", f32({}, {0, 4}), Dims{0})),
              ElementsAre(0, 0, 0, 0));
  EXPECT_THAT(values<float>(op("sum", f32({7}, {}))), ElementsAre(7));
  EXPECT_THAT(error_of("sum.dim_IntList", a, Dims{2}), HasSubstr("out of range"));
}

TEST(CpuReduce, LongFloatSumsArePairwiseAndIndependentOfThreads) {
  // 2^24 + 1 ones: a naive float loop stops growing at 2^24; pairwise summation does not.
  const int64_t n = (1 << 24) + 8;
  Tensor ones = op("expand", f32({1}, {1}), Dims{n});
  Tensor s = op("sum", op("contiguous", ones));
  EXPECT_EQ(values<float>(s)[0], static_cast<float>(n));
  // The same values summed twice give bitwise equal results (fixed chunking).
  std::vector<float> v(1 << 20);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<float>(i)) * 1000;
  Tensor t = f32(v, {static_cast<int64_t>(v.size())});
  EXPECT_EQ(values<float>(op("sum", t))[0], values<float>(op("sum", t))[0]);
  // Heavy cancellation: the error is judged against the sum of magnitudes (~6.4e8).
  double exact = 0, magnitude = 0;
  for (float x : v) {
    exact += x;
    magnitude += std::abs(x);
  }
  EXPECT_NEAR(values<float>(op("sum", t))[0], exact, magnitude * 1e-9);
}

TEST(CpuReduce, FloatSumsDoNotDependOnStrides) {
  // The same values contiguous and as every other column of a [n, 2] tensor (strided leaves go
  // element by element, contiguous ones in vectors: lane_sum.hpp), over lengths that end
  // inside a lane block; values over many decades so that a different order would show.
  // 4095 to 4097 and 8225: around and past one wide leaf (kLeaf in reductions.cc).
  for (int64_t n : {1, 31, 33, 255, 257, 1000, 1024, 4095, 4096, 4097, 8225, 16384, 40000}) {
    std::vector<float> v(static_cast<size_t>(n)), wide(static_cast<size_t>(2 * n), 1e30f);
    std::vector<double> d(v.size()), dwide(wide.size(), 1e300);
    for (size_t i = 0; i < v.size(); ++i) {
      v[i] = wide[2 * i] = std::sin(static_cast<float>(i)) * std::pow(10.0f, (i % 13) - 6.0f);
      d[i] = dwide[2 * i] = v[i];
    }
    SCOPED_TRACE(testing::Message() << "n = " << n);
    Tensor column = op("select.int", f32(wide, {n, 2}), int64_t{1}, int64_t{0});
    EXPECT_EQ(values<float>(op("sum", f32(v, {n})))[0], values<float>(op("sum", column))[0]);
    Tensor dcolumn = op("select.int", f64(dwide, {n, 2}), int64_t{1}, int64_t{0});
    EXPECT_EQ(values<double>(op("sum", f64(d, {n})))[0], values<double>(op("sum", dcolumn))[0]);
  }
}

TEST(CpuReduce, MeanProdVarStd) {
  Tensor a = f32({1, 2, 3, 4}, {2, 2});
  EXPECT_THAT(values<float>(op("mean", a)), ElementsAre(2.5));
  EXPECT_THAT(values<float>(op("mean.dim", a, Dims{0})), ElementsAre(2, 3));
  EXPECT_THAT(error_of("mean", i32({1}, {1})), HasSubstr("expected a floating point input"));
  EXPECT_TRUE(std::isnan(values<float>(op("mean", f32({}, {0})))[0]));
  EXPECT_THAT(values<float>(op("prod.dim_int", a, int64_t{1})), ElementsAre(2, 12));
  EXPECT_THAT(values<int64_t>(op("prod", i32({2, 3, 4}, {3}))), ElementsAre(24));
  EXPECT_FLOAT_EQ(values<float>(op("var.correction", a))[0], 5.0f / 3.0f);
  EXPECT_FLOAT_EQ(values<float>(op("var.correction", a, std::nullopt, Scalar(0)))[0], 1.25f);
  // An empty input: NaN whatever the correction (-1 would otherwise divide 0 by 1).
  EXPECT_TRUE(
      std::isnan(values<float>(op("var.correction", f32({}, {0}), std::nullopt, Scalar(-1)))[0]));
  EXPECT_THAT(values<float>(op("std.correction", a, Dims{1})),
              ElementsAre(std::sqrt(0.5f), std::sqrt(0.5f)));
  // One element with correction 1: 0 / 0.
  EXPECT_TRUE(std::isnan(values<float>(op("var.correction", f32({3}, {1})))[0]));
  // Welford stays accurate around a large mean.
  EXPECT_NEAR(values<double>(op("var.correction", f64({1e9 + 1, 1e9 + 2, 1e9 + 3}, {3})))[0], 1.0,
              1e-9);
}

TEST(CpuReduce, MaxMinArgWithNaNAndIndices) {
  Tensor a = f32({3, 1, 4, 1, 5, 9}, {2, 3});
  EXPECT_THAT(values<float>(op("amax", a, Dims{1})), ElementsAre(4, 9));
  EXPECT_THAT(values<float>(op("amin", a)), ElementsAre(1));
  std::vector<Tensor> mx = ops("max.dim", a, int64_t{0}, true);
  EXPECT_THAT(shape(mx[0]), ElementsAre(1, 3));
  EXPECT_THAT(values<float>(mx[0]), ElementsAre(3, 5, 9));
  EXPECT_THAT(values<int64_t>(mx[1]), ElementsAre(0, 1, 1));
  EXPECT_THAT(values<int64_t>(op("argmax", a)), ElementsAre(5));
  EXPECT_THAT(values<int64_t>(op("argmin", a, int64_t{1})), ElementsAre(1, 0));
  // Ties give the first index; NaN wins wherever it is.
  EXPECT_THAT(values<int64_t>(op("argmax", f32({2, 2, 1}, {3}))), ElementsAre(0));
  Tensor n = f32({1, kNan, 3}, {3});
  EXPECT_TRUE(std::isnan(values<float>(op("max", n))[0]));
  EXPECT_THAT(values<int64_t>(op("argmax", n)), ElementsAre(1));
  EXPECT_THAT(values<int64_t>(op("argmin", n)), ElementsAre(1));
  EXPECT_THAT(error_of("max", f32({}, {0})), HasSubstr("non-zero size"));
  EXPECT_THAT(values<int32_t>(op("amax", i32({-5, -7}, {2}))), ElementsAre(-5));
}

TEST(CpuReduce, AnyAllNormLogsumexp) {
  EXPECT_THAT(values<uint8_t>(op("any", f32({0, 0, 2}, {3}))), ElementsAre(1));
  EXPECT_THAT(values<uint8_t>(op("all.dim", i32({1, 0, 1, 1}, {2, 2}), int64_t{1})),
              ElementsAre(0, 1));
  EXPECT_THAT(values<uint8_t>(op("all", f32({}, {0}))), ElementsAre(1));
  EXPECT_EQ(op("any", make<uint8_t>({0, 3}, {2}, TSR_DTYPE_UINT8)).dtype(), TSR_DTYPE_UINT8);
  Tensor v = f32({3, -4}, {2});
  EXPECT_THAT(values<float>(op("norm.ScalarOpt_dim", v, std::nullopt, Dims{0})), ElementsAre(5));
  EXPECT_THAT(values<float>(op("norm.ScalarOpt_dim", v, Scalar(1), Dims{0})), ElementsAre(7));
  EXPECT_THAT(values<float>(op("norm.ScalarOpt_dim", v, Scalar(kInf), Dims{0})), ElementsAre(4));
  // logsumexp does not overflow, and handles infinities.
  EXPECT_NEAR(values<float>(op("logsumexp", f32({1000, 1000}, {2}), Dims{0}))[0],
              1000 + std::log(2.0f), 1e-3);
  EXPECT_EQ(values<float>(op("logsumexp", f32({-kInf, -kInf}, {2}), Dims{0}))[0], -kInf);
  EXPECT_EQ(values<float>(op("logsumexp", f32({kInf, 1}, {2}), Dims{0}))[0], kInf);
  EXPECT_EQ(op("logsumexp", i32({1, 2}, {2}), Dims{0}).dtype(), TSR_DTYPE_FLOAT32);
}

// A one-element input is folded by its reducer directly (no layout, no parallel loop), over
// any dims and in any dtype: the results are the engine's, on 0-dim, [1] and [1, 1] inputs,
// a view at an offset, NaN and -0.0 included.
TEST(CpuReduce, OneElementInputs) {
  for (const Dims& sizes : {Dims{}, Dims{1}, Dims{1, 1}}) {
    SCOPED_TRACE(::testing::PrintToString(sizes));
    EXPECT_THAT(values<float>(op("sum", f32({2.5f}, sizes))), ElementsAre(2.5f));
    EXPECT_THAT(values<float>(op("mean", f32({2.5f}, sizes))), ElementsAre(2.5f));
    EXPECT_THAT(values<float>(op("prod", f32({-3}, sizes))), ElementsAre(-3));
    EXPECT_THAT(values<float>(op("max", f32({7}, sizes))), ElementsAre(7));
    EXPECT_THAT(values<uint8_t>(op("any", f32({0}, sizes))), ElementsAre(0));
    EXPECT_THAT(values<uint8_t>(op("all", f32({4}, sizes))), ElementsAre(1));
    Tensor s = op("sum", i32({-4}, sizes));
    EXPECT_EQ(s.dtype(), TSR_DTYPE_INT64) << "sum widens integers";
    EXPECT_THAT(values<int64_t>(s), ElementsAre(-4));
    EXPECT_THAT(values<int64_t>(op("sum", b8({1}, sizes))), ElementsAre(1));
    EXPECT_THAT(values<double>(op("sum", f32({1.5f}, sizes), TSR_DTYPE_FLOAT64)),
                ElementsAre(1.5));
    EXPECT_TRUE(std::isnan(values<float>(op("sum", f32({std::nanf("")}, sizes)))[0]));
    // 0 + (-0.0) is +0.0: the engine's sum starts at 0.
    EXPECT_FALSE(std::signbit(values<float>(op("sum", f32({-0.0f}, sizes)))[0]));
    EXPECT_TRUE(std::signbit(values<float>(op("prod", f32({-0.0f}, sizes)))[0]));
  }
  Tensor x = f32({5}, {1, 1});
  EXPECT_THAT(values<float>(op("sum.dim_IntList", x, Dims{1}, true)), ElementsAre(5));
  EXPECT_THAT(shape(op("sum.dim_IntList", x, Dims{1}, true)), ElementsAre(1, 1));
  EXPECT_THAT(shape(op("sum.dim_IntList", x, Dims{0})), ElementsAre(1));
  std::vector<Tensor> m = ops("max.dim", x, int64_t{0}, true);
  EXPECT_THAT(values<float>(m[0]), ElementsAre(5));
  EXPECT_THAT(values<int64_t>(m[1]), ElementsAre(0));
  EXPECT_THAT(values<int64_t>(op("argmax", x)), ElementsAre(0));
  EXPECT_THAT(values<float>(op("norm.ScalarOpt_dim", f32({-3}, {1}), Scalar(2), Dims{0})),
              ElementsAre(3));
  EXPECT_THAT(values<float>(op("logsumexp", f32({2}, {1}), Dims{0})), ElementsAre(2));
  // The count matters to var and std: one element over correction 1 is 0 / 0.
  EXPECT_TRUE(std::isnan(values<float>(op("var.correction", f32({3}, {1})))[0]));
  EXPECT_THAT(values<float>(op("var.correction", f32({3}, {1}), std::nullopt, Scalar(0))),
              ElementsAre(0));
  EXPECT_THAT(values<float>(op("std.correction", f32({3}, {1, 1}), std::nullopt, Scalar(0))),
              ElementsAre(0));
  // The last element of a longer tensor, seen at an offset.
  Tensor tail = op("slice.Tensor", f32({1, 2, 9}, {3}), int64_t{0}, int64_t{2}, int64_t{3});
  EXPECT_THAT(values<float>(op("sum", tail)), ElementsAre(9));
  EXPECT_THAT(values<float>(op("amin", tail)), ElementsAre(9));
}

TEST(CpuScan, CumsumCumprodSoftmax) {
  Tensor a = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_THAT(values<float>(op("cumsum", a, int64_t{1})), ElementsAre(1, 3, 6, 4, 9, 15));
  EXPECT_THAT(values<float>(op("cumsum", a, int64_t{0})), ElementsAre(1, 2, 3, 5, 7, 9));
  EXPECT_THAT(values<int64_t>(op("cumprod", i32({1, 2, 3}, {3}), int64_t{0})),
              ElementsAre(1, 2, 6));
  Tensor self = i32({1, 2, 3}, {3});
  op("cumsum_", self, int64_t{0});
  EXPECT_THAT(values<int32_t>(self), ElementsAre(1, 3, 6));
  for (tsr_dtype dt : {TSR_DTYPE_FLOAT32, TSR_DTYPE_FLOAT64}) {
    Tensor x = op("_to_copy", f32({1, 2, 3, 1000, 1000, 1000}, {2, 3}), dt);
    std::vector<double> sm =
        values<double>(op("_to_copy", op("_softmax", x, int64_t{1}, false), TSR_DTYPE_FLOAT64));
    EXPECT_NEAR(sm[0], 0.09003057, 1e-6);
    EXPECT_NEAR(sm[2], 0.66524096, 1e-6);
    EXPECT_NEAR(sm[4], 1.0 / 3, 1e-6);
    std::vector<double> lsm =
        values<double>(op("_to_copy", op("_log_softmax", x, int64_t{1}, false), TSR_DTYPE_FLOAT64));
    EXPECT_NEAR(lsm[0], std::log(0.09003057), 1e-5);
  }
  // A transposed input takes our own loop (oneDNN takes the dense one): same answers.
  Tensor t = op("t", f32({1, 1000, 2, 1000, 3, 1000}, {3, 2}));
  EXPECT_NEAR(values<float>(op("_softmax", t, int64_t{1}, false))[2], 0.66524096f, 1e-6);
  EXPECT_THAT(error_of("_softmax", f16({1}, {1}), int64_t{0}, true),
              HasSubstr("half to float conversion is not supported on cpu"));
}

}  // namespace
}  // namespace cpu_test
}  // namespace tessera

// NN, indexing, sorting and joining ops of the CPU plugin, and the composites over them, on
// hand-checked values.
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "cpu_test_util.hpp"
#include "gmock/gmock.h"

namespace tessera {
namespace cpu_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Dims = std::vector<int64_t>;

std::vector<float> iota(int64_t n, float start = 0) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

TEST(CpuFactories, ZerosOnesFullArangeLinspaceEye) {
  ensure_runtime();
  EXPECT_THAT(values<float>(op("zeros", Dims{2})), ElementsAre(0, 0));
  EXPECT_THAT(values<int64_t>(op("full", Dims{2}, Scalar(7))), ElementsAre(7, 7));
  EXPECT_EQ(op("full", Dims{1}, Scalar(true)).dtype(), TSR_DTYPE_BOOL);
  EXPECT_THAT(values<int64_t>(op("arange", Scalar(4))), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(values<float>(op("arange.start_step", Scalar(1.0), Scalar(2.0), Scalar(0.25))),
              ElementsAre(1, 1.25, 1.5, 1.75));
  EXPECT_THAT(error_of("arange.start_step", Scalar(0), Scalar(1), Scalar(0)),
              HasSubstr("step must be nonzero"));
  EXPECT_THAT(values<float>(op("linspace", Scalar(0), Scalar(1), int64_t{5})),
              ElementsAre(0, 0.25, 0.5, 0.75, 1));
  EXPECT_THAT(values<float>(op("eye.m", int64_t{2}, int64_t{3})), ElementsAre(1, 0, 0, 0, 1, 0));
  Tensor t = f32({1, 2}, {2});
  op("zero_", t);
  EXPECT_THAT(values<float>(t), ElementsAre(0, 0));
  EXPECT_EQ(op("to.dtype", t, TSR_DTYPE_INT32).dtype(), TSR_DTYPE_INT32);
}

// tril_indices / triu_indices at the int64 offsets' ends: past every corner, the lower triangle
// is empty or whole (the fuzzer's op_meta found the INT64_MIN one negated in 64 bits, undefined
// behaviour that UBSan reports).
TEST(CpuFactories, TriangleIndicesAtTheExtremeOffsets) {
  ensure_runtime();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  for (const auto& [name, offset, all] :
       std::vector<std::tuple<const char*, int64_t, bool>>{{"tril_indices", kMin, false},
                                                           {"tril_indices", kMax, true},
                                                           {"triu_indices", kMin, true},
                                                           {"triu_indices", kMax, false}}) {
    SCOPED_TRACE(std::string(name) + " offset " + std::to_string(offset));
    const Tensor t = op(name, int64_t{2}, int64_t{2}, offset);
    EXPECT_EQ(t.sizes().vec(), (Dims{2, all ? 4 : 0}));
    if (all) EXPECT_THAT(values<int64_t>(t), ElementsAre(0, 0, 1, 1, 0, 1, 0, 1));
  }
}

TEST(CpuIndex, IndexSelectGatherScatter) {
  Tensor a = f32(iota(6), {2, 3});
  EXPECT_THAT(values<float>(op("index_select", a, int64_t{1}, i64({2, 0}, {2}))),
              ElementsAre(2, 0, 5, 3));
  // A negative index is out of range, as in PyTorch (it does not count from the end here).
  EXPECT_THAT(error_of("index_select", a, int64_t{0}, i32({-1}, {1})),
              HasSubstr("index -1 is out of bounds for dimension 0 with size 2"));
  EXPECT_THAT(error_of("index_select", a, int64_t{0}, i64({2}, {1})),
              HasSubstr("index 2 is out of bounds for dimension 0 with size 2"));
  EXPECT_THAT(values<float>(op("gather", a, int64_t{1}, i64({2, 2, 0, 1}, {2, 2}))),
              ElementsAre(2, 2, 3, 4));
  Tensor z = f32({0, 0, 0, 0, 0, 0}, {2, 3});
  EXPECT_THAT(
      values<float>(op("scatter.src", z, int64_t{1}, i64({2, 0}, {2, 1}), f32({7, 8}, {2, 1}))),
      ElementsAre(0, 0, 7, 8, 0, 0));
  EXPECT_THAT(values<float>(op("scatter.value", z, int64_t{0}, i64({1}, {1, 1}), Scalar(5))),
              ElementsAre(0, 0, 0, 5, 0, 0));
  EXPECT_THAT(values<float>(
                  op("scatter_add", z, int64_t{1}, i64({0, 0, 0}, {1, 3}), f32({1, 2, 3}, {1, 3}))),
              ElementsAre(6, 0, 0, 0, 0, 0));
  EXPECT_THAT(values<float>(z), ElementsAre(0, 0, 0, 0, 0, 0));  // functional: self unchanged
  EXPECT_THAT(values<float>(op("embedding", a, i64({1, 0, 1}, {3}))),
              ElementsAre(3, 4, 5, 0, 1, 2, 3, 4, 5));
}

TEST(CpuIndex, SortTopkArgsortWithNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor a = f32({3, nan, 1, 2, 1}, {5});
  std::vector<Tensor> asc = ops("sort", a);
  std::vector<float> v = values<float>(asc[0]);
  EXPECT_THAT(std::vector<float>(v.begin(), v.begin() + 4), ElementsAre(1, 1, 2, 3));
  EXPECT_TRUE(std::isnan(v[4]));                                     // NaN sorts last
  EXPECT_THAT(values<int64_t>(asc[1]), ElementsAre(2, 4, 3, 0, 1));  // stable for ties
  std::vector<Tensor> top = ops("topk", f32({3, 1, 4, 1, 5}, {5}), int64_t{2});
  EXPECT_THAT(values<float>(top[0]), ElementsAre(5, 4));
  EXPECT_THAT(values<int64_t>(top[1]), ElementsAre(4, 2));
  std::vector<Tensor> low = ops("topk", f32({3, 1, 4, 1, 5}, {5}), int64_t{2}, int64_t{-1}, false);
  EXPECT_THAT(values<int64_t>(low[1]), ElementsAre(1, 3));
  EXPECT_THAT(values<int64_t>(op("argsort", i32({2, 0, 1}, {3}), int64_t{0}, true)),
              ElementsAre(0, 2, 1));
  EXPECT_THAT(error_of("topk", f32({1}, {1}), int64_t{2}), HasSubstr("k out of range"));
}

TEST(CpuIndex, CatStackFlipTrilTriu) {
  Tensor a = f32({1, 2}, {1, 2});
  Tensor b = f32({3, 4, 5, 6}, {2, 2});
  EXPECT_THAT(values<float>(op("cat", std::vector<Tensor>{a, b})), ElementsAre(1, 2, 3, 4, 5, 6));
  Tensor mixed =
      op("cat", std::vector<Tensor>{a, op("_to_copy", a, TSR_DTYPE_FLOAT64)}, int64_t{1});
  EXPECT_EQ(mixed.dtype(), TSR_DTYPE_FLOAT64);
  EXPECT_THAT(error_of("cat", std::vector<Tensor>{a, f32({1}, {1, 1})}, int64_t{0}),
              HasSubstr("sizes of tensors must match except in dimension 0"));
  Tensor st = op("stack", std::vector<Tensor>{a, a}, int64_t{1});
  EXPECT_THAT(shape(st), ElementsAre(1, 2, 2));
  EXPECT_THAT(values<float>(op("flip", b, Dims{0, 1})), ElementsAre(6, 5, 4, 3));
  EXPECT_THAT(values<float>(op("flip", op("t", b), Dims{1})), ElementsAre(5, 3, 6, 4));
  Tensor m = f32(iota(9, 1), {3, 3});
  EXPECT_THAT(values<float>(op("tril", m)), ElementsAre(1, 0, 0, 4, 5, 0, 7, 8, 9));
  EXPECT_THAT(values<float>(op("triu", m, int64_t{1})), ElementsAre(0, 2, 3, 0, 0, 6, 0, 0, 0));
  op("triu_", m, int64_t{-1});
  EXPECT_THAT(values<float>(m), ElementsAre(1, 2, 3, 4, 5, 6, 0, 8, 9));
}

// PyTorch wraps dims of a 0-dim tensor as if it had one dim: flip(scalar, [0]) and [-1] are the
// scalar itself, [1] is out of range and [0, -1] names dim 0 twice. The kernel used to mark dim 0
// in a per-dim vector of size 0.
TEST(CpuIndex, FlipOfAZeroDimTensorIsItselfForDimsZeroAndMinusOne) {
  for (const Dims& dims : {Dims{0}, Dims{-1}, Dims{}}) {
    Tensor x = f32({7.5f}, {});
    Tensor y = op("flip", x, dims);
    EXPECT_THAT(shape(y), ElementsAre());
    EXPECT_THAT(values<float>(y), ElementsAre(7.5f));
    Tensor out = f32({0, 0, 0}, {3});
    op("flip.out", x, dims, out);
    EXPECT_THAT(shape(out), ElementsAre());
    EXPECT_THAT(values<float>(out), ElementsAre(7.5f));
  }
  EXPECT_THAT(error_of("flip", f32({1}, {}), Dims{1}),
              HasSubstr("expected to be in range of [-1, 0], but got 1"));
  EXPECT_THAT(error_of("flip", f32({1}, {}), Dims{0, -1}),
              HasSubstr("dim 0 appears multiple times in dims"));
}

TEST(CpuNN, Conv2dMatchesADirectSumForEveryFloatDtype) {
  // 1 image, 2 channels 3x3, 2 output channels of 2x2 kernels, padding 1, stride 2.
  std::vector<float> x = iota(18), w = {1, 0, 0, 1, 0, 1, 1, 0, -1, 0, 0, 1, 1, 1, 1, 1};
  for (tsr_dtype dt : {TSR_DTYPE_FLOAT32, TSR_DTYPE_FLOAT64, TSR_DTYPE_BFLOAT16}) {
    Tensor in = op("_to_copy", f32(x, {1, 2, 3, 3}), dt);
    Tensor wt = op("_to_copy", f32(w, {2, 2, 2, 2}), dt);
    Tensor bias = op("_to_copy", f32({100, 200}, {2}), dt);
    Tensor y = op("conv2d", in, wt, bias, Dims{2}, Dims{1});
    EXPECT_THAT(shape(y), ElementsAre(1, 2, 2, 2));
    // out[o][i][j] = b[o] + sum_c,kh,kw x[c][2i-1+kh][2j-1+kw] * w[o][c][kh][kw]
    std::vector<double> expect;
    for (int o = 0; o < 2; ++o) {
      for (int i = 0; i < 2; ++i) {
        for (int j = 0; j < 2; ++j) {
          double acc = o == 0 ? 100 : 200;
          for (int c = 0; c < 2; ++c) {
            for (int kh = 0; kh < 2; ++kh) {
              for (int kw = 0; kw < 2; ++kw) {
                const int h = 2 * i - 1 + kh, ww = 2 * j - 1 + kw;
                if (h < 0 || h >= 3 || ww < 0 || ww >= 3) continue;
                acc += x[c * 9 + h * 3 + ww] * w[((o * 2 + c) * 2 + kh) * 2 + kw];
              }
            }
          }
          expect.push_back(acc);
        }
      }
    }
    EXPECT_EQ(values<double>(op("_to_copy", y, TSR_DTYPE_FLOAT64)), expect) << sdk::dtype_name(dt);
  }
  EXPECT_THAT(error_of("conv2d", f32(iota(4), {1, 1, 2, 2}), f32(iota(18), {1, 2, 3, 3})),
              HasSubstr("expected input [1, 1, 2, 2] to have 2 channels"));
}

TEST(CpuNN, GroupedConvAgreesBetweenOneDnnAndTheLoop) {
  std::vector<float> x = iota(4 * 25), w = iota(4 * 2 * 9, -30);
  Tensor in32 = f32(x, {1, 4, 5, 5}), w32 = f32(w, {4, 2, 3, 3});
  Tensor y32 = op("conv2d", in32, w32, std::nullopt, Dims{1}, Dims{1}, Dims{2}, int64_t{2});
  Tensor y64 =
      op("conv2d", op("_to_copy", in32, TSR_DTYPE_FLOAT64), op("_to_copy", w32, TSR_DTYPE_FLOAT64),
         std::nullopt, Dims{1}, Dims{1}, Dims{2}, int64_t{2});
  EXPECT_EQ(values<float>(y32), values<float>(op("_to_copy", y64, TSR_DTYPE_FLOAT32)));
}

TEST(CpuNN, PoolingNormsLinearMatmul) {
  Tensor x = f32(iota(16), {1, 1, 4, 4});
  std::vector<Tensor> mp = ops("max_pool2d_with_indices", x, Dims{2});
  EXPECT_THAT(values<float>(mp[0]), ElementsAre(5, 7, 13, 15));
  EXPECT_THAT(values<int64_t>(mp[1]), ElementsAre(5, 7, 13, 15));
  EXPECT_THAT(values<float>(op("max_pool2d", x, Dims{3}, Dims{1}, Dims{1})),
              ElementsAre(5, 6, 7, 7, 9, 10, 11, 11, 13, 14, 15, 15, 13, 14, 15, 15));
  EXPECT_THAT(values<float>(op("avg_pool2d", x, Dims{2})), ElementsAre(2.5, 4.5, 10.5, 12.5));
  // Padding counted or not in the divisor.
  EXPECT_THAT(values<float>(op("avg_pool2d", f32({4}, {1, 1, 1, 1}), Dims{2}, Dims{1}, Dims{1})),
              ElementsAre(1, 1, 1, 1));
  EXPECT_THAT(values<float>(op("avg_pool2d", f32({4}, {1, 1, 1, 1}), Dims{2}, Dims{1}, Dims{1},
                               false, false)),
              ElementsAre(4, 4, 4, 4));
  Tensor ln = op("layer_norm", f32({1, 2, 3, 4}, {2, 2}), Dims{2});
  std::vector<float> l = values<float>(ln);
  EXPECT_NEAR(l[0], -1, 1e-4);
  EXPECT_NEAR(l[1], 1, 1e-4);
  Tensor bn = op("batch_norm", f32({1, 2, 3, 4}, {2, 2}), f32({2, 1}, {2}), f32({0, 10}, {2}),
                 f32({1, 2}, {2}), f32({4, 1}, {2}), false, 0.1, 0.0, false);
  EXPECT_THAT(values<float>(bn), ElementsAre(0, 10, 2, 12));
  EXPECT_THAT(error_of("batch_norm", f32({1}, {1, 1}), std::nullopt, std::nullopt, std::nullopt,
                       std::nullopt, false, 0.1, 1e-5, false),
              HasSubstr("running_mean must be defined in evaluation mode"));
  for (tsr_dtype dt : {TSR_DTYPE_FLOAT32, TSR_DTYPE_FLOAT64}) {
    Tensor in = op("_to_copy", f32({1, 2, 3, 4, 5, 6}, {1, 2, 3}), dt);
    Tensor w = op("_to_copy", f32({1, 0, 0, 0, 1, 1}, {2, 3}), dt);
    Tensor lin = op("linear", in, w, op("_to_copy", f32({10, 20}, {2}), dt));
    EXPECT_THAT(shape(lin), ElementsAre(1, 2, 2));
    EXPECT_THAT(values<double>(op("_to_copy", lin, TSR_DTYPE_FLOAT64)),
                ElementsAre(11, 25, 14, 31));
  }
  EXPECT_THAT(values<float>(op("matmul", f32({1, 2}, {2}), f32({3, 4}, {2}))), ElementsAre(11));
  Tensor bm = op("matmul", f32(iota(12), {2, 2, 3}), f32({1, 1, 1}, {3}));
  EXPECT_THAT(shape(bm), ElementsAre(2, 2));
  EXPECT_THAT(values<float>(bm), ElementsAre(3, 12, 21, 30));
  Tensor bc = op("matmul", f32(iota(6), {2, 1, 3}), f32(iota(6), {3, 2}));  // broadcast batch
  EXPECT_THAT(shape(bc), ElementsAre(2, 1, 2));
  EXPECT_THAT(values<float>(op("softmax.int", f32({0, 0}, {2}), int64_t{0})),
              ElementsAre(0.5, 0.5));
}

}  // namespace
}  // namespace cpu_test
}  // namespace tessera

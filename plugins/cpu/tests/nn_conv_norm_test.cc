// Convolution (1-D to 3-D, transposed, integer dtypes), training-mode batch norm, instance norm
// and integer avg_pool2d on the CPU plugin. Expected values are PyTorch 1.13's for the same
// inputs (computed once with python3-torch, a development aid; Tessera does not use it).
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "cpu_test_util.hpp"
#include "gmock/gmock.h"

namespace tessera {
namespace cpu_test {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::Pointwise;
using Dims = std::vector<int64_t>;

// values[i] = i % mod + offset, as the PyTorch side built them with arange.
template <typename T>
std::vector<T> cycle(int64_t n, int64_t mod, T offset) {
  std::vector<T> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>(i % mod) + offset;
  return v;
}

std::vector<float> floats(const Tensor& t) {
  return values<float>(op("_to_copy", t, TSR_DTYPE_FLOAT32));
}

TEST(CpuConvolution, Int64AsPyTorch) {
  ensure_runtime();
  // The row: int64 [1, 3, 4, 4] * [3, 3, 3, 3], stride 2, padding 2.
  Tensor y = op("convolution", i64(cycle<int64_t>(48, 7, -3), {1, 3, 4, 4}),
                i64(cycle<int64_t>(81, 5, -2), {3, 3, 3, 3}), std::nullopt, Dims{2}, Dims{2},
                Dims{1}, false, Dims{0}, int64_t{1});
  EXPECT_EQ(y.dtype(), TSR_DTYPE_INT64);
  EXPECT_THAT(shape(y), ElementsAre(1, 3, 3, 3));
  EXPECT_THAT(values<int64_t>(y), ElementsAre(-4, -1, 9, -3, 0, -16, -15, 27, -18, 5, -1, -2, 0, -4,
                                              1, 1, -17, 18, -1, 4, -3, 8, 27, -12, 7, -6, -1));
}

// Stride 2^62 and padding 2^61 (legal: Note [Window arithmetic in 128 bits]) leave every tap
// in the padding: the loop formed each tap's offset (index * row stride, about -2^64) before
// checking it was inside. Every output is 0; float32 leaves oneDNN (its parameters are `int`).
TEST(CpuConvolution, TapsInAHugePaddingAreSkippedWithoutOverflow) {
  ensure_runtime();
  for (tsr_dtype dtype : {TSR_DTYPE_FLOAT64, TSR_DTYPE_FLOAT32}) {
    Tensor x = op("_to_copy", f64(cycle<double>(40, 3, -1), {1, 1, 5, 8}), dtype);
    Tensor w = op("_to_copy", f64(cycle<double>(9, 2, 1), {1, 1, 3, 3}), dtype);
    Tensor y = op("convolution", x, w, std::nullopt, Dims{int64_t{1} << 62, 1},
                  Dims{int64_t{1} << 61, 0}, Dims{1}, false, Dims{0}, int64_t{1});
    EXPECT_THAT(shape(y), ElementsAre(1, 1, 2, 6));
    for (double v : values<double>(op("_to_copy", y, TSR_DTYPE_FLOAT64))) {
      EXPECT_EQ(v, 0.0);
    }
  }
}

TEST(CpuConvolution, Grouped3dInt32AndTransposed1dInt64) {
  ensure_runtime();
  Tensor x = op("_to_copy", i64(cycle<int64_t>(54, 4, -1), {1, 2, 3, 3, 3}), TSR_DTYPE_INT32);
  Tensor w = op("_to_copy", i64(cycle<int64_t>(16, 3, -1), {2, 1, 2, 2, 2}), TSR_DTYPE_INT32);
  Tensor y = op("conv3d", x, w, std::nullopt, Dims{1}, Dims{0}, Dims{1}, int64_t{2});
  EXPECT_EQ(y.dtype(), TSR_DTYPE_INT32);
  EXPECT_THAT(shape(y), ElementsAre(1, 2, 2, 2, 2));
  EXPECT_THAT(values<int32_t>(y),
              ElementsAre(6, 1, -5, 6, 1, -4, 6, 1, 9, -3, -3, 9, -3, -3, 9, -3));
  // stride 3, output_padding 2 (below the stride), dilation 2.
  Tensor t = op("conv_transpose1d", i64({1, -2, 3}, {1, 1, 3}), i64({2, 1}, {1, 1, 2}),
                std::nullopt, Dims{3}, Dims{0}, Dims{2}, int64_t{1}, Dims{2});
  EXPECT_THAT(values<int64_t>(t), ElementsAre(2, 0, 1, -4, 0, -2, 6, 0, 3, 0, 0));
}

TEST(CpuConvolution, UnbatchedConv1dWithDilation) {
  ensure_runtime();
  Tensor y = op("conv1d", f32({1, 2, 3, 4, 5, 6, 7, 0, 1, 0, -1, 0, 1, 0}, {2, 7}),
                f32({1, 0, -1, 2, 1, 0}, {1, 2, 3}), f32({0.5}, {1}), Dims{2}, Dims{1}, Dims{2},
                int64_t{1});
  EXPECT_THAT(shape(y), ElementsAre(1, 3));
  EXPECT_THAT(values<float>(y), ElementsAre(-2.5, -2.5, 3.5));
}

TEST(CpuConvolution, Transposed2dGroupsOutputPaddingAgreeAcrossDtypes) {
  ensure_runtime();
  // float32 runs on oneDNN's deconvolution, float64 and int64 on our loop: all equal PyTorch's.
  const std::vector<double> x = cycle<double>(72, 5, -2), w = cycle<double>(48, 7, -3);
  const std::vector<double> b{1, -1, 0.5, 2, 0, 3};
  for (tsr_dtype dt : {TSR_DTYPE_FLOAT32, TSR_DTYPE_FLOAT64, TSR_DTYPE_BFLOAT16}) {
    Tensor y = op("conv_transpose2d.input", op("_to_copy", f64(x, {2, 4, 3, 3}), dt),
                  op("_to_copy", f64(w, {4, 3, 2, 2}), dt), op("_to_copy", f64(b, {6}), dt),
                  Dims{2}, Dims{1}, Dims{1}, int64_t{2}, Dims{1});
    ASSERT_THAT(shape(y), ElementsAre(2, 6, 5, 5)) << sdk::dtype_name(dt);
    const std::vector<float> v = floats(y);
    double sum = 0, weighted = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      sum += v[i];
      weighted += v[i] * static_cast<double>(i);
    }
    EXPECT_EQ(sum, 274) << sdk::dtype_name(dt);
    EXPECT_EQ(weighted, 48280) << sdk::dtype_name(dt);
    EXPECT_THAT(std::vector<float>(v.begin(), v.begin() + 8),
                ElementsAre(-3, 8, 5, 4, 3, -1, -3, 0))
        << sdk::dtype_name(dt);
  }
}

TEST(CpuConvolution, Transposed3dOnOneDnnAndTheLoop) {
  ensure_runtime();
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[i] = static_cast<float>(i - 5);
  const std::vector<float> w = cycle<float>(16, 3, -1);
  for (tsr_dtype dt : {TSR_DTYPE_FLOAT32, TSR_DTYPE_FLOAT64}) {
    Tensor y = op("conv_transpose3d.input", op("_to_copy", f32(x, {1, 2, 2, 2, 2}), dt),
                  op("_to_copy", f32(w, {2, 1, 2, 2, 2}), dt), op("_to_copy", f32({0.25}, {1}), dt),
                  Dims{2});
    ASSERT_THAT(shape(y), ElementsAre(1, 1, 4, 4, 4));
    const std::vector<float> v = floats(y);
    EXPECT_THAT(std::vector<float>(v.begin(), v.begin() + 16),
                ElementsAre(8.25, -2.75, 8.25, -3.75, -4.75, 8.25, -3.75, 8.25, 8.25, -4.75, 8.25,
                            -5.75, -2.75, 8.25, -1.75, 8.25))
        << sdk::dtype_name(dt);
    EXPECT_THAT(std::vector<float>(v.end() - 4, v.end()), ElementsAre(8.25, -8.75, 8.25, -9.75))
        << sdk::dtype_name(dt);
  }
}

TEST(CpuConvolution, StringPaddingSameAndValid) {
  ensure_runtime();
  // An even kernel: 'same' pads 0 on the left and 1 on the right, as PyTorch.
  EXPECT_THAT(
      values<float>(op("conv1d.padding", f32({1, 2, 3, 4, 5}, {1, 1, 5}), f32({1, 10}, {1, 1, 2}),
                       std::nullopt, Dims{1}, std::string_view("same"))),
      ElementsAre(21, 32, 43, 54, 5));
  std::vector<float> x(12);
  for (int i = 0; i < 12; ++i) x[i] = static_cast<float>(i);
  Tensor y = op("conv2d.padding", f32(x, {1, 1, 3, 4}), f32({1, 2, 3, 4}, {1, 1, 2, 2}),
                std::nullopt, Dims{1}, std::string_view("same"), Dims{1, 2});
  EXPECT_THAT(shape(y), ElementsAre(1, 1, 3, 4));
  EXPECT_THAT(values<float>(y), ElementsAre(22, 40, 50, 20, 46, 80, 90, 36, 18, 28, 31, 10));
  EXPECT_THAT(
      values<float>(op("conv1d.padding", f32({1, 2, 3, 4, 5}, {1, 5}), f32({1, 0, -1}, {1, 1, 3}),
                       std::nullopt, Dims{1}, std::string_view("valid"))),
      ElementsAre(-2, -2, -2));
  EXPECT_THAT(error_of("conv1d.padding", f32({1, 2, 3, 4, 5}, {1, 1, 5}), f32({1, 10}, {1, 1, 2}),
                       std::nullopt, Dims{2}, std::string_view("same")),
              HasSubstr("padding='same' is not supported for strided convolutions"));
}

// float16 and bfloat16 convolution and softmax compute in float32 and round once: exactly the
// float32 op on converted inputs, rounded (oneDNN's float32 primitives on float32 copies; our
// loops where oneDNN has no primitive compute the same way in float).
TEST(CpuConvolution, ReducedDtypesAreTheFloat32ResultRoundedOnce) {
  std::vector<float> xv(2 * 4 * 7 * 6), wv(6 * 2 * 3 * 3), bv(6);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = std::sin(static_cast<float>(i)) * 3;
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = std::cos(static_cast<float>(i) * 0.7f);
  for (size_t i = 0; i < bv.size(); ++i) bv[i] = 0.25f * static_cast<float>(i) - 0.5f;
  const Tensor x = f32(xv, {2, 4, 7, 6}), w = f32(wv, {6, 2, 3, 3}), b = f32(bv, {6});
  for (tsr_dtype dt : {TSR_DTYPE_FLOAT16, TSR_DTYPE_BFLOAT16}) {
    SCOPED_TRACE(sdk::dtype_name(dt));
    // Inputs that are exact in dt, so that the float32 reference sees the same values.
    const Tensor xr = op("_to_copy", x, dt), wr = op("_to_copy", w, dt), br = op("_to_copy", b, dt);
    const Tensor x32 = op("_to_copy", xr, TSR_DTYPE_FLOAT32),
                 w32 = op("_to_copy", wr, TSR_DTYPE_FLOAT32),
                 b32 = op("_to_copy", br, TSR_DTYPE_FLOAT32);
    // Grouped, strided, padded, dilated; and into a transposed (non-contiguous) out.
    const Dims stride{2, 1}, padding{1, 2}, dilation{1, 2};
    const Tensor want = op(
        "_to_copy",
        op("convolution", x32, w32, b32, stride, padding, dilation, false, Dims{0, 0}, int64_t{2}),
        dt);
    EXPECT_EQ(floats(op("convolution", xr, wr, br, stride, padding, dilation, false, Dims{0, 0},
                        int64_t{2})),
              floats(want));
    // out: [2, 6, 4, 6] as a transposed view of a contiguous [2, 6, 6, 4].
    const Tensor out =
        op("transpose.int", op("_to_copy", op("full", Dims{2, 6, 6, 4}, Scalar(0.0)), dt),
           int64_t{2}, int64_t{3});
    op("convolution.out", xr, wr, br, stride, padding, dilation, false, Dims{0, 0}, int64_t{2},
       out);
    EXPECT_EQ(floats(out), floats(want));
    // Softmax and log_softmax along each dim, the same way.
    for (int64_t dim : {0, 1, 3}) {
      for (const char* name : {"_softmax", "_log_softmax"}) {
        SCOPED_TRACE(std::string(name) + " dim " + std::to_string(dim));
        EXPECT_EQ(floats(op(name, xr, dim, false)),
                  floats(op("_to_copy", op(name, x32, dim, false), dt)));
      }
    }
  }
}

// 1x1 convolutions on contiguous float32 run as products on dnnl_sgemm (conv_gemm.hpp): per
// image, or one product for a 1x1 spatial map; with and without a bias; 1-D to 3-D. Each agrees
// with the float64 convolution (our loop) rounded to float32; a strided input or out, or a
// 1x1 kernel with a stride, takes oneDNN's path to the same values.
TEST(CpuConvolution, PointwiseConvolutionsAsProducts) {
  ensure_runtime();
  struct Shape {
    Dims x, w;
  };
  for (const Shape& s : {Shape{{2, 5, 3, 4}, {7, 5, 1, 1}}, Shape{{3, 5, 1, 1}, {7, 5, 1, 1}},
                         Shape{{1, 6, 9}, {4, 6, 1}}, Shape{{2, 3, 2, 3, 2}, {5, 3, 1, 1, 1}}}) {
    for (bool with_bias : {true, false}) {
      SCOPED_TRACE(testing::Message() << "x " << s.x.size() << "-D, N " << s.x[0] << ", bias "
                                      << with_bias);
      int64_t nx = 1, nw = 1;
      for (int64_t d : s.x) nx *= d;
      for (int64_t d : s.w) nw *= d;
      std::vector<double> xv(nx), wv(nw), bv(s.w[0]);
      for (int64_t i = 0; i < nx; ++i) xv[i] = std::sin(0.3 * static_cast<double>(i)) * 2;
      for (int64_t i = 0; i < nw; ++i) wv[i] = std::cos(0.7 * static_cast<double>(i));
      for (size_t i = 0; i < bv.size(); ++i) bv[i] = 0.5 * static_cast<double>(i) - 1;
      // Values exact in float32, so that both sides see the same inputs.
      const Tensor x = op("_to_copy", f64(xv, s.x), TSR_DTYPE_FLOAT32);
      const Tensor w = op("_to_copy", f64(wv, s.w), TSR_DTYPE_FLOAT32);
      const Tensor b = op("_to_copy", f64(bv, {s.w[0]}), TSR_DTYPE_FLOAT32);
      const Dims ones(s.x.size() - 2, 1), zeros(s.x.size() - 2, 0);
      auto conv = [&](const Tensor& in, const Tensor& weight, const std::optional<Tensor>& bias,
                      const Dims& stride) {
        return op("convolution", in, weight, bias, stride, zeros, ones, false, zeros, int64_t{1});
      };
      const std::optional<Tensor> bias =
          with_bias ? std::optional<Tensor>(b) : std::optional<Tensor>();
      const std::optional<Tensor> bias64 =
          with_bias ? std::optional<Tensor>(op("_to_copy", b, TSR_DTYPE_FLOAT64))
                    : std::optional<Tensor>();
      const std::vector<float> want = floats(conv(op("_to_copy", x, TSR_DTYPE_FLOAT64),
                                                  op("_to_copy", w, TSR_DTYPE_FLOAT64), bias64,
                                                  ones));
      EXPECT_THAT(floats(conv(x, w, bias, ones)), Pointwise(testing::FloatNear(1e-5f), want));
      // A non-contiguous input (the first half of each row of a tensor twice as wide):
      // oneDNN's path.
      Dims twice(s.x.size(), 1);
      twice.back() = 2;
      const int64_t last = static_cast<int64_t>(s.x.size()) - 1;
      const Tensor strided = op("slice.Tensor", op("repeat", x, twice), last, int64_t{0},
                                s.x.back(), int64_t{1});
      ASSERT_FALSE(strided.is_contiguous());
      EXPECT_THAT(floats(conv(strided, w, bias, ones)), Pointwise(testing::FloatNear(1e-5f), want));
      // Into a strided out (dims 0 and 1 of a contiguous tensor swapped): oneDNN's path too,
      // where the swap is not a no-op.
      Dims swapped = shape(conv(x, w, bias, ones));
      std::swap(swapped[0], swapped[1]);
      const Tensor out = op("transpose.int", op("full", swapped, Scalar(0.0)), int64_t{0},
                            int64_t{1});
      op("convolution.out", x, w, bias, ones, zeros, ones, false, zeros, int64_t{1}, out);
      EXPECT_THAT(floats(out), Pointwise(testing::FloatNear(1e-5f), want));
    }
  }
  // A 1x1 kernel with stride 2 is not a product per image: oneDNN's path, PyTorch's values.
  const Tensor x = f32({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 1, 3, 3});
  const Tensor y = op("convolution", x, f32({2}, {1, 1, 1, 1}), std::nullopt, Dims{2, 2},
                      Dims{0, 0}, Dims{1, 1}, false, Dims{0, 0}, int64_t{1});
  EXPECT_THAT(floats(y), ElementsAre(2, 6, 14, 18));
}

TEST(CpuConvolution, ErrorsNameTheArgument) {
  ensure_runtime();
  EXPECT_THAT(error_of("convolution", f32({0, 0, 0, 0, 0, 0, 0, 0, 0}, {1, 1, 3, 3}),
                       f32({1, 1, 1, 1}, {1, 1, 2, 2}), std::nullopt, Dims{1}, Dims{0}, Dims{1},
                       true, Dims{1}, int64_t{1}),
              HasSubstr("output padding must be smaller than either stride or dilation"));
  EXPECT_THAT(error_of("conv3d", f32({1, 2}, {1, 2}), f32({1}, {1, 1, 1, 1, 1})),
              HasSubstr("Expected 4D (unbatched) or 5D (batched) input to conv3d"));
  EXPECT_THAT(error_of("convolution", f32({1, 2, 3}, {1, 1, 3}), i64({1}, {1, 1, 1}), std::nullopt,
                       Dims{1}, Dims{0}, Dims{1}, false, Dims{0}, int64_t{1}),
              HasSubstr("Input type (float32) and weight type (int64) should be the same"));
}

TEST(CpuAvgPool, Int64TruncatesTowardZeroAsPyTorch) {
  ensure_runtime();
  std::vector<int64_t> x;
  for (int i = 0; i < 6; ++i) x.insert(x.end(), {-7, 1, 1, 5, 5, 6, 1, 1, 1});
  Tensor y = op("avg_pool2d", i64(x, {2, 3, 1, 9}), Dims{1, 3}, Dims{1, 3});
  EXPECT_EQ(y.dtype(), TSR_DTYPE_INT64);
  EXPECT_THAT(shape(y), ElementsAre(2, 3, 1, 3));
  const std::vector<int64_t> v = values<int64_t>(y);
  EXPECT_THAT(std::vector<int64_t>(v.begin(), v.begin() + 3),
              ElementsAre(-1, 5, 1));  // -5 / 3 is -1, not -2
  Tensor small = i64({-5, 2, 3, 4}, {1, 1, 2, 2});
  EXPECT_THAT(values<int64_t>(op("avg_pool2d", small, Dims{2}, Dims{1}, Dims{1})),
              ElementsAre(-1, 0, 0, 0, 1, 1, 0, 1, 1));
  EXPECT_THAT(
      values<int64_t>(op("avg_pool2d", small, Dims{2}, Dims{1}, Dims{1}, false, true, int64_t{-3})),
      ElementsAre(1, 1, 0, 0, -1, -2, -1, -2, -1));
  // int32 stays refused, as in PyTorch.
  EXPECT_THAT(error_of("avg_pool2d", op("_to_copy", small, TSR_DTYPE_INT32), Dims{2}),
              HasSubstr("not implemented for dtype int32"));
}

TEST(CpuBatchNorm, TrainingUsesBatchStatisticsAndUpdatesRunningStats) {
  ensure_runtime();
  Tensor x = f32({1, 10, 3, 14, 8, 0}, {3, 2});
  Tensor rm = f32({0.5, 1}, {2}), rv = f32({2, 3}, {2});
  std::vector<Tensor> r =
      ops("native_batch_norm", x, f32({2, 1}, {2}), f32({0, 1}, {2}), rm, rv, true, 0.1, 1e-5);
  EXPECT_THAT(values<float>(r[0]), Pointwise(DoubleNear(1e-5), {-2.0380974, 1.3396831, -0.6793658,
                                                                2.0190492, 2.7174633, -0.3587322}));
  EXPECT_THAT(values<float>(r[1]), ElementsAre(4, 8));
  EXPECT_THAT(values<float>(r[2]), Pointwise(DoubleNear(1e-6), {0.3396829, 0.1698415}));
  // running = 0.9 * running + 0.1 * batch, the variance unbiased (n - 1 = 2).
  EXPECT_THAT(values<float>(rm), Pointwise(DoubleNear(1e-6), {0.85, 1.7}));
  EXPECT_THAT(values<float>(rv), Pointwise(DoubleNear(1e-5), {3.1, 7.9}));
  // Without running statistics, eps 0; inference returns empty save_* tensors.
  std::vector<Tensor> plain = ops("native_batch_norm", x, std::nullopt, std::nullopt, std::nullopt,
                                  std::nullopt, true, 0.1, 0.0);
  EXPECT_THAT(values<float>(plain[0]),
              Pointwise(DoubleNear(1e-5),
                        {-1.0190494, 0.3396831, -0.3396831, 1.0190494, 1.3587325, -1.3587325}));
  EXPECT_THAT(shape(plain[1]), ElementsAre(2));
  std::vector<Tensor> eval =
      ops("native_batch_norm", x, std::nullopt, std::nullopt, rm, rv, false, 0.1, 1e-5);
  EXPECT_THAT(shape(eval[1]), ElementsAre(0));
  EXPECT_THAT(shape(eval[2]), ElementsAre(0));
  // The composite in training mode.
  Tensor bn = op("batch_norm", x, std::nullopt, std::nullopt, std::nullopt, std::nullopt, true, 0.1,
                 0.0, false);
  EXPECT_THAT(values<float>(bn), Pointwise(DoubleNear(1e-5), values<float>(plain[0])));
}

TEST(CpuBatchNorm, DegenerateStatisticsAsPyTorch) {
  ensure_runtime();
  // A constant channel with eps 0: invstd 0 (not inf), the output 0.
  std::vector<Tensor> r = ops("native_batch_norm", f32({1, 1}, {2, 1}), std::nullopt, std::nullopt,
                              std::nullopt, std::nullopt, true, 0.1, 0.0);
  EXPECT_THAT(values<float>(r[0]), ElementsAre(0, 0));
  EXPECT_THAT(values<float>(r[2]), ElementsAre(0));
  // One value per channel: the unbiased running variance is 0 / 0, NaN, as in PyTorch's op.
  Tensor rm = f32({0}, {1}), rv = f32({1}, {1});
  ops("native_batch_norm", f32({1}, {1, 1}), std::nullopt, std::nullopt, rm, rv, true, 0.1, 1e-5);
  EXPECT_THAT(values<float>(rm), ElementsAre(0.1f));
  EXPECT_TRUE(std::isnan(values<float>(rv)[0]));
  // An empty batch through the composite leaves the running statistics alone.
  Tensor empty = op("batch_norm", f32({}, {0, 1, 3}), std::nullopt, std::nullopt, rm, rv, true, 0.1,
                    1e-5, false);
  EXPECT_THAT(shape(empty), ElementsAre(0, 1, 3));
  EXPECT_THAT(values<float>(rm), ElementsAre(0.1f));
}

TEST(CpuInstanceNorm, PerInstanceStatisticsAndRunningStatsMean) {
  ensure_runtime();
  Tensor x = f32({1, 2, 3, 6, 0, 0, 4, 4, 2, 2, 2, 10, 1, 3, 5, 7}, {2, 2, 4});
  Tensor rm = f32({0, 1}, {2}), rv = f32({1, 2}, {2});
  Tensor y =
      op("instance_norm", x, f32({1, 2}, {2}), f32({0, -1}, {2}), rm, rv, true, 0.5, 1e-5, false);
  EXPECT_THAT(shape(y), ElementsAre(2, 2, 4));
  EXPECT_THAT(
      values<float>(y),
      Pointwise(DoubleNear(1e-5), {-1.0690434, -0.5345217, 0.0, 1.6035651, -2.9999976, -2.9999976,
                                   0.9999974, 0.9999974, -0.57735, -0.57735, -0.57735, 1.73205,
                                   -3.683279, -1.8944266, -0.105574, 1.6832786}));
  EXPECT_THAT(values<float>(rm), Pointwise(DoubleNear(1e-6), {1.75, 2.0}));
  EXPECT_THAT(values<float>(rv), Pointwise(DoubleNear(1e-5), {5.6666665, 4.0}));
  EXPECT_THAT(error_of("instance_norm", x, std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                       false, 0.1, 1e-5, false),
              HasSubstr("Expected running_mean and running_var to be defined"));
}

// A oneDNN primitive has its own scratchpad in this oneDNN (built without concurrent
// execution), so threads must not share one: four threads convolving at once get PyTorch's
// values every time (with one shared primitive cache this crashed, or gave wrong values).
TEST(CpuOneDnnThreads, ConvolutionsFromSeveralThreadsAtOnce) {
  ensure_runtime();
  const Tensor x = f32(cycle<float>(2 * 3 * 8 * 8, 13, -6.f), {2, 3, 8, 8});
  const Tensor w = f32(cycle<float>(8 * 3 * 3 * 3, 5, -2.f), {8, 3, 3, 3});
  auto conv = [&] {
    return floats(op("convolution", x, w, std::nullopt, Dims{1}, Dims{1}, Dims{1}, false,
                     Dims{0}, int64_t{1}));
  };
  const std::vector<float> want = conv();
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) wrong += conv() != want;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

// Note [oneDNN's threads] (onednn.hpp, Threads): OpenMP's per-thread setting is shared by every
// library in the process. A co-resident library's setting (what libtorch's
// torch::set_num_threads(1) does: omp_set_num_threads(1)) must neither decide Tessera's
// convolutions nor be changed by them, and Tessera's own count is tsr_set_num_threads'.
TEST(CpuOneDnnThreads, AnotherLibrarysOpenMpSettingStaysItsOwn) {
  ensure_runtime();
  void* gomp = dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD);  // oneDNN's (Debian's: OpenMP)
  ASSERT_NE(gomp, nullptr) << "oneDNN is expected on libgomp here";
  auto omp_set = reinterpret_cast<void (*)(int)>(dlsym(gomp, "omp_set_num_threads"));
  auto omp_get = reinterpret_cast<int (*)()>(dlsym(gomp, "omp_get_max_threads"));
  ASSERT_TRUE(omp_set != nullptr && omp_get != nullptr);
  const int before = tsr_num_threads();
  // More threads than any earlier OpenMP team of this process had (those were at most the
  // cores): the team oneDNN starts for Tessera's count shows in the process's threads.
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = 2 * cores + 3;
  auto process_threads = [] {
    int n = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
      (void)entry;
      ++n;
    }
    return n;
  };
  omp_set(1);  // the other library's choice
  ASSERT_EQ(tsr_set_num_threads(threads), nullptr);
  const int threads_before = process_threads();
  Tensor y = op("convolution", f32(cycle<float>(8 * 3 * 32 * 32, 7, -3.f), {8, 3, 32, 32}),
                f32(cycle<float>(16 * 3 * 3 * 3, 5, -2.f), {16, 3, 3, 3}), std::nullopt,
                Dims{1}, Dims{1}, Dims{1}, false, Dims{0}, int64_t{1});
  EXPECT_THAT(shape(y), ElementsAre(8, 16, 32, 32));
  // OMP_NUM_THREADS in the environment caps oneDNN's threads (the sanitizer builds set 1).
  const char* cap_text = std::getenv("OMP_NUM_THREADS");
  const int cap = cap_text != nullptr ? std::atoi(cap_text) : 0;
  const int team = cap > 0 ? std::min(cap, threads) : threads;
  EXPECT_GE(process_threads() - threads_before, team - cores)
      << "oneDNN did not run on Tessera's " << team << " threads";
  EXPECT_EQ(omp_get(), 1) << "Tessera's convolution changed the process's OpenMP setting";
  EXPECT_EQ(tsr_num_threads(), threads) << "the other library's setting changed Tessera's";
  tsr_error* bad = tsr_set_num_threads(0);
  ASSERT_NE(bad, nullptr);
  EXPECT_THAT(std::string(tsr_error_message(bad).data, tsr_error_message(bad).size),
              HasSubstr("tsr_set_num_threads: expected a number of threads in [1, "));
  tsr_error_release(bad);
  ASSERT_EQ(tsr_set_num_threads(before), nullptr);
}

}  // namespace
}  // namespace cpu_test
}  // namespace tessera

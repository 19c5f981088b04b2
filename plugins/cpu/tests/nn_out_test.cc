// The NN ops' out= forms on the CPU plugin: the plugin implements only them (convolution.out,
// max_pool2d_with_indices.out, native_layer_norm.out, native_batch_norm.out, avg_pool2d.out,
// linear.out) and the dispatcher derives the functional forms; out= tensors of the wrong shape
// are resized against the plan, of the wrong dtype or device refused, naming the argument.
#include <cmath>
#include <set>
#include <string>

#include "cpu_test_util.hpp"
#include "gmock/gmock.h"
#include "tessera/c/kernel.h"

namespace tessera {
namespace cpu_test {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using Dims = std::vector<int64_t>;

std::vector<float> iota(int64_t n, float start = 0) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

Tensor empty(const Dims& sizes, tsr_dtype dtype, tsr_device device = sdk::kCpu) {
  ensure_runtime();
  return Tensor::empty(sizes, dtype, device);
}

// error_of_call: the message of calling `name`, which must fail (any number of returns).
template <typename... Args>
std::string error_of_call(const std::string& name, const Args&... args) {
  try {
    ops(name, args...);
  } catch (const sdk::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << name << " unexpectedly succeeded";
  return "";
}

TEST(CpuNNOut, PluginRegistersTheOutFormsOnly) {
  ensure_runtime();
  size_t count = 0;
  sdk::check(tsr_plugin_kernels(sdk::to_c("cpu"), nullptr, 0, &count));
  std::vector<tsr_kernel_info> infos(count);
  for (tsr_kernel_info& info : infos) info.struct_size = sizeof info;
  sdk::check(tsr_plugin_kernels(sdk::to_c("cpu"), infos.data(), infos.size(), &count));
  std::set<std::string> ops;
  for (const tsr_kernel_info& info : infos) ops.insert(std::string(sdk::from_c(info.op_name)));
  for (const char* out : {"convolution.out", "max_pool2d_with_indices.out", "avg_pool2d.out",
                          "native_layer_norm.out", "native_batch_norm.out", "linear.out"}) {
    EXPECT_EQ(ops.count(out), 1u) << out;
  }
  // Functional forms come from the out= kernels; composites from the native ops.
  for (const char* functional :
       {"convolution", "max_pool2d_with_indices", "max_pool2d", "avg_pool2d", "native_layer_norm",
        "native_batch_norm", "layer_norm", "batch_norm", "linear"}) {
    EXPECT_EQ(ops.count(functional), 0u) << functional;
  }
}

TEST(CpuNNOut, MaxPoolWithIndicesResizesWrongShapedOutputs) {
  const Tensor x = f32(iota(16), {1, 1, 4, 4});
  Tensor maxima = empty({0}, TSR_DTYPE_FLOAT32), indices = empty({3, 5}, TSR_DTYPE_INT64);
  const std::vector<Tensor> r = ops("max_pool2d_with_indices.out", x, Dims{2}, Dims{2}, Dims{0},
                                    Dims{1}, false, maxima, indices);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].get(), maxima.get());
  EXPECT_EQ(r[1].get(), indices.get());
  EXPECT_THAT(shape(maxima), ElementsAre(1, 1, 2, 2));
  EXPECT_THAT(shape(indices), ElementsAre(1, 1, 2, 2));
  EXPECT_THAT(values<float>(maxima), ElementsAre(5, 7, 13, 15));
  EXPECT_THAT(values<int64_t>(indices), ElementsAre(5, 7, 13, 15));
  // The functional form, derived from the out= kernel, agrees.
  const std::vector<Tensor> f =
      ops("max_pool2d_with_indices", x, Dims{2}, Dims{2}, Dims{0}, Dims{1}, false);
  EXPECT_THAT(values<float>(f[0]), ElementsAre(5, 7, 13, 15));
  EXPECT_THAT(values<int64_t>(f[1]), ElementsAre(5, 7, 13, 15));
}

TEST(CpuNNOut, MaxPoolWithIndicesTakesTheOutputSizeFromItsOutputs) {
  // ceil_mode with dilation: 6 rows pooled by a 2-tap kernel of dilation 2, stride 2: windows
  // at 0, 2 and (ceil_mode) 4, whose second tap falls outside, as the Meta function sizes it.
  const Tensor x = f32(iota(36), {1, 6, 6});
  Tensor out = empty({0}, TSR_DTYPE_FLOAT32), indices = empty({0}, TSR_DTYPE_INT64);
  ops("max_pool2d_with_indices.out", x, Dims{2}, Dims{2}, Dims{0}, Dims{2}, true, out, indices);
  EXPECT_THAT(shape(out), ElementsAre(1, 3, 3));
  EXPECT_THAT(values<float>(out), ElementsAre(14, 16, 16, 26, 28, 28, 26, 28, 28));
  EXPECT_THAT(values<int64_t>(indices), ElementsAre(14, 16, 16, 26, 28, 28, 26, 28, 28));
  // An input smaller than the kernel: the span is negative and the Meta function refuses it,
  // before any kernel runs, for both forms.
  const Tensor tiny = f32({1}, {1, 1, 1});
  EXPECT_THAT(
      error_of_call("max_pool2d_with_indices", tiny, Dims{3}, Dims{3}, Dims{0}, Dims{1}, false),
      HasSubstr("output size is too small"));
  EXPECT_THAT(error_of_call("max_pool2d_with_indices.out", tiny, Dims{3}, Dims{3}, Dims{0}, Dims{1},
                            false, empty({0}, TSR_DTYPE_FLOAT32), empty({0}, TSR_DTYPE_INT64)),
              HasSubstr("output size is too small"));
}

TEST(CpuNNOut, ConvolutionWritesANonContiguousOut) {
  const Tensor x = f32(iota(2 * 2 * 4 * 4, -8), {2, 2, 4, 4});
  const Tensor w = f32(iota(3 * 2 * 2 * 2, -5), {3, 2, 2, 2});
  const Tensor b = f32({1, -1, 0.5}, {3});
  const Tensor want =
      op("convolution", x, w, b, Dims{2}, Dims{1}, Dims{1}, false, Dims{0}, int64_t{1});
  ASSERT_THAT(shape(want), ElementsAre(2, 3, 3, 3));
  // out: a [2, 3, 3, 3] view of a [3, 3, 3, 2] tensor (dims 0 and 3 swapped).
  const Tensor base = empty({3, 3, 3, 2}, TSR_DTYPE_FLOAT32);
  const Tensor out = op("transpose.int", base, int64_t{0}, int64_t{3});
  ASSERT_THAT(shape(out), ElementsAre(2, 3, 3, 3));
  const Tensor r =
      op("convolution.out", x, w, b, Dims{2}, Dims{1}, Dims{1}, false, Dims{0}, int64_t{1}, out);
  EXPECT_EQ(r.get(), out.get());
  EXPECT_THAT(values<float>(out), ElementsAreArray(values<float>(want)));
  // The same through the loop (float64) and a non-contiguous out.
  const Tensor x64 = op("_to_copy", x, TSR_DTYPE_FLOAT64);
  const Tensor w64 = op("_to_copy", w, TSR_DTYPE_FLOAT64);
  const Tensor b64 = op("_to_copy", b, TSR_DTYPE_FLOAT64);
  const Tensor out64 =
      op("transpose.int", empty({3, 3, 3, 2}, TSR_DTYPE_FLOAT64), int64_t{0}, int64_t{3});
  op("convolution.out", x64, w64, b64, Dims{2}, Dims{1}, Dims{1}, false, Dims{0}, int64_t{1},
     out64);
  EXPECT_THAT(values<float>(op("_to_copy", out64, TSR_DTYPE_FLOAT32)),
              ElementsAreArray(values<float>(want)));
}

TEST(CpuNNOut, OutOfTheWrongDtypeOrDeviceIsRefusedNamingTheArgument) {
  const Tensor x = f32(iota(6), {2, 3});
  // The statistics output in float64 for a float32 input.
  const std::string dtype =
      error_of_call("native_layer_norm.out", x, Dims{3}, std::nullopt, std::nullopt, 1e-5,
                    empty({2, 3}, TSR_DTYPE_FLOAT32), empty({2, 1}, TSR_DTYPE_FLOAT64),
                    empty({2, 1}, TSR_DTYPE_FLOAT32));
  EXPECT_THAT(dtype, HasSubstr("native_layer_norm.out"));
  EXPECT_THAT(dtype, HasSubstr("'out1'"));
  EXPECT_THAT(dtype, HasSubstr("float32"));
  EXPECT_THAT(dtype, HasSubstr("float64"));
  // Integer indices of another width.
  const std::string indices = error_of_call(
      "max_pool2d_with_indices.out", f32(iota(16), {1, 4, 4}), Dims{2}, Dims{2}, Dims{0}, Dims{1},
      false, empty({1, 2, 2}, TSR_DTYPE_FLOAT32), empty({1, 2, 2}, TSR_DTYPE_INT32));
  EXPECT_THAT(indices, HasSubstr("max_pool2d_with_indices.out"));
  EXPECT_THAT(indices, HasSubstr("'indices'"));
  EXPECT_THAT(indices, HasSubstr("int64"));
  EXPECT_THAT(indices, HasSubstr("int32"));
  // An output on another device.
  const std::string device = error_of_call(
      "native_batch_norm.out", f32(iota(6), {2, 3}), std::nullopt, std::nullopt, std::nullopt,
      std::nullopt, true, 0.1, 1e-5, empty({2, 3}, TSR_DTYPE_FLOAT32, sdk::kMeta),
      empty({3}, TSR_DTYPE_FLOAT32), empty({3}, TSR_DTYPE_FLOAT32));
  EXPECT_THAT(device, HasSubstr("native_batch_norm.out"));
  EXPECT_THAT(device, HasSubstr("'out'"));
  EXPECT_THAT(device, HasSubstr("cpu"));
  EXPECT_THAT(device, HasSubstr("meta"));
}

TEST(CpuNNOut, LayerNormOutResizesEveryOutput) {
  const Tensor x = f32({1, 2, 3, 4, 4, 4}, {2, 3});
  Tensor y = empty({1}, TSR_DTYPE_FLOAT32), mean = empty({0}, TSR_DTYPE_FLOAT32),
         rstd = empty({5, 5}, TSR_DTYPE_FLOAT32);
  ops("native_layer_norm.out", x, Dims{3}, std::nullopt, std::nullopt, 0.0, y, mean, rstd);
  EXPECT_THAT(shape(y), ElementsAre(2, 3));
  EXPECT_THAT(shape(mean), ElementsAre(2, 1));
  EXPECT_THAT(shape(rstd), ElementsAre(2, 1));
  EXPECT_THAT(values<float>(mean), ElementsAre(2, 4));
  const std::vector<float> r = values<float>(rstd);
  EXPECT_NEAR(r[0], 1 / std::sqrt(2.0f / 3), 1e-5);
  EXPECT_TRUE(std::isinf(r[1]));  // zero variance and eps 0, as PyTorch
  // An empty batch: empty outputs, statistics [0, 1].
  const std::vector<Tensor> e = ops("native_layer_norm", empty({0, 3}, TSR_DTYPE_FLOAT32), Dims{3},
                                    std::nullopt, std::nullopt, 1e-5);
  EXPECT_THAT(shape(e[0]), ElementsAre(0, 3));
  EXPECT_THAT(shape(e[1]), ElementsAre(0, 1));
}

TEST(CpuNNOut, BatchNormOutInferenceEmptiesTheSavedStatistics) {
  const Tensor x = f32({1, 2, 3, 4}, {2, 2});
  const Tensor rm = f32({1, 2}, {2}), rv = f32({4, 1}, {2});
  Tensor out = empty({2, 2}, TSR_DTYPE_FLOAT32), save_mean = empty({2}, TSR_DTYPE_FLOAT32),
         save_invstd = empty({7}, TSR_DTYPE_FLOAT32);
  ops("native_batch_norm.out", x, std::nullopt, std::nullopt, rm, rv, false, 0.1, 0.0, out,
      save_mean, save_invstd);
  EXPECT_THAT(values<float>(out), ElementsAre(0, 0, 1, 2));
  EXPECT_THAT(shape(save_mean), ElementsAre(0));
  EXPECT_THAT(shape(save_invstd), ElementsAre(0));
  // Training into given outputs updates the running statistics too.
  ops("native_batch_norm.out", x, std::nullopt, std::nullopt, rm, rv, true, 0.5, 0.0, out,
      save_mean, save_invstd);
  EXPECT_THAT(values<float>(save_mean), ElementsAre(2, 3));
  EXPECT_THAT(values<float>(save_invstd), ElementsAre(1, 1));
  EXPECT_THAT(values<float>(out), ElementsAre(-1, -1, 1, 1));
  EXPECT_THAT(values<float>(rm), ElementsAre(1.5, 2.5));
  EXPECT_THAT(values<float>(rv), ElementsAre(3, 1.5));  // unbiased variance 2
}

TEST(CpuNNOut, LinearOutResizesAndWritesANonContiguousOut) {
  const Tensor x = f32(iota(6), {2, 3});
  const Tensor w = f32({1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1}, {4, 3});
  const Tensor b = f32({0, 10, 20, 30}, {4});
  Tensor out = empty({1, 1}, TSR_DTYPE_FLOAT32);
  op("linear.out", x, w, b, out);
  EXPECT_THAT(shape(out), ElementsAre(2, 4));
  EXPECT_THAT(values<float>(out), ElementsAre(0, 11, 22, 33, 3, 14, 25, 42));
  const Tensor strided = op("t", empty({4, 2}, TSR_DTYPE_FLOAT32));
  op("linear.out", x, w, b, strided);
  EXPECT_THAT(values<float>(strided), ElementsAre(0, 11, 22, 33, 3, 14, 25, 42));
  // No input features: the bias per row (the rows used to be counted as 0 here).
  const Tensor none = empty({3, 0}, TSR_DTYPE_FLOAT32);
  const Tensor w0 = empty({2, 0}, TSR_DTYPE_FLOAT32);
  EXPECT_THAT(values<float>(op("linear", none, w0, f32({1, 2}, {2}))),
              ElementsAre(1, 2, 1, 2, 1, 2));
  EXPECT_THAT(values<float>(op("linear", none, w0, std::nullopt)), ElementsAre(0, 0, 0, 0, 0, 0));
}

}  // namespace
}  // namespace cpu_test
}  // namespace tessera

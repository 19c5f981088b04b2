// The backward ops of convolution, pooling and embedding (op set 1.4) on the CPU plugin,
// composites over its kernels. The conformance oracles compare their values with references and
// their gradients with central differences of the forward ops; here is what they do not
// compare: the convolution's gradients against central differences in the cases most easily
// got wrong (groups, stride, transposed with output_padding), output_mask's None returns and the
// out= form leaving a masked-out output unwritten, max pooling's -1 indices, and the errors'
// words.
#include <cmath>
#include <functional>

#include "central_differences.hpp"
#include "cpu_test_util.hpp"
#include "gmock/gmock.h"

namespace tessera {
namespace cpu_test {
namespace {

using ::testing::HasSubstr;

size_t Count(const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

struct Conv {
  std::vector<int64_t> in, w, stride, padding, dilation;
  bool transposed;
  std::vector<int64_t> output_padding;
  int64_t groups;
};

TEST(NNBackward, ConvolutionMatchesCentralDifferences) {
  const std::vector<Conv> cases{{{2, 4, 6, 5}, {4, 2, 3, 2}, {2, 1}, {1, 0}, {1, 2}, false, {0}, 2},
                                {{1, 2, 3, 4}, {2, 3, 3, 2}, {2}, {1}, {1}, true, {1}, 1},
                                {{1, 4, 3, 3}, {4, 1, 2, 2}, {1}, {0}, {2}, true, {1}, 2},
                                {{2, 3, 7}, {2, 3, 2}, {3}, {0}, {1}, false, {0}, 1}};
  for (const Conv& c : cases) {
    SCOPED_TRACE(::testing::PrintToString(c.in) + " * " + ::testing::PrintToString(c.w));
    const std::vector<double> x = Wave(Count(c.in), 0.7, 0.1), w = Wave(Count(c.w), 1.1, 0.3);
    auto conv = [&](const Tensor& input, const Tensor& weight) {
      return op("convolution", input, weight, std::nullopt, c.stride, c.padding, c.dilation,
                c.transposed, c.output_padding, c.groups);
    };
    const Tensor y = conv(f64(x, c.in), f64(w, c.w));
    const std::vector<double> g = Wave(static_cast<size_t>(y.numel()), 1.3, 0.5);
    const std::vector<Tensor> grads =
        ops("convolution_backward", f64(g, shape(y)), f64(x, c.in), f64(w, c.w),
            std::vector<int64_t>{shape(y)[1]}, c.stride, c.padding, c.dilation, c.transposed,
            c.output_padding, c.groups, std::vector<bool>{true, true, true});
    ExpectNear(values<double>(grads[0]),
               NumericGradient(x, c.in, g, [&](const Tensor& t) { return conv(t, f64(w, c.w)); }));
    ExpectNear(values<double>(grads[1]),
               NumericGradient(w, c.w, g, [&](const Tensor& t) { return conv(f64(x, c.in), t); }));
    EXPECT_EQ(shape(grads[2]), (std::vector<int64_t>{shape(y)[1]}));
  }
}

TEST(NNBackward, ConvolutionOutputMaskAndOutForm) {
  const Tensor x = f64(Wave(18, 0.5, 0), {1, 2, 3, 3}), w = f64(Wave(8, 0.9, 0), {2, 1, 2, 2});
  const Tensor g = f64(Wave(8, 0.3, 0), {1, 2, 2, 2});
  auto call = [&](std::vector<bool> mask) {
    return ops("convolution_backward", g, x, w, std::nullopt, std::vector<int64_t>{1},
               std::vector<int64_t>{0}, std::vector<int64_t>{1}, false, std::vector<int64_t>{0},
               int64_t{2}, mask);
  };
  std::vector<Tensor> r = call({false, true, false});
  EXPECT_TRUE(r[0].get() == nullptr && r[1].get() != nullptr && r[2].get() == nullptr);
  const std::vector<Tensor> all = call({true, true, true});

  const Tensor out0 = f64({0}, {1}), out1 = f64({7}, {1}), out2 = f64({5, 5}, {2});
  r = ops("convolution_backward.out", g, x, w, std::nullopt, std::vector<int64_t>{1},
          std::vector<int64_t>{0}, std::vector<int64_t>{1}, false, std::vector<int64_t>{0},
          int64_t{2}, std::vector<bool>{true, false, true}, out0, out1, out2);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(values<double>(out1), (std::vector<double>{7}));  // masked out: untouched
  EXPECT_EQ(values<double>(out0), values<double>(all[0]));
  EXPECT_EQ(values<double>(out2), values<double>(all[2]));
}

TEST(NNBackward, ConvolutionErrorsNameTheForwardsCheck) {
  const Tensor x = f32({0, 0, 0, 0}, {1, 4, 1, 1}), w = f32(std::vector<float>(6, 0), {2, 3, 1, 1});
  const Tensor g = f32({0, 0}, {1, 2, 1, 1});
  EXPECT_THAT(error_of("convolution_backward", g, x, w, std::nullopt, std::vector<int64_t>{1},
                       std::vector<int64_t>{0}, std::vector<int64_t>{1}, false,
                       std::vector<int64_t>{0}, int64_t{1}, std::vector<bool>{true, true, true}),
              HasSubstr("convolution_backward: the forward's arguments: convolution: expected "
                        "input [1, 4, 1, 1] to have 3 channels"));
  const Tensor ok = f32({0, 0, 0}, {1, 3, 1, 1});
  EXPECT_THAT(
      error_of("convolution_backward", f32({0, 0, 0}, {1, 3, 1, 1}), ok, w, std::nullopt,
               std::vector<int64_t>{1}, std::vector<int64_t>{0}, std::vector<int64_t>{1}, false,
               std::vector<int64_t>{0}, int64_t{1}, std::vector<bool>{true, true, true}),
      HasSubstr("expected grad_output of shape [1, 2, 1, 1] (the convolution's output), "
                "got [1, 3, 1, 1]"));
}

TEST(NNBackward, MaxPoolAddsOverlappingWindowsAtTheirIndices) {
  // A 3x3 plane, 2x2 windows at stride 1: the centre is the maximum of all four windows.
  const Tensor x = f32({0, 1, 0, 1, 9, 1, 0, 1, 0}, {1, 1, 3, 3});
  const std::vector<Tensor> fwd =
      ops("max_pool2d_with_indices", x, std::vector<int64_t>{2}, std::vector<int64_t>{1},
          std::vector<int64_t>{0}, std::vector<int64_t>{1}, false);
  EXPECT_EQ(values<int64_t>(fwd[1]), (std::vector<int64_t>{4, 4, 4, 4}));
  const Tensor grad = op("max_pool2d_with_indices_backward", f32({1, 2, 3, 4}, {1, 1, 2, 2}), x,
                         std::vector<int64_t>{2}, std::vector<int64_t>{1}, std::vector<int64_t>{0},
                         std::vector<int64_t>{1}, false, fwd[1]);
  EXPECT_EQ(values<float>(grad), (std::vector<float>{0, 0, 0, 0, 10, 0, 0, 0, 0}));
  EXPECT_THAT(error_of("max_pool2d_with_indices_backward", f32({1, 2, 3, 4}, {1, 1, 2, 2}), x,
                       std::vector<int64_t>{2}, std::vector<int64_t>{1}, std::vector<int64_t>{0},
                       std::vector<int64_t>{1}, false, i64({4, 4, 9, 4}, {1, 1, 2, 2})),
              HasSubstr("expected indices into the input's 3 x 3 plane"));
}

TEST(NNBackward, EmbeddingNamesTheRowsItHas) {
  EXPECT_THAT(error_of("embedding_dense_backward", f32({1, 2, 3, 4}, {2, 2}), i64({0, 5}, {2}),
                       int64_t{4}, int64_t{-1}, false),
              HasSubstr("expected indices in [0, num_weights = 4)"));
  // padding_idx's rows take nothing, even where grad_output is not finite.
  const Tensor grad = op("embedding_dense_backward", f32({1, 2, NAN, INFINITY, 5, 6}, {3, 2}),
                         i64({0, 1, 0}, {3}), int64_t{2}, int64_t{1}, false);
  EXPECT_EQ(values<float>(grad), (std::vector<float>{6, 8, 0, 0}));
}

TEST(NNBackward, ConvolutionRefusesAPlainConvolutionsOutputPadding) {
  // The forward ignores it; the backward refuses it, as ATen's does.
  const Tensor x = f32(std::vector<float>(16, 1), {1, 1, 4, 4});
  const Tensor w = f32({1, 1, 1, 1}, {1, 1, 2, 2}), g = f32(std::vector<float>(9, 1), {1, 1, 3, 3});
  EXPECT_THAT(error_of("convolution_backward", g, x, w, std::nullopt, std::vector<int64_t>{1},
                       std::vector<int64_t>{0}, std::vector<int64_t>{1}, false,
                       std::vector<int64_t>{1}, int64_t{1}, std::vector<bool>{true, true, true}),
              HasSubstr("output_padding is not supported for non-transposed convolutions; got "
                        "[1, 1]"));
}

TEST(NNBackward, MaxPoolWindowsInThePaddingAloneGetNoGradient) {
  // A 1x1 plane, kernel 2 at dilation 2 and padding 1: the one window's taps are both in the
  // padding; the forward returns -inf at index -1, and the backward sends that gradient nowhere.
  const Tensor x = f32({5}, {1, 1, 1, 1});
  const std::vector<Tensor> fwd =
      ops("max_pool2d_with_indices", x, std::vector<int64_t>{2}, std::vector<int64_t>{1},
          std::vector<int64_t>{1}, std::vector<int64_t>{2}, false);
  ASSERT_EQ(values<int64_t>(fwd[1]), (std::vector<int64_t>{-1}));
  const Tensor grad =
      op("max_pool2d_with_indices_backward", f32({3}, {1, 1, 1, 1}), x, std::vector<int64_t>{2},
         std::vector<int64_t>{1}, std::vector<int64_t>{1}, std::vector<int64_t>{2}, false, fwd[1]);
  EXPECT_EQ(values<float>(grad), (std::vector<float>{0}));
}

TEST(NNBackward, EmbeddingCountsNameTheRowsItHas) {
  EXPECT_THAT(error_of("embedding_dense_backward", f32({1, 2, 3, 4}, {2, 2}), i64({0, 5}, {2}),
                       int64_t{4}, int64_t{-1}, true),
              HasSubstr("embedding_dense_backward: expected indices in [0, num_weights = 4)"));
}

}  // namespace
}  // namespace cpu_test
}  // namespace tessera

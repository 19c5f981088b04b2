// The normalizations' backward ops (op set 1.3, composites over the CPU plugin's kernels):
// their gradients against central differences of the forward ops in float64, which checks the
// formulas independently of the conformance references; and what the conformance oracles do
// not compare: output_mask's None returns, a layer norm without weight or bias, and the out=
// form leaving a masked-out output unwritten.
#include <cmath>
#include <functional>

#include "central_differences.hpp"
#include "cpu_test_util.hpp"
#include "gmock/gmock.h"

namespace tessera {
namespace cpu_test {
namespace {

using ::testing::HasSubstr;

TEST(NormBackward, LayerNormMatchesCentralDifferences) {
  const std::vector<int64_t> shape{3, 4};
  const std::vector<double> x = Wave(12, 0.7, 0.1), g = Wave(12, 1.3, 0.5);
  const Tensor w = f64(Wave(4, 0.9, 1.0), {4}), b = f64(Wave(4, 0.4, 2.0), {4});
  auto forward = [&](const Tensor& t) {
    return ops("native_layer_norm", t, std::vector<int64_t>{4}, w, b, 1e-5)[0];
  };
  const std::vector<Tensor> stats =
      ops("native_layer_norm", f64(x, shape), std::vector<int64_t>{4}, w, b, 1e-5);
  const std::vector<Tensor> grads =
      ops("native_layer_norm_backward", f64(g, shape), f64(x, shape), std::vector<int64_t>{4},
          stats[1], stats[2], w, b, std::vector<bool>{true, true, true});
  ExpectNear(values<double>(grads[0]), NumericGradient(x, shape, g, forward));
  // The weight's gradient: central differences in each weight element.
  std::vector<double> dw(4);
  for (size_t i = 0; i < 4; ++i) {
    std::vector<double> wp = values<double>(w), wm = wp;
    wp[i] += 1e-6;
    wm[i] -= 1e-6;
    auto at = [&](const std::vector<double>& wv) {
      return Dot(ops("native_layer_norm", f64(x, shape), std::vector<int64_t>{4}, f64(wv, {4}), b,
                     1e-5)[0],
                 g);
    };
    dw[i] = (at(wp) - at(wm)) / 2e-6;
  }
  ExpectNear(values<double>(grads[1]), dw);
  // The bias's gradient is the sum of g over the rows.
  std::vector<double> db(4, 0.0);
  for (size_t i = 0; i < 12; ++i) db[i % 4] += g[i];
  ExpectNear(values<double>(grads[2]), db);
}

TEST(NormBackward, BatchNormMatchesCentralDifferencesInTrainingAndInference) {
  const std::vector<int64_t> shape{2, 3, 2};
  const std::vector<double> x = Wave(12, 0.8, 0.3), g = Wave(12, 1.1, 0.2);
  const Tensor w = f64(Wave(3, 0.9, 1.0), {3});
  const Tensor running_mean = f64({0.1, -0.2, 0.3}, {3}), running_var = f64({0.5, 1.5, 2.0}, {3});
  for (const bool train : {true, false}) {
    SCOPED_TRACE(train ? "training" : "inference");
    // Training normalizes with the batch statistics (fresh running copies each call, which the
    // forward updates); inference with the running ones.
    auto forward = [&](const Tensor& t) {
      return ops("native_batch_norm", t, w, std::nullopt, op("clone", running_mean, std::nullopt),
                 op("clone", running_var, std::nullopt), train, 0.1, 1e-5)[0];
    };
    const std::vector<Tensor> fwd = ops("native_batch_norm", f64(x, shape), w, std::nullopt,
                                        op("clone", running_mean, std::nullopt),
                                        op("clone", running_var, std::nullopt), train, 0.1, 1e-5);
    const std::vector<bool> all{true, true, true};
    const std::vector<Tensor> grads =
        train ? ops("native_batch_norm_backward", f64(g, shape), f64(x, shape), w, running_mean,
                    running_var, fwd[1], fwd[2], true, 1e-5, all)
              : ops("native_batch_norm_backward", f64(g, shape), f64(x, shape), w, running_mean,
                    running_var, std::nullopt, std::nullopt, false, 1e-5, all);
    ExpectNear(values<double>(grads[0]), NumericGradient(x, shape, g, forward));
    // The bias's gradient is the sum of g over each channel; the weight's, central differences.
    std::vector<double> db(3, 0.0);
    for (size_t i = 0; i < 12; ++i) db[(i / 2) % 3] += g[i];
    ExpectNear(values<double>(grads[2]), db);
    const std::vector<double> wv = values<double>(w);
    auto with_weight = [&](const Tensor& weight) {
      return ops("native_batch_norm", f64(x, shape), weight, std::nullopt,
                 op("clone", running_mean, std::nullopt), op("clone", running_var, std::nullopt),
                 train, 0.1, 1e-5)[0];
    };
    ExpectNear(values<double>(grads[1]), NumericGradient(wv, {3}, g, with_weight));
  }
}

TEST(NormBackward, OutputMaskLeavesGradientsOutAsNone) {
  const Tensor x = f64(Wave(6, 0.5, 0.0), {2, 3}), g = f64(Wave(6, 0.9, 0.0), {2, 3});
  const std::vector<Tensor> stats =
      ops("native_layer_norm", x, std::vector<int64_t>{3}, std::nullopt, std::nullopt, 1e-5);
  const Tensor w = f64({1, 2, 3}, {3});
  std::vector<Tensor> r = ops("native_layer_norm_backward", g, x, std::vector<int64_t>{3}, stats[1],
                              stats[2], w, w, std::vector<bool>{true, false, true});
  EXPECT_TRUE(r[0].get() != nullptr && r[1].get() == nullptr && r[2].get() != nullptr);
  // No weight or bias: no gradient for them, whatever the mask asks (PyTorch 1.13's CPU kernel
  // fails there; its decomposition returns None).
  r = ops("native_layer_norm_backward", g, x, std::vector<int64_t>{3}, stats[1], stats[2],
          std::nullopt, std::nullopt, std::vector<bool>{true, true, true});
  EXPECT_TRUE(r[0].get() != nullptr && r[1].get() == nullptr && r[2].get() == nullptr);

  const Tensor x4 = f64(Wave(12, 0.5, 0.0), {2, 3, 2}), g4 = f64(Wave(12, 0.9, 0.0), {2, 3, 2});
  const std::vector<Tensor> bn = ops("native_batch_norm", x4, std::nullopt, std::nullopt,
                                     std::nullopt, std::nullopt, true, 0.1, 1e-5);
  r = ops("native_batch_norm_backward", g4, x4, std::nullopt, std::nullopt, std::nullopt, bn[1],
          bn[2], true, 1e-5, std::vector<bool>{false, true, false});
  EXPECT_TRUE(r[0].get() == nullptr && r[1].get() != nullptr && r[2].get() == nullptr);
}

TEST(NormBackward, OutFormLeavesAMaskedOutOutputUnwritten) {
  const Tensor x = f64(Wave(6, 0.5, 0.0), {2, 3}), g = f64(Wave(6, 0.9, 0.0), {2, 3});
  const std::vector<Tensor> stats =
      ops("native_layer_norm", x, std::vector<int64_t>{3}, std::nullopt, std::nullopt, 1e-5);
  const Tensor out0 = f64({0}, {1}), out1 = f64({7, 7, 7}, {3}), out2 = f64({9}, {1});
  const Tensor w = f64({1, 2, 3}, {3});
  const std::vector<Tensor> r =
      ops("native_layer_norm_backward.out", g, x, std::vector<int64_t>{3}, stats[1], stats[2], w, w,
          std::vector<bool>{true, false, true}, out0, out1, out2);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(values<double>(out1), (std::vector<double>{7, 7, 7}));  // masked out: untouched
  EXPECT_EQ(shape(out0), (std::vector<int64_t>{2, 3}));             // resized to the gradient
  EXPECT_EQ(shape(out2), (std::vector<int64_t>{3}));
  const std::vector<Tensor> functional =
      ops("native_layer_norm_backward", g, x, std::vector<int64_t>{3}, stats[1], stats[2], w, w,
          std::vector<bool>{true, false, true});
  EXPECT_EQ(values<double>(out0), values<double>(functional[0]));
  EXPECT_EQ(values<double>(out2), values<double>(functional[2]));
}

TEST(NormBackward, RefusesAnOutputMaskOfTwo) {
  const Tensor x = f64(Wave(6, 0.5, 0.0), {2, 3});
  const std::vector<Tensor> stats =
      ops("native_layer_norm", x, std::vector<int64_t>{3}, std::nullopt, std::nullopt, 1e-5);
  EXPECT_THAT(error_of("native_layer_norm_backward", x, x, std::vector<int64_t>{3}, stats[1],
                       stats[2], std::nullopt, std::nullopt, std::vector<bool>{true, true}),
              HasSubstr("output_mask"));
}

}  // namespace
}  // namespace cpu_test
}  // namespace tessera

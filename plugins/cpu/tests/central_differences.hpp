// Central differences for the backward ops' tests: the gradient of L(x) = sum(g * forward(x))
// in each element of x, which is what a backward op given grad_output g returns for x. In
// float64 with a step of 1e-6, as PyTorch's gradcheck.
#pragma once

#include <cmath>
#include <functional>
#include <vector>

#include "cpu_test_util.hpp"
#include "gtest/gtest.h"

namespace tessera {
namespace cpu_test {

// Wave: n smooth, distinct values (sin of a ramp), for inputs and gradients.
inline std::vector<double> Wave(size_t n, double scale, double shift) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(scale * static_cast<double>(i) + shift);
  return v;
}

// Dot: sum(g * a), the scalar a backward op's gradients are the derivatives of.
inline double Dot(const Tensor& a, const std::vector<double>& g) {
  const std::vector<double> v = values<double>(a);
  double s = 0;
  for (size_t i = 0; i < v.size(); ++i) s += v[i] * g[i];
  return s;
}

// NumericGradient: d/dx_i of sum(g * forward(x)), x of `shape` in float64.
inline std::vector<double> NumericGradient(const std::vector<double>& x,
                                           const std::vector<int64_t>& shape,
                                           const std::vector<double>& g,
                                           const std::function<Tensor(const Tensor&)>& forward) {
  auto loss = [&](const std::vector<double>& at) { return Dot(forward(f64(at, shape)), g); };
  const double h = 1e-6;
  std::vector<double> grad(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    std::vector<double> plus = x, minus = x;
    plus[i] += h;
    minus[i] -= h;
    grad[i] = (loss(plus) - loss(minus)) / (2 * h);
  }
  return grad;
}

inline void ExpectNear(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << "element " << i;
}

}  // namespace cpu_test
}  // namespace tessera

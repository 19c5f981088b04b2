// Goodness-of-fit statistics for the random ops' tests (random_test.cc, distribution_test.cc),
// each compared with its critical value at significance 0.001 under fixed seeds, so the tests
// are deterministic.
#pragma once

#include <algorithm>
#include <vector>

namespace tessera {
namespace cpu_test {

// KsDistance: Kolmogorov-Smirnov's statistic, the largest gap between the sample's CDF and
// `cdf`; at significance 0.001 the critical distance is 1.95 / sqrt(n).
template <typename Cdf>
double KsDistance(std::vector<double> x, Cdf cdf) {
  std::sort(x.begin(), x.end());
  double d = 0;
  const double n = static_cast<double>(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double f = cdf(x[i]);
    d = std::max({d, (i + 1) / n - f, f - i / n});
  }
  return d;
}

// ChiSquare: Pearson's statistic of observed counts against expected ones.
inline double ChiSquare(const std::vector<double>& observed, const std::vector<double>& expected) {
  double chi2 = 0;
  for (size_t i = 0; i < observed.size(); ++i) {
    chi2 += (observed[i] - expected[i]) * (observed[i] - expected[i]) / expected[i];
  }
  return chi2;
}

}  // namespace cpu_test
}  // namespace tessera

#include "layer_norm_rows.hpp"

#include <algorithm>
#include <cmath>

#include "isa.hpp"
#include "lane_sum.hpp"

namespace tessera {
namespace cpu {
namespace {

// The leaf size of the reductions' pairwise sums (lane_sum.hpp).
constexpr int64_t kLeaf = 4096;

float row_sum(const float* x, int64_t n) {
  float sum = 0;
  for (int64_t i = 0; i < n; i += kLeaf) sum += contiguous_lane_sum(x + i, std::min(kLeaf, n - i));
  return sum;
}

// The squared deviations from mu, in kLanes<float> lanes (lane i % 32 takes element i) combined
// as the lane sums are: the same result on every vector unit.
TESSERA_CPU_CLONES float squared_deviations(const float* x, int64_t n, float mu) {
  constexpr int kL = kLanes<float>;
  float lane[kL] = {};
  int64_t i = 0;
  for (; i + kL <= n; i += kL) {
    for (int j = 0; j < kL; ++j) {
      const float d = x[i + j] - mu;
      lane[j] += d * d;
    }
  }
  for (int j = 0; i + j < n; ++j) {
    const float d = x[i + j] - mu;
    lane[j] += d * d;
  }
  return combine_lanes(lane);
}

// normalize: y = (x - mu) * inv (* w) (+ b), the optional operands tested once.
TESSERA_CPU_CLONES void normalize(const float* __restrict x, int64_t n, float mu, float inv,
                                  const float* __restrict w, const float* __restrict b,
                                  float* __restrict y) {
  if (w != nullptr && b != nullptr) {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mu) * inv * w[i] + b[i];
  } else if (w != nullptr) {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mu) * inv * w[i];
  } else if (b != nullptr) {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mu) * inv + b[i];
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mu) * inv;
  }
}

}  // namespace

void layer_norm_rows_f32(const float* x, int64_t lo, int64_t hi, int64_t n, const float* w,
                         const float* b, float eps, float* y, float* mean, float* rstd) {
  for (int64_t r = lo; r < hi; ++r) {
    const float* xr = x + r * n;
    const float mu = row_sum(xr, n) / static_cast<float>(n);
    const float var = squared_deviations(xr, n, mu) / static_cast<float>(n);
    const float inv = 1.0f / std::sqrt(var + eps);
    normalize(xr, n, mu, inv, w, b, y + r * n);
    mean[r] = mu;
    rstd[r] = inv;
  }
}

}  // namespace cpu
}  // namespace tessera

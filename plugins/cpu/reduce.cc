#include "reduce.hpp"

#include <algorithm>
#include <numeric>
#include <string>

namespace tessera {
namespace cpu {

std::vector<bool> reduced_dims(std::string_view op, int64_t ndim,
                               const std::vector<int64_t>& dims) {
  std::vector<bool> reduced(static_cast<size_t>(ndim), dims.empty());
  for (int64_t d : dims) {
    const int64_t lo = ndim == 0 ? -1 : -ndim, hi = ndim == 0 ? 0 : ndim - 1;
    if (d < lo || d > hi) {
      sdk::fail(TSR_INVALID_ARGUMENT, std::string(op) +
                                          ": dimension out of range (expected to be in range of [" +
                                          std::to_string(lo) + ", " + std::to_string(hi) +
                                          "], but got " + std::to_string(d) + ")");
    }
    if (ndim > 0) reduced[static_cast<size_t>(d < 0 ? d + ndim : d)] = true;
  }
  return reduced;
}

ReduceLayout make_layout(const sdk::Tensor& in, const std::vector<bool>& reduced,
                         const std::vector<sdk::Tensor>& outs, bool reorder) {
  ReduceLayout L;
  const int64_t nd = in.dim();
  const int64_t itemsize = static_cast<int64_t>(in.itemsize());
  L.kept_out_strides.resize(outs.size());
  std::vector<std::pair<int64_t, int64_t>> red;  // (size, byte stride)
  int64_t kept = 0;
  for (int64_t d = 0; d < nd; ++d) {
    const int64_t size = in.sizes()[d];
    if (reduced[d]) {
      L.red_numel *= size;
      if (size != 1) red.push_back({size, in.strides()[d] * itemsize});
      continue;
    }
    L.kept_sizes.push_back(size);
    L.kept_in_strides.push_back(in.strides()[d] * itemsize);
    for (size_t k = 0; k < outs.size(); ++k) {
      const sdk::Tensor& o = outs[k];
      const int64_t od = o.dim() == nd ? d : kept;  // keepdim keeps every position
      L.kept_out_strides[k].push_back(o.strides()[od] * static_cast<int64_t>(o.itemsize()));
    }
    L.num_outputs *= size;
    ++kept;
  }
  if (reorder) {
    std::stable_sort(red.begin(), red.end(), [](const auto& a, const auto& b) {
      return std::abs(a.second) > std::abs(b.second);
    });
  }
  for (const auto& [size, stride] : red) {
    if (!L.red_sizes.empty() && L.red_strides.back() == stride * size) {
      L.red_sizes.back() *= size;  // the outer dim steps exactly one run of this one: merge
      L.red_strides.back() = stride;
    } else {
      L.red_sizes.push_back(size);
      L.red_strides.push_back(stride);
    }
  }
  if (L.red_sizes.empty()) {
    L.red_sizes.push_back(1);
    L.red_strides.push_back(0);
  }
  return L;
}

}  // namespace cpu
}  // namespace tessera

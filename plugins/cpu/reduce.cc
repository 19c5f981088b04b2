#include "reduce.hpp"

#include <algorithm>
#include <numeric>
#include <string>

namespace tessera {
namespace cpu {

DimMask reduced_dims(const sdk::KernelContext& ctx, int64_t ndim, sdk::IntSpan dims) {
  DimMask reduced(static_cast<size_t>(ndim), dims.size == 0);
  for (size_t k = 0; k < dims.size; ++k) {
    const int64_t d = dims.data[k];
    const int64_t lo = ndim == 0 ? -1 : -ndim, hi = ndim == 0 ? 0 : ndim - 1;
    if (d < lo || d > hi) {
      ctx.fail(TSR_INTERNAL, "dim " + std::to_string(d) + " of a " + std::to_string(ndim) +
                                 "-dim input reached the kernel (the plan checks the range)");
    }
    if (ndim > 0) reduced[static_cast<size_t>(d < 0 ? d + ndim : d)] = true;
  }
  return reduced;
}

ReduceLayout make_layout(const sdk::TensorView& in, const DimMask& reduced,
                         const sdk::TensorView* outs, size_t num_outs, bool reorder) {
  ReduceLayout L;
  if (num_outs > kMaxReduceOutputs) sdk::fail(TSR_INTERNAL, "reduction: too many outputs");
  L.num_outs = num_outs;
  const int64_t nd = in.dim();
  const int64_t itemsize = static_cast<int64_t>(in.itemsize());
  struct Run {
    int64_t size, stride;  // stride in bytes
  };
  SmallVector<Run, kInlineDims> red;
  int64_t kept = 0;
  for (int64_t d = 0; d < nd; ++d) {
    const int64_t size = in.sizes()[d];
    if (reduced[static_cast<size_t>(d)]) {
      L.red_numel *= size;
      if (size != 1) red.push_back({size, in.strides()[d] * itemsize});
      continue;
    }
    L.kept_sizes.push_back(size);
    L.kept_in_strides.push_back(in.strides()[d] * itemsize);
    for (size_t k = 0; k < num_outs; ++k) {
      const sdk::TensorView& o = outs[k];
      const int64_t od = o.dim() == nd ? d : kept;  // keepdim keeps every position
      L.kept_out_strides[k].push_back(o.strides()[od] * static_cast<int64_t>(o.itemsize()));
    }
    L.num_outputs *= size;
    ++kept;
  }
  if (reorder) {
    std::stable_sort(red.begin(), red.end(), [](const Run& a, const Run& b) {
      return std::abs(a.stride) > std::abs(b.stride);
    });
  }
  for (const Run& r : red) {
    if (!L.red_sizes.empty() && L.red_strides.back() == r.stride * r.size) {
      L.red_sizes.back() *= r.size;  // the outer dim steps exactly one run of this one: merge
      L.red_strides.back() = r.stride;
    } else {
      L.red_sizes.push_back(r.size);
      L.red_strides.push_back(r.stride);
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

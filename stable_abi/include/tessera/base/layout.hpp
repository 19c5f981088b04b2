// Facts about dims and strides that the runtime and every plugin must state alike, written once
// (part of the header-only base, tessera/base/): the wrapping of a dim argument and the dense
// check. Each returns a plain answer; the caller words its own error, in its own terms (a
// Status in the runtime, a kernel failure in a plugin).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace tessera {
namespace base {

// wrap_dim: a dim argument (negative counts from the end) as an index in [0, ndim), as
// PyTorch's maybe_wrap_dim: a 0-dim tensor takes -1 and 0, as if it had one dim. -1 when `dim`
// is out of that range.
constexpr int64_t wrap_dim(int64_t dim, int64_t ndim) {
  const int64_t n = ndim > 0 ? ndim : 1;
  if (dim < -n || dim >= n) return -1;
  return dim < 0 ? dim + n : dim;
}

// is_non_overlapping_and_dense: whether the strides (in elements) cover the tensor's elements
// densely without overlap, in some order of its dims (a transposed or permuted contiguous
// tensor is; a slice with gaps or an expanded dim is not). Dims of size 1 take any stride.
inline bool is_non_overlapping_and_dense(const int64_t* sizes, const int64_t* strides,
                                         size_t ndim) {
  constexpr size_t kInlineDims = 16;
  std::pair<int64_t, int64_t> inline_dims[kInlineDims];  // (stride, size), sorted by stride
  std::vector<std::pair<int64_t, int64_t>> many;
  std::pair<int64_t, int64_t>* dims = inline_dims;
  if (ndim > kInlineDims) {
    many.resize(ndim);
    dims = many.data();
  }
  size_t n = 0;
  for (size_t d = 0; d < ndim; ++d) {
    if (sizes[d] != 1) dims[n++] = {strides[d], sizes[d]};
  }
  std::sort(dims, dims + n);
  int64_t expected = 1;
  for (size_t k = 0; k < n; ++k) {
    if (dims[k].first != expected) return false;
    // Only an empty tensor's sizes (any strides allowed) can overflow the product; no stride
    // matches a product past INT64_MAX, so only the last dim may make it.
    if (__builtin_mul_overflow(expected, dims[k].second, &expected)) return k + 1 == n;
  }
  return true;
}

}  // namespace base
}  // namespace tessera

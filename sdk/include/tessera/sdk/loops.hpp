// Strided loops over host-addressable memory, for vendors' kernels (and the sample plugin).
//
// elementwise(out, inputs..., f): out[i] = f(in0[i], in1[i], ...) over out's shape, inputs
// broadcast to it (PyTorch rules) and read through their strides; the innermost dimension runs
// as a plain loop that the compiler can vectorize when the strides are 1.
// reduce(in, init, f): folds every element of `in` (any strides) into an accumulator.
// Both take the base addresses explicitly, so a device whose memory is host memory in another
// form (the sample NPU's scrambled arena) can pass its own unscrambled staging buffers.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tessera/sdk/tensor.hpp"

namespace tessera {
namespace sdk {

// Operand: where a tensor's elements are (element 0 at `base`) and how to step through them.
template <typename T>
struct Operand {
  T* base;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;  // in elements
};

template <typename T>
Operand<T> operand(const Tensor& t, T* base) {
  return Operand<T>{base, t.sizes().vec(), t.strides().vec()};
}

// contiguous_strides: row-major strides of `sizes` (size-0/1 dims stride as if size 1).
inline std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t stride = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= sizes[i] > 1 ? sizes[i] : 1;
  }
  return strides;
}

// contiguous_operand: a dense row-major buffer of `sizes` at `base`.
template <typename T>
Operand<T> contiguous_operand(T* base, std::vector<int64_t> sizes) {
  std::vector<int64_t> strides = contiguous_strides(sizes);
  return Operand<T>{base, std::move(sizes), std::move(strides)};
}

// broadcast_shapes: the NumPy/PyTorch broadcast of two shapes; throws INVALID_ARGUMENT.
inline std::vector<int64_t> broadcast_shapes(const std::vector<int64_t>& a,
                                             const std::vector<int64_t>& b) {
  const size_t n = a.size() > b.size() ? a.size() : b.size();
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1) {
      fail(TSR_INVALID_ARGUMENT, "broadcast_shapes: sizes " + std::to_string(x) + " and " +
                                     std::to_string(y) + " do not broadcast");
    }
    out[n - 1 - i] = x == 1 ? y : x;
  }
  return out;
}

namespace internal {

// Strides of `sizes`/`strides` broadcast to `shape` (0 where the operand is broadcast).
inline std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& sizes,
                                             const std::vector<int64_t>& strides,
                                             const std::vector<int64_t>& shape) {
  std::vector<int64_t> out(shape.size(), 0);
  const size_t lead = shape.size() - sizes.size();
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == shape[lead + d]) {
      out[lead + d] = strides[d];
    } else if (sizes[d] != 1) {
      fail(TSR_INVALID_ARGUMENT, "elementwise: an operand does not broadcast to the output");
    }
  }
  return out;
}

}  // namespace internal

namespace internal {

template <typename Out, typename F, size_t... K, typename... In>
void Elementwise(const Operand<Out>& out, F& f, std::index_sequence<K...>,
                 const Operand<In>&... in) {
  const std::vector<int64_t>& shape = out.sizes;
  int64_t numel = 1;
  for (int64_t s : shape) numel *= s;
  if (numel == 0) return;
  const int64_t ndim = static_cast<int64_t>(shape.size());
  const std::array<std::vector<int64_t>, sizeof...(In)> strides = {
      BroadcastStrides(in.sizes, in.strides, shape)...};
  const int64_t inner = ndim ? shape[ndim - 1] : 1;
  const int64_t out_step = ndim ? out.strides[ndim - 1] : 0;
  const std::array<int64_t, sizeof...(In)> steps = {(ndim ? strides[K][ndim - 1] : 0)...};
  std::vector<int64_t> index(static_cast<size_t>(ndim), 0);
  while (true) {
    int64_t out_offset = 0;
    std::array<int64_t, sizeof...(In)> offsets{};
    for (int64_t d = 0; d + 1 < ndim; ++d) {
      out_offset += index[d] * out.strides[d];
      ((offsets[K] += index[d] * strides[K][d]), ...);
    }
    Out* o = out.base + out_offset;
    for (int64_t i = 0; i < inner; ++i) {
      o[i * out_step] = f(in.base[offsets[K] + i * steps[K]]...);
    }
    int64_t d = ndim - 2;  // advance the outer index
    for (; d >= 0; --d) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace internal

template <typename Out, typename F, typename... In>
void elementwise(const Operand<Out>& out, F&& f, const Operand<In>&... in) {
  internal::Elementwise(out, f, std::index_sequence_for<In...>{}, in...);
}

template <typename T, typename Acc, typename F>
Acc reduce(const Operand<T>& in, Acc init, F&& f) {
  int64_t numel = 1;
  for (int64_t s : in.sizes) numel *= s;
  const size_t ndim = in.sizes.size();
  std::vector<int64_t> index(ndim, 0);
  Acc acc = init;
  for (int64_t n = 0; n < numel; ++n) {
    int64_t offset = 0;
    for (size_t d = 0; d < ndim; ++d) offset += index[d] * in.strides[d];
    acc = f(acc, in.base[offset]);
    for (size_t d = ndim; d-- > 0;) {
      if (++index[d] < in.sizes[d]) break;
      index[d] = 0;
    }
  }
  return acc;
}

}  // namespace sdk
}  // namespace tessera

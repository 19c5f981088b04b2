// Running a function over every line of a tensor along one dimension.
#pragma once

#include <vector>

#include "tensor_iterator.hpp"

namespace tessera {
namespace cpu {

// wrap_dim: `dim` in [-ndim, ndim) (0-dim tensors count as 1-dim), made non-negative.
int64_t wrap_dim(std::string_view op, int64_t dim, int64_t ndim);

// for_each_line calls fn(out_line, out_stride, in_line, in_stride, n) for every line of `out`
// and `in` (same shape) along `dim`, lines split across threads. Strides are in bytes.
template <typename F>
void for_each_line(const sdk::Tensor& out, const sdk::Tensor& in, int64_t dim, const F& fn) {
  std::vector<int64_t> shape = out.sizes().vec();
  if (shape.empty()) shape.push_back(1);
  const int64_t n = shape[dim];
  if (n == 0) return;
  shape[dim] = 1;
  std::vector<int64_t> out_strides = out.strides().vec(), in_strides = in.strides().vec();
  if (out_strides.empty()) out_strides.push_back(1);
  if (in_strides.empty()) in_strides.push_back(1);
  const int64_t os = out_strides[dim] * static_cast<int64_t>(out.itemsize());
  const int64_t is = in_strides[dim] * static_cast<int64_t>(in.itemsize());
  TensorIterator it(shape);
  it.add_operand(out.data_ptr(), out.itemsize(), shape, out_strides);
  it.add_operand(in.data_ptr(), in.itemsize(), shape, in_strides);
  it.build();
  it.for_each(
      [&](char** data, const int64_t* strides, int64_t lines) {
        for (int64_t k = 0; k < lines; ++k) {
          fn(data[0] + k * strides[0], os, data[1] + k * strides[1], is, n);
        }
      },
      std::max<int64_t>(1, kGrain / n));
}

// softmax_onednn runs (log_)softmax through oneDNN when it supports the case (float32) and
// returns whether it did.
bool softmax_onednn(const sdk::Tensor& in, const sdk::Tensor& out, int64_t dim, bool log);

}  // namespace cpu
}  // namespace tessera

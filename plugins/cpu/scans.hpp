// Running a function over every line of a tensor along one dimension.
#pragma once

#include <algorithm>

#include "tensor_iterator.hpp"
#include "tessera/sdk/boxing.hpp"
#include "tessera/sdk/tensor_view.hpp"

namespace tessera {
namespace cpu {

// wrap_dim: `dim` made non-negative, for a tensor of `ndim` dims (0-dim tensors count as
// 1-dim). The call plan has checked its range (the op's Meta function); one outside it is the
// plan's bug, said as such (INTERNAL, naming the op).
int64_t wrap_dim(const sdk::KernelContext& ctx, int64_t dim, int64_t ndim);

// for_each_line calls fn(out_line, out_stride, in_line, in_stride, n) for every line of `out`
// and `in` (same shape) along `dim`, lines split across threads. Strides are in bytes.
// `cost`: what an element of a line costs against a copied one, for the lines each thread takes
// (kGrain / (cost * n), at least one): softmax's exp costs some 16 copies, as PyTorch reckons.
template <typename F>
void for_each_line(const sdk::TensorView& out, const sdk::TensorView& in, int64_t dim,
                   const F& fn, int64_t cost = 1) {
  DimList shape(out.sizes().data, out.sizes().data + out.sizes().size);
  DimList out_strides(out.strides().data, out.strides().data + out.strides().size);
  DimList in_strides(in.strides().data, in.strides().data + in.strides().size);
  if (shape.empty()) {  // a 0-dim tensor: one line of one element
    shape.push_back(1);
    out_strides.push_back(1);
    in_strides.push_back(1);
  }
  const int64_t n = shape[dim];
  if (n == 0) return;
  shape[dim] = 1;
  const size_t out_size = out.itemsize(), in_size = in.itemsize();
  const int64_t os = out_strides[dim] * static_cast<int64_t>(out_size);
  const int64_t is = in_strides[dim] * static_cast<int64_t>(in_size);
  TensorIterator it(shape.data(), shape.size());
  it.add_operand(out.data_ptr(), out_size, shape.data(), out_strides.data(), shape.size());
  it.add_operand(in.data_ptr(), in_size, shape.data(), in_strides.data(), shape.size());
  it.build();
  it.for_each(
      [&](char** data, const int64_t* strides, int64_t lines) {
        for (int64_t k = 0; k < lines; ++k) {
          fn(data[0] + k * strides[0], os, data[1] + k * strides[1], is, n);
        }
      },
      std::max<int64_t>(1, kGrain / (cost * n)));
}

// softmax_onednn runs (log_)softmax through oneDNN when it supports the case (float32) and
// returns whether it did.
bool softmax_onednn(const sdk::TensorView& in, const sdk::TensorView& out, int64_t dim, bool log);

}  // namespace cpu
}  // namespace tessera

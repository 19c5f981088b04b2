// TensorIterator: runs an elementwise loop over an output and its broadcast inputs, any
// strides, without copying them.
//
// build() drops size-1 dimensions, orders the rest so that the innermost has the output's
// smallest stride, and merges neighbours that step through memory as one; a contiguous tensor
// of any rank becomes one dimension. for_each() then calls the loop on rows of the innermost
// dimension,
//
//   loop(char** data, const int64_t* strides, int64_t n)   // data[k]: operand k, byte strides
//
// so a loop over contiguous rows is a plain loop the compiler vectorizes. Work is split over
// the runtime's threads (tsr parallel_for) by element ranges of at least `grain` elements, so
// small tensors stay on the calling thread; an elementwise result never depends on the split.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "small_vector.hpp"
#include "tessera/sdk/error.hpp"
#include "tessera/sdk/tensor.hpp"
#include "tessera/sdk/tensor_view.hpp"

namespace tessera {
namespace cpu {

// Elements per parallel chunk: below this a loop runs on the calling thread.
inline constexpr int64_t kGrain = 32768;

// Dimensions kept inline (more go to the heap) and the most operands one loop takes.
inline constexpr size_t kInlineDims = 8;
inline constexpr size_t kMaxOperands = 5;
using DimList = SmallVector<int64_t, kInlineDims>;

class TensorIterator {
 public:
  TensorIterator(const int64_t* shape, size_t ndim) : shape_(shape, shape + ndim) {}
  explicit TensorIterator(const std::vector<int64_t>& shape)
      : TensorIterator(shape.data(), shape.size()) {}
  explicit TensorIterator(sdk::IntSpan shape) : TensorIterator(shape.data, shape.size) {}

  // add_operand: the first operand is the output; inputs broadcast to the shape. Sizes and
  // strides (in elements) are read during the call.
  void add_operand(void* data, size_t itemsize, const int64_t* sizes, const int64_t* strides,
                   size_t ndim);
  void add_operand(void* data, size_t itemsize, const std::vector<int64_t>& sizes,
                   const std::vector<int64_t>& strides) {
    add_operand(data, itemsize, sizes.data(), strides.data(), sizes.size());
  }
  // add_view: a kernel's argument as its view (no table call).
  void add_view(const sdk::TensorView& v) {
    add_operand(v.data_ptr(), v.itemsize(), v.sizes().data, v.strides().data, v.sizes().size);
  }
  // add_scalar: one value read for every element (stride 0).
  void add_scalar(const void* data, size_t itemsize) {
    add_operand(const_cast<void*>(data), itemsize, nullptr, nullptr, 0);
  }
  void build();

  int64_t numel() const { return numel_; }
  int ndim() const { return static_cast<int>(sizes_.size()); }
  const DimList& sizes() const { return sizes_; }  // after build: outer..inner
  const DimList& strides(size_t operand) const { return strides_[operand]; }

  template <typename Loop>
  void for_each(Loop&& loop, int64_t grain = kGrain) {
    if (numel_ == 0) return;
    Range<Loop> range{this, &loop};
    run_parallel(numel_, grain, &Range<Loop>::run, &range);
  }

  // run_parallel splits [0, n) into chunks of at least `grain` on the runtime's threads and
  // rethrows the first exception a chunk threw.
  static void run_parallel(int64_t n, int64_t grain, void (*fn)(void*, int64_t, int64_t),
                           void* context);

 private:
  template <typename Loop>
  struct Range {
    TensorIterator* it;
    Loop* loop;
    static void run(void* self, int64_t begin, int64_t end) {
      auto* r = static_cast<Range*>(self);
      r->it->run_range(*r->loop, begin, end);
    }
  };

  template <typename Loop>
  void run_range(Loop& loop, int64_t begin, int64_t end) const {
    const int nd = ndim();
    const size_t nops = num_operands_;
    char* ptrs[kMaxOperands];
    int64_t inner[kMaxOperands];
    for (size_t k = 0; k < nops; ++k) inner[k] = strides_[k][nd - 1];
    if (nd == 1) {  // one (merged) dimension: the common case, no index bookkeeping
      for (size_t k = 0; k < nops; ++k) ptrs[k] = base_[k] + begin * inner[k];
      loop(ptrs, inner, end - begin);
      return;
    }
    DimList index(nd, 0);
    int64_t rest = begin;
    for (int d = nd - 1; d >= 0; --d) {
      index[d] = rest % sizes_[d];
      rest /= sizes_[d];
    }
    const int64_t row = sizes_[nd - 1];
    int64_t pos = begin;
    while (pos < end) {
      for (size_t k = 0; k < nops; ++k) {
        char* p = base_[k];
        for (int d = 0; d < nd; ++d) p += index[d] * strides_[k][d];
        ptrs[k] = p;
      }
      const int64_t n = std::min(row - index[nd - 1], end - pos);
      loop(ptrs, inner, n);
      pos += n;
      index[nd - 1] += n;
      for (int d = nd - 1; d > 0 && index[d] == sizes_[d]; --d) {
        index[d] = 0;
        ++index[d - 1];
      }
    }
  }

  DimList shape_;
  char* base_[kMaxOperands] = {};
  DimList strides_[kMaxOperands];  // per operand, per dimension, in bytes
  size_t num_operands_ = 0;
  DimList sizes_;
  int64_t numel_ = 0;
};

}  // namespace cpu
}  // namespace tessera

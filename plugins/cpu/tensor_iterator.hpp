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

#include "tessera/sdk/error.hpp"
#include "tessera/sdk/tensor.hpp"

namespace tessera {
namespace cpu {

// Elements per parallel chunk: below this a loop runs on the calling thread.
inline constexpr int64_t kGrain = 32768;

class TensorIterator {
 public:
  explicit TensorIterator(std::vector<int64_t> shape) : shape_(std::move(shape)) {}

  // add_operand: the first operand is the output; inputs broadcast to the shape.
  void add_operand(void* data, size_t itemsize, const std::vector<int64_t>& sizes,
                   const std::vector<int64_t>& strides);
  void add_tensor(const sdk::Tensor& t) {
    add_operand(t.data_ptr(), t.itemsize(), t.sizes().vec(), t.strides().vec());
  }
  // add_scalar: one value read for every element (stride 0).
  void add_scalar(const void* data, size_t itemsize) {
    add_operand(const_cast<void*>(data), itemsize, {}, {});
  }
  void build();

  int64_t numel() const { return numel_; }
  int ndim() const { return static_cast<int>(sizes_.size()); }
  const std::vector<int64_t>& sizes() const { return sizes_; }  // after build: outer..inner
  const std::vector<int64_t>& strides(size_t operand) const { return strides_[operand]; }

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
    const size_t nops = base_.size();
    std::vector<int64_t> index(nd, 0);
    int64_t rest = begin;
    for (int d = nd - 1; d >= 0; --d) {
      index[d] = rest % sizes_[d];
      rest /= sizes_[d];
    }
    std::vector<char*> ptrs(nops);
    std::vector<int64_t> inner(nops);
    for (size_t k = 0; k < nops; ++k) inner[k] = strides_[k][nd - 1];
    const int64_t row = sizes_[nd - 1];
    int64_t pos = begin;
    while (pos < end) {
      for (size_t k = 0; k < nops; ++k) {
        char* p = base_[k];
        for (int d = 0; d < nd; ++d) p += index[d] * strides_[k][d];
        ptrs[k] = p;
      }
      const int64_t n = std::min(row - index[nd - 1], end - pos);
      loop(ptrs.data(), inner.data(), n);
      pos += n;
      index[nd - 1] += n;
      for (int d = nd - 1; d > 0 && index[d] == sizes_[d]; --d) {
        index[d] = 0;
        ++index[d - 1];
      }
    }
  }

  std::vector<int64_t> shape_;
  std::vector<char*> base_;
  std::vector<std::vector<int64_t>> strides_;  // per operand, per dimension, in bytes
  std::vector<int64_t> sizes_;
  int64_t numel_ = 0;
};

}  // namespace cpu
}  // namespace tessera

#include "tensor_iterator.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "tessera/sdk/api.hpp"

namespace tessera {
namespace cpu {

void TensorIterator::add_operand(void* data, size_t itemsize, const int64_t* sizes,
                                 const int64_t* strides, size_t ndim) {
  const size_t nd = shape_.size();
  if (num_operands_ == kMaxOperands) {
    sdk::fail(TSR_INTERNAL,
              "TensorIterator: more than " + std::to_string(kMaxOperands) + " operands");
  }
  if (ndim > nd) {
    sdk::fail(TSR_INVALID_ARGUMENT,
              "TensorIterator: an operand has more dimensions than the output");
  }
  DimList& bytes = strides_[num_operands_];
  bytes.resize(nd, 0);
  const size_t lead = nd - ndim;
  // Strides of size-1 dims, and all strides of an empty loop, never step through memory, and
  // may be anything (as_strided allows it, as in PyTorch): they stay 0 rather than being
  // scaled to bytes, which could overflow. Any other stride spans memory the tensor owns.
  const bool empty = std::find(shape_.begin(), shape_.end(), 0) != shape_.end();
  for (size_t d = 0; d < ndim; ++d) {
    if (sizes[d] == shape_[lead + d]) {
      if (empty || sizes[d] == 1) continue;
      if (__builtin_mul_overflow(strides[d], static_cast<int64_t>(itemsize), &bytes[lead + d])) {
        sdk::fail(TSR_OUT_OF_RANGE, "TensorIterator: stride " + std::to_string(strides[d]) +
                                        " of an operand's dimension " + std::to_string(d) +
                                        " overflows int64 in bytes");
      }
    } else if (sizes[d] != 1) {
      sdk::fail(TSR_INVALID_ARGUMENT, "TensorIterator: an operand of size " +
                                          std::to_string(sizes[d]) + " does not broadcast to " +
                                          std::to_string(shape_[lead + d]));
    }
  }
  base_[num_operands_++] = static_cast<char*>(data);
}

void TensorIterator::build() {
  const size_t nops = num_operands_;
  // An empty shape's other sizes and strides may multiply past int64 (found by the op_meta
  // fuzzer: ones([2^63 / 3, 3, 0])): it is one dimension of 0 elements, nothing to visit. A
  // non-empty shape's products fit (its tensors exist).
  if (std::find(shape_.begin(), shape_.end(), int64_t{0}) != shape_.end()) {
    numel_ = 0;
    sizes_ = DimList(1, 0);
    for (size_t k = 0; k < nops; ++k) strides_[k] = DimList(1, 0);
    return;
  }
  numel_ = 1;
  for (int64_t s : shape_) numel_ *= s;
  // Keep the dimensions with more than one element, outermost first.
  SmallVector<size_t, kInlineDims> dims;
  for (size_t d = 0; d < shape_.size(); ++d) {
    if (shape_[d] != 1) dims.push_back(d);
  }
  // Innermost: the output's smallest stride (then the inputs'), so that writes are sequential.
  auto abs64 = [](int64_t v) { return v < 0 ? -v : v; };
  std::stable_sort(dims.begin(), dims.end(), [&](size_t a, size_t b) {
    for (size_t k = 0; k < nops; ++k) {
      const int64_t sa = abs64(strides_[k][a]), sb = abs64(strides_[k][b]);
      if (sa != sb) return sa > sb;
    }
    return false;
  });
  DimList sizes;
  DimList strides[kMaxOperands];
  for (size_t d : dims) {
    // Merge into the previous (outer) dimension when it steps exactly one row of this one (a
    // row past int64 is no step any dimension takes; the operands' byte strides are checked
    // one by one in add_operand, not their products with the sizes).
    bool merge = !sizes.empty();
    for (size_t k = 0; k < nops && merge; ++k) {
      int64_t row = 0;
      merge = !__builtin_mul_overflow(strides_[k][d], shape_[d], &row) && strides[k].back() == row;
    }
    if (merge) {
      sizes.back() *= shape_[d];
      for (size_t k = 0; k < nops; ++k) strides[k].back() = strides_[k][d];
    } else {
      sizes.push_back(shape_[d]);
      for (size_t k = 0; k < nops; ++k) strides[k].push_back(strides_[k][d]);
    }
  }
  if (sizes.empty()) {  // 0-dim, or all sizes 1
    sizes.push_back(1);
    for (size_t k = 0; k < nops; ++k) strides[k].push_back(0);
  }
  sizes_ = sizes;
  for (size_t k = 0; k < nops; ++k) strides_[k] = strides[k];
}

namespace {

struct Chunked {
  void (*fn)(void*, int64_t, int64_t);
  void* context;
};

tsr_error* RunChunk(void* context, int64_t begin, int64_t end) {
  auto* c = static_cast<Chunked*>(context);
  try {
    c->fn(c->context, begin, end);
    return nullptr;
  } catch (const sdk::Error& e) {
    return e.to_c();
  } catch (const std::exception& e) {
    return sdk::api().error_create(TSR_INTERNAL, sdk::to_c(std::string("cpu kernel: ") + e.what()));
  }
}

}  // namespace

void TensorIterator::run_parallel(int64_t n, int64_t grain, void (*fn)(void*, int64_t, int64_t),
                                  void* context) {
  if (n <= grain) {
    fn(context, 0, n);
    return;
  }
  Chunked c{fn, context};
  sdk::check(sdk::api().parallel_for(0, n, grain, &RunChunk, &c));
}

}  // namespace cpu
}  // namespace tessera

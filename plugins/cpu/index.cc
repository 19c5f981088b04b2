// Indexing, sorting and reordering ops as out= kernels: index_select, gather, scatter (src,
// value, with reduce), scatter_add, sort (and sort.stable), topk, flip, tril, triu.
//
// index_select, gather and scatter run on a TensorIterator whose indexed operand is
// "restrided": its stride along `dim` is set to 0, and the loop adds index * stride itself, so
// any strides work without copies (as PyTorch's TensorIterator-based kernels do).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <numeric>

#include "math.hpp"
#include "pointwise.hpp"
#include "scans.hpp"

namespace tessera {
namespace cpu {
namespace {

sdk::Tensor last(tsr_stack* s, size_t from_end = 1) {
  return arg<sdk::Tensor>(s, sdk::api().stack_size(s) - from_end);
}

// An unsigned type of each element size: copies move bytes, whatever the dtype.
template <typename F>
void by_itemsize(size_t itemsize, const F& f) {
  switch (itemsize) {
    case 1:
      return f(sdk::TypeTag<uint8_t>{});
    case 2:
      return f(sdk::TypeTag<uint16_t>{});
    case 4:
      return f(sdk::TypeTag<uint32_t>{});
    default:
      return f(sdk::TypeTag<uint64_t>{});
  }
}

// Reads index values of either index dtype.
int64_t read_index(const char* p, tsr_dtype dtype) {
  return dtype == TSR_DTYPE_INT32 ? *reinterpret_cast<const int32_t*>(p)
                                  : *reinterpret_cast<const int64_t*>(p);
}

// Bad indices are recorded by the loops and reported after them.
struct BadIndex {
  std::atomic<bool> hit{false};
  std::atomic<int64_t> value{0};
  void record(int64_t v) {
    if (!hit.exchange(true)) value.store(v);
  }
  void check(const char* op, int64_t dim, int64_t size) const {
    if (hit.load()) {
      sdk::fail(TSR_INVALID_ARGUMENT, std::string(op) + ": index " + std::to_string(value.load()) +
                                          " is out of bounds for dimension " + std::to_string(dim) +
                                          " with size " + std::to_string(size));
    }
  }
};

std::vector<int64_t> sizes_or_scalar(const sdk::Tensor& t) {
  std::vector<int64_t> v = t.sizes().vec();
  if (v.empty()) v.push_back(1);
  return v;
}
std::vector<int64_t> strides_or_scalar(const sdk::Tensor& t) {
  std::vector<int64_t> v = t.strides().vec();
  if (v.empty()) v.push_back(0);
  return v;
}

// Indexed along `dim`: the tensor's strides with the one of `dim` taken out (the iterator
// walks the other dims; the kernel adds index * `step` itself), and the dim's size.
struct IndexedDim {
  std::vector<int64_t> strides;  // elements; 0 at `dim`
  int64_t step;                  // bytes between consecutive indices along `dim`
  int64_t size;
};
IndexedDim indexed_dim(const sdk::Tensor& t, int64_t dim) {
  IndexedDim r{strides_or_scalar(t), 0, sizes_or_scalar(t)[dim]};
  r.step = r.strides[dim] * static_cast<int64_t>(t.itemsize());
  r.strides[dim] = 0;
  return r;
}

// index_select.out(Tensor self, int dim, Tensor index, *, Tensor(a!) out)
void index_select_out(const char* op, tsr_stack* s) {
  const sdk::Tensor self = arg<sdk::Tensor>(s, 0), index = arg<sdk::Tensor>(s, 2), out = last(s);
  const int64_t dim = wrap_dim(op, arg<int64_t>(s, 1), self.dim());
  const std::vector<int64_t> shape = sizes_or_scalar(out);
  const IndexedDim src = indexed_dim(self, dim);
  const int64_t size = src.size, self_dim_stride = src.step;
  // The index runs along `dim` only.
  std::vector<int64_t> index_strides(shape.size(), 0);
  index_strides[dim] = index.dim() == 0 ? 0 : index.strides()[0];
  const tsr_dtype index_dtype = index.dtype();
  TensorIterator it(shape);
  it.add_tensor(out);
  it.add_operand(self.data_ptr(), self.itemsize(), shape, src.strides);
  it.add_operand(index.data_ptr(), index.itemsize(), shape, index_strides);
  it.build();
  BadIndex bad;
  by_itemsize(self.itemsize(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    it.for_each([&](char** d, const int64_t* st, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        int64_t k = read_index(d[2] + i * st[2], index_dtype);
        if (k < -size || k >= size) {
          bad.record(k);
          continue;
        }
        if (k < 0) k += size;
        *reinterpret_cast<U*>(d[0] + i * st[0]) =
            *reinterpret_cast<const U*>(d[1] + i * st[1] + k * self_dim_stride);
      }
    });
  });
  bad.check(op, dim, size);
  set_result(s, out);
}

// gather.out(Tensor self, int dim, Tensor index, *, bool sparse_grad=False, Tensor(a!) out)
void gather_out(const char* op, tsr_stack* s) {
  const sdk::Tensor self = arg<sdk::Tensor>(s, 0), index = arg<sdk::Tensor>(s, 2), out = last(s);
  const int64_t dim = wrap_dim(op, arg<int64_t>(s, 1), self.dim());
  const std::vector<int64_t> shape = sizes_or_scalar(index);
  const IndexedDim src = indexed_dim(self, dim);
  const int64_t size = src.size, self_dim_stride = src.step;
  TensorIterator it(shape);
  it.add_operand(out.data_ptr(), out.itemsize(), shape, strides_or_scalar(out));
  it.add_operand(self.data_ptr(), self.itemsize(), shape, src.strides);
  it.add_operand(index.data_ptr(), index.itemsize(), shape, strides_or_scalar(index));
  it.build();
  BadIndex bad;
  by_itemsize(self.itemsize(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    it.for_each([&](char** d, const int64_t* st, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        const int64_t k = *reinterpret_cast<const int64_t*>(d[2] + i * st[2]);
        if (k < 0 || k >= size) {
          bad.record(k);
          continue;
        }
        *reinterpret_cast<U*>(d[0] + i * st[0]) =
            *reinterpret_cast<const U*>(d[1] + i * st[1] + k * self_dim_stride);
      }
    });
  });
  bad.check(op, dim, size);
  set_result(s, out);
}

// How scatter combines a written value with what is there: replace (scatter), add
// (scatter_add, reduce='add') or multiply (reduce='multiply'). kFromArgument: the
// `reduce` string that scatter.reduce_out and scatter.value_reduce_out take after the value
// (the meta function has checked it).
enum class Combine { kReplace, kAdd, kMultiply, kFromArgument };

// scatter.src_out / scatter.value_out / scatter_add.out / scatter.reduce_out /
// scatter.value_reduce_out: out = self, then along `dim` out[index] = src (or value), or
// combined with it. Runs on one thread: with repeated indices the last write (or the order of
// additions) must not depend on scheduling.
template <Combine kCombine>
void scatter_out(const char* op, tsr_stack* s) {
  const sdk::Tensor self = arg<sdk::Tensor>(s, 0), index = arg<sdk::Tensor>(s, 2), out = last(s);
  const int64_t dim = wrap_dim(op, arg<int64_t>(s, 1), self.dim());
  const bool has_src = is_tensor(s, 3);
  Combine combine = kCombine;
  if constexpr (kCombine == Combine::kFromArgument) {
    combine = arg<std::string_view>(s, 4) == "add" ? Combine::kAdd : Combine::kMultiply;
  }
  if (self.data_ptr() != out.data_ptr()) copy_cast(out, self);
  if (index.numel() == 0) {
    set_result(s, out);
    return;
  }
  const std::vector<int64_t> shape = sizes_or_scalar(index);
  const IndexedDim dst = indexed_dim(out, dim);
  const int64_t size = dst.size, out_dim_stride = dst.step;
  TensorIterator it(shape);
  it.add_operand(out.data_ptr(), out.itemsize(), shape, dst.strides);
  it.add_operand(index.data_ptr(), index.itemsize(), shape, strides_or_scalar(index));
  alignas(8) unsigned char value[8] = {};
  if (has_src) {
    const sdk::Tensor src = arg<sdk::Tensor>(s, 3);
    it.add_operand(src.data_ptr(), src.itemsize(), shape, strides_or_scalar(src));
  } else {
    scalar_to(arg<sdk::Scalar>(s, 3), out.dtype(), value);
    it.add_scalar(value, out.itemsize());
  }
  it.build();
  BadIndex bad;
  dispatch<kAll>(out.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    it.for_each(
        [&](char** d, const int64_t* st, int64_t n) {
          for (int64_t i = 0; i < n; ++i) {
            const int64_t k = *reinterpret_cast<const int64_t*>(d[1] + i * st[1]);
            if (k < 0 || k >= size) {
              bad.record(k);
              continue;
            }
            T& dst = *reinterpret_cast<T*>(d[0] + i * st[0] + k * out_dim_stride);
            const T v = *reinterpret_cast<const T*>(d[2] + i * st[2]);
            switch (combine) {
              case Combine::kAdd:
                dst = store<T>(wrap_add(load(dst), load(v)));
                break;
              case Combine::kMultiply:
                dst = store<T>(wrap_mul(load(dst), load(v)));
                break;
              default:
                dst = v;
            }
          }
        },
        /*grain=*/INT64_MAX);
  });
  bad.check(op, dim, size);
  set_result(s, out);
}

// Lines along `dim` of several same-shaped tensors: fn(ptrs, byte strides along dim, n).
template <typename F>
void for_each_lines(const std::vector<sdk::Tensor>& ts, const std::vector<int64_t>& line_shape,
                    int64_t dim, int64_t n, const F& fn) {
  std::vector<int64_t> shape = line_shape;
  if (shape.empty()) shape.push_back(1);
  shape[dim] = 1;
  std::vector<int64_t> along;
  TensorIterator it(shape);
  for (const sdk::Tensor& t : ts) {
    std::vector<int64_t> st = strides_or_scalar(t);
    along.push_back(st[dim] * static_cast<int64_t>(t.itemsize()));
    std::vector<int64_t> sz = sizes_or_scalar(t);
    sz[dim] = 1;
    it.add_operand(t.data_ptr(), t.itemsize(), sz, st);
  }
  it.build();
  it.for_each(
      [&](char** d, const int64_t* st, int64_t lines) {
        std::vector<char*> p(ts.size());
        for (int64_t l = 0; l < lines; ++l) {
          for (size_t k = 0; k < ts.size(); ++k) p[k] = d[k] + l * st[k];
          fn(p.data(), along.data(), n);
        }
      },
      std::max<int64_t>(1, kGrain / std::max<int64_t>(1, n)));
}

// Sort order with NaN greater than every number (ascending: NaNs last), ties by index.
template <typename C>
bool less_nan(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

// sort.values(Tensor self, int dim=-1, bool descending=False, *, Tensor(a!) values,
// Tensor(b!) indices); sort.values_stable(Tensor self, *, bool? stable, int dim=-1,
// bool descending=False, Tensor(a!) values, Tensor(b!) indices); topk.values(Tensor self,
// SymInt k, int dim=-1, bool largest=True, bool sorted=True, *, Tensor(a!) values, Tensor(b!)
// indices). kDimAt: where `dim` is; descending (largest) follows it. Always stable: equal
// values keep their order, which is what stable=True asks and what stable=False allows.
template <bool kTopk, int kDimAt>
void sort_out(const char* op, tsr_stack* s) {
  const sdk::Tensor self = arg<sdk::Tensor>(s, 0);
  const sdk::Tensor values = last(s, 2), indices = last(s, 1);
  const int64_t dim = wrap_dim(op, arg<int64_t>(s, kDimAt), self.dim());
  const bool descending = arg<bool>(s, kDimAt + 1);
  const int64_t n = sizes_or_scalar(self)[dim];
  const int64_t k = kTopk ? arg<int64_t>(s, 1) : n;
  if (values.numel() == 0) {
    set_results(s, values, indices);
    return;
  }
  // sort takes every dtype; topk refuses bool, as PyTorch's CPU kernels do.
  constexpr sdk::DtypeSet kSet = kTopk ? kNumeric : kAll;
  dispatch<kSet>(self.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    for_each_lines({self, values, indices}, self.sizes().vec(), dim, n,
                   [&](char** p, const int64_t* st, int64_t len) {
                     std::vector<std::pair<C, int64_t>> line(static_cast<size_t>(len));
                     for (int64_t i = 0; i < len; ++i) {
                       line[i] = {load(*reinterpret_cast<const T*>(p[0] + i * st[0])), i};
                     }
                     auto cmp = [descending](const auto& a, const auto& b) {
                       return descending ? less_nan(b.first, a.first) : less_nan(a.first, b.first);
                     };
                     if (kTopk && k < len) {
                       std::partial_sort(line.begin(), line.begin() + k, line.end(),
                                         [&](const auto& a, const auto& b) {
                                           return cmp(a, b) || (!cmp(b, a) && a.second < b.second);
                                         });
                     } else {
                       std::stable_sort(line.begin(), line.end(), cmp);
                     }
                     for (int64_t i = 0; i < k; ++i) {
                       *reinterpret_cast<T*>(p[1] + i * st[1]) = store<T>(line[i].first);
                       *reinterpret_cast<int64_t*>(p[2] + i * st[2]) = line[i].second;
                     }
                   });
  });
  set_results(s, values, indices);
}

// topk's "largest" is sort's "descending".
void topk_out(const char* op, tsr_stack* s) { sort_out<true, 2>(op, s); }
void sort_values_out(const char* op, tsr_stack* s) { sort_out<false, 1>(op, s); }
void sort_values_stable_out(const char* op, tsr_stack* s) { sort_out<false, 2>(op, s); }

// flip.out(Tensor self, int[] dims, *, Tensor(a!) out): the input read backwards (negative
// strides from its last element) along the flipped dims.
void flip_out(const char* op, tsr_stack* s) {
  const sdk::Tensor self = arg<sdk::Tensor>(s, 0), out = last(s);
  std::vector<int64_t> strides = self.strides().vec();
  char* base = static_cast<char*>(self.data_ptr());
  if (self.numel() > 0) {
    // A 0-dim tensor takes dims 0 and -1 as PyTorch does (wrap_dim treats it as 1-dim), and
    // its flip is itself: one slot keeps that mark in bounds, and no stride reads it.
    std::vector<bool> flipped(std::max<size_t>(strides.size(), 1), false);
    for (int64_t d : arg<sdk::IntSpan>(s, 1)) flipped[wrap_dim(op, d, self.dim())] = true;
    for (size_t d = 0; d < strides.size(); ++d) {
      if (!flipped[d] || self.sizes()[d] <= 1) continue;
      base += (self.sizes()[d] - 1) * strides[d] * static_cast<int64_t>(self.itemsize());
      strides[d] = -strides[d];
    }
  }
  TensorIterator it(out.sizes().vec());
  it.add_tensor(out);
  it.add_operand(base, self.itemsize(), self.sizes().vec(), strides);
  it.build();
  by_itemsize(self.itemsize(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    it.for_each([](char** d, const int64_t* st, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        *reinterpret_cast<U*>(d[0] + i * st[0]) = *reinterpret_cast<const U*>(d[1] + i * st[1]);
      }
    });
  });
  set_result(s, out);
}

// tril.out / triu.out(Tensor self, SymInt diagonal=0, *, Tensor(a!) out): keep element (i, j)
// of each matrix when j - i <= diagonal (tril) or >= diagonal (triu); zero the rest.
template <bool kUpper>
void tri_out(const char* op, tsr_stack* s) {
  const sdk::Tensor self = arg<sdk::Tensor>(s, 0), out = last(s);
  const int64_t diagonal = arg<int64_t>(s, 1);
  const int64_t nd = self.dim();
  const int64_t rows = self.sizes()[nd - 2], cols = self.sizes()[nd - 1];
  const int64_t batch = rows * cols == 0 ? 0 : self.numel() / (rows * cols);
  (void)op;
  // Batches as a flattened outer index: walk them with row-major multi-indices.
  std::vector<int64_t> outer(self.sizes().begin(), self.sizes().end() - 2);
  by_itemsize(self.itemsize(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    const int64_t item = static_cast<int64_t>(self.itemsize());
    for (int64_t b = 0; b < batch; ++b) {
      int64_t rest = b, in_off = 0, out_off = 0;
      for (int64_t d = static_cast<int64_t>(outer.size()) - 1; d >= 0; --d) {
        const int64_t i = rest % outer[d];
        rest /= outer[d];
        in_off += i * self.strides()[d];
        out_off += i * out.strides()[d];
      }
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < cols; ++j) {
          const bool keep = kUpper ? j - i >= diagonal : j - i <= diagonal;
          const char* src =
              static_cast<const char*>(self.data_ptr()) +
              (in_off + i * self.strides()[nd - 2] + j * self.strides()[nd - 1]) * item;
          char* dst = static_cast<char*>(out.data_ptr()) +
                      (out_off + i * out.strides()[nd - 2] + j * out.strides()[nd - 1]) * item;
          *reinterpret_cast<U*>(dst) = keep ? *reinterpret_cast<const U*>(src) : U(0);
        }
      }
    }
  });
  set_result(s, out);
}

}  // namespace

void register_index(sdk::Library& lib) {
  impl<&index_select_out>(lib, "index_select.out");
  impl<&gather_out>(lib, "gather.out");
  impl<&scatter_out<Combine::kReplace>>(lib, "scatter.src_out");
  impl<&scatter_out<Combine::kReplace>>(lib, "scatter.value_out");
  impl<&scatter_out<Combine::kAdd>>(lib, "scatter_add.out");
  impl<&scatter_out<Combine::kFromArgument>>(lib, "scatter.reduce_out");
  impl<&scatter_out<Combine::kFromArgument>>(lib, "scatter.value_reduce_out");
  impl<&sort_values_out>(lib, "sort.values");
  impl<&sort_values_stable_out>(lib, "sort.values_stable");
  impl<&topk_out>(lib, "topk.values");
  impl<&flip_out>(lib, "flip.out");
  impl<&tri_out<false>>(lib, "tril.out");
  impl<&tri_out<true>>(lib, "triu.out");
}

}  // namespace cpu
}  // namespace tessera

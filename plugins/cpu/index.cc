// Indexing, sorting and reordering ops as out= kernels over their arguments' views: index_select,
// gather, scatter (src, value, with reduce), scatter_add, sort (and sort.stable), topk, flip, tril,
// triu.
//
// index_select, gather and scatter run on a TensorIterator whose indexed operand is
// "restrided": its stride along `dim` is set to 0, and the loop adds index * stride itself, so
// any strides work without copies (as PyTorch's TensorIterator-based kernels do).
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <numeric>

#include "math.hpp"
#include "pointwise.hpp"
#include "scans.hpp"

namespace tessera {
namespace cpu {
namespace {

using sdk::KernelContext;
using sdk::Scalar;
using sdk::TensorView;

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
  void check(const KernelContext& ctx, int64_t dim, int64_t size) const {
    if (hit.load()) {
      ctx.fail(TSR_INVALID_ARGUMENT, "index " + std::to_string(value.load()) +
                                         " is out of bounds for dimension " + std::to_string(dim) +
                                         " with size " + std::to_string(size));
    }
  }
};

std::vector<int64_t> sizes_or_scalar(const TensorView& t) {
  std::vector<int64_t> v = t.sizes().vec();
  if (v.empty()) v.push_back(1);
  return v;
}
std::vector<int64_t> strides_or_scalar(const TensorView& t) {
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
IndexedDim indexed_dim(const TensorView& t, int64_t dim) {
  IndexedDim r{strides_or_scalar(t), 0, sizes_or_scalar(t)[dim]};
  r.step = r.strides[dim] * static_cast<int64_t>(t.itemsize());
  r.strides[dim] = 0;
  return r;
}

// index_select.out(Tensor self, int dim, Tensor index, *, Tensor(a!) out)
TensorView index_select_out(const KernelContext& ctx, const TensorView& self, int64_t dim_arg,
                            const TensorView& index, const TensorView& out) {
  const int64_t dim = wrap_dim(ctx, dim_arg, self.dim());
  const std::vector<int64_t> shape = sizes_or_scalar(out);
  const IndexedDim src = indexed_dim(self, dim);
  const int64_t size = src.size, self_dim_stride = src.step;
  // The index runs along `dim` only.
  std::vector<int64_t> index_strides(shape.size(), 0);
  index_strides[dim] = index.dim() == 0 ? 0 : index.strides()[0];
  const tsr_dtype index_dtype = index.dtype();
  TensorIterator it(shape);
  it.add_view(out);
  it.add_operand(self.data_ptr(), self.itemsize(), shape, src.strides);
  it.add_operand(index.data_ptr(), index.itemsize(), shape, index_strides);
  it.build();
  BadIndex bad;
  by_itemsize(self.itemsize(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    it.for_each([&](char** d, const int64_t* st, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        int64_t k = read_index(d[2] + i * st[2], index_dtype);
        if (k < 0 || k >= size) {  // negative too: PyTorch's index_select does not wrap
          bad.record(k);
          continue;
        }
        *reinterpret_cast<U*>(d[0] + i * st[0]) =
            *reinterpret_cast<const U*>(d[1] + i * st[1] + k * self_dim_stride);
      }
    });
  });
  bad.check(ctx, dim, size);
  return out;
}

// gather.out(Tensor self, int dim, Tensor index, *, bool sparse_grad=False, Tensor(a!) out)
TensorView gather_out(const KernelContext& ctx, const TensorView& self, int64_t dim_arg,
                      const TensorView& index, bool /*sparse_grad*/, const TensorView& out) {
  const int64_t dim = wrap_dim(ctx, dim_arg, self.dim());
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
  bad.check(ctx, dim, size);
  return out;
}

// How scatter combines a written value with what is there: replace (scatter), add
// (scatter_add, reduce='add') or multiply (reduce='multiply').
enum class Combine { kReplace, kAdd, kMultiply };

// scatter.src_out / scatter.value_out / scatter_add.out / scatter.reduce_out /
// scatter.value_reduce_out: out = self, then along `dim` out[index] = src (or value), or
// combined with it. Runs on one thread: with repeated indices the last write (or the order of
// additions) must not depend on scheduling.
// Src: the Tensor src or the Scalar value.
template <typename Src>
TensorView scatter(const KernelContext& ctx, const TensorView& self, int64_t dim_arg,
                   const TensorView& index, const Src& src_arg, Combine combine,
                   const TensorView& out) {
  const int64_t dim = wrap_dim(ctx, dim_arg, self.dim());
  if (self.data_ptr() != out.data_ptr()) copy_cast(out, self);
  if (index.numel() == 0) return out;
  const std::vector<int64_t> shape = sizes_or_scalar(index);
  const IndexedDim dst = indexed_dim(out, dim);
  const int64_t size = dst.size, out_dim_stride = dst.step;
  TensorIterator it(shape);
  it.add_operand(out.data_ptr(), out.itemsize(), shape, dst.strides);
  it.add_operand(index.data_ptr(), index.itemsize(), shape, strides_or_scalar(index));
  alignas(8) unsigned char value[8] = {};
  if constexpr (std::is_same_v<Src, TensorView>) {
    it.add_operand(src_arg.data_ptr(), src_arg.itemsize(), shape, strides_or_scalar(src_arg));
  } else {
    scalar_to(src_arg, out.dtype(), value);
    it.add_scalar(value, out.itemsize());
  }
  it.build();
  BadIndex bad;
  dispatch<kAll>(out.dtype(), ctx, [&](auto tag) {
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
  bad.check(ctx, dim, size);
  return out;
}

// scatter.src_out(Tensor self, int dim, Tensor index, Tensor src, *, Tensor(a!) out),
// scatter.value_out (Scalar value), scatter_add.out (Tensor src).
template <Combine kCombine, typename Src>
TensorView scatter_out(const KernelContext& ctx, const TensorView& self, int64_t dim,
                       const TensorView& index, const Src& src, const TensorView& out) {
  return scatter(ctx, self, dim, index, src, kCombine, out);
}
// scatter.reduce_out(Tensor self, int dim, Tensor index, Tensor src, *, str reduce, Tensor(a!)
// out), scatter.value_reduce_out (Scalar value): `reduce` is "add" or "multiply" (the meta
// function has checked it).
template <typename Src>
TensorView scatter_reduce_out(const KernelContext& ctx, const TensorView& self, int64_t dim,
                              const TensorView& index, const Src& src, std::string_view reduce,
                              const TensorView& out) {
  return scatter(ctx, self, dim, index, src, reduce == "add" ? Combine::kAdd : Combine::kMultiply,
                 out);
}

// Lines along `dim` of several same-shaped tensors: fn(ptrs, byte strides along dim, n).
template <size_t N, typename F>
void for_each_lines(const std::array<const TensorView*, N>& ts, sdk::IntSpan line_shape,
                    int64_t dim, int64_t n, const F& fn) {
  std::vector<int64_t> shape = line_shape.vec();
  if (shape.empty()) shape.push_back(1);
  shape[dim] = 1;
  std::array<int64_t, N> along;
  TensorIterator it(shape);
  for (size_t k = 0; k < N; ++k) {
    const TensorView& t = *ts[k];
    std::vector<int64_t> st = strides_or_scalar(t);
    along[k] = st[dim] * static_cast<int64_t>(t.itemsize());
    std::vector<int64_t> sz = sizes_or_scalar(t);
    sz[dim] = 1;
    it.add_operand(t.data_ptr(), t.itemsize(), sz, st);
  }
  it.build();
  it.for_each(
      [&](char** d, const int64_t* st, int64_t lines) {
        std::array<char*, N> p;
        for (int64_t l = 0; l < lines; ++l) {
          for (size_t k = 0; k < N; ++k) p[k] = d[k] + l * st[k];
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
// indices). Always stable: equal values keep their order, which is what stable=True asks and
// what stable=False allows. k: topk's, or -1 (sort: all).
template <bool kTopk>
std::tuple<TensorView, TensorView> sort_lines(const KernelContext& ctx, const TensorView& self,
                                              int64_t k_arg, int64_t dim_arg, bool descending,
                                              const TensorView& values, const TensorView& indices) {
  const int64_t dim = wrap_dim(ctx, dim_arg, self.dim());
  const int64_t n = sizes_or_scalar(self)[dim];
  const int64_t k = kTopk ? k_arg : n;
  if (values.numel() == 0) return {values, indices};
  // sort takes every dtype; topk refuses bool, as PyTorch's CPU kernels do.
  constexpr sdk::DtypeSet kSet = kTopk ? kNumeric : kAll;
  dispatch<kSet>(self.dtype(), ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    for_each_lines(std::array<const TensorView*, 3>{&self, &values, &indices}, self.sizes(), dim, n,
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
  return {values, indices};
}

// topk's "largest" is sort's "descending"; the values come out sorted whatever `sorted` says.
std::tuple<TensorView, TensorView> topk_out(const KernelContext& ctx, const TensorView& self,
                                            int64_t k, int64_t dim, bool largest, bool /*sorted*/,
                                            const TensorView& values, const TensorView& indices) {
  return sort_lines<true>(ctx, self, k, dim, largest, values, indices);
}
std::tuple<TensorView, TensorView> sort_values_out(const KernelContext& ctx, const TensorView& self,
                                                   int64_t dim, bool descending,
                                                   const TensorView& values,
                                                   const TensorView& indices) {
  return sort_lines<false>(ctx, self, -1, dim, descending, values, indices);
}
std::tuple<TensorView, TensorView> sort_values_stable_out(
    const KernelContext& ctx, const TensorView& self, std::optional<bool> /*stable*/, int64_t dim,
    bool descending, const TensorView& values, const TensorView& indices) {
  return sort_lines<false>(ctx, self, -1, dim, descending, values, indices);
}

// flip.out(Tensor self, int[] dims, *, Tensor(a!) out): the input read backwards (negative
// strides from its last element) along the flipped dims.
TensorView flip_out(const KernelContext& ctx, const TensorView& self, sdk::IntSpan dims,
                    const TensorView& out) {
  std::vector<int64_t> strides = self.strides().vec();
  char* base = static_cast<char*>(self.data_ptr());
  if (self.numel() > 0) {
    // A 0-dim tensor takes dims 0 and -1 as PyTorch does (wrap_dim treats it as 1-dim), and
    // its flip is itself: one slot keeps that mark in bounds, and no stride reads it.
    std::vector<bool> flipped(std::max<size_t>(strides.size(), 1), false);
    for (int64_t d : dims) flipped[wrap_dim(ctx, d, self.dim())] = true;
    for (size_t d = 0; d < strides.size(); ++d) {
      if (!flipped[d] || self.sizes()[d] <= 1) continue;
      base += (self.sizes()[d] - 1) * strides[d] * static_cast<int64_t>(self.itemsize());
      strides[d] = -strides[d];
    }
  }
  TensorIterator it(out.sizes());
  it.add_view(out);
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
  return out;
}

// tril.out / triu.out(Tensor self, SymInt diagonal=0, *, Tensor(a!) out): keep element (i, j)
// of each matrix when j - i <= diagonal (tril) or >= diagonal (triu); zero the rest.
template <bool kUpper>
TensorView tri_out(const TensorView& self, int64_t diagonal, const TensorView& out) {
  const int64_t nd = self.dim();
  const int64_t rows = self.sizes()[nd - 2], cols = self.sizes()[nd - 1];
  const int64_t batch = rows * cols == 0 ? 0 : self.numel() / (rows * cols);
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
  return out;
}

}  // namespace

void register_index(sdk::Library& lib) {
  lib.impl<&index_select_out>(TESSERA_OP("index_select.out"));
  lib.impl<&gather_out>(TESSERA_OP("gather.out"));
  lib.impl<&scatter_out<Combine::kReplace, TensorView>>(TESSERA_OP("scatter.src_out"));
  lib.impl<&scatter_out<Combine::kReplace, Scalar>>(TESSERA_OP("scatter.value_out"));
  lib.impl<&scatter_out<Combine::kAdd, TensorView>>(TESSERA_OP("scatter_add.out"));
  lib.impl<&scatter_reduce_out<TensorView>>(TESSERA_OP("scatter.reduce_out"));
  lib.impl<&scatter_reduce_out<Scalar>>(TESSERA_OP("scatter.value_reduce_out"));
  lib.impl<&sort_values_out>(TESSERA_OP("sort.values"));
  lib.impl<&sort_values_stable_out>(TESSERA_OP("sort.values_stable"));
  lib.impl<&topk_out>(TESSERA_OP("topk.values"));
  lib.impl<&flip_out>(TESSERA_OP("flip.out"));
  lib.impl<&tri_out<false>>(TESSERA_OP("tril.out"));
  lib.impl<&tri_out<true>>(TESSERA_OP("triu.out"));
}

}  // namespace cpu
}  // namespace tessera

// The frame of every pointwise out= kernel: operands (tensors or Scalars) converted to the
// dtype the op computes in, the output written directly when its dtype is the result's and
// through a staged result otherwise, and the typed loop over a TensorIterator.
#pragma once

#include <array>
#include <tuple>
#include <utility>
#include <vector>

#include "kernel_support.hpp"
#include "tensor_iterator.hpp"
#include "tessera/sdk/promotion.hpp"
#include "tessera/sdk/tensor_view.hpp"

namespace tessera {
namespace cpu {

// copy_cast: dst = src converted to dst's dtype, src broadcast to dst's shape (copy.cc).
void copy_cast(const sdk::Tensor& dst, const sdk::Tensor& src);
// to_dtype: `t` itself when it has `dtype`, else a converted copy.
sdk::Tensor to_dtype(const sdk::Tensor& t, tsr_dtype dtype);
// scalar_to writes `s` converted to `dtype` at `dst` (at least 8 bytes).
void scalar_to(const sdk::Scalar& s, tsr_dtype dtype, void* dst);

// Operand: a tensor argument or a Scalar argument (operand() makes one of either).
struct Operand {
  sdk::Tensor tensor;
  sdk::Scalar scalar;
  bool is_scalar = false;
};
inline Operand operand(const sdk::Tensor& t) { return Operand{t, {}, false}; }
inline Operand operand(const sdk::TensorView& v) { return Operand{v.tensor(), {}, false}; }
inline Operand operand(const sdk::Scalar& s) { return Operand{{}, s, true}; }
inline sdk::ResultType& operator<<(sdk::ResultType& r, const Operand& o) {
  return o.is_scalar ? r.add(o.scalar) : r.add(o.tensor);
}

// compute_dtype: the dtype the call computes in, as the dispatcher planned it (Note [Call
// plans]); from `promote()` (the operands' promotion, as PyTorch's) where the call has no plan
// (a 1.0 runtime).
template <typename Promote>
tsr_dtype compute_dtype(const sdk::KernelContext& ctx, const Promote& promote) {
  tsr_dtype planned;
  return ctx.compute_dtype(&planned) ? planned : promote();
}

class PointwiseFrame {
 public:
  // The loop writes `result` dtype values into `out` (staged if out has another dtype).
  PointwiseFrame(const sdk::Tensor& out, tsr_dtype result) : out_(out), iter_(out.sizes()) {
    if (out.dtype() == result) {
      iter_.add_tensor(out);
    } else {
      staged_ = sdk::Tensor::empty(out.sizes().vec(), result);
      iter_.add_tensor(staged_);
    }
  }
  // input adds an operand read as `dtype`.
  void input(const Operand& o, tsr_dtype dtype) {
    if (o.is_scalar) {
      auto& slot = scalars_.at(num_scalars_++);
      scalar_to(o.scalar, dtype, slot.data());
      iter_.add_scalar(slot.data(), sdk::api().dtype_size(dtype));
    } else {
      if (o.tensor.dtype() == dtype) {
        iter_.add_tensor(o.tensor);  // the caller's handle keeps it alive
      } else {
        sdk::Tensor& kept = keep_.at(num_kept_++);
        kept = to_dtype(o.tensor, dtype);
        iter_.add_tensor(kept);
      }
    }
  }
  TensorIterator& build() {
    iter_.build();
    return iter_;
  }
  void finish() {
    if (staged_.defined()) copy_cast(out_, staged_);
  }

 private:
  sdk::Tensor out_, staged_;
  std::array<sdk::Tensor, 4> keep_;  // converted inputs
  int num_kept_ = 0;
  std::array<std::array<unsigned char, 8>, 4> scalars_{};
  int num_scalars_ = 0;
  TensorIterator iter_;
};

namespace internal {

template <typename Out, typename... In, typename F, size_t... K>
inline void apply_loop(const F& f, char** data, const int64_t* s, int64_t n,
                       std::index_sequence<K...>) {
  if (s[0] == sizeof(Out) && ((s[K + 1] == sizeof(In)) && ...)) {
    // Dense rows: typed pointers and a plain loop that the compiler vectorizes.
    Out* out = reinterpret_cast<Out*>(data[0]);
    const std::tuple<const In*...> in{reinterpret_cast<const In*>(data[K + 1])...};
    for (int64_t i = 0; i < n; ++i) out[i] = store<Out>(f(load(std::get<K>(in)[i])...));
  } else {
    for (int64_t i = 0; i < n; ++i) {
      *reinterpret_cast<Out*>(data[0] + i * s[0]) =
          store<Out>(f(load(*reinterpret_cast<const In*>(data[K + 1] + i * s[K + 1]))...));
    }
  }
}

}  // namespace internal

// dense_alike: `out` has dtype `result`, the inputs dtype `compute`, and all three are dense
// with the same shape, so one flat loop covers them (the fast path of small and large calls).
inline bool dense_alike(const sdk::TensorView& out, tsr_dtype result, const sdk::TensorView& a,
                        const sdk::TensorView& b, tsr_dtype compute) {
  if (!a.defined() || !b.defined()) return false;
  if (out.dtype() != result || a.dtype() != compute || b.dtype() != compute) return false;
  if (!out.is_contiguous() || !a.is_contiguous() || !b.is_contiguous()) return false;
  return out.same_shape(a) && out.same_shape(b);
}

// dense_loop runs out = f(in...) over dense buffers of `n` elements, split like for_each.
template <typename Out, typename... In, typename F>
void dense_loop(const F& f, int64_t n, void* out, std::array<void*, sizeof...(In)> in) {
  if (n == 0) return;
  struct Ctx {
    const F* f;
    char* data[1 + sizeof...(In)];
  } ctx{&f, {}};
  ctx.data[0] = static_cast<char*>(out);
  for (size_t k = 0; k < sizeof...(In); ++k) ctx.data[k + 1] = static_cast<char*>(in[k]);
  TensorIterator::run_parallel(
      n, kGrain,
      [](void* c, int64_t begin, int64_t end) {
        auto* x = static_cast<Ctx*>(c);
        constexpr int64_t sizes[] = {sizeof(Out), sizeof(In)...};
        char* data[1 + sizeof...(In)];
        for (size_t k = 0; k < 1 + sizeof...(In); ++k) data[k] = x->data[k] + begin * sizes[k];
        internal::apply_loop<Out, In...>(*x->f, data, sizes, end - begin,
                                         std::index_sequence_for<In...>{});
      },
      &ctx);
}

// pointwise runs out = f(in...) over the iterator; f takes and returns compute types.
template <typename Out, typename... In, typename F>
void pointwise(TensorIterator& it, const F& f) {
  it.for_each([&f](char** data, const int64_t* strides, int64_t n) {
    internal::apply_loop<Out, In...>(f, data, strides, n, std::index_sequence_for<In...>{});
  });
}

}  // namespace cpu
}  // namespace tessera

// The frame of every pointwise out= kernel (PointwiseFrame): its operands (the arguments'
// views, or Scalars) read in the dtype the op computes in, the output written directly when
// its dtype is the result's and through a staged result otherwise, and the typed loop, flat
// over dense operands or over a TensorIterator.
#pragma once

#include <array>
#include <optional>
#include <string>
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
void copy_cast(const sdk::TensorView& dst, const sdk::TensorView& src);
// scalar_to writes `s` converted to `dtype` at `dst` (at least 8 bytes).
void scalar_to(const sdk::Scalar& s, tsr_dtype dtype, void* dst);

// Temporary: a new contiguous tensor and its view, for an operand converted to another dtype
// or a result staged in one (the table calls of a pointwise kernel happen here, and only here).
struct Temporary {
  Temporary(sdk::IntSpan sizes, tsr_dtype dtype)
      : tensor(sdk::Tensor::empty(sizes.vec(), dtype)), view(sdk::view_of(tensor)) {}
  sdk::Tensor tensor;
  sdk::TensorView view;
};

// AsDtype: a kernel's argument read as `dtype`: its own view, or a converted Temporary's.
class AsDtype {
 public:
  AsDtype(const sdk::TensorView& v, tsr_dtype dtype) : view_(&v) {
    if (v.dtype() != dtype) {
      copy_cast(converted_.emplace(v.sizes(), dtype).view, v);
      view_ = &converted_->view;
    }
  }
  AsDtype(const sdk::TensorView&&, tsr_dtype) = delete;  // it keeps the view's address
  AsDtype(const AsDtype&) = delete;
  AsDtype& operator=(const AsDtype&) = delete;
  const sdk::TensorView& view() const { return *view_; }

 private:
  std::optional<Temporary> converted_;
  const sdk::TensorView* view_;
};

// compute_dtype: the dtype the call computes in, as the dispatcher planned it (Note [Call
// plans]); from `promote()` (the operands' promotion, as PyTorch's) where the call has no plan
// (a 1.0 runtime).
template <typename Promote>
tsr_dtype compute_dtype(const sdk::KernelContext& ctx, const Promote& promote) {
  tsr_dtype planned;
  return ctx.compute_dtype(&planned) ? planned : promote();
}

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

// PointwiseFrame: the frame of every pointwise out= kernel, over its arguments' views.
//
//   PointwiseFrame frame(out, result);     // the loop writes `result` values into out
//   frame.input(self, compute);            // each operand, read as `compute`
//   frame.run<R, T>(f);                    // out = f(self)
//
// The frame keeps the addresses of the views and Scalars it is given (the kernel's arguments:
// they outlive it). When every operand is a dense tensor of the output's shape and of the dtype
// it is read as (the common case, small or large), run() is one flat loop: nothing allocated,
// no table call. Otherwise (broadcast, strides, Scalars, another dtype) a TensorIterator walks
// the operands, an operand of another dtype is converted into a Temporary first and a result
// of another dtype than the output's is staged in one and copied back.
class PointwiseFrame {
 public:
  PointwiseFrame(const sdk::TensorView& out, tsr_dtype result) : out_(out), result_(result) {}
  // input adds a tensor operand read as `dtype`.
  void input(const sdk::TensorView& v, tsr_dtype dtype) { add(Input{&v, nullptr, dtype}); }
  // input of a Scalar: one value, converted to `dtype`, read for every element.
  void input(const sdk::Scalar& s, tsr_dtype dtype) { add(Input{nullptr, &s, dtype}); }
  // Not temporaries: the frame keeps their addresses.
  PointwiseFrame(const sdk::TensorView&&, tsr_dtype) = delete;
  void input(const sdk::TensorView&&, tsr_dtype) = delete;
  void input(const sdk::Scalar&&, tsr_dtype) = delete;

  // run: out = f(in...) (Out, In: the operands' element types; f takes and returns compute
  // types).
  template <typename Out, typename... In, typename F>
  void run(const F& f) {
    static_assert(sizeof...(In) <= kMaxInputs, "PointwiseFrame: too many inputs");
    if (num_inputs_ != sizeof...(In)) {
      sdk::fail(TSR_INTERNAL, "PointwiseFrame: the loop takes " + std::to_string(sizeof...(In)) +
                                  " inputs, the frame has " + std::to_string(num_inputs_));
    }
    if (dense()) {
      std::array<void*, sizeof...(In)> in;
      for (size_t k = 0; k < sizeof...(In); ++k) in[k] = inputs_[k].view->data_ptr();
      dense_loop<Out, In...>(f, out_.numel(), out_.data_ptr(), in);
    } else {
      run_iterated<Out, In...>(f);
    }
  }

 private:
  static constexpr size_t kMaxInputs = kMaxOperands - 1;
  struct Input {
    const sdk::TensorView* view;  // a tensor operand, or
    const sdk::Scalar* scalar;    // a Scalar one
    tsr_dtype dtype;              // read as
  };
  void add(const Input& in) {
    if (num_inputs_ == kMaxInputs) sdk::fail(TSR_INTERNAL, "PointwiseFrame: too many inputs");
    inputs_[num_inputs_++] = in;
  }
  // Always inlined: GCC left it out of line in binary.cc, +43 instructions per 1-element add.
  [[gnu::always_inline]] bool dense() const {
    if (out_.dtype() != result_ || !out_.is_contiguous()) return false;
    for (size_t k = 0; k < num_inputs_; ++k) {
      const sdk::TensorView* v = inputs_[k].view;
      if (v == nullptr || v->dtype() != inputs_[k].dtype || !v->is_contiguous() ||
          !v->same_shape(out_)) {
        return false;
      }
    }
    return true;
  }
  template <typename Out, typename... In, typename F>
  void run_iterated(const F& f);

  const sdk::TensorView& out_;
  tsr_dtype result_;
  std::array<Input, kMaxInputs> inputs_;
  size_t num_inputs_ = 0;
};

template <typename Out, typename... In, typename F>
void PointwiseFrame::run_iterated(const F& f) {
  std::optional<Temporary> staged;
  std::array<std::optional<Temporary>, kMaxInputs> converted;
  std::array<std::array<unsigned char, 8>, kMaxInputs> scalars;
  TensorIterator it(out_.sizes());
  if (out_.dtype() == result_) {
    it.add_view(out_);
  } else {
    it.add_view(staged.emplace(out_.sizes(), result_).view);
  }
  for (size_t k = 0; k < num_inputs_; ++k) {
    const Input& in = inputs_[k];
    if (in.scalar != nullptr) {
      scalar_to(*in.scalar, in.dtype, scalars[k].data());
      it.add_scalar(scalars[k].data(), sdk::element_size(in.dtype));
    } else if (in.view->dtype() == in.dtype) {
      it.add_view(*in.view);
    } else {
      const Temporary& t = converted[k].emplace(in.view->sizes(), in.dtype);
      copy_cast(t.view, *in.view);
      it.add_view(t.view);
    }
  }
  it.build();
  pointwise<Out, In...>(it, f);
  if (staged) copy_cast(out_, staged->view);
}

}  // namespace cpu
}  // namespace tessera

// The frame of every pointwise out= kernel (PointwiseFrame): its tensor operands (the
// arguments' views) read in the dtype the op computes in, the output written directly when its
// dtype is the result's and through a staged result otherwise, and the typed loop, flat over
// dense operands or over a TensorIterator. A Scalar operand is a value the loop captures.
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
#include "views.hpp"

namespace tessera {
namespace cpu {

// scalar_to writes `s` converted to `dtype` at `dst` (at least 8 bytes).
void scalar_to(const sdk::Scalar& s, tsr_dtype dtype, void* dst);

// scalar_as: `s` as the type a kernel computes T in (a loop's captured constant).
template <typename T>
compute_t<T> scalar_as(const sdk::Scalar& s) {
  using C = compute_t<T>;
  if (s.c.kind == TSR_SCALAR_DOUBLE) return convert<C>(s.c.d);
  return convert<C>(s.c.i);
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
  if (n <= kGrain) {
    constexpr int64_t sizes[] = {sizeof(Out), sizeof(In)...};
    // One thread's share (run_parallel's rule, n <= grain) runs here, inlined, not through
    // run_parallel's function pointer: the callee below reads the context's pointers back in
    // pairs (a vectorized copy) where they were stored one by one, which the processor cannot
    // forward from the stores; that stall was about a tenth of a 1-element add's call.
    internal::apply_loop<Out, In...>(f, ctx.data, sizes, n, std::index_sequence_for<In...>{});
    return;
  }
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
// The frame keeps the addresses of the views it is given (the kernel's arguments: they outlive
// it). When every operand is a dense tensor of the output's shape and of the dtype it is read
// as (the common case, small or large), run() is one flat loop: nothing allocated, no table
// call (but parallel_for past one thread's share). Otherwise (broadcast, strides, another
// dtype) a TensorIterator walks the operands, an operand of another dtype is converted into a
// Temporary first and a result of another dtype than the output's is staged in one and copied
// back.
class PointwiseFrame {
 public:
  PointwiseFrame(const sdk::TensorView& out, tsr_dtype result) : out_(out), result_(result) {}
  // input adds a tensor operand read as `dtype` (a Scalar operand is the loop's to capture).
  void input(const sdk::TensorView& v, tsr_dtype dtype) { add(Input{&v, dtype}); }
  // Not temporaries: the frame keeps their addresses.
  PointwiseFrame(const sdk::TensorView&&, tsr_dtype) = delete;
  void input(const sdk::TensorView&&, tsr_dtype) = delete;

  // run_vector: out = vec(in) where the frame is one dense float32 input read as float32 into
  // a float32 output (vec: an array function of vector_math.hpp, run on ranges of the
  // runtime's threads); returns false, having done nothing, otherwise.
  bool run_vector(void (*vec)(const float*, float*, int64_t)) {
    if (num_inputs_ != 1 || result_ != TSR_DTYPE_FLOAT32 || !dense()) return false;
    struct Ctx {
      void (*vec)(const float*, float*, int64_t);
      const float* in;
      float* out;
    } ctx{vec, static_cast<const float*>(inputs_[0].view->data_ptr()),
          static_cast<float*>(out_.data_ptr())};
    TensorIterator::run_parallel(
        out_.numel(), kGrain,
        [](void* c, int64_t begin, int64_t end) {
          auto* x = static_cast<Ctx*>(c);
          x->vec(x->in + begin, x->out + begin, end - begin);
        },
        &ctx);
    return true;
  }

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
    const sdk::TensorView* view;
    tsr_dtype dtype;  // read as
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
      if (v->dtype() != inputs_[k].dtype || !v->is_contiguous() || !v->same_shape(out_)) {
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
  TensorIterator it(out_.sizes());
  if (out_.dtype() == result_) {
    it.add_view(out_);
  } else {
    it.add_view(staged.emplace(out_.sizes(), result_).view);
  }
  for (size_t k = 0; k < num_inputs_; ++k) {
    const Input& in = inputs_[k];
    if (in.view->dtype() == in.dtype) {
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

// TensorView and CallPlan: what a kernel's hot path reads about its arguments and its call, in
// one table call each (tsr_stack_get_tensor_views, tsr_stack_get_call_plan, ABI 1.1) instead of
// one per tensor property. In a 1.0 runtime, which lacks those calls, the same values come from
// the per-property calls, so a plugin using them still loads and runs there.
//
//   sdk::TensorView v[4];
//   sdk::read_views(stack, 0, 4, v);         // self, other, alpha (no tensor: !defined()), out
//   const sdk::CallPlan plan = sdk::call_plan(stack);
//   if (plan.compute_dtype() == TSR_DTYPE_FLOAT32 && v[0].is_contiguous()) ...
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tessera/sdk/random.hpp"
#include "tessera/sdk/tensor.hpp"

namespace tessera {
namespace sdk {

// TensorView: a borrowed view of a tensor (tsr_tensor_view); valid while the tensor is (for a
// kernel's argument: until the kernel returns). Reading it makes no table call.
class TensorView {
 public:
  TensorView() {
    v_.struct_size = sizeof v_;
    v_.ndim = -1;
  }
  explicit TensorView(const tsr_tensor_view& v) : v_(v) {}
  // sized: a view the runtime filled and sized (a packed call's views): the fields within both
  // its struct_size and ours, the rest zero.
  static TensorView sized(const tsr_tensor_view& v) {
    if (v.struct_size == sizeof(tsr_tensor_view)) return TensorView(v);  // the same minor's
    TensorView view;
    const size_t n = v.struct_size < sizeof(tsr_tensor_view) ? v.struct_size : sizeof v;
    std::memcpy(&view.v_, &v, n);
    view.v_.struct_size = sizeof(tsr_tensor_view);
    return view;
  }

  bool defined() const { return v_.tensor != nullptr; }
  tsr_tensor* get() const { return v_.tensor; }
  // tensor: an owning handle to the viewed tensor (one table call: a reference).
  Tensor tensor() const { return Tensor::borrow(v_.tensor); }

  int64_t dim() const { return v_.ndim; }
  IntSpan sizes() const {
    return IntSpan{v_.sizes, static_cast<size_t>(v_.ndim < 0 ? 0 : v_.ndim)};
  }
  IntSpan strides() const {
    return IntSpan{v_.strides, static_cast<size_t>(v_.ndim < 0 ? 0 : v_.ndim)};
  }
  int64_t size(int64_t d) const { return v_.sizes[d < 0 ? d + v_.ndim : d]; }
  int64_t numel() const { return v_.numel; }
  int64_t storage_offset() const { return v_.storage_offset; }
  tsr_dtype dtype() const { return static_cast<tsr_dtype>(v_.dtype); }
  size_t itemsize() const { return element_size(dtype()); }
  tsr_device device() const { return v_.device; }
  bool is_contiguous() const { return (v_.flags & TSR_VIEW_CONTIGUOUS) != 0; }
  // immutable_id: nonzero when the tensor is immutable (TSR_VIEW_IMMUTABLE: its elements do not
  // change while it lives), an id never reused; a kernel may cache what it derives from the tensor
  // under it and the view's layout. One table call, made only for an immutable view.
  uint64_t immutable_id() const {
    if ((v_.flags & TSR_VIEW_IMMUTABLE) == 0 || !TSR_API_HAS(&api(), tensor_immutable_id)) return 0;
    return api().tensor_immutable_id(v_.tensor);
  }
  void* data_ptr() const { return v_.data; }
  template <typename T>
  T* data() const {
    return static_cast<T*>(v_.data);
  }
  const tsr_tensor_view& c() const { return v_; }
  tsr_tensor_view& c() { return v_; }

  // same_shape: the same sizes (both views of tensors).
  bool same_shape(const TensorView& o) const {
    if (v_.ndim != o.v_.ndim) return false;
    for (int32_t d = 0; d < v_.ndim; ++d) {
      if (v_.sizes[d] != o.v_.sizes[d]) return false;
    }
    return true;
  }

 private:
  tsr_tensor_view v_{};
};
static_assert(sizeof(TensorView) == sizeof(tsr_tensor_view), "TensorView is the C view");

namespace internal {

// FillView fills `v` with the view of `t` through the per-property calls (ABI 1.0).
inline void FillView(tsr_tensor* t, tsr_tensor_view* v) {
  const tsr_runtime_api& a = api();
  v->tensor = t;
  v->data = a.tensor_data_ptr(t);
  v->ndim = static_cast<int32_t>(a.tensor_dim(t));
  v->sizes = a.tensor_sizes(t);
  v->strides = a.tensor_strides(t);
  v->storage_offset = a.tensor_storage_offset(t);
  v->numel = a.tensor_numel(t);
  v->device = a.tensor_device(t);
  v->dtype = static_cast<int32_t>(a.tensor_dtype(t));
  v->flags = a.tensor_is_contiguous(t) ? TSR_VIEW_CONTIGUOUS : 0u;
  // An immutable tensor's view says so (TSR_VIEW_IMMUTABLE), as the runtime's views do: a
  // kernel's weight cache, say, keys on it.
  if (TSR_API_HAS(&a, tensor_immutable_id) && a.tensor_immutable_id(t) != 0) {
    v->flags |= TSR_VIEW_IMMUTABLE;
  }
}

// ViewFromProperties: the view of stack value i through the 1.0 per-property calls.
inline void ViewFromProperties(const tsr_stack* s, size_t i, tsr_tensor_view* v) {
  *v = tsr_tensor_view{};
  v->struct_size = sizeof *v;
  v->ndim = -1;
  if (api().stack_kind(s, i) != TSR_VALUE_TENSOR) return;
  tsr_tensor* t = nullptr;
  check(api().stack_get_tensor(s, i, &t));
  if (t != nullptr) FillView(t, v);
}

}  // namespace internal

// view_of: the view of a tensor the caller holds (a kernel's temporary), valid while `t` is;
// one table call per property (a kernel's arguments come as views already).
inline TensorView view_of(const Tensor& t) {
  TensorView v;
  v.c().struct_size = sizeof(tsr_tensor_view);
  if (t.defined()) internal::FillView(t.get(), &v.c());
  return v;
}

// read_views fills views[k] for the stack values first + k, k in [0, count): a view of each
// defined tensor, an undefined view for any other value.
inline void read_views(const tsr_stack* s, size_t first, size_t count, TensorView* views) {
  if (TSR_API_HAS(&api(), stack_get_tensor_views)) {
    for (size_t k = 0; k < count; ++k) views[k].c().struct_size = sizeof(tsr_tensor_view);
    check(api().stack_get_tensor_views(s, first, count, &views[0].c()));
    return;
  }
  for (size_t k = 0; k < count; ++k) internal::ViewFromProperties(s, first + k, &views[k].c());
}

// read_view: the view of one stack value.
inline TensorView read_view(const tsr_stack* s, size_t i) {
  TensorView v;
  read_views(s, i, 1, &v);
  return v;
}

// CallPlan: the plan of the running kernel's call (tsr_call_plan), with up to kMaxOutputs of
// its planned outputs (views without data). A call without a plan (an op without a Meta
// function; any call in a 1.0 runtime) has no outputs and no compute dtype.
class CallPlan {
 public:
  static constexpr size_t kMaxOutputs = 4;

  bool has_compute_dtype() const { return c_.compute_dtype >= 0; }
  // compute_dtype: the dtype the op computes in; check has_compute_dtype() first.
  tsr_dtype compute_dtype() const { return static_cast<tsr_dtype>(c_.compute_dtype); }
  int32_t num_outputs() const { return c_.num_outputs; }
  // output(j) for j < min(num_outputs(), kMaxOutputs).
  const TensorView& output(size_t j) const { return outputs_[j]; }
  tsr_device device() const { return c_.device; }
  // draw: a random op's draw (random.hpp): its seed and offset.
  RandomDraw draw() const { return RandomDraw{c_.rng_seed, c_.rng_offset}; }

 private:
  friend CallPlan call_plan(const tsr_stack* s);
  tsr_call_plan c_{sizeof(tsr_call_plan), -1, 0, {TSR_DEVICE_CPU, 0}, 0, 0};
  TensorView outputs_[kMaxOutputs];
};

inline CallPlan call_plan(const tsr_stack* s) {
  CallPlan p;
  if (TSR_API_HAS(&api(), stack_get_call_plan)) {
    check(api().stack_get_call_plan(s, &p.c_, &p.outputs_[0].c(), CallPlan::kMaxOutputs));
  }
  return p;
}

// compute_dtype: the planned compute dtype of the running kernel's call, or nothing (a call
// without a plan). Cheaper than call_plan() when the outputs are not needed.
inline bool compute_dtype(const tsr_stack* s, tsr_dtype* out) {
  if (!TSR_API_HAS(&api(), stack_get_call_plan)) return false;
  tsr_call_plan c{sizeof(tsr_call_plan), -1, 0, {TSR_DEVICE_CPU, 0}, 0, 0};
  check(api().stack_get_call_plan(s, &c, nullptr, 0));
  if (c.compute_dtype < 0) return false;
  *out = static_cast<tsr_dtype>(c.compute_dtype);
  return true;
}

}  // namespace sdk
}  // namespace tessera

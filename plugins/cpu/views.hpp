// The views a kernel reads when an argument's own will not do: Temporary (a new contiguous
// tensor and its view) and ViewAs (an argument's view in the dtype and layout a loop or a
// library needs, made from a Temporary only when the argument is not so already). These are
// where a CPU kernel calls the runtime's table on a call, and only here (allocating, copying
// and releasing a temporary), besides parallel_for for work past one thread's share.
#pragma once

#include <optional>

#include "tessera/sdk/tensor.hpp"
#include "tessera/sdk/tensor_view.hpp"

namespace tessera {
namespace cpu {

// copy_cast: dst = src converted to dst's dtype, src broadcast to dst's shape (copy.cc).
void copy_cast(const sdk::TensorView& dst, const sdk::TensorView& src);

// Temporary: a new contiguous tensor of `sizes` and `dtype`, and its view.
struct Temporary {
  Temporary(sdk::IntSpan sizes, tsr_dtype dtype)
      : tensor(sdk::Tensor::empty(sizes.vec(), dtype)), view(sdk::view_of(tensor)) {}
  sdk::Tensor tensor;
  sdk::TensorView view;
};

enum class Layout {
  kAsIs,        // any strides
  kContiguous,  // row-major contiguous
};

// ViewAs: an argument's view of `dtype` (and, with Layout::kContiguous, contiguous): the
// argument's own when it already is, else that of a converted copy the object owns. An
// undefined view (a None argument) stays undefined. Copies share the one converted copy: the
// view points into the runtime's tensor, not into the object.
class ViewAs : public sdk::TensorView {
 public:
  ViewAs() = default;
  ViewAs(const sdk::TensorView& t, tsr_dtype dtype, Layout layout = Layout::kAsIs)
      : sdk::TensorView(t) {
    if (!t.defined()) return;
    if (t.dtype() == dtype && (layout == Layout::kAsIs || t.is_contiguous())) return;
    copy_.emplace(t.sizes(), dtype);
    static_cast<sdk::TensorView&>(*this) = copy_->view;
    copy_cast(copy_->view, t);
  }

 private:
  std::optional<Temporary> copy_;
};

}  // namespace cpu
}  // namespace tessera

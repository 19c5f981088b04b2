// float32 (log_)softmax through oneDNN, on dense tensors of one layout.
#include <cmath>
#include <limits>

#include "onednn.hpp"
#include "scans.hpp"

namespace tessera {
namespace cpu {

bool softmax_onednn(const sdk::TensorView& in, const sdk::TensorView& out, int64_t dim, bool log) {
  if (in.dtype() != TSR_DTYPE_FLOAT32 || out.dtype() != TSR_DTYPE_FLOAT32 || in.numel() == 0 ||
      !in.is_contiguous() || !out.is_contiguous()) {
    return false;
  }
  try {
    onednn::Threads threads(in.numel());  // the primitive made and run on it
    onednn::Key key(log ? onednn::kLogSoftmax : onednn::kSoftmax);
    key.add(in).add(dim);
    onednn::Call& call = onednn::cached_call(key, [&] {
      const dnnl::memory::desc md = onednn::desc(in);
      const int axis = in.dim() == 0 ? 0 : static_cast<int>(dim);
      dnnl::primitive p;
      if (log) {
        dnnl::logsoftmax_forward::desc d(dnnl::prop_kind::forward_inference, md, axis);
        p = dnnl::logsoftmax_forward(dnnl::logsoftmax_forward::primitive_desc(d, onednn::engine()));
      } else {
        dnnl::softmax_forward::desc d(dnnl::prop_kind::forward_inference, md, axis);
        p = dnnl::softmax_forward(dnnl::softmax_forward::primitive_desc(d, onednn::engine()));
      }
      return onednn::Call(p, {{DNNL_ARG_SRC, md}, {DNNL_ARG_DST, md}});
    });
    call.run({in.data_ptr(), out.data_ptr()});
  } catch (const dnnl::error&) {
    return false;  // a case this oneDNN does not support: our own loop runs
  }
  // PyTorch's (log_)softmax takes a row's max with NaN propagating, so a row holding a NaN or
  // +inf (inf - inf is NaN), or only -inf, is NaN throughout (SoftMaxKernel.cpp). oneDNN's is
  // NaN only where the NaN arose ([nan, 1, 2] gives [nan, 0, 0]): a line whose result has a
  // NaN becomes NaN, one read of the result (finite rows cannot give a NaN).
  for_each_line(out, out, dim, [](char* o, int64_t os, const char*, int64_t, int64_t n) {
    bool nan = false;
    for (int64_t k = 0; k < n; ++k) nan |= std::isnan(*reinterpret_cast<const float*>(o + k * os));
    if (!nan) return;
    for (int64_t k = 0; k < n; ++k) {
      *reinterpret_cast<float*>(o + k * os) = std::numeric_limits<float>::quiet_NaN();
    }
  });
  return true;
}

}  // namespace cpu
}  // namespace tessera

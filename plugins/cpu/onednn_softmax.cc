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
  const std::string key = std::string(log ? "logsoftmax:" : "softmax:") + onednn::key_of(in) + "@" +
                          std::to_string(dim);
  try {
    const dnnl::memory::desc md = onednn::desc(in);
    const int axis = in.dim() == 0 ? 0 : static_cast<int>(dim);
    onednn::Threads threads(in.numel());  // the primitive made and run on it
    dnnl::primitive p = onednn::cached(key, [&]() -> dnnl::primitive {
      if (log) {
        dnnl::logsoftmax_forward::desc d(dnnl::prop_kind::forward_inference, md, axis);
        return dnnl::logsoftmax_forward(
            dnnl::logsoftmax_forward::primitive_desc(d, onednn::engine()));
      }
      dnnl::softmax_forward::desc d(dnnl::prop_kind::forward_inference, md, axis);
      return dnnl::softmax_forward(dnnl::softmax_forward::primitive_desc(d, onednn::engine()));
    });
    p.execute(onednn::stream(),
              {{DNNL_ARG_SRC, onednn::memory(in, md)}, {DNNL_ARG_DST, onednn::memory(out, md)}});
    onednn::stream().wait();
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

// float32 (log_)softmax through oneDNN, on dense tensors of one layout.
#include "onednn.hpp"
#include "scans.hpp"

namespace tessera {
namespace cpu {

bool softmax_onednn(const sdk::Tensor& in, const sdk::Tensor& out, int64_t dim, bool log) {
  if (in.dtype() != TSR_DTYPE_FLOAT32 || out.dtype() != TSR_DTYPE_FLOAT32 || in.numel() == 0 ||
      !in.is_contiguous() || !out.is_contiguous()) {
    return false;
  }
  const std::string key = std::string(log ? "logsoftmax:" : "softmax:") + onednn::key_of(in) + "@" +
                          std::to_string(dim);
  try {
    const dnnl::memory::desc md = onednn::desc(in);
    const int axis = in.dim() == 0 ? 0 : static_cast<int>(dim);
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
    return true;
  } catch (const dnnl::error&) {
    return false;  // a case this oneDNN does not support: our own loop runs
  }
}

}  // namespace cpu
}  // namespace tessera

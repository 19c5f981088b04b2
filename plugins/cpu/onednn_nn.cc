// float32 average pooling through oneDNN, for dense NCHW-style tensors. It returns false when
// oneDNN does not take the case; nn.cc then runs its own loop.
#include "onednn_nn.hpp"

#include "onednn.hpp"

namespace tessera {
namespace cpu {
namespace {

using dnnl::memory;

memory::desc plain(const memory::dims& dims) {
  memory::dims strides(dims.size(), 1);
  for (size_t d = dims.size() - 1; d-- > 0;) strides[d] = strides[d + 1] * dims[d + 1];
  return memory::desc(dims, memory::data_type::f32, strides);
}

bool dense_f32(const sdk::TensorView& t) {
  return t.dtype() == TSR_DTYPE_FLOAT32 && t.is_contiguous();
}

template <typename F>
bool guarded(const F& f) {
  try {
    f();
    onednn::stream().wait();
    return true;
  } catch (const dnnl::error&) {
    return false;  // a case this oneDNN does not take: the caller's own loop runs
  }
}

}  // namespace

bool pool_onednn(const sdk::TensorView& in, const sdk::TensorView& out, const PoolSpec& p) {
  if (!dense_f32(in) || !dense_f32(out) || in.numel() == 0) return false;
  const int64_t nd = in.dim();
  const int64_t N = nd == 4 ? in.size(0) : 1, C = in.size(nd - 3);
  const int64_t H = in.size(nd - 2), W = in.size(nd - 1);
  const int64_t OH = out.size(nd - 2), OW = out.size(nd - 1);
  // Right padding that makes oneDNN's output size ours (ceil_mode adds some).
  const int64_t pr_h =
      (OH - 1) * p.stride[0] + (p.kernel[0] - 1) * p.dilation[0] + 1 - H - p.padding[0];
  const int64_t pr_w =
      (OW - 1) * p.stride[1] + (p.kernel[1] - 1) * p.dilation[1] + 1 - W - p.padding[1];
  if (pr_h < 0 || pr_w < 0) return false;
  // With padding counted: PyTorch never counts the extra ceil_mode padding.
  if (p.count_include_pad && (pr_h != p.padding[0] || pr_w != p.padding[1])) return false;
  const memory::desc src = plain({N, C, H, W}), dst = plain({N, C, OH, OW});
  const dnnl::algorithm alg = p.count_include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                                  : dnnl::algorithm::pooling_avg_exclude_padding;
  return guarded([&] {
    int64_t work;  // taps visited, saturated
    if (__builtin_mul_overflow(out.numel(), p.kernel[0] * p.kernel[1], &work)) {
      work = std::numeric_limits<int64_t>::max();
    }
    onednn::Threads threads(work);  // the primitive made and run on it
    onednn::Key key(onednn::kAvgPool);
    for (int64_t v :
         {N, C, H, W, OH, OW, p.kernel[0], p.kernel[1], p.stride[0], p.stride[1], p.padding[0],
          p.padding[1], p.dilation[0], p.dilation[1], pr_h, pr_w, static_cast<int64_t>(alg)}) {
      key.add(v);
    }
    onednn::Call& call = onednn::cached_call(key, [&] {
      dnnl::pooling_v2_forward::desc d(dnnl::prop_kind::forward_inference, alg, src, dst,
                                       {p.stride[0], p.stride[1]}, {p.kernel[0], p.kernel[1]},
                                       {p.dilation[0] - 1, p.dilation[1] - 1},
                                       {p.padding[0], p.padding[1]}, {pr_h, pr_w});
      return onednn::Call(
          dnnl::pooling_v2_forward(dnnl::pooling_v2_forward::primitive_desc(d, onednn::engine())),
          {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    });
    call.run({in.data_ptr(), out.data_ptr()});
  });
}

}  // namespace cpu
}  // namespace tessera

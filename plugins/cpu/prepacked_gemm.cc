// Matrix products with an immutable right operand, prepacked: gemm_prepacked.
#include "prepacked_gemm.hpp"

#include <algorithm>

#include "onednn.hpp"
#include "weight_cache.hpp"

namespace tessera {
namespace cpu {

// Note [Prepacked matrix products]
// dnnl_sgemm (linalg.cc) packs its right operand into its own blocked layout on every call. A
// model's linear layer multiplies by a weight that never changes (an immutable tensor: a
// compiled model's constant, or a view of one, Note [Immutable tensors] in core/tensor.cc), so
// that packing is the same work on every run, and with few rows on the left it is a large part
// of the product. oneDNN's matmul primitive with its weights in the layout it picks
// (format_tag::any), reordered once and kept (weight_cache.hpp), does not repeat it. Its kernel
// is slower than sgemm's on many rows, though. Measured on this project's 2-core machine
// (AVX-512; BERT-base's four linear layers, K x N = 768 x 2304, 768 x 768, 768 x 3072,
// 3072 x 768; matmul's time over sgemm's, best of 15):
//
//   rows of a       1      8      32     128    256    512    1024
//   1 thread        1.02   0.44   0.79   0.93   0.99   1.00   1.06
//   2 threads       1.03   0.45   0.62   0.81   0.89   0.92   0.95
//
// so a product takes it from 2 rows (one row is a matrix-vector product, which sgemm does not
// pack for) up to kPrepackedRowsPerThread rows of out per thread (512: 1,024 rows at 1 thread
// stay on sgemm). Anything else (another dtype, a mutable b, a copy the weight
// cache does not keep: it takes only room left under its bound, so that weights that do not
// all fit never evict each other on every call) returns false before it writes anything, and
// sgemm runs.
bool gemm_prepacked(const sdk::TensorView& a, const sdk::TensorView& b, const sdk::TensorView& out,
                    double alpha, double beta, bool accumulate, const sdk::TensorView* bias) {
  const uint64_t id = b.immutable_id();
  if (id == 0 || out.dtype() != TSR_DTYPE_FLOAT32 || a.dtype() != TSR_DTYPE_FLOAT32 ||
      b.dtype() != TSR_DTYPE_FLOAT32 || a.dim() != 2 || b.dim() != 2 || out.dim() != 2 ||
      a.numel() == 0 || out.numel() == 0 || out.size(0) < 2) {
    return false;
  }
  // oneDNN scales the bias with the product (alpha): a bias goes only with alpha 1.
  if (bias != nullptr && (alpha != 1 || accumulate || bias->dtype() != TSR_DTYPE_FLOAT32 ||
                          bias->numel() != out.size(1) || !bias->is_contiguous())) {
    return false;
  }
  try {
    // The primitive made and run on the runtime's thread count; the row bound depends on it.
    onednn::Threads threads(onednn::product_work(a, out));
    if (out.size(0) > kPrepackedRowsPerThread * std::max(1, onednn::threads())) return false;
    onednn::Key key(onednn::kPrepackedMatmul);
    key.add(a).add(b).add(out).add(alpha).add(int64_t{accumulate}).add(accumulate ? beta : 0.0);
    key.add(int64_t{bias != nullptr});
    onednn::Call& call = onednn::cached_call(key, [&] {
      const dnnl::memory::desc a_md = onednn::desc(a), o_md = onednn::desc(out);
      const dnnl::memory::desc any({b.size(0), b.size(1)}, dnnl::memory::data_type::f32,
                                   dnnl::memory::format_tag::any);
      const dnnl::primitive_attr attr = onednn::product_attr(alpha, beta, accumulate);
      if (bias == nullptr) {
        dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, any, o_md), attr,
                                        onednn::engine());
        return onednn::Call(
            dnnl::matmul(pd),
            {{DNNL_ARG_SRC, a_md}, {DNNL_ARG_WEIGHTS, pd.weights_desc()}, {DNNL_ARG_DST, o_md}});
      }
      const dnnl::memory::desc bias_md({1, out.size(1)}, dnnl::memory::data_type::f32,
                                       dnnl::memory::format_tag::ab);
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, any, bias_md, o_md), attr,
                                      onednn::engine());
      return onednn::Call(dnnl::matmul(pd), {{DNNL_ARG_SRC, a_md},
                                             {DNNL_ARG_WEIGHTS, pd.weights_desc()},
                                             {DNNL_ARG_BIAS, bias_md},
                                             {DNNL_ARG_DST, o_md}});
    });
    const dnnl::memory::desc packed_md = call.args[1].second.get_desc();
    const weight_cache::Copy packed = weight_cache::get(
        b, id, packed_md,
        [&](void* dst) {
          dnnl::memory from(onednn::desc(b), onednn::engine(), b.data_ptr());
          dnnl::memory to(packed_md, onednn::engine(), dst);
          dnnl::reorder(from, to).execute(onednn::stream(), from, to);
          onednn::stream().wait();
        },
        weight_cache::Admit::kIntoRoom);
    // Not kept (no room under TESSERA_CPU_WEIGHT_CACHE_MB, or the cache off): packing on every
    // call is sgemm's own way, cheaper than reordering and evicting another weight each time.
    if (!packed.data) return false;
    if (bias != nullptr) {
      call.run({a.data_ptr(), packed.data.get(), bias->data_ptr(), out.data_ptr()});
    } else {
      call.run({a.data_ptr(), packed.data.get(), out.data_ptr()});
    }
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

}  // namespace cpu
}  // namespace tessera

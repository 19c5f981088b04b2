// Convolution on oneDNN, in the layouts the primitive chooses (Note [Convolution layouts]).
#include "onednn_conv.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <memory>
#include <unordered_map>
#include <vector>

#include "onednn.hpp"
#include "weight_cache.hpp"

namespace tessera {
namespace cpu {
namespace {

// Note [Convolution layouts]
// oneDNN's fast convolutions (direct AVX2/AVX-512 kernels, Winograd) read and write blocked
// layouts (nChw16c, OIhw16i16o, ...); handed plain NCHW memory, the primitive falls back to
// im2col + GEMM, about twice as slow on ResNet's 3x3 layers. So the primitive is created with
// every layout left to it (format_tag::any), and each call reorders what is not already in the
// chosen layout: the input into a blocked scratch buffer, the weights likewise (or once, for a
// immutable tensor: weight_cache.hpp), and the result from a blocked buffer into `out`. Tensors
// stay plain between ops, so every other kernel and plugin sees what it always saw; the
// reorders of activations cost a few percent of the convolution. (PyTorch's mkldnn path does
// the same per call, weights included.)

// A primitive and what a call needs beside it, made once per thread, shape and thread count.
struct Entry {
  dnnl::primitive conv;
  dnnl::memory::desc src_md, weights_md, dst_md;  // the primitive's layouts
  // Where a tensor's own layout differs from the primitive's: the reorder, and the scratch
  // memory it writes (src, weights) or reads (dst). Null reorders: used in place.
  dnnl::primitive src_reorder, weights_reorder, dst_reorder;
  // Memory objects over the caller's tensors and the scratch buffers, re-pointed per call.
  dnnl::memory src_user, weights_user, bias_user, dst_user;
  dnnl::memory src_scratch, weights_scratch, dst_scratch;
  bool has_bias = false;
};

// Scratch: a thread's buffer for one role, grown as needed, 64-byte aligned as oneDNN likes.
class Scratch {
 public:
  void* get(size_t bytes) {
    if (bytes > size_) {
      data_.reset(static_cast<char*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
      size_ = data_ ? bytes : 0;
      if (!data_) throw dnnl::error(dnnl_out_of_memory, "convolution scratch");
    }
    return data_.get();
  }

 private:
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> data_;
  size_t size_ = 0;
};

// oneDNN's logical weight for (de)convolution: [G, O/G, I/G, *k] when grouped, else [O, I, *k];
// ours is [O, I/G, *k] (forward) or [I, O/G, *k] (transposed): the same memory seen through
// strides.
void onednn_weight(const sdk::TensorView& w, const ConvParams& p, dnnl::memory::dims* dims,
                   dnnl::memory::dims* strides) {
  const std::vector<int64_t> ws = w.sizes().vec(), st = w.strides().vec();
  const int64_t g = p.groups;
  // Rows (ours: dim 0) and columns (dim 1) as oneDNN's O and I.
  int64_t O, I, sO, sI;
  if (!p.transposed) {
    O = ws[0], I = ws[1], sO = st[0], sI = st[1];
  } else {
    O = ws[1] * g, I = ws[0], sO = st[1], sI = st[0];
  }
  if (g > 1) {
    if (!p.transposed) {
      *dims = {g, O / g, I};
      *strides = {st[0] * (O / g), sO, sI};
    } else {
      *dims = {g, O / g, I / g};
      *strides = {st[0] * (I / g), sO, sI};
    }
  } else {
    *dims = {O, I};
    *strides = {sO, sI};
  }
  for (size_t d = 2; d < ws.size(); ++d) {
    dims->push_back(ws[d]);
    strides->push_back(st[d]);
  }
}

bool int32_params(const ConvParams& p) {
  for (int d = 0; d < kSpatial; ++d) {
    if (!onednn::fit_int32({p.stride[d], p.padding[d], p.dilation[d], p.output_padding[d]})) {
      return false;
    }
  }
  return true;
}

dnnl::memory::desc any_of(const dnnl::memory::desc& md) {
  return dnnl::memory::desc(md.dims(), md.data_type(), dnnl::memory::format_tag::any);
}

dnnl::primitive reorder_or_null(const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
  if (from == to) return dnnl::primitive();
  return dnnl::reorder(dnnl::reorder::primitive_desc(onednn::engine(), from, onednn::engine(), to));
}

// make_entry creates the primitive for the call's shapes. Forward convolutions leave every
// layout to oneDNN; deconvolutions keep the plain layouts (their blocked forms gained nothing
// measurable, and they are rare in inference).
std::unique_ptr<Entry> make_entry(const sdk::TensorView& in, const dnnl::memory::desc& w_md,
                                  const sdk::TensorView* bias, const sdk::TensorView& out,
                                  const ConvParams& p, const dnnl::memory::dims& strides,
                                  const dnnl::memory::dims& dil, const dnnl::memory::dims& pad_l,
                                  const dnnl::memory::dims& pad_r) {
  const dnnl::memory::desc in_md = onednn::desc(in), out_md = onednn::desc(out);
  dnnl::memory::desc b_md;
  if (bias) b_md = onednn::desc(*bias);
  const auto kind = dnnl::prop_kind::forward_inference;
  const dnnl::engine& eng = onednn::engine();
  auto entry = std::make_unique<Entry>();
  entry->has_bias = bias != nullptr;
  if (p.transposed) {
    const auto alg = dnnl::algorithm::deconvolution_direct;
    auto d = bias ? dnnl::deconvolution_forward::desc(kind, alg, in_md, w_md, b_md, out_md, strides,
                                                      dil, pad_l, pad_r)
                  : dnnl::deconvolution_forward::desc(kind, alg, in_md, w_md, out_md, strides, dil,
                                                      pad_l, pad_r);
    const dnnl::deconvolution_forward::primitive_desc pd(d, eng);
    entry->conv = dnnl::deconvolution_forward(pd);
    entry->src_md = pd.src_desc();
    entry->weights_md = pd.weights_desc();
    entry->dst_md = pd.dst_desc();
  } else {
    const auto alg = dnnl::algorithm::convolution_direct;
    const dnnl::memory::desc src_any = any_of(in_md), w_any = any_of(w_md),
                             dst_any = any_of(out_md);
    auto d = bias ? dnnl::convolution_forward::desc(kind, alg, src_any, w_any, b_md, dst_any,
                                                    strides, dil, pad_l, pad_r)
                  : dnnl::convolution_forward::desc(kind, alg, src_any, w_any, dst_any, strides,
                                                    dil, pad_l, pad_r);
    const dnnl::convolution_forward::primitive_desc pd(d, eng);
    entry->conv = dnnl::convolution_forward(pd);
    entry->src_md = pd.src_desc();
    entry->weights_md = pd.weights_desc();
    entry->dst_md = pd.dst_desc();
  }
  entry->src_reorder = reorder_or_null(in_md, entry->src_md);
  entry->weights_reorder = reorder_or_null(w_md, entry->weights_md);
  entry->dst_reorder = reorder_or_null(entry->dst_md, out_md);
  // Memory objects with no buffer yet (DNNL_MEMORY_NONE); each call points them.
  entry->src_user = dnnl::memory(in_md, eng, DNNL_MEMORY_NONE);
  entry->weights_user = dnnl::memory(w_md, eng, DNNL_MEMORY_NONE);
  entry->dst_user = dnnl::memory(out_md, eng, DNNL_MEMORY_NONE);
  if (bias) entry->bias_user = dnnl::memory(b_md, eng, DNNL_MEMORY_NONE);
  entry->src_scratch = dnnl::memory(entry->src_md, eng, DNNL_MEMORY_NONE);
  entry->weights_scratch = dnnl::memory(entry->weights_md, eng, DNNL_MEMORY_NONE);
  entry->dst_scratch = dnnl::memory(entry->dst_md, eng, DNNL_MEMORY_NONE);
  return entry;
}

// run: one primitive execution through the C API, whose argument array costs nothing (the C++
// API takes an unordered_map per call), waited for.
void run(const dnnl::primitive& p, std::initializer_list<dnnl_exec_arg_t> args) {
  onednn::run_primitive(p, args.begin(), static_cast<int>(args.size()));
}

void reorder(const dnnl::primitive& r, const dnnl::memory& from, const dnnl::memory& to) {
  run(r, {{DNNL_ARG_FROM, from.get()}, {DNNL_ARG_TO, to.get()}});
}

}  // namespace

bool conv_onednn(const sdk::TensorView& in, const sdk::TensorView& w, const sdk::TensorView* bias,
                 const sdk::TensorView& out, const ConvParams& p) {
  const tsr_dtype dt = in.dtype();
  if (dt != TSR_DTYPE_FLOAT32 && dt != TSR_DTYPE_BFLOAT16) return false;
  if (in.numel() == 0 || w.numel() == 0 || !int32_params(p)) return false;
  dnnl::memory::dims strides, dil, pad_l, pad_r;
  for (int d = kSpatial - p.dims; d < kSpatial; ++d) {
    strides.push_back(p.stride[d]);
    dil.push_back(p.dilation[d] - 1);  // oneDNN counts dilation from 0
    pad_l.push_back(p.padding[d]);
    // The right padding that gives PyTorch's output size; a deconvolution's output_padding
    // shows as less of it.
    const int64_t r = p.padding[d] - (p.transposed ? p.output_padding[d] : 0);
    if (r < 0) return false;  // would crop: our loop handles it
    pad_r.push_back(r);
  }
  try {
    // Multiply-adds (saturated): each element of the side the weight's dim 0 indexes (the
    // output's channels forward, the input's transposed) meets one filter's worth.
    const int64_t elements = p.transposed ? in.numel() : out.numel();
    int64_t work;
    if (__builtin_mul_overflow(elements, w.numel() / std::max<int64_t>(1, w.size(0)), &work)) {
      work = std::numeric_limits<int64_t>::max();
    }
    onednn::Threads threads(work);  // the primitive made and run on it
    thread_local std::unordered_map<std::vector<int64_t>, std::unique_ptr<Entry>, onednn::KeyHash>
        cache;
    onednn::Key k(p.transposed ? onednn::kDeconv : onednn::kConv);
    k.add(p.groups).add(static_cast<int64_t>(onednn::threads())).add(in).add(w).add(out);
    k.add(static_cast<int64_t>(bias != nullptr));
    if (bias) k.add(*bias);
    for (const auto* v : {&strides, &dil, &pad_l, &pad_r}) {
      for (int64_t x : *v) k.add(x);
    }
    const std::vector<int64_t>& key = k.values();
    auto it = cache.find(key);
    if (it == cache.end()) {
      dnnl::memory::dims wdims, wstrides;
      onednn_weight(w, p, &wdims, &wstrides);
      const dnnl::memory::desc w_md(wdims, onednn::data_type(dt), wstrides);
      auto entry = make_entry(in, w_md, bias, out, p, strides, dil, pad_l, pad_r);
      if (cache.size() >= onednn::kMaxCachedPrimitives) cache.clear();  // bound under shape churn
      it = cache.emplace(key, std::move(entry)).first;
    }
    Entry& e = *it->second;
    thread_local Scratch src_buf, weights_buf, dst_buf;

    e.src_user.set_data_handle(in.data_ptr());
    const dnnl::memory* src = &e.src_user;
    if (e.src_reorder) {
      e.src_scratch.set_data_handle(src_buf.get(e.src_md.get_size()));
      reorder(e.src_reorder, e.src_user, e.src_scratch);
      src = &e.src_scratch;
    }
    e.weights_user.set_data_handle(w.data_ptr());
    const dnnl::memory* weights = &e.weights_user;
    weight_cache::Copy kept;  // holds a kept copy for the call
    if (e.weights_reorder) {
      // An immutable tensor's copy in the primitive's layout is made once (weight_cache.hpp).
      if (const uint64_t id = w.immutable_id()) {
        kept = weight_cache::get(w, id, e.weights_md, [&](void* dst) {
          e.weights_scratch.set_data_handle(dst);
          reorder(e.weights_reorder, e.weights_user, e.weights_scratch);
        });
      }
      if (kept.data) {
        weights = &kept.memory;  // its own memory object: never re-pointed (weight_cache.hpp)
      } else {
        e.weights_scratch.set_data_handle(weights_buf.get(e.weights_md.get_size()));
        reorder(e.weights_reorder, e.weights_user, e.weights_scratch);
        weights = &e.weights_scratch;
      }
    }
    e.dst_user.set_data_handle(out.data_ptr());
    const dnnl::memory* dst = &e.dst_user;
    if (e.dst_reorder) {
      e.dst_scratch.set_data_handle(dst_buf.get(e.dst_md.get_size()));
      dst = &e.dst_scratch;
    }
    if (e.has_bias) {
      e.bias_user.set_data_handle(bias->data_ptr());
      run(e.conv, {{DNNL_ARG_SRC, src->get()},
                   {DNNL_ARG_WEIGHTS, weights->get()},
                   {DNNL_ARG_BIAS, e.bias_user.get()},
                   {DNNL_ARG_DST, dst->get()}});
    } else {
      run(e.conv, {{DNNL_ARG_SRC, src->get()},
                   {DNNL_ARG_WEIGHTS, weights->get()},
                   {DNNL_ARG_DST, dst->get()}});
    }
    if (e.dst_reorder) reorder(e.dst_reorder, e.dst_scratch, e.dst_user);
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

}  // namespace cpu
}  // namespace tessera

// NN ops: convolution (oneDNN for float32/bfloat16, our direct loop otherwise); max_pool2d,
// avg_pool2d, native_layer_norm, native_batch_norm (inference) on oneDNN for float32
// (onednn_nn.cc) and our loops otherwise; max_pool2d_with_indices (our loop: oneDNN has no
// PyTorch indices); linear (oneDNN matmul with the bias as part of the primitive).
#include <cmath>
#include <limits>

#include "math.hpp"
#include "onednn.hpp"
#include "onednn_nn.hpp"
#include "pointwise.hpp"

namespace tessera {
namespace cpu {
namespace {

using Pair = std::array<int64_t, 2>;

Pair pair_arg(tsr_stack* s, size_t i, Pair fallback) {
  const sdk::IntSpan v = arg<sdk::IntSpan>(s, i);
  if (v.size == 0) return fallback;
  if (v.size == 1) return {v[0], v[0]};
  return {v[0], v[1]};
}

template <typename T>
using float_t_of = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Runs fn(i) for i in [0, n) on the runtime's threads, `work` elements of effort each.
template <typename F>
void parallel(int64_t n, int64_t work, const F& fn) {
  struct Ctx {
    const F* fn;
  } ctx{&fn};
  TensorIterator::run_parallel(
      n, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, work)),
      [](void* c, int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) (*static_cast<Ctx*>(c)->fn)(i);
      },
      &ctx);
}

// Contiguous copies keep loops simple (pooling: [planes, H, W]) and feed oneDNN the layouts
// it handles.
sdk::Tensor dense(const sdk::Tensor& t) {
  if (t.is_contiguous()) return t;
  sdk::Tensor c = sdk::Tensor::empty(t.sizes().vec(), t.dtype());
  copy_cast(c, t);
  return c;
}

// ---- convolution ----

// Convolution with 1, 2 or 3 spatial dims, always seen as 3 ([N, C, D, H, W]; a missing
// leading spatial dim has size 1), so one loop and one oneDNN call serve all three.
constexpr int kSpatial = 3;
using Spatial = std::array<int64_t, kSpatial>;

struct ConvParams {
  int dims;  // 1, 2 or 3
  bool transposed;
  Spatial stride, padding, dilation, output_padding;
  int64_t groups;
};

// A per-spatial-dim list argument placed in the last `dims` slots of a Spatial.
Spatial spatial_arg(tsr_stack* s, size_t i, int dims, int64_t fallback) {
  const sdk::IntSpan v = arg<sdk::IntSpan>(s, i);
  Spatial r{1, 1, 1};
  if (fallback == 0) r = {0, 0, 0};
  for (int d = 0; d < dims; ++d) {
    r[kSpatial - dims + d] = v.size == 0 ? fallback : v.size == 1 ? v[0] : v[d];
  }
  return r;
}

// Sizes and strides of a [N, C, *spatial] tensor padded to 3 spatial dims.
struct View5 {
  std::array<int64_t, 5> size, stride;
  View5(const sdk::Tensor& t) {
    const int extra = 5 - static_cast<int>(t.dim());
    for (int d = 0; d < 5; ++d) {
      const int src = d < 2 ? d : d - extra;
      const bool missing = d >= 2 && src < 2;
      size[d] = missing ? 1 : t.size(src);
      stride[d] = missing ? 0 : t.strides()[src];
    }
  }
};

// oneDNN's logical weight for (de)convolution: [G, O/G, I/G, *k] when grouped, else [O, I, *k];
// ours is [O, I/G, *k] (forward) or [I, O/G, *k] (transposed): the same memory seen through
// strides.
void onednn_weight(const sdk::Tensor& w, const ConvParams& p, dnnl::memory::dims* dims,
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

bool conv_onednn(const sdk::Tensor& in, const sdk::Tensor& w, const sdk::Tensor* bias,
                 const sdk::Tensor& out, const ConvParams& p) {
  const tsr_dtype dt = in.dtype();
  if (dt != TSR_DTYPE_FLOAT32 && dt != TSR_DTYPE_BFLOAT16) return false;
  if (in.numel() == 0 || w.numel() == 0) return false;
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
  dnnl::memory::dims wdims, wstrides;
  onednn_weight(w, p, &wdims, &wstrides);
  std::string key = std::string(p.transposed ? "deconv:" : "conv:") + onednn::key_of(in) + "|" +
                    onednn::key_of(w) + "|" + onednn::key_of(out) + "|" +
                    (bias ? onednn::key_of(*bias) : "-");
  for (const auto& v : {strides, dil, pad_l, pad_r}) {
    for (int64_t x : v) key += "," + std::to_string(x);
  }
  key += ",g" + std::to_string(p.groups);
  try {
    const dnnl::memory::desc in_md = onednn::desc(in), out_md = onednn::desc(out);
    const dnnl::memory::desc w_md(wdims, onednn::data_type(dt), wstrides);
    dnnl::memory::desc b_md;
    if (bias) b_md = onednn::desc(*bias);
    dnnl::primitive prim = onednn::cached(key, [&]() -> dnnl::primitive {
      const auto kind = dnnl::prop_kind::forward_inference;
      if (p.transposed) {
        const auto alg = dnnl::algorithm::deconvolution_direct;
        auto d = bias ? dnnl::deconvolution_forward::desc(kind, alg, in_md, w_md, b_md, out_md,
                                                          strides, dil, pad_l, pad_r)
                      : dnnl::deconvolution_forward::desc(kind, alg, in_md, w_md, out_md, strides,
                                                          dil, pad_l, pad_r);
        return dnnl::deconvolution_forward(
            dnnl::deconvolution_forward::primitive_desc(d, onednn::engine()));
      }
      const auto alg = dnnl::algorithm::convolution_direct;
      auto d = bias ? dnnl::convolution_forward::desc(kind, alg, in_md, w_md, b_md, out_md, strides,
                                                      dil, pad_l, pad_r)
                    : dnnl::convolution_forward::desc(kind, alg, in_md, w_md, out_md, strides, dil,
                                                      pad_l, pad_r);
      return dnnl::convolution_forward(
          dnnl::convolution_forward::primitive_desc(d, onednn::engine()));
    });
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, onednn::memory(in, in_md)},
                                               {DNNL_ARG_WEIGHTS, onednn::memory(w, w_md)},
                                               {DNNL_ARG_DST, onednn::memory(out, out_md)}};
    if (bias) args.emplace(DNNL_ARG_BIAS, onednn::memory(*bias, b_md));
    prim.execute(onednn::stream(), args);
    onednn::stream().wait();
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

// What the convolution loop accumulates T in: float (double for float64) for the floating
// types; for the integer types a uint64_t, whose wrapping sums and products are the integer
// GEMM's of PyTorch once rounded to T (two's complement), without signed-overflow UB.
template <typename T>
using conv_acc_t = std::conditional_t<kIsFloat<T>, float_t_of<T>, uint64_t>;

template <typename T>
conv_acc_t<T> conv_load(T v) {
  if constexpr (kIsFloat<T>) {
    return static_cast<conv_acc_t<T>>(load(v));
  } else {
    return static_cast<uint64_t>(static_cast<int64_t>(v));
  }
}

// Direct convolution, one output element at a time; for the transposed form each output
// gathers the inputs whose strided positions land on it (so outputs are written once, in
// parallel, without scatter races).
template <typename T>
void conv_loop(const sdk::Tensor& in, const sdk::Tensor& w, const sdk::Tensor* bias,
               const sdk::Tensor& out, const ConvParams& p) {
  using A = conv_acc_t<T>;
  const View5 x(in), k(w), y(out);
  const T* xd = in.data<T>();
  const T* kd = w.data<T>();
  T* yd = out.data<T>();
  const int64_t N = y.size[0], O = y.size[1], C = x.size[1];
  const int64_t OG = O / p.groups, CG = C / p.groups;
  const Spatial I{x.size[2], x.size[3], x.size[4]}, K{k.size[2], k.size[3], k.size[4]},
      Y{y.size[2], y.size[3], y.size[4]};
  const T* b = bias ? bias->data<T>() : nullptr;
  const int64_t bs = bias ? bias->strides()[0] : 0;
  const int64_t taps = CG * K[0] * K[1] * K[2];
  parallel(N * O, Y[0] * Y[1] * Y[2] * taps, [&](int64_t no) {
    const int64_t n = no / O, o = no % O, g = o / OG;
    const T* xn = xd + n * x.stride[0] + g * CG * x.stride[1];
    for (int64_t o0 = 0; o0 < Y[0]; ++o0) {
      for (int64_t o1 = 0; o1 < Y[1]; ++o1) {
        for (int64_t o2 = 0; o2 < Y[2]; ++o2) {
          A acc = b ? conv_load(b[o * bs]) : A(0);
          const int64_t opos[kSpatial] = {o0, o1, o2};
          for (int64_t k0 = 0; k0 < K[0]; ++k0) {
            for (int64_t k1 = 0; k1 < K[1]; ++k1) {
              for (int64_t k2 = 0; k2 < K[2]; ++k2) {
                const int64_t kpos[kSpatial] = {k0, k1, k2};
                int64_t offset = 0;
                bool inside = true;
                for (int d = 0; d < kSpatial && inside; ++d) {
                  int64_t i;
                  if (!p.transposed) {
                    i = opos[d] * p.stride[d] - p.padding[d] + kpos[d] * p.dilation[d];
                  } else {
                    // output = input * stride - padding + k * dilation, solved for input.
                    const int64_t t = opos[d] + p.padding[d] - kpos[d] * p.dilation[d];
                    if (t < 0 || t % p.stride[d] != 0) {
                      inside = false;
                      break;
                    }
                    i = t / p.stride[d];
                  }
                  inside = i >= 0 && i < I[d];
                  offset += i * x.stride[2 + d];
                }
                if (!inside) continue;
                const int64_t koff = k0 * k.stride[2] + k1 * k.stride[3] + k2 * k.stride[4];
                for (int64_t c = 0; c < CG; ++c) {
                  // Forward weight [O, C/G, *k]; transposed [C, O/G, *k].
                  const T wv =
                      p.transposed
                          ? kd[(g * CG + c) * k.stride[0] + (o - g * OG) * k.stride[1] + koff]
                          : kd[o * k.stride[0] + c * k.stride[1] + koff];
                  acc += conv_load(xn[c * x.stride[1] + offset]) * conv_load(wv);
                }
              }
            }
          }
          yd[n * y.stride[0] + o * y.stride[1] + o0 * y.stride[2] + o1 * y.stride[3] +
             o2 * y.stride[4]] = store<T>(acc);
        }
      }
    }
  });
}

// convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
// groups) -> Tensor, for 1, 2 or 3 spatial dims, every numeric dtype (the meta function has
// checked the arguments).
void convolution(const char* op, tsr_stack* s) {
  const sdk::Tensor in = arg<sdk::Tensor>(s, 0), w = arg<sdk::Tensor>(s, 1);
  const std::optional<sdk::Tensor> bias = arg<std::optional<sdk::Tensor>>(s, 2);
  const int dims = static_cast<int>(w.dim()) - 2;
  ConvParams p{dims,
               arg<bool>(s, 6),
               spatial_arg(s, 3, dims, 1),
               spatial_arg(s, 4, dims, 0),
               spatial_arg(s, 5, dims, 1),
               spatial_arg(s, 7, dims, 0),
               arg<int64_t>(s, 8)};
  std::vector<int64_t> shape{in.size(0), p.transposed ? w.size(1) * p.groups : w.size(0)};
  for (int d = 0; d < dims; ++d) {
    const int j = kSpatial - dims + d;
    const int64_t i = in.size(2 + d), k = w.size(2 + d);
    shape.push_back(p.transposed
                        ? (i - 1) * p.stride[j] - 2 * p.padding[j] + p.dilation[j] * (k - 1) +
                              p.output_padding[j] + 1
                        : (i + 2 * p.padding[j] - p.dilation[j] * (k - 1) - 1) / p.stride[j] + 1);
  }
  sdk::Tensor out = sdk::Tensor::empty(shape, in.dtype());
  // oneDNN 2.6's deconvolution reads a strided bias as a dense one (NaN from the poisoned gaps
  // of an interleaved bias in the conformance layouts): it gets a dense copy.
  std::optional<sdk::Tensor> dense_bias;
  if (bias && p.transposed) dense_bias = dense(*bias);
  const sdk::Tensor* b = dense_bias ? &*dense_bias : bias ? &*bias : nullptr;
  if (out.numel() > 0 && !conv_onednn(in, w, b, out, p)) {
    dispatch<kNumeric>(in.dtype(), op, [&](auto tag) {
      conv_loop<typename decltype(tag)::type>(in, w, b, out, p);
    });
  }
  set_result(s, out);
}

// ---- pooling ----

struct Pool {
  Pair kernel, stride, padding, dilation;
  int64_t planes, H, W, OH, OW;
};

Pool pool_of(const sdk::Tensor& in, const sdk::Tensor& out, tsr_stack* s, bool dilation) {
  Pool p;
  p.kernel = pair_arg(s, 1, {1, 1});
  p.stride = pair_arg(s, 2, p.kernel);
  p.padding = pair_arg(s, 3, {0, 0});
  p.dilation = dilation ? pair_arg(s, 4, {1, 1}) : Pair{1, 1};
  const int64_t nd = in.dim();
  p.H = in.size(nd - 2);
  p.W = in.size(nd - 1);
  p.OH = out.size(nd - 2);
  p.OW = out.size(nd - 1);
  p.planes = p.H * p.W == 0 ? 0 : in.numel() / (p.H * p.W);
  return p;
}

// max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode) ->
// (values, indices): indices are flat positions h * W + w in the input plane; NaN wins.
// The pooled shape, by the meta function's formula (these ops have no out= form to receive it).
std::vector<int64_t> max_pool_shape(const sdk::Tensor& in, tsr_stack* s) {
  std::vector<int64_t> shape = in.sizes().vec();
  const int64_t nd = in.dim();
  const Pair kernel = pair_arg(s, 1, {1, 1}), stride = pair_arg(s, 2, kernel),
             padding = pair_arg(s, 3, {0, 0}), dil = pair_arg(s, 4, {1, 1});
  const bool ceil_mode = arg<bool>(s, 5);
  for (int i = 0; i < 2; ++i) {
    const int64_t in_size = shape[nd - 2 + i];
    const int64_t span =
        in_size + 2 * padding[i] - dil[i] * (kernel[i] - 1) - 1 + (ceil_mode ? stride[i] - 1 : 0);
    int64_t o = span / stride[i] + 1;
    if (ceil_mode && (o - 1) * stride[i] >= in_size + padding[i]) --o;
    shape[nd - 2 + i] = o;
  }
  return shape;
}

void max_pool(const char* op, tsr_stack* s) {
  const sdk::Tensor in = dense(arg<sdk::Tensor>(s, 0));
  const std::vector<int64_t> shape = max_pool_shape(in, s);
  const Pair kernel = pair_arg(s, 1, {1, 1}), stride = pair_arg(s, 2, kernel),
             padding = pair_arg(s, 3, {0, 0}), dil = pair_arg(s, 4, {1, 1});
  sdk::Tensor values = sdk::Tensor::empty(shape, in.dtype());
  sdk::Tensor indices = sdk::Tensor::empty(shape, TSR_DTYPE_INT64);
  const Pool p = pool_of(in, values, s, true);
  dispatch<kFloating>(in.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = float_t_of<T>;
    const T* x = in.data<T>();
    T* y = values.data<T>();
    int64_t* idx = indices.data<int64_t>();
    parallel(p.planes, p.OH * p.OW * kernel[0] * kernel[1], [&](int64_t plane) {
      const T* xp = x + plane * p.H * p.W;
      for (int64_t oh = 0; oh < p.OH; ++oh) {
        for (int64_t ow = 0; ow < p.OW; ++ow) {
          C best = -std::numeric_limits<C>::infinity();
          int64_t best_i = -1;
          for (int64_t kh = 0; kh < kernel[0]; ++kh) {
            const int64_t h = oh * stride[0] - padding[0] + kh * dil[0];
            if (h < 0 || h >= p.H) continue;
            for (int64_t kw = 0; kw < kernel[1]; ++kw) {
              const int64_t w = ow * stride[1] - padding[1] + kw * dil[1];
              if (w < 0 || w >= p.W) continue;
              const C v = static_cast<C>(load(xp[h * p.W + w]));
              if (best_i < 0 || v > best || std::isnan(v)) {
                if (best_i >= 0 && std::isnan(best)) continue;
                best = v;
                best_i = h * p.W + w;
              }
            }
          }
          const int64_t o = (plane * p.OH + oh) * p.OW + ow;
          y[o] = store<T>(best);
          idx[o] = best_i;
        }
      }
    });
  });
  set_results(s, values, indices);
}

// max_pool2d(self, kernel_size, stride, padding, dilation, ceil_mode): values only, so
// float32 can run on oneDNN (which does not give PyTorch's indices); other dtypes through
// max_pool2d_with_indices.
void max_pool_values(const char* op, tsr_stack* s) {
  const sdk::Tensor in = dense(arg<sdk::Tensor>(s, 0));
  sdk::Tensor out = sdk::Tensor::empty(max_pool_shape(in, s), in.dtype());
  const Pair kernel = pair_arg(s, 1, {1, 1});
  const PoolSpec spec{
      kernel, pair_arg(s, 2, kernel), pair_arg(s, 3, {0, 0}), pair_arg(s, 4, {1, 1}), true, false};
  if (out.numel() > 0 && !pool_onednn(in, out, spec)) {
    max_pool(op, s);  // leaves (values, indices)
    tsr_tensor* values = nullptr;
    sdk::check(sdk::api().stack_get_tensor(s, 0, &values));
    out = sdk::Tensor::borrow(values);
  }
  set_result(s, out);
}

// avg_pool2d's dtypes on PyTorch 1.13's CPU: the floating types and int64 (its kernel
// dispatches FLOATING_TYPES_AND(Long); the narrower integer types are refused there too).
constexpr sdk::DtypeSet kAvgPoolDtypes = kFloating | sdk::dtype_bit(TSR_DTYPE_INT64);

// avg_pool2d.out(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
// divisor_override, *, out): PyTorch's divisor rules.
void avg_pool_out(const char* op, tsr_stack* s) {
  const sdk::Tensor in = dense(arg<sdk::Tensor>(s, 0));
  const sdk::Tensor out = arg<sdk::Tensor>(s, 7);
  const bool count_include_pad = arg<bool>(s, 5);
  const std::optional<int64_t> divisor = arg<std::optional<int64_t>>(s, 6);
  const sdk::Tensor dst =
      out.is_contiguous() ? out : sdk::Tensor::empty(out.sizes().vec(), out.dtype());
  const Pool p = pool_of(in, out, s, false);
  if (!divisor && out.numel() > 0 &&
      pool_onednn(in, dst,
                  PoolSpec{p.kernel, p.stride, p.padding, {1, 1}, false, count_include_pad})) {
    if (dst.data_ptr() != out.data_ptr()) copy_cast(out, dst);
    set_result(s, out);
    return;
  }
  dispatch<kAvgPoolDtypes>(in.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    // int64 sums in int64 and divides with C++'s truncation toward zero, as PyTorch's CPU
    // kernel does (sum / divide_factor on scalar_t).
    using C = std::conditional_t<kIsFloat<T>, float_t_of<T>, int64_t>;
    const T* x = in.data<T>();
    T* y = dst.data<T>();
    parallel(p.planes, p.OH * p.OW * p.kernel[0] * p.kernel[1], [&](int64_t plane) {
      const T* xp = x + plane * p.H * p.W;
      for (int64_t oh = 0; oh < p.OH; ++oh) {
        for (int64_t ow = 0; ow < p.OW; ++ow) {
          int64_t h0 = oh * p.stride[0] - p.padding[0], w0 = ow * p.stride[1] - p.padding[1];
          int64_t h1 = std::min(h0 + p.kernel[0], p.H + p.padding[0]);
          int64_t w1 = std::min(w0 + p.kernel[1], p.W + p.padding[1]);
          const int64_t padded = (h1 - h0) * (w1 - w0);
          h0 = std::max<int64_t>(h0, 0);
          w0 = std::max<int64_t>(w0, 0);
          h1 = std::min(h1, p.H);
          w1 = std::min(w1, p.W);
          C sum = 0;
          for (int64_t h = h0; h < h1; ++h) {
            for (int64_t w = w0; w < w1; ++w) sum += static_cast<C>(load(xp[h * p.W + w]));
          }
          const int64_t count = divisor             ? *divisor
                                : count_include_pad ? padded
                                                    : (h1 - h0) * (w1 - w0);
          y[(plane * p.OH + oh) * p.OW + ow] = store<T>(sum / static_cast<C>(count));
        }
      }
    });
  });
  if (dst.data_ptr() != out.data_ptr()) copy_cast(out, dst);
  set_result(s, out);
}

// ---- normalization ----

// native_layer_norm(input, normalized_shape, weight, bias, eps) -> (out, mean, rstd): per row,
// two passes in float (double for float64).
void layer_norm(const char* op, tsr_stack* s) {
  const sdk::Tensor in = dense(arg<sdk::Tensor>(s, 0));
  const sdk::IntSpan norm = arg<sdk::IntSpan>(s, 1);
  const std::optional<sdk::Tensor> weight = arg<std::optional<sdk::Tensor>>(s, 2);
  const std::optional<sdk::Tensor> bias = arg<std::optional<sdk::Tensor>>(s, 3);
  const double eps = arg<double>(s, 4);
  int64_t N = 1;
  for (int64_t d : norm) N *= d;
  const int64_t M = N == 0 ? 0 : in.numel() / N;
  std::vector<int64_t> stat = in.sizes().vec();
  for (size_t i = stat.size() - norm.size; i < stat.size(); ++i) stat[i] = 1;
  sdk::Tensor out = sdk::Tensor::empty(in.sizes().vec(), in.dtype());
  sdk::Tensor mean = sdk::Tensor::empty(stat, in.dtype()),
              rstd = sdk::Tensor::empty(stat, in.dtype());
  const sdk::Tensor w = weight ? dense(*weight) : sdk::Tensor(),
                    b = bias ? dense(*bias) : sdk::Tensor();
  if (in.dtype() == TSR_DTYPE_FLOAT32) {
    sdk::Tensor var = sdk::Tensor::empty(stat, in.dtype());
    if (layer_norm_onednn(in, M, N, weight ? &w : nullptr, bias ? &b : nullptr, eps, out, mean,
                          var)) {
      float* r = rstd.data<float>();
      const float* v = var.data<float>();
      for (int64_t k = 0; k < M; ++k) r[k] = 1.0f / std::sqrt(v[k] + static_cast<float>(eps));
      sdk::api().stack_clear(s);
      sdk::internal::push(s, out);
      sdk::internal::push(s, mean);
      sdk::internal::push(s, rstd);
      return;
    }
  }
  dispatch<kFloating>(in.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = float_t_of<T>;
    const T* x = in.data<T>();
    T* y = out.data<T>();
    const T* wp = w.defined() ? w.data<T>() : nullptr;
    const T* bp = b.defined() ? b.data<T>() : nullptr;
    parallel(M, N, [&](int64_t r) {
      const T* xr = x + r * N;
      C sum = 0;
      for (int64_t i = 0; i < N; ++i) sum += static_cast<C>(load(xr[i]));
      const C mu = sum / static_cast<C>(N);
      C sq = 0;
      for (int64_t i = 0; i < N; ++i) {
        const C d = static_cast<C>(load(xr[i])) - mu;
        sq += d * d;
      }
      const C inv = C(1) / std::sqrt(sq / static_cast<C>(N) + static_cast<C>(eps));
      for (int64_t i = 0; i < N; ++i) {
        C v = (static_cast<C>(load(xr[i])) - mu) * inv;
        if (wp) v *= static_cast<C>(load(wp[i]));
        if (bp) v += static_cast<C>(load(bp[i]));
        y[r * N + i] = store<T>(v);
      }
      mean.data<T>()[r] = store<T>(mu);
      rstd.data<T>()[r] = store<T>(inv);
    });
  });
  sdk::api().stack_clear(s);
  sdk::internal::push(s, out);
  sdk::internal::push(s, mean);
  sdk::internal::push(s, rstd);
}

// native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)
// -> (out, save_mean, save_invstd).
// Inference: the running statistics (oneDNN for dense float32), save_* empty ([0]).
// Training, as PyTorch's batch_norm_cpu: per channel the batch mean and biased variance
// (accumulated in double), save_invstd = 1 / sqrt(var + eps) (0 when var and eps are both 0),
// and, when given, running_mean and running_var updated in place with momentum, the variance
// unbiased (var_sum / (n - 1)).
void batch_norm(const char* op, tsr_stack* s) {
  const sdk::Tensor in = dense(arg<sdk::Tensor>(s, 0));
  const std::optional<sdk::Tensor> weight = arg<std::optional<sdk::Tensor>>(s, 1);
  const std::optional<sdk::Tensor> bias = arg<std::optional<sdk::Tensor>>(s, 2);
  const std::optional<sdk::Tensor> running_mean = arg<std::optional<sdk::Tensor>>(s, 3);
  const std::optional<sdk::Tensor> running_var = arg<std::optional<sdk::Tensor>>(s, 4);
  const bool training = arg<bool>(s, 5);
  const double momentum = arg<double>(s, 6);
  const double eps = arg<double>(s, 7);
  const int64_t N = in.size(0), C = in.size(1);
  const int64_t inner = N * C == 0 ? 0 : in.numel() / (N * C);
  sdk::Tensor out = sdk::Tensor::empty(in.sizes().vec(), in.dtype());
  const sdk::Tensor w = weight ? dense(*weight) : sdk::Tensor(),
                    b = bias ? dense(*bias) : sdk::Tensor();
  const int64_t stat = training ? C : 0;
  sdk::Tensor save_mean = sdk::Tensor::empty({stat}, in.dtype()),
              save_invstd = sdk::Tensor::empty({stat}, in.dtype());
  auto finish = [&] {
    sdk::api().stack_clear(s);
    sdk::internal::push(s, out);
    sdk::internal::push(s, save_mean);
    sdk::internal::push(s, save_invstd);
  };
  if (!training) {
    const sdk::Tensor rm = dense(*running_mean), rv = dense(*running_var);
    if (batch_norm_onednn(in, weight ? &w : nullptr, bias ? &b : nullptr, rm, rv, eps, out)) {
      return finish();
    }
  }
  dispatch<kFloating>(in.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = float_t_of<T>;
    const T* x = in.data<T>();
    T* y = out.data<T>();
    // Per channel: the (mean, invstd) that normalize it.
    std::vector<double> mean(static_cast<size_t>(C)), invstd(static_cast<size_t>(C));
    if (training) {
      const int64_t n = N * inner;
      parallel(C, N * inner, [&](int64_t c) {
        double sum = 0;
        for (int64_t i = 0; i < N; ++i) {
          const T* row = x + (i * C + c) * inner;
          for (int64_t j = 0; j < inner; ++j) sum += static_cast<double>(load(row[j]));
        }
        const double mu = sum / static_cast<double>(n);
        double var_sum = 0;
        for (int64_t i = 0; i < N; ++i) {
          const T* row = x + (i * C + c) * inner;
          for (int64_t j = 0; j < inner; ++j) {
            const double d = static_cast<double>(load(row[j])) - mu;
            var_sum += d * d;
          }
        }
        const double var = var_sum / static_cast<double>(n);
        mean[c] = mu;
        invstd[c] = var == 0 && eps == 0 ? 0 : 1 / std::sqrt(var + eps);
        save_mean.data<T>()[c] = store<T>(static_cast<A>(mu));
        save_invstd.data<T>()[c] = store<T>(static_cast<A>(invstd[c]));
        // The running statistics are the caller's tensors, written through their strides.
        if (running_mean) {
          T& r = running_mean->data<T>()[c * running_mean->strides()[0]];
          r = store<T>(
              static_cast<A>(momentum * mu + (1 - momentum) * static_cast<double>(load(r))));
        }
        if (running_var) {
          T& r = running_var->data<T>()[c * running_var->strides()[0]];
          const double unbiased = var_sum / static_cast<double>(n - 1);
          r = store<T>(
              static_cast<A>(momentum * unbiased + (1 - momentum) * static_cast<double>(load(r))));
        }
      });
    } else {
      for (int64_t c = 0; c < C; ++c) {
        mean[c] =
            static_cast<double>(load(running_mean->data<T>()[c * running_mean->strides()[0]]));
        invstd[c] = 1 / std::sqrt(static_cast<double>(
                                      load(running_var->data<T>()[c * running_var->strides()[0]])) +
                                  eps);
      }
    }
    parallel(N * C, inner, [&](int64_t nc) {
      const int64_t c = nc % C;
      const A scale = static_cast<A>(
          (w.defined() ? static_cast<double>(load(w.data<T>()[c])) : 1.0) * invstd[c]);
      const A shift = static_cast<A>(
          (b.defined() ? static_cast<double>(load(b.data<T>()[c])) : 0.0) - mean[c] * scale);
      for (int64_t i = 0; i < inner; ++i) {
        y[nc * inner + i] = store<T>(static_cast<A>(load(x[nc * inner + i])) * scale + shift);
      }
    });
  });
  finish();
}

// ---- linear ----

// linear(input, weight, bias=None): float32/bfloat16 through one oneDNN matmul with the bias in
// the primitive; other dtypes (or shapes oneDNN refuses) through the runtime's composite ops.
void linear(const char* op, tsr_stack* s) {
  const sdk::Tensor input = arg<sdk::Tensor>(s, 0), weight = arg<sdk::Tensor>(s, 1);
  const std::optional<sdk::Tensor> bias = arg<std::optional<sdk::Tensor>>(s, 2);
  std::vector<int64_t> shape = input.sizes().vec();
  const int64_t K = shape.back(), N = weight.size(0);
  const int64_t M = K == 0 ? 0 : input.numel() / K;
  shape.back() = N;
  sdk::Tensor out = sdk::Tensor::empty(shape, input.dtype());
  const tsr_dtype dt = input.dtype();
  bool done = false;
  if ((dt == TSR_DTYPE_FLOAT32 || dt == TSR_DTYPE_BFLOAT16) && input.is_contiguous() && M > 0 &&
      K > 0) {
    try {
      const dnnl::memory::desc a_md({M, K}, onednn::data_type(dt), {K, 1});
      // weight [N, K] read as its transpose [K, N] through strides.
      const dnnl::memory::desc w_md({K, N}, onednn::data_type(dt),
                                    {weight.strides()[1], weight.strides()[0]});
      const dnnl::memory::desc o_md({M, N}, onednn::data_type(dt), {N, 1});
      dnnl::memory::desc b_md;
      if (bias)
        b_md = dnnl::memory::desc({1, N}, onednn::data_type(dt),
                                  {0, bias->strides().size ? bias->strides()[0] : 1});
      const std::string key = "linear:" + std::to_string(M) + "," + onednn::key_of(weight) + "|" +
                              (bias ? onednn::key_of(*bias) : "-");
      dnnl::primitive prim = onednn::cached(key, [&]() -> dnnl::primitive {
        auto d = bias ? dnnl::matmul::desc(a_md, w_md, b_md, o_md)
                      : dnnl::matmul::desc(a_md, w_md, o_md);
        return dnnl::matmul(dnnl::matmul::primitive_desc(d, onednn::engine()));
      });
      std::unordered_map<int, dnnl::memory> args{
          {DNNL_ARG_SRC, dnnl::memory(a_md, onednn::engine(), input.data_ptr())},
          {DNNL_ARG_WEIGHTS, dnnl::memory(w_md, onednn::engine(), weight.data_ptr())},
          {DNNL_ARG_DST, dnnl::memory(o_md, onednn::engine(), out.data_ptr())}};
      if (bias) args.emplace(DNNL_ARG_BIAS, dnnl::memory(b_md, onednn::engine(), bias->data_ptr()));
      prim.execute(onednn::stream(), args);
      onednn::stream().wait();
      done = true;
    } catch (const dnnl::error&) {
      done = false;
    }
  }
  if (!done) {
    // input [M, K] @ weight.T (+ bias) through the runtime's ops, on this same plugin.
    // Looked up once (thread-safe statics), kept for the process.
    auto find = [](const char* name) {
      const tsr_op* op = nullptr;
      sdk::check(sdk::api().op_find(sdk::to_c(name), &op));
      return op;
    };
    static const tsr_op* const addmm = find("addmm");
    static const tsr_op* const mm = find("mm");
    static const tsr_op* const view = find("view");
    static const tsr_op* const t = find("t");
    tsr_stack* st = nullptr;
    sdk::check(sdk::api().stack_create(&st));
    struct Release {
      tsr_stack* s;
      ~Release() { sdk::api().stack_release(s); }
    } release{st};
    auto call = [&](const tsr_op* o) {
      sdk::check(sdk::api().op_call(o, st));
      tsr_tensor* r = nullptr;
      sdk::check(sdk::api().stack_get_tensor(st, 0, &r));
      sdk::Tensor result = sdk::Tensor::borrow(r);
      sdk::api().stack_clear(st);
      return result;
    };
    sdk::Tensor a2 = dense(input);
    sdk::check(sdk::api().stack_push_tensor(st, a2.get()));
    const int64_t dims[2] = {M, K};
    sdk::check(sdk::api().stack_push_int_list(st, dims, 2));
    a2 = call(view);
    sdk::check(sdk::api().stack_push_tensor(st, weight.get()));
    const sdk::Tensor wt = call(t);
    sdk::Tensor r;
    if (bias) {
      sdk::check(sdk::api().stack_push_tensor(st, bias->get()));
      sdk::check(sdk::api().stack_push_tensor(st, a2.get()));
      sdk::check(sdk::api().stack_push_tensor(st, wt.get()));
      r = call(addmm);
    } else {
      sdk::check(sdk::api().stack_push_tensor(st, a2.get()));
      sdk::check(sdk::api().stack_push_tensor(st, wt.get()));
      r = call(mm);
    }
    if (out.numel() > 0) {
      // out viewed as [M, N] (it is contiguous), so the product copies in whatever its rank.
      sdk::check(sdk::api().stack_push_tensor(st, out.get()));
      const int64_t mn[2] = {M, N};
      sdk::check(sdk::api().stack_push_int_list(st, mn, 2));
      copy_cast(call(view), r);
    }
  }
  set_result(s, out);
}

}  // namespace

void register_nn(sdk::Library& lib) {
  impl<&convolution>(lib, "convolution");
  impl<&max_pool>(lib, "max_pool2d_with_indices");
  impl<&max_pool_values>(lib, "max_pool2d");
  impl<&avg_pool_out>(lib, "avg_pool2d.out");
  impl<&layer_norm>(lib, "native_layer_norm");
  impl<&batch_norm>(lib, "native_batch_norm");
  impl<&linear>(lib, "linear");
}

}  // namespace cpu
}  // namespace tessera

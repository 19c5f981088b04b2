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

// A tensor's element at a 4D index through its strides.
template <typename T>
struct View4 {
  T* base;
  int64_t s[4];
  View4(const sdk::Tensor& t) : base(t.data<T>()) {
    for (int d = 0; d < 4; ++d) s[d] = t.strides()[d];
  }
  T& at(int64_t a, int64_t b, int64_t c, int64_t d) const {
    return base[a * s[0] + b * s[1] + c * s[2] + d * s[3]];
  }
};

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

// ---- convolution ----

struct ConvParams {
  Pair stride, padding, dilation;
  int64_t groups;
};

bool conv_onednn(const sdk::Tensor& in, const sdk::Tensor& w, const sdk::Tensor* bias,
                 const sdk::Tensor& out, const ConvParams& p) {
  const tsr_dtype dt = in.dtype();
  if (dt != TSR_DTYPE_FLOAT32 && dt != TSR_DTYPE_BFLOAT16) return false;
  const int64_t g = p.groups;
  // Grouped weights are [G, O/G, I/G, kH, kW] for oneDNN: a view of ours, strides and all.
  dnnl::memory::dims wdims = w.sizes().vec(), wstrides = w.strides().vec();
  if (g > 1) {
    wdims = {g, wdims[0] / g, wdims[1], wdims[2], wdims[3]};
    wstrides = {wstrides[0] * wdims[1], wstrides[0], wstrides[1], wstrides[2], wstrides[3]};
  }
  std::string key = "conv:" + onednn::key_of(in) + "|" + onednn::key_of(w) + "|" +
                    onednn::key_of(out) + "|" + (bias ? onednn::key_of(*bias) : "-");
  for (int64_t v :
       {p.stride[0], p.stride[1], p.padding[0], p.padding[1], p.dilation[0], p.dilation[1], g}) {
    key += "," + std::to_string(v);
  }
  try {
    const dnnl::memory::desc in_md = onednn::desc(in), out_md = onednn::desc(out);
    const dnnl::memory::desc w_md(wdims, onednn::data_type(dt), wstrides);
    dnnl::memory::desc b_md;
    if (bias) b_md = onednn::desc(*bias);
    dnnl::primitive prim = onednn::cached(key, [&]() -> dnnl::primitive {
      // oneDNN counts dilation from 0 (PyTorch's dilation - 1).
      const dnnl::memory::dims strides{p.stride[0], p.stride[1]},
          dil{p.dilation[0] - 1, p.dilation[1] - 1}, pad{p.padding[0], p.padding[1]};
      auto d = bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                      dnnl::algorithm::convolution_direct, in_md,
                                                      w_md, b_md, out_md, strides, dil, pad, pad)
                    : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                      dnnl::algorithm::convolution_direct, in_md,
                                                      w_md, out_md, strides, dil, pad, pad);
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

template <typename T>
void conv_loop(const sdk::Tensor& in, const sdk::Tensor& w, const sdk::Tensor* bias,
               const sdk::Tensor& out, const ConvParams& p) {
  using C = float_t_of<T>;
  const View4<T> x(in), k(w), y(out);
  const int64_t N = out.size(0), O = out.size(1), OH = out.size(2), OW = out.size(3);
  const int64_t H = in.size(2), W = in.size(3), KH = w.size(2), KW = w.size(3);
  const int64_t IG = w.size(1), OG = O / p.groups;
  const T* b = bias ? bias->data<T>() : nullptr;
  const int64_t bs = bias ? bias->strides()[0] : 0;
  parallel(N * O, OH * OW * IG * KH * KW, [&](int64_t no) {
    const int64_t n = no / O, o = no % O, g = o / OG;
    for (int64_t oh = 0; oh < OH; ++oh) {
      for (int64_t ow = 0; ow < OW; ++ow) {
        C acc = b ? static_cast<C>(load(b[o * bs])) : C(0);
        for (int64_t c = 0; c < IG; ++c) {
          for (int64_t kh = 0; kh < KH; ++kh) {
            const int64_t ih = oh * p.stride[0] - p.padding[0] + kh * p.dilation[0];
            if (ih < 0 || ih >= H) continue;
            for (int64_t kw = 0; kw < KW; ++kw) {
              const int64_t iw = ow * p.stride[1] - p.padding[1] + kw * p.dilation[1];
              if (iw < 0 || iw >= W) continue;
              acc += static_cast<C>(load(x.at(n, g * IG + c, ih, iw))) *
                     static_cast<C>(load(k.at(o, c, kh, kw)));
            }
          }
        }
        y.at(n, o, oh, ow) = store<T>(acc);
      }
    }
  });
}

// convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
// groups) -> Tensor
void convolution(const char* op, tsr_stack* s) {
  const sdk::Tensor in = arg<sdk::Tensor>(s, 0), w = arg<sdk::Tensor>(s, 1);
  const std::optional<sdk::Tensor> bias = arg<std::optional<sdk::Tensor>>(s, 2);
  ConvParams p{pair_arg(s, 3, {1, 1}), pair_arg(s, 4, {0, 0}), pair_arg(s, 5, {1, 1}),
               arg<int64_t>(s, 8)};
  if (arg<bool>(s, 6)) sdk::fail(TSR_UNIMPLEMENTED, std::string(op) + ": transposed convolution");
  const auto size = [&](int i) {
    return (in.size(2 + i) + 2 * p.padding[i] - p.dilation[i] * (w.size(2 + i) - 1) - 1) /
               p.stride[i] +
           1;
  };
  sdk::Tensor out = sdk::Tensor::empty({in.size(0), w.size(0), size(0), size(1)}, in.dtype());
  const sdk::Tensor* b = bias ? &*bias : nullptr;
  if (out.numel() > 0 && !conv_onednn(in, w, b, out, p)) {
    dispatch<kFloating>(in.dtype(), op, [&](auto tag) {
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

// Contiguous copies of pooling inputs keep the loops simple: [planes, H, W].
sdk::Tensor dense(const sdk::Tensor& t) {
  if (t.is_contiguous()) return t;
  sdk::Tensor c = sdk::Tensor::empty(t.sizes().vec(), t.dtype());
  copy_cast(c, t);
  return c;
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
  dispatch<kFloating>(in.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = float_t_of<T>;
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

// native_batch_norm(input, weight, bias, running_mean, running_var, training=False, momentum,
// eps) -> (out, save_mean [0], save_invstd [0]).
void batch_norm(const char* op, tsr_stack* s) {
  const sdk::Tensor in = dense(arg<sdk::Tensor>(s, 0));
  const std::optional<sdk::Tensor> weight = arg<std::optional<sdk::Tensor>>(s, 1);
  const std::optional<sdk::Tensor> bias = arg<std::optional<sdk::Tensor>>(s, 2);
  const sdk::Tensor rm = dense(arg<sdk::Tensor>(s, 3)), rv = dense(arg<sdk::Tensor>(s, 4));
  const double eps = arg<double>(s, 7);
  const int64_t C = in.size(1);
  const int64_t inner = C == 0 ? 0 : in.numel() / (in.size(0) * C);
  sdk::Tensor out = sdk::Tensor::empty(in.sizes().vec(), in.dtype());
  const sdk::Tensor w = weight ? dense(*weight) : sdk::Tensor(),
                    b = bias ? dense(*bias) : sdk::Tensor();
  if (batch_norm_onednn(in, weight ? &w : nullptr, bias ? &b : nullptr, rm, rv, eps, out)) {
    sdk::api().stack_clear(s);
    sdk::internal::push(s, out);
    sdk::internal::push(s, sdk::Tensor::empty({0}, in.dtype()));
    sdk::internal::push(s, sdk::Tensor::empty({0}, in.dtype()));
    return;
  }
  dispatch<kFloating>(in.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = float_t_of<T>;
    const T* x = in.data<T>();
    T* y = out.data<T>();
    parallel(in.size(0) * C, inner, [&](int64_t nc) {
      const int64_t c = nc % C;
      const A scale = (w.defined() ? static_cast<A>(load(w.data<T>()[c])) : A(1)) /
                      std::sqrt(static_cast<A>(load(rv.data<T>()[c])) + static_cast<A>(eps));
      const A shift = (b.defined() ? static_cast<A>(load(b.data<T>()[c])) : A(0)) -
                      static_cast<A>(load(rm.data<T>()[c])) * scale;
      for (int64_t i = 0; i < inner; ++i) {
        y[nc * inner + i] = store<T>(static_cast<A>(load(x[nc * inner + i])) * scale + shift);
      }
    });
  });
  sdk::api().stack_clear(s);
  sdk::internal::push(s, out);
  sdk::internal::push(s, sdk::Tensor::empty({0}, in.dtype()));
  sdk::internal::push(s, sdk::Tensor::empty({0}, in.dtype()));
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

// NN ops, each an out= kernel that writes the outputs it is given (the dispatcher has sized
// them from the op's Meta function, and derives the functional forms from these): convolution
// (1x1 float32 ones as products on dnnl_sgemm, conv_gemm.cc; onednn_conv.cc for the other
// float32/bfloat16 ones, our direct loop otherwise); max_pool2d_with_indices (our
// loop: oneDNN has no PyTorch indices); avg_pool2d on oneDNN for float32 (onednn_nn.cc) and our
// loop otherwise; native_layer_norm (layer_norm_rows.cc for float32) and native_batch_norm (our
// loops); linear (oneDNN matmul with the bias as part of the primitive).
#include <cmath>
#include <limits>
#include <optional>
#include <tuple>
#include <vector>

#include "conv_gemm.hpp"
#include "isa.hpp"
#include "layer_norm_rows.hpp"
#include "math.hpp"
#include "onednn.hpp"
#include "onednn_conv.hpp"
#include "onednn_nn.hpp"
#include "pointwise.hpp"

namespace tessera {
namespace cpu {
namespace {

using Pair = std::array<int64_t, 2>;
using sdk::IntSpan;
using sdk::TensorView;
using OptView = std::optional<sdk::TensorView>;

// A pair argument (int[2]): one value applies to both dims, [] means `fallback`.
Pair pair_of(IntSpan v, Pair fallback) {
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

// work_of: the product of its factors as a parallel() effort, saturated: sizes of empty tensors
// and kernels are what the caller chose (a kernel of 2^40 taps is legal when the input is
// padded to match) and their product may pass int64.
int64_t work_of(std::initializer_list<int64_t> factors) {
  int64_t product = 1;
  for (int64_t f : factors) {
    if (f <= 0) return 0;
    if (product > std::numeric_limits<int64_t>::max() / f) {
      return std::numeric_limits<int64_t>::max();
    }
    product *= f;
  }
  return product;
}

// taps_inside: the kernel positions [lo, hi) of a window starting at `base` whose taps
// base + k * dilation lie in [0, size): the loops visit those alone, as PyTorch's clip the
// window to the input, so that a kernel far larger than the input costs nothing.
// (The Meta function bounds size - base by the padded input, Note [Window arithmetic in 128
// bits] in dispatcher/ops/nn_ops.cc; the divisions round up without adding, which could
// overflow for a dilation near int64's limit.)
std::pair<int64_t, int64_t> taps_inside(int64_t base, int64_t kernel, int64_t dilation,
                                        int64_t size) {
  auto ceil_div = [dilation](int64_t n) { return n / dilation + (n % dilation != 0); };
  const int64_t lo = base >= 0 ? 0 : ceil_div(-base);
  const int64_t hi = base >= size ? 0 : std::min(kernel, ceil_div(size - base));
  return {lo, std::max(lo, hi)};
}

// dense: an argument's contiguous view (of its dtype, or of `dtype`), which keeps loops simple
// (pooling: [planes, H, W]) and feeds oneDNN the layouts it handles.
ViewAs dense(const TensorView& t) { return ViewAs(t, t.dtype(), Layout::kContiguous); }
ViewAs dense(const TensorView& t, tsr_dtype dtype) { return ViewAs(t, dtype, Layout::kContiguous); }

// DenseOut: where a loop that writes row-major computes an out= output: the output itself when
// it is contiguous, else a contiguous temporary that finish() copies into it.
class DenseOut {
 public:
  explicit DenseOut(const sdk::TensorView& out) : out_(out) {
    if (!out.is_contiguous()) staged_.emplace(out.sizes(), out.dtype());
  }
  const sdk::TensorView& get() const { return staged_ ? staged_->view : out_; }
  void finish() const {
    if (staged_) copy_cast(out_, staged_->view);
  }

 private:
  sdk::TensorView out_;
  std::optional<Temporary> staged_;
};

// ---- convolution ----

// Sizes and strides of a [N, C, *spatial] tensor padded to 3 spatial dims.
struct View5 {
  std::array<int64_t, 5> size, stride;
  View5(const sdk::TensorView& t) {
    const int extra = 5 - static_cast<int>(t.dim());
    for (int d = 0; d < 5; ++d) {
      const int src = d < 2 ? d : d - extra;
      const bool missing = d >= 2 && src < 2;
      size[d] = missing ? 1 : t.size(src);
      stride[d] = missing ? 0 : t.strides()[src];
    }
  }
};

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
void conv_loop(const sdk::TensorView& in, const sdk::TensorView& w, const sdk::TensorView* bias,
               const sdk::TensorView& out, const ConvParams& p) {
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
  const int64_t taps = work_of({CG, K[0], K[1], K[2]});
  parallel(N * O, work_of({Y[0], Y[1], Y[2], taps}), [&](int64_t no) {
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
                  // Only a tap inside the input has an offset: one in a padding of 2^61 would
                  // overflow it (Note [Window arithmetic in 128 bits]).
                  inside = i >= 0 && i < I[d];
                  if (inside) offset += i * x.stride[2 + d];
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

// convolution.out(input, weight, bias, stride, padding, dilation, transposed, output_padding,
// groups, *, out), for 1, 2 or 3 spatial dims, every numeric dtype. The Meta function has
// checked the arguments and sized `out`; both paths read its sizes and strides as given.
TensorView convolution_out(const TensorView& input, const TensorView& weight, const OptView& bias,
                           IntSpan stride, IntSpan padding, IntSpan dilation, bool transposed,
                           IntSpan output_padding, int64_t groups, const TensorView& out) {
  const int dims = static_cast<int>(weight.dim()) - 2;
  const ConvParams p{dims,
                     transposed,
                     spatial_of(stride, dims, 1),
                     spatial_of(padding, dims, 0),
                     spatial_of(dilation, dims, 1),
                     spatial_of(output_padding, dims, 0),
                     groups};
  // oneDNN 2.6's deconvolution, and its blocked-layout convolutions, read a strided bias as a
  // dense one (NaN from the poisoned gaps of an interleaved bias in the conformance layouts):
  // it gets a dense copy (none where it is dense already).
  std::optional<ViewAs> dense_bias;
  if (bias) dense_bias = dense(*bias);
  const TensorView* b = dense_bias ? &*dense_bias : bias ? &*bias : nullptr;
  if (out.numel() == 0 || conv_pointwise_gemm(input, weight, b, out, p) ||
      conv_onednn(input, weight, b, out, p)) {
    return out;
  }
  if (input.dtype() == TSR_DTYPE_FLOAT16 || input.dtype() == TSR_DTYPE_BFLOAT16) {
    // oneDNN 2.6 has no float16 convolution, and a bfloat16 one only with AVX-512: float32
    // copies (exact) on its float32 convolution, rounded once into out. The same numerics as
    // our loop (float accumulation, bias added before the rounding), some 20 times faster.
    const ViewAs in32 = dense(input, TSR_DTYPE_FLOAT32), w32 = dense(weight, TSR_DTYPE_FLOAT32);
    const ViewAs b32 = b ? dense(*b, TSR_DTYPE_FLOAT32) : ViewAs();
    const Temporary out32(out.sizes(), TSR_DTYPE_FLOAT32);
    if (conv_onednn(in32, w32, b ? &b32 : nullptr, out32.view, p)) {
      copy_cast(out, out32.view);
      return out;
    }
  }
  dispatch<kNumeric>(input.dtype(), "convolution.out", [&](auto tag) {
    conv_loop<typename decltype(tag)::type>(input, weight, b, out, p);
  });
  return out;
}

// ---- pooling ----

// Pool: a pooling call over planes of [H, W] (the input's leading dims flattened), pooled to
// the [OH, OW] of the output it was given.
struct Pool {
  Pair kernel, stride, padding, dilation;
  int64_t planes, H, W, OH, OW;
};

Pool pool_of(const TensorView& in, const TensorView& out, IntSpan kernel_size, IntSpan stride,
             IntSpan padding, Pair dilation) {
  Pool p;
  p.kernel = pair_of(kernel_size, {1, 1});
  p.stride = pair_of(stride, p.kernel);
  p.padding = pair_of(padding, {0, 0});
  p.dilation = dilation;
  const int64_t nd = in.dim();
  p.H = in.size(nd - 2);
  p.W = in.size(nd - 1);
  p.OH = out.size(nd - 2);
  p.OW = out.size(nd - 1);
  p.planes = p.H * p.W == 0 ? 0 : in.numel() / (p.H * p.W);
  return p;
}

// max_pool_taps: one tap across n windows (column j reads src[j * s]): a larger value or a
// NaN takes the place of bv[j], with its index at + j * s.
template <typename T, int S>
TESSERA_CPU_CLONES void max_pool_taps(const T* __restrict src, float_t_of<T>* __restrict bv,
                                      int64_t* __restrict bi, int64_t n, int64_t s, int64_t at) {
  using C = float_t_of<T>;
  if constexpr (S != 0) s = S;
  for (int64_t j = 0; j < n; ++j) {
    const C v = static_cast<C>(load(src[j * s]));
    const bool take = (v > bv[j]) | (v != v);
    bv[j] = take ? v : bv[j];
    bi[j] = take ? at + j * s : bi[j];
  }
}

// max_pool_row: the windows of one output row whose columns [a, b) lie wholly inside the
// input row, over the rows [kh_lo, kh_hi) of the window (non-empty), a tap at a time across the
// whole row: the same taps in the same order as the one-window loop (kh, then kw), with its
// rule (a larger value or a NaN takes the place) as a branch-free select, so the compiler
// vectorizes across the row (max_pool_taps, built for AVX2 too: isa.hpp). On random data the
// one-window loop's branch mispredicts about every other tap. S: the stride along the row when 1 or
// 2 (a constant: plain or paired loads), else 0 (read from `p`).
template <typename T, int S>
void max_pool_row(const T* xp, const Pool& p, int64_t h_base, int64_t kh_lo, int64_t kh_hi,
                  int64_t a, int64_t b, T* y_row, int64_t* idx_row) {
  using C = float_t_of<T>;
  const int64_t s = S != 0 ? S : p.stride[1];
  const int64_t n = b - a;
  thread_local std::vector<C> best;
  thread_local std::vector<int64_t> best_i;
  if (static_cast<int64_t>(best.size()) < n) {
    best.resize(static_cast<size_t>(n));
    best_i.resize(static_cast<size_t>(n));
  }
  C* bv = best.data();
  int64_t* bi = best_i.data();
  bool first = true;
  for (int64_t kh = kh_lo; kh < kh_hi; ++kh) {
    const int64_t h = h_base + kh * p.dilation[0];
    for (int64_t kw = 0; kw < p.kernel[1]; ++kw) {
      // The tap's column for output column a + j is `col + j * s`.
      const int64_t col = a * s - p.padding[1] + kw * p.dilation[1];
      const T* src = xp + h * p.W + col;
      const int64_t at = h * p.W + col;
      if (first) {
        for (int64_t j = 0; j < n; ++j) {
          bv[j] = static_cast<C>(load(src[j * s]));
          bi[j] = at + j * s;
        }
        first = false;
        continue;
      }
      max_pool_taps<T, S>(src, bv, bi, n, s, at);
    }
  }
  for (int64_t j = 0; j < n; ++j) {
    y_row[a + j] = store<T>(bv[j]);
    idx_row[a + j] = bi[j];
  }
}

// max_pool2d_with_indices.out(self, kernel_size, stride, padding, dilation, ceil_mode, *, out,
// indices): indices are flat positions h * W + w in the input plane; NaN wins. ceil_mode is in
// the size of `out` already.
std::tuple<TensorView, TensorView> max_pool_out(const TensorView& self, IntSpan kernel_size,
                                                IntSpan stride, IntSpan padding, IntSpan dilation,
                                                bool /*ceil_mode*/, const TensorView& out,
                                                const TensorView& indices) {
  const ViewAs in = dense(self);
  const Pool p = pool_of(in, out, kernel_size, stride, padding, pair_of(dilation, {1, 1}));
  const DenseOut values_dst(out), indices_dst(indices);
  dispatch<kFloating>(in.dtype(), "max_pool2d_with_indices.out", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = float_t_of<T>;
    const T* x = in.data<T>();
    T* y = values_dst.get().data<T>();
    int64_t* idx = indices_dst.get().data<int64_t>();
    const int64_t taps = work_of({std::min(p.kernel[0], p.H), std::min(p.kernel[1], p.W)});
    // [a, b): the output columns whose windows lie wholly inside the input row (most of them),
    // which max_pool_row takes a row at a time, without clipping; the others are clipped one
    // by one. `span` is a window's width less one, or -1 when it passes int64 (then no window
    // is inside).
    const int64_t span = work_of({p.kernel[1] - 1, p.dilation[1]}) == INT64_MAX
                             ? -1
                             : (p.kernel[1] - 1) * p.dilation[1];
    int64_t a = 0, b = 0;
    if (span >= 0 && span < p.W) {
      while (a < p.OW && a * p.stride[1] < p.padding[1]) ++a;
      b = p.OW;
      while (b > a && (b - 1) * p.stride[1] - p.padding[1] >= p.W - span) --b;
    }
    parallel(p.planes, work_of({p.OH, p.OW, taps}), [&](int64_t plane) {
      const T* xp = x + plane * p.H * p.W;
      for (int64_t oh = 0; oh < p.OH; ++oh) {
        const int64_t h_base = oh * p.stride[0] - p.padding[0];
        const auto [kh_lo, kh_hi] = taps_inside(h_base, p.kernel[0], p.dilation[0], p.H);
        T* y_row = y + (plane * p.OH + oh) * p.OW;
        int64_t* idx_row = idx + (plane * p.OH + oh) * p.OW;
        const bool rows = kh_lo < kh_hi;
        if (rows && b > a) {
          if (p.stride[1] == 1) {
            max_pool_row<T, 1>(xp, p, h_base, kh_lo, kh_hi, a, b, y_row, idx_row);
          } else if (p.stride[1] == 2) {
            max_pool_row<T, 2>(xp, p, h_base, kh_lo, kh_hi, a, b, y_row, idx_row);
          } else {
            max_pool_row<T, 0>(xp, p, h_base, kh_lo, kh_hi, a, b, y_row, idx_row);
          }
        }
        for (int64_t ow = 0; ow < p.OW; ++ow) {
          if (rows && ow == a && b > a) ow = b;  // done above
          if (ow >= p.OW) break;
          const int64_t w_base = ow * p.stride[1] - p.padding[1];
          const auto [kw_lo, kw_hi] = taps_inside(w_base, p.kernel[1], p.dilation[1], p.W);
          C best = -std::numeric_limits<C>::infinity();
          int64_t best_i = -1;
          for (int64_t kh = kh_lo; kh < kh_hi; ++kh) {
            const int64_t h = h_base + kh * p.dilation[0];
            for (int64_t kw = kw_lo; kw < kw_hi; ++kw) {
              const int64_t w = w_base + kw * p.dilation[1];
              const C v = static_cast<C>(load(xp[h * p.W + w]));
              // PyTorch's rule: a larger value or any NaN takes the place, so the last NaN of
              // the window wins (nothing compares greater than a NaN).
              if (best_i < 0 || v > best || std::isnan(v)) {
                best = v;
                best_i = h * p.W + w;
              }
            }
          }
          y_row[ow] = store<T>(best);
          idx_row[ow] = best_i;
        }
      }
    });
  });
  values_dst.finish();
  indices_dst.finish();
  return {out, indices};
}

// avg_pool2d's dtypes on PyTorch 1.13's CPU: the floating types and int64 (its kernel
// dispatches FLOATING_TYPES_AND(Long); the narrower integer types are refused there too).
constexpr sdk::DtypeSet kAvgPoolDtypes = kFloating | sdk::dtype_bit(TSR_DTYPE_INT64);

// avg_pool2d.out(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
// divisor_override, *, out): PyTorch's divisor rules.
TensorView avg_pool_out(const TensorView& self, IntSpan kernel_size, IntSpan stride,
                        IntSpan padding, bool /*ceil_mode*/, bool count_include_pad,
                        const std::optional<int64_t>& divisor, const TensorView& out) {
  const ViewAs in = dense(self);
  const DenseOut dst_out(out);
  const TensorView& dst = dst_out.get();
  const Pool p = pool_of(in, out, kernel_size, stride, padding, {1, 1});
  // oneDNN visits every tap of a window, inside the input or not: windows much larger than the
  // input (legal with padding to match, up to 2^62 taps) run in our loop, which visits the
  // taps inside alone.
  // Its `int` parameters take strides and paddings within 32 bits only.
  const bool window_fits =
      p.kernel[0] <= 2 * p.H + 1 && p.kernel[1] <= 2 * p.W + 1 &&
      onednn::fit_int32({p.stride[0], p.stride[1], p.padding[0], p.padding[1]});
  if (!divisor && out.numel() > 0 && window_fits &&
      pool_onednn(in, dst, PoolSpec{p.kernel, p.stride, p.padding, {1, 1}, count_include_pad})) {
    dst_out.finish();
    return out;
  }
  dispatch<kAvgPoolDtypes>(in.dtype(), "avg_pool2d.out", [&](auto tag) {
    using T = typename decltype(tag)::type;
    // int64 sums in int64 and divides with C++'s truncation toward zero, as PyTorch's CPU
    // kernel does (sum / divide_factor on scalar_t).
    using C = std::conditional_t<kIsFloat<T>, float_t_of<T>, int64_t>;
    const T* x = in.data<T>();
    T* y = dst.data<T>();
    const int64_t taps = work_of({std::min(p.kernel[0], p.H), std::min(p.kernel[1], p.W)});
    parallel(p.planes, work_of({p.OH, p.OW, taps}), [&](int64_t plane) {
      const T* xp = x + plane * p.H * p.W;
      for (int64_t oh = 0; oh < p.OH; ++oh) {
        for (int64_t ow = 0; ow < p.OW; ++ow) {
          int64_t h0 = oh * p.stride[0] - p.padding[0], w0 = ow * p.stride[1] - p.padding[1];
          // min(start + kernel, size + padding) without forming start + kernel, which passes
          // int64 for a kernel near its limit (the window then ends at size + padding).
          int64_t h1 =
              p.kernel[0] < p.H + p.padding[0] - h0 ? h0 + p.kernel[0] : p.H + p.padding[0];
          int64_t w1 =
              p.kernel[1] < p.W + p.padding[1] - w0 ? w0 + p.kernel[1] : p.W + p.padding[1];
          // The padded window's area may pass int64 (each side up to 2^62): 128 bits.
          const __int128 padded = static_cast<__int128>(h1 - h0) * (w1 - w0);
          h0 = std::max<int64_t>(h0, 0);
          w0 = std::max<int64_t>(w0, 0);
          h1 = std::min(h1, p.H);
          w1 = std::min(w1, p.W);
          C sum = 0;
          for (int64_t h = h0; h < h1; ++h) {
            for (int64_t w = w0; w < w1; ++w) sum += static_cast<C>(load(xp[h * p.W + w]));
          }
          const __int128 count = divisor             ? *divisor
                                 : count_include_pad ? padded
                                                     : static_cast<__int128>(h1 - h0) * (w1 - w0);
          C mean;
          if constexpr (kIsFloat<T>) {
            mean = sum / static_cast<C>(count);
          } else {
            mean = static_cast<C>(static_cast<__int128>(sum) / count);  // truncates, as C++'s /
          }
          y[(plane * p.OH + oh) * p.OW + ow] = store<T>(mean);
        }
      }
    });
  });
  dst_out.finish();
  return out;
}

// ---- normalization ----

// native_layer_norm.out(input, normalized_shape, weight, bias, eps, *, out0, out1, out2): the
// normalized input, and per row its mean and 1 / sqrt(biased var + eps), in two passes in
// float (double for float64).
std::tuple<TensorView, TensorView, TensorView> layer_norm_out(
    const TensorView& input, IntSpan normalized_shape, const OptView& weight, const OptView& bias,
    double eps, const TensorView& out0, const TensorView& out1, const TensorView& out2) {
  const ViewAs in = dense(input);
  int64_t N = 1;
  for (int64_t d : normalized_shape) N *= d;
  const int64_t M = N == 0 ? 0 : in.numel() / N;
  const DenseOut out_dst(out0), mean_dst(out1), rstd_dst(out2);
  const TensorView &out = out_dst.get(), &mean = mean_dst.get(), &rstd = rstd_dst.get();
  const ViewAs w = weight ? dense(*weight) : ViewAs(), b = bias ? dense(*bias) : ViewAs();
  auto finish = [&] {
    out_dst.finish();
    mean_dst.finish();
    rstd_dst.finish();
    return std::tuple<TensorView, TensorView, TensorView>{out0, out1, out2};
  };
  if (in.dtype() == TSR_DTYPE_FLOAT32 && N > 0) {
    const float* wp = w.defined() ? w.data<float>() : nullptr;
    const float* bp = b.defined() ? b.data<float>() : nullptr;
    parallel(M, work_of({3, N}), [&](int64_t r) {
      layer_norm_rows_f32(in.data<float>(), r, r + 1, N, wp, bp, static_cast<float>(eps),
                          out.data<float>(), mean.data<float>(), rstd.data<float>());
    });
    return finish();
  }
  dispatch<kFloating>(in.dtype(), "native_layer_norm.out", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = float_t_of<T>;
    const T* x = in.data<T>();
    T* y = out.data<T>();
    T* mean_data = mean.data<T>();
    T* rstd_data = rstd.data<T>();
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
      mean_data[r] = store<T>(mu);
      rstd_data[r] = store<T>(inv);
    });
  });
  return finish();
}

// native_batch_norm.out(input, weight, bias, running_mean, running_var, training, momentum,
// eps, *, out, save_mean, save_invstd).
// Inference: the running statistics, folded per channel into y = x * scale + shift; save_* are
// empty ([0]).
// Training, as PyTorch's batch_norm_cpu: per channel the batch mean and biased variance
// (accumulated in double), save_invstd = 1 / sqrt(var + eps) (0 when var and eps are both 0),
// and, when given, running_mean and running_var updated in place with momentum, the variance
// unbiased (var_sum / (n - 1)).
std::tuple<TensorView, TensorView, TensorView> batch_norm_out(
    const TensorView& input, const OptView& weight, const OptView& bias,
    const OptView& running_mean, const OptView& running_var, bool training, double momentum,
    double eps, const TensorView& out, const TensorView& save_mean, const TensorView& save_invstd) {
  const ViewAs in = dense(input);
  const int64_t N = in.size(0), C = in.size(1);
  const int64_t inner = N * C == 0 ? 0 : in.numel() / (N * C);
  const DenseOut out_dst(out), mean_dst(save_mean), invstd_dst(save_invstd);
  const TensorView &dense_out = out_dst.get(), &dense_mean = mean_dst.get(),
                   &dense_invstd = invstd_dst.get();
  const ViewAs w = weight ? dense(*weight) : ViewAs(), b = bias ? dense(*bias) : ViewAs();
  auto finish = [&] {
    out_dst.finish();
    mean_dst.finish();
    invstd_dst.finish();
    return std::tuple<TensorView, TensorView, TensorView>{out, save_mean, save_invstd};
  };
  dispatch<kFloating>(in.dtype(), "native_batch_norm.out", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = float_t_of<T>;
    const T* x = in.data<T>();
    T* y = dense_out.data<T>();
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
        dense_mean.data<T>()[c] = store<T>(static_cast<A>(mu));
        dense_invstd.data<T>()[c] = store<T>(static_cast<A>(invstd[c]));
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
  return finish();
}

// ---- linear ----

// linear.out(input, weight, bias=None, *, out): float32 (and bfloat16 where oneDNN's bfloat16
// matmul is native) through one oneDNN matmul with the bias in the primitive; other dtypes (or
// shapes oneDNN refuses) through the runtime's ops.
TensorView linear_out(const TensorView& input, const TensorView& weight, const OptView& bias,
                      const TensorView& out_arg) {
  const int64_t K = input.size(-1), N = weight.size(0);
  int64_t M = 1;  // the rows: every dim but the last (also when that one is 0)
  for (int64_t d = 0; d + 1 < input.dim(); ++d) M *= input.size(d);
  const DenseOut out_dst(out_arg);
  const TensorView& out = out_dst.get();
  const tsr_dtype dt = input.dtype();
  bool done = false;
  if ((dt == TSR_DTYPE_FLOAT32 || (dt == TSR_DTYPE_BFLOAT16 && onednn::native_bf16_matmul())) &&
      input.is_contiguous() && M > 0 && K > 0) {
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
      onednn::Threads threads(work_of({M, N, K}));  // the primitive made and run on it
      onednn::Key key(onednn::kLinear);
      key.add(M).add(weight).add(static_cast<int64_t>(bias.has_value()));
      if (bias) key.add(*bias);
      onednn::Call& call = onednn::cached_call(key, [&] {
        auto d = bias ? dnnl::matmul::desc(a_md, w_md, b_md, o_md)
                      : dnnl::matmul::desc(a_md, w_md, o_md);
        onednn::Call c(dnnl::matmul(dnnl::matmul::primitive_desc(d, onednn::engine())),
                       {{DNNL_ARG_SRC, a_md}, {DNNL_ARG_WEIGHTS, w_md}, {DNNL_ARG_DST, o_md}});
        if (bias) {
          c.args.emplace_back(DNNL_ARG_BIAS,
                              dnnl::memory(b_md, onednn::engine(), DNNL_MEMORY_NONE));
        }
        return c;
      });
      if (bias) {
        call.run({input.data_ptr(), weight.data_ptr(), out.data_ptr(), bias->data_ptr()});
      } else {
        call.run({input.data_ptr(), weight.data_ptr(), out.data_ptr()});
      }
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
    const ViewAs dense_input = dense(input);
    sdk::check(sdk::api().stack_push_tensor(st, dense_input.get()));
    const int64_t dims[2] = {M, K};
    sdk::check(sdk::api().stack_push_int_list(st, dims, 2));
    const sdk::Tensor a2 = call(view);
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
      const sdk::Tensor out_mn = call(view);
      copy_cast(sdk::view_of(out_mn), sdk::view_of(r));
    }
  }
  out_dst.finish();
  return out_arg;
}

}  // namespace

void register_nn(sdk::Library& lib) {
  lib.impl<&convolution_out>(TESSERA_OP("convolution.out"));
  lib.impl<&max_pool_out>(TESSERA_OP("max_pool2d_with_indices.out"));
  lib.impl<&avg_pool_out>(TESSERA_OP("avg_pool2d.out"));
  lib.impl<&layer_norm_out>(TESSERA_OP("native_layer_norm.out"));
  lib.impl<&batch_norm_out>(TESSERA_OP("native_batch_norm.out"));
  lib.impl<&linear_out>(TESSERA_OP("linear.out"));
}

}  // namespace cpu
}  // namespace tessera

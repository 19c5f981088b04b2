// The GPU nn ops' per-thread work (native_layer_norm, native_batch_norm, avg_pool2d,
// max_pool2d_with_indices, convolution), as code that compiles for the device (kernels_nn.cu)
// and for the host (tests/nn_test.cc runs it for every thread of every block, phase by phase
// between the barriers, as a GPU would). nn_plan.h has the host side.
//
// Note [GPU nn kernels]
// Operands are raw pointers of one dtype S (the input's; the plugin checks that every tensor
// of a call has it) with strides in elements, and 64-bit indices throughout: these ops' inputs
// (an image batch, a convolution's output) pass 2^31 elements more readily than an elementwise
// op's, and their per-element work (a window, a row) dwarfs the divisions.
// - Normalizations: one block of kNnThreads threads per normalized row (layer norm: a row of
//   the input seen as [rows, cols]; batch norm: a channel, over the batch and the spatial
//   dims; rows past kNnMaxBlocks are the blocks' next ones). Thread t folds elements t, t +
//   kNnThreads, ... into a Welford accumulator
//   (*Partial), the accumulators combine pairwise in shared memory (WelfordStep, halving the
//   distance, a barrier between steps; Chan's combination), every thread then reads the
//   statistics from slot 0 (*Stats) and writes its elements (*Write); thread 0 also writes the
//   per-row outputs (mean, rstd; batch norm's save_* and running statistics). Accumulation is
//   PyTorch's CUDA one: float for float16, bfloat16 and float32, double for float64.
// - Pooling and convolution: one thread per output element (a grid-stride loop past
//   kNnMaxBlocks blocks), kNnThreads to a block; a thread
//   reads its whole window (pooling) or its receptive field (convolution, transposed too, by
//   gathering the inputs whose strided positions land on the output).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "elementwise.h"

namespace tessera {
namespace gpu {

inline constexpr int kNnThreads = 256;
// At most this many blocks per launch (every vendor's grid takes it); a kernel's blocks stride
// over the rows or elements beyond (row = block, block + grid, ...).
inline constexpr uint32_t kNnMaxBlocks = 65535;

// NnShape: an index space's sizes, row-major; an operand gives its own strides (elements).
struct NnShape {
  int32_t ndim;
  int64_t sizes[kMaxDims];
};

// The element offset of linear index `i` (< the shape's numel, so every size is > 0). The
// outermost dim takes what is left without a division, so a merged dense group (one dim)
// costs none.
TSR_GPU_HD TSR_GPU_INLINE int64_t OffsetOf(const NnShape& s, const int64_t* strides, int64_t i) {
  if (s.ndim == 0) return 0;
  int64_t offset = 0;
  for (int d = s.ndim - 1; d > 0; --d) {
    const int64_t q = i / s.sizes[d];
    offset += (i - q * s.sizes[d]) * strides[d];
    i = q;
  }
  return offset + i * strides[0];
}

// NormFloat: what the normalizations of S accumulate in.
template <typename S>
using NormFloat = std::conditional_t<std::is_same_v<S, double>, double, float>;

// Welford's running (count, mean, sum of squared deviations).
template <typename F>
struct Welford {
  int64_t n;
  F mean;
  F m2;
};

template <typename F>
TSR_GPU_HD TSR_GPU_INLINE Welford<F> WelfordAdd(Welford<F> a, F x) {
  const int64_t n = a.n + 1;
  const F delta = x - a.mean;
  const F mean = a.mean + delta / static_cast<F>(n);
  return Welford<F>{n, mean, a.m2 + delta * (x - mean)};
}

// Chan's combination of two accumulators (a: the lower threads').
template <typename F>
TSR_GPU_HD TSR_GPU_INLINE Welford<F> WelfordCombine(Welford<F> a, Welford<F> b) {
  if (b.n == 0) return a;
  if (a.n == 0) return b;
  const int64_t n = a.n + b.n;
  const F delta = b.mean - a.mean;
  const F nb_over_n = static_cast<F>(b.n) / static_cast<F>(n);
  return Welford<F>{n, a.mean + delta * nb_over_n,
                    a.m2 + b.m2 + delta * delta * static_cast<F>(a.n) * nb_over_n};
}

// One step of the block's tree: thread `thread` at distance `half`.
template <typename F>
TSR_GPU_HD TSR_GPU_INLINE void WelfordStep(Welford<F>* shared, uint32_t thread, uint32_t half) {
  if (thread < half) shared[thread] = WelfordCombine(shared[thread], shared[thread + half]);
}

template <typename S>
TSR_GPU_HD TSR_GPU_INLINE NormFloat<S> LoadF(const char* base, int64_t offset) {
  return static_cast<NormFloat<S>>(Widen(reinterpret_cast<const S*>(base)[offset]));
}
template <typename S>
TSR_GPU_HD TSR_GPU_INLINE void StoreF(char* base, int64_t offset, NormFloat<S> v) {
  reinterpret_cast<S*>(base)[offset] = Narrow<S>(static_cast<OpMath<S>>(v));
}

// --- native_layer_norm ----------------------------------------------------------------------

// LayerNormArgs: the input seen as [rows, cols] (rows: the dims before the normalized ones).
// weight and bias (the normalized shape) may be null; mean and rstd have the input's rank with
// the normalized dims of size 1, so they index by the row dims only.
struct LayerNormArgs {
  const char* x;
  char* y;
  const char* weight;
  const char* bias;
  char* mean;
  char* rstd;
  int64_t rows;
  int64_t cols;
  double eps;
  NnShape row_shape;
  NnShape col_shape;
  int64_t x_row[kMaxDims], y_row[kMaxDims], mean_row[kMaxDims], rstd_row[kMaxDims];
  int64_t x_col[kMaxDims], y_col[kMaxDims], w_col[kMaxDims], b_col[kMaxDims];
};

template <typename S>
TSR_GPU_HD TSR_GPU_INLINE Welford<NormFloat<S>> LayerNormPartial(const LayerNormArgs& a,
                                                                 int64_t row, uint32_t thread) {
  using F = NormFloat<S>;
  Welford<F> w{0, F(0), F(0)};
  const int64_t base = OffsetOf(a.row_shape, a.x_row, row);
  for (int64_t i = thread; i < a.cols; i += kNnThreads) {
    w = WelfordAdd(w, LoadF<S>(a.x, base + OffsetOf(a.col_shape, a.x_col, i)));
  }
  return w;
}

template <typename F>
struct NormStats {
  F mean;
  F rstd;
};

// The row's mean and 1 / sqrt(biased variance + eps); an empty row's are NaN (0 / 0, as the
// CPU backend's).
template <typename F>
TSR_GPU_HD TSR_GPU_INLINE NormStats<F> LayerNormStats(const Welford<F>& w, double eps) {
  if (w.n == 0) return NormStats<F>{F(NAN), F(NAN)};
  F var = w.m2 / static_cast<F>(w.n);
  if (var < F(0)) var = F(0);
  return NormStats<F>{w.mean, F(1) / std::sqrt(var + static_cast<F>(eps))};
}

template <typename S>
TSR_GPU_HD TSR_GPU_INLINE void LayerNormWrite(const LayerNormArgs& a, int64_t row, uint32_t thread,
                                              NormStats<NormFloat<S>> st) {
  using F = NormFloat<S>;
  const int64_t xb = OffsetOf(a.row_shape, a.x_row, row);
  const int64_t yb = OffsetOf(a.row_shape, a.y_row, row);
  for (int64_t i = thread; i < a.cols; i += kNnThreads) {
    F v = (LoadF<S>(a.x, xb + OffsetOf(a.col_shape, a.x_col, i)) - st.mean) * st.rstd;
    if (a.weight != nullptr) v *= LoadF<S>(a.weight, OffsetOf(a.col_shape, a.w_col, i));
    if (a.bias != nullptr) v += LoadF<S>(a.bias, OffsetOf(a.col_shape, a.b_col, i));
    StoreF<S>(a.y, yb + OffsetOf(a.col_shape, a.y_col, i), v);
  }
  if (thread == 0) {
    StoreF<S>(a.mean, OffsetOf(a.row_shape, a.mean_row, row), st.mean);
    StoreF<S>(a.rstd, OffsetOf(a.row_shape, a.rstd_row, row), st.rstd);
  }
}

// --- native_batch_norm ----------------------------------------------------------------------

// BatchNormArgs: the input [batch, channels, *inner]; one block per channel. Optional
// operands are null; save_mean and save_invstd are written in training only.
struct BatchNormArgs {
  const char* x;
  char* y;
  const char* weight;
  const char* bias;
  char* running_mean;
  char* running_var;
  char* save_mean;
  char* save_invstd;
  int64_t batch;
  int64_t channels;
  int64_t inner;  // the product of the dims after the channel's
  bool training;
  double momentum;
  double eps;
  int64_t x_n, x_c, y_n, y_c;  // strides of the batch and channel dims
  int64_t weight_s, bias_s, rm_s, rv_s, sm_s, si_s;
  NnShape inner_shape;
  int64_t x_inner[kMaxDims], y_inner[kMaxDims];
};

// Element j of channel c's reduction (j = n * inner + i), as an offset in x or y.
TSR_GPU_HD TSR_GPU_INLINE int64_t BatchNormOffset(const BatchNormArgs& a, bool out, int64_t c,
                                                  int64_t j) {
  const int64_t n = j / a.inner, i = j - n * a.inner;
  return out ? n * a.y_n + c * a.y_c + OffsetOf(a.inner_shape, a.y_inner, i)
             : n * a.x_n + c * a.x_c + OffsetOf(a.inner_shape, a.x_inner, i);
}

template <typename S>
TSR_GPU_HD TSR_GPU_INLINE Welford<NormFloat<S>> BatchNormPartial(const BatchNormArgs& a, int64_t c,
                                                                 uint32_t thread) {
  using F = NormFloat<S>;
  Welford<F> w{0, F(0), F(0)};
  if (!a.training) return w;
  const int64_t count = a.batch * a.inner;
  for (int64_t j = thread; j < count; j += kNnThreads) {
    w = WelfordAdd(w, LoadF<S>(a.x, BatchNormOffset(a, false, c, j)));
  }
  return w;
}

// The channel's (scale, shift) with y = x * scale + shift. Training: the batch's mean and
// invstd = 1 / sqrt(biased var + eps) (0 when var and eps are both 0, as PyTorch), and thread
// 0 writes save_mean, save_invstd and the running statistics (momentum; the variance unbiased,
// m2 / (n - 1)). Inference: the running statistics.
template <typename S>
TSR_GPU_HD TSR_GPU_INLINE NormStats<NormFloat<S>> BatchNormStats(const BatchNormArgs& a, int64_t c,
                                                                 uint32_t thread,
                                                                 const Welford<NormFloat<S>>& w) {
  using F = NormFloat<S>;
  F mean, invstd;
  if (a.training) {
    const F n = static_cast<F>(w.n);
    mean = w.n == 0 ? F(NAN) : w.mean;
    const F var = w.m2 / n;
    invstd = var == F(0) && a.eps == 0 ? F(0) : F(1) / std::sqrt(var + static_cast<F>(a.eps));
    if (thread == 0) {
      StoreF<S>(a.save_mean, c * a.sm_s, mean);
      StoreF<S>(a.save_invstd, c * a.si_s, invstd);
      const F m = static_cast<F>(a.momentum);
      if (a.running_mean != nullptr) {
        const F old = LoadF<S>(a.running_mean, c * a.rm_s);
        StoreF<S>(a.running_mean, c * a.rm_s, m * mean + (F(1) - m) * old);
      }
      if (a.running_var != nullptr) {
        const F unbiased = w.m2 / static_cast<F>(w.n - 1);
        const F old = LoadF<S>(a.running_var, c * a.rv_s);
        StoreF<S>(a.running_var, c * a.rv_s, m * unbiased + (F(1) - m) * old);
      }
    }
  } else {
    mean = LoadF<S>(a.running_mean, c * a.rm_s);
    invstd = F(1) / std::sqrt(LoadF<S>(a.running_var, c * a.rv_s) + static_cast<F>(a.eps));
  }
  const F scale = (a.weight != nullptr ? LoadF<S>(a.weight, c * a.weight_s) : F(1)) * invstd;
  const F shift = (a.bias != nullptr ? LoadF<S>(a.bias, c * a.bias_s) : F(0)) - mean * scale;
  return NormStats<F>{scale, shift};  // (scale, shift) in (mean, rstd)'s places
}

template <typename S>
TSR_GPU_HD TSR_GPU_INLINE void BatchNormWrite(const BatchNormArgs& a, int64_t c, uint32_t thread,
                                              NormStats<NormFloat<S>> scale_shift) {
  const int64_t count = a.batch * a.inner;
  for (int64_t j = thread; j < count; j += kNnThreads) {
    StoreF<S>(a.y, BatchNormOffset(a, true, c, j),
              LoadF<S>(a.x, BatchNormOffset(a, false, c, j)) * scale_shift.mean + scale_shift.rstd);
  }
}

// --- pooling --------------------------------------------------------------------------------

// Pool2dArgs: the input [*planes, H, W] (1 or 2 plane dims) pooled to [*planes, OH, OW].
struct Pool2dArgs {
  const char* x;
  char* y;
  char* indices;  // max pooling: int64, the window's winner as h * W + w
  int64_t planes, H, W, OH, OW;
  int64_t kernel[2], stride[2], padding[2], dilation[2];
  bool count_include_pad;
  int64_t divisor;  // avg_pool2d's divisor_override, 0 when none
  NnShape plane_shape;
  int64_t x_plane[kMaxDims], y_plane[kMaxDims], i_plane[kMaxDims];
  int64_t x_h, x_w, y_h, y_w, i_h, i_w;
};

TSR_GPU_HD TSR_GPU_INLINE int64_t PoolElements(const Pool2dArgs& a) {
  return a.planes * a.OH * a.OW;
}

// PoolTaps: the kernel positions [*lo, *hi) of a window starting at `base` whose taps base + k *
// dilation lie in [0, size). The threads visit those alone, as PyTorch's kernels clip their
// windows to the input: a kernel may have 2^40 taps a side when the input is padded to match
// (Note [Window arithmetic in 128 bits] in dispatcher/ops/nn_ops.cc bounds size - base). The
// divisions round up without adding, which could overflow for a dilation near int64's limit.
TSR_GPU_HD TSR_GPU_INLINE void PoolTaps(int64_t base, int64_t kernel, int64_t dilation,
                                        int64_t size, int64_t* lo, int64_t* hi) {
  const int64_t below = -base, inside = size - base;
  *lo = base >= 0 ? 0 : below / dilation + (below % dilation != 0);
  *hi = base >= size ? 0 : inside / dilation + (inside % dilation != 0);
  if (*hi > kernel) *hi = kernel;
  if (*hi < *lo) *hi = *lo;
}

// MaxPoolThread: the maximum of output element `o`'s window and its index; a larger value or
// any NaN takes the place, so the last NaN of the window (row-major) wins, as in PyTorch's CPU
// and CUDA kernels and the CPU backend.
template <typename S>
TSR_GPU_HD TSR_GPU_INLINE void MaxPoolThread(const Pool2dArgs& a, int64_t o) {
  using C = OpMath<S>;
  const int64_t ow = o % a.OW, oh = (o / a.OW) % a.OH, plane = o / (a.OW * a.OH);
  const S* x = reinterpret_cast<const S*>(a.x) + OffsetOf(a.plane_shape, a.x_plane, plane);
  C best = -C(INFINITY);
  int64_t best_i = -1;
  const int64_t h_base = oh * a.stride[0] - a.padding[0], w_base = ow * a.stride[1] - a.padding[1];
  int64_t kh_lo, kh_hi, kw_lo, kw_hi;
  PoolTaps(h_base, a.kernel[0], a.dilation[0], a.H, &kh_lo, &kh_hi);
  PoolTaps(w_base, a.kernel[1], a.dilation[1], a.W, &kw_lo, &kw_hi);
  for (int64_t kh = kh_lo; kh < kh_hi; ++kh) {
    const int64_t h = h_base + kh * a.dilation[0];
    for (int64_t kw = kw_lo; kw < kw_hi; ++kw) {
      const int64_t w = w_base + kw * a.dilation[1];
      const C v = Widen(x[h * a.x_h + w * a.x_w]);
      if (best_i < 0 || v > best || !(v == v)) {
        best = v;
        best_i = h * a.W + w;
      }
    }
  }
  reinterpret_cast<S*>(a.y)[OffsetOf(a.plane_shape, a.y_plane, plane) + oh * a.y_h + ow * a.y_w] =
      Narrow<S>(best);
  reinterpret_cast<int64_t*>(
      a.indices)[OffsetOf(a.plane_shape, a.i_plane, plane) + oh * a.i_h + ow * a.i_w] = best_i;
}

// AvgPoolThread: PyTorch's divisor rules: divisor_override, else the window clipped to the
// padded input (count_include_pad) or to the input. Floating types sum in float (double for
// float64); int64 sums in int64 and divides truncating toward zero, as the CPU backend.
template <typename S>
TSR_GPU_HD TSR_GPU_INLINE void AvgPoolThread(const Pool2dArgs& a, int64_t o) {
  using C = std::conditional_t<kIsFloat<S>, NormFloat<S>, int64_t>;
  const int64_t ow = o % a.OW, oh = (o / a.OW) % a.OH, plane = o / (a.OW * a.OH);
  const S* x = reinterpret_cast<const S*>(a.x) + OffsetOf(a.plane_shape, a.x_plane, plane);
  int64_t h0 = oh * a.stride[0] - a.padding[0], w0 = ow * a.stride[1] - a.padding[1];
  // min(start + kernel, size + padding) without forming start + kernel, which passes int64
  // for a kernel near its limit (the window then ends at size + padding).
  int64_t h1 = a.kernel[0] < a.H + a.padding[0] - h0 ? h0 + a.kernel[0] : a.H + a.padding[0];
  int64_t w1 = a.kernel[1] < a.W + a.padding[1] - w0 ? w0 + a.kernel[1] : a.W + a.padding[1];
  // The padded window's sides; their product may pass int64 (2^40 a side), so it is never
  // formed in int64.
  const int64_t padded_h = h1 - h0, padded_w = w1 - w0;
  h0 = h0 < 0 ? 0 : h0;
  w0 = w0 < 0 ? 0 : w0;
  h1 = h1 > a.H ? a.H : h1;
  w1 = w1 > a.W ? a.W : w1;
  C sum = 0;
  for (int64_t h = h0; h < h1; ++h) {
    for (int64_t w = w0; w < w1; ++w) sum += static_cast<C>(Widen(x[h * a.x_h + w * a.x_w]));
  }
  C v;
  if (a.divisor != 0) {
    v = sum / static_cast<C>(a.divisor);
  } else if (!a.count_include_pad) {
    const int64_t count = (h1 - h0) * (w1 - w0);          // within the input: fits
    v = count == 0 ? C(0) : sum / static_cast<C>(count);  // no empty window reaches here
  } else if constexpr (kIsFloat<S>) {
    v = sum / static_cast<C>(static_cast<double>(padded_h) * static_cast<double>(padded_w));
  } else {
    // Truncating twice is truncating once for positive divisors: no 128-bit product.
    v = sum / padded_h / padded_w;
  }
  reinterpret_cast<S*>(a.y)[OffsetOf(a.plane_shape, a.y_plane, plane) + oh * a.y_h + ow * a.y_w] =
      Narrow<S>(static_cast<OpMath<S>>(v));
}

// --- convolution ----------------------------------------------------------------------------

// ConvArgs: 1, 2 or 3 spatial dims seen as 3 (a missing leading dim has size 1 and stride
// 0): input [N, C, *I], weight [O, C/G, *K] (transposed: [C, O/G, *K]), bias [O] or null,
// output [N, O, *Y]. Strides in elements.
struct ConvArgs {
  const char* x;
  const char* w;
  const char* bias;
  char* y;
  int64_t N, C, O, groups;
  int64_t I[3], K[3], Y[3];
  int64_t stride[3], padding[3], dilation[3];
  int64_t xs[5], ws[5], ys[5];
  int64_t bias_s;
  bool transposed;
};

// What a convolution of S accumulates in: float (double for float64); for the integer types a
// uint64_t, whose wrapping sums and products are PyTorch's integer GEMM's once narrowed to S.
template <typename S>
using ConvAcc = std::conditional_t<kIsFloat<S>, NormFloat<S>, uint64_t>;

template <typename S>
TSR_GPU_HD TSR_GPU_INLINE ConvAcc<S> ConvLoad(S v) {
  if constexpr (kIsFloat<S>) {
    return static_cast<ConvAcc<S>>(Widen(v));
  } else {
    return static_cast<uint64_t>(static_cast<int64_t>(v));
  }
}

TSR_GPU_HD TSR_GPU_INLINE int64_t ConvElements(const ConvArgs& a) {
  return a.N * a.O * a.Y[0] * a.Y[1] * a.Y[2];
}

// ConvThread: output element `o` (row-major over [N, O, *Y]).
template <typename S>
TSR_GPU_HD TSR_GPU_INLINE void ConvThread(const ConvArgs& a, int64_t o) {
  if (o >= ConvElements(a)) return;
  using A = ConvAcc<S>;
  int64_t pos[3];
  int64_t rest = o;
  for (int d = 2; d >= 0; --d) {
    pos[d] = rest % a.Y[d];
    rest /= a.Y[d];
  }
  const int64_t oc = rest % a.O, n = rest / a.O;
  const int64_t OG = a.O / a.groups, CG = a.C / a.groups, g = oc / OG;
  const S* x = reinterpret_cast<const S*>(a.x) + n * a.xs[0] + g * CG * a.xs[1];
  const S* w = reinterpret_cast<const S*>(a.w);
  A acc = a.bias != nullptr ? ConvLoad(reinterpret_cast<const S*>(a.bias)[oc * a.bias_s]) : A(0);
  for (int64_t k0 = 0; k0 < a.K[0]; ++k0) {
    for (int64_t k1 = 0; k1 < a.K[1]; ++k1) {
      for (int64_t k2 = 0; k2 < a.K[2]; ++k2) {
        const int64_t k[3] = {k0, k1, k2};
        int64_t offset = 0;
        bool inside = true;
        for (int d = 0; d < 3 && inside; ++d) {
          int64_t i;
          if (!a.transposed) {
            i = pos[d] * a.stride[d] - a.padding[d] + k[d] * a.dilation[d];
          } else {
            // output = input * stride - padding + k * dilation, solved for the input.
            const int64_t t = pos[d] + a.padding[d] - k[d] * a.dilation[d];
            if (t < 0 || t % a.stride[d] != 0) {
              inside = false;
              break;
            }
            i = t / a.stride[d];
          }
          // Only a tap inside the input has an offset: one in a padding of 2^61 would overflow
          // it (Note [Window arithmetic in 128 bits] in dispatcher/ops/nn_ops.cc).
          inside = i >= 0 && i < a.I[d];
          if (inside) offset += i * a.xs[2 + d];
        }
        if (!inside) continue;
        const int64_t koff = k0 * a.ws[2] + k1 * a.ws[3] + k2 * a.ws[4];
        const int64_t wbase =
            a.transposed ? g * CG * a.ws[0] + (oc - g * OG) * a.ws[1] + koff : oc * a.ws[0] + koff;
        const int64_t wstep = a.transposed ? a.ws[0] : a.ws[1];
        for (int64_t c = 0; c < CG; ++c) {
          acc += ConvLoad(x[c * a.xs[1] + offset]) * ConvLoad(w[wbase + c * wstep]);
        }
      }
    }
  }
  S* y = reinterpret_cast<S*>(a.y);
  const int64_t yo =
      n * a.ys[0] + oc * a.ys[1] + pos[0] * a.ys[2] + pos[1] * a.ys[3] + pos[2] * a.ys[4];
  if constexpr (kIsFloat<S>) {
    y[yo] = Narrow<S>(static_cast<OpMath<S>>(acc));
  } else {
    y[yo] = static_cast<S>(acc);
  }
}

}  // namespace gpu
}  // namespace tessera

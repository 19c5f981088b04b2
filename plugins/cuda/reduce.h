// The GPU reductions' per-thread work (sum, mean, prod, amax, amin, argmax, argmin, var, std,
// and the softmax passes), as code that compiles for the device (kernels_reduce.cu) and for the
// host (tests/reduce_test.cc runs it for every thread of every block, phase by phase, as a GPU
// would). reduce_plan.h has the host side.
//
// Note [GPU reductions]
// A reduction maps each output element (an index over the kept dimensions) to the elements of
// the input it reduces (an index over the reduced dimensions, row-major, so argmax over every
// dimension counts as in the flattened input). A block of kReduceThreads threads takes
// kReduceThreads / T outputs, T threads each (T a power of two, the smallest >= the reduced
// count, at most kReduceThreads): thread `lane` of an output folds the elements lane, lane + T,
// ... into its accumulator (ThreadPartial), the T accumulators then combine pairwise in shared
// memory (CombineStep, halving the distance each step, a barrier between steps), and lane 0
// writes the result (WriteResult). So a reduction of many short rows (softmax over 10 classes)
// keeps every thread busy, and a long one uses a whole block per output (or, where few outputs
// would leave the GPU idle, several: Note [Split reductions]). Shared memory and
// barriers, not warp shuffles: the warp is 32 threads on NVIDIA and 64 on AMD's gfx9, and the
// same code must be right on both. Accumulators are PyTorch's CUDA ones: float for the 16-bit
// floats and float32, double for float64, int64 for integers and bool; var and std use
// Welford's update and Chan's combination. Softmax is two passes over a row in one kernel:
// the maximum and the sum of exp(x - max) together (SoftmaxStatsReducer), then each lane writes
// its elements. max.dim / min.dim write a second output, the winner's int64 index
// (ReduceArgs::indices). The scans (cumsum, cumprod: scan.h) run on the same plans. A launch whose
// elements or byte offsets reach 2^31 runs the same code over 64-bit indices (WideReduceArgs: plain
// division instead of FastDivmod); every other one keeps 32-bit arithmetic, the fast case.
//
// Note [Split reductions]
// One block per output leaves most of a GPU idle when there are few outputs and long rows (a
// full `sum` of 16M elements: one block on one of 132 SMs). Such a reduction is split: each
// output's row is cut across `splits` blocks of kReduceThreads threads (the plan picks splits so
// that the launch has about kSplitTargetBlocks blocks and each block folds at least
// kSplitMinElements elements). Thread t of split s folds the elements s * kReduceThreads + t,
// then every kReduceThreads * splits further (coalesced, as the unsplit kernel's lanes), the
// block combines its threads in shared memory and writes its accumulator to a workspace
// (SplitThreadPartial). A second launch combines each output's `splits` accumulators in a fixed
// order, finish_threads threads an output, and writes the result (FinishThreadPartial): two
// passes, no atomics, so the result is the same on every run (deterministic, as PyTorch's
// reductions are), though not bit for bit the unsplit order's. Softmax and the scans write
// every element and are never split.
#pragma once

#include <cstdint>
#include <type_traits>

#include "elementwise.h"

namespace tessera {
namespace gpu {

inline constexpr int kReduceThreads = 256;
// The elements a thread of a wide (64-bit) launch folds into one partial (ThreadPartial).
inline constexpr uint32_t kWideChunk = 4096;
// Split reductions (Note [Split reductions]): the least elements a split block folds, the
// blocks a split launch aims at (several per SM on the largest GPUs), and the workspace's bytes
// per accumulator (every reducer's Acc fits; kernels_reduce.cu checks).
inline constexpr int64_t kSplitMinElements = 64 * kReduceThreads;
inline constexpr int64_t kSplitTargetBlocks = 1024;
inline constexpr size_t kSplitAccBytes = 32;
// The most splits a plan takes (a test's request included): a split launch's thread steps
// kReduceThreads * splits elements, which must stay far inside 32 bits.
inline constexpr int64_t kMaxSplits = int64_t{1} << 16;

// Every reduction of kernels_reduce.cu.
enum class ReduceKind : int32_t {
  kSum,
  kMean,
  kProd,
  kAmax,
  kAmin,
  kArgmax,
  kArgmin,
  kVar,
  kStd,
  kSoftmax,
  kLogSoftmax,
  kMaxDim,  // max.dim / min.dim: the values and their indices
  kMinDim,
  kAny,
  kAll,
  kLogSumExp,
  kNorm,  // the p-norm, p passed as the launch's parameter
};

// ReduceDtypes: the compute dtypes a reduction has kernels for (PyTorch's CUDA sets): the
// output's dtype for sum, mean and prod (the input is converted to it), the input's otherwise.
constexpr uint32_t ReduceDtypes(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kSum:
    case ReduceKind::kProd:
    case ReduceKind::kAmax:
    case ReduceKind::kAmin:
    case ReduceKind::kMaxDim:
    case ReduceKind::kMinDim:
    case ReduceKind::kAny:
    case ReduceKind::kAll:
      return kAllDtypes;
    case ReduceKind::kArgmax:
    case ReduceKind::kArgmin:
      return kNumericDtypes;
    default:
      return kFloatingDtypes;
  }
}

// WideDivmod: FastDivmod's interface over 64-bit indices, by plain division (the wide launches
// are the rare ones: 2^31 elements or bytes and more).
struct WideDivmod {
  uint64_t divisor = 1;
  WideDivmod() = default;
  explicit WideDivmod(uint64_t d) : divisor(d) {}
  TSR_GPU_HD TSR_GPU_INLINE uint64_t Div(uint64_t n) const { return n / divisor; }
};

// ReduceArgsT: one reduction launch, its element indices and byte offsets of type I: uint32_t
// (ReduceArgs, every launch whose elements and bytes stay below 2^31) or uint64_t
// (WideReduceArgs, the others: an LLM's logits of 8192 x 128256 bfloat16 span 2.1 GB). Sizes
// innermost first; strides in bytes.
template <typename I>
struct ReduceArgsT {
  using Index = I;
  using Divmod = std::conditional_t<std::is_same_v<I, uint32_t>, FastDivmod, WideDivmod>;
  const char* in;
  char* out;
  int32_t in_dtype;
  int32_t out_dtype;
  I outputs;
  I reduced;
  uint32_t threads_per_output;  // T
  int32_t kept_ndim;
  int32_t reduced_ndim;
  Divmod kept_sizes[kMaxDims];
  I kept_in[kMaxDims];
  I kept_out[kMaxDims];
  Divmod reduced_sizes[kMaxDims];
  I reduced_in[kMaxDims];
  I reduced_out[kMaxDims];  // softmax: the output's strides along the reduced dimension
  char* indices;            // max.dim / min.dim: the int64 indices; null otherwise
  I kept_indices[kMaxDims];
};
using ReduceArgs = ReduceArgsT<uint32_t>;
using WideReduceArgs = ReduceArgsT<uint64_t>;

// The byte offsets of output `o`'s first input element and of its output element.
template <typename A, typename I = typename A::Index>
TSR_GPU_HD TSR_GPU_INLINE void KeptOffsets(const A& a, I o, I* in, I* out) {
  *in = 0;
  *out = 0;
  for (int d = 0; d < a.kept_ndim; ++d) {
    const I q = a.kept_sizes[d].Div(o);
    const I r = o - q * a.kept_sizes[d].divisor;
    *in += r * a.kept_in[d];
    *out += r * a.kept_out[d];
    o = q;
  }
}
// The byte offset of output `o`'s element of the indices (max.dim / min.dim).
template <typename A, typename I = typename A::Index>
TSR_GPU_HD TSR_GPU_INLINE I KeptIndexOffset(const A& a, I o) {
  I offset = 0;
  for (int d = 0; d < a.kept_ndim; ++d) {
    const I q = a.kept_sizes[d].Div(o);
    offset += (o - q * a.kept_sizes[d].divisor) * a.kept_indices[d];
    o = q;
  }
  return offset;
}
// The byte offsets of reduced element `i` in the input and (softmax) the output.
template <typename A, typename I = typename A::Index>
TSR_GPU_HD TSR_GPU_INLINE void ReducedOffsets(const A& a, I i, I* in, I* out) {
  *in = 0;
  *out = 0;
  for (int d = 0; d < a.reduced_ndim; ++d) {
    const I q = a.reduced_sizes[d].Div(i);
    const I r = i - q * a.reduced_sizes[d].divisor;
    *in += r * a.reduced_in[d];
    *out += r * a.reduced_out[d];
    i = q;
  }
}

// The group of threads of an output, and the output, of thread `thread` of block `block`.
template <typename A, typename I = typename A::Index>
TSR_GPU_HD TSR_GPU_INLINE I OutputOf(const A& a, uint32_t block, uint32_t thread) {
  return I{block} * (kReduceThreads / a.threads_per_output) + thread / a.threads_per_output;
}

// ThreadPartial: what a thread of output `o` accumulates: the elements first, first + step, ...
// (an unsplit launch: its lane, T apart). R::Value is what an input element is read as (in its
// own dtype, converted).
template <typename A, typename R, typename I = typename A::Index>
TSR_GPU_HD TSR_GPU_INLINE typename R::Acc ThreadPartial(const A& a, const R& r, I o, I first,
                                                        I step) {
  typename R::Acc acc = r.Init();
  if (o >= a.outputs) return acc;
  I in_base, out_base;
  KeptOffsets(a, o, &in_base, &out_base);
  auto fold = [&](typename R::Acc part, I from, I to) {
    for (I i = from; i < to; i += step) {
      I in, out;
      ReducedOffsets(a, i, &in, &out);
      part = r.Add(part, Widen(LoadAs<typename R::Value>(a.in + in_base + in, a.in_dtype)), i);
    }
    return part;
  };
  if constexpr (std::is_same_v<I, uint32_t>) {
    acc = fold(acc, first, a.reduced);  // at most 2^23 elements a thread
  } else {
    // A wide launch's thread may fold more than 2^24 elements, past which a float accumulator
    // stops growing by 1 (a float32 sum of 2^33 ones would be 2^32): it folds chunks of
    // kWideChunk elements into partials of their own and combines those, so every partial
    // stays short. Bit for bit the narrow fold for rows of up to kWideChunk elements a thread.
    const I span = I{kWideChunk} * step;
    for (I start = first; start < a.reduced; start += span) {
      const I end = a.reduced - start > span ? start + span : a.reduced;
      acc = r.Combine(acc, fold(r.Init(), start, end));
    }
  }
  return acc;
}
template <typename A, typename R, typename I = typename A::Index>
TSR_GPU_HD TSR_GPU_INLINE typename R::Acc ThreadPartial(const A& a, const R& r, I o,
                                                        uint32_t lane) {
  return ThreadPartial(a, r, o, I{lane}, I{a.threads_per_output});
}

// SplitThreadPartial: what thread `t` of block `block` of a split launch's first pass folds
// (Note [Split reductions]); the launch has outputs * splits blocks, split s of output o being
// block o * splits + s.
template <typename A, typename R, typename I = typename A::Index>
TSR_GPU_HD TSR_GPU_INLINE typename R::Acc SplitThreadPartial(const A& a, const R& r,
                                                             uint32_t splits, uint32_t block,
                                                             uint32_t t) {
  const I o = I{block} / splits, s = I{block} % splits;
  return ThreadPartial(a, r, o, s * kReduceThreads + t, I{kReduceThreads} * splits);
}

// FinishThreadPartial: what lane `lane` of output `o` (finish_threads lanes apart) combines of
// the first pass's accumulators: splits lane, lane + threads, ..., in that order.
template <typename A, typename R, typename I = typename A::Index>
TSR_GPU_HD TSR_GPU_INLINE typename R::Acc FinishThreadPartial(const A& a, const R& r,
                                                              const typename R::Acc* partials,
                                                              uint32_t splits, I o, uint32_t lane,
                                                              uint32_t threads) {
  typename R::Acc acc = r.Init();
  if (o >= a.outputs) return acc;
  for (uint32_t j = lane; j < splits; j += threads) acc = r.Combine(acc, partials[o * splits + j]);
  return acc;
}

// FinishOutputOf: the output of thread `thread` of block `block` of a split launch's second
// pass, `threads` threads an output.
template <typename A, typename I = typename A::Index>
TSR_GPU_HD TSR_GPU_INLINE I FinishOutputOf(uint32_t block, uint32_t thread, uint32_t threads) {
  return I{block} * (kReduceThreads / threads) + thread / threads;
}

// CombineStep: thread `thread` (lane `lane` of its output) of one step of the tree, distance
// `half`.
template <typename R>
TSR_GPU_HD TSR_GPU_INLINE void CombineStep(const R& r, typename R::Acc* shared, uint32_t thread,
                                           uint32_t lane, uint32_t half) {
  if (lane < half) shared[thread] = r.Combine(shared[thread], shared[thread + half]);
}

// WritesIndex<R>: whether R also has an index output (Index(acc), max.dim / min.dim).
template <typename R, typename = void>
struct WritesIndex : std::false_type {};
template <typename R>
struct WritesIndex<R, std::void_t<decltype(&R::Index)>> : std::true_type {};

// WriteResult: lane 0 of output `o` stores the result (and its index).
template <typename A, typename R, typename I = typename A::Index>
TSR_GPU_HD TSR_GPU_INLINE void WriteResult(const A& a, const R& r, const typename R::Acc& acc,
                                           I o) {
  if (o >= a.outputs) return;
  I in_base, out_base;
  KeptOffsets(a, o, &in_base, &out_base);
  StoreAs(a.out + out_base, a.out_dtype, r.Finish(acc, a.reduced));
  if constexpr (WritesIndex<R>::value) {
    *reinterpret_cast<int64_t*>(a.indices + KeptIndexOffset(a, o)) = r.Index(acc);
  }
}

// --- the reducers -------------------------------------------------------------------------
// Init, Add(acc, value, index), Combine (associative; a the lower lanes' side), Finish(acc, n).

// SumAcc: what sums and products of S accumulate in.
template <typename S>
using SumAcc = std::conditional_t<std::is_same_v<S, double>, double,
                                  std::conditional_t<kIsFloat<S>, float, int64_t>>;

// SumReducer: sum (kind 0), mean (1), prod (2) of the input converted to S (the output's
// dtype, as PyTorch's `dtype=` converts first).
template <typename S>
struct SumReducer {
  using Value = S;
  using Acc = SumAcc<S>;
  int kind;
  TSR_GPU_HD TSR_GPU_INLINE Acc Init() const { return kind == 2 ? Acc(1) : Acc(0); }
  TSR_GPU_HD TSR_GPU_INLINE Acc Add(Acc acc, OpMath<S> v, uint64_t) const {
    const Acc x = static_cast<Acc>(v);
    return kind == 2 ? WrapMul(acc, x) : WrapAdd(acc, x);
  }
  TSR_GPU_HD TSR_GPU_INLINE Acc Combine(Acc a, Acc b) const {
    return kind == 2 ? WrapMul(a, b) : WrapAdd(a, b);
  }
  TSR_GPU_HD TSR_GPU_INLINE S Finish(Acc acc, uint64_t n) const {
    if constexpr (kIsFloat<S>) {
      if (kind == 1) return Narrow<S>(static_cast<OpMath<S>>(acc / static_cast<Acc>(n)));
      return Narrow<S>(static_cast<OpMath<S>>(acc));
    } else {
      return Convert<S>(acc);
    }
  }
};

// ExtremumReducer: amax / amin (index < 0: nothing seen yet; a NaN is the result) and argmax /
// argmin (the first index of the extremum, a NaN counting as the extremum, as PyTorch).
template <typename S>
struct ExtremumReducer {
  using Value = S;
  using C = OpMath<S>;
  struct Acc {
    C value;
    int64_t index;
  };
  bool max;
  TSR_GPU_HD TSR_GPU_INLINE Acc Init() const { return Acc{C(0), -1}; }
  // Better: whether (x, i) wins over (y, j), both seen.
  TSR_GPU_HD TSR_GPU_INLINE bool Better(C x, int64_t i, C y, int64_t j) const {
    const bool x_nan = !(x == x), y_nan = !(y == y);
    if (x_nan || y_nan) return x_nan && (!y_nan || i < j);
    if (x == y) return i < j;
    return max ? x > y : x < y;
  }
  TSR_GPU_HD TSR_GPU_INLINE Acc Add(Acc acc, C v, uint64_t i) const {
    if (acc.index < 0 || Better(v, i, acc.value, acc.index)) return Acc{v, static_cast<int64_t>(i)};
    return acc;
  }
  TSR_GPU_HD TSR_GPU_INLINE Acc Combine(Acc a, Acc b) const {
    if (b.index < 0) return a;
    if (a.index < 0) return b;
    return Better(b.value, b.index, a.value, a.index) ? b : a;
  }
  TSR_GPU_HD TSR_GPU_INLINE C Finish(Acc acc, uint64_t) const { return acc.value; }
};

// ArgReducer: argmax / argmin, ExtremumReducer's winner's index (int64).
template <typename S>
struct ArgReducer {
  using Value = S;
  using Inner = ExtremumReducer<S>;
  using Acc = typename Inner::Acc;
  Inner inner;
  TSR_GPU_HD TSR_GPU_INLINE Acc Init() const { return inner.Init(); }
  TSR_GPU_HD TSR_GPU_INLINE Acc Add(Acc acc, OpMath<S> v, uint64_t i) const {
    return inner.Add(acc, v, i);
  }
  TSR_GPU_HD TSR_GPU_INLINE Acc Combine(Acc a, Acc b) const { return inner.Combine(a, b); }
  TSR_GPU_HD TSR_GPU_INLINE int64_t Finish(Acc acc, uint64_t) const { return acc.index; }
};

// ValueIndexReducer: max.dim / min.dim, ExtremumReducer's winner and its index (a second output).
template <typename S>
struct ValueIndexReducer : ExtremumReducer<S> {
  using Acc = typename ExtremumReducer<S>::Acc;
  TSR_GPU_HD TSR_GPU_INLINE int64_t Index(const Acc& acc) const { return acc.index; }
};

// AnyAllReducer: any (whether an element is nonzero; a NaN is) or all (whether every one is),
// read in the input's dtype; false for any and true for all over no element.
template <typename S>
struct AnyAllReducer {
  using Value = S;
  using Acc = uint32_t;
  bool any;
  TSR_GPU_HD TSR_GPU_INLINE Acc Init() const { return any ? 0u : 1u; }
  TSR_GPU_HD TSR_GPU_INLINE Acc Add(Acc acc, OpMath<S> v, uint64_t) const {
    return Combine(acc, v != OpMath<S>(0) ? 1u : 0u);
  }
  TSR_GPU_HD TSR_GPU_INLINE Acc Combine(Acc a, Acc b) const { return any ? (a | b) : (a & b); }
  TSR_GPU_HD TSR_GPU_INLINE bool Finish(Acc acc, uint64_t) const { return acc != 0; }
};

// LogSumExpReducer: log(sum(exp(x))) in one pass, as a running (max, sum of exp(x - max)) that
// rescales when the maximum grows, in float (double for float64). So nothing overflows; a row
// of -inf (or no element) gives -inf, a +inf gives +inf (never inf - inf), a NaN gives NaN.
// S is the output's dtype, which the input is read in (integers give float32).
template <typename S>
struct LogSumExpReducer {
  using Value = S;
  using F = OpMath<S>;
  struct Acc {
    F max, sum;
  };
  TSR_GPU_HD TSR_GPU_INLINE Acc Init() const { return Acc{-F(INFINITY), F(0)}; }
  TSR_GPU_HD TSR_GPU_INLINE Acc Add(Acc a, F x, uint64_t) const {
    if (x == -F(INFINITY)) return a;
    if (x > a.max) return Acc{x, a.sum * std::exp(a.max - x) + F(1)};
    if (x == a.max) return Acc{a.max, a.sum + F(1)};
    return Acc{a.max, a.sum + std::exp(x - a.max)};  // a NaN x makes the sum NaN
  }
  TSR_GPU_HD TSR_GPU_INLINE Acc Combine(Acc a, Acc b) const {
    if (b.sum == F(0)) return a;
    if (a.sum == F(0)) return b;
    const F m = a.max > b.max ? a.max : b.max;
    const F sa = a.max == m ? a.sum : a.sum * std::exp(a.max - m);
    const F sb = b.max == m ? b.sum : b.sum * std::exp(b.max - m);
    return Acc{m, sa + sb};
  }
  TSR_GPU_HD TSR_GPU_INLINE S Finish(Acc a, uint64_t) const {
    return Narrow<S>(a.sum == F(0) ? -F(INFINITY) : a.max + std::log(a.sum));
  }
};

// NormReducer: the p-norm of the input (floating S, computed in float, double for float64):
// p = 2 sqrt(sum |x|^2), 1 sum |x|, +inf max |x|, -inf min |x| (NaN propagates in both), 0 the
// count of nonzero elements, otherwise (sum |x|^p)^(1/p). Over no element: 0 (the meta function
// refuses +inf and negative orders over an empty dim, as PyTorch does).
template <typename S>
struct NormReducer {
  using Value = S;
  using F = OpMath<S>;
  using Acc = F;
  F p;
  TSR_GPU_HD TSR_GPU_INLINE bool Inf() const { return p == F(INFINITY) || p == -F(INFINITY); }
  TSR_GPU_HD TSR_GPU_INLINE Acc Init() const { return p == -F(INFINITY) ? F(INFINITY) : F(0); }
  TSR_GPU_HD TSR_GPU_INLINE Acc Add(Acc acc, F x, uint64_t) const {
    const F a = std::fabs(x);
    if (p == F(2)) return acc + a * a;
    if (p == F(1)) return acc + a;
    if (p == F(0)) return acc + (a != F(0) ? F(1) : F(0));
    if (Inf()) return Combine(acc, a);
    return acc + std::pow(a, p);
  }
  TSR_GPU_HD TSR_GPU_INLINE Acc Combine(Acc a, Acc b) const {
    if (!Inf()) return a + b;
    if (!(a == a)) return a;
    if (!(b == b)) return b;
    return (p > F(0)) == (a > b) ? a : b;
  }
  TSR_GPU_HD TSR_GPU_INLINE S Finish(Acc acc, uint64_t) const {
    if (p == F(2)) return Narrow<S>(std::sqrt(acc));
    if (p == F(1) || p == F(0) || Inf()) return Narrow<S>(acc);
    return Narrow<S>(std::pow(acc, F(1) / p));
  }
};

// VarReducer: var (or std) with `correction`, by Welford's update and Chan's combination, in
// float (double for float64).
template <typename S>
struct VarReducer {
  using Value = S;
  using F = std::conditional_t<std::is_same_v<S, double>, double, float>;
  struct Acc {
    uint64_t n;  // a count: a float one stops growing at 2^24
    F mean, m2;
  };
  F correction;
  bool root;  // std
  TSR_GPU_HD TSR_GPU_INLINE Acc Init() const { return Acc{0, 0, 0}; }
  TSR_GPU_HD TSR_GPU_INLINE Acc Add(Acc a, OpMath<S> v, uint64_t) const {
    const F x = static_cast<F>(v);
    const uint64_t n = a.n + 1;
    const F delta = x - a.mean;
    const F mean = a.mean + delta / static_cast<F>(n);
    return Acc{n, mean, a.m2 + delta * (x - mean)};
  }
  TSR_GPU_HD TSR_GPU_INLINE Acc Combine(Acc a, Acc b) const {
    if (b.n == 0) return a;
    if (a.n == 0) return b;
    const uint64_t n = a.n + b.n;
    const F delta = b.mean - a.mean;
    const F nb_over_n = static_cast<F>(b.n) / static_cast<F>(n);
    return Acc{n, a.mean + delta * nb_over_n,
               a.m2 + b.m2 + delta * delta * static_cast<F>(a.n) * nb_over_n};
  }
  TSR_GPU_HD TSR_GPU_INLINE S Finish(Acc a, uint64_t) const {
    const F count = static_cast<F>(a.n);
    const F divisor = count - correction > 0 ? count - correction : F(0);
    // An empty input gives NaN whatever the correction, as ATen's (0 / 0 here).
    const F var = a.n == 0 ? F(0) / F(0) : a.m2 / divisor;
    return Narrow<S>(static_cast<OpMath<S>>(root ? std::sqrt(var) : var));
  }
};

// SoftmaxStatsReducer: softmax's row statistics in one pass over the row, in float (double for
// float64): the maximum M (NaN propagates) and the sum of exp(x - M), kept relative to the
// running maximum and rescaled when it grows (an "online" softmax: the row is read twice in
// all, not three times). Its special values are those of the two passes it replaces: a row
// with a NaN or a +inf gives a NaN sum (exp(inf - inf) is NaN; so every output is NaN, as
// PyTorch's); a -inf adds nothing (where M is finite exp(-inf - M) is 0; where M is -inf every
// output is exp(-inf + inf), NaN, whatever the sum).
template <typename S>
struct SoftmaxStatsReducer {
  using Value = S;
  using F = OpMath<S>;
  struct Acc {
    F max, sum;
  };
  TSR_GPU_HD TSR_GPU_INLINE Acc Init() const { return Acc{-F(INFINITY), F(0)}; }
  TSR_GPU_HD TSR_GPU_INLINE Acc Add(Acc a, F x, uint64_t) const {
    if (!(x == x)) return Acc{x, x};
    if (!(a.max == a.max) || x == -F(INFINITY)) return a;
    if (x > a.max) {
      // exp(x - x): 1, or NaN for x = +inf (spelled out: x - x may be folded to 0).
      const F self = x == F(INFINITY) ? F(NAN) : F(1);
      return Acc{x, a.sum * std::exp(a.max - x) + self};
    }
    return Acc{a.max, a.sum + std::exp(x - a.max)};  // x == max == +inf: NaN, as it should
  }
  TSR_GPU_HD TSR_GPU_INLINE Acc Combine(Acc a, Acc b) const {
    if (!(a.max == a.max)) return a;
    if (!(b.max == b.max)) return b;
    if (b.sum == F(0)) return a;  // nothing seen (or only -inf): no rescale of a NaN
    if (a.sum == F(0)) return b;
    if (a.max == b.max) return Acc{a.max, a.sum + b.sum};  // +inf: both sums NaN already
    return a.max > b.max ? Acc{a.max, a.sum + b.sum * std::exp(b.max - a.max)}
                         : Acc{b.max, a.sum * std::exp(a.max - b.max) + b.sum};
  }
};

// SoftmaxWrite: the second pass, thread `lane` of row `o` writes its elements: exp(x - max) /
// sum, or (log) x - max - log(sum).
template <typename S, typename A, typename I = typename A::Index>
TSR_GPU_HD TSR_GPU_INLINE void SoftmaxWrite(const A& a, I o, uint32_t lane, OpMath<S> max,
                                            OpMath<S> sum, bool log) {
  if (o >= a.outputs) return;
  I in_base, out_base;
  KeptOffsets(a, o, &in_base, &out_base);
  const OpMath<S> log_sum = log ? std::log(sum) : OpMath<S>(0);
  for (I i = lane; i < a.reduced; i += a.threads_per_output) {
    I in, out;
    ReducedOffsets(a, i, &in, &out);
    const OpMath<S> x = Widen(LoadAs<S>(a.in + in_base + in, a.in_dtype));
    const OpMath<S> y = log ? x - max - log_sum : std::exp(x - max) / sum;
    StoreAs(a.out + out_base + out, a.out_dtype, y);
  }
}

}  // namespace gpu
}  // namespace tessera

// The reduction engine: folds the reduced dimensions of a strided input into each output
// element, with any strides and no copies.
//
// A Reducer says how, over its accumulator type Acc:
//   Acc init() const;
//   void row(Acc& acc, const char* p, int64_t stride, int64_t n, int64_t index) const;
//       // fold n elements at p (byte stride), the first being element `index` of the
//       // reduced space (row-major over the reduced dimensions; argmax uses it)
//   Acc combine(const Acc& a, const Acc& b) const;  // b's elements follow a's
//   void finish(const Acc& acc, int64_t count, char* const* outs) const;  // write outputs
//
// Determinism: outputs are split across threads whole. When there are fewer outputs than
// threads, each output's reduced space is cut into chunks of kReduceChunk elements (a constant,
// not the thread count), the chunks are folded in parallel and their accumulators combined
// in a fixed tree. Either way the order of operations depends only on the shapes, so results
// are equal run to run and thread count to thread count.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "tensor_iterator.hpp"
#include "tessera/sdk/boxing.hpp"
#include "tessera/sdk/tensor_view.hpp"

namespace tessera {
namespace cpu {

inline constexpr int64_t kReduceChunk = 16384;
// Up to this many outputs, long reductions are chunked (a constant: see Determinism above).
inline constexpr int64_t kFewOutputs = 8;

// The most outputs one reduction writes (max.dim: values and indices).
inline constexpr size_t kMaxReduceOutputs = 2;
using OutputPointers = std::array<char*, kMaxReduceOutputs>;

// ReduceLayout: the input's dimensions split into kept (one per output element) and reduced.
// Inline storage (DimList): a small reduction allocates nothing.
struct ReduceLayout {
  DimList kept_sizes;
  DimList kept_in_strides;                                  // bytes
  std::array<DimList, kMaxReduceOutputs> kept_out_strides;  // per output, bytes
  DimList red_sizes;                                        // coalesced, outer..inner
  DimList red_strides;                                      // bytes
  size_t num_outs = 1;
  int64_t num_outputs = 1;  // output elements
  int64_t red_numel = 1;
};

// DimMask: which of the input's dimensions a reduction folds.
using DimMask = SmallVector<bool, kInlineDims>;

// reduced_dims: the mask of a reduction's dim argument (an int list; empty: all dims), its
// negative dims wrapped. The call plan has checked the dims' range (the op's Meta function);
// one outside it is the plan's bug, said as such (INTERNAL, naming the op).
DimMask reduced_dims(const sdk::KernelContext& ctx, int64_t ndim, sdk::IntSpan dims);

// make_layout: `reduced[d]` marks the input's reduced dimensions; each of the `num_outs`
// outputs has the kept dimensions, in order, with or without size-1 dimensions in the reduced
// places (keepdim). With `reorder`, the reduced dimensions are walked in memory order (faster
// for transposed inputs); without, in row-major order (what arg reductions' indices count in).
ReduceLayout make_layout(const sdk::TensorView& in, const DimMask& reduced,
                         const sdk::TensorView* outs, size_t num_outs, bool reorder);

namespace internal {

template <typename Reducer, typename Acc>
void walk(const Reducer& r, const ReduceLayout& L, const char* base, int64_t begin, int64_t end,
          Acc& acc) {
  const int nd = static_cast<int>(L.red_sizes.size());
  const int64_t inner = L.red_sizes[nd - 1];
  const int64_t inner_stride = L.red_strides[nd - 1];
  int64_t pos = begin;
  while (pos < end) {
    int64_t rest = pos / inner;
    const int64_t i = pos % inner;
    const char* p = base + i * inner_stride;
    for (int d = nd - 2; d >= 0; --d) {
      p += (rest % L.red_sizes[d]) * L.red_strides[d];
      rest /= L.red_sizes[d];
    }
    const int64_t n = std::min(inner - i, end - pos);
    r.row(acc, p, inner_stride, n, pos);
    pos += n;
  }
}

// Combines accumulators [lo, hi) as a balanced tree: fixed order, small rounding error.
template <typename Reducer, typename Acc>
Acc combine_tree(const Reducer& r, const std::vector<Acc>& parts, size_t lo, size_t hi) {
  if (hi - lo == 1) return parts[lo];
  const size_t mid = lo + (hi - lo) / 2;
  return r.combine(combine_tree(r, parts, lo, mid), combine_tree(r, parts, mid, hi));
}

}  // namespace internal

template <typename Reducer>
void reduce(const Reducer& r, const ReduceLayout& L, const char* in, const OutputPointers& outs) {
  using Acc = decltype(r.init());
  const int nk = static_cast<int>(L.kept_sizes.size());
  const size_t nouts = L.num_outs;
  // The input and output addresses of output element o.
  auto locate = [&](int64_t o, OutputPointers& out_ptrs) {
    const char* p = in;
    for (size_t k = 0; k < nouts; ++k) out_ptrs[k] = outs[k];
    for (int d = nk - 1; d >= 0; --d) {
      const int64_t i = o % L.kept_sizes[d];
      o /= L.kept_sizes[d];
      p += i * L.kept_in_strides[d];
      for (size_t k = 0; k < nouts; ++k) out_ptrs[k] += i * L.kept_out_strides[k][d];
    }
    return p;
  };
  if (L.num_outputs <= kFewOutputs && L.red_numel > 2 * kReduceChunk) {
    // Few outputs, long reductions: chunk each output's reduced space.
    const int64_t chunks = (L.red_numel + kReduceChunk - 1) / kReduceChunk;
    OutputPointers out_ptrs{};
    for (int64_t o = 0; o < L.num_outputs; ++o) {
      const char* base = locate(o, out_ptrs);
      std::vector<Acc> parts(static_cast<size_t>(chunks), r.init());
      struct Ctx {
        const Reducer* r;
        const ReduceLayout* L;
        const char* base;
        std::vector<Acc>* parts;
      } ctx{&r, &L, base, &parts};
      TensorIterator::run_parallel(
          chunks, 1,
          [](void* c, int64_t b, int64_t e) {
            auto* x = static_cast<Ctx*>(c);
            for (int64_t k = b; k < e; ++k) {
              const int64_t lo = k * kReduceChunk;
              const int64_t hi = std::min(lo + kReduceChunk, x->L->red_numel);
              internal::walk(*x->r, *x->L, x->base, lo, hi, (*x->parts)[k]);
            }
          },
          &ctx);
      r.finish(internal::combine_tree(r, parts, 0, parts.size()), L.red_numel, out_ptrs.data());
    }
    return;
  }
  struct Ctx {
    const Reducer* r;
    const ReduceLayout* L;
    decltype(locate)* find;
  } ctx{&r, &L, &locate};
  // Enough outputs per chunk that each chunk folds at least kGrain elements.
  const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, L.red_numel));
  TensorIterator::run_parallel(
      L.num_outputs, grain,
      [](void* c, int64_t b, int64_t e) {
        auto* x = static_cast<Ctx*>(c);
        OutputPointers out_ptrs{};
        for (int64_t o = b; o < e; ++o) {
          const char* base = (*x->find)(o, out_ptrs);
          auto acc = x->r->init();
          if (x->L->red_numel > 0) internal::walk(*x->r, *x->L, base, 0, x->L->red_numel, acc);
          x->r->finish(acc, x->L->red_numel, out_ptrs.data());
        }
      },
      &ctx);
}

}  // namespace cpu
}  // namespace tessera

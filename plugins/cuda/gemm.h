// Our own tiled matrix product (mm, bmm, addmm) as per-thread phases that compile for the device
// (kernels_gemm.cu) and for the host (tests/gemm_test.cc runs every thread of every block,
// phase by phase between the barriers).
//
// Note [GPU tiled GEMM]
// The HIP backend has no BLAS (Debian's ROCm has no rocBLAS), so the matrix products are a
// kernel of ours, built for both vendors from this one source. The CUDA backend uses cuBLAS when
// it loads at run time (blas.h, Note [cuBLAS at first use]) and this kernel when it does not,
// when TESSERA_GPU_BLAS=own, and for the problems it does not give cuBLAS (K = 0, an output
// neither row- nor column-major, sizes beyond int). Each block of kGemmTile x kGemmTile threads
// computes a kGemmTile x kGemmTile tile of C = beta * self + alpha * (A @ B) for one batch:
// for each kGemmTile-wide slice of K, every thread loads one element of A's and one of B's tile
// into shared memory (LoadTiles), the block waits, every thread adds its row of the A tile times
// its column of the B tile (AccumulateTile), the block waits again; at the end each thread
// writes its element (StoreTile). Accumulation is in float for float16, bfloat16 and float32
// and in double for float64, as cuBLAS's defaults; operands are read through their strides
// (a transposed view costs no copy). A first version: one element per thread and 16 x 16 tiles
// are simple and correct but reach a fraction of a GPU's peak; register blocking (several
// outputs per thread) and vectorized loads are the next step.
#pragma once

#include <cstdint>

#include "elementwise.h"

namespace tessera {
namespace gpu {

inline constexpr int kGemmTile = 16;

// GemmArgs: C[b] (M x N) = beta * self[b] + alpha * A[b] (M x K) @ B[b] (K x N). Strides in
// elements, 64-bit (a product's operands may exceed 2^31 elements). `self` may be null (mm,
// bmm, or beta = 0, which ignores it as PyTorch does, NaN included).
template <typename S>
struct GemmArgs {
  const S* a;
  const S* b;
  const S* self;
  S* c;
  int64_t batch, m, n, k;
  int64_t a_batch, a_row, a_col;
  int64_t b_batch, b_row, b_col;
  int64_t self_batch, self_row, self_col;
  int64_t c_batch, c_row, c_col;
  OpMath<S> alpha, beta;
};

// GemmProblem: the same, dtype-erased, as the plugin describes it.
struct GemmProblem {
  const void* a = nullptr;
  const void* b = nullptr;
  const void* self = nullptr;
  void* c = nullptr;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  int64_t a_batch = 0, a_row = 0, a_col = 0;
  int64_t b_batch = 0, b_row = 0, b_col = 0;
  int64_t self_batch = 0, self_row = 0, self_col = 0;
  int64_t c_batch = 0, c_row = 0, c_col = 0;
  double alpha = 1, beta = 0;
};

template <typename S>
GemmArgs<S> MakeGemmArgs(const GemmProblem& p) {
  return GemmArgs<S>{static_cast<const S*>(p.a),
                     static_cast<const S*>(p.b),
                     static_cast<const S*>(p.self),
                     static_cast<S*>(p.c),
                     p.batch,
                     p.m,
                     p.n,
                     p.k,
                     p.a_batch,
                     p.a_row,
                     p.a_col,
                     p.b_batch,
                     p.b_row,
                     p.b_col,
                     p.self_batch,
                     p.self_row,
                     p.self_col,
                     p.c_batch,
                     p.c_row,
                     p.c_col,
                     static_cast<OpMath<S>>(p.alpha),
                     static_cast<OpMath<S>>(p.beta)};
}

// GemmGrid: the launch's blocks (x: column tiles, y: row tiles, z: batches); false when a
// count exceeds what every GPU launches (65535 in y and z).
inline bool GemmGrid(const GemmProblem& p, uint32_t* x, uint32_t* y, uint32_t* z) {
  const int64_t gx = (p.n + kGemmTile - 1) / kGemmTile, gy = (p.m + kGemmTile - 1) / kGemmTile;
  if (gx > INT32_MAX || gy > 65535 || p.batch > 65535) return false;
  *x = static_cast<uint32_t>(gx);
  *y = static_cast<uint32_t>(gy);
  *z = static_cast<uint32_t>(p.batch);
  return true;
}

// GemmAcc: what a product of S accumulates in.
template <typename S>
using GemmAcc = std::conditional_t<std::is_same_v<S, double>, double, float>;

// The tile of block (bx, by, bz): columns bx * kGemmTile.., rows by * kGemmTile.., batch bz.
// Thread (tx, ty) owns row ty and column tx of it.
template <typename S>
TSR_GPU_HD TSR_GPU_INLINE void LoadTiles(const GemmArgs<S>& g, uint32_t bx, uint32_t by,
                                         uint32_t bz, uint32_t tx, uint32_t ty, int64_t k0,
                                         GemmAcc<S> (*tile_a)[kGemmTile],
                                         GemmAcc<S> (*tile_b)[kGemmTile]) {
  const int64_t row = int64_t{by} * kGemmTile + ty, col = int64_t{bx} * kGemmTile + tx;
  const int64_t ka = k0 + tx, kb = k0 + ty;
  GemmAcc<S> va = 0, vb = 0;
  if (row < g.m && ka < g.k) {
    va = Widen(g.a[bz * g.a_batch + row * g.a_row + ka * g.a_col]);
  }
  if (kb < g.k && col < g.n) {
    vb = Widen(g.b[bz * g.b_batch + kb * g.b_row + col * g.b_col]);
  }
  tile_a[ty][tx] = va;
  tile_b[ty][tx] = vb;
}

template <typename S>
TSR_GPU_HD TSR_GPU_INLINE GemmAcc<S> AccumulateTile(GemmAcc<S> acc, uint32_t tx, uint32_t ty,
                                                    const GemmAcc<S> (*tile_a)[kGemmTile],
                                                    const GemmAcc<S> (*tile_b)[kGemmTile]) {
  for (int kk = 0; kk < kGemmTile; ++kk) acc += tile_a[ty][kk] * tile_b[kk][tx];
  return acc;
}

template <typename S>
TSR_GPU_HD TSR_GPU_INLINE void StoreTile(const GemmArgs<S>& g, uint32_t bx, uint32_t by,
                                         uint32_t bz, uint32_t tx, uint32_t ty, GemmAcc<S> acc) {
  const int64_t row = int64_t{by} * kGemmTile + ty, col = int64_t{bx} * kGemmTile + tx;
  if (row >= g.m || col >= g.n) return;
  GemmAcc<S> r = static_cast<GemmAcc<S>>(g.alpha) * acc;
  if (g.self != nullptr) {
    r += static_cast<GemmAcc<S>>(g.beta) *
         Widen(g.self[bz * g.self_batch + row * g.self_row + col * g.self_col]);
  }
  g.c[bz * g.c_batch + row * g.c_row + col * g.c_col] = Narrow<S>(static_cast<OpMath<S>>(r));
}

}  // namespace gpu
}  // namespace tessera

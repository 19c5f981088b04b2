#include "lane_sum.hpp"

namespace tessera {
namespace cpu {
namespace {

// The lanes held in vectors of `kBytes` bytes (GCC's and Clang's vector extensions: the same
// source compiles to SSE2 or, under target("avx2") or target("avx512f"), to AVX2 or AVX-512
// instructions).
template <typename T, int kBytes>
struct Lanes {
  typedef T Vec __attribute__((vector_size(kBytes)));
  static constexpr int kWidth = kBytes / sizeof(T);
  static constexpr int kVecs = kLanes<T> / kWidth;
  static_assert(kLanes<T> % kWidth == 0, "the lanes fill whole vectors");

  // Inlined into each ISA's caller, whose target it then compiles for.
  __attribute__((always_inline)) static inline T Sum(const T* x, int64_t n) {
    Vec acc[kVecs] = {};
    int64_t i = 0;
    for (; i + kLanes<T> <= n; i += kLanes<T>) Add(acc, x + i);
    return Finish(acc, x + i, n - i);
  }

 private:
  __attribute__((always_inline)) static inline void Add(Vec* acc, const T* block) {
    for (int k = 0; k < kVecs; ++k) {
      Vec v;
      std::memcpy(&v, block + k * kWidth, sizeof v);  // unaligned load
      acc[k] += v;
    }
  }

  // Finish adds the last, partial block (r < kLanes elements, padded with +0.0) and combines.
  __attribute__((always_inline)) static inline T Finish(Vec* acc, const T* rest, int64_t r) {
    if (r > 0) {
      T block[kLanes<T>] = {};
      std::memcpy(block, rest, static_cast<size_t>(r) * sizeof(T));
      Add(acc, block);
    }
    if constexpr (kGroup<T> % kWidth != 0) {
      // AVX-512: a vector is wider than a group, so the lanes combine as combine_lanes does,
      // element by element (once per leaf of up to 4096 elements).
      T lane[kLanes<T>];
      std::memcpy(lane, acc, sizeof lane);
      return combine_lanes(lane);
    } else {
      // combine_lanes' first step on whole vectors: vector q of a group holds lanes
      // q * kWidth.. of it, and group k starts at vector k * kGroupVecs.
      constexpr int kGroupVecs = kGroup<T> / kWidth;
      Vec group[kGroupVecs];
      for (int q = 0; q < kGroupVecs; ++q) {
        group[q] =
            (acc[q] + acc[q + kGroupVecs]) + (acc[q + 2 * kGroupVecs] + acc[q + 3 * kGroupVecs]);
      }
      T g[kGroup<T>];
      std::memcpy(g, group, sizeof g);
      return halve_groups(g);
    }
  }
};

template <typename T>
T Portable(const T* x, int64_t n) {
  return Lanes<T, 16>::Sum(x, n);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
template <typename T>
__attribute__((target("avx2"))) T Avx2(const T* x, int64_t n) {
  return Lanes<T, 32>::Sum(x, n);
}

// Avx512: the same lanes in two 64-byte vectors. Fewer instructions per byte than AVX2's four
// (a standalone 16M-float sum on the AMD EPYC dev machine, 1 thread: 41 against 37 GB/s).
template <typename T>
__attribute__((target("avx512f"))) T Avx512(const T* x, int64_t n) {
  return Lanes<T, 64>::Sum(x, n);
}

template <typename T>
using SumFn = T (*)(const T*, int64_t);

bool HasAvx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2");
}

bool HasAvx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
}

template <typename T>
SumFn<T> Pick() {
  if (HasAvx512()) return &Avx512<T>;
  return HasAvx2() ? &Avx2<T> : &Portable<T>;
}

template <typename T>
bool TryAvx2(const T* x, int64_t n, T* sum) {
  if (!HasAvx2()) return false;
  *sum = Avx2(x, n);
  return true;
}

template <typename T>
bool TryAvx512(const T* x, int64_t n, T* sum) {
  if (!HasAvx512()) return false;
  *sum = Avx512(x, n);
  return true;
}

template <typename T>
T Dispatch(const T* x, int64_t n) {
  static const SumFn<T> fn = Pick<T>();
  return fn(x, n);
}

#else
template <typename T>
T Dispatch(const T* x, int64_t n) {
  return Portable<T>(x, n);
}

template <typename T>
bool TryAvx2(const T*, int64_t, T*) {
  return false;
}

template <typename T>
bool TryAvx512(const T*, int64_t, T*) {
  return false;
}
#endif

}  // namespace

float contiguous_lane_sum(const float* x, int64_t n) { return Dispatch(x, n); }
double contiguous_lane_sum(const double* x, int64_t n) { return Dispatch(x, n); }

namespace internal {
float portable_lane_sum(const float* x, int64_t n) { return Portable(x, n); }
double portable_lane_sum(const double* x, int64_t n) { return Portable(x, n); }
bool avx2_lane_sum(const float* x, int64_t n, float* sum) { return TryAvx2(x, n, sum); }
bool avx2_lane_sum(const double* x, int64_t n, double* sum) { return TryAvx2(x, n, sum); }
bool avx512_lane_sum(const float* x, int64_t n, float* sum) { return TryAvx512(x, n, sum); }
bool avx512_lane_sum(const double* x, int64_t n, double* sum) { return TryAvx512(x, n, sum); }
}  // namespace internal

}  // namespace cpu
}  // namespace tessera

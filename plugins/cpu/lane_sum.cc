#include "lane_sum.hpp"

namespace tessera {
namespace cpu {
namespace {

// The lanes held in vectors of `kBytes` bytes (GCC's and Clang's vector extensions: the same
// source compiles to SSE2 or, under target("avx2"), to AVX2 instructions).
template <typename T, int kBytes>
struct Lanes {
  typedef T Vec __attribute__((vector_size(kBytes)));
  static constexpr int kWidth = kBytes / sizeof(T);
  static constexpr int kVecs = kLanes<T> / kWidth;
  static_assert(kGroup<T> % kWidth == 0, "a group of lanes fills whole vectors");

  // Inlined into each ISA's caller, whose target it then compiles for.
  __attribute__((always_inline)) static inline T Sum(const T* x, int64_t n) {
    Vec acc[kVecs] = {};
    int64_t i = 0;
    for (; i + kLanes<T> <= n; i += kLanes<T>) Add(acc, x + i);
    return Finish(acc, x + i, n - i);
  }

  // Sum4: four leaves of n elements at once, each as Sum would (the same additions in the same
  // order), so that four memory streams are in flight (Note [Four streams]).
  __attribute__((always_inline)) static inline void Sum4(const T* const* x, int64_t n, T* out) {
    Vec acc[4][kVecs] = {};
    int64_t i = 0;
    for (; i + kLanes<T> <= n; i += kLanes<T>) {
      for (int s = 0; s < 4; ++s) Add(acc[s], x[s] + i);
    }
    for (int s = 0; s < 4; ++s) out[s] = Finish(acc[s], x[s] + i, n - i);
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
};

template <typename T>
T Portable(const T* x, int64_t n) {
  return Lanes<T, 16>::Sum(x, n);
}

// PortableLeaves: 16-byte vectors have too few registers for four streams' accumulators (SSE2:
// 16 registers, four leaves of float need 32): one leaf at a time.
template <typename T>
void PortableLeaves(const T* x, int64_t leaf, int64_t count, T* out) {
  for (int64_t j = 0; j < count; ++j) out[j] = Lanes<T, 16>::Sum(x + j * leaf, leaf);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
template <typename T>
__attribute__((target("avx2"))) T Avx2(const T* x, int64_t n) {
  return Lanes<T, 32>::Sum(x, n);
}

// Avx2Leaves: with count a multiple of 4, leaves j, j + count/4, j + count/2 and j + 3 count/4
// go together: four streams a quarter of the span apart.
template <typename T>
__attribute__((target("avx2"))) void Avx2Leaves(const T* x, int64_t leaf, int64_t count, T* out) {
  if (count % 4 != 0) {
    for (int64_t j = 0; j < count; ++j) out[j] = Lanes<T, 32>::Sum(x + j * leaf, leaf);
    return;
  }
  const int64_t q = count / 4;
  for (int64_t j = 0; j < q; ++j) {
    const T* streams[4] = {x + j * leaf, x + (j + q) * leaf, x + (j + 2 * q) * leaf,
                           x + (j + 3 * q) * leaf};
    T sums[4];
    Lanes<T, 32>::Sum4(streams, leaf, sums);
    for (int s = 0; s < 4; ++s) out[j + s * q] = sums[s];
  }
}

template <typename T>
using SumFn = T (*)(const T*, int64_t);
template <typename T>
using LeavesFn = void (*)(const T*, int64_t, int64_t, T*);

bool HasAvx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2");
}

template <typename T>
SumFn<T> Pick() {
  return HasAvx2() ? &Avx2<T> : &Portable<T>;
}

template <typename T>
bool TryAvx2(const T* x, int64_t n, T* sum) {
  if (!HasAvx2()) return false;
  *sum = Avx2(x, n);
  return true;
}

template <typename T>
T Dispatch(const T* x, int64_t n) {
  static const SumFn<T> fn = Pick<T>();
  return fn(x, n);
}

template <typename T>
void DispatchLeaves(const T* x, int64_t leaf, int64_t count, T* out) {
  static const LeavesFn<T> fn = HasAvx2() ? &Avx2Leaves<T> : &PortableLeaves<T>;
  fn(x, leaf, count, out);
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
void DispatchLeaves(const T* x, int64_t leaf, int64_t count, T* out) {
  PortableLeaves<T>(x, leaf, count, out);
}
#endif

}  // namespace

float contiguous_lane_sum(const float* x, int64_t n) { return Dispatch(x, n); }
double contiguous_lane_sum(const double* x, int64_t n) { return Dispatch(x, n); }
void contiguous_lane_sums(const float* x, int64_t leaf, int64_t count, float* out) {
  DispatchLeaves(x, leaf, count, out);
}
void contiguous_lane_sums(const double* x, int64_t leaf, int64_t count, double* out) {
  DispatchLeaves(x, leaf, count, out);
}

namespace internal {
float portable_lane_sum(const float* x, int64_t n) { return Portable(x, n); }
double portable_lane_sum(const double* x, int64_t n) { return Portable(x, n); }
bool avx2_lane_sum(const float* x, int64_t n, float* sum) { return TryAvx2(x, n, sum); }
bool avx2_lane_sum(const double* x, int64_t n, double* sum) { return TryAvx2(x, n, sum); }
}  // namespace internal

}  // namespace cpu
}  // namespace tessera

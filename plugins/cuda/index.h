// The GPU index, shape and sort kernels' per-thread work, as code that compiles for the device
// (nvcc, hipcc) and for the host (g++): kernels_index.cu wraps each body in a __global__
// function, and tests/index_test.cc runs the same bodies on the host for every (block, thread)
// of a launch (Note [GPU index kernels] in index_plan.h has the host side).
#pragma once

#include <cstdint>
#include <cstring>

#include "elementwise.h"

namespace tessera {
namespace gpu {

// --- atomics ----------------------------------------------------------------------------------
// Cas32 / Cas64: compare-and-swap, returning the value found. The device uses the vendor's
// atomicCAS; the host (the tests) the compiler's atomic builtins, so the same read-modify-write
// loops run in the tests.
TSR_GPU_HD TSR_GPU_INLINE uint32_t Cas32(uint32_t* p, uint32_t expected, uint32_t desired) {
#ifdef TSR_GPU_DEVICE_PASS
  return atomicCAS(reinterpret_cast<unsigned int*>(p), expected, desired);
#else
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return expected;
#endif
}
TSR_GPU_HD TSR_GPU_INLINE uint64_t Cas64(uint64_t* p, uint64_t expected, uint64_t desired) {
#ifdef TSR_GPU_DEVICE_PASS
  return atomicCAS(reinterpret_cast<unsigned long long*>(p),   // NOLINT(runtime/int)
                   static_cast<unsigned long long>(expected),  // NOLINT(runtime/int)
                   static_cast<unsigned long long>(desired));  // NOLINT(runtime/int)
#else
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return expected;
#endif
}

// Load32 / Load64: the word's current value for a compare-and-swap loop to start from (an
// atomic load on the host, so the tests' concurrent runs are race-free for ThreadSanitizer).
TSR_GPU_HD TSR_GPU_INLINE uint32_t Load32(uint32_t* p) {
#ifdef TSR_GPU_DEVICE_PASS
  return *reinterpret_cast<volatile uint32_t*>(p);
#else
  return __atomic_load_n(p, __ATOMIC_RELAXED);
#endif
}
TSR_GPU_HD TSR_GPU_INLINE uint64_t Load64(uint64_t* p) {
#ifdef TSR_GPU_DEVICE_PASS
  return *reinterpret_cast<volatile uint64_t*>(p);
#else
  return __atomic_load_n(p, __ATOMIC_RELAXED);
#endif
}

// Combine: scatter's reduction of the value found with the one written, in OpMath<T> and
// rounded once, as the CPU backend computes it (integers wrap; bool: add is "or", multiply
// "and").
template <typename T, bool kMul>
TSR_GPU_HD TSR_GPU_INLINE T Combine(T old, T v) {
  const OpMath<T> a = Widen(old), b = Widen(v);
  return Narrow<T>(kMul ? WrapMul(a, b) : WrapAdd(a, b));
}

// AtomicCombine: *p = Combine(*p, v) atomically. Native atomicAdd where the vendors have one
// (float, double, int32, int64 on the device); otherwise a compare-and-swap loop, on the aligned
// 32-bit word that contains the element for the 1- and 2-byte dtypes (bool, uint8, int8, int16,
// float16, bfloat16: the word stays inside the allocation, which the allocators align to 256
// bytes or more). Floating additions in any order make the sum's rounding depend on scheduling,
// as PyTorch's CUDA scatter_add does.
template <typename T, bool kMul>
TSR_GPU_HD TSR_GPU_INLINE void AtomicCombine(T* p, T v) {
#ifdef TSR_GPU_DEVICE_PASS
  if constexpr (!kMul && (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                          std::is_same_v<T, int32_t>)) {
    atomicAdd(p, v);
    return;
  } else if constexpr (!kMul && std::is_same_v<T, int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(p),  // NOLINT(runtime/int)
              static_cast<unsigned long long>(v));       // NOLINT(runtime/int)
    return;
  } else
#endif
      if constexpr (sizeof(T) == 8) {
    uint64_t* word = reinterpret_cast<uint64_t*>(p);
    uint64_t seen = Load64(word);
    for (;;) {
      T old;
      memcpy(&old, &seen, sizeof old);
      const T next = Combine<T, kMul>(old, v);
      uint64_t bits;
      memcpy(&bits, &next, sizeof bits);
      const uint64_t found = Cas64(word, seen, bits);
      if (found == seen) return;
      seen = found;
    }
  } else if constexpr (sizeof(T) == 4) {
    uint32_t* word = reinterpret_cast<uint32_t*>(p);
    uint32_t seen = Load32(word);
    for (;;) {
      T old;
      memcpy(&old, &seen, sizeof old);
      const T next = Combine<T, kMul>(old, v);
      uint32_t bits;
      memcpy(&bits, &next, sizeof bits);
      const uint32_t found = Cas32(word, seen, bits);
      if (found == seen) return;
      seen = found;
    }
  } else {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2, "1-, 2-, 4- or 8-byte elements");
    const uintptr_t address = reinterpret_cast<uintptr_t>(p);
    uint32_t* word = reinterpret_cast<uint32_t*>(address & ~uintptr_t{3});
    const uint32_t shift = static_cast<uint32_t>(address & 3u) * 8u;  // little-endian
    const uint32_t mask = (sizeof(T) == 1 ? 0xffu : 0xffffu) << shift;
    uint32_t seen = Load32(word);
    for (;;) {
      const uint32_t field = (seen & mask) >> shift;
      T old;
      if constexpr (sizeof(T) == 1) {
        const uint8_t b = static_cast<uint8_t>(field);
        memcpy(&old, &b, 1);
      } else {
        const uint16_t h = static_cast<uint16_t>(field);
        memcpy(&old, &h, 2);
      }
      const T next = Combine<T, kMul>(old, v);
      uint32_t bits = 0;
      if constexpr (sizeof(T) == 1) {
        uint8_t b;
        memcpy(&b, &next, 1);
        bits = b;
      } else {
        uint16_t h;
        memcpy(&h, &next, 2);
        bits = h;
      }
      const uint32_t found = Cas32(word, seen, (seen & ~mask) | (bits << shift));
      if (found == seen) return;
      seen = found;
    }
  }
}

// --- gather, index_select, scatter, flip, tril, triu ---------------------------------------

// What one thread does per element (Note [GPU index kernels]).
enum class IndexKind {
  kCopy,         // flip, clone, scatter's copy of self: dst = src
  kTril,         // dst = src where col - row <= diagonal, else 0
  kTriu,         // dst = src where col - row >= diagonal, else 0
  kGather,       // dst = src[index] (src restrided: 0 along dim)
  kIndexSelect,  // as gather (a negative index is out of range, as in PyTorch)
  kScatter,      // dst[index] = src (dst restrided)
  kScatterAdd,   // dst[index] += src, atomically
  kScatterMul,   // dst[index] *= src, atomically
};

inline constexpr int kIndexOperands = 3;  // dst, src, index

// IndexError: the first out-of-range index a launch met, in device memory; the host reads it
// back after the launch (Note [GPU index kernels]).
struct IndexError {
  uint32_t hit;  // 0: none
  uint32_t unused;
  int64_t value;
};

// IndexArgs: one launch over `numel` elements of an iteration shape (innermost first, byte
// strides per operand, signed: flip reads backwards).
struct IndexArgs {
  char* data[kIndexOperands] = {};
  int64_t numel = 0;
  int32_t ndim = 0;
  bool narrow = false;  // numel < 2^31: 32-bit index arithmetic through FastDivmod
  int64_t sizes[kMaxDims] = {};
  FastDivmod fast[kMaxDims];
  int64_t strides[kMaxDims][kIndexOperands] = {};
  // gather, index_select, scatter: the indexed tensor's byte stride along `dim`, its size, the
  // index dtype (int32 or int64) and where to report a bad index.
  int64_t step = 0;
  int64_t dim_size = 0;
  int32_t index_dtype = TSR_DTYPE_INT64;
  IndexError* error = nullptr;
  // scatter.value: the value in dst's dtype (raw bytes), used when src_is_value.
  bool src_is_value = false;
  uint64_t value = 0;
  // tril, triu: which dimensions (innermost first) are the matrices' rows and columns.
  int32_t row_dim = -1;
  int32_t col_dim = -1;
  int64_t diagonal = 0;
};

inline constexpr int kIndexThreads = 256;
inline constexpr int kIndexPerThread = 4;

// IndexBlocks: the blocks a launch of `numel` elements takes.
inline int64_t IndexBlocks(int64_t numel) {
  constexpr int64_t kPerBlock = int64_t{kIndexThreads} * kIndexPerThread;
  return (numel + kPerBlock - 1) / kPerBlock;
}

TSR_GPU_HD TSR_GPU_INLINE void RecordBadIndex(IndexError* error, int64_t value) {
  if (Cas32(&error->hit, 0u, 1u) == 0u) error->value = value;
}

// IndexThreadBody: thread `thread` of block `block`; T is the element's storage (any type of
// the element's size for the kinds that only move bytes).
template <IndexKind kKind, typename T>
TSR_GPU_HD TSR_GPU_INLINE void IndexThreadBody(const IndexArgs& a, uint32_t block,
                                               uint32_t thread) {
  const int64_t base = static_cast<int64_t>(block) * (kIndexThreads * kIndexPerThread) + thread;
  for (int e = 0; e < kIndexPerThread; ++e) {
    const int64_t linear = base + static_cast<int64_t>(e) * kIndexThreads;
    if (linear >= a.numel) return;
    int64_t off[kIndexOperands] = {0, 0, 0};
    int64_t row = 0, col = 0;
    if (a.narrow) {
      uint32_t rest = static_cast<uint32_t>(linear);
      for (int d = 0; d < a.ndim; ++d) {
        const uint32_t q = a.fast[d].Div(rest);
        const int64_t r = rest - q * a.fast[d].divisor;
        for (int k = 0; k < kIndexOperands; ++k) off[k] += r * a.strides[d][k];
        if (d == a.row_dim) row = r;
        if (d == a.col_dim) col = r;
        rest = q;
      }
    } else {
      int64_t rest = linear;
      for (int d = 0; d < a.ndim; ++d) {
        const int64_t q = rest / a.sizes[d];
        const int64_t r = rest - q * a.sizes[d];
        for (int k = 0; k < kIndexOperands; ++k) off[k] += r * a.strides[d][k];
        if (d == a.row_dim) row = r;
        if (d == a.col_dim) col = r;
        rest = q;
      }
    }
    char* dst = a.data[0] + off[0];
    const char* src = a.data[1] + off[1];
    if constexpr (kKind == IndexKind::kCopy) {
      *reinterpret_cast<T*>(dst) = *reinterpret_cast<const T*>(src);
    } else if constexpr (kKind == IndexKind::kTril || kKind == IndexKind::kTriu) {
      const bool keep =
          kKind == IndexKind::kTriu ? col - row >= a.diagonal : col - row <= a.diagonal;
      T v;
      if (keep) {
        v = *reinterpret_cast<const T*>(src);
      } else {
        memset(&v, 0, sizeof v);  // zero in every dtype
      }
      *reinterpret_cast<T*>(dst) = v;
    } else {
      const char* at = a.data[2] + off[2];
      int64_t k = a.index_dtype == TSR_DTYPE_INT32 ? *reinterpret_cast<const int32_t*>(at)
                                                   : *reinterpret_cast<const int64_t*>(at);
      if (k < 0 || k >= a.dim_size) {
        RecordBadIndex(a.error, k);  // the element is skipped: nothing out of bounds is touched
        continue;
      }
      if constexpr (kKind == IndexKind::kGather || kKind == IndexKind::kIndexSelect) {
        *reinterpret_cast<T*>(dst) = *reinterpret_cast<const T*>(src + k * a.step);
      } else {
        T v;
        if (a.src_is_value) {
          memcpy(&v, &a.value, sizeof v);
        } else {
          v = *reinterpret_cast<const T*>(src);
        }
        T* target = reinterpret_cast<T*>(dst + k * a.step);
        if constexpr (kKind == IndexKind::kScatter) {
          *target = v;
        } else {
          AtomicCombine<T, kKind == IndexKind::kScatterMul>(target, v);
        }
      }
    }
  }
}

// --- sort and topk ----------------------------------------------------------------------------
// Note [GPU sort]
// Each row (a line along `dim`) is sorted by one block with a bitonic network over (key,
// position) pairs, padded to a power of two P. The key is an unsigned integer whose order is
// the values' (SortKey): NaN is above +inf (one canonical NaN), -0.0 equals 0.0; descending
// complements it. Ties are broken by position, so the order is total and the result is what a
// stable sort gives (stable=True's promise; stable=False allows it); padding has the largest
// key and positions past the row, so it sorts last. The values are then read back from the
// input by position (so -0.0 and NaN payloads come out as they were). Rows with P up to
// kSortSharedMax sort in shared memory; longer ones in a global scratch buffer, one block per
// row still (correct, not fast). topk is the sorted row's first k.
inline constexpr int64_t kSortSharedMax = 2048;
inline constexpr int kSortMaxThreads = 1024;

// SortKey: the order-preserving key of v (ascending).
template <typename S>
TSR_GPU_HD TSR_GPU_INLINE uint64_t SortKey(S v) {
  if constexpr (std::is_same_v<S, bool>) {
    return v ? 1u : 0u;
  } else if constexpr (std::is_integral_v<S> && std::is_unsigned_v<S>) {
    return v;
  } else if constexpr (std::is_integral_v<S>) {
    return static_cast<uint64_t>(static_cast<int64_t>(v)) ^ (uint64_t{1} << 63);
  } else {
    using W = std::conditional_t<std::is_same_v<S, double>, double, float>;
    W w = static_cast<W>(Widen(v));
    if (!(w == w)) return ~uint64_t{0};  // every NaN, above +inf
    if (w == 0) w = 0;                   // -0.0 sorts as 0.0
    uint64_t bits;
    if constexpr (sizeof(W) == 8) {
      memcpy(&bits, &w, 8);
    } else {
      uint32_t b;
      memcpy(&b, &w, 4);
      bits = static_cast<uint64_t>(b) << 32;
    }
    return (bits >> 63) != 0 ? ~bits : bits | (uint64_t{1} << 63);
  }
}

// SortArgs: a launch sorting rows [first_row, first_row + gridDim) of a tensor.
struct SortArgs {
  const char* self = nullptr;
  char* values = nullptr;
  char* indices = nullptr;
  int64_t first_row = 0;
  int64_t n = 0;       // row length
  int64_t padded = 1;  // P: the power of two at or above n
  int64_t count = 0;   // elements written per row: n (sort) or k (topk)
  bool descending = false;
  int32_t outer_ndim = 0;  // the other dimensions, innermost first
  int64_t outer_sizes[kMaxDims] = {};
  int64_t outer_strides[kMaxDims][3] = {};  // bytes: self, values, indices
  int64_t along[3] = {};                    // bytes between neighbours along dim
  // The global scratch of rows longer than kSortSharedMax: padded keys and positions per row
  // of the launch (row - first_row).
  uint64_t* scratch_keys = nullptr;
  int32_t* scratch_pos = nullptr;
};

// SortThreads: a row's block size.
inline int SortThreads(int64_t padded) {
  const int64_t half = padded / 2;
  return static_cast<int>(half < 1 ? 1 : half > kSortMaxThreads ? kSortMaxThreads : half);
}

TSR_GPU_HD TSR_GPU_INLINE void SortRowOffsets(const SortArgs& a, int64_t row, int64_t* off) {
  off[0] = off[1] = off[2] = 0;
  for (int d = 0; d < a.outer_ndim; ++d) {
    const int64_t q = row / a.outer_sizes[d];
    const int64_t r = row - q * a.outer_sizes[d];
    for (int k = 0; k < 3; ++k) off[k] += r * a.outer_strides[d][k];
    row = q;
  }
}

// Phase 1: the row's keys and positions into keys/pos (shared memory or scratch).
template <typename S>
TSR_GPU_HD TSR_GPU_INLINE void SortLoad(const SortArgs& a, int64_t row, uint64_t* keys,
                                        int32_t* pos, uint32_t thread, uint32_t threads) {
  int64_t off[3];
  SortRowOffsets(a, row, off);
  for (int64_t i = thread; i < a.padded; i += threads) {
    if (i < a.n) {
      const uint64_t key = SortKey(*reinterpret_cast<const S*>(a.self + off[0] + i * a.along[0]));
      keys[i] = a.descending ? ~key : key;
    } else {
      keys[i] = ~uint64_t{0};
    }
    pos[i] = static_cast<int32_t>(i);
  }
}

// Phase 2, once per (k, j) of the network (k = 2, 4, ..., P; j = k/2, ..., 1), barriers
// between: each thread orders its pairs (i, i + j).
TSR_GPU_HD TSR_GPU_INLINE void SortStep(uint64_t* keys, int32_t* pos, int64_t padded, int64_t k,
                                        int64_t j, uint32_t thread, uint32_t threads) {
  for (int64_t p = thread; p < padded / 2; p += threads) {
    const int64_t i = ((p & ~(j - 1)) << 1) | (p & (j - 1));  // j is a power of two
    const int64_t l = i + j;
    const bool up = (i & k) == 0;
    const bool greater = keys[i] > keys[l] || (keys[i] == keys[l] && pos[i] > pos[l]);
    if (greater == up) {
      const uint64_t tk = keys[i];
      keys[i] = keys[l];
      keys[l] = tk;
      const int32_t tp = pos[i];
      pos[i] = pos[l];
      pos[l] = tp;
    }
  }
}

// Phase 3: the first `count` of the sorted row: values (read back from the input by position)
// and int64 indices.
template <typename S>
TSR_GPU_HD TSR_GPU_INLINE void SortStore(const SortArgs& a, int64_t row, const int32_t* pos,
                                         uint32_t thread, uint32_t threads) {
  int64_t off[3];
  SortRowOffsets(a, row, off);
  for (int64_t i = thread; i < a.count; i += threads) {
    const int64_t p = pos[i];
    *reinterpret_cast<S*>(a.values + off[1] + i * a.along[1]) =
        *reinterpret_cast<const S*>(a.self + off[0] + p * a.along[0]);
    *reinterpret_cast<int64_t*>(a.indices + off[2] + i * a.along[2]) = p;
  }
}

}  // namespace gpu
}  // namespace tessera

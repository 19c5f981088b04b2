// The GPU elementwise iterator's per-thread work, as code that compiles for the device (nvcc,
// hipcc) and for the host (g++): kernels.cu wraps ThreadBody in __global__ functions, and
// tests/elementwise_test.cc runs the same ThreadBody on the host for every (block, thread) of
// a launch, so indexing, broadcasting, dtype conversion and each op's arithmetic are tested
// without a GPU (Note [GPU elementwise iterator] in elementwise_plan.h has the host side).
//
// Dtypes: operands are raw bytes with a tsr_dtype each. An op computes in a storage type S (the
// op's compute dtype) through OpMath<S> (float for the 16-bit floats, S otherwise), as
// PyTorch's CUDA kernels do: inputs are converted to S, widened to OpMath<S>, the result rounded
// to S once and converted to the output's dtype. Constants (Scalars, 0-dim CPU tensors) arrive
// already in OpMath<S>.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tessera/c/common.h"

#if defined(__CUDACC__) || defined(__HIPCC__)
#define TSR_GPU_HD __host__ __device__
#define TSR_GPU_INLINE __forceinline__
#else
#define TSR_GPU_HD
#define TSR_GPU_INLINE inline
#endif
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define TSR_GPU_DEVICE_PASS 1
#endif

namespace tessera {
namespace gpu {

inline constexpr int kMaxDims = 12;     // after coalescing (Note [GPU elementwise iterator])
inline constexpr int kMaxOperands = 4;  // the output and up to three inputs (where, lerp)
inline constexpr int kThreadsPerBlock = 256;
inline constexpr int kElementsPerThread = 4;

// 16-bit float storage.
struct alignas(2) Half {
  uint16_t bits;
};
struct alignas(2) BFloat16 {
  uint16_t bits;
};

TSR_GPU_HD TSR_GPU_INLINE uint32_t BitsOf(float f) {
#ifdef TSR_GPU_DEVICE_PASS
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}
TSR_GPU_HD TSR_GPU_INLINE float FloatOf(uint32_t u) {
#ifdef TSR_GPU_DEVICE_PASS
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

// The conversions round to nearest even and keep NaN a quiet NaN and infinities infinite: the
// SDK's (tessera/sdk/half.hpp) rules, which the host test checks bit for bit.
TSR_GPU_HD TSR_GPU_INLINE float ToFloat(Half h) {
  uint32_t magnitude = static_cast<uint32_t>(h.bits & 0x7fffu) << 13;
  const uint32_t exponent = magnitude & 0x0f800000u;
  magnitude += (127u - 15u) << 23;
  if (exponent == 0x0f800000u) {
    magnitude += (128u - 16u) << 23;  // Inf or NaN
  } else if (exponent == 0) {         // subnormal or zero: let the FPU normalize it
    magnitude += 1u << 23;
    magnitude = BitsOf(FloatOf(magnitude) - FloatOf(113u << 23));
  }
  return FloatOf(magnitude | (static_cast<uint32_t>(h.bits & 0x8000u) << 16));
}
TSR_GPU_HD TSR_GPU_INLINE float ToFloat(BFloat16 b) {
  return FloatOf(static_cast<uint32_t>(b.bits) << 16);
}
TSR_GPU_HD TSR_GPU_INLINE Half ToHalf(float f) {
  uint32_t x = BitsOf(f);
  const uint32_t sign = x & 0x80000000u;
  x ^= sign;
  uint16_t h;
  if (x >= (127u + 16u) << 23) {
    h = x > 0x7f800000u ? 0x7e00u : 0x7c00u;
  } else if (x < (113u << 23)) {
    const float magic = FloatOf(((127u - 15u) + (23u - 10u) + 1u) << 23);
    h = static_cast<uint16_t>(BitsOf(FloatOf(x) + magic) - BitsOf(magic));
  } else {
    const uint32_t odd = (x >> 13) & 1u;
    x += ((15u - 127u) << 23) + 0xfffu + odd;
    h = static_cast<uint16_t>(x >> 13);
  }
  return Half{static_cast<uint16_t>(h | (sign >> 16))};
}
TSR_GPU_HD TSR_GPU_INLINE BFloat16 ToBFloat16(float f) {
  const uint32_t x = BitsOf(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return BFloat16{static_cast<uint16_t>((x >> 16) | 0x40u)};
  return BFloat16{static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16)};
}

// Dtype sets as bit masks (bit tsr_dtype), the dtypes an op has kernels for.
constexpr uint32_t DtypeBit(int32_t dtype) { return uint32_t{1} << dtype; }
inline constexpr uint32_t kFloatingDtypes =
    DtypeBit(TSR_DTYPE_FLOAT16) | DtypeBit(TSR_DTYPE_BFLOAT16) | DtypeBit(TSR_DTYPE_FLOAT32) |
    DtypeBit(TSR_DTYPE_FLOAT64);
inline constexpr uint32_t kIntegralDtypes = DtypeBit(TSR_DTYPE_UINT8) | DtypeBit(TSR_DTYPE_INT8) |
                                            DtypeBit(TSR_DTYPE_INT16) | DtypeBit(TSR_DTYPE_INT32) |
                                            DtypeBit(TSR_DTYPE_INT64);
inline constexpr uint32_t kNumericDtypes = kFloatingDtypes | kIntegralDtypes;
inline constexpr uint32_t kAllDtypes = kNumericDtypes | DtypeBit(TSR_DTYPE_BOOL);
inline constexpr uint32_t kIntegralAndBoolDtypes = kIntegralDtypes | DtypeBit(TSR_DTYPE_BOOL);

// kDtypeOf: the tsr_dtype stored as S.
template <typename S>
inline constexpr int32_t kDtypeOf = std::is_same_v<S, bool>       ? TSR_DTYPE_BOOL
                                    : std::is_same_v<S, uint8_t>  ? TSR_DTYPE_UINT8
                                    : std::is_same_v<S, int8_t>   ? TSR_DTYPE_INT8
                                    : std::is_same_v<S, int16_t>  ? TSR_DTYPE_INT16
                                    : std::is_same_v<S, int32_t>  ? TSR_DTYPE_INT32
                                    : std::is_same_v<S, int64_t>  ? TSR_DTYPE_INT64
                                    : std::is_same_v<S, Half>     ? TSR_DTYPE_FLOAT16
                                    : std::is_same_v<S, BFloat16> ? TSR_DTYPE_BFLOAT16
                                    : std::is_same_v<S, float>    ? TSR_DTYPE_FLOAT32
                                                                  : TSR_DTYPE_FLOAT64;

template <typename T>
inline constexpr bool kIsReduced = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <typename T>
inline constexpr bool kIsFloat = kIsReduced<T> || std::is_floating_point_v<T>;

// OpMath: what an op stored as T computes in.
template <typename T>
using OpMath = std::conditional_t<kIsReduced<T>, float, T>;

// FloatToInt64: C++ leaves NaN, infinities and |v| >= 2^63 undefined; like the CPU plugin
// (tessera/sdk/float_to_int.hpp) they give INT64_MIN, what x86 and PyTorch on x86 give.
TSR_GPU_HD TSR_GPU_INLINE int64_t FloatToInt64(double d) {
  if (d >= -9223372036854775808.0 && d < 9223372036854775808.0) return static_cast<int64_t>(d);
  return INT64_MIN;
}

// Widen / Narrow move between a storage type and its OpMath.
template <typename T>
TSR_GPU_HD TSR_GPU_INLINE OpMath<T> Widen(T v) {
  if constexpr (kIsReduced<T>) {
    return ToFloat(v);
  } else {
    return v;
  }
}
template <typename T>
TSR_GPU_HD TSR_GPU_INLINE T Narrow(OpMath<T> v) {
  if constexpr (std::is_same_v<T, Half>) {
    return ToHalf(v);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return ToBFloat16(v);
  } else {
    return v;
  }
}

// Convert: To from From as PyTorch's casts (and the CPU plugin's) do: anything to bool is
// "!= 0"; floating to integral truncates through int64 (so narrow types wrap).
template <typename To, typename From>
TSR_GPU_HD TSR_GPU_INLINE To Convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else {
    const auto c = Widen(v);
    if constexpr (std::is_same_v<To, bool>) {
      return c != 0;
    } else if constexpr (kIsFloat<To>) {
      using Wide = std::conditional_t<std::is_same_v<To, double>, double, float>;
      return Narrow<To>(static_cast<Wide>(c));
    } else if constexpr (std::is_floating_point_v<decltype(c)>) {
      return static_cast<To>(FloatToInt64(static_cast<double>(c)));
    } else {
      return static_cast<To>(c);
    }
  }
}

// Load / Store by a dtype known only at run time (operands of different dtypes).
template <typename T>
TSR_GPU_HD TSR_GPU_INLINE T LoadAs(const char* p, int32_t dtype) {
  switch (dtype) {
    case TSR_DTYPE_BOOL:
      return Convert<T>(*reinterpret_cast<const bool*>(p));
    case TSR_DTYPE_UINT8:
      return Convert<T>(*reinterpret_cast<const uint8_t*>(p));
    case TSR_DTYPE_INT8:
      return Convert<T>(*reinterpret_cast<const int8_t*>(p));
    case TSR_DTYPE_INT16:
      return Convert<T>(*reinterpret_cast<const int16_t*>(p));
    case TSR_DTYPE_INT32:
      return Convert<T>(*reinterpret_cast<const int32_t*>(p));
    case TSR_DTYPE_INT64:
      return Convert<T>(*reinterpret_cast<const int64_t*>(p));
    case TSR_DTYPE_FLOAT16:
      return Convert<T>(*reinterpret_cast<const Half*>(p));
    case TSR_DTYPE_BFLOAT16:
      return Convert<T>(*reinterpret_cast<const BFloat16*>(p));
    case TSR_DTYPE_FLOAT32:
      return Convert<T>(*reinterpret_cast<const float*>(p));
    default:
      return Convert<T>(*reinterpret_cast<const double*>(p));
  }
}
template <typename T>
TSR_GPU_HD TSR_GPU_INLINE void StoreAs(char* p, int32_t dtype, T v) {
  switch (dtype) {
    case TSR_DTYPE_BOOL:
      *reinterpret_cast<bool*>(p) = Convert<bool>(v);
      break;
    case TSR_DTYPE_UINT8:
      *reinterpret_cast<uint8_t*>(p) = Convert<uint8_t>(v);
      break;
    case TSR_DTYPE_INT8:
      *reinterpret_cast<int8_t*>(p) = Convert<int8_t>(v);
      break;
    case TSR_DTYPE_INT16:
      *reinterpret_cast<int16_t*>(p) = Convert<int16_t>(v);
      break;
    case TSR_DTYPE_INT32:
      *reinterpret_cast<int32_t*>(p) = Convert<int32_t>(v);
      break;
    case TSR_DTYPE_INT64:
      *reinterpret_cast<int64_t*>(p) = Convert<int64_t>(v);
      break;
    case TSR_DTYPE_FLOAT16:
      *reinterpret_cast<Half*>(p) = Convert<Half>(v);
      break;
    case TSR_DTYPE_BFLOAT16:
      *reinterpret_cast<BFloat16*>(p) = Convert<BFloat16>(v);
      break;
    case TSR_DTYPE_FLOAT32:
      *reinterpret_cast<float*>(p) = Convert<float>(v);
      break;
    default:
      *reinterpret_cast<double*>(p) = Convert<double>(v);
      break;
  }
}

// FastDivmod divides a 32-bit index by a fixed divisor with a multiply and a shift (Granlund and
// Montgomery; what PyTorch's IntDivider does): for every n < 2^31 and divisor d in [1, 2^31),
// q = (umulhi(n, m) + n) >> s with s = ceil(log2 d) and m = floor(2^32 (2^s - d) / d) + 1.
struct FastDivmod {
  uint32_t divisor = 1;
  uint32_t magic = 0;
  uint32_t shift = 0;

  FastDivmod() = default;
  explicit FastDivmod(uint32_t d) : divisor(d) {
    while (shift < 32 && (uint32_t{1} << shift) < d) ++shift;
    const uint64_t one = 1;
    magic = static_cast<uint32_t>(((one << 32) * ((one << shift) - d)) / d + 1);
  }
  TSR_GPU_HD TSR_GPU_INLINE uint32_t Div(uint32_t n) const {
#ifdef TSR_GPU_DEVICE_PASS
    const uint32_t hi = __umulhi(n, magic);
#else
    const uint32_t hi = static_cast<uint32_t>((static_cast<uint64_t>(n) * magic) >> 32);
#endif
    return (hi + n) >> shift;
  }
};

// Vec<S>: a thread's kElementsPerThread consecutive elements as one aligned load or store (16
// bytes for float32: one 128-bit access, as PyTorch's vectorized elementwise kernels).
template <typename S>
struct alignas(sizeof(S) * kElementsPerThread) Vec {
  S v[kElementsPerThread];
};

// Args: one launch of N operands (0 is the output) over `numel` elements whose offsets fit in
// 32 bits. Sizes and byte strides are innermost first. Constant operands have no data; their
// value is `value[k]`, already in OpMath<S>. `vectorized`: the fast path's operands all start
// at an address aligned for Vec<S> (MakeArgs), so a thread may move its elements as one Vec.
template <typename S, int N>
struct Args {
  bool vectorized;
  char* data[N];
  int32_t dtype[N];
  bool constant[N];
  OpMath<S> value[N];
  uint32_t numel;
  int32_t ndim;
  FastDivmod sizes[kMaxDims];
  uint32_t strides[kMaxDims][N];
};

// Offsets of element `linear` (row-major over the iteration shape) in each operand, in bytes.
template <typename S, int N>
TSR_GPU_HD TSR_GPU_INLINE void OffsetsOf(const Args<S, N>& a, uint32_t linear, uint32_t* out) {
  for (int k = 0; k < N; ++k) out[k] = 0;
  for (int d = 0; d < a.ndim; ++d) {
    const uint32_t q = a.sizes[d].Div(linear);
    const uint32_t r = linear - q * a.sizes[d].divisor;
    for (int k = 0; k < N; ++k) out[k] += r * a.strides[d][k];
    linear = q;
  }
}

// Input k of element `linear` in OpMath<S>: from memory by its dtype, or the constant.
template <typename S, int N>
TSR_GPU_HD TSR_GPU_INLINE OpMath<S> Input(const Args<S, N>& a, int k, const uint32_t* offsets) {
  if (a.constant[k]) return a.value[k];
  return Widen(LoadAs<S>(a.data[k] + offsets[k], a.dtype[k]));
}

// Apply calls a functor with its inputs.
template <typename S, typename Op>
TSR_GPU_HD TSR_GPU_INLINE OpMath<S> Apply(const Op& op, const OpMath<S>* in) {
  if constexpr (Op::kArity == 0) {
    return op();
  } else if constexpr (Op::kArity == 1) {
    return op(in[0]);
  } else if constexpr (Op::kArity == 2) {
    return op(in[0], in[1]);
  } else {
    return op(in[0], in[1], in[2]);
  }
}

// ThreadBody: the work of thread `thread` of block `block` of a launch with kThreadsPerBlock
// threads per block, each taking kElementsPerThread elements: a block-stride apart (coalesced
// scalar accesses) or, vectorized, consecutive (one Vec per operand; consecutive threads read
// consecutive Vecs, coalesced too, in a quarter of the memory instructions).
//
// kContiguous: every non-constant operand is dense, in one order, and of dtype S (the plan's
// fast path, Note [GPU elementwise iterator]): element i is at i * sizeof(S), no index math,
// no conversion; vectorized where the operands are aligned for it (a view starting mid-vector
// is not), its last partial Vec element by element. Otherwise each element's offsets come from
// the sizes and strides and every operand is read and written by its own dtype.
template <typename S, int N, bool kContiguous, typename Op>
TSR_GPU_HD TSR_GPU_INLINE void ThreadBody(const Args<S, N>& a, const Op& op, uint32_t block,
                                          uint32_t thread) {
  static_assert(Op::kArity == N - 1, "the op takes the launch's inputs");
  OpMath<S> in[N > 1 ? N - 1 : 1];
  if constexpr (kContiguous) {
    if (a.vectorized) {
      const uint32_t vec = block * kThreadsPerBlock + thread;
      const uint32_t first = vec * kElementsPerThread;
      if (first >= a.numel) return;
      if (a.numel - first >= static_cast<uint32_t>(kElementsPerThread)) {
        Vec<S> loaded[N > 1 ? N - 1 : 1];
        for (int k = 1; k < N; ++k) {
          if (!a.constant[k]) loaded[k - 1] = reinterpret_cast<const Vec<S>*>(a.data[k])[vec];
        }
        Vec<S> result;
        for (int e = 0; e < kElementsPerThread; ++e) {
          for (int k = 1; k < N; ++k) {
            in[k - 1] = a.constant[k] ? a.value[k] : Widen(loaded[k - 1].v[e]);
          }
          result.v[e] = Narrow<S>(Apply<S>(op, in));
        }
        reinterpret_cast<Vec<S>*>(a.data[0])[vec] = result;
        return;
      }
      for (uint32_t i = first; i < a.numel; ++i) {  // the last, partial Vec
        for (int k = 1; k < N; ++k) {
          in[k - 1] = a.constant[k] ? a.value[k] : Widen(reinterpret_cast<const S*>(a.data[k])[i]);
        }
        reinterpret_cast<S*>(a.data[0])[i] = Narrow<S>(Apply<S>(op, in));
      }
      return;
    }
  }
  const uint32_t base = block * (kThreadsPerBlock * kElementsPerThread) + thread;
  for (int e = 0; e < kElementsPerThread; ++e) {
    const uint32_t i = base + static_cast<uint32_t>(e) * kThreadsPerBlock;
    if (i >= a.numel) return;
    if constexpr (kContiguous) {
      for (int k = 1; k < N; ++k) {
        in[k - 1] = a.constant[k] ? a.value[k] : Widen(reinterpret_cast<const S*>(a.data[k])[i]);
      }
      reinterpret_cast<S*>(a.data[0])[i] = Narrow<S>(Apply<S>(op, in));
    } else {
      uint32_t offsets[N];
      OffsetsOf(a, i, offsets);
      for (int k = 1; k < N; ++k) in[k - 1] = Input(a, k, offsets);
      StoreAs<S>(a.data[0] + offsets[0], a.dtype[0], Narrow<S>(Apply<S>(op, in)));
    }
  }
}

// --- the ops ------------------------------------------------------------------------------
// Each computes in C = OpMath<S>. Integer arithmetic wraps (through unsigned types, since
// signed overflow is undefined in C++), as PyTorch's does in practice.

template <typename C>
TSR_GPU_HD TSR_GPU_INLINE C WrapAdd(C a, C b) {
  if constexpr (std::is_integral_v<C> && !std::is_same_v<C, bool>) {
    using U = std::make_unsigned_t<decltype(a + b)>;
    return static_cast<C>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <typename C>
TSR_GPU_HD TSR_GPU_INLINE C WrapSub(C a, C b) {
  if constexpr (std::is_integral_v<C> && !std::is_same_v<C, bool>) {
    using U = std::make_unsigned_t<decltype(a - b)>;
    return static_cast<C>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return a - b;
  }
}
template <typename C>
TSR_GPU_HD TSR_GPU_INLINE C WrapMul(C a, C b) {
  if constexpr (std::is_same_v<C, bool>) {
    return a && b;
  } else if constexpr (std::is_integral_v<C>) {
    using U = std::make_unsigned_t<decltype(a * b)>;
    return static_cast<C>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

// add / sub with alpha: a + alpha * b (bool: a || (alpha && b), as the CPU plugin computes).
template <typename C, bool kSub>
struct AddOp {
  static constexpr int kArity = 2;
  C alpha;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C a, C b) const {
    const C scaled = WrapMul(alpha, b);
    if constexpr (std::is_same_v<C, bool>) {
      return a || scaled;
    } else if constexpr (kSub) {
      return WrapSub(a, scaled);
    } else {
      return WrapAdd(a, scaled);
    }
  }
};
template <typename C>
struct MulOp {
  static constexpr int kArity = 2;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C a, C b) const { return WrapMul(a, b); }
};
template <typename C>  // true division: floating C only
struct DivOp {
  static constexpr int kArity = 2;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C a, C b) const { return a / b; }
};

// Copy (copy_, fill_): the input converted to the output's dtype.
template <typename C>
struct IdentityOp {
  static constexpr int kArity = 1;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C a) const { return a; }
};

template <typename C>
struct NegOp {
  static constexpr int kArity = 1;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C a) const { return WrapSub(C(0), a); }
};
template <typename C>
struct AbsOp {
  static constexpr int kArity = 1;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C a) const {
    if constexpr (std::is_floating_point_v<C>) {
      return std::fabs(a);
    } else if constexpr (std::is_signed_v<C>) {
      return a < 0 ? WrapSub(C(0), a) : a;
    } else {
      return a;
    }
  }
};
template <typename C>
struct ReluOp {
  static constexpr int kArity = 1;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C a) const {
    return a > C(0) || !(a == a) ? a : C(0);  // NaN stays NaN
  }
};

// The floating unary ops (C is float or double).
template <typename C>
struct ExpOp {
  static constexpr int kArity = 1;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C a) const { return std::exp(a); }
};
template <typename C>
struct LogOp {
  static constexpr int kArity = 1;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C a) const { return std::log(a); }
};
template <typename C>
struct SqrtOp {
  static constexpr int kArity = 1;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C a) const { return std::sqrt(a); }
};
template <typename C>
struct RsqrtOp {
  static constexpr int kArity = 1;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C a) const { return C(1) / std::sqrt(a); }
};
template <typename C>
struct SinOp {
  static constexpr int kArity = 1;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C a) const { return std::sin(a); }
};
template <typename C>
struct CosOp {
  static constexpr int kArity = 1;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C a) const { return std::cos(a); }
};
template <typename C>
struct TanhOp {
  static constexpr int kArity = 1;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C a) const { return std::tanh(a); }
};
template <typename C>
struct SigmoidOp {
  static constexpr int kArity = 1;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C a) const { return C(1) / (C(1) + std::exp(-a)); }
};
template <typename C>
struct ReciprocalOp {
  static constexpr int kArity = 1;
  TSR_GPU_HD TSR_GPU_INLINE C operator()(C a) const { return C(1) / a; }
};

}  // namespace gpu
}  // namespace tessera

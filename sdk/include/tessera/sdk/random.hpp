// Random numbers as every backend computes them (docs/random.md).
//
// A random op's kernel receives its draw, a RandomDraw, in place of the op's `Generator?
// generator` argument: the seed and offset the runtime reserved for the call (tsr_call_plan's
// rng_seed and rng_offset; Note [Random numbers] in the runtime). Element i of the output (its
// index in row-major order over the output's shape, whatever the strides) takes the Philox-4x32-10
// block of key (seed) and counter (i, offset), and turns it into a value as the functions below
// do. A kernel that follows them gives the bits every other backend gives for the same seed:
// write the loop however the device likes (threads, vectors, any order), but take each
// element's numbers from its own block.
//
// Everything here is integer arithmetic and correctly rounded IEEE operations, with the products
// and sums that must not fuse into an FMA kept apart, so host and device compilers agree bit
// for bit; normal values call log, sqrt and cos in double, so backends whose libm differ in the
// last bit of a double may (rarely) differ in the last bit of a float64 output. Rounding to the
// output's dtype: a float32 output rounds the double once; a float16 or bfloat16 output rounds
// it to float first, then the float to 16 bits (uniform_float's result, a float, once).
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define TESSERA_HOST_DEVICE __host__ __device__
#else
#define TESSERA_HOST_DEVICE
#endif

namespace tessera {
namespace sdk {

// PhiloxBlock: the four 32-bit words one counter gives.
struct PhiloxBlock {
  uint32_t x[4];
};

// philox4x32_10: Philox-4x32 with 10 rounds (Salmon et al., "Parallel random numbers: as easy
// as 1, 2, 3", SC 2011), the generator of cuRAND's Philox, JAX and PyTorch's CUDA backend.
TESSERA_HOST_DEVICE inline PhiloxBlock philox4x32_10(uint32_t c0, uint32_t c1, uint32_t c2,
                                                     uint32_t c3, uint32_t k0, uint32_t k1) {
  constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = static_cast<uint64_t>(kMul0) * c0;
    const uint64_t p1 = static_cast<uint64_t>(kMul1) * c2;
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  return PhiloxBlock{{c0, c1, c2, c3}};
}

namespace random_detail {
// Products and sums apart: a compiler may not fuse what passes through these (an FMA rounds
// once where the definition rounds twice).
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
__device__ inline float mul(float a, float b) { return __fmul_rn(a, b); }
__device__ inline float add(float a, float b) { return __fadd_rn(a, b); }
__device__ inline double mul(double a, double b) { return __dmul_rn(a, b); }
__device__ inline double add(double a, double b) { return __dadd_rn(a, b); }
#else
template <typename T>
inline T mul(T a, T b) {
  volatile T product = a * b;
  return product;
}
template <typename T>
inline T add(T a, T b) {
  return a + b;
}
#endif
}  // namespace random_detail

// RandomDraw: one kernel call's draw (the runtime reserved it; the kernel only reads it).
struct RandomDraw {
  uint64_t seed = 0;
  uint64_t offset = 0;

  // block: the Philox block of output element i.
  TESSERA_HOST_DEVICE PhiloxBlock block(uint64_t i) const {
    return philox4x32_10(static_cast<uint32_t>(i), static_cast<uint32_t>(i >> 32),
                         static_cast<uint32_t>(offset), static_cast<uint32_t>(offset >> 32),
                         static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
  }
};

// unit_float: a float in [0, 1) from the top 24 bits of x[0], a multiple of 2^-24.
TESSERA_HOST_DEVICE inline float unit_float(const PhiloxBlock& b) {
  return static_cast<float>(b.x[0] >> 8) * (1.0f / 16777216.0f);
}
// unit_double: a double in [0, 1) from the top 53 bits of (x[1] << 32 | x[0]).
TESSERA_HOST_DEVICE inline double unit_double(const PhiloxBlock& b) {
  const uint64_t bits = (static_cast<uint64_t>(b.x[1]) << 32) | b.x[0];
  return static_cast<double>(bits >> 11) * (1.0 / 9007199254740992.0);
}

// uniform_float: from + u * (to - from) in float arithmetic, u = unit_float (float32, float16
// and bfloat16 outputs: the 16-bit ones round the float). uniform_double: the same in double
// with u = unit_double (float64 outputs). Rounding may give `to` itself when the range is
// wider than the output's precision near `to`, as PyTorch's CPU kernel does.
TESSERA_HOST_DEVICE inline float uniform_float(const PhiloxBlock& b, float from, float to) {
  return random_detail::add(random_detail::mul(unit_float(b), to - from), from);
}
TESSERA_HOST_DEVICE inline double uniform_double(const PhiloxBlock& b, double from, double to) {
  return random_detail::add(random_detail::mul(unit_double(b), to - from), from);
}

// standard_normal: Box-Muller over the block's two 53-bit halves, in double:
// sqrt(-2 ln u1) * cos(2 pi u2) with u1 in (0, 1] (never ln 0) and u2 in [0, 1).
TESSERA_HOST_DEVICE inline double standard_normal(const PhiloxBlock& b) {
  const uint64_t lo = (static_cast<uint64_t>(b.x[1]) << 32) | b.x[0];
  const uint64_t hi = (static_cast<uint64_t>(b.x[3]) << 32) | b.x[2];
  const double u1 = static_cast<double>((lo >> 11) + 1) * (1.0 / 9007199254740992.0);
  const double u2 = static_cast<double>(hi >> 11) * (1.0 / 9007199254740992.0);
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(random_detail::mul(kTwoPi, u2));
}
// normal: std * standard_normal + mean, in double (for a 16-bit output round it to float
// first, then to 16 bits).
TESSERA_HOST_DEVICE inline double normal(const PhiloxBlock& b, double mean, double std) {
  return random_detail::add(random_detail::mul(std, standard_normal(b)), mean);
}

}  // namespace sdk
}  // namespace tessera

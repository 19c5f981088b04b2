// Vectorized float32 math for the unary ops' dense loops: exp, log and erf are SLEEF's u10
// functions (Debian's libsleef-dev; the library PyTorch's CPU kernels use too; within 1 ULP), tanh,
// sigmoid, silu and gelu our own forms over SLEEF's exp (their accuracy, up to 5.6 ulp for gelu,
// is in docs/cpu_backend.md and held by tessera_cpu_vector_math_test).
//
// Each function computes y[i] = f(x[i]) for i in [0, n) (y may be x). The plugin is built for
// any x86-64, so each is built three times, on SLEEF's AVX-512 functions (16 lanes), its AVX2
// ones (8 lanes, FMA) and its SSE2 ones (4 lanes), and the best the CPU has runs (asked once).
// Every element, the last ones of an array too, goes through the same vector function (a partial
// vector is padded), so a value's result does not depend on where it lies; it may differ in the
// last place between machines with different vector units (as PyTorch's does).
// Elsewhere (not x86-64) they are std:: loops.
#pragma once

#include <cstdint>

namespace tessera {
namespace cpu {
namespace vector_math {

// The functions, once: X(name). sigmoid is 1 / (1 + exp(-x)), silu x / (1 + exp(-x)), gelu
// x / 2 * (1 + erf(x / sqrt(2))), gelu_tanh x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))).
#define TESSERA_VECTOR_MATH_FUNCTIONS(X) \
  X(exp) X(log) X(tanh) X(erf) X(sigmoid) X(silu) X(gelu) X(gelu_tanh)

#define TESSERA_VECTOR_MATH_DECLARE(NAME) void NAME(const float* x, float* y, int64_t n);
TESSERA_VECTOR_MATH_FUNCTIONS(TESSERA_VECTOR_MATH_DECLARE)

// softmax_row: y = softmax(x) (log: log_softmax(x)) over one contiguous row of n elements, as
// PyTorch's vectorized last-dim kernels compute it: the row's max m (NaNs passed over), then
// e = exp(x - m) and its sum s (lanes added over blocks of 32 vectors, the blocks in a double),
// then y = e * (1 / s) (log: y = (x - m) - log(s)). A NaN, a +inf or only -infs in the row make it NaN throughout
// (through s), as PyTorch's. y may be x.
void softmax_row(const float* x, float* y, int64_t n, bool log);

// Which functions run: "avx512", "avx2", "sse2" or "scalar".
const char* isa();

namespace internal {
// For the tests: use no unit above `isa` ("avx512", "avx2", "sse2"); false (nothing changed)
// where this CPU or build lacks it.
bool limit_isa(const char* isa);
}  // namespace internal

}  // namespace vector_math
}  // namespace cpu
}  // namespace tessera

#include "vector_math.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#if defined(__x86_64__)
#include <dlfcn.h>
#include <emmintrin.h>
#include <sleef.h>
#endif

namespace tessera {
namespace cpu {
namespace vector_math {

#if defined(__x86_64__)

// The AVX2 and AVX-512 units' functions (vector_math_avx2.cc, vector_math_avx512.cc).
namespace avx2 {
TESSERA_VECTOR_MATH_FUNCTIONS(TESSERA_VECTOR_MATH_DECLARE)
void softmax_row(const float* x, float* y, int64_t n, bool log);
}  // namespace avx2
namespace avx512 {
TESSERA_VECTOR_MATH_FUNCTIONS(TESSERA_VECTOR_MATH_DECLARE)
void softmax_row(const float* x, float* y, int64_t n, bool log);
}  // namespace avx512

namespace {

// SSE2, which every x86-64 has (4 lanes).
struct V {
  using T = __m128;
  static constexpr int64_t kWidth = 4;
  static T load(const float* p) { return _mm_loadu_ps(p); }
  static void store(float* p, T v) { _mm_storeu_ps(p, v); }
  static T set1(float v) { return _mm_set1_ps(v); }
  static T add(T a, T b) { return _mm_add_ps(a, b); }
  static T sub(T a, T b) { return _mm_sub_ps(a, b); }
  static T mul(T a, T b) { return _mm_mul_ps(a, b); }
  static T div(T a, T b) { return _mm_div_ps(a, b); }
  static T max(T a, T b) { return _mm_max_ps(a, b); }  // b where either is NaN
  // hmax, hsum: the lanes' max (NaN-free lanes) and sum, pairwise.
  static float hmax(T a) {
    const T m = _mm_max_ps(a, _mm_movehl_ps(a, a));
    return _mm_cvtss_f32(_mm_max_ss(m, _mm_shuffle_ps(m, m, 1)));
  }
  static float hsum(T a) {
    const T s = _mm_add_ps(a, _mm_movehl_ps(a, a));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_shuffle_ps(s, s, 1)));
  }
  static T abs(T a) { return _mm_andnot_ps(_mm_set1_ps(-0.0f), a); }
  static T neg(T a) { return _mm_xor_ps(_mm_set1_ps(-0.0f), a); }  // -0 for 0
  // where_negative: a where x's sign bit is set (-0 too), else b.
  static T where_negative(T x, T a, T b) {
    const T m = _mm_castsi128_ps(_mm_srai_epi32(_mm_castps_si128(x), 31));
    return _mm_or_ps(_mm_and_ps(m, a), _mm_andnot_ps(m, b));
  }
  // where_less: t where a < b (false for NaN), else f.
  static T where_less(T a, T b, T t, T f) {
    const T m = _mm_cmplt_ps(a, b);
    return _mm_or_ps(_mm_and_ps(m, t), _mm_andnot_ps(m, f));
  }
  static T exp(T a) { return Sleef_expf4_u10sse2(a); }
  static T log(T a) { return Sleef_logf4_u10sse2(a); }
  static T erf(T a) { return Sleef_erff4_u10sse2(a); }
};

#include "vector_math_kernels.inc"

// SLEEF stays loaded once the plugin has loaded it (RTLD_NODELETE on the library that holds its
// functions): unloading the plugin would unload it too, and each load after relocates its
// thousands of symbols again (2.3M instructions, +37 % of the plugin_load workload in
// docs/performance.md's gate). Marked when the plugin is loaded, before any kernel runs.
const bool kSleefResident = [] {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&Sleef_expf4_u10sse2), &info) != 0 && info.dli_fname) {
    dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
  }
  return true;
}();

enum Unit { kSse2 = 1, kAvx2 = 2, kAvx512 = 3 };

// The best unit this CPU has (asked once): AVX-512 needs AVX-512F, AVX2 needs AVX2 and FMA.
Unit Best() {
  static const Unit best = __builtin_cpu_supports("avx512f") ? kAvx512
                           : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
                               ? kAvx2
                               : kSse2;
  return best;
}

std::atomic<int> cap{kAvx512};  // internal::limit_isa

Unit Chosen() {
  return static_cast<Unit>(std::min<int>(Best(), cap.load(std::memory_order_relaxed)));
}

}  // namespace

bool internal::limit_isa(const char* isa) {
  const std::string_view want(isa);
  const int unit = want == "avx512" ? kAvx512 : want == "avx2" ? kAvx2 : want == "sse2" ? kSse2 : 0;
  if (unit == 0 || unit > Best()) return false;
  cap.store(unit);
  return true;
}

#define TESSERA_VECTOR_MATH(NAME)                  \
  void NAME(const float* x, float* y, int64_t n) { \
    switch (Chosen()) {                            \
      case kAvx512:                                \
        return avx512::NAME(x, y, n);              \
      case kAvx2:                                  \
        return avx2::NAME(x, y, n);                \
      case kSse2:                                  \
        return NAME##_kernel(x, y, n);             \
    }                                              \
  }
TESSERA_VECTOR_MATH_FUNCTIONS(TESSERA_VECTOR_MATH)
#undef TESSERA_VECTOR_MATH

void softmax_row(const float* x, float* y, int64_t n, bool log) {
  switch (Chosen()) {
    case kAvx512:
      return avx512::softmax_row(x, y, n, log);
    case kAvx2:
      return avx2::softmax_row(x, y, n, log);
    case kSse2:
      return softmax_row_kernel(x, y, n, log);
  }
}

const char* isa() {
  switch (Chosen()) {
    case kAvx512:
      return "avx512";
    case kAvx2:
      return "avx2";
    case kSse2:
      break;
  }
  return "sse2";
}

#else  // not x86-64: the scalar forms

#define TESSERA_VECTOR_MATH(NAME, EXPR)            \
  void NAME(const float* x, float* y, int64_t n) { \
    for (int64_t i = 0; i < n; ++i) {              \
      const float a = x[i];                        \
      y[i] = (EXPR);                               \
    }                                              \
  }
TESSERA_VECTOR_MATH(exp, std::exp(a))
TESSERA_VECTOR_MATH(log, std::log(a))
TESSERA_VECTOR_MATH(tanh, std::tanh(a))
TESSERA_VECTOR_MATH(erf, std::erf(a))
TESSERA_VECTOR_MATH(sigmoid, 1 / (1 + std::exp(-a)))
TESSERA_VECTOR_MATH(silu, a / (1 + std::exp(-a)))
TESSERA_VECTOR_MATH(gelu, a * 0.5f * (1 + std::erf(a * static_cast<float>(M_SQRT1_2))))
TESSERA_VECTOR_MATH(gelu_tanh, 0.5f * a *
                                   (1 + std::tanh(static_cast<float>(M_2_SQRTPI * M_SQRT1_2) *
                                                  (a + 0.044715f * a * a * a))))
#undef TESSERA_VECTOR_MATH

void softmax_row(const float* x, float* y, int64_t n, bool log) {
  float max = -INFINITY;
  for (int64_t i = 0; i < n; ++i) max = x[i] > max ? x[i] : max;
  double total = 0;  // as the vector units' blocked sum: no long float accumulation
  for (int64_t i = 0; i < n; ++i) total += std::exp(x[i] - max);
  const float sum = static_cast<float>(total);
  const float log_sum = std::log(sum), inverse = 1 / sum;
  for (int64_t i = 0; i < n; ++i) {
    y[i] = log ? (x[i] - max) - log_sum : std::exp(x[i] - max) * inverse;
  }
}

const char* isa() { return "scalar"; }
bool internal::limit_isa(const char* isa) { return std::string_view(isa) == "scalar"; }

#endif

}  // namespace vector_math
}  // namespace cpu
}  // namespace tessera

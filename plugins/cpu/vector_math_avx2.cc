// vector_math.hpp's functions on AVX2 (8 lanes), built with -mavx2 -mfma (CMakeLists.txt);
// called only where the CPU has both (vector_math.cc asks).
#include <immintrin.h>
#include <sleef.h>

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "vector_math.hpp"

namespace tessera {
namespace cpu {
namespace vector_math {
namespace {

struct V {
  using T = __m256;
  static constexpr int64_t kWidth = 8;
  static T load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, T v) { _mm256_storeu_ps(p, v); }
  static T set1(float v) { return _mm256_set1_ps(v); }
  static T add(T a, T b) { return _mm256_add_ps(a, b); }
  static T sub(T a, T b) { return _mm256_sub_ps(a, b); }
  static T mul(T a, T b) { return _mm256_mul_ps(a, b); }
  static T div(T a, T b) { return _mm256_div_ps(a, b); }
  static T max(T a, T b) { return _mm256_max_ps(a, b); }  // b where either is NaN
  // hmax, hsum: the lanes' max (NaN-free lanes) and sum, pairwise.
  static float hmax(T a) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    return _mm_cvtss_f32(_mm_max_ss(m, _mm_shuffle_ps(m, m, 1)));
  }
  static float hsum(T a) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_shuffle_ps(s, s, 1)));
  }
  static T abs(T a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
  static T neg(T a) { return _mm256_xor_ps(_mm256_set1_ps(-0.0f), a); }  // -0 for 0
  // where_negative: a where x's sign bit is set (-0 too), else b.
  static T where_negative(T x, T a, T b) { return _mm256_blendv_ps(b, a, x); }
  // where_less: t where a < b (false for NaN), else f.
  static T where_less(T a, T b, T t, T f) {
    return _mm256_blendv_ps(f, t, _mm256_cmp_ps(a, b, _CMP_LT_OQ));
  }
  static T exp(T a) { return Sleef_expf8_u10avx2(a); }
  static T log(T a) { return Sleef_logf8_u10avx2(a); }
  static T erf(T a) { return Sleef_erff8_u10avx2(a); }
};

#include "vector_math_kernels.inc"

}  // namespace

namespace avx2 {
#define TESSERA_VECTOR_MATH_DEFINE(NAME) \
  void NAME(const float* x, float* y, int64_t n) { NAME##_kernel(x, y, n); }
TESSERA_VECTOR_MATH_FUNCTIONS(TESSERA_VECTOR_MATH_DEFINE)
#undef TESSERA_VECTOR_MATH_DEFINE
void softmax_row(const float* x, float* y, int64_t n, bool log) {
  softmax_row_kernel(x, y, n, log);
}
}  // namespace avx2

}  // namespace vector_math
}  // namespace cpu
}  // namespace tessera

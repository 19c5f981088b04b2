// vector_math.hpp's functions on AVX-512 (16 lanes), built with -mavx512f (CMakeLists.txt);
// called only where the CPU has AVX-512F (vector_math.cc asks).
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
  using T = __m512;
  static constexpr int64_t kWidth = 16;
  static T load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, T v) { _mm512_storeu_ps(p, v); }
  static T set1(float v) { return _mm512_set1_ps(v); }
  static T add(T a, T b) { return _mm512_add_ps(a, b); }
  static T sub(T a, T b) { return _mm512_sub_ps(a, b); }
  static T mul(T a, T b) { return _mm512_mul_ps(a, b); }
  static T div(T a, T b) { return _mm512_div_ps(a, b); }
  static T max(T a, T b) { return _mm512_max_ps(a, b); }  // b where either is NaN
  // hmax, hsum: the lanes' max (NaN-free lanes) and sum, pairwise.
  static float hmax(T a) { return _mm512_reduce_max_ps(a); }
  static float hsum(T a) { return _mm512_reduce_add_ps(a); }
  static T abs(T a) { return _mm512_abs_ps(a); }
  static T neg(T a) {  // -0 for 0
    return _mm512_castsi512_ps(
        _mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi32(INT32_MIN)));
  }
  // where_negative: a where x's sign bit is set (-0 too), else b.
  static T where_negative(T x, T a, T b) {
    return _mm512_mask_blend_ps(
        _mm512_test_epi32_mask(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN)), b, a);
  }
  // where_less: t where a < b (false for NaN), else f.
  static T where_less(T a, T b, T t, T f) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ), f, t);
  }
  static T exp(T a) { return Sleef_expf16_u10avx512f(a); }
  static T log(T a) { return Sleef_logf16_u10avx512f(a); }
  static T erf(T a) { return Sleef_erff16_u10avx512f(a); }
};

#include "vector_math_kernels.inc"

}  // namespace

namespace avx512 {
#define TESSERA_VECTOR_MATH_DEFINE(NAME) \
  void NAME(const float* x, float* y, int64_t n) { NAME##_kernel(x, y, n); }
TESSERA_VECTOR_MATH_FUNCTIONS(TESSERA_VECTOR_MATH_DEFINE)
#undef TESSERA_VECTOR_MATH_DEFINE
void softmax_row(const float* x, float* y, int64_t n, bool log) {
  softmax_row_kernel(x, y, n, log);
}
}  // namespace avx512

}  // namespace vector_math
}  // namespace cpu
}  // namespace tessera

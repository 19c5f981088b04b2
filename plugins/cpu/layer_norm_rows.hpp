// Layer norm of float32 rows, vectorized: the CPU backend's native_layer_norm for dense
// float32 (nn.cc), in place of oneDNN's primitive, whose glue per call (a primitive looked up
// by a printed key, memory objects and an argument map) cost 8 us on a 96-element row.
#pragma once

#include <cstdint>

namespace tessera {
namespace cpu {

// layer_norm_rows_f32: rows [lo, hi) of x ([rows, n], contiguous) normalized into y: per row
// the mean and the biased variance (each a sum in fixed lanes, so the result depends on the
// values alone, not on the vector unit), rstd = 1 / sqrt(var + eps), y = (x - mean) * rstd,
// times w and plus b where given ([n]); mean and rstd written per row.
void layer_norm_rows_f32(const float* x, int64_t lo, int64_t hi, int64_t n, const float* w,
                         const float* b, float eps, float* y, float* mean, float* rstd);

}  // namespace cpu
}  // namespace tessera

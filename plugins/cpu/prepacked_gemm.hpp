// Matrix products with an immutable right operand (a model's weight) on oneDNN's matmul, the
// operand reordered once into the primitive's layout. Note [Prepacked matrix products] in
// prepacked_gemm.cc.
#pragma once

#include <cstdint>

#include "tessera/sdk/tensor_view.hpp"

namespace tessera {
namespace cpu {

// The most rows of out per thread for which the prepacked product is taken (the measured
// crossover: Note [Prepacked matrix products]).
constexpr int64_t kPrepackedRowsPerThread = 512;

// gemm_prepacked: out = alpha * a @ b (+ beta * out with `accumulate`) for 2-D float32 a, b, out
// where b is immutable (TSR_VIEW_IMMUTABLE) and out has from 2 to kPrepackedRowsPerThread rows
// per thread; false, with nothing written, where it does not apply (the caller's other paths run).
// With `bias` (float32, out's column count of contiguous elements; alpha 1, no accumulate):
// out = a @ b + bias in each row, a linear layer's addmm, the bias added by the primitive.
bool gemm_prepacked(const sdk::TensorView& a, const sdk::TensorView& b, const sdk::TensorView& out,
                    double alpha, double beta, bool accumulate,
                    const sdk::TensorView* bias = nullptr);

}  // namespace cpu
}  // namespace tessera

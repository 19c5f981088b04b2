// The matrix products' library paths (linalg.cc), for callers beside the mm, bmm and addmm
// kernels: a claimed linear layer (linear_epilogue.cc).
#pragma once

#include "tessera/sdk/tensor_view.hpp"

namespace tessera {
namespace cpu {

// gemm_library: out = alpha * a @ b (+ beta * out with `accumulate`) on the first library path
// that takes it (a small product's loop, the prepacked matmul, dnnl_sgemm, oneDNN's matmul),
// for 2-D or 3-D operands of out's dtype; false, with nothing written, where none does (a
// dtype or layout they lack, or an empty inner dim), and the callers' own loops run.
bool gemm_library(const sdk::TensorView& a, const sdk::TensorView& b, const sdk::TensorView& out,
                  double alpha, double beta, bool accumulate);

}  // namespace cpu
}  // namespace tessera

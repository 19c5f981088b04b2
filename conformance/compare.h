// Comparing a result with what was expected, as PyTorch's assert_close does: the op cases'
// oracles, the model checks (--models) and tessera-run --check all compare this way.
#pragma once

#include <cmath>
#include <string>

#include "conformance/host_tensor.h"

namespace tessera {
namespace conformance {

// Tolerance: |actual - expected| <= atol + rtol * |expected| passes.
struct Tolerance {
  double atol = 0, rtol = 0;
};

// ToleranceFor: assert_close's defaults for `dtype` (float16: 1e-5, 1e-3; bfloat16: 1e-5,
// 1.6e-2; float32: 1e-5, 1.3e-6; float64: 1e-7, 1e-7; integers and bool exact), times `scale`.
Tolerance ToleranceFor(tsr_dtype dtype, double scale);

struct Comparison {
  bool ok = true;
  double max_abs = 0, max_rel = 0;
  // For float16 and bfloat16, whose worst element says little about the whole (ExecuTorch's and
  // ggml's suites report it too): the signal-to-noise ratio of the result in dB,
  // 10 log10(sum expected^2 / sum (actual - expected)^2) over the finite elements; +inf when
  // they match exactly, -inf when the expected values are all 0 and the result is not. NaN: not
  // computed (other dtypes, a dtype or shape mismatch).
  double snr_db = NAN;
  std::string message;
};

// Compare actual with expected: dtype, shape, then values within the tolerance (NaN equals NaN,
// infinities must match exactly). `what` names the tensor in the message of a mismatch.
Comparison Compare(const HostTensor& actual, const HostTensor& expected, const Tolerance& tol,
                   const std::string& what);

}  // namespace conformance
}  // namespace tessera

// The sample NPU's elementwise math, one definition for its kernels (npu_plugin.cc) and its
// fused chains (npu_graph.cc), so that a claimed chain gives exactly what its nodes give.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>

namespace npu {

enum class Elementwise { kRelu, kNeg, kAbs, kExp, kSqrt, kAdd, kSub, kMul, kDiv };

// Apply: one element of `op` (unary ops read `a` only; add and sub scale `b` by `alpha`).
inline float Apply(Elementwise op, float a, float b, float alpha) {
  switch (op) {
    case Elementwise::kRelu:
      return std::isnan(a) ? a : std::max(a, 0.0f);
    case Elementwise::kNeg:
      return -a;
    case Elementwise::kAbs:
      return std::fabs(a);
    case Elementwise::kExp:
      return std::exp(a);
    case Elementwise::kSqrt:
      return std::sqrt(a);
    case Elementwise::kAdd:
      return a + alpha * b;
    case Elementwise::kSub:
      return a - alpha * b;
    case Elementwise::kMul:
      return a * b;
    case Elementwise::kDiv:
      return a / b;
  }
  return a;
}

}  // namespace npu

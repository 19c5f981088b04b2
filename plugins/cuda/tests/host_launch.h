// Running the GPU elementwise iterator's launches on the host, for the tests: every (block,
// thread) of each launch, as a GPU would, plus helpers that describe operands.
#pragma once

#include <string>
#include <vector>

#include "elementwise_plan.h"
#include "gtest/gtest.h"

namespace tessera {
namespace gpu {

// RunOnHost runs every launch of `plan` as the GPU would: each thread of each block.
template <typename S, int N, typename Op, bool kFast = true>
void RunOnHost(const ElementwisePlan& plan, const Op& op) {
  for (const ElementwiseChunk& chunk : plan.chunks) {
    const Args<S, N> args = MakeArgs<S, N>(plan, chunk);
    const uint32_t blocks = LaunchBlocks(chunk.numel);
    for (uint32_t b = 0; b < blocks; ++b) {
      for (uint32_t t = 0; t < kThreadsPerBlock; ++t) {
        if (kFast && UsesFastPath<S>(plan)) {
          ThreadBody<S, N, true>(args, op, b, t);
        } else {
          ThreadBody<S, N, false>(args, op, b, t);
        }
      }
    }
  }
}

inline std::vector<int64_t> Contiguous(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (int i = static_cast<int>(sizes.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * sizes[i + 1];
  }
  return strides;
}

template <typename T>
OperandSpec Operand(std::vector<T>& data, int32_t dtype, std::vector<int64_t> sizes,
                    std::vector<int64_t> strides = {}) {
  OperandSpec o;
  o.data = reinterpret_cast<char*>(data.data());
  o.dtype = dtype;
  o.strides = strides.empty() ? Contiguous(sizes) : strides;
  o.sizes = std::move(sizes);
  return o;
}

inline OperandSpec Constant(double d, int32_t dtype = TSR_DTYPE_FLOAT32) {
  OperandSpec o;
  o.dtype = dtype;
  o.constant = true;
  o.value.kind = ConstantValue::kDouble;
  o.value.d = d;
  return o;
}

inline ElementwisePlan MustPlan(const std::vector<int64_t>& shape,
                                const std::vector<OperandSpec>& ops,
                                int64_t max_index = INT32_MAX) {
  ElementwisePlan plan;
  std::string error;
  EXPECT_TRUE(MakeElementwisePlan(shape, ops, &plan, &error, max_index)) << error;
  return plan;
}

}  // namespace gpu
}  // namespace tessera

// The host side of the GPU reductions (Note [GPU reductions] in reduce.h): from the input's and
// output's shapes and strides to one launch's arguments. Plain C++, tested on the host.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reduce.h"

namespace tessera {
namespace gpu {

// ReduceSpec: what the plugin knows. Strides in elements; `out_strides` align with the input's
// dimensions (0 where the output lacks one); a reduced dimension's is used only when
// `write_reduced` (softmax, whose output has the input's shape).
struct ReduceSpec {
  const char* in = nullptr;
  int32_t in_dtype = TSR_DTYPE_FLOAT32;
  std::vector<int64_t> sizes;
  std::vector<int64_t> in_strides;
  char* out = nullptr;
  int32_t out_dtype = TSR_DTYPE_FLOAT32;
  std::vector<int64_t> out_strides;
  std::vector<bool> reduced;  // per input dimension
  bool write_reduced = false;
  // max.dim / min.dim: the int64 indices, strides aligned with the input's as `out_strides`.
  char* indices = nullptr;
  std::vector<int64_t> indices_strides;
  // force_wide: plan the 64-bit launch whatever the sizes (tests: the wide kernels on small
  // tensors must agree with the 32-bit ones).
  bool force_wide = false;
};

// ReducePlan: the launch's arguments in 32-bit indices (`args`) or, when the input has 2^31
// elements or more or the input, the output or the indices span 2^31 bytes or more, in 64-bit
// ones (`wide_args`, `wide` true).
struct ReducePlan {
  ReduceArgs args{};
  WideReduceArgs wide_args{};
  bool wide = false;
  uint32_t blocks = 0;  // 0: no output element, nothing to launch
  uint64_t reduced() const { return wide ? wide_args.reduced : args.reduced; }
};

// MakeReducePlan: false with *error saying why for what it cannot launch (more than kMaxDims
// dimensions of either kind after merging, a negative stride, more than 2^31 - 1 blocks).
bool MakeReducePlan(const ReduceSpec& spec, ReducePlan* plan, std::string* error);

// ThreadsPerOutput: the smallest power of two >= `reduced`, in [1, kReduceThreads].
uint32_t ThreadsPerOutput(int64_t reduced);

}  // namespace gpu
}  // namespace tessera

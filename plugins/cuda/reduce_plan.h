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
  // splits: 0 lets the plan choose (Note [Split reductions]); 1 never splits; more splits each
  // row into that many blocks where the reduction may be split (tests: the split launches on
  // small tensors).
  uint32_t splits = 0;
};

// ReducePlan: the launch's arguments in 32-bit indices (`args`) or, when the input has 2^31
// elements or more or the input, the output or the indices span 2^31 bytes or more, in 64-bit
// ones (`wide_args`, `wide` true).
// A split plan (splits > 1; Note [Split reductions]) launches `blocks` = outputs * splits blocks
// of one output each (threads_per_output = kReduceThreads) writing splits accumulators per output
// to a workspace of workspace_bytes(), then finish_blocks blocks of finish_threads threads an
// output combining them.
struct ReducePlan {
  ReduceArgs args{};
  WideReduceArgs wide_args{};
  bool wide = false;
  uint32_t blocks = 0;  // 0: no output element, nothing to launch
  uint32_t splits = 1;
  uint32_t finish_threads = 0;
  uint32_t finish_blocks = 0;
  uint64_t reduced() const { return wide ? wide_args.reduced : args.reduced; }
  size_t workspace_bytes() const { return splits > 1 ? size_t{blocks} * kSplitAccBytes : 0; }
};

// MakeReducePlan: false with *error saying why for what it cannot launch (more than kMaxDims
// dimensions of either kind after merging, a negative stride, more than 2^31 - 1 blocks, a
// `splits` request for a reduction that writes every element).
bool MakeReducePlan(const ReduceSpec& spec, ReducePlan* plan, std::string* error);

// ThreadsPerOutput: the smallest power of two >= `reduced`, in [1, kReduceThreads].
uint32_t ThreadsPerOutput(int64_t reduced);

}  // namespace gpu
}  // namespace tessera

// The host side of the GPU elementwise iterator: from tensor shapes and strides to launches.
// Plain C++ (no GPU toolkit, no SDK), so tests/elementwise_test.cc checks it on the host.
//
// Note [GPU elementwise iterator]
// An elementwise op (add.out, exp.out, copy_, fill_) iterates over its output's shape; each
// input broadcasts to it (stride 0 where it has size 1 or lacks the dimension). A constant
// input (a Scalar, or a 0-dim CPU tensor, which PyTorch lets join any device) has no memory:
// its value travels in the launch's arguments. MakeElementwisePlan then
//   1. drops dimensions of size 1 and merges neighbours that every operand steps through as
//      one (stride[outer] == stride[inner] * size[inner]), so a contiguous tensor is one
//      dimension however many it has;
//   2. marks the plan contiguous when every tensor operand is then dense (stride = element
//      size) and of one dtype: the kernels' fast path, with no index arithmetic and no
//      conversion, taken when that dtype is also the compute dtype (UsesFastPath);
//   3. splits the iteration into chunks whose element count and byte offsets fit in 32 bits
//      (halving the outermost dimension until they do), so kernels index in 32 bits, which is
//      cheaper on GPUs than 64-bit; a chunk's base pointers are moved to its start.
// Each chunk is one launch of kThreadsPerBlock-thread blocks, kElementsPerThread elements per
// thread (LaunchBlocks). Strides are in bytes in the plan, so operands of different dtypes
// share one offset computation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "elementwise.h"

namespace tessera {
namespace gpu {

// A constant's value as the Scalar it came from.
struct ConstantValue {
  enum Kind { kBool, kInt, kDouble } kind = kInt;
  int64_t i = 0;
  double d = 0;
};

// OperandSpec: what the plugin knows about one operand. Sizes and strides (in elements) align
// to the output's from the right (fewer dimensions broadcast). Operand 0 is the output.
struct OperandSpec {
  char* data = nullptr;  // the address of element 0; unused for a constant
  int32_t dtype = TSR_DTYPE_FLOAT32;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  bool constant = false;
  ConstantValue value;
};

// One launch: at most 2^31 - 1 elements and byte offsets below 2^31 in every operand.
struct ElementwiseChunk {
  char* data[kMaxOperands] = {};
  int64_t numel = 0;
  int32_t ndim = 0;
  int64_t sizes[kMaxDims] = {};                  // innermost first
  int64_t strides[kMaxDims][kMaxOperands] = {};  // bytes, innermost first
};

struct ElementwisePlan {
  int num_operands = 0;
  int32_t dtype[kMaxOperands] = {};
  bool constant[kMaxOperands] = {};
  ConstantValue value[kMaxOperands];
  int64_t numel = 0;
  bool contiguous = false;  // every tensor operand dense and of dtype `dense_dtype`
  int32_t dense_dtype = -1;
  std::vector<ElementwiseChunk> chunks;
};

// ElementwiseSizeOf: bytes per element of a tsr_dtype (0 for an invalid one).
int64_t ElementwiseSizeOf(int32_t dtype);

// MakeElementwisePlan plans `operands` (the output first) over `shape`, the output's sizes.
// On a shape it cannot plan (more than kMaxDims dimensions left after merging, a negative
// stride, an input that does not broadcast) it returns false with *error saying why.
bool MakeElementwisePlan(const std::vector<int64_t>& shape,
                         const std::vector<OperandSpec>& operands, ElementwisePlan* plan,
                         std::string* error, int64_t max_index = INT32_MAX);

// LaunchBlocks: how many blocks a chunk of `numel` elements takes.
inline uint32_t LaunchBlocks(int64_t numel) {
  constexpr int64_t kPerBlock = int64_t{kThreadsPerBlock} * kElementsPerThread;
  return static_cast<uint32_t>((numel + kPerBlock - 1) / kPerBlock);
}

// UsesFastPath: whether a launch computing in S takes the fast path (step 2 of the Note), which
// reads and writes every operand as S: the plan is contiguous and its dtype is S.
template <typename S>
bool UsesFastPath(const ElementwisePlan& plan) {
  return plan.contiguous && plan.dense_dtype == kDtypeOf<S>;
}

// MakeArgs fills a launch's arguments from a chunk of `plan`, with the constants converted to
// OpMath<S>.
template <typename S, int N>
Args<S, N> MakeArgs(const ElementwisePlan& plan, const ElementwiseChunk& chunk) {
  Args<S, N> a{};
  for (int k = 0; k < N; ++k) {
    a.data[k] = chunk.data[k];
    a.dtype[k] = plan.dtype[k];
    a.constant[k] = plan.constant[k];
    const ConstantValue& v = plan.value[k];
    a.value[k] = v.kind == ConstantValue::kDouble ? Convert<OpMath<S>>(v.d)
                 : v.kind == ConstantValue::kBool ? Convert<OpMath<S>>(v.i != 0)
                                                  : Convert<OpMath<S>>(v.i);
  }
  // Vectorized where every operand with memory starts on a Vec<S> boundary (a chunk's bases
  // move by whole outer rows, so each chunk is checked).
  a.vectorized = UsesFastPath<S>(plan);
  for (int k = 0; k < N; ++k) {
    if (!a.constant[k] && reinterpret_cast<uintptr_t>(a.data[k]) % alignof(Vec<S>) != 0) {
      a.vectorized = false;
    }
  }
  a.numel = static_cast<uint32_t>(chunk.numel);
  a.ndim = chunk.ndim;
  for (int d = 0; d < chunk.ndim; ++d) {
    a.sizes[d] = FastDivmod(static_cast<uint32_t>(chunk.sizes[d]));
    for (int k = 0; k < N; ++k) a.strides[d][k] = static_cast<uint32_t>(chunk.strides[d][k]);
  }
  return a;
}

}  // namespace gpu
}  // namespace tessera

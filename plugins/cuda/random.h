// The GPU random kernels' per-thread work (uniform_, normal_) and their launch plan, as code
// that compiles for the device (nvcc, hipcc) and for the host (g++): kernels_random.cu wraps
// RandomThreadBody in __global__ functions, and tests/random_test.cc runs the same body on the
// host for every (block, thread) of every launch, so that indexing and rounding are checked
// against the CPU backend's definition without a GPU.
//
// Note [GPU random kernels]
// Element i of the output, its row-major position over the output's shape whatever the
// strides, takes the Philox block draw.block(i) and turns it into a value with the functions of
// tessera/sdk/random.hpp, rounded to the output's dtype as plugins/cpu/random.cc rounds it
// (docs/random.md): the numbers depend on (seed, offset, i) alone, never on which thread
// computes them, so the GPU gives the CPU backend's bits for the same draw.
// - Position -> memory: the plan drops dimensions of size 1 and merges neighbours that step
//   through memory as one (which keeps row-major order), so a dense output is one dimension of
//   stride 1 and is written at data[i] (kContiguous). Otherwise the position is split into a
//   multi-index, innermost first: with FastDivmod when the whole output has fewer than 2^31
//   elements (kNarrow), with 64-bit division above (kWide).
// - Launches: at most kRandomMaxChunk elements each (the others' 32-bit thread arithmetic);
//   each launch knows the position of its first element (`first`), so more than 2^31 elements
//   take several launches and positions stay 64-bit.
// - Threads: kThreadsPerBlock per block, each writing kElementsPerThread elements a block-stride
//   apart (coalesced stores), as the elementwise kernels do.
// - Values: float64 outputs use uniform_double / normal; float32, float16 and bfloat16 use
//   uniform_float with from and to rounded to float, and normal rounded to float; the 16-bit
//   dtypes then round that float with ToHalf / ToBFloat16, which round to nearest even exactly
//   as the SDK's to_half / to_bfloat16 (the CPU backend's store<T>) do.
//   normal's log, sqrt and cos are the device's libm in double: where it differs from the
//   host's in a double's last bit, a float64 output can differ there (docs/random.md).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "elementwise.h"
#include "tessera/sdk/random.hpp"

namespace tessera {
namespace gpu {

enum class RandomKind { kUniform, kNormal };

// How a launch finds element i's memory (Note [GPU random kernels]).
enum class RandomIndexing { kContiguous, kNarrow, kWide };

// kRandomMaxChunk: the most elements one launch writes (a multiple of a block's elements).
inline constexpr uint64_t kRandomMaxChunk = uint64_t{1} << 30;

// RandomArgs: one launch. Sizes and strides (in elements) are innermost first.
struct RandomArgs {
  char* data = nullptr;  // the output's first element
  sdk::RandomDraw draw;
  double p0 = 0, p1 = 0;  // uniform_'s from and to, normal_'s mean and std
  float f0 = 0, f1 = 0;   // from and to rounded to float (uniform_ of the float32/16-bit dtypes)
  uint64_t first = 0;     // the row-major position of this launch's first element
  uint32_t numel = 0;     // elements in this launch
  int32_t ndim = 0;       // 0 for kContiguous
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};
  FastDivmod divs[kMaxDims];  // sizes, for kNarrow
};

// RandomOffset: the element offset of position i.
template <RandomIndexing kIndexing>
TSR_GPU_HD TSR_GPU_INLINE int64_t RandomOffset(const RandomArgs& a, uint64_t i) {
  if constexpr (kIndexing == RandomIndexing::kContiguous) {
    return static_cast<int64_t>(i);
  } else if constexpr (kIndexing == RandomIndexing::kNarrow) {
    uint32_t rest = static_cast<uint32_t>(i);
    int64_t offset = 0;
    for (int d = 0; d < a.ndim; ++d) {
      const uint32_t q = a.divs[d].Div(rest);
      offset += static_cast<int64_t>(rest - q * a.divs[d].divisor) * a.strides[d];
      rest = q;
    }
    return offset;
  } else {
    uint64_t rest = i;
    int64_t offset = 0;
    for (int d = 0; d < a.ndim; ++d) {
      const uint64_t size = static_cast<uint64_t>(a.sizes[d]);
      const uint64_t q = rest / size;
      offset += static_cast<int64_t>(rest - q * size) * a.strides[d];
      rest = q;
    }
    return offset;
  }
}

// RandomValue: the value of T that a block gives (plugins/cpu/random.cc's definition).
template <typename T, RandomKind kKind>
TSR_GPU_HD TSR_GPU_INLINE T RandomValue(const RandomArgs& a, const sdk::PhiloxBlock& b) {
  if constexpr (kKind == RandomKind::kUniform) {
    if constexpr (std::is_same_v<T, double>) {
      return sdk::uniform_double(b, a.p0, a.p1);
    } else {
      return Narrow<T>(sdk::uniform_float(b, a.f0, a.f1));
    }
  } else {
    const double v = sdk::normal(b, a.p0, a.p1);
    if constexpr (std::is_same_v<T, double>) {
      return v;
    } else {
      return Narrow<T>(static_cast<float>(v));  // a 16-bit output: double -> float -> 16 bits
    }
  }
}

// RandomThreadBody: the work of thread `thread` of block `block` of one launch.
template <typename T, RandomKind kKind, RandomIndexing kIndexing>
TSR_GPU_HD TSR_GPU_INLINE void RandomThreadBody(const RandomArgs& a, uint32_t block,
                                                uint32_t thread) {
  const uint32_t base = block * (kThreadsPerBlock * kElementsPerThread) + thread;
  for (int e = 0; e < kElementsPerThread; ++e) {
    const uint32_t j = base + static_cast<uint32_t>(e) * kThreadsPerBlock;
    if (j >= a.numel) return;
    const uint64_t i = a.first + j;
    reinterpret_cast<T*>(a.data)[RandomOffset<kIndexing>(a, i)] =
        RandomValue<T, kKind>(a, a.draw.block(i));
  }
}

// --- the host side: from the output's shape to launches ------------------------------------

// RandomPlan: the launches of one call; `args` is the first launch's, less first and numel.
struct RandomPlan {
  RandomArgs args;
  RandomIndexing indexing = RandomIndexing::kContiguous;
  uint64_t numel = 0;
  uint64_t chunk = kRandomMaxChunk;
};

// MakeRandomPlan plans writing every element of an output at `data` of `sizes` and `strides`
// (elements, outermost first, as a tensor's). `max_chunk` (a launch's elements, in [1,
// kRandomMaxChunk]) and `max_narrow` (the largest output that uses 32-bit indexing, at most
// INT32_MAX) are parameters for the tests. Returns false with
// *error when more than kMaxDims dimensions remain after merging.
inline bool MakeRandomPlan(char* data, const std::vector<int64_t>& sizes,
                           const std::vector<int64_t>& strides, RandomPlan* plan,
                           std::string* error, uint64_t max_chunk = kRandomMaxChunk,
                           uint64_t max_narrow = INT32_MAX) {
  *plan = RandomPlan();
  plan->args.data = data;
  plan->chunk = max_chunk;
  uint64_t numel = 1;
  for (const int64_t s : sizes) numel *= static_cast<uint64_t>(s);
  plan->numel = numel;
  if (numel == 0) return true;
  // Merge innermost first: a dimension joins the one inside it when it steps over it exactly.
  std::vector<int64_t> merged_sizes, merged_strides;
  for (size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] == 1) continue;
    if (!merged_sizes.empty() && strides[d] == merged_strides.back() * merged_sizes.back()) {
      merged_sizes.back() *= sizes[d];
      continue;
    }
    merged_sizes.push_back(sizes[d]);
    merged_strides.push_back(strides[d]);
  }
  if (merged_sizes.empty() || (merged_sizes.size() == 1 && merged_strides[0] == 1)) {
    plan->indexing = RandomIndexing::kContiguous;
    return true;
  }
  if (merged_sizes.size() > static_cast<size_t>(kMaxDims)) {
    *error = "an output of " + std::to_string(merged_sizes.size()) +
             " dimensions after merging (the kernels take " + std::to_string(kMaxDims) + ")";
    return false;
  }
  plan->indexing = numel <= max_narrow ? RandomIndexing::kNarrow : RandomIndexing::kWide;
  plan->args.ndim = static_cast<int32_t>(merged_sizes.size());
  for (size_t d = 0; d < merged_sizes.size(); ++d) {
    plan->args.sizes[d] = merged_sizes[d];
    plan->args.strides[d] = merged_strides[d];
    if (plan->indexing == RandomIndexing::kNarrow) {
      plan->args.divs[d] = FastDivmod(static_cast<uint32_t>(merged_sizes[d]));
    }
  }
  return true;
}

// RandomBlocks: how many blocks a launch of `numel` elements takes.
inline uint32_t RandomBlocks(uint32_t numel) {
  constexpr uint32_t kPerBlock = kThreadsPerBlock * kElementsPerThread;
  return (numel + kPerBlock - 1) / kPerBlock;
}

// ForEachRandomLaunch calls launch(args, blocks) for each launch of `plan`, in order, and stops
// at the first that returns an error (a non-empty string), which it returns.
template <typename F>
std::string ForEachRandomLaunch(const RandomPlan& plan, F&& launch) {
  RandomArgs args = plan.args;
  for (uint64_t first = 0; first < plan.numel; first += plan.chunk) {
    const uint64_t n = plan.numel - first < plan.chunk ? plan.numel - first : plan.chunk;
    args.first = first;
    args.numel = static_cast<uint32_t>(n);
    std::string error = launch(static_cast<const RandomArgs&>(args), RandomBlocks(args.numel));
    if (!error.empty()) return error;
  }
  return "";
}

}  // namespace gpu
}  // namespace tessera

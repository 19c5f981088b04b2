// The leaves of the CPU backend's float32 and float64 pairwise sums (reductions.cc): up to 4096
// elements summed in kLanes independent lanes, lane i % kLanes taking element i, then the lanes
// combined in a fixed tree.
//
// The lanes are wide enough for four independent AVX2 accumulators (4 x 8 floats, 4 x 4
// doubles) or two AVX-512 ones: a streaming sum is bound by how many loads the core keeps in
// flight, and fewer instructions per byte keep more of them in flight.
//
// Contiguous leaves run vectorized, on AVX-512 or AVX2 where the CPU has it (chosen once, at the
// first call) and on 16-byte vectors elsewhere; strided leaves run one element at a time. All do
// the same additions in the same order (a lane is a lane whatever vector holds it; a partial last
// block is padded with +0.0, which leaves every sum as it was), so a sum depends on the values
// and the shape only: not on the machine's vector unit, the input's strides or the thread count.
//
// One leaf is read as one sequential stream. Reading four leaves at once (four streams a quarter
// of a 64-leaf chunk apart) helped an earlier dev machine, but on the AMD EPYC one it halved a
// 16M-float sum (13.5 against 23 GB/s, 256-element leaves) and still lost at 4096-element
// leaves (19 against 27 GB/s; a standalone loop over the leaves, 1 thread), so it is gone.
#pragma once

#include <cstdint>
#include <cstring>

namespace tessera {
namespace cpu {

template <typename T>
inline constexpr int kLanes = 128 / sizeof(T);  // float: 32, double: 16

// Lanes combine in two steps: each lane j < kGroup gathers the four lanes j + k * kGroup as
// (l0 + l1) + (l2 + l3) (what the vector accumulators add in one instruction each), then the
// kGroup sums halve pairwise.
template <typename T>
inline constexpr int kGroup = kLanes<T> / 4;

template <typename T>
T halve_groups(T* g) {
  for (int width = kGroup<T> / 2; width > 0; width /= 2) {
    for (int j = 0; j < width; ++j) g[j] += g[j + width];
  }
  return g[0];
}

template <typename T>
T combine_lanes(const T* lane) {
  constexpr int kG = kGroup<T>;
  T g[kG];
  for (int j = 0; j < kG; ++j) {
    g[j] = (lane[j] + lane[j + kG]) + (lane[j + 2 * kG] + lane[j + 3 * kG]);
  }
  return halve_groups(g);
}

// strided_lane_sum: n elements `stride` bytes apart, in the lanes and order of contiguous_lane_sum.
template <typename T>
T strided_lane_sum(const char* p, int64_t stride, int64_t n) {
  T lane[kLanes<T>] = {};
  for (int64_t i = 0; i < n; ++i) {
    T x;
    std::memcpy(&x, p + i * stride, sizeof x);
    lane[i % kLanes<T>] += x;
  }
  return combine_lanes(lane);
}

// contiguous_lane_sum: n contiguous elements, vectorized; equal to strided_lane_sum's result.
float contiguous_lane_sum(const float* x, int64_t n);
double contiguous_lane_sum(const double* x, int64_t n);

namespace internal {
// Each vector unit's variant, for the tests: the 16-byte one, AVX2's and AVX-512's (false
// where the compiler or the CPU lacks that unit).
float portable_lane_sum(const float* x, int64_t n);
double portable_lane_sum(const double* x, int64_t n);
bool avx2_lane_sum(const float* x, int64_t n, float* sum);
bool avx2_lane_sum(const double* x, int64_t n, double* sum);
bool avx512_lane_sum(const float* x, int64_t n, float* sum);
bool avx512_lane_sum(const double* x, int64_t n, double* sum);
}  // namespace internal

}  // namespace cpu
}  // namespace tessera

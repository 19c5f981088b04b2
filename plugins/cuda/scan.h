// The GPU scans (cumsum, cumprod): their per-thread work, as code that compiles for the device
// (kernels_scan.cu) and for the host (tests/scan_reduce_test.cc runs it for every thread of every
// block, phase by phase between the barriers, as a GPU would).
//
// Note [GPU scans]
// A scan runs on a reduction's plan (reduce_plan.h) whose one reduced dimension is the scanned
// one and whose output has the input's shape (write_reduced): each row (an output of the plan)
// gets a group of T threads, T the smallest power of two >= the row's length, at most
// kReduceThreads, so a block scans kReduceThreads / T short rows at once or one long row. The
// group walks its row in chunks of T elements: each thread loads one element (the identity past
// the row's end), the group scans the chunk in shared memory (Hillis and Steele: log2(T) steps,
// each reading the element `d` lanes back, a barrier, then writing, a barrier), every thread
// writes its element combined with the carried prefix of the earlier chunks, and the carry then
// takes the chunk's last element. Every group of a block has the same row length, so all threads
// pass the same barriers. A thread writes only the element it loaded, after the barrier that
// follows every load of its chunk, and later chunks read elements not yet written: so the
// in-place forms (cumsum_, out aliasing self) are safe. Values are read in the output's dtype
// (PyTorch's `dtype=` converts first) and accumulate as sum's do (SumAcc: float for the 16-bit
// floats and float32, double for float64, int64 wrapping for integers and bool), each output
// rounded from the running value, as the CPU plugin does.
//
// What a faster scan would do (PyTorch: CUB's BlockScan / DeviceScan): several elements per
// thread scanned serially in registers and warp shuffles for the block-wide part (fewer
// barriers and shared-memory trips), and, for a few very long rows, a device-wide scan with
// decoupled look-back instead of one block walking a whole row.
#pragma once

#include <cstdint>
#include <string>

#include "reduce_plan.h"

namespace tessera {
namespace gpu {

enum class ScanKind : int32_t { kCumsum, kCumprod };

// ScanOp: cumsum's or cumprod's combination in S's accumulator.
template <typename S>
struct ScanOp {
  using Acc = SumAcc<S>;
  bool prod;
  TSR_GPU_HD TSR_GPU_INLINE Acc Init() const { return prod ? Acc(1) : Acc(0); }
  TSR_GPU_HD TSR_GPU_INLINE Acc Combine(Acc a, Acc b) const {
    return prod ? WrapMul(a, b) : WrapAdd(a, b);
  }
  TSR_GPU_HD TSR_GPU_INLINE Acc Load(const char* p, int32_t dtype) const {
    return static_cast<Acc>(Widen(LoadAs<S>(p, dtype)));
  }
  TSR_GPU_HD TSR_GPU_INLINE S Store(Acc acc) const {
    if constexpr (kIsFloat<S>) {
      return Narrow<S>(static_cast<OpMath<S>>(acc));
    } else {
      return Convert<S>(acc);
    }
  }
};

// ScanRow: where row `o` starts in the input and the output; `valid` false past the last row
// (its threads still pass every barrier). I: the plan's index type (ReduceArgsT).
template <typename I>
struct ScanRow {
  bool valid;
  I in, out;
};
template <typename A, typename I = typename A::Index>
TSR_GPU_HD TSR_GPU_INLINE ScanRow<I> ScanRowOf(const A& a, I o) {
  ScanRow<I> row{o < a.outputs, 0, 0};
  if (row.valid) KeptOffsets(a, o, &row.in, &row.out);
  return row;
}

// The number of chunks of T elements a row is walked in.
template <typename A, typename I = typename A::Index>
TSR_GPU_HD TSR_GPU_INLINE I ScanChunks(const A& a) {
  return (a.reduced + a.threads_per_output - 1) / a.threads_per_output;
}

// ScanLoad: what thread `lane` of `row` puts in shared memory for chunk `chunk`.
template <typename S, typename A, typename I = typename A::Index>
TSR_GPU_HD TSR_GPU_INLINE typename ScanOp<S>::Acc ScanLoad(const A& a, const ScanOp<S>& op,
                                                           const ScanRow<I>& row, I chunk,
                                                           uint32_t lane) {
  const I i = chunk * a.threads_per_output + lane;
  if (!row.valid || i >= a.reduced) return op.Init();
  I in, out;
  ReducedOffsets(a, i, &in, &out);
  return op.Load(a.in + row.in + in, a.in_dtype);
}

// ScanStep: thread `thread`'s (lane `lane`) value after the step of distance `d` (read before
// the barrier, written after it).
template <typename S>
TSR_GPU_HD TSR_GPU_INLINE typename ScanOp<S>::Acc ScanStep(const ScanOp<S>& op,
                                                           const typename ScanOp<S>::Acc* shared,
                                                           uint32_t thread, uint32_t lane,
                                                           uint32_t d) {
  return lane >= d ? op.Combine(shared[thread - d], shared[thread]) : shared[thread];
}

// ScanWrite: thread `lane` of `row` stores its element of chunk `chunk`, `value` (the carry
// combined with the chunk's inclusive scan).
template <typename S, typename A, typename I = typename A::Index>
TSR_GPU_HD TSR_GPU_INLINE void ScanWrite(const A& a, const ScanOp<S>& op, const ScanRow<I>& row,
                                         I chunk, uint32_t lane, typename ScanOp<S>::Acc value) {
  const I i = chunk * a.threads_per_output + lane;
  if (!row.valid || i >= a.reduced) return;
  I in, out;
  ReducedOffsets(a, i, &in, &out);
  StoreAs(a.out + row.out + out, a.out_dtype, op.Store(value));
}

// LaunchScan queues `kind` over `plan` (a plan with write_reduced and one reduced dimension)
// computing in `compute` (the output's dtype, any) on `stream` (kernels_scan.cu). It returns ""
// or the launch's error in the vendor's words.
std::string LaunchScan(ScanKind kind, int32_t compute, const ReducePlan& plan, void* stream);

}  // namespace gpu
}  // namespace tessera

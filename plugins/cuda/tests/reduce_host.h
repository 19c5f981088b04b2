// Running the GPU reductions' and scans' launches on the host, for the tests: every thread of
// every block, phase by phase between the barriers, as kernels_reduce.cu and kernels_scan.cu
// run them on a GPU; and plans of tensors held in vectors.
#pragma once

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "host_launch.h"
#include "reduce_plan.h"
#include "scan.h"

namespace tessera {
namespace gpu {

// RunReduceOnHost: ReduceKernel, every thread of every block, with the plan's 32-bit or 64-bit
// arguments as the launch would take them.
template <typename A, typename R>
void RunReduceOnHost(const A& a, uint32_t blocks, const R& r) {
  const uint32_t T = a.threads_per_output;
  std::vector<typename R::Acc> shared(kReduceThreads);
  for (uint32_t b = 0; b < blocks; ++b) {
    for (uint32_t t = 0; t < kReduceThreads; ++t) {
      shared[t] = ThreadPartial(a, r, OutputOf(a, b, t), t % T);
    }
    for (uint32_t half = T / 2; half > 0; half /= 2) {
      for (uint32_t t = 0; t < kReduceThreads; ++t) CombineStep(r, shared.data(), t, t % T, half);
    }
    for (uint32_t t = 0; t < kReduceThreads; ++t) {
      if (t % T == 0) WriteResult(a, r, shared[t], OutputOf(a, b, t));
    }
  }
}

// RunSplitReduceOnHost: a split plan's two launches (Note [Split reductions]), SplitReduceKernel
// then FinishReduceKernel, every thread of every block.
template <typename A, typename R>
void RunSplitReduceOnHost(const A& a, const ReducePlan& plan, const R& r) {
  using Acc = typename R::Acc;
  ASSERT_LE(sizeof(Acc), kSplitAccBytes);
  std::vector<Acc> shared(kReduceThreads), partials(plan.blocks);
  for (uint32_t b = 0; b < plan.blocks; ++b) {
    for (uint32_t t = 0; t < kReduceThreads; ++t) {
      shared[t] = SplitThreadPartial(a, r, plan.splits, b, t);
    }
    for (uint32_t half = kReduceThreads / 2; half > 0; half /= 2) {
      for (uint32_t t = 0; t < kReduceThreads; ++t) CombineStep(r, shared.data(), t, t, half);
    }
    partials[b] = shared[0];
  }
  const uint32_t T = plan.finish_threads;
  for (uint32_t b = 0; b < plan.finish_blocks; ++b) {
    for (uint32_t t = 0; t < kReduceThreads; ++t) {
      shared[t] = FinishThreadPartial(a, r, partials.data(), plan.splits,
                                      FinishOutputOf<A>(b, t, T), t % T, T);
    }
    for (uint32_t half = T / 2; half > 0; half /= 2) {
      for (uint32_t t = 0; t < kReduceThreads; ++t) CombineStep(r, shared.data(), t, t % T, half);
    }
    for (uint32_t t = 0; t < kReduceThreads; ++t) {
      if (t % T == 0) WriteResult(a, r, shared[t], FinishOutputOf<A>(b, t, T));
    }
  }
}

template <typename R>
void RunReduceOnHost(const ReducePlan& plan, const R& r) {
  if (plan.splits > 1 && plan.wide) {
    RunSplitReduceOnHost(plan.wide_args, plan, r);
  } else if (plan.splits > 1) {
    RunSplitReduceOnHost(plan.args, plan, r);
  } else if (plan.wide) {
    RunReduceOnHost(plan.wide_args, plan.blocks, r);
  } else {
    RunReduceOnHost(plan.args, plan.blocks, r);
  }
}

// RunScanOnHost: ScanKernel, every thread of every block, chunk by chunk.
template <typename S, typename A>
void RunScanOnHost(const A& a, uint32_t blocks, const ScanOp<S>& op) {
  using Acc = typename ScanOp<S>::Acc;
  using I = typename A::Index;
  const uint32_t T = a.threads_per_output;
  std::vector<Acc> shared(kReduceThreads), next(kReduceThreads), carry(kReduceThreads);
  std::vector<ScanRow<I>> rows(kReduceThreads);
  for (uint32_t b = 0; b < blocks; ++b) {
    for (uint32_t t = 0; t < kReduceThreads; ++t) {
      rows[t] = ScanRowOf(a, OutputOf(a, b, t));
      carry[t] = op.Init();
    }
    for (I c = 0; c < ScanChunks(a); ++c) {
      for (uint32_t t = 0; t < kReduceThreads; ++t) shared[t] = ScanLoad(a, op, rows[t], c, t % T);
      for (uint32_t d = 1; d < T; d *= 2) {
        for (uint32_t t = 0; t < kReduceThreads; ++t) {
          next[t] = ScanStep(op, shared.data(), t, t % T, d);
        }
        shared = next;
      }
      for (uint32_t t = 0; t < kReduceThreads; ++t) {
        ScanWrite(a, op, rows[t], c, t % T, op.Combine(carry[t], shared[t]));
      }
      for (uint32_t t = 0; t < kReduceThreads; ++t) {
        carry[t] = op.Combine(carry[t], shared[t - t % T + T - 1]);
      }
    }
  }
}
template <typename S>
void RunScanOnHost(const ReducePlan& plan, const ScanOp<S>& op) {
  if (plan.wide) {
    RunScanOnHost(plan.wide_args, plan.blocks, op);
  } else {
    RunScanOnHost(plan.args, plan.blocks, op);
  }
}

template <typename In, typename Out>
ReducePlan MustPlan(std::vector<In>& in, int32_t in_dtype, const std::vector<int64_t>& sizes,
                    std::vector<Out>& out, int32_t out_dtype, const std::vector<bool>& reduced,
                    std::vector<int64_t> in_strides = {}, std::vector<int64_t> out_strides = {},
                    bool write_reduced = false, std::vector<int64_t>* indices = nullptr,
                    bool force_wide = false, uint32_t splits = 0) {
  ReduceSpec spec;
  spec.in = reinterpret_cast<const char*>(in.data());
  spec.in_dtype = in_dtype;
  spec.sizes = sizes;
  spec.in_strides = in_strides.empty() ? Contiguous(sizes) : in_strides;
  spec.out = reinterpret_cast<char*>(out.data());
  spec.out_dtype = out_dtype;
  if (out_strides.empty()) {  // keepdim-style: the output's strides over the kept dimensions
    std::vector<int64_t> kept_sizes = sizes;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (reduced[d]) kept_sizes[d] = 1;
    }
    out_strides = Contiguous(kept_sizes);
  }
  spec.out_strides = out_strides;
  spec.reduced = reduced;
  spec.write_reduced = write_reduced;
  if (indices != nullptr) {  // laid out as the output
    spec.indices = reinterpret_cast<char*>(indices->data());
    spec.indices_strides = out_strides;
  }
  spec.force_wide = force_wide;
  spec.splits = splits;
  ReducePlan plan;
  std::string error;
  EXPECT_TRUE(MakeReducePlan(spec, &plan, &error)) << error;
  return plan;
}

}  // namespace gpu
}  // namespace tessera

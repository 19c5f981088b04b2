#include "reduce_plan.h"

#include <algorithm>

#include "elementwise_plan.h"

namespace tessera {
namespace gpu {
namespace {

struct Dim {
  int64_t size, in, out, index;  // bytes
};

// Merge drops size-1 dimensions and merges neighbours that step as one (outermost first in).
std::vector<Dim> Merge(const std::vector<Dim>& dims) {
  std::vector<Dim> merged;
  for (const Dim& d : dims) {
    if (d.size == 1) continue;
    if (!merged.empty()) {
      Dim& outer = merged.back();
      if (outer.in == d.in * d.size && outer.out == d.out * d.size &&
          outer.index == d.index * d.size) {
        outer.size *= d.size;
        outer.in = d.in;
        outer.out = d.out;
        outer.index = d.index;
        continue;
      }
    }
    merged.push_back(d);
  }
  return merged;
}

// Fill writes one launch's arguments in A's index type (dimensions innermost first).
template <typename A>
void Fill(const ReduceSpec& spec, const std::vector<Dim>& kept, const std::vector<Dim>& reduced,
          int64_t outputs, int64_t count, uint32_t threads, A* args) {
  using I = typename A::Index;
  using Divmod = typename A::Divmod;
  A& a = *args;
  a.in = spec.in;
  a.out = spec.out;
  a.in_dtype = spec.in_dtype;
  a.out_dtype = spec.out_dtype;
  a.indices = spec.indices;
  a.outputs = static_cast<I>(outputs);
  a.reduced = static_cast<I>(count);
  a.threads_per_output = threads;
  a.kept_ndim = static_cast<int32_t>(kept.size());
  for (size_t i = 0; i < kept.size(); ++i) {
    const Dim& d = kept[kept.size() - 1 - i];
    a.kept_sizes[i] = Divmod(static_cast<I>(d.size));
    a.kept_in[i] = static_cast<I>(d.in);
    a.kept_out[i] = static_cast<I>(d.out);
    a.kept_indices[i] = static_cast<I>(d.index);
  }
  a.reduced_ndim = static_cast<int32_t>(reduced.size());
  for (size_t i = 0; i < reduced.size(); ++i) {
    const Dim& d = reduced[reduced.size() - 1 - i];
    a.reduced_sizes[i] = Divmod(static_cast<I>(d.size));
    a.reduced_in[i] = static_cast<I>(d.in);
    a.reduced_out[i] = static_cast<I>(d.out);
  }
}

// SplitsFor: the blocks each output's row is cut across (Note [Split reductions]): 1 where the
// unsplit launch has kSplitTargetBlocks blocks already or a row is too short to share; otherwise
// as many as fill the target, each folding at least kSplitMinElements.
int64_t SplitsFor(int64_t outputs, int64_t count, int64_t blocks) {
  if (blocks >= kSplitTargetBlocks || count < 2 * kSplitMinElements) return 1;
  const int64_t by_length = count / kSplitMinElements;
  const int64_t by_target = (kSplitTargetBlocks + outputs - 1) / outputs;
  return std::max<int64_t>(1, std::min(by_length, by_target));
}

}  // namespace

uint32_t ThreadsPerOutput(int64_t reduced) {
  uint32_t t = 1;
  while (t < static_cast<uint32_t>(kReduceThreads) && t < reduced) t *= 2;
  return t;
}

bool MakeReducePlan(const ReduceSpec& spec, ReducePlan* plan, std::string* error) {
  *plan = ReducePlan();
  const size_t ndim = spec.sizes.size();
  const bool with_indices = spec.indices != nullptr;
  if (spec.in_strides.size() != ndim || spec.out_strides.size() != ndim ||
      spec.reduced.size() != ndim || (with_indices && spec.indices_strides.size() != ndim)) {
    *error = "sizes, strides and reduced dimensions of different ranks";
    return false;
  }
  const int64_t in_item = ElementwiseSizeOf(spec.in_dtype);
  const int64_t out_item = ElementwiseSizeOf(spec.out_dtype);
  if (in_item == 0 || out_item == 0) {
    *error = "an invalid dtype";
    return false;
  }
  std::vector<Dim> kept, reduced;
  int64_t outputs = 1, count = 1, in_extent = 0, out_extent = 0, index_extent = 0;
  for (size_t d = 0; d < ndim; ++d) {
    const int64_t index_stride = with_indices && !spec.reduced[d] ? spec.indices_strides[d] : 0;
    if (spec.in_strides[d] < 0 || spec.out_strides[d] < 0 || index_stride < 0) {
      *error = "a negative stride";
      return false;
    }
    const int64_t out_stride = spec.reduced[d] && !spec.write_reduced ? 0 : spec.out_strides[d];
    const Dim dim{spec.sizes[d], spec.in_strides[d] * in_item, out_stride * out_item,
                  index_stride * int64_t{sizeof(int64_t)}};
    (spec.reduced[d] ? reduced : kept).push_back(dim);
    (spec.reduced[d] ? count : outputs) *= dim.size;
    if (dim.size > 0) {
      in_extent += (dim.size - 1) * dim.in;
      out_extent += (dim.size - 1) * dim.out;
      index_extent += (dim.size - 1) * dim.index;
    }
  }
  if (outputs == 0) return true;  // nothing to write
  // 64-bit indices where 32 bits do not reach: the input's element count, or the byte extent
  // (the largest byte offset) of the input, the output or the indices.
  plan->wide = spec.force_wide || outputs * count > INT32_MAX || in_extent > INT32_MAX ||
               out_extent > INT32_MAX || index_extent > INT32_MAX;
  if (count == 0) reduced.clear();
  kept = Merge(kept);
  reduced = Merge(reduced);
  if (kept.size() > static_cast<size_t>(kMaxDims) ||
      reduced.size() > static_cast<size_t>(kMaxDims)) {
    *error = "more than " + std::to_string(kMaxDims) + " dimensions after merging";
    return false;
  }
  if (spec.write_reduced && spec.splits > 1) {
    *error = "a reduction that writes every element (softmax, a scan) cannot be split";
    return false;
  }
  if (spec.splits > kMaxSplits) {
    *error =
        std::to_string(spec.splits) + " splits asked for; at most " + std::to_string(kMaxSplits);
    return false;
  }
  uint32_t threads = ThreadsPerOutput(count);
  const int64_t per_block = kReduceThreads / threads;
  int64_t blocks = (outputs + per_block - 1) / per_block;
  const int64_t splits = spec.write_reduced ? 1
                         : spec.splits > 0  ? spec.splits
                                            : SplitsFor(outputs, count, blocks);
  if (splits > 1) {
    threads = kReduceThreads;  // one output a block
    blocks = outputs > INT32_MAX / splits ? int64_t{INT32_MAX} + 1 : outputs * splits;
    plan->splits = static_cast<uint32_t>(splits);
    plan->finish_threads = ThreadsPerOutput(splits);
    const int64_t finish_per_block = kReduceThreads / plan->finish_threads;
    plan->finish_blocks =
        static_cast<uint32_t>((outputs + finish_per_block - 1) / finish_per_block);
  }
  if (blocks > INT32_MAX) {  // a launch's grid
    *error = std::to_string(outputs) + " outputs need " + std::to_string(blocks) +
             " blocks, more than a launch's 2^31 - 1";
    return false;
  }
  plan->blocks = static_cast<uint32_t>(blocks);
  if (plan->wide) {
    Fill(spec, kept, reduced, outputs, count, threads, &plan->wide_args);
  } else {
    Fill(spec, kept, reduced, outputs, count, threads, &plan->args);
  }
  return true;
}

}  // namespace gpu
}  // namespace tessera

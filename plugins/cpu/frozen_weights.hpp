// FrozenWeights: oneDNN-layout copies of frozen tensors (TSR_VIEW_FROZEN), made once and kept.
//
// A frozen tensor's elements do not change while it lives and its id is never reused
// (Note [Frozen tensors] in core/tensor.cc), so a copy reordered into a primitive's layout,
// found again under (id, the view's dtype, offset, sizes and strides, the target layout), is
// always what a fresh reorder would give. The copies are shared by every thread and bounded in
// bytes (TESSERA_CPU_FROZEN_CACHE_MB, default 512; 0 turns the cache off): past the bound the
// least recently used go. A copy outlives its tensor until then; it is never found again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "oneapi/dnnl/dnnl.hpp"
#include "tessera/sdk/tensor_view.hpp"

namespace tessera {
namespace cpu {
namespace frozen_weights {

// A reordered copy: `md` over `data`.
struct Copy {
  dnnl::memory::desc md;
  std::shared_ptr<void> data;
};

// get: the copy of the frozen tensor `t` (whose frozen_id is `id`, nonzero) in layout `md`,
// made by `reorder(dst)` (which writes md.get_size() bytes at dst) the first time. Returns a
// null data where the copy may not be kept (larger than the bound, or the cache off): the
// caller reorders into its own scratch then.
Copy get(const sdk::TensorView& t, uint64_t id, const dnnl::memory::desc& md,
         const std::function<void(void* dst)>& reorder);

struct Stats {
  int64_t hits = 0, misses = 0, copies = 0, bytes = 0;
};
Stats stats();

}  // namespace frozen_weights
}  // namespace cpu
}  // namespace tessera

// WeightCache: oneDNN-layout copies of immutable tensors (TSR_VIEW_IMMUTABLE), made once and kept.
//
// An immutable tensor's elements do not change while it lives and its id is never reused
// (Note [Immutable tensors] in core/tensor.cc), so a copy reordered into a primitive's layout,
// found again under (id, the view's dtype, offset, sizes and strides, the target layout), is
// always what a fresh reorder would give. The copies are shared by every thread and bounded in
// bytes (TESSERA_CPU_WEIGHT_CACHE_MB, default 512; 0 turns the cache off): past the bound the
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
namespace weight_cache {

// A reordered copy: `md` over `data`, and a memory object over it made once (an argument to
// pass as is: re-pointing a shared one from several threads would not be safe).
struct Copy {
  dnnl::memory::desc md;
  std::shared_ptr<void> data;
  dnnl::memory memory;
};

// How a new copy gets its room: by evicting the least recently used (a convolution, which must
// reorder anyway), or only from room left under the bound (a caller with another way to run
// without the copy: a matrix product falls back to sgemm rather than make weights that do not
// fit evict each other on every call).
enum class Admit { kEvicting, kIntoRoom };

// get: the copy of the immutable tensor `t` (whose immutable_id is `id`, nonzero) in layout `md`,
// made by `reorder(dst)` (which writes md.get_size() bytes at dst) the first time. Returns a
// null data where the copy may not be kept (larger than the bound, the cache off, or with
// kIntoRoom no room left), without calling `reorder`: the caller reorders into its own scratch
// then, or runs another way.
Copy get(const sdk::TensorView& t, uint64_t id, const dnnl::memory::desc& md,
         const std::function<void(void* dst)>& reorder, Admit admit = Admit::kEvicting);

// clear: lets every copy go (the plugin's unload; copies handed out live on until dropped).
void clear();

struct Stats {
  int64_t hits = 0, misses = 0, copies = 0, bytes = 0;
};
Stats stats();

}  // namespace weight_cache
}  // namespace cpu
}  // namespace tessera

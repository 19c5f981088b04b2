// BlockPool<kSize, kAlign>: a per-thread cache of fixed-size heap blocks, aligned to kAlign.
//
// Every op call creates and destroys a TensorImpl and a StorageImpl for its output; recycling
// their blocks on the calling thread saves two malloc/free pairs per call. A block may be freed
// on any thread (it joins that thread's cache). Each thread keeps at most kMaxCached blocks;
// the rest go back to the heap, and a thread's cache is returned when the thread exits.
// The per-thread state is one trivially destructible thread_local, for the reason given in
// Note [Per-thread state in a shared library] (host_allocator.cc).
#pragma once

#include <cstddef>
#include <new>

#include "absl/base/optimization.h"

namespace tessera {
namespace internal {

template <size_t kSize, size_t kAlign = alignof(std::max_align_t)>
class BlockPool {
 public:
  static constexpr int kMaxCached = 256;

  static void* Allocate() {
    Cache* c = State();
    if (ABSL_PREDICT_TRUE(c != nullptr) && c->count > 0) return c->blocks[--c->count];
    return ::operator new (kSize, std::align_val_t{kAlign});
  }

  static void Free(void* block) {
    Cache* c = State();
    if (ABSL_PREDICT_TRUE(c != nullptr) && c->count < kMaxCached) {
      c->blocks[c->count++] = block;
      return;
    }
    Delete(block);
  }

  // Delete returns a block to the heap (also what the class's operator delete uses for a
  // block of this pool's alignment that is not of its size).
  static void Delete(void* block) { ::operator delete (block, std::align_val_t{kAlign}); }

 private:
  struct Cache {  // trivially destructible, zero-initialized
    bool initialized;
    bool destroyed;
    int count;
    void* blocks[kMaxCached];
  };
  struct Cleanup {
    ~Cleanup() {
      Cache& c = cache_;
      while (c.count > 0) Delete(c.blocks[--c.count]);
      c.initialized = false;
      c.destroyed = true;  // frees during the rest of thread exit bypass the cache
    }
  };

  // State: this thread's cache, or NULL once the thread is exiting.
  static Cache* State() {
    Cache* c = &cache_;
    // In a shared library each thread_local's address is a __tls_get_addr call, which GCC
    // recomputes at every use rather than keep (two calls per Allocate and per Free, ~11
    // instructions each); an empty asm that "may change" the pointer makes it keep the one.
    asm("" : "+r"(c));
    if (ABSL_PREDICT_TRUE(c->initialized)) return c;
    if (c->destroyed) return nullptr;
    static thread_local Cleanup cleanup;
    (void)cleanup;
    c->initialized = true;
    return c;
  }

  static thread_local Cache cache_;
};

template <size_t kSize, size_t kAlign>
thread_local typename BlockPool<kSize, kAlign>::Cache BlockPool<kSize, kAlign>::cache_;

}  // namespace internal
}  // namespace tessera

// BlockPool<kSize>: a per-thread cache of fixed-size heap blocks.
//
// Every op call creates and destroys a TensorImpl and a StorageImpl for its output; recycling
// their blocks on the calling thread saves two malloc/free pairs per call. A block may be freed
// on any thread (it joins that thread's cache). Each thread keeps at most kMaxCached blocks;
// the rest go back to the heap, and a thread's cache is returned when the thread exits.
#pragma once

#include <cstddef>
#include <new>

namespace tessera {
namespace internal {

template <size_t kSize>
class BlockPool {
 public:
  static constexpr int kMaxCached = 256;

  static void* Allocate() {
    if (!destroyed_) {
      Cache& c = cache_;
      if (c.count > 0) return c.blocks[--c.count];
    }
    return ::operator new(kSize);
  }

  static void Free(void* block) {
    if (!destroyed_) {
      Cache& c = cache_;
      if (c.count < kMaxCached) {
        c.blocks[c.count++] = block;
        return;
      }
    }
    ::operator delete(block);
  }

 private:
  struct Cache {
    void* blocks[kMaxCached];
    int count = 0;
    ~Cache() {
      destroyed_ = true;  // frees during thread exit now bypass the cache
      while (count > 0) ::operator delete(blocks[--count]);
    }
  };
  static thread_local Cache cache_;
  static thread_local bool destroyed_;
};

template <size_t kSize>
thread_local typename BlockPool<kSize>::Cache BlockPool<kSize>::cache_;
template <size_t kSize>
thread_local bool BlockPool<kSize>::destroyed_ = false;

}  // namespace internal
}  // namespace tessera

// HostAllocator: 64-byte aligned host memory with a cache of small blocks.
//
// Small tensors are allocated and freed once per op call; going to malloc for each costs more
// than the dispatch itself. Blocks up to kMaxCachedBlock bytes are rounded up to a power of
// two and kept on a per-thread free list (bounded), so the common case is a pointer pop with
// no lock. Larger blocks are kept too, shared by every thread, up to a bound in bytes
// (Note [Large blocks] in host_allocator.cc; TESSERA_HOST_CACHE_MB).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/allocator.h"

namespace tessera {

class HostAllocator final : public Allocator {
 public:
  static constexpr size_t kAlignment = 64;
  static constexpr size_t kMinBlock = 64;
  static constexpr size_t kMaxCachedBlock = size_t{1} << 20;
  // At most this many free blocks of each size stay cached per thread.
  static constexpr int kMaxCachedPerClass = 64;
  // The bytes of free large blocks kept for reuse, unless TESSERA_HOST_CACHE_MB says otherwise.
  static constexpr size_t kDefaultLargeCacheBytes = size_t{256} << 20;

  static HostAllocator& Global();

  absl::StatusOr<DataPtr> Allocate(Device device, size_t nbytes) override;

  struct Stats {
    int64_t allocations = 0;         // calls to Allocate
    int64_t cache_hits = 0;          // of which served from the cache
    int64_t live_bytes = 0;          // bytes of blocks handed out and not yet freed
    int64_t large_cached_bytes = 0;  // bytes of free large blocks kept for reuse
  };
  Stats GetStats() const;
  // KeepsLargeBlocks: whether freed large blocks are kept (the bound is not 0, and the build is
  // not under AddressSanitizer).
  static bool KeepsLargeBlocks();

 private:
  static void Free(void* data, void* context);
};

}  // namespace tessera

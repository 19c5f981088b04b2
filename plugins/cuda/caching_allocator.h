// The GPU plugins' caching allocator: the bookkeeping in plain C++ (no GPU toolkit), over a
// backing allocator that does the device's own calls, so that tests/caching_allocator_test.cc
// drives it with a fake device.
//
// Note [GPU caching allocator]
// cudaMalloc and cudaFree synchronize the device and cost tens of microseconds; a tensor per
// op cannot afford them. Like PyTorch's CUDA allocator, this one keeps freed blocks and hands
// them out again:
// - Sizes are rounded up to a size class: 512 bytes at least, then four classes per power of
//   two (2^k, 1.25 2^k, 1.5 2^k, 1.75 2^k), so a block wastes at most a fifth of itself and a
//   freed block fits the next request of its class exactly; blocks are never split or merged.
// - A free block stays in the pool of (its size class, the stream it was allocated on): work
//   on one stream runs in order, so a block freed on stream s may go to the next allocation on
//   s at once, even while the kernels that used it have not run yet.
// - A block also used on other streams (RecordStream, tsr_tensor_record_stream) is not pooled
//   when freed: an event is recorded on each of those streams, and the block returns to its
//   pool once every event has completed (checked at the next allocation or EmptyCache).
// - When the device is out of memory, the pooled blocks are given back and the allocation is
//   tried again; then the streams that freed-but-recorded blocks wait on are synchronized, those
//   blocks given back too, and it is tried a last time; then it fails with RESOURCE_EXHAUSTED
//   and the statistics.
// - TESSERA_GPU_ALLOCATOR=direct turns the caching off (every allocation goes to the device and
//   every free back to it, after synchronizing the streams that used the block), for
//   compute-sanitizer and for measuring (docs/gpu_backends.md).
// One allocator per device; thread-safe (one mutex).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tessera/c/device.h"

namespace tessera {
namespace gpu {

// The device's own calls. Streams and events are the vendor's handles (cudaStream_t, NULL for
// the default stream).
class BackingAllocator {
 public:
  virtual ~BackingAllocator() = default;
  // Malloc returns device memory or NULL with *error set (the device's own text); *oom says
  // whether the device is out of memory (worth giving the cache back and retrying).
  virtual void* Malloc(size_t nbytes, bool* oom, std::string* error) = 0;
  virtual void Free(void* ptr) = 0;
  // RecordEvent returns an event recorded on `stream` now, or NULL on failure.
  virtual void* RecordEvent(void* stream) = 0;
  virtual bool EventDone(void* event) = 0;
  virtual void DestroyEvent(void* event) = 0;
  // SynchronizeStream waits for `stream` (the direct mode's free of a recorded block).
  virtual void SynchronizeStream(void* stream) = 0;
};

class CachingAllocator {
 public:
  enum class Mode { kCaching, kDirect };

  CachingAllocator(BackingAllocator* backing, Mode mode) : backing_(backing), mode_(mode) {}
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // ModeFromEnvironment reads TESSERA_GPU_ALLOCATOR ("caching", the default, or "direct");
  // anything else is an error naming the variable, the value and the choices.
  static bool ModeFromEnvironment(Mode* mode, std::string* error);

  // RoundSize: the size class of a request (0 for 0; 0 with an overflow for absurd sizes).
  static size_t RoundSize(size_t nbytes);

  // Allocate returns a block of at least `nbytes` for use on `stream`, NULL for 0 bytes, or
  // NULL with *error set (and *oom when the device is out of memory).
  void* Allocate(size_t nbytes, void* stream, bool* oom, std::string* error);
  // Free takes back a block Allocate returned (NULL: nothing). An unknown pointer is a bug of
  // the caller: it returns false and changes nothing.
  bool Free(void* ptr);
  // RecordStream: `ptr` is also used on `stream` (Note [GPU caching allocator]).
  bool RecordStream(void* ptr, void* stream);
  // EmptyCache gives every pooled block back to the device.
  void EmptyCache();
  tsr_memory_stats Stats() const;
  Mode mode() const { return mode_; }

 private:
  struct Block {
    size_t size = 0;             // the size class
    void* stream = nullptr;      // the stream it was allocated on: its pool
    std::vector<void*> streams;  // other streams it was used on (RecordStream)
  };
  struct Pending {
    void* ptr;
    Block block;
    std::vector<void*> events;
  };
  using PoolKey = std::pair<void*, size_t>;  // (stream, size class)

  void ProcessPendingLocked();
  void ReleasePoolsLocked();
  void AccountLocked();

  BackingAllocator* backing_;
  const Mode mode_;
  mutable std::mutex mu_;
  std::unordered_map<void*, Block> live_;
  std::map<PoolKey, std::vector<void*>> pools_;
  std::map<void*, size_t> pooled_sizes_;  // every pooled block and its size class
  std::vector<Pending> pending_;
  uint64_t allocated_ = 0;  // bytes in live blocks
  uint64_t cached_ = 0;     // bytes in pooled and pending blocks
  tsr_memory_stats stats_{};
};

}  // namespace gpu
}  // namespace tessera

// The GPU plugins' caching allocator: the bookkeeping in plain C++ (no GPU toolkit), over a
// backing allocator that does the device's own calls, so that tests/caching_allocator_test.cc
// drives it with a fake device.
//
// Note [GPU caching allocator]
// cudaMalloc and cudaFree synchronize the device and cost tens of microseconds; a tensor per
// op cannot afford them. Like PyTorch's CUDA allocator, this one takes memory from the device
// in segments, hands out blocks cut from them, and keeps freed blocks for the next request:
// - A request is rounded up to a multiple of kMinBlock. Requests up to kSmallSize (the small
//   pool) are cut from kSmallSegment segments; larger ones (the large pool) from a
//   kLargeSegment when under kMediumSize, otherwise from a segment of their own size rounded
//   up to kSegmentRound (the sizes: the constants below).
// - A request takes the smallest free block of its pool and stream that fits (best fit); the
//   rest of that block is split off as a free block when it is kMinBlock or more (small pool)
//   or more than kSmallSize (large pool: smaller rests stay with the block, so large blocks do
//   not crumble into pieces no large request can use).
// - A freed block merges with its free neighbours in the segment, so memory freed in small
//   pieces serves a large request again: a model replayed at varying shapes (batch, sequence)
//   reuses its first run's segments instead of asking the device for more.
// - Free blocks are pooled by (the stream their segment was allocated on, pool): work on one
//   stream runs in order, so a block freed on stream s may go to the next allocation on s at
//   once, even while the kernels that used it have not run yet.
// - A block also used on other streams (RecordStream, tsr_tensor_record_stream) is not freed at
//   once: an event is recorded on each of those streams, and the block is freed (and merged)
//   once every event has completed (checked at the next allocation or EmptyCache).
// - When the device is out of memory, the segments that are wholly free are given back and the
//   allocation is tried again; then the streams that freed-but-recorded blocks wait on are
//   synchronized, those blocks freed, the free segments given back, and it is tried a last
//   time; then it fails with RESOURCE_EXHAUSTED and the statistics. A segment with any block
//   in use stays: device memory cannot be given back in part.
// - TESSERA_GPU_ALLOCATOR=direct turns the caching off (every allocation goes to the device and
//   every free back to it, after synchronizing the streams that used the block), for
//   compute-sanitizer and for measuring (docs/gpu_backends.md).
// One allocator per device; thread-safe (one mutex).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
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

  // RoundSize: a request's block size, a multiple of kMinBlock (0 for 0 and for absurd sizes).
  static size_t RoundSize(size_t nbytes);
  // SegmentSize: the device allocation a block of `size` (RoundSize's) is cut from when no
  // free block fits (0 for sizes no device has).
  static size_t SegmentSize(size_t size);

  static constexpr size_t kMinBlock = 512;
  static constexpr size_t kSmallSize = size_t{1} << 20;     // the small pool's largest block
  static constexpr size_t kSmallSegment = size_t{2} << 20;  // the small pool's segments
  static constexpr size_t kMediumSize = size_t{10} << 20;   // below it: a kLargeSegment
  static constexpr size_t kLargeSegment = size_t{20} << 20;
  static constexpr size_t kSegmentRound = size_t{2} << 20;  // larger segments' multiple

  // Allocate returns a block of at least `nbytes` for use on `stream`, NULL for 0 bytes, or
  // NULL with *error set (and *oom when the device is out of memory).
  void* Allocate(size_t nbytes, void* stream, bool* oom, std::string* error);
  // Free takes back a block Allocate returned (NULL: nothing). An unknown pointer is a bug of
  // the caller: it returns false and changes nothing.
  bool Free(void* ptr);
  // RecordStream: `ptr` is also used on `stream` (Note [GPU caching allocator]).
  bool RecordStream(void* ptr, void* stream);
  // EmptyCache gives every wholly free segment back to the device.
  void EmptyCache();
  tsr_memory_stats Stats() const;
  Mode mode() const { return mode_; }

 private:
  // A block: a piece of a segment, with the blocks before and after it in the segment.
  struct Block {
    enum class State { kFree, kLive, kPending };
    char* ptr = nullptr;
    size_t size = 0;
    void* stream = nullptr;  // the stream its segment was allocated on: its pool
    bool small = false;      // in the small pool (cut from a kSmallSegment)
    State state = State::kFree;
    Block* prev = nullptr;  // the neighbours in its segment; null at the segment's ends
    Block* next = nullptr;
    std::vector<void*> streams;  // other streams it was used on (RecordStream)
    std::vector<void*> events;   // kPending: one per stream in `streams`
  };
  // Free blocks in the order a best-fit search needs: by stream, then size, then address.
  struct FitOrder {
    bool operator()(const Block* a, const Block* b) const;
  };
  using Pool = std::set<Block*, FitOrder>;

  Pool& PoolOf(bool small) { return small ? small_pool_ : large_pool_; }
  Block* TakeFreeBlockLocked(size_t size, void* stream);
  Block* NewSegmentLocked(size_t size, void* stream, bool* oom, std::string* device_error);
  void SplitLocked(Block* block, size_t size);
  void FreeBlockLocked(Block* block);
  void ProcessPendingLocked();
  void ReleaseFreeSegmentsLocked();
  void ReleaseSegmentLocked(Block* block);
  void AccountLocked();

  BackingAllocator* backing_;
  const Mode mode_;
  mutable std::mutex mu_;
  std::unordered_map<const void*, std::unique_ptr<Block>> blocks_;  // every block, by address
  Pool small_pool_, large_pool_;                                    // the free blocks
  std::vector<Block*> pending_;                                     // freed, waiting on events
  uint64_t allocated_ = 0;                                          // bytes in live blocks
  uint64_t reserved_ = 0;                                           // bytes in segments
  tsr_memory_stats stats_{};
};

}  // namespace gpu
}  // namespace tessera
